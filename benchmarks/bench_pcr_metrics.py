"""PCR and the bounded-counts baseline on synthetic-200k, and the time of the coverage metrics.

* PCR at (eps = 1, delta = 1e-6) with the paper's defaults (eps_* = 0.0005, delta_* = 1e-11,
  kbar = 10,000, r = 0.1): items released, share of released counts within 10% relative error,
  release time (median of the timed runs, after one warm-up run that also loads/compiles the kernel).
  Target: <= 5 s. The bounded-counts baseline (Delta0 = 100) with and without its threshold, for comparison.
* Coverage metrics (k-anonymity sets, coverage table, matching k, missing mass, spurious fraction) for one
  release, on synthetic-200k and on MSNBC (n-grams up to 6). Timed "cold" (the corpus's cached
  per-item user counts dropped first, so the bincount over the CSR is included). Target: <= 2 s each.

Every metric here is computed from raw data: a benchmark diagnostic, not a private output.
Run ``python -m benchmarks.bench_pcr_metrics`` (prints a dict) or ``python -m benchmarks.run pcr_metrics``.
"""

from __future__ import annotations

import json
import statistics
import time

from benchmarks.data import MSNBC
from dpsu_core.analysis import metrics
from dpsu_core.corpus.synthetic import synthetic_200k
from dpsu_core.mechanisms import get_mechanism

EPSILON, DELTA, RUNS, R = 1.0, 1e-6, 3, 0.1
KS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
PCR_TARGET_SECONDS = 5.0
METRICS_TARGET_SECONDS = 2.0


def _count_mechanism(corpus, name: str, runs: int, **params) -> dict:
    mech = get_mechanism(name, epsilon=EPSILON, delta=DELTA, **params)
    t = time.perf_counter()
    mech.release(corpus)  # warm-up: numba cache load or compile
    first = time.perf_counter() - t
    released, within, times, spent = [], [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        rel = mech.release(corpus)
        times.append(time.perf_counter() - t)
        released.append(rel.n_released)
        within.append(metrics.share_within(metrics.relative_errors(corpus, rel), R))
        if "rho_spent" in rel.diagnostics.extra:
            spent.append(rel.diagnostics.extra["rho_spent"] / rel.calibration.details.rho_zcdp)
    out = {
        "params": mech.params,
        "released_mean": statistics.fmean(released),
        "released_sd": statistics.stdev(released) if runs > 1 else 0.0,
        "share_within_10pct_mean": statistics.fmean(within),
        "release_seconds_median": round(statistics.median(times), 4),
        "first_run_seconds": round(first, 3),
    }
    if spent:
        out["share_of_rho_spent_mean"] = round(statistics.fmean(spent), 4)
    return out


def _metrics_time(corpus, release) -> dict:
    corpus.__dict__.pop("user_counts", None)  # cold: recompute the per-item user counts too
    t = time.perf_counter()
    cov = metrics.coverage_table(corpus, release, KS)
    metrics.kanon_sets_sizes(corpus, KS)
    mk = metrics.matching_k(corpus, release)
    mm = metrics.missing_mass(corpus, release)
    metrics.spurious_fraction(corpus, release)
    elapsed = time.perf_counter() - t
    all_rows = cov[cov.n == 0]
    return {
        "seconds": round(elapsed, 4),
        "meets_target": elapsed <= METRICS_TARGET_SECONDS,
        "released": int(release.n_released),
        "matching_k": mk,
        "recovered_mass_all": float(mm[mm.n == 0].recovered_mass.iloc[0]),
        "recall_at_k": {int(k): round(float(r), 4) for k, r in zip(all_rows.k, all_rows.recall)},
    }


def run(runs: int = RUNS) -> dict:
    t0 = time.perf_counter()
    corpus = synthetic_200k()
    out: dict = {
        "corpus": {
            "users": corpus.n_users,
            "vocabulary": corpus.n_items,
            "nnz": corpus.nnz,
            "build_seconds": round(time.perf_counter() - t0, 3),
        },
        "settings": {"epsilon": EPSILON, "delta": DELTA, "runs": runs, "target_relative_error": R},
    }
    pcr = _count_mechanism(corpus, "pcr", runs)
    pcr["meets_time_target"] = pcr["release_seconds_median"] <= PCR_TARGET_SECONDS
    out["pcr"] = pcr
    out["bounded_counts"] = {
        th: _count_mechanism(corpus, "bounded-counts", runs, max_items=100, use_threshold=th) for th in ("yes", "no")
    }
    rel = get_mechanism("policy-gaussian", epsilon=EPSILON, delta=DELTA, max_items=100).release(corpus)
    out["metrics_synthetic_200k"] = {"release": "policy-gaussian, Delta0 = 100", **_metrics_time(corpus, rel)}
    del corpus

    if MSNBC.exists():
        from dpsu_core.corpus.load import load_corpus

        t = time.perf_counter()
        msnbc = load_corpus(MSNBC, format="sequences", max_n=6)
        load_s = time.perf_counter() - t
        rel = get_mechanism("weighted-gaussian", epsilon=EPSILON, delta=1e-7, max_items=10).release(msnbc)
        out["metrics_msnbc"] = {
            "release": "weighted-gaussian, Delta0 = 10, delta = 1e-7 (all lengths as one universe)",
            "users": msnbc.n_users,
            "vocabulary": msnbc.n_items,
            "nnz": msnbc.nnz,
            "load_seconds": round(load_s, 2),
            **_metrics_time(msnbc, rel),
        }
    else:
        out["metrics_msnbc"] = {"skipped": f"{MSNBC} not found"}
    out["targets"] = {"pcr_release_seconds_max": PCR_TARGET_SECONDS, "metrics_seconds_max": METRICS_TARGET_SECONDS}
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2, default=str))
