"""A corpus's account in the durable ledger store: which stored corpus a loaded corpus is, what it may still spend,
and the charge of a release job to it — the one path the CLI, the app, the API and the Spark driver take.

  * ``recognise``: a loaded corpus is matched against every corpus the store knows, by its fingerprint (each
    user's tokens as the mechanisms see them, keyed with the store's secret: ``corpus.fingerprint``). A match is
    charged to that corpus, and said ("this is corpus 'support-tickets' (98% of its users' words), 7.2 of 10
    spent"); a partial overlap is a new corpus with a warning; no match registers a new corpus under the default
    cap, said once. The Spark engine sees no per-user tokens on the driver: it names its corpus (``named``).
  * ``charge``: the job's ledger entries, checked against the corpus's cap (and the actor's own smaller cap) and
    recorded in one transaction of the store before any noise is drawn; a refusal raises ``BudgetRefused`` with
    what is left, and draws nothing.
  * ``keep``: the release's public output (items, noisy counts, calibration, report) kept with its charge, so a
    later download or an identical request costs nothing.

Nothing here reads raw data beyond the fingerprint and the digest of the user-id set (``Corpus.users_digest``,
kept by the store only as a hash salted with its secret); nothing raw is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

from ..errors import DpsuError
from .ledger import LedgerEntry, LedgerTotal, total, within
from .store import MAX_NAME


@dataclass(frozen=True)
class CorpusAccount:
    """One corpus of the store, as a tool sees it when it loads that corpus."""

    store: Any  # an ``accounting.store.LedgerStore``
    corpus_id: int | None  # None: a corpus the store does not know yet (registered at its first charge)
    name: str
    epsilon_cap: float
    delta_cap: float
    note: str = ""  # what was said when the loaded corpus was recognised (or registered)
    warning: str = ""  # a partial overlap with a known corpus (raw data, not private)
    fingerprint: bytes = b""  # how the store will recognise it (kept when it is registered)
    users_hash: str = ""  # the salted hash of its user-id set (kept when it is registered; "" without ids)

    @property
    def registered(self) -> bool:
        return self.corpus_id is not None

    def registered_as(
        self, *, by: str, name: str | None = None, cap: tuple[float, float] | None = None
    ) -> CorpusAccount:
        """This account in the store: registered now (under ``name``, made unique, at ``cap`` or the store's default
        cap, with its fingerprint) if it was new; the same account if it is known."""
        if self.corpus_id is not None:
            return self
        taken = {c.name for c in self.store.corpora()}
        base = name or self.name or "corpus"
        unique, i = base, 2
        while unique in taken:
            unique, i = f"{base[: MAX_NAME - len(f' ({i})')]} ({i})", i + 1
        eps, delta = cap if cap is not None else self.store.default_cap()
        c = self.store.register_corpus(
            unique, eps, delta, fingerprint=self.fingerprint, users_hash=self.users_hash, by=by
        )
        return replace(self, corpus_id=c.id, name=c.name, epsilon_cap=c.epsilon_cap, delta_cap=c.delta_cap)

    def entries(self) -> list[LedgerEntry]:
        return [] if self.corpus_id is None else list(self.store.entries(self.corpus_id))

    def total(self) -> LedgerTotal:
        return total(self.entries())

    def cap_for(self, actor: str) -> tuple[float, float, str]:
        """The cap that binds ``actor``: the corpus's, or the actor's own smaller one."""
        own = self.store.analyst_cap(self.corpus_id, actor) if actor and self.corpus_id is not None else None
        if own is not None and (own[0] < self.epsilon_cap or own[1] < self.delta_cap):
            return min(own[0], self.epsilon_cap), min(own[1], self.delta_cap), "your own cap"
        return self.epsilon_cap, self.delta_cap, "the corpus's cap, set by its data custodian"

    def refreshed(self) -> CorpusAccount:
        """The same account with the store's current cap (a custodian may have changed it)."""
        if self.corpus_id is None:
            return self
        c = self.store.corpus(self.corpus_id)
        return replace(self, name=c.name, epsilon_cap=c.epsilon_cap, delta_cap=c.delta_cap)

    def status(self) -> str:
        """ "corpus 'x': ε 7.2 of 10 spent (δ 2e-06 of 1e-05), 3 releases" (every tool's releases)."""
        t = self.total()
        spent = "nothing spent yet" if t.releases == 0 else f"{_eps(t)} of {self.epsilon_cap:g} spent"
        return (
            f"corpus '{self.name}': {spent} (δ {t.basic_delta:.2g} of {self.delta_cap:.2g}), "
            f"{t.releases} release{'s' if t.releases != 1 else ''} by every tool"
        )


def _eps(t: LedgerTotal) -> str:
    return f"ε {t.epsilon:.4g}" if t.guaranteed else "no DP guarantee"


def name_of_file(file_name: str) -> str:
    """A corpus name from a file's name: the name itself, or, past the store's ``MAX_NAME`` characters, its start
    and its suffix around an ellipsis (a long file name is no reason to refuse a release)."""
    if len(file_name) <= MAX_NAME:
        return file_name
    suffix = PurePath(file_name).suffix[:20]
    return file_name[: MAX_NAME - len(suffix) - 1] + "…" + suffix


def recognise(store: Any, corpus: Any, name: str, *, by: str) -> CorpusAccount:
    """The account of a loaded ``corpus`` (a ``Corpus``): the known corpus its fingerprint matches (``fingerprint``:
    its users' token sets, keyed with the store's secret), or a new one registered under ``name`` (made unique) at
    the store's default cap; a partial overlap with a known corpus is a new corpus with a warning."""
    from ..corpus.fingerprint import CorpusFingerprint, fingerprint, match, salted_users_hash

    fp = fingerprint(corpus, store.secret())
    best: tuple[Any, Any] | None = None
    warn = ""
    for known in store.corpora():
        if not known.fingerprint:
            continue
        m = match(fp, CorpusFingerprint.from_bytes(known.fingerprint))
        share = max(m.known_found, m.candidate_found)
        if m.same and (best is None or share > max(best[1].known_found, best[1].candidate_found)):
            best = (known, m)
        elif m.partial and not warn:
            warn = m.warning("a new corpus of its own", known=f"corpus '{known.name}'")
    if best is not None:
        known, m = best
        acc = CorpusAccount(store, known.id, known.name, known.epsilon_cap, known.delta_cap, warning=warn)
        return replace(acc, note=f"{m.says(known.name)}; {acc.status().split(': ', 1)[1]}")
    users = salted_users_hash(getattr(corpus, "users_digest", b""), store.secret())
    return _register(store, name, fp.to_bytes(), by=by, warning=warn, users_hash=users)


def named(store: Any, name: str, *, by: str) -> CorpusAccount:
    """The account of the corpus registered as ``name``, or a new one under that name at the default cap (the Spark
    engine, whose driver never holds the users' tokens)."""
    for known in store.corpora():
        if known.name == name:
            acc = CorpusAccount(store, known.id, known.name, known.epsilon_cap, known.delta_cap)
            return replace(acc, note=f"charged to {acc.status()}")
    return _register(store, name, b"", by=by)


def _register(
    store: Any, name: str, fingerprint: bytes, *, by: str, warning: str = "", users_hash: str = ""
) -> CorpusAccount:
    """A corpus the store does not know: an account to be registered at its first charge (``registered_as``), under
    ``name`` (made unique then) at the default cap."""
    eps, delta = store.default_cap()
    note = (
        f"new corpus '{name}': it joins the ledger at its first release, with the default cap ε = {eps:g}, "
        f"δ = {delta:.2g} (a data custodian can register it first with another cap)"
    )
    return CorpusAccount(
        store, None, name, eps, delta, note=note, warning=warning, fingerprint=fingerprint, users_hash=users_hash
    )


def charge(
    account: CorpusAccount, job: Any, *, actor: str, tool: str, source: str, request_key: str | None = None
) -> tuple[CorpusAccount, Any]:
    """Charge a ``job.ReleaseJob`` to the account in one transaction of the store (cap checked, entries recorded)
    before it runs, registering a new corpus first; returns (the account as registered, the store's charge).
    Raises the store's ``BudgetRefused`` (one line, what is left)."""
    account = account.registered_as(by=actor)
    entries = job.entries(corpus_id=account.corpus_id, source=source)
    charged = account.store.charge(
        account.corpus_id,
        list(entries),
        actor=actor,
        tool=tool,
        job=job.record(),
        request_key=request_key or job.request_key(account.corpus_id),
    )
    return account, charged


def releases_left(account: CorpusAccount, job: Any, actor: str = "", limit: int = 1_000_000) -> int:
    """How many more releases of ``job`` the cap binding ``actor`` admits (every composition counted: the tightest
    total of the corpus's entries plus k of the job's must stay within it)."""
    eps_cap, delta_cap, _ = account.cap_for(actor)
    spent = account.entries()
    one = job.entries(corpus_id=account.corpus_id, source="preview")

    def fits(k: int) -> bool:
        """``ledger.within``: the basic total first, the tight one (a privacy-loss distribution of a k-fold
        composition: seconds, for a large k) only where the basic total passes the cap."""
        if k == 0:
            return True
        entries = spent + [replace(e, releases=e.releases * k) for e in one]
        return not any(e.teaching for e in entries) and within(entries, eps_cap, delta_cap)

    if not fits(1):
        return 0
    hi = 1
    while hi < limit and fits(min(hi * 2, limit)):
        hi = min(hi * 2, limit)
    if hi >= limit:
        return limit
    lo, hi = hi, min(hi * 2, limit)  # fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def keep(account: CorpusAccount, charge_id: Any, release: Any, report: bytes | str) -> Any:
    """Keep a release's public output with its charge: its items and noisy counts, its calibration, its report, and
    the CSV export exactly as written (``outputs.export.to_csv_bytes``: item, n, and for count mechanisms the noisy
    count and its noise's standard deviation). Only the released set and public parameters: nothing raw."""
    from ..outputs.export import to_csv_bytes
    from .backend import KEPT_CSV

    counts = None if release.noisy_counts is None else [float(c) for c in release.noisy_counts]
    return account.store.keep_release(
        charge_id,
        items=[str(x) for x in release.items],
        counts=counts,
        calibration=release.calibration.as_dict(),
        report=report.decode("utf-8") if isinstance(report, bytes) else report,
        outputs={KEPT_CSV: to_csv_bytes(release)},
    )


def kept_csv(kept: Any) -> bytes:
    """A kept release's items as the export's CSV: exactly the bytes written when it was released (a release kept
    without its CSV, through the store's own ``keep_release``: its items and counts as ``dpsu ledger export-release``
    writes them)."""
    from .backend import KEPT_CSV
    from .store import items_csv

    data = kept.outputs.get(KEPT_CSV)
    return bytes(data) if data is not None else items_csv(kept)


def earlier_release(account: CorpusAccount, job: Any) -> Any:
    """A kept release of an identical request on this corpus (None when there is none, or for a teaching job)."""
    if job.teaching or account.corpus_id is None:
        return None
    return account.store.find_release(account.corpus_id, job.request_key(account.corpus_id))


class SpentAlready(DpsuError):
    """An identical request was released before: its public output is offered instead of spending again."""


def refuse_identical(account: CorpusAccount, job: Any, *, spend_again: bool, get_it: str, again: str) -> None:
    """Refuse a request identical to a release kept on this corpus unless ``spend_again`` (its output is public):
    ``get_it`` says how the tool hands the kept one back ({id} is its number), ``again`` how to spend anyway."""
    prior = earlier_release(account, job)
    if prior is not None and not spend_again:
        raise SpentAlready(
            f"an identical release of corpus '{account.name}' is kept in the ledger (release {prior.id}, "
            f"{prior.created_utc} UTC): its output is public, so {get_it.format(id=prior.id)}, or {again} to spend "
            "the budget again"
        )
