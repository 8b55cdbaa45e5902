"""End-to-end (issue 16): one session, many releases, in a real browser (Debian chromium via Playwright).

Two releases on two pages with Export still offering the first and a choice of both; the sidebar's total right
after a spend; Compare asking again after it spent; one click on Neighbouring corpora with its defaults spending
nothing on the private corpus; teaching mode refused on the private corpus."""

from __future__ import annotations

import contextlib
import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.e2e.corpus_files import good_csv
from tests.e2e.test_browser import (
    RUN_TIMEOUT_MS,
    assert_no_traceback,
    go,
    metric,
    new_page,
    selectbox_value,
    shot,
    upload,
    wait_idle,
)

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

HEADLINE = "ε spent (smallest valid bound)"


def _spent(page) -> str:
    return metric(page, HEADLINE, where="stSidebar")


def _raise(page):
    """The spend gate's "Confirm a new session budget" button (an action past the session budget)."""
    return page.locator('[data-testid="stMain"] [class*="st-key-raise_budget_"] button')


def _set_session_budget(page, epsilon: str, delta: str) -> None:
    """Type a session budget into the sidebar and confirm it."""
    for key, value in (("session_epsilon", epsilon), ("session_delta", delta)):
        box = page.locator(f'[data-testid="stSidebar"] .st-key-{key} input')
        box.fill(value)
        box.press("Enter")
        wait_idle(page)
    page.get_by_role("button", name="Confirm session budget").click()
    wait_idle(page)
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text(f"In force: ε = {epsilon}")


def test_two_releases_two_pages_export_keeps_the_first_and_every_spend_is_asked(browser, app_url, screenshots):
    ctx, page, _ = new_page(browser, app_url)
    try:
        # 0. A session budget of ε = 3 (δ = 1e-5), apart from each release's ε = 3.
        _set_session_budget(page, "3", "1e-05")
        # 1. A release on the Release page (the demo corpus, ε = 3 from the sidebar): the sidebar shows it at once.
        go(page, "Release", "2 · Release")
        assert _spent(page) == "0"
        page.get_by_role("button", name="Run release").click()
        wait_idle(page)
        page.get_by_role("heading", name="Released set (private)").wait_for(timeout=RUN_TIMEOUT_MS)
        assert _spent(page) == "3"
        first = page.get_by_text(re.compile(r"^Showing release #1 · Policy Gaussian")).inner_text()
        # 2. Histogram fill runs a second mechanism: past the session budget, so it is blocked until a new budget.
        go(page, "Histogram fill", "4 · Histogram fill")
        run = page.get_by_role("button", name=re.compile(r"^Run \d+ missing release"))
        for attempt in range(3):  # under load the list can close before the option's click lands: pick it again
            page.locator(".st-key-hist_mechanisms input").click()
            with contextlib.suppress(PlaywrightTimeoutError):  # not in the list: already picked (it leaves the list)
                page.get_by_role("option", name=re.compile("^Weighted Gaussian")).click(timeout=10_000)
            page.keyboard.press("Escape")  # close the list
            wait_idle(page)
            try:
                run.wait_for(timeout=RUN_TIMEOUT_MS // 3)  # the multiselect's change reruns the page
                break
            except PlaywrightTimeoutError:
                if attempt == 2:
                    raise
        wait_idle(page)
        assert run.inner_text().strip() == "Run 1 missing release at the sidebar budget"
        expect(run).to_be_disabled()
        expect(page.locator('[data-testid="stMain"]')).to_contain_text("would become ε = 4.286")
        raise_ = _raise(page)
        expect(raise_).to_contain_text("Confirm a new session budget: ε = 4.29")
        shot(page, screenshots, "session_histogram_prompt")
        raise_.click()
        wait_idle(page)
        expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("In force: ε = 4.29")
        run.click()
        wait_idle(page)
        assert _spent(page) == "4.286"  # Gaussian-DP composition of the two Gaussian releases
        # 3. The Release page still shows the first release; Export offers it by default, and both.
        go(page, "Release", "2 · Release")
        expect(page.get_by_text(re.compile(r"^Showing release #1 · Policy Gaussian"))).to_be_visible()
        go(page, "Export", "7 · Export")
        assert selectbox_value(page, "Release to export").startswith("#1 · Policy Gaussian")
        page.get_by_role("combobox", name="Release to export", exact=True).click()
        options = page.get_by_role("option").all_inner_texts()
        assert len(options) == 2 and options[0].startswith("#2 · Weighted Gaussian"), options
        page.keyboard.press("Escape")
        wait_idle(page)
        assert metric(page, "Mechanism") == "Policy Gaussian"
        shot(page, screenshots, "session_export_choice")
        assert first.startswith("Showing release #1")
        # 4. Compare is blocked past the budget, runs once a new one is confirmed, and is blocked again after it.
        go(page, "Compare", "6 · Compare")
        cmp_run = page.get_by_role("button", name="Run comparison")
        expect(cmp_run).to_be_disabled()
        _raise(page).click()
        wait_idle(page)
        cmp_run.click()
        wait_idle(page)
        page.get_by_role("heading", name=re.compile("Released items: mean")).wait_for(timeout=RUN_TIMEOUT_MS)
        after_compare = _spent(page)
        assert float(after_compare) > 4.286
        expect(cmp_run).to_be_disabled()
        expect(_raise(page)).to_contain_text(re.compile(r"Confirm a new session budget: ε = [\d.]+"))
        shot(page, screenshots, "session_compare_asks_again")
        # 5. Neighbouring corpora with its defaults: on the demo as a teaching corpus, nothing spent.
        go(page, "Neighbouring corpora", "8 · Neighbouring corpora")
        expect(page.get_by_text("One click makes 400 releases: 200 on D and 200 on D′.")).to_be_visible()
        page.get_by_role("button", name="Run on D and D′").click()
        wait_idle(page)
        page.get_by_role("heading", name=re.compile("D′ = D without user")).wait_for(timeout=RUN_TIMEOUT_MS)
        assert _spent(page) == after_compare
        assert_no_traceback(page)
        shot(page, screenshots, "session_neighbours_default")
        # 6. Export's history lists every release that spent, the comparison's runs included: the ledger's count.
        go(page, "Export", "7 · Export")
        line = page.get_by_text(re.compile(r"releases spent; the ledger counts")).inner_text()
        m = re.search(r"([\d,]+) releases spent; the ledger counts ([\d,]+)", line)
        assert m and m.group(1) == m.group(2) and int(m.group(1)) > 2, line
        expect(page.get_by_text(re.compile(r"^Compare: \d+ mechanisms × 3 runs · \d+ releases"))).to_be_visible()
        shot(page, screenshots, "session_history_as_ledger")
    finally:
        ctx.close()


def test_teaching_mode_cannot_spend_on_an_uploaded_private_corpus(browser, app_url, screenshots):
    ctx, page, _ = new_page(browser, app_url)
    try:
        page.get_by_text("Upload a file", exact=True).click()
        wait_idle(page)
        upload(page, "posts.csv", good_csv())
        page.get_by_role("button", name="Load corpus").click()
        wait_idle(page)
        page.get_by_text("Corpus loaded.", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
        page.locator(".st-key-teaching label").click()
        wait_idle(page)
        go(page, "Release", "2 · Release")
        expect(
            page.get_by_text(re.compile("Teaching mode \\(fixed seed\\) runs on exploration corpora only"))
        ).to_be_visible()
        expect(page.get_by_role("button", name="Run release")).to_be_disabled()
        assert _spent(page) == "0"
        shot(page, screenshots, "session_teaching_refused")
    finally:
        ctx.close()


def test_a_release_that_fails_part_way_is_in_the_sidebar_total(browser, app_url, screenshots):
    """DPNE asked for n-grams longer than the corpus was read with refuses after its spend was recorded: the
    error box says why and the sidebar counts the attempt at once."""
    from pages._format import mechanism_labels

    ctx, page, _ = new_page(browser, app_url)
    try:
        go(page, "Release", "2 · Release")
        assert _spent(page) == "0"
        page.get_by_role("combobox", name="Mechanism", exact=True).click()
        page.get_by_role("option", name=mechanism_labels()["dpne"], exact=True).click()
        wait_idle(page)
        box = page.locator(".st-key-param_max_n input")
        box.fill("3")
        box.press("Enter")
        wait_idle(page)
        page.get_by_role("button", name="Run release").click()
        wait_idle(page)
        expect(page.locator('[data-testid="stAlertContentError"]')).to_contain_text("DPNE needs n-grams up to length 3")
        assert _spent(page) == "3"
        assert_no_traceback(page)
        shot(page, screenshots, "session_failed_release_counted")
    finally:
        ctx.close()
