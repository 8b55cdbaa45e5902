"""Processes that charge one ledger store at the same time (started by tests/accounting/test_concurrency.py)."""

from __future__ import annotations

import sys
import time

from dpsu_core.accounting import BudgetRefused, open_store
from dpsu_core.accounting.ledger import LedgerEntry


def race(location: str, rounds: list[tuple[str, LedgerEntry]], barrier, results, worker: int) -> None:
    """For each (corpus, entry): wait for every worker, then try to charge; put (round, worker, admitted)."""
    with open_store(location) as store:
        for r, (corpus, entry) in enumerate(rounds):
            barrier.wait(timeout=300)
            try:
                store.charge(corpus, [entry], actor=f"worker-{worker}", tool="api", job={"round": r})
                results.put((r, worker, True))
            except BudgetRefused:
                results.put((r, worker, False))


def charge_forever(location: str) -> None:  # pragma: no cover - killed with SIGKILL by the test
    """Charge tiny releases one after another, printing each committed charge's number, until killed."""
    from dpsu_core.mechanisms.registry import get_mechanism

    cal = get_mechanism("count-laplace", epsilon=0.01, delta=1e-9).calibrate()
    entry = LedgerEntry.from_calibration(cal, corpus_id=None, source="test")
    with open_store(location) as store:
        n = 0
        while True:
            store.charge("durable", [entry], actor="worker", tool="cli", job={"n": n})
            n += 1
            print(n, flush=True)
            time.sleep(0.001)


if __name__ == "__main__":  # pragma: no cover
    charge_forever(sys.argv[1])
