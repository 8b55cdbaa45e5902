"""End-to-end: the 'Neighbouring corpora' teaching view in a real browser (Debian chromium via Playwright)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_browser import RUN_TIMEOUT_MS, assert_no_traceback, errors, go, metric, new_page, shot, wait_idle

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect


def test_teaching_view_shows_probabilities_and_dprime_inside_the_band(browser, app_url, screenshots):
    ctx, page, _ = new_page(browser, app_url)
    try:
        # the demo corpus at the sidebar's sane budget (ε = 3, δ = 1e-6); D′ = D plus a user holding a canary
        go(page, "Neighbouring corpora", "8 · Neighbouring corpora")
        page.get_by_text("one new user added (type the words)", exact=True).click()
        wait_idle(page)
        text = page.locator(".st-key-nb_text textarea")
        text.fill("my secret canary zqxwv lives at 42 quiet lane")
        text.press("Control+Enter")
        wait_idle(page)
        expect(page.get_by_text(re.compile(r"D′ = D plus a new user with \d+ distinct items"))).to_be_visible()
        expect(page.get_by_text("One click makes 400 releases: 200 on D and 200 on D′.")).to_be_visible()
        expect(
            page.get_by_text(re.compile(r"400 releases on demo corpus \(synthetic\), not your private corpus"))
        ).to_be_visible()
        page.get_by_role("button", name="Run on D and D′").click()
        wait_idle(page)
        page.get_by_role("heading", name=re.compile("Policy Gaussian: D′ = D plus")).wait_for(timeout=RUN_TIMEOUT_MS)
        assert_no_traceback(page)
        assert errors(page) == []
        n_items = int(metric(page, "Items of the user"))
        assert n_items >= 5
        # the definition holds: every item's D′ rate lies in the e^ε band around its D rate
        assert metric(page, "Inside the DP band") == f"{n_items} of {n_items}"
        expect(page.get_by_text(re.compile(r"stays inside the band e\^ε·P_D \+ δ"))).to_be_visible()
        # the probabilities are drawn (band chart and privacy-loss histogram) and tabled
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        charts.nth(1).wait_for(timeout=RUN_TIMEOUT_MS)
        assert charts.count() >= 2
        expect(page.get_by_text(re.compile(r"Release probability per item"))).to_be_visible()
        page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').first.wait_for(timeout=RUN_TIMEOUT_MS)
        # by default D is the demo as a teaching corpus: the runs spend nothing on the private corpus
        assert metric(page, "ε spent (smallest valid bound)", where="stSidebar") == "0"
        shot(page, screenshots, "neighbours")
    finally:
        ctx.close()
