"""The whole sign-in flow in Chromium: a real ``streamlit run app.py`` with an ``[auth]`` section, against a local
OpenID provider (oidc-provider-mock) on 127.0.0.1. A visitor not signed in sees nothing but the sign-in, by any
URL; an analyst signs in and has no custodian page (its URL refuses them); a second analyst in another browser
context sees nothing of the first one's upload, nor she of hers; a custodian in a further browser context
has it and registers a corpus and changes its cap, and never sees the analyst's upload; signing out ends the
session's access."""

from __future__ import annotations

import re

import pytest

from dpsu_core.accounting import open_store
from tests.e2e.test_browser import upload

pytestmark = pytest.mark.e2e
pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytest.importorskip("oidc_provider_mock", reason="oidc-provider-mock is not installed")
pytest.importorskip("authlib", reason="streamlit[auth] (Authlib) is not installed")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e.signin import ANALYST, ANALYST2, CUSTODIAN, SIGN_IN, nav, offline, sign_in  # noqa: E402

ANN_FILE = "ann_only_qzmarker.csv"
ANN_CSV = "".join(["author,body\n", *(f"member{i},river stone qzannmarker\n" for i in range(40))]).encode()


def test_sign_in_roles_and_sign_out(browser, signin_app):
    url, ledger = signin_app
    analyst_ctx, analyst2_ctx, custodian_ctx = browser.new_context(), browser.new_context(), browser.new_context()
    try:
        for ctx in (analyst_ctx, analyst2_ctx, custodian_ctx):
            offline(ctx)
        ann = analyst_ctx.new_page()

        # a visitor not signed in: nothing but the sign-in, whatever the URL
        for path in ("", "/release", "/export", "/custodian"):
            ann.goto(url + path)
            expect(ann.get_by_role("heading", name=SIGN_IN)).to_be_visible()
            expect(ann.get_by_role("button", name="Sign in")).to_be_visible()
            expect(nav(ann)).to_have_count(0)
            expect(ann.get_by_text("ε (epsilon) of each release")).to_have_count(0)
            expect(ann.get_by_role("heading", name=re.compile("Corpus|Release|Export|Custodian"))).to_have_count(0)

        # the analyst signs in: who they are and the sign-out; no custodian page, by the menu or by its URL
        sign_in(ann, url, ANALYST[0])
        expect(ann.get_by_text(f"signed in as {ANALYST[2]} ({ANALYST[1]}), analyst")).to_be_visible()
        expect(nav(ann).get_by_role("link", name="Release", exact=True)).to_be_visible()
        expect(nav(ann).get_by_role("link", name="Custodian", exact=True)).to_have_count(0)
        ann.goto(url + "/custodian")
        expect(ann.get_by_role("dialog").get_by_text("Page not found")).to_be_visible()
        expect(ann.get_by_role("heading", name="1 · Corpus")).to_be_visible()
        expect(ann.get_by_role("heading", name="Custodian")).to_have_count(0)
        expect(ann.get_by_role("button", name="Register")).to_have_count(0)
        ann.goto(url)  # a fresh page: no dialog left over
        expect(ann.get_by_role("heading", name="1 · Corpus")).to_be_visible()
        ann.get_by_text("Upload a file", exact=True).click()
        upload(ann, ANN_FILE, ANN_CSV)  # her own upload, in her session only

        # a second analyst sees none of it, and her own upload leaves Ann's in place
        bea = analyst2_ctx.new_page()
        sign_in(bea, url, ANALYST2[0])
        bea.get_by_text("Upload a file", exact=True).click()
        expect(bea.locator('[data-testid="stFileUploaderDropzoneInput"]')).to_be_attached()
        expect(bea.locator('[data-testid="stFileChip"]')).to_have_count(0)
        upload(bea, "bea_only.csv", ANN_CSV.replace(b"qzannmarker", b"qzbeamarker"))
        expect(bea.get_by_text(re.compile("qzannmarker|ann_only"))).to_have_count(0)
        chip = ann.locator('[data-testid="stFileChip"]')
        expect(chip).to_have_count(1)
        expect(chip).to_have_attribute("aria-label", re.compile("^" + re.escape(ANN_FILE) + ", "))

        # the custodian, in a second browser context, has the page and acts on the ledger
        boss = custodian_ctx.new_page()
        sign_in(boss, url, CUSTODIAN[0])
        expect(boss.get_by_text(f"signed in as {CUSTODIAN[2]} ({CUSTODIAN[1]}), custodian")).to_be_visible()
        boss.get_by_text("Upload a file", exact=True).click()
        expect(boss.locator('[data-testid="stFileUploaderDropzoneInput"]')).to_be_attached()
        expect(boss.locator('[data-testid="stFileChip"]')).to_have_count(0)  # not the analyst's upload
        expect(boss.get_by_text(re.compile("qzmarker|qzannmarker"))).to_have_count(0)
        nav(boss).get_by_role("link", name="Custodian", exact=True).click()
        expect(boss.get_by_role("heading", name="Custodian")).to_be_visible()
        boss.get_by_label("corpus name").fill("tickets")
        boss.get_by_role("button", name="Register").click()
        expect(boss.get_by_text("registered corpus 'tickets'")).to_be_visible()
        boss.get_by_text(re.compile(r"^tickets: spent")).click()  # the corpus's expander
        cap = boss.get_by_label("cap ε").last
        cap.fill("4.5")
        cap.press("Tab")
        boss.get_by_role("button", name="Change the cap").click()
        expect(boss.get_by_text(re.compile(r"tickets: spent .* of cap ε = 4\.5"))).to_be_visible()
        boss.get_by_role("button", name="Verify the hash chain").click()
        expect(boss.get_by_text("The hash chain holds: 2 entries checked.")).to_be_visible()
        with open_store(ledger) as store:
            assert store.corpus("tickets").epsilon_cap == 4.5
            assert [(r["kind"], r["actor"]) for r in store.chain_rows()] == [
                ("register", CUSTODIAN[1]), ("cap", CUSTODIAN[1])]  # fmt: skip

        # the analyst loads her file and releases: the charge is in the durable ledger under her identity
        ann.get_by_role("button", name="Load corpus").click()
        expect(ann.get_by_text("Corpus loaded.", exact=True)).to_be_visible()
        nav(ann).get_by_role("link", name="Release", exact=True).click()
        expect(ann.get_by_role("heading", name="2 · Release")).to_be_visible()
        ann.get_by_role("button", name="Run release").click()
        expect(ann.get_by_role("heading", name="Released set (private)")).to_be_visible()
        with open_store(ledger) as store:
            spends = [r for r in store.chain_rows() if r["kind"] == "spend"]
            assert [(r["corpus"], r["actor"]) for r in spends] == [(ANN_FILE, ANALYST[1])]
        # the custodian lowers that corpus's cap below what a second release needs: the analyst is held to it
        boss.reload()
        expect(boss.get_by_role("heading", name="Custodian")).to_be_visible()
        boss.get_by_text(re.compile(r"^" + re.escape(ANN_FILE) + r": spent")).click()
        cap = boss.get_by_label("cap ε").last
        cap.fill("4")
        cap.press("Tab")
        boss.get_by_role("button", name="Change the cap").last.click()
        expect(boss.get_by_text(re.compile(re.escape(ANN_FILE) + r": spent .* of cap ε = 4\b"))).to_be_visible()
        nav(ann).get_by_role(
            "link", name="Corpus", exact=True
        ).click()  # back to the Release page: a new run reads the cap
        expect(ann.get_by_role("heading", name="1 · Corpus")).to_be_visible()
        nav(ann).get_by_role("link", name="Release", exact=True).click()
        expect(ann.get_by_text(re.compile("past its cap ε = 4"))).to_be_visible()
        expect(ann.get_by_role("button", name=re.compile("^Run release"))).to_be_disabled()

        # signing out ends the analyst's access (the custodian's session is untouched)
        ann.get_by_role("button", name="Sign out").click()
        expect(ann.get_by_role("heading", name="End Session")).to_be_visible()  # the provider's end of session
        ann.get_by_role("button", name="End session").click()
        expect(ann.get_by_role("heading", name=SIGN_IN)).to_be_visible()  # back at the app, signed out
        ann.goto(url + "/release")
        expect(ann.get_by_role("heading", name=SIGN_IN)).to_be_visible()
        expect(nav(ann)).to_have_count(0)
        expect(ann.get_by_text("ε (epsilon) of each release")).to_have_count(0)
        boss.reload()
        expect(boss.get_by_role("heading", name="Custodian")).to_be_visible()
    finally:
        for ctx in (analyst_ctx, analyst2_ctx, custodian_ctx):
            ctx.close()
