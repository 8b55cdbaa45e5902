"""The session's account of the private corpus: the spend gate's plans, the durable ledger's charges and the
release history. Each acts on the session's ``AppState`` (``pages._state``); the accounting itself is
``dpsu_core.accounting``'s."""

from __future__ import annotations

from dpsu_core.accounting.account import CorpusAccount, recognise
from dpsu_core.accounting.history import PublicRef, ReleaseRecord, SpendGroup
from dpsu_core.accounting.ledger import LedgerEntry, LedgerTotal, ledger_summary
from dpsu_core.accounting.spend import SpendPlan, plan_spend, plan_with_counts
from dpsu_core.corpus import Corpus
from dpsu_core.job import ReleaseJob
from dpsu_core.mechanisms import Calibration, Release
from dpsu_core.mechanisms.item_counts import CountsCalibration
from dpsu_core.mechanisms.registry import mechanism_class
from dpsu_core.outputs.export import report_json
from pages._state import AppState, SessionBudget
from pages._workspace import corpus_ref, private_ref, private_work


# ---- the ledger and the spend gate --------------------------------------------------------------
def plan(state: AppState, action: str, planned: list[tuple[Calibration, int]], source: str) -> SpendPlan:
    """What ``action`` (``planned``: calibration and number of releases) costs on the corpus in use
    (``dpsu_core.accounting.spend.plan_spend``: nothing on an exploration corpus)."""
    return plan_on(state, action, planned, source, on_private=not state.exploring, corpus_name=state.corpus_name)


def plan_on(
    state: AppState,
    action: str,
    planned: list[tuple[Calibration, int]],
    source: str,
    *,
    on_private: bool,
    corpus_name: str,
) -> SpendPlan:
    """``plan`` on a chosen corpus: the private one (``on_private``) or another, whose runs spend nothing."""
    work = private_work(state)
    return plan_spend(
        action,
        planned,
        state.ledger.for_corpus(work.dataset_key),
        corpus_id=work.dataset_key,
        corpus_name=work.corpus_name if on_private else corpus_name,
        limit_epsilon=state.session_budget.epsilon,
        limit_delta=state.session_budget.delta,
        on_private=on_private,
        teaching=state.teaching,
        public_demo=work.is_demo,
        source=source,
        cap=state.ledger.cap(work.dataset_key),
    )


def plan_counts(state: AppState, plan: SpendPlan, cc: CountsCalibration) -> SpendPlan:
    """``plan`` (the set release at its share of the budget) with the noisy counts' step added
    (``dpsu_core.accounting.spend.plan_with_counts``): its ledger entry, and the cost and total after it."""
    return plan_with_counts(plan, cc, state.ledger.for_corpus(private_work(state).dataset_key))


def recognise_corpus(state: AppState, corpus: Corpus, name: str) -> CorpusAccount:
    """The durable store's account of a newly loaded private corpus (``accounting.account.recognise``: a known
    corpus by its users' tokens, or a new one at the default cap)."""
    return recognise(state.ledger.store, corpus, name, by=state.ledger.actor)


def account(state: AppState) -> CorpusAccount | None:
    """The store's account of the private corpus (None for the bundled public demo: not in the store)."""
    return state.ledger.account(private_work(state).dataset_key)


def set_session_budget(state: AppState, epsilon: float, delta: float) -> None:
    """The user confirmed a new session budget (the sidebar's inputs follow on the next run)."""
    state.session_budget = SessionBudget(float(epsilon), float(delta))
    state.budget_changed = True


def begin_spend(state: AppState, plan: SpendPlan, not_kept: str | None = None) -> SpendGroup | None:
    """The history's group for one action of ``plan`` on the private corpus (None on an exploration corpus:
    nothing is spent there). ``not_kept``: why its releases have no exportable output, if they never do."""
    if not plan.on_private:
        return None
    source = plan.entries[0].source if plan.entries else plan.action
    if not_kept is None:
        return state.history.begin(plan.action, source, private_ref(state))
    return state.history.begin(plan.action, source, private_ref(state), not_kept)


def record_attempt(
    state: AppState,
    entries: tuple[LedgerEntry, ...] | list[LedgerEntry],
    plan: SpendPlan,
    group: SpendGroup | None = None,
    *,
    job: ReleaseJob | None = None,
) -> None:
    """Enter entries of ``plan`` into the ledger as they are attempted, before any mechanism runs (a failure
    part-way still spent), and count them into the history's ``group`` (``begin_spend``). On a corpus of the
    durable store this is its charge, in one transaction that checks the cap (``BudgetRefused``: nothing
    recorded); ``job`` names the request. Nothing is entered for a plan on an exploration corpus."""
    if plan.on_private:
        state.ledger.add(entries, job=job)
        if group is None:
            group = begin_spend(state, plan)
        if group is not None:
            state.history.spend(group, sum(e.releases for e in entries))


def record_run(state: AppState, cal: Calibration, plan: SpendPlan, group: SpendGroup | None = None) -> None:
    """One run of ``plan`` with this calibration, entered just before it starts (comparisons)."""
    entry = LedgerEntry.from_calibration(
        cal, corpus_id=private_work(state).dataset_key, source=plan.entries[0].source, teaching=state.teaching
    )
    record_attempt(state, [entry], plan, group)


def spent(state: AppState) -> LedgerTotal:
    """What the session has spent on the private corpus (all loads of the same data)."""
    return state.ledger.total(private_work(state).dataset_key)


# ---- the release history ------------------------------------------------------------------------
def add_release(
    state: AppState,
    release: Release,
    page: str,
    params: dict[str, object] | None = None,
    *,
    group: SpendGroup | None = None,
    batch: str = "",
) -> ReleaseRecord:
    """A release made on the corpus in use, from ``page``: into the history (the ledger entry was made when
    it was attempted, counted into ``group``; ``batch``: the batch it is one run of)."""
    state.export_cache = None
    public = None
    takes_public = mechanism_class(release.calibration.mechanism).takes_public_corpus
    if takes_public and state.public is not None:
        public = PublicRef(state.public.name, state.public.reading)  # the file it used, as read
    where = corpus_ref(state)  # the account at this release, kept with it: its report never reads a later one
    total = ledger_summary(state.ledger.total(where.digest)) if where.private else None
    rec = state.history.add(release, where, page, params, public, group=group, batch=batch, spent=total)
    if group is not None:  # spent on the private corpus: its public output is kept with the charge
        state.ledger.keep(private_work(state).dataset_key, release, report_json(release, total, rec.title()))
    return rec


def release_record(state: AppState) -> ReleaseRecord | None:
    """The release shown by default on the corpus in use: the last made on the Release page, else the last."""
    return state.history.default_on(corpus_ref(state))  # this corpus's, never one made on another file


def current_release(state: AppState) -> Release | None:
    """The release of ``release_record``."""
    rec = release_record(state)
    return None if rec is None else rec.release


def releases(state: AppState) -> dict[str, Release]:
    """The newest release of each mechanism on the corpus in use."""
    return {m: r.release for m, r in state.history.latest_by_mechanism(state.corpus_id).items()}
