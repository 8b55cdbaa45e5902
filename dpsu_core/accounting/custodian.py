"""What the data custodian does with the ledger store, and what an analyst may do to their own account.

Every function takes the store and the ``identity.Identity`` asking, and checks the role first (``NotCustodian`` /
``NotSignedIn``, nothing done), so a page that only displays cannot be made to act for the wrong person by a URL
or a widget's key: the check runs on the server, on the identity the sign-in gave, at the moment of the action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ParameterError
from .identity import Identity, require_custodian, require_signed_in
from .ledger import LedgerTotal
from .store import Corpus, KeptRelease, LedgerStore, Refusal, VerifyResult

__all__ = [
    "CorpusSpend",
    "audit_rows",
    "corpus_spend",
    "export_ledger",
    "register_corpus",
    "release_list",
    "refusal_list",
    "set_cap",
    "set_default_cap",
    "set_own_cap",
    "verify_ledger",
]


@dataclass(frozen=True)
class CorpusSpend:
    """A corpus with what it has spent in total (``ledger.total`` over all its entries) and per analyst."""

    corpus: Corpus
    total: LedgerTotal
    by_actor: dict[str, LedgerTotal]

    @property
    def remaining_epsilon(self) -> float:
        return max(0.0, self.corpus.epsilon_cap - self.total.epsilon)


def register_loaded(who: Identity, account: Any, name: str, epsilon_cap: float, delta_cap: float) -> Any:
    """Register the corpus a session loaded (an unregistered ``account.CorpusAccount``, with its fingerprint) under
    ``name`` at its cap; the registered account."""
    require_custodian(who)
    return account.registered_as(by=who.actor, name=name, cap=(epsilon_cap, delta_cap))


def register_corpus(
    store: LedgerStore,
    who: Identity,
    name: str,
    epsilon_cap: float,
    delta_cap: float,
    *,
    fingerprint: bytes = b"",
    users_hash: str = "",
) -> Corpus:
    """Register a corpus with its cap, recorded as registered by the custodian."""
    require_custodian(who)
    return store.register_corpus(
        name, epsilon_cap, delta_cap, fingerprint=fingerprint, users_hash=users_hash, by=who.actor
    )


def set_cap(store: LedgerStore, who: Identity, corpus: str | int, epsilon: float, delta: float) -> Corpus:
    """A new cap on the corpus (recorded in its hash chain with the custodian's name)."""
    require_custodian(who)
    return store.set_cap(corpus, epsilon, delta, by=who.actor)


def set_default_cap(store: LedgerStore, who: Identity, epsilon: float, delta: float) -> None:
    """The cap a corpus nobody registered gets on its first release."""
    require_custodian(who)
    store.set_default_cap(epsilon, delta)


def corpus_spend(store: LedgerStore, who: Identity) -> list[CorpusSpend]:
    """Every corpus with its total and its spend per analyst."""
    require_custodian(who)
    return [CorpusSpend(c, store.total(c.id), store.spent_by_actor(c.id)) for c in store.corpora()]


def audit_rows(store: LedgerStore, who: Identity) -> list[dict]:
    """Every chained entry (registrations, cap changes, spends) with who caused it and its hashes."""
    require_custodian(who)
    return store.chain_rows()


def release_list(store: LedgerStore, who: Identity, corpus: str | int) -> list[KeptRelease]:
    require_custodian(who)
    return store.releases(corpus)


def refusal_list(store: LedgerStore, who: Identity, corpus: str | int) -> list[Refusal]:
    require_custodian(who)
    return store.refusals(corpus)


def export_ledger(store: LedgerStore, who: Identity, fmt: str = "json") -> str:
    """The whole ledger with its hash chain (``LedgerStore.export``)."""
    require_custodian(who)
    return store.export(fmt)


def verify_ledger(store: LedgerStore, who: Identity) -> VerifyResult:
    require_custodian(who)
    return store.verify()


def set_own_cap(store: LedgerStore, who: Identity, corpus: str | int, epsilon: float, delta: float) -> None:
    """A signed-in person's own cap on a corpus, at most the corpus's cap (it only ever restricts their spends)."""
    require_signed_in(who)
    c = store.corpus(corpus)
    if epsilon > c.epsilon_cap or delta > c.delta_cap:
        raise ParameterError(
            f"your own cap must not exceed corpus {c.name!r}'s cap (ε = {c.epsilon_cap:g}, δ = {c.delta_cap:g}); "
            "only its custodian can raise that"
        )
    store.set_analyst_cap(c.id, who.actor, epsilon, delta)
