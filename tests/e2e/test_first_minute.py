"""The first minute in a real browser (issue 39, items 9, 10 and 12): a cold first open lists nothing internal and
shows the menu and a loading note before the page; English text gets no call to install the Chinese or Korean
segmenter; teaching mode on the bundled public demo asks for no spend confirmation and the sidebar says nothing
private was spent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpsu_core.accounting.spend import PUBLIC_DEMO_SPENT
from tests.e2e.conftest import streamlit_server_process
from tests.e2e.first_paint import PAGE_TITLES, open_app
from tests.e2e.test_browser import RUN_TIMEOUT_MS, assert_no_traceback, go, metric, new_page, upload, wait_idle

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


def test_a_cold_first_open_lists_nothing_internal_and_shows_the_menu_first(browser, fresh_app_url):
    opened = open_app(browser, fresh_app_url)  # a new server: this request imports the library
    # the app's eight pages, and never a link Streamlit's automatic menu would add (_format, _run, _state, ...)
    assert set(opened.seen_links) == set(PAGE_TITLES), opened.seen_links
    assert opened.menu_ms <= opened.useful_ms and opened.loading_note, opened


def test_teaching_mode_on_the_public_demo_asks_nothing_and_spends_nothing_private(browser, app_url):
    ctx, page, _ = new_page(browser, app_url)
    try:
        page.locator(".st-key-teaching label").click()
        wait_idle(page)
        go(page, "Release", "2 · Release")
        expect(page.get_by_text("Yes, release anyway", exact=False)).to_have_count(0)
        expect(page.get_by_text(PUBLIC_DEMO_SPENT, exact=False).first).to_be_visible()  # the cost line says why
        page.get_by_role("button", name="Run release").click()
        wait_idle(page)
        assert_no_traceback(page)
        assert metric(page, "ε spent", where="stSidebar") == PUBLIC_DEMO_SPENT
        assert (
            "no DP guarantee"
            not in page.locator('[data-testid="stSidebar"] [data-testid="stMetric"]').first.inner_text()
        )
        expect(page.get_by_text("Yes, release anyway", exact=False)).to_have_count(0)  # nor for the next one
    finally:
        ctx.close()


def _hidden_segmenters(folder: Path) -> Path:
    """A folder whose modules shadow the Chinese and Korean segmenters with an ImportError: as if not installed."""
    folder.mkdir()
    for name in ("rjieba", "jieba", "kiwipiepy"):
        (folder / f"{name}.py").write_text("raise ImportError('hidden by the test: as if not installed')\n")
    return folder


def test_english_text_gets_no_call_to_install_segmenters(browser, tmp_path):
    hidden = _hidden_segmenters(tmp_path / "hidden")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(hidden), os.environ.get("PYTHONPATH")) if p)}
    rows = ["user,text"] + [f"u{u},the flight {u % 9} was late again and the crew was kind" for u in range(300)]
    rows += ["u1,北京 was lovely", "u2,학교에 later"]  # one Han word and one Hangul word in 302 posts
    with streamlit_server_process(tmp_path, env=env) as (url, _proc):
        ctx, page, _ = new_page(browser, url)
        try:
            page.get_by_text("Upload a file", exact=True).click()
            wait_idle(page)
            upload(page, "tweets.csv", ("\n".join(rows) + "\n").encode())
            page.get_by_role("button", name="Load corpus").click()
            page.get_by_text("Corpus loaded.", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
            wait_idle(page)
            assert_no_traceback(page)
            warnings = page.locator('[data-testid="stAlertContentWarning"]').all_inner_texts()
            assert not [w for w in warnings if "not installed" in w or "pip install" in w], warnings
            captions = " ".join(page.locator('[data-testid="stCaptionContainer"]').all_inner_texts())
            assert "Chinese text is 0." in captions and "Korean text is 0." in captions, captions
        finally:
            ctx.close()
