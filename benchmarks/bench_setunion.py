"""Every mechanism on synthetic-200k (issue 8, item 7; docs/algorithms.md §9).

eps = 3, delta = e^-10, Delta0 = 100, alpha = 3 (n-gram mechanisms with T = 1: the corpus is unigrams).
Per mechanism: items released (mean ± sd over 5 runs), the recovered mass of each release (the share of
all (user, item) pairs whose item was released, ``metrics.missing_mass``; mean ± sd), and the release
time (median of the 5 timed runs, after one warm-up run that also compiles the kernels and fills the
per-corpus caches, e.g. GW-KT's public ranks; the warm-up's own time is reported as ``first_run_seconds``).
Each time is also given as a multiple of the floor measured in the same run (``bench_kernels.floor_seconds``:
a random-order pass over the CSR adding 1.0 per entry), which makes figures from a loaded machine comparable.
GW / GW-KT run in the capped form (docs/algorithms.md §4). synthetic-200k's words ("w123") are not in wordfreq's list,
so GW-KT's public order is all ties there: its order is the keyed hash alone. synthetic-200k's users hold
sets (issue 2: "de-duplicated per user"), so GW's own counts are all 1 and its order is the keyed hash
too. ``gw_variants`` gives GW at Delta0 = 30 and on the variant whose per-user counts keep the Zipf draws'
multiplicities (``synthetic_200k(keep_counts=True)``): the order then puts each user's repeated, i.e. most
common, words first. ``frontier`` (issue 17; docs/policy_sips.md) measures Policy Gaussian, DP-SIPS and Policy
DP-SIPS side by side at alpha 3 and 5, with the tuned delta split and with each other's round shares, against
the goal of 30,000 items.
"""

from __future__ import annotations

import math
import statistics
import time

from benchmarks.bench_kernels import floor_seconds
from dpsu_core.analysis.metrics import missing_mass
from dpsu_core.corpus.synthetic import synthetic_200k
from dpsu_core.mechanisms import get_mechanism, list_mechanisms

EPSILON, DELTA, MAX_ITEMS, ALPHA, RUNS = 3.0, math.exp(-10), 100, 3.0, 5
SHARED = {"max_items": MAX_ITEMS, "alpha": ALPHA, "max_n": 1}
TARGET_SECONDS = 0.3
TARGET_ITEMS = {"gw": 18_000, "gw-kt": 18_000, "policy-gaussian": 26_000}


def _mean_sd(xs: list[float]) -> tuple[float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def _gw_items(corpus, runs: int, max_items: int) -> dict:
    mech = get_mechanism("gw", epsilon=EPSILON, delta=DELTA, max_items=max_items, alpha=ALPHA)
    mech.release(corpus)
    n_mean, n_sd = _mean_sd([mech.release(corpus).n_released for _ in range(runs)])
    return {"max_items": max_items, "released_mean": round(n_mean, 1), "released_sd": round(n_sd, 1)}


def _gw_variants(corpus, runs: int) -> dict:
    """GW at Delta0 = 30 (docs/algorithms.md §4's second capped figure, 19.7k), and on the counts variant of the corpus."""
    counted = synthetic_200k(keep_counts=True)
    return {
        "max_items_30": _gw_items(corpus, runs, 30),
        "with_own_counts": {
            "corpus": "synthetic-200k with the draws' multiplicities as per-user counts (keep_counts=True)",
            "pairs_with_count_above_1": round(float((counted.counts > 1).mean()), 4),
            **_gw_items(counted, runs, MAX_ITEMS),
        },
    }


def measure(
    corpus, name: str, params: dict, runs: int, floor: float, *, epsilon: float = EPSILON, delta: float = DELTA
) -> dict:
    """One mechanism at these parameters: a warm-up release, then ``runs`` timed releases (items, recovered mass
    over all n-gram lengths)."""
    mech = get_mechanism(name, epsilon=epsilon, delta=delta, **params)
    t = time.perf_counter()
    mech.release(corpus)  # warm-up (numba compile / cache load, per-corpus caches)
    first = time.perf_counter() - t
    counts, masses, times = [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        rel = mech.release(corpus)
        times.append(time.perf_counter() - t)
        counts.append(rel.n_released)
        mass = missing_mass(corpus, rel).set_index("n")["recovered_mass"]
        masses.append(float(mass.loc[0]))  # n = 0: every length together
    med = statistics.median(times)
    n_mean, n_sd = _mean_sd(counts)
    m_mean, m_sd = _mean_sd(masses)
    return {
        "params": params,
        "released_mean": round(n_mean, 1),
        "released_sd": round(n_sd, 1),
        "recovered_mass_mean": round(m_mean, 4),
        "recovered_mass_sd": round(m_sd, 4),
        "release_seconds_median": round(med, 4),
        "x_floor": round(med / floor, 2),
        "first_run_seconds": round(first, 3),
        "meets_time_target": med <= TARGET_SECONDS,
    }


#: issue 17 (docs/policy_sips.md): Policy Gaussian, DP-SIPS and Policy DP-SIPS side by side, at alpha 3 (the rows
#: above) and 5, with the tuned delta split (privacy/tuning.py; Policy DP-SIPS with one round is Policy Gaussian)
#: and with DP-SIPS's budget shares (r = 0.3) against Policy DP-SIPS's (r = 0.02)
FRONTIER: dict[str, tuple[str, dict]] = {
    "policy-gaussian alpha 5": ("policy-gaussian", {"alpha": 5.0}),
    "policy-gaussian alpha 3, tuned split": ("policy-sips", {"alpha": 3.0, "rounds": 1, "delta_split": "tuned"}),
    "policy-gaussian alpha 5, tuned split": ("policy-sips", {"alpha": 5.0, "rounds": 1, "delta_split": "tuned"}),
    "dp-sips r 0.02": ("dp-sips", {"ratio": 0.02}),
    "policy-sips alpha 5 (defaults: I 3, r 0.02)": ("policy-sips", {"alpha": 5.0}),
    "policy-sips alpha 5, I 2": ("policy-sips", {"alpha": 5.0, "rounds": 2}),
    "policy-sips alpha 5, tuned split": ("policy-sips", {"alpha": 5.0, "delta_split": "tuned"}),
    "policy-sips alpha 5, r 0.3 (DP-SIPS's shares)": ("policy-sips", {"alpha": 5.0, "round_ratio": 0.3}),
}
TARGET_FRONTIER_ITEMS = 30_000


def _frontier(corpus, runs: int, floor: float) -> dict:
    rows = {
        key: {"mechanism": name, **measure(corpus, name, {"max_items": MAX_ITEMS, **params}, runs, floor)}
        for key, (name, params) in FRONTIER.items()
    }
    best = max(rows, key=lambda k: rows[k]["released_mean"])
    return {
        "rows": rows,
        "best": best,
        "target_items": TARGET_FRONTIER_ITEMS,
        "meets_target": rows[best]["released_mean"] >= TARGET_FRONTIER_ITEMS,
    }


def run(runs: int = RUNS) -> dict:
    t0 = time.perf_counter()
    corpus = synthetic_200k()
    build_s = time.perf_counter() - t0
    out: dict = {
        "corpus": {
            "users": corpus.n_users,
            "vocabulary": corpus.n_items,
            "nnz": corpus.nnz,
            "build_seconds": round(build_s, 3),
        },
        "settings": {"epsilon": EPSILON, "delta": DELTA, "max_items": MAX_ITEMS, "alpha": ALPHA, "runs": runs},
        "mechanisms": {},
    }
    floor = floor_seconds(corpus, runs)
    out["floor_seconds"] = round(floor, 4)
    for name, cls in list_mechanisms().items():
        params = {k: v for k, v in SHARED.items() if k in cls.param_names}
        row = {"label": cls.label, "kind": cls.kind, **measure(corpus, name, params, runs, floor)}
        if name in TARGET_ITEMS:
            row["target_items"] = TARGET_ITEMS[name]
            row["meets_item_target"] = row["released_mean"] >= TARGET_ITEMS[name]
        out["mechanisms"][name] = row
    out["frontier"] = _frontier(corpus, runs, floor)
    out["gw_variants"] = _gw_variants(corpus, runs)
    out["targets"] = {
        "release_seconds_max": TARGET_SECONDS,
        "items": TARGET_ITEMS,
        "items_met": {n: out["mechanisms"][n].get("meets_item_target") for n in TARGET_ITEMS if n in out["mechanisms"]},
        "times_not_met": [n for n, m in out["mechanisms"].items() if not m["meets_time_target"]],
    }
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
