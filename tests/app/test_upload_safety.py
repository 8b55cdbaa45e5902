"""The Corpus page with hostile and large uploads (AppTest, the real app and core): an upload is unpacked once
per upload, a bomb is an error box and the previous corpus stays, a load above the session's memory budget
waits for "Load anyway", and the sidebar's Δ0 stops at its documented maximum."""

from __future__ import annotations

import io
import zipfile

from streamlit.testing.v1 import AppTest

from dpsu_core.corpus.limits import SESSION_BUDGET_ENV
from dpsu_core.params import PARAMS
from pages._state import STATE_KEY, AppState

APP = "../../app.py"
TIMEOUT = 120
CSV = "author,body\n" + "".join(f"u{i % 40},the quick fox number {i % 7} jumps\n" for i in range(200))


def _zip(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, data)
    return buf.getvalue()


def _upload_page(name: str, data: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload(name, data, "application/octet-stream")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _state(at: AppTest) -> AppState:
    return at.session_state[STATE_KEY]


def test_zip_upload_unpacked_once_across_reruns():
    at = _upload_page("posts.zip", _zip("posts.csv", CSV.encode()))
    cache = _state(at).uploads["private"].cache
    assert cache is not None and cache.raw.data == CSV.encode() and cache.raw.name == "posts.csv"
    raw, digest = cache.raw, cache.digest
    at.selectbox(key="has_header").set_value("yes")  # reruns with another preview
    at.run()
    at.selectbox(key="has_header").set_value("auto")
    at.run()
    assert not at.exception
    assert (
        _state(at).uploads["private"].cache.raw is raw and _state(at).uploads["private"].cache.digest == digest
    )  # nothing unpacked or hashed again
    at.button(key="load_corpus").click()
    at.run()
    assert not at.exception
    assert _state(at).corpus.n_users == 40 and _state(at).corpus_name == "posts.zip"
    # the rerun after the load sees the same file in the uploader: still not unpacked again
    assert _state(at).uploads["private"].cache.raw is raw


def test_zip_bomb_upload_is_an_error_box_and_the_corpus_stays():
    bomb = _zip("posts.csv", b"u1,alpha beta\n" * 2_000_000)  # 28 MB of text in ~30 KB
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    corpus, cid = _state(at).corpus, _state(at).corpus_id
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload("bomb.zip", bomb, "application/zip")
    at.run()
    assert not at.exception
    assert any("zip bomb" in e.value for e in at.error), [e.value for e in at.error]
    assert _state(at).uploads["private"].cache is None  # nothing of the bomb is kept
    assert at.button(key="load_corpus").disabled  # nothing to load
    assert _state(at).corpus is corpus and _state(at).corpus_id == cid


def test_load_above_the_memory_budget_waits_for_confirmation(monkeypatch):
    monkeypatch.setenv(SESSION_BUDGET_ENV, "0.01")  # 10 KB: the small CSV is "too large"
    at = _upload_page("posts.csv", CSV.encode())
    assert any("memory" in w.value and SESSION_BUDGET_ENV in w.value for w in at.warning)
    before = _state(at).corpus_id
    at.button(key="load_corpus").click()
    at.run()
    assert not at.exception
    assert _state(at).corpus_id == before and _state(at).uploads["private"].pending_load is not None  # not loaded yet
    at.button(key="load_over_budget").click()
    at.run()
    assert not at.exception
    assert _state(at).corpus_id == before + 1 and _state(at).corpus_name == "posts.csv"
    assert _state(at).uploads["private"].pending_load is None


def test_load_within_the_budget_has_no_warning(monkeypatch):
    monkeypatch.setenv(SESSION_BUDGET_ENV, "100")
    at = _upload_page("posts.csv", CSV.encode())
    assert not any("memory" in w.value for w in at.warning)
    at.button(key="load_corpus").click()
    at.run()
    assert _state(at).corpus_name == "posts.csv" and _state(at).uploads["private"].pending_load is None


def test_sidebar_delta0_bounded_by_its_spec():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    box = at.number_input(key="max_items")
    assert box.max == PARAMS["max_items"].maximum == 1_000_000
    box.set_value(10**8)  # beyond the maximum: the widget refuses it, the app keeps running
    at.run()
    assert not at.exception
    assert _state(at).budget.max_items <= 1_000_000


def test_one_load_it_anyway_for_the_exploration_and_public_corpus(monkeypatch):
    """The exploration file and GW-KT's public corpus above the memory budget wait for the same "Load anyway"
    as the private corpus (issue 31.3: one load flow), under their own keys; "Cancel" drops the wait."""
    monkeypatch.setenv(SESSION_BUDGET_ENV, "0.01")
    public = "author,body\n" + "".join(f"p{i % 30},public words number {i % 11} here\n" for i in range(300))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.radio(key="explore_kind").set_value("public")
    at.run()
    at.file_uploader(key="explore_upload").upload("public.csv", public.encode(), "text/csv")
    at.run()
    at.button(key="explore_start").click()
    at.run()
    assert not at.exception and not _state(at).exploring
    assert _state(at).uploads["explore"].pending_load is not None
    assert any("Load it anyway?" in w.value for w in at.warning)
    at.button(key="explore_load_over_budget").click()
    at.run()
    assert not at.exception
    assert _state(at).exploring and _state(at).corpus_name == "exploration: public.csv"
    assert _state(at).uploads["explore"].pending_load is None
    # GW-KT's public corpus: the same question; Cancel, then yes
    at.switch_page("pages/2_release.py")
    at.run()
    at.selectbox(key="mechanism").set_value("gw-kt")
    at.run()
    at.file_uploader(key="public_upload").upload("words.csv", public.encode(), "text/csv")
    at.run()
    at.button(key="public_use").click()
    at.run()
    assert _state(at).public is None and _state(at).uploads["public"].pending_load is not None
    at.button(key="public_cancel_over_budget").click()
    at.run()
    assert _state(at).uploads["public"].pending_load is None and _state(at).public is None
    at.button(key="public_use").click()
    at.run()
    at.button(key="public_load_over_budget").click()
    at.run()
    assert not at.exception
    assert _state(at).public is not None and _state(at).public.corpus.n_users == 30
