"""Streamlit glue shared by the pages: session state, the sidebar, error boxes. Layout only.

Session state keys (all per browser session; nothing is written to disk):
  corpus, corpus_name, corpus_options, corpus_id   the loaded Corpus and how it was made
  canaries, canary_text                             strings to look for in releases (parsed / the text area)
  flash                                             a message to show once, after the rerun that follows a load
  export_cache                                      (release, export files): downloads built once per release
  release, releases                                 the last Release, and the last one per mechanism
  param_values                                      mechanism parameters set on the Release page
  compare                                           the last comparison table
"""

from __future__ import annotations

import runpy
import threading
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from dpsu_core import app_logic as al
from dpsu_core.errors import DpsuError

DEMO_NAME = "demo corpus (synthetic)"
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
        st.error(al.escape_markdown(prefix + str(exc)), icon=ICONS["error"])
    else:
        st.error(
            al.escape_markdown(
                f"{prefix}unexpected error ({type(exc).__name__}). "
                "Check the inputs and try again; if it persists, report it."
            ),
            icon=ICONS["error"],
        )


# ---- the corpus -----------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=4)
def _demo_corpus(options: al.LoadOptions):
    # The demo corpus is public, synthetic data bundled with the app: sharing it between sessions is fine.
    return al.load_demo(options)


def set_corpus(corpus, name: str, options: al.LoadOptions, canaries: list[str], *, message: str | None = None) -> None:
    """Install a newly loaded corpus; results of the previous one no longer apply.

    The canaries are the new corpus's own (the demo's list, or none for an upload): the keyed text area is
    reset too, else its old text would be parsed back into ``canaries`` on the next run. With a ``message``
    (a load from the Corpus page) the script reruns at once, so that the sidebar, drawn before the page,
    shows the new corpus and its δ guidance; the message is shown once after that rerun."""
    ss = st.session_state
    ss["corpus"] = corpus
    ss["corpus_name"] = name
    ss["corpus_options"] = options
    ss["corpus_id"] = ss.get("corpus_id", 0) + 1
    ss["canaries"] = list(canaries)
    ss["canary_text"] = "\n".join(canaries)
    for k in ("release", "releases", "compare", "export_cache"):
        ss.pop(k, None)
    if message is not None:
        ss["flash"] = message
        st.rerun()


def show_flash() -> None:
    """The message left by ``set_corpus`` before its rerun, once."""
    msg = st.session_state.pop("flash", None)
    if msg:
        st.success(msg, icon=ICONS["ok"])


def load_demo_into_session(options: al.LoadOptions = al.LoadOptions(), message: str | None = None) -> None:
    with st.spinner("Loading the demo corpus…"):
        corpus = _demo_corpus(options)
    set_corpus(corpus, DEMO_NAME, options, al.demo_canaries(), message=message)


def get_corpus():
    """The session's corpus; the demo corpus on first use so every page works at once."""
    if "corpus" not in st.session_state:
        try:
            load_demo_into_session()
        except Exception as exc:  # the bundled file should always load; say so if it does not
            show_error(exc, "the demo corpus could not be loaded")
            return None
    return st.session_state["corpus"]


# ---- budget and parameters --------------------------------------------------------------------
def budget() -> dict:
    ss = st.session_state
    return {
        "epsilon": float(ss.get("epsilon", al.DEFAULT_EPSILON)),
        "delta": float(ss.get("delta", al.DEFAULT_DELTA)),
        "max_items": int(ss.get("max_items", al.PARAMS["max_items"].default)),
        "alpha": float(ss.get("alpha", al.PARAMS["alpha"].default)),
    }


def teaching() -> bool:
    return bool(st.session_state.get("teaching", False))


def param_values() -> dict:
    """Every mechanism parameter the app has set: sidebar Δ0 and α plus the Release page's choices."""
    b = budget()
    vals = dict(st.session_state.get("param_values", {}))
    vals["max_items"] = b["max_items"]
    vals["alpha"] = b["alpha"]
    vals["public_source"] = st.session_state.get("public_corpus")  # GW-KT only; None = wordfreq
    return vals


def param_widget(spec, default, key: str):
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


# ---- sidebar --------------------------------------------------------------------------------
def sidebar() -> None:
    """The same sidebar on every page: privacy budget, δ guidance, teaching switch, corpus in use."""
    corpus = st.session_state.get("corpus")
    with st.sidebar:
        st.subheader("Privacy budget")
        st.number_input(
            "ε (epsilon)",
            min_value=0.01,
            max_value=100.0,
            value=al.DEFAULT_EPSILON,
            step=0.5,
            key="epsilon",
            help="Privacy loss bound: smaller ε is more private and releases fewer items.",
        )
        st.number_input(
            "δ (delta)",
            min_value=1e-15,
            max_value=0.5,
            value=al.DEFAULT_DELTA,
            step=1e-7,
            format="%.2e",
            key="delta",
            help="Probability that the ε guarantee fails; keep it well below 1/(number of users).",
        )
        spec_m, spec_a = al.PARAMS["max_items"], al.PARAMS["alpha"]
        st.number_input(spec_m.label, min_value=1, value=int(spec_m.default), step=1, key="max_items", help=spec_m.help)
        st.number_input(
            spec_a.label,
            min_value=0.0,
            max_value=20.0,
            value=float(spec_a.default),
            step=0.5,
            key="alpha",
            help=spec_a.help,
        )
        b = budget()
        if corpus is not None:
            g = al.delta_guidance(b["delta"], corpus.n_users)
            {"ok": st.caption, "warning": st.warning, "error": st.error}[g.level](g.message)
        st.caption(al.budget_summary(**b))
        st.divider()
        st.toggle(
            "Teaching mode (fixed seed)",
            key="teaching",
            help="Fixes the random seed so a class sees the same results. Not for real releases.",
        )
        if corpus is not None:
            st.caption("Corpus in use:")
            st.text(f"{st.session_state.get('corpus_name', '')}\n{corpus.n_users:,} users")


def teaching_banner() -> None:
    if teaching():
        st.warning(al.teaching_note(), icon=ICONS["teaching"])


def current_release():
    """The last release, if it was made on the corpus now loaded."""
    ss = st.session_state
    rel = ss.get("release")
    if rel is None or rel[0] != ss.get("corpus_id"):
        return None
    return rel[1]


def store_release(name: str, release) -> None:
    ss = st.session_state
    ss["release"] = (ss.get("corpus_id"), release)
    rels = dict(ss.get("releases", {}))
    rels[name] = (ss.get("corpus_id"), release)
    ss["releases"] = rels


def releases_by_mechanism() -> dict:
    ss = st.session_state
    return {n: r for n, (cid, r) in ss.get("releases", {}).items() if cid == ss.get("corpus_id")}


def progress_callback(bar):
    def fn(fraction: float, message: str = "") -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=str(message) if message else None)

    return fn


def need_release() -> None:
    st.info("No release yet: run one on the **Release** page first.")
    st.page_link(Path(__file__).resolve().parent / "2_release.py", label="Go to Release", icon=ICONS["release"])


def export_files(release) -> list:
    """The release's downloads, built once per release and kept in the session (see ``al.export_files``)."""
    ss = st.session_state
    cached = ss.get("export_cache")
    if cached is None or cached[0] is not release:
        ss["export_cache"] = (release, al.export_files(release))
    return ss["export_cache"][1]
