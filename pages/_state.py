"""The app's session state: one typed object per browser session, and every invalidation in one place.

Pages and tests read and change it through ``app_state()``; nothing else indexes ``st.session_state``:
the widget values a page needs before drawing the widget go through ``widget_value`` / ``set_widget`` /
``forget_widgets``, and the few widget keys this module resets are in ``install_corpus``. Nothing is
written to disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

import pandas as pd
import streamlit as st

from dpsu_core.accounting.account import CorpusAccount, recognise
from dpsu_core.accounting.durable import DurableLedger
from dpsu_core.accounting.history import CorpusRef, PublicRef, ReleaseHistory, ReleaseRecord, SpendGroup
from dpsu_core.accounting.identity import local_actor
from dpsu_core.accounting.ledger import LedgerEntry, LedgerTotal, ledger_summary
from dpsu_core.accounting.spend import SpendPlan, plan_spend, plan_with_counts
from dpsu_core.analysis.neighbours import NeighbourRuns
from dpsu_core.corpus import Corpus, LoadOptions
from dpsu_core.corpus.fingerprint import Content, is_known
from dpsu_core.corpus.load import as_loaded
from dpsu_core.corpus.overlap import Key, new_key
from dpsu_core.corpus.preview import Survey
from dpsu_core.corpus.readers import RawFile
from dpsu_core.mechanisms import Calibration, Release
from dpsu_core.mechanisms.item_counts import DEFAULT_CLIP, DEFAULT_SHARE, CountsCalibration
from dpsu_core.mechanisms.registry import mechanism_class
from dpsu_core.outputs.export import ExportFile, export_files
from dpsu_core.params import PARAMS
from pages._text import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    DEFAULT_MECHANISM,
    DEFAULT_SESSION_DELTA,
    DEFAULT_SESSION_EPSILON,
)

UPLOAD_KEY = "upload:"  # an uploaded private corpus's ledger key: this prefix and its content digest
STATE_KEY = "dpsu_state"  # the one session-state entry of the app (AppTests read it too)
SESSION_BUDGET_KEYS = ("session_epsilon", "session_delta")  # the sidebar's session-budget inputs
CANARY_TEXT_KEY = "canary_text"  # the Corpus page's canary text area: reset when a corpus is installed


@dataclass(frozen=True)
class Budget:
    """The sidebar's privacy budget (ε, δ) and the two parameters most mechanisms share (Δ0, α)."""

    epsilon: float = DEFAULT_EPSILON
    delta: float = DEFAULT_DELTA
    max_items: int = PARAMS["max_items"].default
    alpha: float = PARAMS["alpha"].default


@dataclass(frozen=True)
class CountsOption:
    """The Release page's noisy counts of the released items (``mechanisms.item_counts``): on or off, their
    share of the release's (ε, δ) and the l2 bound of one user's counts."""

    on: bool = False
    share: float = DEFAULT_SHARE
    clip: float = DEFAULT_CLIP


@dataclass(frozen=True)
class SessionBudget:
    """What the user allows the session's total on the private corpus to reach (ε, δ), set apart from each
    release's own (ε, δ): the spend gate blocks an action that would pass it."""

    epsilon: float = DEFAULT_SESSION_EPSILON
    delta: float = DEFAULT_SESSION_DELTA


@dataclass
class UploadCache:
    """The pending upload unpacked once (``read_upload``): reruns, previews and the load reuse it, so a compressed
    upload is never unpacked twice; its content hash (the preview cache's key) is computed once too."""

    source: bytes  # the uploaded bytes (``AppState.pending_upload``)
    name: str
    raw: RawFile
    digest: str
    # the file read for its column facts (every column, every row), for one (format, header) choice
    survey: tuple[tuple[str, bool | None], Survey] | None = None

    def is_for(self, name: str, data: bytes) -> bool:
        """Whether this is the upload ``(name, data)`` (the same object, or the widget's same bytes again)."""
        return self.name == name and (self.source is data or self.source == data)


UploadRole = Literal["private", "explore", "public"]
# the widget keys of each upload path start with this (the private corpus's keep their plain names)
UPLOAD_PREFIX: dict[UploadRole, str] = {"private": "", "explore": "explore_", "public": "public_"}


@dataclass
class UploadSlot:
    """One upload path's file: the private corpus, the exploration file or GW-KT's public corpus. Kept across
    pages (the uploader widget's state is not), unpacked once, loaded within the memory budget."""

    pending: tuple[str, bytes] | None = None  # the uploaded (name, bytes), not loaded yet
    cache: UploadCache | None = None  # the pending upload, unpacked once (``pages._ui.upload_once``)
    pending_load: LoadOptions | None = None  # a load above the memory budget, waiting for "Load anyway"


def _slots() -> dict[UploadRole, UploadSlot]:
    return {role: UploadSlot() for role in UPLOAD_PREFIX}


@dataclass(frozen=True)
class NeighbourView:
    """The last neighbouring-corpora experiment: which pair of corpora, which mechanism, the runs."""

    description: str
    label: str
    corpus_name: str
    runs: NeighbourRuns


@dataclass
class Workspace:
    """A corpus and what was made on it: the fields are declared here once. ``AppState`` is the workspace in use
    (these are its own fields); while an exploration corpus is in use, the private one is kept aside as a copy
    (``AppState.private``), and copied back by field name."""

    corpus: Corpus | None = None
    corpus_name: str = ""
    corpus_options: LoadOptions = field(default_factory=LoadOptions)
    is_demo: bool = True
    corpus_id: int = 0  # a new id per corpus installed (private or exploration)
    dataset_key: str = ""  # the ledger's key: the same file loaded twice is the same users
    input_name: str = ""  # the file name a command export reads (the upload's name, the demo file's name)
    canaries: list[str] = field(default_factory=list)  # strings to look for in releases
    # results on the corpus: cleared when another corpus is installed
    comparison: pd.DataFrame | None = None  # the last table of compare_runs
    neighbours: NeighbourView | None = None  # the last neighbouring-corpora experiment
    # the content of an uploaded file (``dpsu_core.corpus.fingerprint``): a private one's, to check public files against
    fingerprint: Content | None = None
    content_note: str = ""  # what the content check said of an exploration file (raw data, NOT private)


WORKSPACE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Workspace))


@dataclass(frozen=True)
class PublicCorpus:
    """GW-KT's public corpus: the corpus read from an upload, with the file it came from and how it was read."""

    corpus: Corpus
    name: str  # the upload's file name
    digest: str  # its content digest (after unpacking)
    reading: LoadOptions  # how it was read (format, header, columns), for the command export
    fingerprint: Content | None = None  # its content, checked against a private corpus loaded later
    note: str = ""  # what the content check said of it (raw data, NOT private)

    @property
    def key(self) -> tuple[str, str]:
        """(content digest, name) of the upload it was read from."""
        return self.digest, self.name


@dataclass
class AppState(Workspace):
    """Everything a session holds between reruns: the workspace in use (``Workspace``'s fields) and the rest."""

    flash: str | None = None  # a message to show once, after the rerun that follows a load
    # what the durable ledger said of the corpus just loaded (which corpus it is; a partial overlap): shown once
    ledger_note: tuple[str, str] | None = None
    # the files of the three upload paths (private corpus, exploration file, GW-KT's public corpus)
    uploads: dict[UploadRole, UploadSlot] = field(default_factory=_slots)
    # the sidebar and the Release page's choices
    budget: Budget = field(default_factory=Budget)
    session_budget: SessionBudget = field(default_factory=SessionBudget)
    budget_changed: bool = False  # set_session_budget ran: the sidebar's inputs take the new budget on the next run
    teaching: bool = False
    mechanism: str = DEFAULT_MECHANISM
    counts: CountsOption = field(default_factory=CountsOption)  # the Release page's noisy counts option
    param_values: dict[str, float | int | str | bool | None] = field(
        default_factory=dict
    )  # mechanism parameters beyond the sidebar's
    public: PublicCorpus | None = None  # GW-KT's public corpus (None: wordfreq)
    # every release of the session, on every corpus (pages show the ones on the corpus in use)
    history: ReleaseHistory = field(default_factory=ReleaseHistory)
    export_cache: tuple[tuple[int, int], list[ExportFile]] | None = None  # ((release number, ledger size), files)
    tokenizer_cache: tuple[tuple[Any, ...], tuple[bytes, bytes, dict[str, Any]]] | None = None  # see tokenizer_files
    # the privacy ledger (the durable store's account of every uploaded corpus; the public demo's in memory), and
    # the exploration corpus (nothing run on it is recorded)
    ledger: DurableLedger = field(default_factory=lambda: DurableLedger(actor=local_actor(), tool="app"))
    exploring: bool = False
    private: Workspace | None = None  # the private corpus and its results while exploring
    ids_issued: int = 0
    overlap_key: Key = field(default_factory=new_key, repr=False)  # this session's content-check key (never shown)

    # the private corpus's upload path, by the names the pages and tests use
    @property
    def pending_upload(self) -> tuple[str, bytes] | None:
        return self.uploads["private"].pending

    @pending_upload.setter
    def pending_upload(self, value: tuple[str, bytes] | None) -> None:
        self.uploads["private"].pending = value

    @property
    def upload(self) -> UploadCache | None:
        return self.uploads["private"].cache

    @upload.setter
    def upload(self, value: UploadCache | None) -> None:
        self.uploads["private"].cache = value

    @property
    def pending_load(self) -> LoadOptions | None:
        return self.uploads["private"].pending_load

    @pending_load.setter
    def pending_load(self, value: LoadOptions | None) -> None:
        self.uploads["private"].pending_load = value

    @property
    def public_corpus(self) -> Corpus | None:
        """GW-KT's public frequencies (None: wordfreq)."""
        return None if self.public is None else self.public.corpus

    @property
    def public_corpus_key(self) -> tuple[str, str] | None:
        return None if self.public is None else self.public.key

    def _clear_results(self) -> None:
        self.comparison, self.export_cache, self.neighbours = None, None, None

    def _workspace(self) -> Workspace:
        w = Workspace(**{name: getattr(self, name) for name in WORKSPACE_FIELDS})
        w.canaries = list(w.canaries)
        return w

    def _restore(self, w: Workspace) -> None:
        for name in WORKSPACE_FIELDS:
            setattr(self, name, getattr(w, name))
        self.canaries = list(w.canaries)
        self.export_cache = None

    def set_corpus(
        self,
        corpus: Corpus,
        name: str,
        options: LoadOptions,
        *,
        is_demo: bool,
        canaries: list[str],
        dataset_key: str | None = None,
        input_name: str | None = None,
        fingerprint: Content | None = None,
    ):
        """Install a newly loaded PRIVATE corpus with its own canaries (``fingerprint``: its file's content);
        results of the previous one no longer apply, and an exploration in progress ends (its corpus is dropped).
        GW-KT's public corpus goes when it is this file, or holds too much of its content (``fingerprint``)."""
        self.exploring, self.private = False, None
        options = as_loaded(options, corpus.source)  # what the load did (a redo pins it): not what is installed now
        self.corpus, self.corpus_name, self.corpus_options, self.is_demo = corpus, name, options, is_demo
        self.fingerprint, self.content_note = fingerprint, ""
        if self.public is not None and (
            dataset_key == UPLOAD_KEY + self.public.digest
            or (
                fingerprint is not None
                and self.public.fingerprint is not None
                and is_known(self.public.fingerprint, fingerprint)
            )
        ):
            self.public = None  # now the private data
        self.ids_issued += 1
        self.corpus_id = self.ids_issued
        self.dataset_key = dataset_key or name
        self.input_name = input_name or name
        self.canaries = list(canaries)
        self._clear_results()

    # ---- exploration -------------------------------------------------------------------------
    def explore(
        self,
        corpus: Corpus,
        name: str,
        options: LoadOptions | None = None,
        canaries: list[str] | None = None,
        note: str = "",
    ) -> None:
        """Work on ``corpus`` (the demo, a public file or a simulated corpus) instead of the private corpus
        (``note``: what the content check said of a file). The private corpus and its results are kept aside
        untouched; nothing run now enters the ledger."""
        if not self.exploring:
            self.private = self._workspace()
        self.exploring = True
        self._restore(Workspace(corpus, name, options or LoadOptions(), is_demo=False, canaries=list(canaries or [])))
        self.content_note = note
        self.ids_issued += 1
        self.corpus_id = self.ids_issued

    def back_to_private(self) -> None:
        """Return to the private corpus and the results made on it before the exploration."""
        if self.exploring and self.private is not None:
            self._restore(self.private)
        self.exploring, self.private = False, None

    @property
    def private_work(self) -> Workspace:
        """The private corpus's workspace: kept aside while exploring, else the one in use."""
        return self.private if self.exploring and self.private is not None else self

    @property
    def private_corpus(self) -> Corpus | None:
        return self.private_work.corpus

    @property
    def private_name(self) -> str:
        return self.private_work.corpus_name

    @property
    def private_key(self) -> str:
        return self.private_work.dataset_key

    @property
    def private_digest(self) -> str | None:
        """The content digest of the private corpus's file (None for the bundled demo)."""
        key = self.private_key
        return key.removeprefix(UPLOAD_KEY) if key.startswith(UPLOAD_KEY) else None

    # ---- the ledger and the spend gate --------------------------------------------------------------
    def plan(self, action: str, planned: list[tuple[Calibration, int]], source: str) -> SpendPlan:
        """What ``action`` (``planned``: calibration and number of releases) costs on the corpus in use
        (``dpsu_core.accounting.spend.plan_spend``: nothing on an exploration corpus)."""
        return self.plan_on(action, planned, source, on_private=not self.exploring, corpus_name=self.corpus_name)

    def plan_on(
        self, action: str, planned: list[tuple[Calibration, int]], source: str, *, on_private: bool, corpus_name: str
    ) -> SpendPlan:
        """``plan`` on a chosen corpus: the private one (``on_private``) or another, whose runs spend nothing."""
        return plan_spend(
            action,
            planned,
            self.ledger.for_corpus(self.private_key),
            corpus_id=self.private_key,
            corpus_name=self.private_name if on_private else corpus_name,
            limit_epsilon=self.session_budget.epsilon,
            limit_delta=self.session_budget.delta,
            on_private=on_private,
            teaching=self.teaching,
            public_demo=self.private_work.is_demo,
            source=source,
            cap=self.ledger.cap(self.private_key),
        )

    def recognise(self, corpus: Corpus, name: str) -> CorpusAccount:
        """The durable store's account of a newly loaded private corpus (``accounting.account.recognise``: a known
        corpus by its users' tokens, or a new one at the default cap)."""
        return recognise(self.ledger.store, corpus, name, by=self.ledger.actor)

    @property
    def account(self) -> CorpusAccount | None:
        """The store's account of the private corpus (None for the bundled public demo: not in the store)."""
        return self.ledger.account(self.private_key)

    def plan_counts(self, plan: SpendPlan, cc: CountsCalibration) -> SpendPlan:
        """``plan`` (the set release at its share of the budget) with the noisy counts' step added
        (``dpsu_core.accounting.spend.plan_with_counts``): its ledger entry, and the cost and total after it."""
        return plan_with_counts(plan, cc, self.ledger.for_corpus(self.private_key))

    def set_session_budget(self, epsilon: float, delta: float) -> None:
        """The user confirmed a new session budget (the sidebar's inputs follow on the next run)."""
        self.session_budget = SessionBudget(float(epsilon), float(delta))
        self.budget_changed = True

    def begin_spend(self, plan: SpendPlan, not_kept: str | None = None) -> SpendGroup | None:
        """The history's group for one action of ``plan`` on the private corpus (None on an exploration corpus:
        nothing is spent there). ``not_kept``: why its releases have no exportable output, if they never do."""
        if not plan.on_private:
            return None
        source = plan.entries[0].source if plan.entries else plan.action
        if not_kept is None:
            return self.history.begin(plan.action, source, self.private_ref())
        return self.history.begin(plan.action, source, self.private_ref(), not_kept)

    def record_attempt(
        self,
        entries: tuple[LedgerEntry, ...] | list[LedgerEntry],
        plan: SpendPlan,
        group: SpendGroup | None = None,
        *,
        job: Any = None,
    ) -> None:
        """Enter entries of ``plan`` into the ledger as they are attempted, before any mechanism runs (a failure
        part-way still spent), and count them into the history's ``group`` (``begin_spend``). On a corpus of the
        durable store this is its charge, in one transaction that checks the cap (``BudgetRefused``: nothing
        recorded); ``job`` (a ``job.ReleaseJob``) names the request. Nothing is entered for a plan on an
        exploration corpus."""
        if plan.on_private:
            self.ledger.add(entries, job=job)
            if group is None:
                group = self.begin_spend(plan)
            if group is not None:
                self.history.spend(group, sum(e.releases for e in entries))

    def record_run(self, cal: Calibration, plan: SpendPlan, group: SpendGroup | None = None) -> None:
        """One run of ``plan`` with this calibration, entered just before it starts (comparisons)."""
        entry = LedgerEntry.from_calibration(
            cal, corpus_id=self.private_key, source=plan.entries[0].source, teaching=self.teaching
        )
        self.record_attempt([entry], plan, group)

    def spent(self) -> LedgerTotal:
        """What the session has spent on the private corpus (all loads of the same data)."""
        return self.ledger.total(self.private_key)

    # ---- the release history ------------------------------------------------------------------------
    def corpus_ref(self) -> CorpusRef:
        """The corpus in use, as a release names it."""
        return CorpusRef(
            self.corpus_id,
            self.corpus_name,
            self.dataset_key,
            not self.exploring,
            self.input_name if not self.exploring else "",
            self.corpus_options,
        )

    def private_ref(self) -> CorpusRef:
        """The private corpus (also while exploring), as a release or a spend names it."""
        if self.exploring and self.private is not None:
            w = self.private
            return CorpusRef(w.corpus_id, w.corpus_name, w.dataset_key, True, w.input_name, w.corpus_options)
        return self.corpus_ref()

    def add_release(
        self,
        release: Release,
        page: str,
        params: dict[str, object] | None = None,
        *,
        group: SpendGroup | None = None,
        batch: str = "",
    ) -> ReleaseRecord:
        """A release made on the corpus in use, from ``page``: into the history (the ledger entry was made when
        it was attempted, counted into ``group``; ``batch``: the batch it is one run of)."""
        self.export_cache = None
        public = None
        takes_public = mechanism_class(release.calibration.mechanism).takes_public_corpus
        if takes_public and self.public is not None:
            public = PublicRef(self.public.name, self.public.reading)  # the file it used, as read
        where = self.corpus_ref()  # the account at this release, kept with it: its report never reads a later one
        spent = ledger_summary(self.ledger.total(where.digest)) if where.private else None
        rec = self.history.add(release, where, page, params, public, group=group, batch=batch, spent=spent)
        if group is not None:  # spent on the private corpus: its public output is kept with the charge
            from dpsu_core.outputs.export import report_json

            self.ledger.keep(self.private_key, release, report_json(release, spent, rec.title()))
        return rec

    @property
    def release_record(self) -> ReleaseRecord | None:
        """The release shown by default on the corpus in use: the last made on the Release page, else the last."""
        return self.history.default_on(self.corpus_ref())  # this corpus's, never one made on another file

    @property
    def release(self) -> Release | None:
        rec = self.release_record
        return None if rec is None else rec.release

    @property
    def releases(self) -> dict[str, Release]:
        """The newest release of each mechanism on the corpus in use."""
        return {m: r.release for m, r in self.history.latest_by_mechanism(self.corpus_id).items()}

    def mechanism_values(self) -> dict[str, object]:
        """Every mechanism parameter the app has set: the sidebar's Δ0 and α, the Release page's choices and
        GW-KT's public corpus. ``Mechanism.params_for`` takes from it what one mechanism uses."""
        return {
            **self.param_values,
            "max_items": self.budget.max_items,
            "alpha": self.budget.alpha,
            "public_source": self.public_corpus,
        }

    def export_files(self, rec: ReleaseRecord) -> list[ExportFile]:
        """The release's downloads, built once per release and ledger state (``dpsu_core.outputs.export.export_files``):
        the report names the release and what the session had spent on its corpus at that release (``rec.spent``)."""
        n = len(self.ledger.entries)
        if self.export_cache is None or self.export_cache[0] != (rec.number, n):
            self.export_cache = ((rec.number, n), export_files(rec.release, rec.spent, rec.title(), rec.number))
        return self.export_cache[1]

    def tokenizer_files(self, rec: ReleaseRecord, spec: Any) -> tuple[bytes, bytes, dict[str, Any]]:
        """(tokenizer.json, the Markdown report recording how it was built, the build record) of a release and
        a ``tokenizer_export.TokenizerSpec``, built once per release, spec and ledger state."""
        from dpsu_core.outputs.export import report_markdown
        from dpsu_core.outputs.tokenizer_export import tokenizer_json

        key = (rec.number, spec)  # the report's account is the one at this release (``rec.spent``)
        if self.tokenizer_cache is None or self.tokenizer_cache[0] != key:
            body, built = tokenizer_json(rec.release, spec)
            report = report_markdown(rec.release, rec.spent, rec.title(), built).encode("utf-8")
            self.tokenizer_cache = (key, (body, report, built))
        return self.tokenizer_cache[1]


def app_state() -> AppState:
    """This session's state (created on first use)."""
    ss = st.session_state
    if STATE_KEY not in ss:
        from pages._auth import current_identity, ledger_store

        # the durable ledger every session charges, in the name of who is signed in (the store is shared and
        # thread-safe; the session's own state is not)
        ledger = DurableLedger(actor=current_identity().actor, tool="app", store=ledger_store())
        ss[STATE_KEY] = AppState(ledger=ledger)
    return ss[STATE_KEY]


def install_corpus(
    corpus: Corpus,
    name: str,
    options: LoadOptions,
    *,
    is_demo: bool,
    canaries: list[str],
    message: str | None = None,
    dataset_key: str | None = None,
    input_name: str | None = None,
    fingerprint: Content | None = None,
    account: CorpusAccount | None = None,
) -> None:
    """``AppState.set_corpus`` plus the widgets that show the corpus (``account``: the durable store's account of
    an uploaded private corpus, attached under its key). The canary text area is reset too,
    else its old text would be parsed back into the canaries on the next run. With a ``message`` (a load
    from the Corpus page) the script reruns at once, so the sidebar, drawn before the page, shows the new
    corpus and its δ guidance; the message is shown once after that rerun."""
    state = app_state()
    state.set_corpus(
        corpus,
        name,
        options,
        is_demo=is_demo,
        canaries=canaries,
        dataset_key=dataset_key,
        input_name=input_name,
        fingerprint=fingerprint,
    )
    if account is not None:
        state.ledger.attach(state.dataset_key, account)
        state.ledger_note = (account.note, account.warning)
    st.session_state[CANARY_TEXT_KEY] = "\n".join(canaries)
    if message is not None:
        state.flash = message
        st.rerun()


def widget_value(key: str, default: Any = None) -> Any:
    """A widget's value under its ``key`` (``default`` before it was first drawn): for a page that needs a
    choice before drawing the widget that makes it (the Corpus page previews with the chosen columns)."""
    return st.session_state.get(key, default)


def set_widget(key: str, value: Any) -> None:
    """Set a widget's value from a callback (e.g. the Corpus page's "Flip header" button)."""
    st.session_state[key] = value


def forget_widgets(keys: tuple[str, ...]) -> None:
    """Drop these widgets' values, so they are drawn with their defaults again (a new upload's columns)."""
    for k in keys:
        st.session_state.pop(k, None)


def ensure_canary_text() -> None:
    """Rebuild the canary text area's text from the list when its widget state was dropped (on other pages)."""
    ss = st.session_state
    if CANARY_TEXT_KEY not in ss:
        ss[CANARY_TEXT_KEY] = "\n".join(app_state().canaries)


def sync_session_budget_inputs() -> None:
    """Before the sidebar draws the session budget's inputs: on the first run, or after a new budget was confirmed
    (in the sidebar or by a spend gate's button), they show the budget in force."""
    state = app_state()
    if state.budget_changed or SESSION_BUDGET_KEYS[0] not in st.session_state:
        sb = state.session_budget
        st.session_state[SESSION_BUDGET_KEYS[0]], st.session_state[SESSION_BUDGET_KEYS[1]] = sb.epsilon, sb.delta
        state.budget_changed = False
