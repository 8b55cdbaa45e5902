"""The account of a corpus's privacy budget: the durable ledger store (``store``) and its commands (``commands``).

``open_store()`` opens the ledger every tool charges: a SQLite file by default, or a PostgreSQL server for a team
(``postgresql://`` URL). See ``store``'s docstring for the threat model and backups. The names below are loaded
from ``store`` on first use, so ``dpsu --help`` (which lists the ledger's commands) loads no mechanism.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module(".store", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
