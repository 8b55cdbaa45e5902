"""The app's exploration and GW-KT public corpora checked by the users' token sets (issue 36.2), through
AppTest: edits of the private file that dpsu's tokenizer ignores are refused with the share of its users found;
a file where 5% of the users are the private corpus's is explored with the warning; other users of the same
kind of text are explored in silence."""

from __future__ import annotations

import pytest

from pages import _account
from tests.app.test_pages import _go, _new, _ok, _state
from tests.app.test_upload_overlap import _errors, _explore_file, _load_private, _warnings
from tests.core.fingerprint_files import csv_bytes, demo_split, different, edits, five_percent, users_posts

ROWS, OTHERS = demo_split()
PRIVATE = csv_bytes(ROWS)
EDITED = edits(ROWS, OTHERS)


@pytest.fixture(scope="module")
def session():
    at = _new()
    _load_private(at, PRIVATE)
    return at


@pytest.mark.parametrize("name", ["numbered.csv", "html.csv", "words_shuffled.csv", "renamed_padded.csv"])
def test_an_edited_private_file_is_refused_as_the_exploration_corpus(session, name):
    at = session
    private_id = _state(at).corpus_id
    _go(at, "1_corpus")
    _explore_file(at, name, EDITED[name])
    (error,) = [e for e in _errors(at) if "by its users' words" in e]
    assert "the exploration corpus could not be made" in error and "this file is the private corpus" in error
    state = _state(at)
    assert not state.exploring and state.corpus_id == private_id and _account.spent(state).releases == 0


def test_an_edited_private_file_is_refused_as_gwkts_public_corpus(session):
    at = session
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("gw-kt")
    at.run()
    at.file_uploader(key="public_upload").upload("merged.csv", EDITED["merged.csv"], "application/octet-stream")
    at.run()
    _ok(at)
    at.button(key="public_use").click()
    at.run()
    (error,) = [e for e in _errors(at) if "by its users' words" in e]
    assert error.startswith("the public corpus cannot be read (using wordfreq instead): this file is the private")
    assert _state(at).public is None


def test_five_percent_of_the_users_is_a_warning_and_other_people_are_silent():
    at = _new()
    _load_private(at, PRIVATE)
    _go(at, "1_corpus")
    _explore_file(at, "five.csv", five_percent(ROWS, OTHERS))
    assert _state(at).exploring and _state(at).corpus_name == "exploration: five.csv"
    assert any("some of the private corpus's users are in this file" in w for w in _warnings(at))
    at = _new()
    _load_private(at, PRIVATE)
    _go(at, "1_corpus")
    _explore_file(at, "different.csv", different(OTHERS, len(users_posts(ROWS))))
    assert _state(at).corpus_name == "exploration: different.csv"
    assert not any("users' words" in w for w in _warnings(at))
