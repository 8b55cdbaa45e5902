"""Policy Gaussian, DP-SIPS and Policy DP-SIPS on the bundled text corpus (issue 17; docs/policy_sips.md).

The corpus is ``assets/demo_corpus.csv`` (``dpsu_core.corpus.demo``): 6,000 users' English posts whose words follow
wordfreq's English frequencies, with recurring phrases and per-user topic words. It is text, read with the
default tokenizer and preprocessing like an uploaded file, but it is generated, not written by people: the
real-text row beside synthetic-200k (the setunion section's frontier block) and the web-log rows of ``frontier_msnbc``.
Vocabulary release (unigrams) at the standard setting of the synthetic-200k rows: epsilon 3, delta e^-10,
Delta0 100. Per mechanism: items released and recovered mass (mean +- sd over the runs, ``measure`` of the
setunion section), with the delta split as halves and tuned (``delta_split="tuned"``: the noise share that
maximises the utility preview's chance of release of the item at the margin; privacy/tuning.py), and the
number of planted canaries released (must be 0).
"""

from __future__ import annotations

import math

from benchmarks.bench_kernels import floor_seconds
from benchmarks.bench_setunion import measure
from dpsu_core.corpus.demo import load_canaries, load_demo
from dpsu_core.mechanisms import get_mechanism

EPSILON, DELTA, MAX_ITEMS, RUNS = 3.0, math.exp(-10), 100, 10
ROWS: dict[str, tuple[str, dict]] = {
    "policy-gaussian alpha 3": ("policy-gaussian", {"alpha": 3.0}),
    "policy-gaussian alpha 5": ("policy-gaussian", {"alpha": 5.0}),
    "policy-gaussian alpha 5, tuned split": ("policy-sips", {"alpha": 5.0, "rounds": 1, "delta_split": "tuned"}),
    "dp-sips (I 3, r 0.3)": ("dp-sips", {}),
    "policy-sips alpha 5 (I 3, r 0.02)": ("policy-sips", {"alpha": 5.0}),
    "policy-sips alpha 5, tuned split": ("policy-sips", {"alpha": 5.0, "delta_split": "tuned"}),
}


def _canaries_released(name: str, params: dict, corpus, canaries: set[str], runs: int) -> int:
    mech = get_mechanism(name, epsilon=EPSILON, delta=DELTA, **params)
    return sum(len(canaries & set(mech.release(corpus).items)) for _ in range(runs))


def run(runs: int = RUNS) -> dict:
    corpus = load_demo()
    canaries = set(load_canaries())
    floor = floor_seconds(corpus, runs)
    out: dict = {
        "corpus": {
            "name": "demo corpus (assets/demo_corpus.csv: generated English posts, wordfreq frequencies)",
            "users": corpus.n_users,
            "vocabulary": corpus.n_items,
            "nnz": corpus.nnz,
            "users_above_max_items": int((corpus.row_lengths > MAX_ITEMS).sum()),
        },
        "settings": {"epsilon": EPSILON, "delta": DELTA, "max_items": MAX_ITEMS, "max_n": 1, "runs": runs},
        "floor_seconds": round(floor, 5),
        "rows": {},
    }
    for key, (name, params) in ROWS.items():
        p = {"max_items": MAX_ITEMS, **params}
        row = measure(corpus, name, p, runs, floor, epsilon=EPSILON, delta=DELTA)
        if p.get("delta_split") == "tuned":
            d = get_mechanism(name, epsilon=EPSILON, delta=DELTA, **p).calibrate().details.as_dict()
            row["tuned"] = {
                k: d[k] for k in ("noise_share", "tuned_for_users", "release_chance", "release_chance_half")
            }
        row["canaries_released"] = _canaries_released(name, p, corpus, canaries, runs)
        out["rows"][key] = {"mechanism": name, **row}
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
