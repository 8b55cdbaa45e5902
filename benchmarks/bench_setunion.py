"""Set-union mechanisms on synthetic-200k (issue #2, section 6).

eps = 3, delta = e^-10, Delta0 = 100, alpha = 5: items released (mean ± sd over 5 runs) and
release time (median of the 5 timed runs, after one warm-up run that also compiles the kernels).
"""

from __future__ import annotations

import math
import statistics
import time

from dpsu_core.mechanisms import get_mechanism, mechanisms
from dpsu_core.synthetic import synthetic_200k

EPSILON, DELTA, MAX_ITEMS, ALPHA, RUNS = 3.0, math.exp(-10), 100, 5.0, 5
TARGET_SECONDS = 0.3
TARGET_POLICY_GAUSSIAN = 26_000


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
    for name, cls in mechanisms().items():
        if cls.kind != "set-union":
            continue
        params = {k: v for k, v in {"max_items": MAX_ITEMS, "alpha": ALPHA}.items() if k in cls.param_names}
        mech = get_mechanism(name, epsilon=EPSILON, delta=DELTA, **params)
        mech.release(corpus)  # warm-up (numba compile / cache load)
        counts, times = [], []
        for _ in range(runs):
            t = time.perf_counter()
            rel = mech.release(corpus)
            times.append(time.perf_counter() - t)
            counts.append(rel.n_released)
        med = statistics.median(times)
        out["mechanisms"][name] = {
            "label": cls.label,
            "released_mean": statistics.fmean(counts),
            "released_sd": statistics.stdev(counts) if len(counts) > 1 else 0.0,
            "release_seconds_median": round(med, 4),
            "meets_time_target": med <= TARGET_SECONDS,
        }
    pg = out["mechanisms"].get("policy-gaussian", {})
    out["targets"] = {
        "release_seconds_max": TARGET_SECONDS,
        "policy_gaussian_min_items": TARGET_POLICY_GAUSSIAN,
        "policy_gaussian_met": pg.get("released_mean", 0) >= TARGET_POLICY_GAUSSIAN,
        "all_times_met": all(m["meets_time_target"] for m in out["mechanisms"].values()),
    }
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
