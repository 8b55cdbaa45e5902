"""Page 1: choose the corpus (bundled demo or an upload), preview it, pick the columns, clean, load; raw statistics."""

import pandas as pd
import streamlit as st

from dpsu_core.corpus import FORMATS, TOKENIZERS, LoadOptions, load_upload
from dpsu_core.corpus.clean import stop_word_languages
from dpsu_core.corpus.preview import SHOWN_ROWS, Preview, Survey, preview
from dpsu_core.corpus.readers import RawFile
from dpsu_core.demo import DEMO_NAME, load_canaries
from dpsu_core.errors import InputError
from dpsu_core.params import PARAMS
from dpsu_core.synthetic import SIZE_DISTRIBUTIONS, SimulationSpec, simulated_corpus
from dpsu_core.wording import speak
from pages import _ui
from pages._format import escape_markdown
from pages._state import app_state, forget_widgets, set_widget, widget_value
from pages._text import APP_OPTIONS, TEACHING_SEED

_ui.require_app()

EXPLORE_KINDS = {
    "demo": "Bundled demo corpus",
    "public": "A public file",
    "simulated": "Simulated from public numbers",
}


def explore_section() -> None:
    """Switch to an exploration corpus: try mechanisms without spending, then release once on the private one."""
    state = app_state()
    with st.expander(
        "Explore before spending: work on a corpus that is NOT your private data",
        expanded=state.exploring,
        icon=_ui.ICONS["explore"],
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
            public = st.file_uploader(
                "A PUBLIC corpus file (never the private one or a sample of it)", key="explore_upload"
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
        if st.button("Explore on this corpus", key="explore_start", icon=_ui.ICONS["explore"]):
            try:
                if kind == "demo":
                    state.explore(_ui.demo_corpus(), f"exploration: {DEMO_NAME}", canaries=load_canaries())
                elif kind == "public":
                    if public is None:
                        raise InputError("upload a public corpus file first (or pick the demo or a simulated corpus)")
                    opts = LoadOptions(max_n=state.corpus_options.max_n)
                    state.explore(
                        load_upload(public.getvalue(), public.name, opts), f"exploration: {public.name}", opts
                    )
                else:
                    assert spec is not None
                    with st.spinner("Simulating…"):
                        sim = simulated_corpus(spec, seed=TEACHING_SEED if state.teaching else None)
                    state.explore(sim, spec.describe())
                st.rerun()
            except Exception as exc:
                _ui.show_error(exc, "the exploration corpus could not be made (the corpus in use stays)")
        if state.exploring:
            st.info(
                f"Exploring on **{escape_markdown(state.corpus_name)}**. The private corpus "
                f"({escape_markdown(state.private_name)}) and its results are kept aside.",
                icon=_ui.ICONS["explore"],
            )


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
    index=0 if state.is_demo and state.pending_upload is None else 1,
    horizontal=True,
    key="corpus_source",
)
HEADER = {"auto": None, "yes": True, "no": False}
PICKS = ("user_col", "text_col", "row_is_user", "user_pattern", "has_header")
HIGHLIGHT = {"background-color": "rgba(255, 189, 69, 0.35)"}  # the chosen columns in the preview


def _say(message: str) -> str:
    return speak(message, APP_OPTIONS)


def _keep_upload() -> None:
    """The uploader's on_change: keep the file in the session state (the widget's own state is dropped when
    another page runs); a new file starts with fresh column choices."""
    up = widget_value("upload")
    state.upload = None  # the previous file's unpacked bytes go at once
    state.pending_upload = (up.name, up.getvalue()) if up is not None else None
    forget_widgets(PICKS)


@st.cache_data(scope="session", max_entries=16, show_spinner=False)
def _preview(name: str, digest: str, _survey: Survey, fmt, header, user, text, row_is_user, pattern) -> Preview:
    """The preview of the upload (read once per format and header: ``_ui.upload_survey``), cached per content and
    choices."""
    return preview(_survey, user_col=user, text_col=text, row_is_user=row_is_user, user_pattern=pattern)


def _flip_header(has_header: bool) -> None:
    set_widget("has_header", "no" if has_header else "yes")


pv: Preview | None = None
choice: dict = {}
fmt, header = "auto", "auto"
if source == "upload":
    up = st.file_uploader(
        "Corpus file: CSV, TSV, JSON Lines, Parquet, plain text (one post per line or user<TAB>text), "
        "token sequences (one user per line), or a .zip holding one of these",
        key="upload",
        on_change=_keep_upload,
    )
    if up is not None and state.pending_upload is None:
        state.pending_upload = (up.name, up.getvalue())
    if state.pending_upload is None:
        st.info("No file uploaded yet; the corpus in use stays loaded.")
    else:
        name, data = state.pending_upload
        if up is None:
            st.info(
                f"File kept from before: {name} ({len(data):,} bytes), not loaded yet. Upload another to replace it."
            )
        f1, f2 = st.columns(2)
        fmt = f1.selectbox(
            "Format", FORMATS, key="upload_format", help="'auto' detects the format from the file name and content."
        )
        header = f2.selectbox(
            "Header row",
            list(HEADER),
            key="has_header",
            help="'auto' decides from the first rows whether the first row names the columns.",
        )
        base: Preview | None
        raw: RawFile | None
        try:  # unpacked once per upload and read once per format and header (reruns and previews reuse it)
            upload = _ui.upload_once(name, data)
            digest, raw = upload.digest, upload.raw
            with st.spinner("Reading the file for its column facts…"):
                sv = _ui.upload_survey(upload, fmt, HEADER[header])
            base = _preview(name, digest, sv, fmt, HEADER[header], None, None, False, None)
        except Exception as exc:  # bad upload: say why, keep the previous corpus
            _ui.show_error(exc, "this file cannot be read")
            _ui.free_failed_load(exc)
            base = raw = None
        if raw is not None and (warning := _ui.memory_warning(raw, int(widget_value("corpus_max_n", current.max_n)))):
            st.warning(warning, icon=_ui.ICONS["warning"])
        if base is not None and raw is not None and base.columns:
            labels = base.labels
            pick = {lbl: i for i, lbl in enumerate(labels)}
            row_is_user = bool(widget_value("row_is_user", False))
            pattern = (widget_value("user_pattern") or "").strip() or None
            u_lbl = widget_value("user_col", labels[base.guess_user] if base.guess_user is not None else None)
            t_lbl = widget_value("text_col", labels[base.guess_text] if base.guess_text is not None else None)
            u = None if row_is_user or u_lbl not in pick else pick[u_lbl]
            t = pick.get(t_lbl) if t_lbl is not None else None
            pv = _preview(name, digest, sv, fmt, HEADER[header], u, t, row_is_user, pattern)
            choice = {"user_col": u, "text_col": t, "row_is_user": row_is_user, "user_pattern": pattern}
            if base.has_header is not None and base.header_detected:
                h1, h2 = st.columns([4, 1])
                h1.caption(_say(base.header_reason[0].upper() + base.header_reason[1:]) + ".")
                h2.button(
                    "Flip header",
                    key="flip_header",
                    on_click=_flip_header,
                    args=(bool(base.has_header),),
                    help="Read the first row the other way (as data, or as the column names).",
                )
            st.markdown("**Columns** (the privacy unit is the user: check the user column)")
            c1, c2 = st.columns(2)
            c1.selectbox(
                "User id column",
                labels,
                index=labels.index(u_lbl) if u_lbl in pick else None,
                placeholder="Choose the column of user ids",
                key="user_col",
                disabled=row_is_user,
                help="The column naming who wrote each row. Known names (author_id, author, user, ...) are "
                "pre-selected; nothing is chosen by position.",
            )
            c2.selectbox(
                "Text column",
                labels,
                index=labels.index(t_lbl) if t_lbl in pick else None,
                placeholder="Choose the column of posts",
                key="text_col",
            )
            c1.checkbox(
                "Each row is its own user",
                key="row_is_user",
                help="For files without a user column: every row is protected as one person.",
            )
            c1.text_input(
                "User pattern",
                key="user_pattern",
                placeholder="^([^/]+)/",
                disabled=row_is_user,
                help="Optional regular expression: the user is its first group in the user id column "
                "(e.g. ^([^/]+)/ takes the mailbox of an e-mail path).",
            )
            if pv.choice_error:
                st.info(_say(pv.choice_error), icon=_ui.ICONS["warning"])
            for w in pv.warnings:
                st.warning(_say(str(w)), icon=_ui.ICONS["warning"])
        elif base is not None:
            pv = base
        if pv is not None:
            st.markdown(
                f"**Preview**: the first {min(SHOWN_ROWS, len(pv.rows))} rows as parsed "
                "(raw data, NOT private; chosen columns highlighted)"
            )
            cols = pv.labels or ["line"]
            frame = pd.DataFrame([r[: len(cols)] for r in pv.rows[:SHOWN_ROWS]], columns=cols)
            chosen = [cols[i] for i in (pv.user_col, pv.text_col) if i is not None and pv.columns]
            st.dataframe(
                frame.style.set_properties(subset=chosen, **HIGHLIGHT) if chosen else frame,
                hide_index=True,
                key="preview_table",
            )
            if pv.facts:
                roles = {pv.user_col: "user", pv.text_col: "text"}
                facts = pd.DataFrame(
                    [
                        (lbl, roles.get(i, ""), f.distinct, f"{100 * f.empty_share:.1f}%", round(f.mean_length, 1))
                        for i, (lbl, f) in enumerate(zip(pv.labels, pv.facts))
                    ],
                    columns=["column", "chosen as", "distinct values", "empty cells", "mean length"],
                )
                st.caption(f"Per column, over {pv.coverage}, as the loader reads it (raw data, NOT private):")
                st.dataframe(facts, hide_index=True, key="facts_table")
            for n in pv.notes:
                st.caption(_say(n))

st.markdown("**Preprocessing** (the papers' defaults are on)")
p1, p2, p3, p4 = st.columns(4)
lowercase = p1.toggle("Lowercase", value=current.lowercase, key="pp_lowercase")
strip_urls = p2.toggle("Strip URLs", value=current.strip_urls, key="pp_strip_urls")
drop_removed = p3.toggle("Drop [removed]/[deleted]", value=current.drop_removed, key="pp_drop_removed")
strip_symbols = p4.toggle("Strip symbols", value=current.strip_symbols, key="pp_strip_symbols")
q1, q2, q3, q4 = st.columns(4)
strip_html = q1.toggle(
    "Strip HTML", value=current.strip_html, key="pp_strip_html", help="Remove tags; decode &amp; and the like."
)
email_headers = q2.toggle(
    "Drop e-mail headers",
    value=current.email_headers,
    key="pp_email_headers",
    help="Posts that are whole e-mails (RFC 822) keep only their body.",
)
drop_digits = q3.toggle(
    "Drop numbers", value=current.drop_digits, key="pp_drop_digits", help="Drop tokens made only of digits."
)
stop_words = q4.selectbox(
    "Stop words",
    ["none", *stop_word_languages()],
    index=0,
    key="pp_stop_words",
    help="Drop the stop words of a language (lists from the stop-words package).",
)
t1, t2 = st.columns(2)
tokenizer = t1.selectbox(
    "Tokenizer",
    TOKENIZERS,
    index=TOKENIZERS.index(current.tokenizer) if current.tokenizer in TOKENIZERS else 0,
    key="tokenizer",
    help="fast: one regular expression (quick). treebank: NLTK's Treebank tokenizer (slower).",
)
max_n = t2.number_input(
    "Longest n-gram",
    min_value=int(PARAMS["max_n"].minimum or 1),
    max_value=int(PARAMS["max_n"].maximum or 1),  # the bounds the loader checks (dpsu_core.params)
    value=int(current.max_n),
    step=1,
    key="corpus_max_n",
    help="Items are the n-grams of length 1..this inside each post.",
)
needs_choice = source == "upload" and (pv is None or bool(pv.choice_error))
submitted = st.button("Load corpus", type="primary", key="load_corpus", disabled=needs_choice)
if needs_choice and state.pending_upload is not None and pv is not None:
    st.caption("Choose the columns above to load this file (the corpus in use stays loaded until then).")

if submitted:
    uploading = source == "upload"
    opts = LoadOptions(
        format=fmt if uploading else "auto",
        user_col=choice.get("user_col") if uploading else None,
        text_col=choice.get("text_col") if uploading else None,
        has_header=HEADER[header] if uploading else None,
        max_n=int(max_n),
        tokenizer=tokenizer,
        lowercase=lowercase,
        strip_urls=strip_urls,
        drop_removed=drop_removed,
        strip_symbols=strip_symbols,
        strip_html=strip_html,
        email_headers=email_headers,
        drop_digits=drop_digits,
        stop_words=None if stop_words == "none" else stop_words,
        row_is_user=bool(choice.get("row_is_user")) if uploading else False,
        user_pattern=choice.get("user_pattern") if uploading else None,
    )
    if source == "demo":
        try:  # on success install_corpus reruns the script (the sidebar then shows the new corpus) and says so
            _ui.load_demo_into_session(opts, message="Demo corpus loaded.")  # no column or format choices
        except Exception as exc:
            _ui.show_error(exc, "the demo corpus could not be loaded")
    elif state.pending_upload is None or state.upload is None:
        st.error("Upload a readable file first; the corpus in use stays loaded.")
    elif _ui.memory_warning(state.upload.raw, opts.max_n) is not None:
        state.pending_load = opts  # above the memory budget: load only once the user confirms below
    else:
        state.pending_load = None
        _ui.load_upload_into_session(opts)

if state.pending_load is not None and state.upload is not None:
    st.warning(
        f"{_ui.memory_warning(state.upload.raw, state.pending_load.max_n) or ''} Load it anyway?",
        icon=_ui.ICONS["warning"],
    )
    b1, b2 = st.columns(2)
    if b1.button("Load anyway", key="load_over_budget"):
        opts, state.pending_load = state.pending_load, None
        _ui.load_upload_into_session(opts)
    if b2.button("Cancel", key="cancel_over_budget"):
        state.pending_load = None
        st.rerun()

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
        f"{len(load_canaries())} planted canaries."
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
for w in src.warnings:  # checks on the whole file, after tokenizing
    st.warning(_say(f"Check the input (raw data, NOT private): {w}"), icon=_ui.ICONS["warning"])
notes = [
    f"format: {src.format}",
    f"encoding: {src.encoding}" + (" (fallback)" if src.encoding_fallback else ""),
    f"user column: {src.user_column}",
    f"text column: {src.text_column}" + (" (guessed)" if src.columns_guessed else ""),
    f"rows read: {src.rows_read:,}",
    f"rows dropped (no user / no text / removed): {src.rows_dropped_no_user:,} / {src.rows_dropped_no_text:,} / "
    f"{src.rows_dropped_removed:,}",
    f"tokenizer: {src.tokenizer}",
    *(f.describe() for f in src.column_facts),
    *(_say(n) for n in src.notes),
]
with st.expander("What the reader did"):
    st.text("\n".join(notes))

st.subheader("Canaries to watch for")
st.caption(
    "Strings that only one user wrote (the demo corpus plants a few dozen). A private release at a sane "
    "budget must contain none of them. One per line."
)
_ui.canary_area()
