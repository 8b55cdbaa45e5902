"""The account of a corpus's privacy budget: the durable ledger store (``store``) and its commands (``commands``).

``store.open_store()`` opens the ledger every tool charges: a SQLite file by default, or a PostgreSQL server for a
team (``postgresql://`` URL). See ``store``'s docstring for the threat model and backups.
"""

from __future__ import annotations

from .store import (
    TOOLS,
    BudgetRefused,
    Charge,
    Corpus,
    KeptRelease,
    LedgerStore,
    Refusal,
    VerifyResult,
    compact,
    default_location,
    open_store,
)

__all__ = [
    "TOOLS",
    "BudgetRefused",
    "Charge",
    "Corpus",
    "KeptRelease",
    "LedgerStore",
    "Refusal",
    "VerifyResult",
    "compact",
    "default_location",
    "open_store",
]
