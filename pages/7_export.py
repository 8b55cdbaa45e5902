"""Page 7: download the private release and its report. Nothing from the raw data is exported."""

import streamlit as st

from dpsu_core.analysis.metrics import canaries_released
from dpsu_core.mechanisms.item_counts import counts_of
from dpsu_core.outputs.command import Redo, command_file, release_command, release_script
from dpsu_core.outputs.export import export_basename, guarantee_text
from dpsu_core.outputs.tokenizer_export import (
    DEFAULT_MODEL,
    DEFAULT_SPECIAL_TOKENS,
    DEFAULT_VOCAB_SIZE,
    MODELS,
    TokenizerSpec,
    directory_files,
    directory_zip,
    parse_special_tokens,
    whole_words_text,
)
from dpsu_core.params import OPTIONS
from dpsu_core.wording import count_text
from pages import _account, _downloads, _ui, _workspace
from pages._format import escape_markdown
from pages._state import app_state

_ui.require_app()

state = app_state()
st.title("7 · Export")
st.caption(
    "Downloads hold only the private output: the released items (for count mechanisms, the noisy count "
    "and its standard deviation), the calibration and the guarantee. No raw counts, weights or user ids."
)

corpus = _ui.get_corpus()
records = state.history.records
# made on the corpus in use: this load, else an earlier load of the same file read the same way; never another file
default = state.history.default_on(_account.corpus_ref(state), same_file=True)


def session_history() -> None:
    """Every release that spent on the private corpus, as the ledger counts them: one line per release, batches
    (a comparison's runs, a neighbouring-corpora run) grouped and expandable, with why a member cannot be exported."""
    key = _workspace.private_work(state).dataset_key
    groups = state.history.groups_on(key)
    n, ledger_n = state.history.spent_releases(key), _account.spent(state).releases
    st.markdown(
        f"**Session history on the private corpus** ({escape_markdown(_workspace.private_name(state))}): "
        f"{n:,} release{'s' if n != 1 else ''} spent; the ledger counts {ledger_n:,}."
    )
    for g in groups:
        if g.releases == 1 and g.members:
            st.caption(escape_markdown(state.history.get(g.members[0]).title()))
            continue
        with st.expander(escape_markdown(g.title()), icon=_ui.ICONS["ledger"]):
            for number in g.members:
                st.caption(escape_markdown(state.history.get(number).title()))
            if g.missing:
                st.caption(
                    escape_markdown(
                        f"{g.missing:,} release{'s' if g.missing != 1 else ''} of this action cannot be exported: "
                        f"{g.not_kept}."
                    )
                )


def kept_releases() -> None:
    """Every release kept in the durable ledger on the private corpus, from every session and tool: its public
    output, downloadable again at no cost."""
    acc = _account.account(state)
    if acc is None:
        return
    kept = list(reversed(acc.store.releases(acc.corpus_id)))
    st.markdown(
        f"**Releases kept in the privacy ledger** for {escape_markdown(acc.name)} (every session and tool): "
        f"{len(kept):,}. Their output is public: downloading one again spends nothing."
    )
    for k in kept[:50]:
        cal = k.calibration
        title = f"Ledger release {k.id} · {cal.get('label', '')}, ε = {cal.get('epsilon', 0):g} · {k.created_utc} UTC"
        with st.expander(escape_markdown(title), icon=_ui.ICONS["ledger"]):
            _ui.kept_downloads(k)
    if len(kept) > 50:
        st.caption(f"The newest 50 are listed; 'dpsu ledger export-release ID' hands back any of the {len(kept):,}.")


if corpus is None or not records:
    _ui.need_release()
    session_history()
    kept_releases()
    st.stop()

numbers = [r.number for r in reversed(records)]  # newest first
if default is None:
    st.info(
        f"No release on the corpus in use ({escape_markdown(state.corpus_name)}) yet: the releases listed were made on "
        "other corpora (another file, or an earlier load). Pick one to export it, or make a release on the "
        "**Release** page."
    )
number = st.selectbox(
    "Release to export",
    numbers,
    index=None if default is None else numbers.index(default.number),
    format_func=lambda n: state.history.get(n).title(),
    key="export_release",
    placeholder="Pick a release made on another corpus",
    help="Every release of this session with an output, a comparison's runs included. The default is the last one "
    "made on the Release page on the corpus in use (or on an earlier load of the same file, read the same way). The "
    "session history below lists every release that spent.",
)
if number is None:  # the info above says why nothing is picked
    session_history()
    st.stop()
record = state.history.get(int(number))
rel = record.release
cal = rel.calibration
st.caption(
    f"Exporting release {escape_markdown(record.title())}."
    + (f" One run of {escape_markdown(record.batch)}." if record.batch else "")
    + (
        " Made on an earlier load of the same file."
        if record is default and record.corpus.id != state.corpus_id
        else ""
    )
)
if not record.corpus.private:
    st.warning(
        f"This release was made on the exploration corpus ({escape_markdown(record.corpus.name)}), not on your "
        "private data. Use **Release on the private corpus** on the Release page for the real release.",
        icon=_ui.ICONS["explore"],
    )
if rel.seeded:
    st.error(escape_markdown(guarantee_text(rel)), icon=_ui.ICONS["warning"])
else:
    st.info(escape_markdown(guarantee_text(rel)), icon=_ui.ICONS["guarantee"])
if rel.seeded:
    st.caption(
        "Each export file says so once: a first comment line in the CSV and TXT, a field in the JSON and report."
    )
try:
    leaked = canaries_released(rel, state.canaries) if record.corpus.id == state.corpus_id else []
except Exception as exc:
    leaked = []
    _ui.show_error(exc, "could not check the canaries")
if leaked:
    st.warning(
        f"This release contains {count_text(len(leaked))} canaries (single-user strings). They are part of the "
        "differentially private output, but the budget is far too loose for real use.",
        icon=_ui.ICONS["warning"],
    )

try:
    files = _downloads.release_files(
        state, record
    )  # built once per release: the report's date does not change between clicks
except Exception as exc:
    _ui.show_error(exc, "the export failed")
    st.stop()

m = st.columns(3)
m[0].metric("Items released", f"{rel.n_released:,}")
m[1].metric("Mechanism", cal.label)
counts = counts_of(cal)  # a release with noisy counts spent its items' part and its counts' part
m[2].metric(
    "Budget",
    f"ε={cal.epsilon:g}, δ={cal.delta:.1e}"
    if counts is None
    else f"ε={counts.total_epsilon:g}, δ={counts.total_delta:.1e} with counts",
)
for group, heading in (("items", "Released items"), ("report", "Release report")):
    st.markdown(f"**{heading}**")
    row = [f for f in files if f.group == group]
    for col, f in zip(st.columns(3), row):
        # on_click="ignore": the download does not rerun the page, so the file stays put while it downloads
        col.download_button(
            f.label,
            data=f.data,
            file_name=f.file_name,
            mime=f.mime,
            key=f"dl_{f.kind}",
            on_click="ignore",
            icon=_ui.ICONS["export"],
            width="stretch",
        )
st.markdown("**Tokenizer** (Hugging Face `tokenizers`, built from the released items only: post-processing)")
k1, k2, k3 = st.columns(3)
tok_model = k1.selectbox(
    OPTIONS["tokenizer_model"].label,
    MODELS,
    index=MODELS.index(DEFAULT_MODEL),
    key="tok_model",
    help="wordlevel: exactly the released words plus the special tokens. bpe, wordpiece, unigram: subwords trained "
    "on the released items only (their noisy counts as frequencies when the release has them).",
)
tok_specials = k2.text_input(
    "Special tokens",
    "",
    key="tok_specials",
    placeholder="[CLS],[SEP],[MASK]",
    help=f"Comma-separated, besides {' and '.join(DEFAULT_SPECIAL_TOKENS)} (always there); [CLS]/[SEP]/[MASK], "
    "<s>/</s> get their roles in transformers.",
)
tok_size = k3.number_input(
    OPTIONS["tokenizer_vocab_size"].label,
    **_ui.bounds("tokenizer_vocab_size"),
    value=DEFAULT_VOCAB_SIZE,
    step=1000,
    key="tok_size",
    disabled=tok_model == "wordlevel",
)
spec: TokenizerSpec | None = None  # the exported command redoes this tokenizer too
try:
    spec = TokenizerSpec.from_options(
        record.corpus.options,
        model=tok_model,
        special_tokens=parse_special_tokens(tok_specials),
        vocab_size=None if tok_model == "wordlevel" else int(tok_size),
    )
    tok_body, tok_report, built = _downloads.tokenizer_files(state, record, spec)
    # the folder inside is named like the zip (with the release's number): two releases never unzip into one folder
    tok_zip = directory_zip(directory_files(tok_body, built), f"{export_basename(rel, record.number)}_tokenizer")
except ImportError:
    spec = None
    st.info("The tokenizer download needs the tokenizers package: pip install 'dpsu[export]'.")
except Exception as exc:
    spec = None
    _ui.show_error(exc, "the tokenizer could not be built")
else:
    stem = export_basename(rel, record.number)
    d0, d1, d2 = st.columns(3)
    for col, (label, body, name, mime, key) in zip(
        (d0, d1, d2),
        (
            ("Tokenizer folder (.zip)", tok_zip, f"{stem}_tokenizer.zip", "application/zip", "dl_tokenizer_dir"),
            ("tokenizer.json", tok_body, f"{stem}_tokenizer.json", "application/json", "dl_tokenizer"),
            (
                "Report with the tokenizer (.md)",
                tok_report,
                f"{stem}_tokenizer_report.md",
                "text/markdown",
                "dl_tokenizer_report",
            ),
        ),
    ):
        col.download_button(
            label,
            data=body,
            file_name=name,
            mime=mime,
            key=key,
            on_click="ignore",
            icon=_ui.ICONS["export"],
            width="stretch",
        )
    st.caption(
        escape_markdown(
            f"{built['vocabulary_size']:,} entries: {built['trained_on']}. New text is split by {built['pre_tokenizer']}. "
            + whole_words_text(built)
        )
        + " Unzip the folder and load it with `AutoTokenizer.from_pretrained(folder)` (padding and batching work "
        "as loaded)."
    )

st.markdown("**Redo this release in batch** (every parameter, no seed: each run draws fresh noise and spends again)")
if not record.corpus.private or not record.corpus.input_name:
    st.info(
        "The command and script read the private corpus file: make the release on the private corpus first "
        "(a simulated or exploration corpus has no file to point at)."
    )
else:
    try:
        stem = export_basename(rel, record.number).replace("_TEACHING", "")
        # the public corpus this release used (recorded with it), not whichever the session holds now
        public = record.public.name if record.public is not None else None
        where = record.corpus
        out, rep = f"{stem}.csv", f"{stem}_report.json"
        how = record.public.options if record.public is not None else None  # its columns, as chosen in the app
        redo = Redo(
            cal,
            where.input_name,
            where.options,
            output=out,
            report=rep,
            public_corpus=public,
            public_options=how,
            tokenizer=spec,
            tokenizer_path=f"{stem}_tokenizer",
        )
        command, script = release_command(redo), release_script(redo)
        st.code(command, language="bash", wrap_lines=False)  # a line per flag: never wrapped inside a token
        c1, c2 = st.columns(2)
        c1.download_button(
            "Command line (.sh)",
            data=command_file(redo).encode(),
            file_name=f"{stem}_command.sh",
            mime="text/x-shellscript",
            key="dl_command",
            on_click="ignore",
            icon=_ui.ICONS["export"],
            width="stretch",
        )
        c2.download_button(
            "Python script (.py)",
            data=script.encode("utf-8"),
            file_name=f"{stem}_release.py",
            mime="text/x-python",
            key="dl_script",
            on_click="ignore",
            icon=_ui.ICONS["export"],
            width="stretch",
        )
        with st.expander("Python script"):
            st.code(script, language="python")
    except Exception as exc:
        _ui.show_error(exc, "the command cannot be written")
with st.expander("Report preview"):
    md = next(f for f in files if f.kind == "report_md")
    st.code(md.data.decode("utf-8"), language="markdown")
session_history()
kept_releases()
