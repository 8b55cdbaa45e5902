"""DPNE against the DPSU baselines on MSNBC, beside Kim et al. 2021, Table 5.

MSNBC (989,818 users, one page-category sequence each), n-grams up to length 6,
Delta0 = 10, epsilon = 1, delta = 1e-7, eta = 0.01, T = 6, both-side pruning. Items released per
n-gram length, mean over ``n_runs`` OS-seeded runs, for DPNE with the paper's equal noise schedule
and with the geometric schedule sigma_k = c sigma_(k-1) at c = BEST_SCHEDULE_RATIO (docs/algorithms.md §5;
the same privacy budget), DPSU-all, DPSU-even and DPSU-single (one run set per only_n = 1..6).

Run ``python -m benchmarks.bench_msnbc`` (prints the table, returns a dict), or through
``python -m benchmarks.run msnbc``. The spurious counts are a raw-data diagnostic (NOT private).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from benchmarks.data import MSNBC
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.mechanisms.dpne import BEST_SCHEDULE_RATIO

EPSILON, DELTA, MAX_ITEMS, ETA, T = 1.0, 1e-7, 10, 0.01, 6
LENGTHS = list(range(1, T + 1))

#: Kim et al. 2021, Table 5 (MSNBC, Delta0 = 10, eps = 1, delta = 1e-7, eta = 0.01).
PAPER = {
    "dpne": [17, 254, 1273, 1954, 2221, 2020],
    "dpsu-all": [17, 249, 930, 1145, 1007, 768],
    "dpsu-even": [17, 246, 899, 1107, 996, 766],
    "dpsu-single": [17, 260, 1483, 2180, 2210, 1819],
}
GEOMETRIC = "dpne-geometric"  # DPNE with schedule="geometric", schedule_ratio=BEST_SCHEDULE_RATIO
TARGETS = {
    "dpne_total_min": 7000,
    "best_schedule_total_min": 8500,
    "per_length_rel_tol": 0.15,
    "dpne_over_dpsu_all_min": 1.5,
    "seconds_max": 30.0,
}


def load_msnbc(max_n: int = T):
    from dpsu_core.corpus.load import load_corpus

    return load_corpus(MSNBC, format="sequences", max_n=max_n)


def _per_length_mean(releases) -> list[float]:
    return [statistics.fmean(r.per_length().get(k, 0) for r in releases) for k in LENGTHS]


def _runs(name: str, n_runs: int, corpus, **params) -> tuple[list, float]:
    mech = get_mechanism(name, epsilon=EPSILON, delta=DELTA, max_items=MAX_ITEMS, **params)
    t = time.perf_counter()
    rels = [mech.release(corpus) for _ in range(n_runs)]
    return rels, (time.perf_counter() - t) / n_runs


def run(n_runs: int = 5, corpus=None) -> dict:
    """Measure; ``corpus`` may be passed pre-loaded (then loading is not timed)."""
    t0 = time.perf_counter()
    if corpus is None:
        corpus = load_msnbc()
    load_s = time.perf_counter() - t0

    rows: dict[str, list[float]] = {}
    seconds: dict[str, float] = {}
    dpne_kw = dict(max_n=T, eta=ETA, pruning="both")
    rels, seconds["dpne"] = _runs("dpne", n_runs, corpus, **dpne_kw, schedule="equal")
    rows["dpne"] = _per_length_mean(rels)
    spurious = statistics.fmean(int(np.count_nonzero(r.item_ids == -1)) for r in rels)
    geo, seconds[GEOMETRIC] = _runs(
        "dpne", n_runs, corpus, **dpne_kw, schedule="geometric", schedule_ratio=BEST_SCHEDULE_RATIO
    )
    rows[GEOMETRIC] = _per_length_mean(geo)
    geo_totals = [r.n_released for r in geo]
    for name in ("dpsu-all", "dpsu-even"):
        r, seconds[name] = _runs(name, n_runs, corpus, max_n=T)
        rows[name] = _per_length_mean(r)
    single, single_s = [], []
    for n in LENGTHS:
        r, s = _runs("dpsu-single", n_runs, corpus, only_n=n)
        single.append(_per_length_mean(r)[n - 1])
        single_s.append(s)
    rows["dpsu-single"] = single
    seconds["dpsu-single (per length)"] = statistics.fmean(single_s)
    total_s = time.perf_counter() - t0

    dpne_total = sum(rows["dpne"])
    rel_err = [abs(m - p) / p for m, p in zip(rows["dpne"], PAPER["dpne"])]
    ratio_all = dpne_total / max(sum(rows["dpsu-all"]), 1e-9)
    out = {
        "settings": {
            "epsilon": EPSILON,
            "delta": DELTA,
            "max_items": MAX_ITEMS,
            "eta": ETA,
            "T": T,
            "schedule": f"equal (dpne) and geometric c = {BEST_SCHEDULE_RATIO} ({GEOMETRIC})",
            "pruning": "both",
            "runs": n_runs,
        },
        "corpus": {
            "users": corpus.n_users,
            "vocabulary": corpus.n_items,
            "nnz": corpus.nnz,
            "load_seconds": round(load_s, 2),
        },
        "measured": {k: [round(v, 1) for v in vals] for k, vals in rows.items()},
        "measured_total": {k: round(sum(v), 1) for k, v in rows.items() if k != "dpsu-single"},
        "paper": PAPER,
        "paper_total": {k: sum(v) for k, v in PAPER.items() if k != "dpsu-single"},
        "dpne_rel_diff_per_length": [round(e, 4) for e in rel_err],
        "geometric_totals_per_run": geo_totals,
        "geometric_over_equal": round(sum(rows[GEOMETRIC]) / max(dpne_total, 1e-9), 3),
        "dpne_spurious_mean_not_private": spurious,
        "release_seconds_mean": {k: round(v, 3) for k, v in seconds.items()},
        "total_seconds": round(total_s, 2),
        "targets": dict(TARGETS),
        "met": {
            "dpne_total": dpne_total >= TARGETS["dpne_total_min"],
            "best_schedule_total": sum(rows[GEOMETRIC]) >= TARGETS["best_schedule_total_min"],
            "per_length_within_tol": all(e <= TARGETS["per_length_rel_tol"] for e in rel_err),
            "dpne_over_dpsu_all": ratio_all >= TARGETS["dpne_over_dpsu_all_min"],
            "time": total_s <= TARGETS["seconds_max"],
        },
        "dpne_over_dpsu_all": round(ratio_all, 3),
    }
    print_table(out)
    return out


def print_table(res: dict) -> None:
    head = f"{'':14s}" + "".join(f"{k:>9d}" for k in LENGTHS) + f"{'total':>10s}"
    print(
        f"MSNBC, eps={EPSILON:g}, delta={DELTA:g}, Delta0={MAX_ITEMS}, eta={ETA:g}, "
        f"mean of {res['settings']['runs']} runs (paper in brackets)"
    )
    print(head)
    for name in PAPER:
        m, p = res["measured"][name], PAPER[name]
        tot = "" if name == "dpsu-single" else f"{sum(m):10.0f}"
        print(f"{name:14s}" + "".join(f"{v:9.0f}" for v in m) + tot)
        if name == "dpne":
            g = res["measured"][GEOMETRIC]
            print(f"{'  geometric':14s}" + "".join(f"{v:9.0f}" for v in g) + f"{sum(g):10.0f}")
        ptot = "" if name == "dpsu-single" else f"{sum(p):10d}"
        print(f"{'  (paper)':14s}" + "".join(f"{v:9d}" for v in p) + ptot)
    print(
        f"DPNE / DPSU-all = {res['dpne_over_dpsu_all']:.2f}; spurious per DPNE run (not private) = "
        f"{res['dpne_spurious_mean_not_private']:.1f}; load {res['corpus']['load_seconds']} s; "
        f"total {res['total_seconds']} s; targets met: {res['met']}"
    )


if __name__ == "__main__":
    run()
