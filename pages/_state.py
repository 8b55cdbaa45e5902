"""The app's session state: one typed object per browser session, and every invalidation in one place.

Pages and tests read and change it through ``app_state()``; nothing else indexes ``st.session_state``
except for the few widget keys this module resets (see ``install_corpus``). Nothing is written to disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from dpsu_core.corpus import Corpus, LoadOptions
from dpsu_core.corpus.readers import RawFile
from dpsu_core.export import ExportFile, export_files
from dpsu_core.mechanisms import Release
from dpsu_core.params import PARAMS
from pages._text import DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_MECHANISM

STATE_KEY = "dpsu_state"  # the one session-state entry of the app (AppTests read it too)
CANARY_TEXT_KEY = "canary_text"  # the Corpus page's canary text area: reset when a corpus is installed


@dataclass(frozen=True)
class Budget:
    """The sidebar's privacy budget (ε, δ) and the two parameters most mechanisms share (Δ0, α)."""

    epsilon: float = DEFAULT_EPSILON
    delta: float = DEFAULT_DELTA
    max_items: int = PARAMS["max_items"].default
    alpha: float = PARAMS["alpha"].default


@dataclass
class UploadCache:
    """The pending upload unpacked once (``read_upload``): reruns, previews and the load reuse it, so a compressed
    upload is never unpacked twice; its content hash (the preview cache's key) is computed once too."""

    source: bytes  # the uploaded bytes (``AppState.pending_upload``)
    name: str
    raw: RawFile
    digest: str

    def is_for(self, name: str, data: bytes) -> bool:
        """Whether this is the upload ``(name, data)`` (the same object, or the widget's same bytes again)."""
        return self.name == name and (self.source is data or self.source == data)


@dataclass
class AppState:
    """Everything a session holds between reruns."""

    # the loaded corpus and how it was made
    corpus: Corpus | None = None
    corpus_name: str = ""
    corpus_options: LoadOptions = field(default_factory=LoadOptions)
    is_demo: bool = True
    corpus_id: int = 0  # counts corpus loads
    canaries: list[str] = field(default_factory=list)  # strings to look for in releases
    flash: str | None = None  # a message to show once, after the rerun that follows a load
    # an uploaded file not loaded yet: (name, bytes); kept across pages (the uploader widget is not)
    pending_upload: tuple[str, bytes] | None = None
    # the sidebar and the Release page's choices
    budget: Budget = field(default_factory=Budget)
    teaching: bool = False
    mechanism: str = DEFAULT_MECHANISM
    param_values: dict[str, Any] = field(default_factory=dict)  # mechanism parameters beyond the sidebar's
    public_corpus: Corpus | None = None  # GW-KT's public frequencies (None: wordfreq)
    public_corpus_key: tuple[str, str] | None = None  # (file id, name) of the upload it was read from
    # results on the loaded corpus: cleared by ``set_corpus``
    releases: dict[str, Release] = field(default_factory=dict)  # the last release per mechanism
    last_mechanism: str | None = None  # the mechanism of the last release
    comparison: pd.DataFrame | None = None  # the last table of compare_runs
    export_cache: tuple[Release, list[ExportFile]] | None = None
    upload: UploadCache | None = None  # the pending upload, unpacked once (``read_upload``)
    pending_load: LoadOptions | None = None  # a load above the memory budget, waiting for "Load anyway"

    def set_corpus(self, corpus: Corpus, name: str, options: LoadOptions, *, is_demo: bool, canaries: list[str]):
        """Install a newly loaded corpus with its own canaries; results of the previous one no longer apply."""
        self.corpus, self.corpus_name, self.corpus_options, self.is_demo = corpus, name, options, is_demo
        self.corpus_id += 1
        self.canaries = list(canaries)
        self.releases, self.last_mechanism, self.comparison, self.export_cache = {}, None, None, None

    @property
    def release(self) -> Release | None:
        """The last release (on the corpus now loaded: ``set_corpus`` clears them)."""
        return self.releases.get(self.last_mechanism) if self.last_mechanism is not None else None

    def store_release(self, name: str, release: Release) -> None:
        self.releases[name] = release
        self.last_mechanism = name

    def mechanism_values(self) -> dict[str, Any]:
        """Every mechanism parameter the app has set: the sidebar's Δ0 and α, the Release page's choices and
        GW-KT's public corpus. ``Mechanism.params_for`` takes from it what one mechanism uses."""
        return {
            **self.param_values,
            "max_items": self.budget.max_items,
            "alpha": self.budget.alpha,
            "public_source": self.public_corpus,
        }

    def export_files(self, release: Release) -> list[ExportFile]:
        """The release's downloads, built once per release (``dpsu_core.export.export_files``)."""
        if self.export_cache is None or self.export_cache[0] is not release:
            self.export_cache = (release, export_files(release))
        return self.export_cache[1]


def app_state() -> AppState:
    """This session's state (created on first use)."""
    ss = st.session_state
    if STATE_KEY not in ss:
        ss[STATE_KEY] = AppState()
    return ss[STATE_KEY]


def install_corpus(
    corpus: Corpus, name: str, options: LoadOptions, *, is_demo: bool, canaries: list[str], message: str | None = None
) -> None:
    """``AppState.set_corpus`` plus the widgets that show the corpus. The canary text area is reset too,
    else its old text would be parsed back into the canaries on the next run. With a ``message`` (a load
    from the Corpus page) the script reruns at once, so the sidebar, drawn before the page, shows the new
    corpus and its δ guidance; the message is shown once after that rerun."""
    state = app_state()
    state.set_corpus(corpus, name, options, is_demo=is_demo, canaries=canaries)
    st.session_state[CANARY_TEXT_KEY] = "\n".join(canaries)
    if message is not None:
        state.flash = message
        st.rerun()


def ensure_canary_text() -> None:
    """Rebuild the canary text area's text from the list when its widget state was dropped (on other pages)."""
    ss = st.session_state
    if CANARY_TEXT_KEY not in ss:
        ss[CANARY_TEXT_KEY] = "\n".join(app_state().canaries)
