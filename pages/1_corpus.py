"""Page 1: choose the corpus (bundled demo or an upload), preview it, pick the columns, clean, load; raw statistics."""

import pandas as pd
import streamlit as st

from dpsu_core.corpus import TOKENIZERS, LoadOptions
from dpsu_core.corpus.clean import stop_word_languages
from dpsu_core.corpus.demo import DEMO_NAME, load_canaries
from dpsu_core.corpus.segment import KOREAN_MODES
from dpsu_core.corpus.synthetic import SIZE_DISTRIBUTIONS, SimulationSpec, simulated_corpus
from dpsu_core.errors import InputError
from dpsu_core.params import PARAMS
from dpsu_core.reading import CLEANING_FIELDS, READING, TOKENIZING_FIELDS, ReadingOption
from dpsu_core.wording import count_text, speak
from pages import _ui, _workspace
from pages._format import escape_markdown, plain_text
from pages._state import app_state, widget_value
from pages._text import APP_OPTIONS, TEACHING_SEED
from pages._upload import UploadPick, content_note, load_flow, upload_section

_ui.require_app()


def _say(message: str) -> str:
    return speak(message, APP_OPTIONS)


EXPLORE_KINDS = {
    "demo": "Bundled demo corpus",
    "public": "A public file",
    "simulated": "Simulated from public numbers",
}


NONE_CHOICE = "none"  # the stop-word list's "no list"
CHOICES = {  # the choices of the options picked from a list
    "tokenizer": lambda: list(TOKENIZERS),
    "stop_words": lambda: [NONE_CHOICE, *stop_word_languages()],
    "korean": lambda: list(KOREAN_MODES),
}
CHOICE_LABELS = {  # how a choice reads in its list (the value itself where absent)
    "korean": {"morphemes": "morphemes: 학교에 → 학교 + 에", "eojeol": "eojeol: 학교에 kept whole"},
}


def cleaning_options(current: LoadOptions) -> LoadOptions:
    """The cleaning and tokenizing widgets, generated from their declarations (``dpsu_core.reading``), and the
    longest n-gram (``dpsu_core.params``): the options they set, without the file's reading choices."""
    st.markdown("**Preprocessing** (the papers' defaults are on)")
    values: dict[str, object] = {}
    cols = st.columns(4)
    for i, name in enumerate(CLEANING_FIELDS):
        values[name] = _option_widget(cols[i % 4], READING[name], getattr(current, name))
    last = st.columns(len(TOKENIZING_FIELDS) + 1)
    for col, name in zip(last, TOKENIZING_FIELDS):
        # Korean words are cut only by the auto tokenizer: the choice is shown, greyed out, under the others
        off = name == "korean" and values["tokenizer"] != "auto"
        values[name] = _option_widget(col, READING[name], getattr(current, name), disabled=off)
    spec = PARAMS["max_n"]
    max_n = last[-1].number_input(
        "Longest n-gram",
        min_value=int(spec.minimum or 1),
        max_value=int(spec.maximum or 1),  # the bounds the loader checks (dpsu_core.params)
        value=int(current.max_n),
        step=1,
        key="corpus_max_n",
        help="Items are the n-grams of length 1..this inside each post.",
    )
    return LoadOptions(max_n=int(max_n), **values)  # type: ignore[arg-type]


def _option_widget(where, o: ReadingOption, value, disabled: bool = False):
    """One reading option's widget: a switch for an on/off option, a list for a choice, a box for a number."""
    if o.kind != "value":
        return where.toggle(o.label, value=bool(value), key=o.key, help=o.app_help or None)
    if o.type is int:
        return int(
            where.number_input(
                o.label, min_value=o.minimum, max_value=o.maximum, value=int(value), step=1, key=o.key, help=o.app_help
            )
        )
    choices = CHOICES[o.field]()
    shown = value if value is not None else NONE_CHOICE
    labels = CHOICE_LABELS.get(o.field, {})
    picked = where.selectbox(
        o.label,
        choices,
        index=choices.index(shown) if shown in choices else 0,
        key=o.key,
        help=o.app_help,
        format_func=lambda c: labels.get(c, c),
        disabled=disabled,
    )
    return None if picked == NONE_CHOICE else picked


def explore_section() -> None:
    """Switch to an exploration corpus: try mechanisms without spending, then release once on the private one."""
    state = app_state()
    with st.expander(
        "Explore before spending: work on a corpus that is NOT your private data",
        expanded=state.exploring,  # at first; then as the user leaves it: the state is kept under the key,
        icon=_ui.ICONS["explore"],
        key="explore_expander",  # so an upload or another rerun does not fold it
        on_change="rerun",
    ):
        st.caption(
            "Every release on the private corpus spends (ε, δ) and goes into the privacy ledger. On an exploration "
            "corpus nothing is spent: try mechanisms and parameters here (every page works on it), then use "
            "**Release on the private corpus** on the Release page to run the chosen configuration once."
        )
        kind = st.radio(
            "Exploration corpus",
            list(EXPLORE_KINDS),
            format_func=EXPLORE_KINDS.get,
            horizontal=True,
            key="explore_kind",
        )
        public = None
        spec = None
        if kind == "public":
            public = upload_section(
                "explore",
                "A PUBLIC corpus file (never the private one or a sample of it)",
                state.corpus_options.max_n,
            )
        elif kind == "simulated":
            st.caption(
                "Type public numbers (for example from a paper or the platform's published statistics); "
                "the simulation never looks at the private file."
            )
            c = st.columns(5)
            users = c[0].number_input("Users", min_value=10, max_value=500_000, value=2000, step=100, key="sim_users")
            per = c[1].number_input("Words per user", min_value=1, max_value=5000, value=50, step=5, key="sim_words")
            dist = c[2].selectbox(
                "Words per user are",
                SIZE_DISTRIBUTIONS,
                index=SIZE_DISTRIBUTIONS.index("log-uniform"),
                key="sim_dist",
                help="constant: exactly this many; uniform / log-uniform: 1 to this many; geometric: this many on average",
            )
            vocab = c[3].number_input(
                "Vocabulary size", min_value=10, max_value=2_000_000, value=5000, step=500, key="sim_vocab"
            )
            zipf = c[4].number_input(
                "Zipf exponent", min_value=0.0, max_value=5.0, value=1.0, step=0.1, key="sim_zipf", format="%.2f"
            )
            spec = SimulationSpec(int(users), int(per), str(dist), int(vocab), float(zipf))
        load: LoadOptions | None = None  # the public file's options, once its button is pressed
        if st.button("Explore on this corpus", key="explore_start", icon=_ui.ICONS["explore"]):
            try:
                if kind == "demo":
                    _workspace.explore(state, _ui.demo_corpus(), f"exploration: {DEMO_NAME}", canaries=load_canaries())
                    st.rerun()
                elif kind == "public":
                    if public is None:
                        raise InputError(
                            "upload a public corpus file and choose its columns first (or pick the demo or a "
                            "simulated corpus)"
                        )
                    load = public.options(LoadOptions(max_n=state.corpus_options.max_n))
                else:
                    assert spec is not None
                    with st.spinner("Simulating…"):
                        sim = simulated_corpus(spec, seed=TEACHING_SEED if state.teaching else None)
                    _workspace.explore(state, sim, spec.describe())
                    st.rerun()
            except Exception as exc:
                _ui.show_error(exc, "the exploration corpus could not be made (the corpus in use stays)")
        if kind == "public":
            load_flow("explore", public, load)  # loads and reruns; or asks "Load it anyway?" and waits
        if state.exploring:
            st.info(
                f"Exploring on **{escape_markdown(state.corpus_name)}**. The private corpus "
                f"({escape_markdown(_workspace.private_name(state))}) and its results are kept aside.",
                icon=_ui.ICONS["explore"],
            )
            content_note(state.content_note)


state = app_state()
st.title("1 · Corpus")
st.caption(
    "Pick the bundled demo corpus or upload your own. The file stays in this browser session: "
    "it is tokenized in memory and never written to disk."
)

current = state.corpus_options
SOURCES = {"demo": "Demo corpus (synthetic, bundled)", "upload": "Upload a file"}
source = st.radio(
    "Corpus source",
    list(SOURCES),
    format_func=SOURCES.get,
    index=0 if state.is_demo and state.uploads["private"].pending is None else 1,
    horizontal=True,
    key="corpus_source",
)
pick: UploadPick | None = None
if source == "upload":
    pick = upload_section(
        "private",
        "Corpus file: CSV, TSV, JSON Lines, Parquet, plain text (one post per line or user<TAB>text), "
        "token sequences (one user per line), or a .zip holding one of these",
        int(widget_value("corpus_max_n", current.max_n)),
    )
    if state.uploads["private"].pending is None:
        st.info("No file uploaded yet; the corpus in use stays loaded.")

opts = cleaning_options(current)
needs_choice = source == "upload" and pick is None
submitted = st.button("Load corpus", type="primary", key="load_corpus", disabled=needs_choice)
if needs_choice and state.uploads["private"].cache is not None:
    st.caption("Choose the columns above to load this file (the corpus in use stays loaded until then).")

if submitted and pick is not None:
    opts = pick.options(opts)
if submitted and source == "demo":
    try:  # on success install_corpus reruns the script (the sidebar then shows the new corpus) and says so
        _ui.load_demo_into_session(opts, message="Demo corpus loaded.")  # no column or format choices
    except Exception as exc:
        _ui.show_error(exc, "the demo corpus could not be loaded")
elif submitted and (pick is None or state.uploads["private"].cache is None):
    st.error("Upload a readable file first; the corpus in use stays loaded.")
load_flow("private", pick, opts if submitted and source == "upload" else None)

_ui.show_flash()
explore_section()
corpus = state.corpus
if corpus is None:
    st.stop()

st.subheader("Exploration corpus in use (not your private data)" if state.exploring else "Corpus in use")
st.text(state.corpus_name)
if state.is_demo:
    st.caption(
        "The demo corpus is synthetic: English word frequencies from wordfreq, phrases, and "
        f"{count_text(len(load_canaries()))} planted canaries."
    )
stats = corpus.stats()
st.warning(
    "These statistics are computed from the raw data: they are NOT differentially private. Do not publish them.",
    icon=_ui.ICONS["warning"],
)
m = st.columns(5)
m[0].metric("Users", f"{stats.users:,}")
m[1].metric("Posts", f"{stats.posts:,}")
m[2].metric("Vocabulary (items)", f"{stats.vocabulary:,}")
m[3].metric("Items per user (median)", f"{stats.items_per_user_median:g}")
m[4].metric("Items used by one user", f"{stats.items_used_by_one_user:,}")
with st.expander("All statistics (not private)"):
    rows = [(k, str(v)) for k, v in stats.as_dict().items()]
    st.dataframe(pd.DataFrame(rows, columns=["statistic", "value"]), hide_index=True, key="stats_table")

src = corpus.source
st.caption(f"Privacy unit (one user of the guarantee): {src.privacy_unit}.")
if src.detected:  # what the auto tokenizer found: scripts and their share of tokens, the segmenters that ran
    for line in (d for d in src.detected if "not installed" in d):
        st.warning(escape_markdown(line), icon=_ui.ICONS["warning"])
    st.caption(
        "Scripts and word segmentation (raw data, NOT private): "
        + escape_markdown("; ".join(d for d in src.detected if "not installed" not in d))
    )
for w in src.warnings:  # checks on the whole file, after tokenizing
    st.warning(plain_text(_say(f"Check the input (raw data, NOT private): {w}")), icon=_ui.ICONS["warning"])
notes = [
    f"format: {src.format}",
    f"encoding: {src.encoding}" + (" (fallback)" if src.encoding_fallback else ""),
    f"user column: {src.user_column}",
    f"text column: {src.text_column}" + (" (guessed)" if src.columns_guessed else ""),
    f"rows read: {src.rows_read:,}",
    f"rows dropped (no user / no text / removed): {src.rows_dropped_no_user:,} / {src.rows_dropped_no_text:,} / "
    f"{src.rows_dropped_removed:,}",
    f"tokenizer: {src.tokenizer}",
    *(f"{d} (raw data, not private)" for d in src.detected),
    *(f.describe() for f in src.column_facts),
    *(_say(n) for n in src.notes),
]
with st.expander("What the reader did"):
    st.text("\n".join(notes))

st.subheader("Canaries to watch for")
st.caption(
    "Strings that only one user wrote"
    + (
        " (the demo corpus plants a few dozen)"
        if state.is_demo or DEMO_NAME in state.corpus_name
        else ": type some from your file"
    )
    + ". A private release at a sane budget must contain none of them. One per line."
)
_ui.canary_area()
