"""The one upload path: a file for the private corpus, the exploration corpus or GW-KT's public corpus goes
through the same widgets (format, header, column pickers, preview, column facts, checks) and the same safety
(unpacked once, the memory check before loading; a "public" file holding the private data is refused), and the
same load (``load_flow``: one "Load it anyway", one content check, then the corpus installed for its role).
Layout only: the reading is ``dpsu_core.corpus`` (``preview``, ``load_upload``), the check ``dpsu_core.corpus.fingerprint``."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from dpsu_core.accounting.account import name_of_file
from dpsu_core.corpus import FORMATS, LoadOptions, load_upload
from dpsu_core.corpus.columns import column_spec
from dpsu_core.corpus.fingerprint import check_content, content
from dpsu_core.corpus.load import refuse_private_copy
from dpsu_core.corpus.overlap import Fingerprinter
from dpsu_core.corpus.preview import SHOWN_ROWS, Preview, Survey, preview
from dpsu_core.errors import InputError
from dpsu_core.reading import FILE_FIELDS, HEADER_LABEL, READING
from dpsu_core.wording import speak
from pages import _account, _ui, _workspace
from pages._format import escape_markdown, plain_text
from pages._state import (
    UPLOAD_KEY,
    UPLOAD_PREFIX,
    PublicCorpus,
    UploadCache,
    UploadRole,
    app_state,
    forget_widgets,
    set_widget,
    widget_value,
)
from pages._text import APP_OPTIONS

HEADER: dict[str, bool | None] = {"auto": None, "yes": True, "no": False}
PICKS = ("user_col", "text_col", "row_is_user", "user_pattern", "has_header")
HIGHLIGHT = {"background-color": "rgba(255, 189, 69, 0.35)"}  # the chosen columns in the preview
PUBLIC_USE: dict[UploadRole, str] = {"explore": "the exploration corpus", "public": "GW-KT's public corpus"}


@dataclass(frozen=True)
class UploadPick:
    """An upload with its reading choices made: ready to load."""

    upload: UploadCache
    reading: LoadOptions  # format, header, columns, row-is-user and pattern (the rest at their defaults)
    memory_warning: str | None  # the load would likely pass the session's memory budget

    def options(self, base: LoadOptions) -> LoadOptions:
        """``base`` (preprocessing, longest n-gram) with this upload's reading choices."""
        r = self.reading
        return replace(base, has_header=r.has_header, **{f: getattr(r, f) for f in FILE_FIELDS})


def _say(message: str) -> str:
    return speak(message, APP_OPTIONS)


def _keep_upload(role: UploadRole) -> None:
    """The uploader's on_change: keep the file in the session state (the widget's own state is dropped when
    another page runs); a new file starts with fresh column choices."""
    prefix = UPLOAD_PREFIX[role]
    up = widget_value(prefix + "upload")
    slot = app_state().uploads[role]
    slot.cache = None  # the previous file's unpacked bytes go at once
    slot.pending = (up.name, up.getvalue()) if up is not None else None
    slot.pending_load = None
    forget_widgets(tuple(prefix + k for k in PICKS))


@st.cache_data(scope="session", max_entries=16, show_spinner=False)
def _preview(role: str, digest: str, _survey: Survey, fmt, header, user, text, row_is_user, pattern) -> Preview:
    """The preview of an upload (read once per format and header: ``_ui.upload_survey``), cached per content and
    choices."""
    return preview(_survey, user_col=user, text_col=text, row_is_user=row_is_user, user_pattern=pattern)


def _flip_header(key: str, has_header: bool) -> None:
    set_widget(key, "no" if has_header else "yes")


def upload_section(role: UploadRole, label: str, max_n: int) -> UploadPick | None:
    """The uploader of ``role`` with its reading choices, preview and facts; the pick once the file can be loaded
    (None: no file yet, unreadable, refused, or columns still to choose)."""
    state = app_state()
    slot = state.uploads[role]
    key = UPLOAD_PREFIX[role]
    up = st.file_uploader(label, key=key + "upload", on_change=_keep_upload, args=(role,))
    if up is not None and slot.pending is None:
        slot.pending = (up.name, up.getvalue())
    if slot.pending is None:
        return None
    name, data = slot.pending
    f1, f2 = st.columns(2)
    fmt = f1.selectbox(
        READING["format"].label,
        FORMATS,
        key=key + "upload_format",
        help="'auto' detects the format from the file name and content.",
    )
    header = f2.selectbox(
        HEADER_LABEL,
        list(HEADER),
        key=key + "has_header",
        help="'auto' decides from the first rows whether the first row names the columns.",
    )
    try:  # unpacked once per upload and read once per format and header (reruns and previews reuse it)
        upload = _ui.upload_once(name, data, role)
        if role in PUBLIC_USE:
            try:
                refuse_private_copy(upload.digest, _workspace.private_digest(state), PUBLIC_USE[role])
            except InputError as exc:
                _ui.show_error(exc, "this file cannot be used")
                return None
        with st.spinner("Reading the file for its column facts…"):
            sv = _ui.upload_survey(upload, fmt, HEADER[header])
        base = _preview(role, upload.digest, sv, fmt, HEADER[header], None, None, False, None)
    except Exception as exc:  # bad upload: say why, keep what is in use
        _ui.show_error(exc, "this file cannot be read")
        _ui.free_failed_load(exc)
        slot.cache = None
        return None
    if up is None:
        in_use = role == "private" and _workspace.private_work(state).dataset_key == UPLOAD_KEY + upload.digest
        st.info(
            f"File in use: {name} ({len(data):,} bytes). Change the choices below and load it again, or upload "
            "another file to replace it."
            if in_use
            else f"File kept from before: {name} ({len(data):,} bytes), not loaded yet. Upload another to replace it."
        )
    warning = _ui.memory_warning(upload.raw, max_n)
    if warning:
        st.warning(warning, icon=_ui.ICONS["warning"])
    pv, reading = _columns(role, sv, base, upload.digest, fmt, header)
    _show(pv, key)
    if reading is None:
        return None
    return UploadPick(upload, reading, warning)


def _columns(
    role: UploadRole, sv: Survey, base: Preview, digest: str, fmt: str, header: str
) -> tuple[Preview, LoadOptions | None]:
    """The column pickers (for a file with columns) and the preview of the choice; the reading choices, or None
    while the columns are still to choose."""
    key = UPLOAD_PREFIX[role]
    if not base.columns:
        return base, LoadOptions(format=fmt, has_header=HEADER[header])
    labels = base.labels
    pick = {lbl: i for i, lbl in enumerate(labels)}
    row_is_user = bool(widget_value(key + "row_is_user", False))
    pattern = (widget_value(key + "user_pattern") or "").strip() or None
    u_lbl = widget_value(key + "user_col", labels[base.guess_user] if base.guess_user is not None else None)
    t_lbl = widget_value(key + "text_col", labels[base.guess_text] if base.guess_text is not None else None)
    u = None if row_is_user or u_lbl not in pick else pick[u_lbl]
    t = pick.get(t_lbl) if t_lbl is not None else None
    pv = _preview(role, digest, sv, fmt, HEADER[header], u, t, row_is_user, pattern)
    if base.has_header is not None and base.header_detected:
        h1, h2 = st.columns([4, 1])
        h1.caption(_say(base.header_reason[0].upper() + base.header_reason[1:]) + ".")
        h2.button(
            "Flip header",
            key=key + "flip_header",
            on_click=_flip_header,
            args=(key + "has_header", bool(base.has_header)),
            help="Read the first row the other way (as data, or as the column names).",
        )
    st.markdown("**Columns** (the privacy unit is the user: check the user column)")
    c1, c2 = st.columns(2)
    c1.selectbox(
        READING["user_col"].label,
        labels,
        index=labels.index(u_lbl) if u_lbl in pick else None,
        placeholder="Choose the column of user ids",
        key=key + "user_col",
        disabled=row_is_user,
        help="The column naming who wrote each row. Known names (author_id, author, user, ...) are "
        "pre-selected; nothing is chosen by position.",
    )
    c2.selectbox(
        READING["text_col"].label,
        labels,
        index=labels.index(t_lbl) if t_lbl in pick else None,
        placeholder="Choose the column of posts",
        key=key + "text_col",
    )
    c1.checkbox(
        READING["row_is_user"].label,
        key=key + "row_is_user",
        help="For files without a user column: every row is protected as one person.",
    )
    c1.text_input(
        READING["user_pattern"].label,
        key=key + "user_pattern",
        placeholder="^([^/]+)/",
        disabled=row_is_user,
        help="Optional regular expression: the user is its first group in the user id column "
        "(e.g. ^([^/]+)/ takes the mailbox of an e-mail path).",
    )
    if pv.choice_error:
        st.info(plain_text(_say(pv.choice_error)), icon=_ui.ICONS["warning"])
        return pv, None
    for w in pv.warnings:
        st.warning(plain_text(_say(str(w))), icon=_ui.ICONS["warning"])
    reading = LoadOptions(
        format=fmt,
        has_header=HEADER[header],
        user_col=column_spec(pv.columns, u, pv.has_header),  # by name when the header names it (the command too)
        text_col=column_spec(pv.columns, t, pv.has_header),
        row_is_user=row_is_user,
        user_pattern=pattern,
    )
    return pv, reading


def _show(pv: Preview, key: str) -> None:
    """The first rows as parsed, the facts of every column and the reader's notes (raw data, NOT private)."""
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
        key=key + "preview_table",
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
        st.dataframe(facts, hide_index=True, key=key + "facts_table")
    for n in pv.notes:
        st.caption(plain_text(_say(n)))


# ---- the one load flow ---------------------------------------------------------------------------------------
LOADING: dict[UploadRole, str] = {
    "private": "Reading and tokenizing the file…",
    "explore": "Reading and tokenizing the public file…",
    "public": "Reading and tokenizing the public file…",
}
FAILED: dict[UploadRole, str] = {
    "private": "the corpus could not be loaded (the previous corpus stays in use)",
    "explore": "the exploration corpus could not be made (the corpus in use stays)",
    "public": "the public corpus cannot be read (using wordfreq instead)",
}


def load_flow(role: UploadRole, pick: UploadPick | None, options: LoadOptions | None = None) -> None:
    """The one way from an upload to a loaded corpus, for the private corpus, the exploration corpus and GW-KT's
    public corpus. ``options`` (the role's button was pressed: the pick's reading choices with the cleaning):
    load ``pick`` with them, or, above the session's memory budget, keep them and ask "Load it anyway?" (drawn on
    every run while it waits). Called on every run, with or without ``options``, where the question belongs."""
    slot = app_state().uploads[role]
    if options is not None and pick is not None:
        if _ui.memory_warning(pick.upload.raw, options.max_n) is not None:
            slot.pending_load = options  # above the memory budget: loaded once the user says so below
        else:
            slot.pending_load = None
            _load(role, pick.upload, options)
    if slot.pending_load is None or slot.cache is None:
        return
    st.warning(
        f"{_ui.memory_warning(slot.cache.raw, slot.pending_load.max_n) or ''} Load it anyway?",
        icon=_ui.ICONS["warning"],
    )
    key = UPLOAD_PREFIX[role]
    b1, b2 = st.columns(2)
    if b1.button("Load anyway", key=key + "load_over_budget"):
        opts, slot.pending_load = slot.pending_load, None
        _load(role, slot.cache, opts)
    if b2.button("Cancel", key=key + "cancel_over_budget"):
        slot.pending_load = None
        st.rerun()


def _load(role: UploadRole, upload: UploadCache, options: LoadOptions) -> None:
    """Tokenize ``upload`` and install it for ``role``. Its posts are hashed as it is read
    (``overlap.Fingerprinter``) and its users' token sets once it is built (``fingerprint.content``): a file for
    the exploration or GW-KT's public corpus that is the private corpus's data is refused, a smaller overlap is
    stated with its figure. On failure an error box says why
    and what was in use stays."""
    state = app_state()
    upload.survey = None  # the preview's reading of every column goes before the load needs the memory
    posts = Fingerprinter(state.overlap_key)
    note = ""
    try:
        with st.status(LOADING[role], expanded=False) as status:
            corpus = load_upload(upload.raw, upload.name, options, on_batch=posts.add)
            found = content(corpus, posts.finish(), state.overlap_key)
            account = _account.recognise_corpus(state, corpus, name_of_file(upload.name)) if role == "private" else None
            if role != "private":
                said = check_content(found, _workspace.private_work(state).fingerprint, PUBLIC_USE[role])
                if said:
                    note = f"{upload.name}: {said} (raw data, NOT private)."
            status.update(label="Corpus loaded", state="complete")
    except Exception as exc:  # bad upload or refused: what is in use stays
        if role == "public":
            state.public = None
        _ui.show_error(exc, FAILED[role])
        _ui.free_failed_load(exc)
        return
    if role == "private":
        # the uploader may still hold the file: its unpacked bytes stay in the slot
        state.uploads["private"].pending = None
        # An upload starts without canaries (the demo's planted ones mean nothing here): type your own below.
        _workspace.install_corpus(
            corpus,
            upload.name,
            options,
            is_demo=False,
            canaries=[],
            message="Corpus loaded.",
            dataset_key=UPLOAD_KEY + upload.digest,  # the same file loaded twice: the same users in the ledger
            input_name=upload.name,
            fingerprint=found,
            account=account,
        )
    elif role == "explore":
        _workspace.explore(state, corpus, f"exploration: {upload.name}", options, note=note)
        st.rerun()
    else:
        reading = replace(LoadOptions(), has_header=options.has_header, **{f: getattr(options, f) for f in FILE_FIELDS})
        state.public = PublicCorpus(corpus, upload.name, upload.digest, reading, found, note)


def content_note(note: str) -> None:
    """What the content check said of a public file, in a warning box (raw data, NOT private)."""
    if note:
        st.warning(escape_markdown(note), icon=_ui.ICONS["warning"])
