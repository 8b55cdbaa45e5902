"""Release kernels against the floor (issue 11, item 3).

The floor is measured in the same run, on the same corpus: one pass over the CSR in a uniformly random
user order that only adds 1.0 per (user, item) entry to a histogram (numba; the permutation is drawn
before the clock starts). Every mechanism's release time (median of ``runs`` OS-seeded releases after a
warm-up that also loads/compiles the kernels) is reported as a multiple of that floor, with the items
it released (mean).

* synthetic-200k (eps = 3, delta = e^-10, Delta0 = 100, alpha = 5): every set-union and count mechanism,
  DP-SIPS included.
* MSNBC with n-grams up to 6 (eps = 1, delta = 1e-7, Delta0 = 10, eta = 0.01, both-side pruning): DPNE with
  the equal and the geometric schedule, and the DPSU baselines. Skipped (and said so) without the data.
"""

from __future__ import annotations

import math
import statistics
import time

import numba
import numpy as np

from benchmarks.data import MSNBC
from dpsu_core.corpus.synthetic import synthetic_200k
from dpsu_core.mechanisms import get_mechanism, list_mechanisms
from dpsu_core.mechanisms.dpne import BEST_SCHEDULE_RATIO

RUNS = 5
SYNTH = {"epsilon": 3.0, "delta": math.exp(-10), "max_items": 100, "alpha": 5.0}
NGRAM = {"epsilon": 1.0, "delta": 1e-7, "max_items": 10, "max_n": 6, "eta": 0.01, "pruning": "both"}


@numba.njit(cache=True, nogil=True)
def _floor_pass(indptr, items, order, n_items):
    h = np.zeros(n_items, dtype=np.float64)
    for r in range(order.shape[0]):
        u = order[r]
        for j in range(indptr[u], indptr[u + 1]):
            h[items[j]] += 1.0
    return h


def floor_seconds(corpus, runs: int = RUNS) -> float:
    """Median time of the random-order histogram pass over the whole CSR."""
    rng = np.random.default_rng()
    _floor_pass(corpus.indptr, corpus.items, np.arange(min(corpus.n_users, 10), dtype=np.int64), corpus.n_items)
    times = []
    for _ in range(runs):
        order = rng.permutation(corpus.n_users).astype(np.int64)
        t = time.perf_counter()
        _floor_pass(corpus.indptr, corpus.items, order, corpus.n_items)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _time_release(name: str, corpus, settings: dict, runs: int, **extra) -> dict:
    cls = list_mechanisms()[name]
    params = {k: v for k, v in settings.items() if k in cls.param_names}
    mech = get_mechanism(name, epsilon=settings["epsilon"], delta=settings["delta"], **params, **extra)
    mech.release(corpus)  # warm-up: numba cache load / compile, per-corpus caches
    times, counts = [], []
    for _ in range(runs):
        t = time.perf_counter()
        rel = mech.release(corpus)
        times.append(time.perf_counter() - t)
        counts.append(rel.n_released)
    return {"seconds": statistics.median(times), "released_mean": statistics.fmean(counts)}


def _table(corpus, settings: dict, entries: list[tuple[str, str, dict]], runs: int) -> dict:
    floor = floor_seconds(corpus, runs)
    rows = {}
    for label, name, extra in entries:
        r = _time_release(name, corpus, settings, runs, **extra)
        rows[label] = {
            "release_seconds": round(r["seconds"], 4),
            "x_floor": round(r["seconds"] / floor, 2),
            "released_mean": round(r["released_mean"], 1),
        }
    return {
        "corpus": {"users": corpus.n_users, "vocabulary": corpus.n_items, "nnz": corpus.nnz},
        "settings": {k: v for k, v in settings.items()},
        "floor_seconds": round(floor, 4),
        "mechanisms": rows,
    }


def run(runs: int = RUNS) -> dict:
    out: dict = {"runs": runs, "floor": "random-order pass over the CSR adding 1.0 per entry to a histogram"}
    corpus = synthetic_200k()
    names = [n for n, c in list_mechanisms().items() if c.kind in ("set-union", "count")]
    out["synthetic_200k"] = _table(corpus, SYNTH, [(n, n, {}) for n in names], runs)
    del corpus
    if MSNBC.exists():
        from dpsu_core.corpus.load import load_corpus

        msnbc = load_corpus(MSNBC, format="sequences", max_n=NGRAM["max_n"])
        entries = [
            ("dpne (equal)", "dpne", {"schedule": "equal"}),
            (
                f"dpne (geometric {BEST_SCHEDULE_RATIO})",
                "dpne",
                {"schedule": "geometric", "schedule_ratio": BEST_SCHEDULE_RATIO},
            ),
            ("dpsu-all", "dpsu-all", {}),
            ("dpsu-even", "dpsu-even", {}),
        ]
        out["msnbc"] = _table(msnbc, NGRAM, entries, runs)
    else:
        out["msnbc"] = {"skipped": f"{MSNBC} not found"}
    print_table(out)
    return out


def print_table(res: dict) -> None:
    for key in ("synthetic_200k", "msnbc"):
        sec = res[key]
        if "skipped" in sec:
            print(f"{key}: skipped ({sec['skipped']})")
            continue
        print(f"{key}: floor {sec['floor_seconds']:.4f} s ({sec['corpus']['nnz']:,} entries)")
        for name, r in sec["mechanisms"].items():
            print(
                f"  {name:28s} {r['release_seconds']:8.4f} s  {r['x_floor']:6.2f} x floor  {r['released_mean']:10.1f} items"
            )


if __name__ == "__main__":
    run()
