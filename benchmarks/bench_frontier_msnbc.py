"""Policy Gaussian, DP-SIPS and Policy DP-SIPS on MSNBC (issue 17; docs/policy_sips.md).

MSNBC (989,818 users, page-category sequences), every n-gram of length 1..6 as one item universe with the bound
T * Delta0 = 60 items per user: Kim et al.'s DPSU-all setting (epsilon 1, delta 1e-7; their Table 5 gives DPSU-all
4,116 and DPNE 7,739 items in total, ``bench_msnbc`` measures those). Per mechanism: items released in total and
per length and the recovered mass over all lengths (mean +- sd over the runs), with the same ``measure`` as the
setunion section.
"""

from __future__ import annotations

import statistics

from benchmarks.bench_kernels import floor_seconds
from benchmarks.bench_msnbc import load_msnbc
from benchmarks.bench_setunion import measure
from dpsu_core.mechanisms import get_mechanism

EPSILON, DELTA, T, MAX_ITEMS, RUNS = 1.0, 1e-7, 6, 60, 3
ROWS: dict[str, tuple[str, dict]] = {
    "weighted-gaussian": ("weighted-gaussian", {}),
    "policy-gaussian alpha 5": ("policy-gaussian", {"alpha": 5.0}),
    "dp-sips (I 3, r 0.3)": ("dp-sips", {}),
    "policy-sips alpha 5 (I 3, r 0.02)": ("policy-sips", {"alpha": 5.0}),
    "policy-sips alpha 5, r 0.3": ("policy-sips", {"alpha": 5.0, "round_ratio": 0.3}),
}


def _per_length(name: str, params: dict, corpus, runs: int) -> dict[int, float]:
    mech = get_mechanism(name, epsilon=EPSILON, delta=DELTA, **params)
    rels = [mech.release(corpus).per_length() for _ in range(runs)]
    return {k: round(statistics.fmean(r.get(k, 0) for r in rels), 1) for k in range(1, T + 1)}


def run(runs: int = RUNS) -> dict:
    corpus = load_msnbc(T)
    floor = floor_seconds(corpus, runs)
    out: dict = {
        "corpus": {"users": corpus.n_users, "items (n-grams 1..6)": corpus.n_items, "nnz": corpus.nnz},
        "settings": {"epsilon": EPSILON, "delta": DELTA, "max_items": MAX_ITEMS, "max_n": T, "runs": runs},
        "floor_seconds": round(floor, 4),
        "rows": {},
    }
    for key, (name, params) in ROWS.items():
        p = {"max_items": MAX_ITEMS, **params}
        row = measure(corpus, name, p, runs, floor, epsilon=EPSILON, delta=DELTA)
        row["per_length_mean"] = _per_length(name, p, corpus, runs)
        out["rows"][key] = {"mechanism": name, **row}
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
