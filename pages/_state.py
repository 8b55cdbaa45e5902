"""The app's session state, declared: one typed object per browser session (``AppState``), its keys, types and
defaults. What acts on it lives where it acts (``pages._workspace``, ``pages._account``, ``pages._downloads``).

Pages and tests read and change it through ``app_state()``; nothing else indexes ``st.session_state``:
the widget values a page needs before drawing the widget go through ``widget_value`` / ``set_widget`` /
``forget_widgets``. Nothing is written to disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import pandas as pd
import streamlit as st

from dpsu_core.accounting.durable import DurableLedger
from dpsu_core.accounting.history import ReleaseHistory
from dpsu_core.accounting.identity import local_actor
from dpsu_core.analysis.neighbours import NeighbourRuns
from dpsu_core.corpus import Corpus, LoadOptions
from dpsu_core.corpus.fingerprint import Content
from dpsu_core.corpus.overlap import Key, new_key
from dpsu_core.corpus.preview import Survey
from dpsu_core.corpus.readers import RawFile
from dpsu_core.mechanisms.item_counts import DEFAULT_CLIP, DEFAULT_SHARE
from dpsu_core.outputs.export import ExportFile
from dpsu_core.params import PARAMS
from pages._text import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    DEFAULT_MECHANISM,
    DEFAULT_SESSION_DELTA,
    DEFAULT_SESSION_EPSILON,
)

if TYPE_CHECKING:
    from dpsu_core.outputs.tokenizer_export import TokenizerSpec

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

    source: bytes  # the uploaded bytes (``UploadSlot.pending``)
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


@dataclass(slots=True)
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


@dataclass(frozen=True)
class ExportCache:
    """The Export page's downloads of one release (``pages._downloads.release_files``), built at a ledger size."""

    number: int  # the release's number in the history
    ledger_size: int  # the ledger's number of entries when they were built
    files: list[ExportFile]


class TokenizerFiles(NamedTuple):
    """A release's tokenizer download (``pages._downloads.tokenizer_files``)."""

    body: bytes  # tokenizer.json
    report: bytes  # the Markdown report recording how it was built
    built: dict[str, Any]  # the build record


@dataclass(frozen=True)
class TokenizerCache:
    """The tokenizer download built for one release and one ``TokenizerSpec``."""

    number: int  # the release's number in the history
    spec: TokenizerSpec
    files: TokenizerFiles


@dataclass(slots=True)
class AppState(Workspace):
    """Everything a session holds between reruns: the workspace in use (``Workspace``'s fields) and the rest.

    A declaration only: each key the app keeps, its type and its default. The set of keys is closed (slots: no
    attribute outside this list can be set); what acts on them lives where it acts: ``pages._workspace`` (the
    corpus in use, exploration, the mechanism's parameters), ``pages._account`` (the ledger, the spend gate and
    the release history) and ``pages._downloads`` (the Export page's downloads)."""

    flash: str | None = None  # a message to show once, after the rerun that follows a load
    # what the durable ledger said of the corpus just loaded (which corpus it is; a partial overlap): shown once
    ledger_note: tuple[str, str] | None = None
    # the files of the three upload paths (private corpus, exploration file, GW-KT's public corpus)
    uploads: dict[UploadRole, UploadSlot] = field(default_factory=_slots)
    # the sidebar and the Release page's choices
    budget: Budget = field(default_factory=Budget)
    session_budget: SessionBudget = field(default_factory=SessionBudget)
    budget_changed: bool = False  # a new session budget: the sidebar's inputs take it on the next run
    teaching: bool = False
    mechanism: str = DEFAULT_MECHANISM
    counts: CountsOption = field(default_factory=CountsOption)  # the Release page's noisy counts option
    # mechanism parameters beyond the sidebar's
    param_values: dict[str, float | int | str | bool | None] = field(default_factory=dict)
    public: PublicCorpus | None = None  # GW-KT's public corpus (None: wordfreq)
    # every release of the session, on every corpus (pages show the ones on the corpus in use)
    history: ReleaseHistory = field(default_factory=ReleaseHistory)
    export_cache: ExportCache | None = None  # the Export page's downloads of the release last shown
    tokenizer_cache: TokenizerCache | None = None  # its tokenizer download
    # the privacy ledger (the durable store's account of every uploaded corpus; the public demo's in memory), and
    # the exploration corpus (nothing run on it is recorded)
    ledger: DurableLedger = field(default_factory=lambda: DurableLedger(actor=local_actor(), tool="app"))
    exploring: bool = False
    private: Workspace | None = None  # the private corpus and its results while exploring
    ids_issued: int = 0
    overlap_key: Key = field(default_factory=new_key, repr=False)  # this session's content-check key (never shown)


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
