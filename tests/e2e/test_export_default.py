"""Issue 39, item 7 in Chromium: Export's default release is one made on the file in use. File A is loaded and
released, then file B, then A again: Export preselects A's release, and its command to redo it reads A's file, never
B's (B's release stays a choice)."""

from __future__ import annotations

import pytest

from tests.e2e.sessions import small_corpus
from tests.e2e.test_browser import (
    assert_no_traceback,
    go,
    load_upload,
    new_page,
    run_release,
    selectbox_value,
    shot,
)

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

FILE_A = ("routes_a.csv", small_corpus("qzroutea", n_users=120))
FILE_B = ("routes_b.csv", small_corpus("qzrouteb", n_users=120))


def test_export_defaults_to_the_release_on_the_file_loaded_again(browser, app_url, screenshots):
    ctx, page, _ = new_page(browser, app_url)
    try:
        for n, (name, data) in enumerate((FILE_A, FILE_B), start=1):
            if n > 1:
                go(page, "Corpus", "1 · Corpus")
            load_upload(page, name, data)
            go(page, "Release", "2 · Release")
            run_release(page)
            expect(page.get_by_text(f"Showing release #{n} ·", exact=False)).to_be_visible()
        go(page, "Corpus", "1 · Corpus")
        load_upload(page, *FILE_A)  # A again: a new load of the same file
        go(page, "Export", "7 · Export")
        assert selectbox_value(page, "Release to export").startswith("#1 · ")
        expect(page.get_by_text("Made on an earlier load of the same file.", exact=False)).to_be_visible()
        command = page.locator('[data-testid="stCode"]', has_text="dpsu release").first.inner_text()
        assert FILE_A[0] in command and FILE_B[0] not in command, command
        page.get_by_role("combobox", name="Release to export", exact=True).click()  # B's release is still offered
        expect(page.get_by_role("option", name="#2 · ", exact=False)).to_have_count(1)
        page.keyboard.press("Escape")
        assert_no_traceback(page)
        shot(page, screenshots, "export_default_same_file")
    finally:
        ctx.close()
