"""Issue 37, item 4 in Chromium: two analysts signed in at once (two browser contexts, the app with sign-in against
oidc-provider-mock) each upload a corpus of their own words. Each one's preview, released items and downloaded export
hold their own corpus's words only, and neither's pages show any trace of the other's upload (file name, user ids,
words), before or after the other loads and releases."""

from __future__ import annotations

import csv
import io
import itertools
import re
from dataclasses import dataclass

import pytest

from tests.e2e.test_browser import (
    RUN_TIMEOUT_MS,
    assert_no_traceback,
    download,
    go,
    load_upload,
    run_release,
    selectbox_value,
    wait_idle,
)

pytestmark = pytest.mark.e2e
pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytest.importorskip("oidc_provider_mock", reason="oidc-provider-mock is not installed")
pytest.importorskip("authlib", reason="streamlit[auth] (Authlib) is not installed")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e.signin import ANALYST, ANALYST2, offline, sign_in  # noqa: E402

USERS = 60  # every user writes all the corpus's words: each is surely released at the default ε = 3


@dataclass(frozen=True)
class Upload:
    file: str
    user_prefix: str
    words: tuple[str, ...]  # the last one is the corpus's canary: a word no other corpus holds

    def data(self) -> bytes:
        """Two posts per user, each the corpus's words in one of their 24 orders (posts, not a label column)."""
        orders = list(itertools.permutations(self.words))
        rows = (f"{self.user_prefix}{k // 2:03d},{' '.join(orders[k % len(orders)])}\n" for k in range(2 * USERS))
        return ("author,body\n" + "".join(rows)).encode()

    def traces(self) -> tuple[str, ...]:
        """What of this upload may show on a page: its file name, its user ids and its words."""
        return (self.file, self.user_prefix, *self.words)


ANN = Upload("ann_private_corpus.csv", "annuser", ("river", "stone", "maple", "qzanncanary"))
BEA = Upload("bea_private_corpus.csv", "beauser", ("ocean", "cloud", "amber", "qzbeacanary"))


def _cells(page) -> set[str]:
    """The cells of the page's data frames (drawn on a canvas; their visible cells are in the accessible grid)."""
    cells = page.locator('[data-testid="stDataFrame"] [role="gridcell"]')
    expect(cells.first).to_be_attached()
    return {c.strip() for c in cells.all_inner_texts()}


def _shown(page) -> str:
    """Every text of the page: its elements' and its data frames' cells."""
    cells = page.locator('[data-testid="stDataFrame"] [role="gridcell"]').all_inner_texts()
    return page.locator("body").inner_text() + "\n" + "\n".join(cells)


def _no_trace(page, other: Upload) -> None:
    text = _shown(page)
    found = [t for t in other.traces() if t in text]
    assert not found, f"{found} of the other analyst's upload on the page"


def _load_and_release(page, own: Upload, other: Upload) -> None:
    """Upload and load ``own``: its preview shows its rows and nothing of ``other``; release: the released items
    are its own words."""
    load_upload(page, own.file, own.data())
    preview = _cells(page)  # the preview's first rows (and the column facts)
    assert f"{own.user_prefix}000" in preview and " ".join(own.words) in preview
    _no_trace(page, other)
    go(page, "Release", "2 · Release")
    run_release(page)
    assert set(own.words) <= _cells(page)  # in the released items' table
    _no_trace(page, other)


def _export(page, own: Upload, other: Upload) -> None:
    """Export page: the only release offered is this analyst's, and its CSV holds their own words only."""
    go(page, "Export", "7 · Export")
    assert selectbox_value(page, "Release to export").startswith("#1 · ")
    page.get_by_role("combobox", name="Release to export", exact=True).click()
    expect(page.get_by_role("option")).to_have_count(1)
    page.keyboard.press("Escape")
    wait_idle(page)
    body = download(page, "Released items (CSV)").decode("utf-8")
    items = {row[0] for row in list(csv.reader(io.StringIO(body)))[1:]}
    assert set(own.words) <= items and not {w for i in items for w in i.split()} - set(own.words), items
    assert not [t for t in other.traces() if t in body]
    assert not re.search(own.user_prefix, body)  # nor their own users' ids
    _no_trace(page, other)


def test_two_analysts_never_see_each_others_upload_preview_release_or_export(browser, signin_app):
    url, _ledger = signin_app
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True) for _ in "ab"]
    try:
        ann, bea = (ctx.new_page() for ctx in contexts)
        for ctx, page in zip(contexts, (ann, bea)):
            offline(ctx)
            page.set_default_timeout(RUN_TIMEOUT_MS)  # two sessions' reruns on a shared machine
        sign_in(ann, url, ANALYST[0])
        _load_and_release(ann, ANN, BEA)

        # Bea signs in while Ann's corpus is loaded and released: nothing of it on her pages
        sign_in(bea, url, ANALYST2[0])
        _no_trace(bea, ANN)
        bea.get_by_text("Upload a file", exact=True).click()
        wait_idle(bea)
        expect(bea.locator('[data-testid="stFileUploaderDropzoneInput"]')).to_be_attached()
        expect(bea.locator('[data-testid="stFileChip"]')).to_have_count(0)
        _no_trace(bea, ANN)
        for title, heading in (("Release", "2 · Release"), ("Export", "7 · Export")):
            go(bea, title, heading)
            _no_trace(bea, ANN)
        expect(bea.get_by_role("combobox", name="Release to export", exact=True)).to_have_count(0)
        go(bea, "Corpus", "1 · Corpus")
        _load_and_release(bea, BEA, ANN)
        _export(bea, BEA, ANN)

        # Ann's session after Bea's: her own release and file, nothing of Bea's
        _export(ann, ANN, BEA)
        go(ann, "Corpus", "1 · Corpus")
        assert f"{ANN.user_prefix}000" in _cells(ann)
        _no_trace(ann, BEA)
        assert_no_traceback(ann)
        assert_no_traceback(bea)
    finally:
        for ctx in contexts:
            ctx.close()
