"""Streamlit glue shared by the pages: the sidebar, the corpus in use, parameter widgets, error boxes.
Layout only; the session's state is ``pages._state.AppState``, releases run through ``pages._run``."""

from __future__ import annotations

import contextlib
import gc
import runpy
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dpsu_core.accounting.spend import SpendPlan, spent_figure
from dpsu_core.corpus import Corpus, LoadOptions, read_upload
from dpsu_core.corpus.demo import DEMO_CSV, DEMO_NAME, load_canaries, load_demo
from dpsu_core.corpus.limits import budget_warning, session_budget_bytes
from dpsu_core.corpus.load import content_digest
from dpsu_core.corpus.preview import Survey, survey
from dpsu_core.corpus.readers import RawFile
from dpsu_core.errors import DpsuError
from dpsu_core.params import OPTIONS, PARAMS, ParamSpec
from dpsu_core.privacy import delta_guidance
from dpsu_core.wording import speak
from pages import _account, _workspace
from pages._format import budget_summary, escape_markdown, header_labels, parse_canaries
from pages._icons import ICONS
from pages._state import (
    CANARY_TEXT_KEY,
    SESSION_BUDGET_KEYS,
    Budget,
    UploadCache,
    UploadRole,
    app_state,
    ensure_canary_text,
    sync_session_budget_inputs,
)
from pages._text import APP_OPTIONS, DEFAULT_DELTA, DEFAULT_EPSILON, TEACHING_NOTE

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


def warm_kernels() -> None:
    """Prepare the release kernels in the background at the app's start (``dpsu_core.interfaces.warm``), when a fresh install
    has not compiled them yet: the first release finds them ready."""
    from dpsu_core.interfaces.warm import warm_in_background

    warm_in_background()


# ---- the corpus -----------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=4)
def _demo_corpus(options: LoadOptions) -> Corpus:
    # The demo corpus is public, synthetic data bundled with the app: sharing it between sessions is fine.
    return load_demo(options)


def demo_corpus(options: LoadOptions = LoadOptions()) -> Corpus:
    with st.spinner("Loading the demo corpus…"):
        return _demo_corpus(options)


def load_demo_into_session(options: LoadOptions = LoadOptions(), message: str | None = None) -> None:
    _workspace.install_corpus(
        demo_corpus(options),
        DEMO_NAME,
        options,
        is_demo=True,
        canaries=load_canaries(),
        message=message,
        dataset_key="demo",
        input_name=str(DEMO_CSV),
    )


# ---- uploads: read once, loaded within the session's memory budget ----------------------------------------
def upload_once(name: str, data: bytes, role: UploadRole = "private") -> UploadCache:
    """The pending upload of ``role`` unpacked once (``read_upload``) and hashed once (its content, after
    unpacking), kept in the session: reruns reuse it."""
    slot = app_state().uploads[role]
    if slot.cache is None or not slot.cache.is_for(name, data):
        slot.cache = None  # drop the previous upload's bytes before reading the new one
        raw = read_upload(data, name)
        slot.cache = UploadCache(data, name, raw, content_digest(raw))
    return slot.cache


def upload_survey(upload: UploadCache, fmt: str, has_header: bool | None) -> Survey:
    """The upload read once per (format, header) choice for its preview and column facts (``corpus.preview``)."""
    key = (fmt, has_header)
    if upload.survey is None or upload.survey[0] != key:
        upload.survey = None  # the previous reading goes first
        upload.survey = (key, survey(upload.raw, format=fmt, has_header=has_header))
    return upload.survey[1]


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


def show_flash() -> None:
    """The message left by a corpus load before its rerun, once."""
    state = app_state()
    msg, state.flash = state.flash, None
    if msg:
        st.success(msg, icon=ICONS["ok"])
    note, state.ledger_note = state.ledger_note, None
    if note is not None:
        said, warning = note
        st.info(f"Privacy ledger: {escape_markdown(said)}.", icon=ICONS["ledger"])
        if warning:
            st.warning(f"{escape_markdown(warning)} (raw data, NOT private).", icon=ICONS["warning"])


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
def bounds(name: str) -> dict[str, Any]:
    """``min_value`` and ``max_value`` of the widget of ``params.OPTIONS[name]`` (else ``params.PARAMS[name]``): the
    app's range, declared there."""
    spec = OPTIONS[name] if name in OPTIONS else PARAMS[name]
    lo, hi = spec.widget_range()
    if spec.kind == "int":
        return {"min_value": int(lo), "max_value": int(hi)}
    return {"min_value": float(lo), "max_value": float(hi)}


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
    """The same sidebar on every page: the next release's parameters, δ guidance, the session budget, teaching
    switch, corpus in use, what the session has spent."""
    state = app_state()
    corpus = state.corpus
    with st.sidebar:
        st.subheader("Next release")
        spec_e, spec_d = OPTIONS["epsilon"], OPTIONS["delta"]
        epsilon = st.number_input(
            spec_e.label,
            **bounds("epsilon"),
            value=DEFAULT_EPSILON,
            step=0.5,
            key="epsilon",
            help="The privacy loss bound of the next release (each release spends its own ε): smaller ε is more "
            "private and releases fewer items. The session's total is capped by the session budget below.",
        )
        delta = st.number_input(
            spec_d.label,
            **bounds("delta"),
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
            min_value=float(spec_a.minimum if spec_a.minimum is not None else 0.0),
            max_value=float(spec_a.maximum if spec_a.maximum is not None else 100.0),
            value=float(spec_a.default),
            step=0.5,
            key="alpha",
            help=f"{spec_a.help} (range {spec_a.range_text()})",
        )
        b = state.budget = Budget(float(epsilon), float(delta), int(max_items), float(alpha))
        if corpus is not None:
            g = delta_guidance(b.delta, corpus.n_users)
            show_guidance(g.level, g.message)
        st.caption(budget_summary(b.epsilon, b.delta, b.max_items, b.alpha))
        st.divider()
        session_budget_inputs()
        st.divider()
        state.teaching = st.toggle(
            "Teaching mode (fixed seed)",
            key="teaching",
            help="Fixes the random seed so a class sees the same results. Not for real releases.",
        )
        if corpus is not None:
            st.caption("Exploration corpus in use (nothing is spent):" if state.exploring else "Corpus in use:")
            st.text(f"{state.corpus_name}\n{corpus.n_users:,} users")
        st.divider()
        ledger_panel()


def session_budget_inputs() -> None:
    """The session budget: the most the session may spend on the private corpus in total (ε, δ), apart from each
    release's own. A new value counts once confirmed (its button); the spend gate blocks what would pass it."""
    state = app_state()
    sync_session_budget_inputs()
    sb = state.session_budget
    st.subheader("Session budget")
    spec_e, spec_d = OPTIONS["total_epsilon"], OPTIONS["total_delta"]
    e = st.number_input(
        spec_e.label,
        **bounds("total_epsilon"),
        step=1.0,
        key=SESSION_BUDGET_KEYS[0],
        help="The cap on the session's total on the private corpus (all its releases composed). A release that "
        "would take the total past it is blocked until you confirm a larger budget.",
    )
    d = st.number_input(
        spec_d.label,
        **bounds("total_delta"),
        step=1e-6,
        format="%.2e",
        key=SESSION_BUDGET_KEYS[1],
        help="The cap on the session's total δ (the releases' δ add up).",
    )
    changed = (float(e), float(d)) != (sb.epsilon, sb.delta)
    if st.button("Confirm session budget", key="session_budget_set", disabled=not changed, width="stretch") and changed:
        _account.set_session_budget(state, float(e), float(d))
        st.rerun()
    st.caption(
        f"In force: ε = {sb.epsilon:g}, δ = {sb.delta:.2g}"
        + (" (the values above are not confirmed yet)" if changed else "")
    )


def show_guidance(level: str, message: str) -> None:
    """δ guidance in the box its level calls for."""
    if level == "error":
        st.error(message)
    elif level == "warning":
        st.warning(message)
    else:
        st.caption(message)


def ledger_panel() -> None:
    """What the session has spent on the private corpus: the headline (the smallest valid bound) and how it was
    obtained, the ledger's scope, and its entries. Drawn into a placeholder that ``redraw_ledger`` refills right
    after a spend, so the sidebar never shows an old total."""
    state = app_state()
    st.subheader("Privacy spent")
    if state.exploring:
        st.info("Exploring: releases on the exploration corpus are not recorded.", icon=ICONS["explore"])
        if st.button("Back to the private corpus", key="back_to_private", width="stretch"):
            _workspace.back_to_private(state)
            st.rerun()
    _local.ledger_slot = st.empty()
    redraw_ledger()
    own_cap()


def own_cap() -> None:
    """An analyst's own cap on the corpus in use (at most the corpus's: it only ever restricts their spends),
    kept in the durable ledger for every session of theirs (``accounting.custodian.set_own_cap``)."""
    from dpsu_core.accounting import custodian
    from pages._auth import current_identity

    state = app_state()
    acc = _account.account(state)
    if acc is None or acc.corpus_id is None or state.exploring:
        return
    who = current_identity()
    eps, delta, owner = acc.cap_for(state.ledger.actor)
    with st.expander("Your own cap on this corpus", icon=ICONS["ledger"]):
        st.caption(
            f"In force for you: ε = {eps:g}, δ = {delta:.2g} ({owner}). Set a smaller one for yourself; only the "
            "data custodian can raise the corpus's."
        )
        low_e, low_d = bounds("cap_epsilon")["min_value"], bounds("cap_delta")["min_value"]
        e = st.number_input(
            "Your cap ε", min_value=low_e, max_value=float(acc.epsilon_cap), value=float(eps), key="own_cap_eps"
        )
        d = st.number_input(
            "Your cap δ",
            min_value=low_d,
            max_value=float(acc.delta_cap),
            value=float(delta),
            format="%.2e",
            key="own_cap_delta",
        )
        if st.button("Set my cap", key="own_cap_set", width="stretch"):
            try:
                custodian.set_own_cap(acc.store, who, acc.corpus_id, float(e), float(d))
            except DpsuError as exc:
                show_error(exc, "your cap was not set")
            else:
                st.rerun()


def redraw_ledger() -> None:
    """(Re)draw the sidebar's totals from the ledger as it is now (called after every spend)."""
    slot = getattr(_local, "ledger_slot", None)
    if slot is None:
        return
    state = app_state()
    t = _account.spent(state)
    with slot.container():
        acc = _account.account(state)
        if acc is None:
            st.caption(
                f"Scope: {escape_markdown(_workspace.private_name(state)) or 'the private corpus'} in this browser session "
                "(the bundled public demo is not kept in the durable ledger)."
            )
        else:
            eps_cap, delta_cap, owner = acc.cap_for(state.ledger.actor)
            st.caption(
                f"Corpus **{escape_markdown(acc.name)}** in the durable ledger: every session, tab and tool that "
                f"releases on these users is counted here. Cap ε = {eps_cap:g}, δ = {delta_cap:.2g} ({owner})."
            )
        st.metric(
            "ε spent (smallest valid bound)",
            spent_figure(t, _workspace.private_work(state).is_demo),
            help=t.detail(),
        )
        st.caption(
            f"{t.releases} release{'s' if t.releases != 1 else ''}; δ = {t.basic_delta:.2g} in total"
            + (f"; {t.detail()}" if t.releases else "")
        )
        sb = state.session_budget
        used = 1.0 if not t.guaranteed else min(1.0, max(t.epsilon / sb.epsilon, t.basic_delta / sb.delta))
        rest = sb.epsilon - t.epsilon
        left = "none (no guarantee)" if not t.guaranteed else f"ε = {rest if rest > 1e-9 * sb.epsilon else 0.0:.3g}"
        if not t.guaranteed and _workspace.private_work(state).is_demo:
            left, used = "all of it (nothing private spent)", 0.0
        st.progress(
            used,
            text=f"Session budget left: {left} of {sb.epsilon:g}, "
            f"δ = {max(sb.delta - t.basic_delta, 0.0):.2g} of {sb.delta:.2g}",
        )
        if acc is not None and not getattr(_local, "running", False):  # a search over totals: not between runs
            left = releases_left_text(state)
            if left:
                st.caption(left)
        if t.releases:
            with st.expander("Ledger", icon=ICONS["ledger"]):
                # a static table wraps its cells to the sidebar's width: mechanism, releases, ε and δ all show
                st.table(
                    ledger_rows(state.ledger.frame(_workspace.private_work(state).dataset_key, compact=True)),
                    hide_index=True,
                )


@contextlib.contextmanager
def running() -> Iterator[None]:
    """While a batch of releases runs, the sidebar's redraws after each spend skip "releases left" (a search over
    the ledger's totals); the redraw after the batch shows it."""
    _local.running = True
    try:
        yield
    finally:
        _local.running = False


def releases_left_text(state: Any) -> str:
    """ "Releases left at these settings: 3" (the next release's mechanism and budget against the corpus's cap,
    every composition counted); "" when the sidebar's settings make no valid release."""
    from dpsu_core.accounting.account import releases_left

    acc = _account.account(state)
    if acc is None:  # the bundled public demo: no cap in the durable store
        return ""
    try:
        job = make_job_for_sidebar(state)
    except Exception:  # invalid settings: the pages say why
        return ""
    key = (acc.corpus_id, len(acc.entries()), job.request_key(0), acc.cap_for(state.ledger.actor))
    cache = state.ledger.left_cache
    if key not in cache:  # the same corpus, spend, settings and cap: the same answer
        cache.clear()
        cache[key] = releases_left(acc, job, state.ledger.actor)
    n = cache[key]
    more = " or more" if n >= 1_000_000 else ""
    return f"Releases left at these settings ({escape_markdown(job.label)}, ε = {job.epsilon:g}): {n:,}{more}"


def make_job_for_sidebar(state: Any) -> Any:
    from dpsu_core.job import ReleaseJob

    b = state.budget
    return ReleaseJob.build(state.mechanism, b.epsilon, b.delta, _workspace.mechanism_values(state))


def ledger_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The sidebar ledger's rows as short text (ε to 3 significant digits, δ in e-notation)."""
    out = frame.copy()
    out["ε"] = [f"{v:.3g}" for v in frame["ε"]]
    # a non-breaking hyphen: a narrow sidebar must not wrap "1e-06" into "1e-" and "06"
    out["δ"] = [f"{v:.0e}".replace("-", "\u2011") if v else "0" for v in frame["δ"]]
    return out


# ---- the spend gate -----------------------------------------------------------------------------------
def spend_key(plan: SpendPlan) -> str:
    return f"spend_yes_{plan.key}"


def spend_gate(plan: SpendPlan) -> bool:
    """State what ``plan`` costs and return whether its action may run: never when it is refused (teaching on
    the private corpus); on the private corpus, never while it would take the session's total past the session
    budget (a button here confirms a new budget covering it, as the sidebar's does); once the totals promise no
    guarantee, only with an explicit yes given for this action at this cost (its checkbox is keyed to both and
    cleared once the action ran)."""
    if not plan.allowed:
        st.error(escape_markdown(plan.refusal or ""), icon=ICONS["error"])
        return False
    if not plan.on_private:
        st.caption(plan.cost_text(escape_markdown))
        return True
    st.info(plan.cost_text(escape_markdown), icon=ICONS["ledger"])
    if plan.over_cap:  # the corpus's cap in the durable store: no button lifts it
        st.error(plan.over_cap_text(escape_markdown), icon=ICONS["error"])
        return False
    if plan.over_budget:
        st.warning(plan.over_budget_text(escape_markdown), icon=ICONS["warning"])
        eps, delta = plan.covering_budget
        if st.button(f"Confirm a new session budget: ε = {eps:g}, δ = {delta:.2g}", key=f"raise_budget_{plan.key}"):
            _account.set_session_budget(app_state(), eps, delta)
            st.rerun()
        return False
    if plan.needs_yes:
        return bool(st.checkbox(plan.question(escape_markdown), value=False, key=spend_key(plan)))
    return True


class Refused(Exception):
    """The durable ledger refused an action's charge (its error box is already shown): nothing runs."""


def charge_or_refuse(plan: SpendPlan, not_kept: str | None = None) -> bool:
    """Charge an action's entries (``pages._account.record_attempt``: on a corpus of the durable store, one transaction
    that checks the cap) before it runs; a refusal (the cap, reached from another tab or tool) is an error box and
    False: nothing may run."""
    state = app_state()
    try:
        _account.record_attempt(state, plan.entries, plan, _account.begin_spend(state, plan, not_kept))
    except DpsuError as exc:
        show_error(exc, "refused by the privacy ledger: nothing was run")
        return False
    redraw_ledger()
    return True


def spent_done(plan: SpendPlan, ok: bool) -> None:
    """After a gated action: the sidebar shows the new total at once. Its yes is used up: the yes is keyed to the
    session's total after the action (``SpendPlan.key``), which the action changed (its entries were recorded
    before it ran), so the next action is asked again under a new key, and Streamlit drops the old one (a widget
    not drawn in a run loses its state). After a success the page is drawn again at once (its results, the new
    prompt, the workflow line); after a failure it stays, so its error box stays readable."""
    redraw_ledger()
    if ok and plan.on_private:
        st.rerun()


STEPS = (
    "Load the private corpus",
    "Explore on a non-private corpus (nothing spent)",
    "Release once on the private corpus",
    "Export",
)


def workflow_steps() -> None:
    """The flow of a release, with the step the session is at."""
    state = app_state()
    at = 1 if state.exploring else (3 if _account.current_release(state) is not None else 0)
    # "1\." so that Markdown does not read the line as a numbered list
    parts = [f"**{i + 1}\\. {s}**" if i == at else f"{i + 1}\\. {s}" for i, s in enumerate(STEPS)]
    st.caption(" → ".join(parts))


def teaching_banner() -> None:
    if app_state().teaching:
        st.warning(TEACHING_NOTE, icon=ICONS["teaching"])


def labelled(frame: pd.DataFrame, names: dict[str, str]) -> dict[str, Any]:
    """A dataframe's column config naming its columns in words (``_format.header_labels``)."""
    return {c: st.column_config.Column(label) for c, label in header_labels(frame, names).items()}


def need_release() -> None:
    st.info("No release yet: run one on the **Release** page first.")
    st.page_link(Path(__file__).resolve().parent / "2_release.py", label="Go to Release", icon=ICONS["release"])


# ---- releases kept in the durable ledger ---------------------------------------------------------------
def kept_downloads(kept: Any, where: Any = None) -> None:
    """Download buttons of a release kept in the durable ledger (its public output: nothing is spent)."""
    from dpsu_core.accounting.account import kept_csv

    box = where if where is not None else st
    c1, c2 = box.columns(2)
    c1.download_button(
        "Released items (CSV), kept in the ledger",
        kept_csv(kept),
        file_name=f"dpsu_ledger_release_{kept.id}.csv",
        mime="text/csv",
        key=f"kept_csv_{kept.id}",
        on_click="ignore",
    )
    c2.download_button(
        "Its release report (JSON)",
        str(kept.report).encode("utf-8"),
        file_name=f"dpsu_ledger_release_{kept.id}_report.json",
        mime="application/json",
        key=f"kept_report_{kept.id}",
        on_click="ignore",
    )


def identical_offer(job: Any) -> bool:
    """Before a release on the private corpus: an identical one (same corpus, mechanism, parameters) kept in the
    durable ledger is offered first, at no cost. Returns whether there is one (the run button then says that it
    spends again)."""
    from dpsu_core.accounting.account import earlier_release

    state = app_state()
    acc = _account.account(state)
    if acc is None or state.exploring:
        return False
    prior = earlier_release(acc, job)
    if prior is None:
        return False
    st.info(
        f"An identical release of **{escape_markdown(acc.name)}** is kept in the privacy ledger (ledger release "
        f"{prior.id}, {escape_markdown(str(prior.created_utc))} UTC). Its "
        "output is public: download it here at no cost. Running the release again spends the budget again.",
        icon=ICONS["ledger"],
    )
    kept_downloads(prior)
    return True
