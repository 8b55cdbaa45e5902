"""The ledger store (``dpsu_core.accounting``, issue 36): charge latency on each backend and the total of 10,000
mixed entries.

    python -m benchmarks.run ledger

charge latency: 1,000 charges one after another on one corpus (a fresh store: a SQLite file with WAL and
``synchronous = FULL``; a PostgreSQL database, ``$DPSU_BENCH_POSTGRES`` or a throwaway cluster on 127.0.0.1 as
the tests start it), alternating two Gaussian configurations under a cap they never reach. Each charge is the
whole transaction: lock, read the corpus's entries grouped by configuration, compose them with the new one
(``ledger.total``), append the hash-chained row, commit. p50 / p99 / max in milliseconds; then ``verify`` of the
whole chain.

total of 10,000 mixed entries: five configurations (two Gaussian, Laplace, GW, PCR) 2,000 times each:
``compact`` (identical configurations merged) then ``ledger.total`` (its privacy-loss-distribution accountant
runs; dp-accounting imported beforehand): ``first`` in the process (dp-accounting's own first-use costs
included), ``again`` on 10,010 entries (a composition not in the cache); and one charge on a store already
holding 10,000 such entries (the database groups them; the charge composes them with the new one).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from dpsu_core.accounting import compact, open_store
from dpsu_core.accounting.ledger import LedgerEntry, total
from dpsu_core.mechanisms.registry import get_mechanism

CHARGES = 1000
MIXED = [
    ("policy-gaussian", 1.0, 1e-8),
    ("weighted-gaussian", 0.5, 1e-8),
    ("count-laplace", 0.5, 1e-9),
    ("gw", 1.0, 1e-9),
    ("pcr", 1.0, 1e-8),
]


def _entries(configs) -> list[LedgerEntry]:
    return [
        LedgerEntry.from_calibration(get_mechanism(m, epsilon=e, delta=d).calibrate(), corpus_id=None, source="bench")
        for m, e, d in configs
    ]


def _latency(location: str) -> dict:
    gauss = _entries(MIXED[:2])
    times = []
    with open_store(location) as s:
        s.register_corpus("bench", 1e6, 0.5, by="bench")
        for i in range(CHARGES):
            t = time.perf_counter()
            s.charge("bench", [gauss[i % 2]], actor="bench", tool="api", job={"i": i}, request_key=str(i))
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ok = s.verify().ok
        verify_s = time.perf_counter() - t
    ms = sorted(x * 1000 for x in times)
    return {
        "charges": CHARGES,
        "p50_ms": round(statistics.median(ms), 2),
        "p99_ms": round(ms[int(0.99 * len(ms)) - 1], 2),
        "max_ms": round(ms[-1], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "verify_s": round(verify_s, 3),
        "verify_ok": ok,
    }


def _mixed_total(location: str) -> dict:
    import dp_accounting  # noqa: F401 - imported before the clock starts

    five = _entries(MIXED)
    out: dict = {}
    for label, n in (("first", 10_000), ("again", 10_010)):  # another count: not a cached composition
        mixed = [five[i % 5] for i in range(n)]
        t = time.perf_counter()
        merged = compact(mixed)
        compact_s = time.perf_counter() - t
        t = time.perf_counter()
        tot = total(merged)
        out[f"{label}_entries"] = n
        out[f"{label}_compact_s"] = round(compact_s, 4)
        out[f"{label}_total_s"] = round(time.perf_counter() - t, 3)
    out["configurations"], out["method"] = len(merged), tot.method
    with open_store(location) as s:
        s.register_corpus("mixed", 1e9, 0.5, by="bench")
        for i in range(0, 10_000, 125):  # 80 charges of 125 entries
            s.charge("mixed", [five[j % 5] for j in range(i, i + 125)], actor="b", tool="api", job={})
        t = time.perf_counter()  # one more charge: the transaction composes 10,001 entries the database grouped
        s.charge("mixed", [five[0]], actor="b", tool="api", job={})
        out["charge_on_10000_entries_s"] = round(time.perf_counter() - t, 3)
    return out


def run() -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="dpsu-bench-ledger-") as tmp, ExitStack() as stack:
        out["sqlite"] = _latency(str(Path(tmp) / "latency.sqlite"))
        server = os.environ.get("DPSU_BENCH_POSTGRES")
        if server is None:
            from tests.accounting import pg

            server = stack.enter_context(pg.throwaway_cluster()) if pg.available() else None
        if server is None:
            out["postgresql"] = "skipped: no PostgreSQL (set DPSU_BENCH_POSTGRES or install postgresql)"
        else:
            from tests.accounting.pg import fresh_database

            out["postgresql"] = _latency(fresh_database(server))
        out["total_10000_mixed"] = _mixed_total(str(Path(tmp) / "mixed.sqlite"))
    return out
