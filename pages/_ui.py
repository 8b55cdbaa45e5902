"""Streamlit glue shared by the pages: the sidebar, the corpus in use, parameter widgets, error boxes.
Layout only; the session's state is ``pages._state.AppState``, releases run through ``pages._run``."""

from __future__ import annotations

import gc
import hashlib
import runpy
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st

from dpsu_core.corpus import Corpus, LoadOptions, load_upload, read_upload
from dpsu_core.corpus.limits import budget_warning, session_budget_bytes
from dpsu_core.corpus.readers import RawFile
from dpsu_core.demo import DEMO_NAME, load_canaries, load_demo
from dpsu_core.errors import DpsuError
from dpsu_core.params import PARAMS, ParamSpec
from dpsu_core.privacy import delta_guidance
from dpsu_core.wording import speak
from pages._format import budget_summary, escape_markdown, parse_canaries
from pages._state import CANARY_TEXT_KEY, Budget, UploadCache, app_state, ensure_canary_text, install_corpus
from pages._text import APP_OPTIONS, DEFAULT_DELTA, DEFAULT_EPSILON, TEACHING_NOTE

# Material Symbols (rendered from Streamlit's bundled icon font): emoji need an emoji font, often missing.
ICONS = {
    "app": ":material/lock:",
    "corpus": ":material/description:",
    "release": ":material/lock:",
    "thresholds": ":material/show_chart:",
    "histogram": ":material/bar_chart:",
    "coverage": ":material/track_changes:",
    "compare": ":material/compare_arrows:",
    "export": ":material/download:",
    "error": ":material/block:",
    "warning": ":material/warning:",
    "teaching": ":material/school:",
    "guarantee": ":material/verified_user:",
    "ok": ":material/check_circle:",
}
APP_PATH = Path(__file__).resolve().parent.parent / "app.py"
_local = threading.local()


@contextmanager
def inside_app():
    """app.py runs the selected page inside this block."""
    _local.in_app = True
    try:
        yield
    finally:
        _local.in_app = False


def require_app() -> None:
    """Every page calls this first. Because the page files live in a folder named ``pages/``, Streamlit's
    legacy multipage shim runs a page file directly when a fresh server's first request is a deep link
    (e.g. /release), skipping app.py's sidebar and st.navigation. Then run app.py (which installs
    st.navigation for good and renders this page inside its frame) and stop the direct run."""
    if getattr(_local, "in_app", False):
        return
    runpy.run_path(str(APP_PATH), run_name="__main__")
    st.stop()


# ---- errors ---------------------------------------------------------------------------------
def show_error(exc: BaseException, what: str = "") -> None:
    """A DpsuError's message in an error box; anything else as a short box, never a traceback."""
    prefix = f"{what}: " if what else ""
    if isinstance(exc, DpsuError):
        st.error(escape_markdown(prefix + speak(str(exc), APP_OPTIONS)), icon=ICONS["error"])
    else:
        st.error(
            escape_markdown(
                f"{prefix}unexpected error ({type(exc).__name__}). "
                "Check the inputs and try again; if it persists, report it."
            ),
            icon=ICONS["error"],
        )


# ---- the corpus -----------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=4)
def _demo_corpus(options: LoadOptions) -> Corpus:
    # The demo corpus is public, synthetic data bundled with the app: sharing it between sessions is fine.
    return load_demo(options)


def load_demo_into_session(options: LoadOptions = LoadOptions(), message: str | None = None) -> None:
    with st.spinner("Loading the demo corpus…"):
        corpus = _demo_corpus(options)
    install_corpus(corpus, DEMO_NAME, options, is_demo=True, canaries=load_canaries(), message=message)


# ---- uploads: read once, loaded within the session's memory budget ----------------------------------------
def upload_once(name: str, data: bytes) -> UploadCache:
    """The pending upload unpacked once (``read_upload``) and hashed once, kept in the session: reruns reuse it."""
    state = app_state()
    if state.upload is None or not state.upload.is_for(name, data):
        state.upload = None  # drop the previous upload's bytes before reading the new one
        raw = read_upload(data, name)
        state.upload = UploadCache(data, name, raw, hashlib.blake2b(data, digest_size=16).hexdigest())
    return state.upload


def memory_warning(raw: RawFile, max_n: int) -> str | None:
    """The warning shown before loading an upload that would likely pass the session's memory budget."""
    try:
        budget = session_budget_bytes()
    except DpsuError as exc:  # a bad DPSU_SESSION_MEMORY_MB: say so rather than load without a budget
        return f"{exc}. Without a valid budget every load asks first."
    return budget_warning(len(raw.data), max_n, budget)


def free_failed_load(exc: BaseException) -> None:
    """After a failed load: drop the frames the error holds (they reference the tables being built) and
    collect, so the memory a failed load allocated goes back before the next attempt."""
    traceback.clear_frames(exc.__traceback__)
    exc.__traceback__ = None
    gc.collect()


def load_upload_into_session(options: LoadOptions) -> None:
    """Tokenize the pending upload and install it (the script then reruns); on failure say why and keep the
    previous corpus."""
    state = app_state()
    assert state.upload is not None
    name = state.upload.name
    try:
        with st.status("Reading and tokenizing the file…", expanded=False) as status:
            corpus = load_upload(state.upload.raw, name, options)
            status.update(label="Corpus loaded", state="complete")
    except Exception as exc:  # bad upload: the previous corpus stays in place
        show_error(exc, "the corpus could not be loaded (the previous corpus stays in use)")
        free_failed_load(exc)
        return
    state.pending_upload = None  # the uploader may still hold the file: its unpacked bytes stay in state.upload
    # An upload starts without canaries (the demo's planted ones mean nothing here): type your own below.
    install_corpus(corpus, name, options, is_demo=False, canaries=[], message="Corpus loaded.")


def show_flash() -> None:
    """The message left by a corpus load before its rerun, once."""
    state = app_state()
    msg, state.flash = state.flash, None
    if msg:
        st.success(msg, icon=ICONS["ok"])


def get_corpus() -> Corpus | None:
    """The session's corpus; the demo corpus on first use so every page works at once."""
    state = app_state()
    if state.corpus is None:
        try:
            load_demo_into_session()
        except Exception as exc:  # the bundled file should always load; say so if it does not
            show_error(exc, "the demo corpus could not be loaded")
            return None
    return state.corpus


def canary_area() -> None:
    """The canaries text area (one per line); its text becomes the session's canary list."""
    ensure_canary_text()
    text = st.text_area("Canaries (one per line)", height=120, key=CANARY_TEXT_KEY)
    app_state().canaries = parse_canaries(text)


# ---- parameters --------------------------------------------------------------------------------
def param_widget(spec: ParamSpec, default: Any, key: str) -> Any:
    """One widget generated from a ParamSpec (label, help, range and default all come from the spec)."""
    if spec.kind == "choice":
        idx = spec.choices.index(default) if default in spec.choices else 0
        return st.selectbox(spec.label, spec.choices, index=idx, help=spec.help, key=key)
    if spec.kind == "int":
        lo = int(spec.minimum) if spec.minimum is not None else None
        hi = int(spec.maximum) if spec.maximum is not None else None
        return int(
            st.number_input(spec.label, min_value=lo, max_value=hi, value=int(default), step=1, help=spec.help, key=key)
        )
    return float(
        st.number_input(
            spec.label,
            min_value=spec.minimum,
            max_value=spec.maximum,
            value=float(default),
            help=spec.help,
            key=key,
            format="%.6g",
        )
    )


def param_widgets(specs: list[ParamSpec], corpus: Corpus | None) -> None:
    """Widgets for these parameters, in up to three columns; their values go to the session's parameters.
    Defaults: the value set before, else the spec's (n-gram lengths follow the loaded corpus)."""
    if not specs:
        return
    state = app_state()
    values = dict(state.param_values)
    cols = st.columns(min(3, len(specs)))
    for i, spec in enumerate(specs):
        default = values.get(spec.name, spec.default)
        if spec.name not in values and spec.name == "max_n" and corpus is not None:
            default = max(1, corpus.max_n)
        with cols[i % len(cols)]:
            values[spec.name] = param_widget(spec, default, key=f"param_{spec.name}")
    state.param_values = values


# ---- sidebar --------------------------------------------------------------------------------
def sidebar() -> None:
    """The same sidebar on every page: privacy budget, δ guidance, teaching switch, corpus in use."""
    state = app_state()
    corpus = state.corpus
    with st.sidebar:
        st.subheader("Privacy budget")
        epsilon = st.number_input(
            "ε (epsilon)",
            min_value=0.01,
            max_value=100.0,
            value=DEFAULT_EPSILON,
            step=0.5,
            key="epsilon",
            help="Privacy loss bound: smaller ε is more private and releases fewer items.",
        )
        delta = st.number_input(
            "δ (delta)",
            min_value=1e-15,
            max_value=0.5,
            value=DEFAULT_DELTA,
            step=1e-7,
            format="%.2e",
            key="delta",
            help="Probability that the ε guarantee fails; keep it well below 1/(number of users).",
        )
        spec_m, spec_a = PARAMS["max_items"], PARAMS["alpha"]
        max_items = st.number_input(
            spec_m.label,
            min_value=int(spec_m.minimum or 1),
            max_value=int(spec_m.maximum or 1),
            value=int(spec_m.default),
            step=1,
            key="max_items",
            help=f"{spec_m.help} (range {spec_m.range_text()})",
        )
        alpha = st.number_input(
            spec_a.label,
            min_value=0.0,
            max_value=20.0,
            value=float(spec_a.default),
            step=0.5,
            key="alpha",
            help=spec_a.help,
        )
        b = state.budget = Budget(float(epsilon), float(delta), int(max_items), float(alpha))
        if corpus is not None:
            g = delta_guidance(b.delta, corpus.n_users)
            {"ok": st.caption, "warning": st.warning, "error": st.error}[g.level](g.message)
        st.caption(budget_summary(b.epsilon, b.delta, b.max_items, b.alpha))
        st.divider()
        state.teaching = st.toggle(
            "Teaching mode (fixed seed)",
            key="teaching",
            help="Fixes the random seed so a class sees the same results. Not for real releases.",
        )
        if corpus is not None:
            st.caption("Corpus in use:")
            st.text(f"{state.corpus_name}\n{corpus.n_users:,} users")


def teaching_banner() -> None:
    if app_state().teaching:
        st.warning(TEACHING_NOTE, icon=ICONS["teaching"])


def need_release() -> None:
    st.info("No release yet: run one on the **Release** page first.")
    st.page_link(Path(__file__).resolve().parent / "2_release.py", label="Go to Release", icon=ICONS["release"])
