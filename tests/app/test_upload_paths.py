"""One upload path for the private corpus, the exploration file and GW-KT's public corpus (issue 16, points 4 and
6), through AppTest: the same column pickers for a public file with unknown column names; a "public" file holding
the private data refused on both public paths."""

from __future__ import annotations

import pandas as pd

from pages import _account, _workspace
from tests.app.test_pages import _confirm_spend, _go, _new, _ok, _state, _upload_and_load

PUBLIC_FLAGS = "  --public-corpus words.csv \\\n  --public-user-col handle \\\n  --public-text-col said \\\n"


def _public_posts() -> bytes:
    """A public file whose columns have no known name: nothing can be guessed."""
    frame = pd.DataFrame(
        {
            "handle": [f"p{i % 60}" for i in range(600)],
            "said": [f"public words number {i % 11} and more" for i in range(600)],
            "likes": [str(i % 5) for i in range(600)],
        }
    )
    return frame.to_csv(index=False).encode()


def _private_bytes(n_users: int = 40) -> bytes:
    """The bytes ``_upload_and_load`` uploads as the private corpus."""
    posts = pd.DataFrame(
        {
            "author": [f"u{i % n_users}" for i in range(5 * n_users)],
            "body": [f"the quick fox number {i % 7} jumps" for i in range(5 * n_users)],
        }
    )
    return posts.to_csv(index=False).encode()


def _explore_public(at, name: str, data: bytes) -> None:
    at.radio(key="explore_kind").set_value("public")
    at.run()
    at.file_uploader(key="explore_upload").upload(name, data, "text/csv")
    at.run()
    _ok(at)


def test_an_exploration_file_with_unknown_column_names_loads_after_choosing_its_columns():
    at = _new()
    _upload_and_load(at, "posts.csv", 40)
    private = _state(at).corpus
    _go(at, "1_corpus")
    _explore_public(at, "public.csv", _public_posts())
    assert at.selectbox(key="explore_user_col").value is None  # no known name: the user chooses
    facts = [d.value for d in at.dataframe if "distinct values" in d.value.columns]
    assert facts and facts[-1].set_index("column").loc["handle", "distinct values"] == 60
    at.button(key="explore_start").click()
    at.run()
    assert not _state(at).exploring  # no columns chosen yet: nothing loaded, and the box says so
    assert any("choose its columns" in e.value for e in at.error)
    at.selectbox(key="explore_user_col").set_value("handle")
    at.selectbox(key="explore_text_col").set_value("said")
    at.run()
    at.button(key="explore_start").click()
    at.run()
    _ok(at)
    state = _state(at)
    assert state.exploring and state.corpus.n_users == 60 and state.corpus.source.user_column == "handle"
    assert _workspace.private_work(state).corpus is private and _account.spent(state).releases == 0


def test_a_public_upload_holding_the_private_file_is_refused_on_both_paths():
    at = _new()
    _upload_and_load(at, "posts.csv", 40)
    private = _state(at).corpus
    # the exploration file: refused under another name, nothing explored
    _go(at, "1_corpus")
    _explore_public(at, "public_copy.csv", _private_bytes(40))
    assert any("exactly the private corpus's data" in e.value.replace("\\", "") for e in at.error)
    at.button(key="explore_start").click()
    at.run()
    assert not _state(at).exploring and _state(at).corpus is private
    # GW-KT's public corpus: refused, the frequencies stay wordfreq's
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("gw-kt")
    at.run()
    at.file_uploader(key="public_upload").upload("words.csv", _private_bytes(40), "text/csv")
    at.run()
    _ok(at)
    assert any("exactly the private corpus's data" in e.value.replace("\\", "") for e in at.error)
    assert not [b for b in at.button if b.key == "public_use"]
    assert _workspace.public_corpus(_state(at)) is None
    # a real public file is used once the user says so
    at.file_uploader(key="public_upload").upload("words.csv", _public_posts(), "text/csv")
    at.run()
    at.selectbox(key="public_user_col").set_value("handle")
    at.selectbox(key="public_text_col").set_value("said")
    at.run()
    at.button(key="public_use").click()
    at.run()
    _ok(at)
    public = _workspace.public_corpus(_state(at))
    assert public is not None and public.n_users == 60
    # its release's command reads the public file with the columns chosen here
    _confirm_spend(at)
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    _go(at, "7_export")
    (command,) = [c.value for c in at.code if c.value.startswith("dpsu release")]
    assert PUBLIC_FLAGS in command  # by the names chosen here, one flag per line
    # the session's public corpus later cleared: the release's command still names the file that release used
    state = _state(at)
    rec = _account.release_record(state)
    assert rec is not None and rec.public is not None
    state.public = None
    at.run()
    _ok(at)
    (command,) = [c.value for c in at.code if c.value.startswith("dpsu release")]
    assert PUBLIC_FLAGS in command


def test_a_public_corpus_that_becomes_the_private_one_is_dropped():
    """GW-KT's public corpus read from a file that is then loaded as the private corpus: wordfreq again."""
    from dpsu_core.corpus import LoadOptions, load_upload
    from dpsu_core.corpus.load import content_digest, read_upload
    from pages._state import UPLOAD_KEY, AppState, PublicCorpus

    data = _public_posts()
    raw = read_upload(data, "public.csv")
    public = load_upload(raw, "public.csv", LoadOptions(user_col="handle", text_col="said"))
    state = AppState()
    state.public = PublicCorpus(
        public, "public.csv", content_digest(raw), LoadOptions(user_col="handle", text_col="said")
    )
    other = load_upload(_private_bytes(), "posts.csv", LoadOptions())
    _workspace.set_corpus(
        state, other, "posts.csv", LoadOptions(), is_demo=False, canaries=[], dataset_key=UPLOAD_KEY + "0" * 32
    )
    assert _workspace.public_corpus(state) is public  # another file: kept
    _workspace.set_corpus(
        state,
        public,
        "public.csv",
        LoadOptions(),
        is_demo=False,
        canaries=[],
        dataset_key=UPLOAD_KEY + content_digest(raw),
    )
    assert state.public is None and _workspace.public_corpus(state) is None
