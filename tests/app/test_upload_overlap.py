"""Public files checked by content against the private corpus in the app (issue 27.1), through AppTest: the
private file with its line endings changed, its rows shuffled, one row added, or as JSON Lines is refused as the
exploration corpus and as GW-KT's public corpus (an error box saying it is the private corpus by its users' words,
issue 36.2; nothing explored, the
frequencies stay wordfreq's); a file sharing 5% of its posts is used on both paths with a warning giving the
figure; a public corpus in use goes when the private corpus loaded later is its data."""

from __future__ import annotations

import pytest

from pages import _account, _workspace
from tests.app.test_pages import _go, _new, _ok, _state
from tests.core.overlap_files import copies, csv_bytes, five_percent, private_rows

ROWS = private_rows()
PRIVATE = csv_bytes(ROWS)
COPIES = copies(ROWS)


def _load_private(at, data: bytes = PRIVATE, name: str = "private.csv") -> None:
    _go(at, "1_corpus")
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload(name, data, "text/csv")
    at.run()
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert _state(at).corpus_name == name


def _explore_file(at, name: str, data: bytes) -> None:
    at.radio(key="explore_kind").set_value("public")
    at.run()
    at.file_uploader(key="explore_upload").upload(name, data, "application/octet-stream")
    at.run()
    _ok(at)
    at.button(key="explore_start").click()
    at.run()
    _ok(at)


def _errors(at) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]


def _warnings(at) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]


@pytest.fixture(scope="module")
def session():
    at = _new()
    _load_private(at)
    return at


@pytest.mark.parametrize("name", sorted(COPIES))
def test_a_copy_of_the_private_file_is_refused_as_the_exploration_corpus(session, name):
    at = session
    private_id = _state(at).corpus_id
    _go(at, "1_corpus")
    _explore_file(at, name, COPIES[name])
    (error,) = [e for e in _errors(at) if "by its users' words" in e]
    assert "the exploration corpus could not be made" in error
    assert "this file is the private corpus, by its users' words after tokenizing" in error and "PUBLIC" in error
    state = _state(at)
    assert not state.exploring and state.corpus_id == private_id and _account.spent(state).releases == 0


@pytest.mark.parametrize("name", sorted(COPIES))
def test_a_copy_of_the_private_file_is_refused_as_gwkts_public_corpus(session, name):
    at = session
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("gw-kt")
    at.run()
    at.file_uploader(key="public_upload").upload(name, COPIES[name], "application/octet-stream")
    at.run()
    _ok(at)
    at.button(key="public_use").click()
    at.run()
    _ok(at)
    (error,) = [e for e in _errors(at) if "by its users' words" in e]
    assert error.startswith(
        "the public corpus cannot be read (using wordfreq instead): this file is the private corpus"
    )
    assert _state(at).public is None and _workspace.public_corpus(_state(at)) is None
    assert any("wordfreq's English list" in c.value for c in at.caption)


def test_a_file_sharing_five_percent_is_used_on_both_paths_with_the_figure():
    at = _new()
    _load_private(at)
    five = five_percent(ROWS)
    figure = "5.0% of its distinct posts (100 of 2,000) and 0 of its (user, post) pairs"
    # GW-KT's public corpus
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("gw-kt")
    at.run()
    at.file_uploader(key="public_upload").upload("five.csv", five, "text/csv")
    at.run()
    at.button(key="public_use").click()
    at.run()
    _ok(at)
    public = _state(at).public
    assert public is not None and public.corpus.n_users == 200 and not _errors(at)
    (warning,) = [w for w in _warnings(at) if figure in w]
    assert warning.startswith("five.csv: ") and "raw data, NOT private" in warning
    # the exploration corpus
    _go(at, "1_corpus")
    _explore_file(at, "five.csv", five)
    state = _state(at)
    assert state.exploring and state.corpus_name == "exploration: five.csv" and state.corpus.n_users == 200
    assert any(figure in w for w in _warnings(at))
    assert _account.spent(state).releases == 0


def test_a_public_corpus_goes_when_its_data_becomes_the_private_corpus():
    at = _new()
    _load_private(at)
    five = five_percent(ROWS)
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("gw-kt")
    at.run()
    at.file_uploader(key="public_upload").upload("five.csv", five, "text/csv")
    at.run()
    at.button(key="public_use").click()
    at.run()
    assert _state(at).public is not None
    # another private file that shares most of the public file's posts (re-formatted: not the same bytes)
    _load_private(at, five.replace(b"\n", b"\r\n"), "other.csv")
    assert _state(at).public is None
