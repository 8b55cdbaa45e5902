"""End-to-end (issue 16, points 4 to 6) in a real browser (Debian chromium via Playwright): the column facts of an
airline-tweets file count its whole file (7,200 users, a malformed row and an over-long post within its first 5,000
rows), a category chosen as the user is warned about before loading; an exploration file with unknown column names
loads after choosing its columns; a "public" file holding the private data is refused."""

from __future__ import annotations

import re

import pytest

from tests.column_fixtures import AIRLINE_ROWS, airline_tweets
from tests.e2e.corpus_files import good_csv
from tests.e2e.test_browser import RUN_TIMEOUT_MS, assert_no_traceback, errors, new_page, shot, wait_idle

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


def _upload_to(page, key: str, name: str, data: bytes) -> None:
    """Upload into the uploader with widget key ``key`` (the page may show several)."""
    box = page.locator(f".st-key-{key}")
    box.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        {"name": name, "mimeType": "text/csv", "buffer": data}
    )
    expect(box.locator('[data-testid="stFileChip"]').first).to_have_attribute(
        "aria-label", re.compile("^" + re.escape(name) + ", "), timeout=RUN_TIMEOUT_MS
    )
    wait_idle(page)


def load_then_explore_a_file(page, name: str, data: bytes) -> None:
    """Load ``data`` as the private corpus, then open the exploration box on "A public file"."""
    page.get_by_text("Upload a file", exact=True).click()
    wait_idle(page)
    _upload_to(page, "upload", name, data)
    page.get_by_role("button", name="Load corpus").click()
    wait_idle(page)
    page.get_by_text("Corpus loaded.", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    page.get_by_text("Explore before spending", exact=False).click()
    wait_idle(page)
    page.get_by_text("A public file", exact=True).click()
    wait_idle(page)


def _choose(page, key: str, option: str) -> None:
    box = page.locator(f".st-key-{key} input")
    box.click()
    choice = page.get_by_role("option", name=option, exact=True)
    try:
        choice.wait_for(timeout=2000)
    except Exception:  # noqa: BLE001  (the first click only focused the box: open its list from the keyboard)
        box.press("ArrowDown")
    choice.click()
    wait_idle(page)


def test_column_facts_count_the_whole_file_and_warn_on_a_category_user(browser, app_url, screenshots):
    ctx, page, _ = new_page(browser, app_url)
    try:
        page.get_by_text("Upload a file", exact=True).click()
        wait_idle(page)
        _upload_to(page, "upload", "airline.csv", airline_tweets())
        _choose(page, "user_col", "name")
        _choose(page, "text_col", "text")
        main = page.locator('[data-testid="stMain"]')
        expect(main.get_by_text(f"Per column, over all {AIRLINE_ROWS + 1:,} rows of the file")).to_be_visible()
        expect(main.get_by_text("1 malformed rows (wrong number of fields) were skipped")).to_be_visible()
        # the table's cells are drawn on a canvas: its counts are checked through AppTest
        # (tests/app/test_corpus_page.py); here the page says which rows they cover, and the screenshot shows them
        shot(page, screenshots, "upload_column_facts")
        _choose(page, "user_col", "airline")
        warning = main.locator('[data-testid="stAlertContentWarning"]').filter(has_text="distinct values over")
        expect(warning).to_contain_text(f"has only 6 distinct values over {AIRLINE_ROWS + 1:,} rows")
        expect(warning).to_contain_text("category")
        expect(warning).not_to_contain_text("placeholder")
        shot(page, screenshots, "upload_category_user")
        assert_no_traceback(page)
    finally:
        ctx.close()


def test_exploration_file_with_unknown_columns_and_a_private_copy_refused(browser, app_url, screenshots):
    ctx, page, _ = new_page(browser, app_url)
    try:
        load_then_explore_a_file(page, "posts.csv", good_csv())
        expect(page.locator(".st-key-explore_upload")).to_be_visible()  # the expander stays open
        # the private file under another name: refused
        _upload_to(page, "explore_upload", "public_copy.csv", good_csv())
        assert any("exactly the private corpus" in e for e in errors(page)), errors(page)
        shot(page, screenshots, "explore_private_copy_refused")
        # a public file whose columns have no known name: the same pickers as the private upload
        public = "".join(f"p{i % 50},public words number {i % 13} here\n" for i in range(500))
        _upload_to(page, "explore_upload", "public.csv", ("handle,said\n" + public).encode())
        assert errors(page) == []
        _choose(page, "explore_user_col", "handle")
        _choose(page, "explore_text_col", "said")
        page.get_by_role("button", name="Explore on this corpus").click()
        wait_idle(page)
        expect(page.get_by_text(re.compile("^Exploring on exploration: public.csv"))).to_be_visible()
        assert_no_traceback(page)
    finally:
        ctx.close()


def test_mailbox_pattern_keeps_the_text_column_shown(browser, app_url, screenshots):
    """Issue 27, point 6: on an e-mail file (``file``, ``message``) the text-column picker showed its placeholder
    after a user pattern was typed, while ``message`` was still the column in use."""
    from tests.column_fixtures import emails

    ctx, page, _ = new_page(browser, app_url)
    try:
        page.get_by_text("Upload a file", exact=True).click()
        wait_idle(page)
        _upload_to(page, "upload", "emails.csv", emails())
        text_box = page.locator(".st-key-text_col input")
        expect(text_box).to_have_value("message")
        _choose(page, "user_col", "file")
        expect(text_box).to_have_value("message")
        pattern = page.locator(".st-key-user_pattern input")
        pattern.fill("^([^/]+)/")
        pattern.press("Enter")
        wait_idle(page)
        expect(text_box).to_have_value("message")
        shot(page, screenshots, "upload_mailbox_pattern")
        page.get_by_role("button", name="Load corpus").click()
        wait_idle(page)
        page.get_by_text("Corpus loaded.", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
        expect(text_box).to_have_value("message")
        assert_no_traceback(page)
    finally:
        ctx.close()
