"""The app's ledger: the durable store's account of every corpus it knows, read and charged through the same
interface as the in-memory ``ledger.Ledger`` (``for_corpus``, ``total``, ``add``, ``frame``), so the spend gate,
the sidebar and the history read one total whatever tab, session or tool spent.

A corpus the store knows is *attached* under the session's key for it (``attach``: after a load recognised it,
``account.recognise``). Its entries are the store's, from every session and tool; ``add`` charges new entries to
the store in one transaction that checks the cap (``BudgetRefused`` when it would pass: nothing recorded, nothing
run). Entries on a corpus not attached (the bundled public demo) stay in this session's memory, as before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from .account import CorpusAccount, keep
from .ledger import Ledger, LedgerEntry, LedgerTotal, total


class DurableLedger(Ledger):
    """Entries of attached corpora live in the store; the others in memory (``Ledger``)."""

    def __init__(self, location: str | None = None, *, actor: str = "", tool: str = "app", store: Any = None) -> None:
        super().__init__()  # ``entries``: the entries kept in memory (corpora not in the store)
        self.location, self.actor, self.tool = location, actor, tool
        self.accounts: dict[Any, CorpusAccount] = {}
        self.charges: dict[Any, Any] = {}  # key -> the last charge made on it from this session
        self._store: Any = store  # None: opened on first use
        self.left_cache: dict[Any, int] = {}  # the sidebar's "releases left", by corpus, spend, settings and cap

    @property
    def store(self) -> Any:
        """The durable store, opened on first use (``accounting.store.open_store``)."""
        if self._store is None:
            from .store import open_store

            self._store = open_store(self.location)
        return self._store

    # ---- which corpus a session key is -------------------------------------------------------------------------
    def attach(self, key: Any, account: CorpusAccount) -> None:
        self.accounts[key] = account

    def account(self, key: Any) -> CorpusAccount | None:
        """The store's account of the corpus under ``key`` (its cap as the store has it now), or None."""
        acc = self.accounts.get(key)
        if acc is None:
            return None
        acc = acc.refreshed()
        self.accounts[key] = acc
        return acc

    def cap(self, key: Any) -> tuple[float, float, str] | None:
        """The cap binding this session's actor on the corpus under ``key`` (None: not in the store)."""
        acc = self.account(key)
        return None if acc is None else acc.cap_for(self.actor)

    # ---- the Ledger interface ------------------------------------------------------------------------------------
    def for_corpus(self, corpus_id: Any) -> list[LedgerEntry]:
        acc = self.accounts.get(corpus_id)
        if acc is not None:
            return acc.entries()
        return [e for e in self.entries if e.corpus_id == corpus_id]

    def total(self, corpus_id: Any) -> LedgerTotal:
        return total(self.for_corpus(corpus_id))

    def record(
        self, cal: Any, *, corpus_id: Any, source: str, releases: int = 1, teaching: bool = False
    ) -> LedgerEntry:
        entry = LedgerEntry.from_calibration(
            cal, corpus_id=corpus_id, source=source, releases=releases, teaching=teaching
        )
        self.add([entry])
        return entry

    def add(self, entries: Sequence[LedgerEntry], *, job: Any = None) -> None:
        """Enter entries as they are attempted: those of an attached corpus are charged to the store in one
        transaction per corpus (cap checked first: ``BudgetRefused`` and nothing recorded when it would pass); a
        new corpus joins the store at its first charge. ``job`` (a ``job.ReleaseJob``) names the request, so an
        identical one is offered its kept output later."""
        by_key: dict[Any, list[LedgerEntry]] = defaultdict(list)
        for e in entries:
            by_key[e.corpus_id].append(e)
        for key, group in by_key.items():
            acc = self.accounts.get(key)
            if acc is None:
                self.entries.extend(group)
                continue
            if not acc.registered:
                acc = self.accounts[key] = acc.registered_as(by=self.actor)
            self.charges[key] = self.store.charge(
                acc.corpus_id,
                group,
                actor=self.actor,
                tool=self.tool,
                job=job.record()
                if job is not None
                else {"entries": [e.label for e in group], "source": group[0].source},
                request_key=job.request_key(acc.corpus_id) if job is not None else "",
            )

    def keep(self, key: Any, release: Any, report: bytes | str) -> None:
        """Keep the release just made on ``key`` with its charge (public output only); nothing off the store."""
        acc, charged = self.accounts.get(key), self.charges.get(key)
        if acc is not None and charged is not None:
            keep(acc, charged.charge_id, release, report)
