"""Page 1: choose the corpus (bundled demo or an upload), columns, preprocessing; raw statistics."""

import pandas as pd
import streamlit as st

from dpsu_core.corpus import FORMATS, TOKENIZERS, LoadOptions, load_upload, peek_upload
from dpsu_core.corpus.clean import stop_word_languages
from dpsu_core.demo import load_canaries
from pages import _ui
from pages._state import app_state, install_corpus

_ui.require_app()

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
    index=0 if state.is_demo else 1,
    horizontal=True,
    key="corpus_source",
)

data = name = None
fmt, header = "auto", "auto"
columns: list[str] = []
guess_user = guess_text = None
header_choice = {"auto": None, "yes": True, "no": False}
if source == "upload":
    up = st.file_uploader(
        "Corpus file: CSV, TSV, JSON Lines, Parquet, plain text (one post per line or user<TAB>text), "
        "token sequences (one user per line), or a .zip holding one of these",
        key="upload",
    )
    f1, f2 = st.columns(2)
    fmt = f1.selectbox(
        "Format", FORMATS, key="upload_format", help="'auto' detects the format from the file name and content."
    )
    header = f2.selectbox(
        "Header row",
        list(header_choice),
        key="has_header",
        help="'auto' detects whether the first row names the columns.",
    )
    if up is not None:
        data, name = up.getvalue(), up.name
        try:
            columns, guess_user, guess_text = peek_upload(data, name, header_choice[header], fmt)
        except Exception as exc:  # bad upload: say why, keep the previous corpus
            _ui.show_error(exc, "this file cannot be read")
            data = None
    else:
        st.info("No file uploaded yet; the corpus in use stays loaded.")

with st.form("load_form", border=True):
    user_col = text_col = None
    if columns:
        st.markdown("**Columns** (pre-filled with the best guess)")
        c1, c2 = st.columns(2)
        user_col = c1.selectbox(
            "User id column", columns, index=columns.index(guess_user) if guess_user in columns else 0, key="user_col"
        )
        text_col = c2.selectbox(
            "Text column",
            columns,
            index=columns.index(guess_text) if guess_text in columns else min(1, len(columns) - 1),
            key="text_col",
        )
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
        min_value=1,
        max_value=6,
        value=int(current.max_n),
        step=1,
        key="corpus_max_n",
        help="Items are the n-grams of length 1..this inside each post.",
    )
    submitted = st.form_submit_button("Load corpus", type="primary", key="load_corpus")

if submitted:
    uploading = source == "upload"
    opts = LoadOptions(
        format=fmt if uploading else "auto",
        user_col=user_col,
        text_col=text_col,
        has_header=header_choice[header] if uploading else None,
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
    )
    if source == "demo":
        try:  # on success install_corpus reruns the script (the sidebar then shows the new corpus) and says so
            _ui.load_demo_into_session(opts, message="Demo corpus loaded.")  # no column or format choices
        except Exception as exc:
            _ui.show_error(exc, "the demo corpus could not be loaded")
    elif data is None:
        st.error("Upload a readable file first; the corpus in use stays loaded.")
    else:
        try:
            with st.status("Reading and tokenizing the file…", expanded=False) as status:
                corpus = load_upload(data, name, opts)
                status.update(label="Corpus loaded", state="complete")
            # An upload starts without canaries (the demo's planted ones mean nothing here): type your own below.
            install_corpus(corpus, name, opts, is_demo=False, canaries=[], message="Corpus loaded.")
        except Exception as exc:  # bad upload: the previous corpus stays in place
            _ui.show_error(exc, "the corpus could not be loaded (the previous corpus stays in use)")

_ui.show_flash()
corpus = state.corpus
if corpus is None:
    st.stop()

st.subheader("Corpus in use")
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
notes = [
    f"format: {src.format}",
    f"encoding: {src.encoding}" + (" (fallback)" if src.encoding_fallback else ""),
    f"user column: {src.user_column}",
    f"text column: {src.text_column}" + (" (guessed)" if src.columns_guessed else ""),
    f"rows read: {src.rows_read:,}",
    f"rows dropped (no user / no text / removed): {src.rows_dropped_no_user:,} / {src.rows_dropped_no_text:,} / "
    f"{src.rows_dropped_removed:,}",
    f"tokenizer: {src.tokenizer}",
    *src.notes,
]
with st.expander("What the reader did"):
    st.text("\n".join(notes))

st.subheader("Canaries to watch for")
st.caption(
    "Strings that only one user wrote (the demo corpus plants a few dozen). A private release at a sane "
    "budget must contain none of them. One per line."
)
_ui.canary_area()
