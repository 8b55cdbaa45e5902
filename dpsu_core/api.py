"""The library's charged release: ``dpsu_core.release`` builds a release job, charges it to the durable ledger
(the store given, or ``DPSU_LEDGER``, or the per-user default) and runs it as charged.

``Mechanism.release`` stays the uncharged primitive (for simulated and exploration corpora, and the teaching
tools); a release on private data goes through here, as the CLI's and the app's do::

    from dpsu_core import load_corpus, release
    corpus = load_corpus("posts.csv")
    rel = release(corpus, "policy-gaussian", epsilon=3, delta=1e-6, max_items=100, corpus_name="posts")
"""

from __future__ import annotations

from typing import Any

from .accounting.account import charge, keep, recognise, refuse_identical
from .accounting.identity import local_actor
from .errors import ParameterError
from .job import ReleaseJob
from .mechanisms import Release


def release(
    corpus: Any,
    mechanism: str,
    *,
    epsilon: float,
    delta: float,
    store: Any = None,
    corpus_name: str = "corpus",
    actor: str | None = None,
    counts: tuple[float, float] | None = None,
    seed: int | None = None,
    spend_again: bool = False,
    **params: Any,
) -> Release:
    """Release ``mechanism`` at (``epsilon``, ``delta``) on ``corpus`` (a loaded ``Corpus``), charged first to the
    durable ledger ``store`` (an ``accounting.store.LedgerStore``, a path or ``postgresql://`` URL; None: the
    ``DPSU_LEDGER`` or default store). The corpus is recognised by its users' words (a new one is registered as
    ``corpus_name`` at the default cap). Raises the store's ``BudgetRefused`` (nothing drawn) past the cap, and
    ``DpsuError`` for a request identical to a kept earlier release unless ``spend_again``."""
    from .accounting.store import open_store

    if store is None or isinstance(store, str):
        store = open_store(store)
    if not isinstance(corpus_name, str) or not corpus_name.strip():
        raise ParameterError(f"corpus_name must be a non-empty string, got {corpus_name!r}")
    who = actor or local_actor()
    job = ReleaseJob.build(mechanism, epsilon, delta, params, counts=counts, seed=seed, strict=True)
    account = recognise(store, corpus, corpus_name, by=who)
    refuse_identical(
        account,
        job,
        spend_again=spend_again,
        get_it="read it with the store's release({id})",
        again="pass spend_again=True",
    )
    account, charged = charge(account, job, actor=who, tool="api", source="dpsu_core.release")
    rel = job.run(corpus)
    from .outputs.export import report_json

    keep(account, charged.charge_id, rel, report_json(rel))
    return rel
