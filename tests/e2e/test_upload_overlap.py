"""End-to-end (issue 27.1) in a real browser (Debian chromium via Playwright): the private file with its line
endings changed (CRLF to LF: other bytes, the same users and posts) is refused as the exploration corpus with one
error line saying how much overlaps, and nothing is explored; a file sharing 5% of its posts is explored with a
warning giving the figure."""

from __future__ import annotations

import re

import pytest

from tests.core.overlap_files import copies, csv_bytes, five_percent, private_rows
from tests.e2e.test_browser import assert_no_traceback, errors, new_page, shot, wait_idle
from tests.e2e.test_upload_paths import _upload_to, load_then_explore_a_file

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


def test_an_lf_copy_is_refused_and_a_five_percent_file_explored_with_its_figure(browser, app_url, screenshots):
    rows = private_rows()
    ctx, page, _ = new_page(browser, app_url)
    try:
        load_then_explore_a_file(page, "private.csv", csv_bytes(rows))
        # the private file with LF line endings: other bytes, so only the content check can refuse it
        _upload_to(page, "explore_upload", "public_lf.csv", copies(rows)["lf.csv"])
        assert errors(page) == []  # the byte check at upload lets it through
        page.get_by_role("button", name="Explore on this corpus").click()
        wait_idle(page)
        (error,) = [e for e in errors(page) if "by its users' words" in e]
        assert "this file is the private corpus, by its users' words after tokenizing" in error and "PUBLIC" in error
        expect(page.get_by_text(re.compile("^Exploring on"))).to_have_count(0)
        shot(page, screenshots, "explore_lf_copy_refused")
        # a file sharing 5% of its posts (under other users): explored, with the figure
        _upload_to(page, "explore_upload", "five.csv", five_percent(rows))
        page.get_by_role("button", name="Explore on this corpus").click()
        wait_idle(page)
        expect(page.get_by_text(re.compile("^Exploring on exploration: five.csv"))).to_be_visible()
        expect(page.get_by_text(re.compile(r"5\.0% of its distinct posts \(100 of 2,000\)"))).to_be_visible()
        shot(page, screenshots, "explore_five_percent_warned")
        assert_no_traceback(page)
    finally:
        ctx.close()
