"""Issue 36 in a real browser: the durable ledger outlives the tab. A release on an uploaded corpus, a reload (a new
Streamlit session) and the same file uploaded again: the sidebar shows the spend. A second tab uploading a
shuffled copy of the file sees it too. Downloading the kept release again spends nothing."""

from __future__ import annotations

import random
import re

import pytest

from tests.e2e.test_browser import (
    RUN_TIMEOUT_MS,
    assert_no_traceback,
    go,
    load_upload,
    metric,
    new_page,
    shot,
    wait_idle,
)

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

HEADLINE = "ε spent (smallest valid bound)"


def _rows(n_users: int = 400) -> list[tuple[str, str]]:
    rng = random.Random()  # test data only: a corpus no earlier run of the shared server has seen
    words = [f"word{i}" for i in range(300)]
    return [(f"user{u}", " ".join(rng.sample(words, 12))) for u in range(n_users) for _ in range(2)]


def _csv(rows: list[tuple[str, str]]) -> bytes:
    return ("author,body\n" + "".join(f"{u},{t}\n" for u, t in rows)).encode()


def _spent(page) -> str:
    return metric(page, HEADLINE, where="stSidebar")


def test_reload_second_tab_and_redownload(browser, app_url, screenshots):
    rows = _rows()
    name = f"durable_{random.randrange(10**9)}.csv"
    ctx, page, _ = new_page(browser, app_url)
    try:
        load_upload(page, name, _csv(rows))
        expect(page.locator('[data-testid="stMain"]')).to_contain_text(f"new corpus '{name}'")
        go(page, "Release", "2 · Release")
        assert _spent(page) == "0"
        page.get_by_role("button", name="Run release").click()
        wait_idle(page)
        page.get_by_role("heading", name="Released set (private)").wait_for(timeout=RUN_TIMEOUT_MS)
        assert _spent(page) == "3"
        # a reload is a new session: the same file again meets the same account
        page.goto(app_url)
        page.get_by_role("heading", name="1 · Corpus").wait_for(timeout=RUN_TIMEOUT_MS)
        wait_idle(page)
        load_upload(page, name, _csv(rows))
        expect(page.locator('[data-testid="stMain"]')).to_contain_text(f"this is corpus '{name}'")
        assert _spent(page) == "3"
        shot(page, screenshots, "ledger_after_reload")
        # a second tab, a shuffled copy under another name: the same corpus, the same total
        tab = ctx.new_page()
        tab.goto(app_url)
        tab.get_by_role("heading", name="1 · Corpus").wait_for(timeout=RUN_TIMEOUT_MS)
        wait_idle(tab)
        shuffled = rows[:]
        random.Random(5).shuffle(shuffled)
        load_upload(tab, "copy.csv", _csv(shuffled))
        expect(tab.locator('[data-testid="stMain"]')).to_contain_text(f"this is corpus '{name}'")
        assert _spent(tab) == "3"
        # an identical request is offered before spending again; its download spends nothing
        go(tab, "Release", "2 · Release")
        expect(tab.locator('[data-testid="stMain"]')).to_contain_text("An identical release")
        with tab.expect_download(timeout=RUN_TIMEOUT_MS) as d:
            tab.locator('[class*="st-key-kept_csv_"] button').first.click()
        assert d.value.path() is not None
        wait_idle(tab)
        assert _spent(tab) == "3"
        expect(tab.get_by_role("button", name=re.compile("^Run release again"))).to_be_visible()
        shot(tab, screenshots, "ledger_identical_offer")
        assert_no_traceback(tab)
    finally:
        ctx.close()
