"""Roles in the app through AppTest with ``at.user`` (the real app, a real ledger file): a visitor not signed in sees
nothing but the sign-in, an analyst has every page but the custodian's (its URL refuses them), a custodian has it
and acts through it; without an ``[auth]`` section the app is single-user, as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpsu_core.accounting import open_store

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
CUSTODIAN_PAGE = str(REPO / "pages" / "9_custodian.py")
TIMEOUT = 180
PAGES = ["1_corpus", "2_release", "3_thresholds", "4_histogram", "5_coverage", "6_compare", "7_export", "8_neighbours"]
SECRETS = {
    "auth": {  # never contacted: AppTest's at.user stands in for the provider
        "redirect_uri": "http://127.0.0.1:9/oauth2callback",
        "cookie_secret": "a-test-cookie-secret-of-32-chars!",
        "client_id": "dpsu",
        "client_secret": "test-secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
    },
    "dpsu": {"custodians": ["@owner.example"]},
}
ANALYST = {"is_logged_in": True, "email": "ann@lab.example", "name": "Ann Analyst"}
CUSTODIAN = {"is_logged_in": True, "email": "boss@owner.example", "name": "Boss"}


@pytest.fixture(autouse=True)
def ledger(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPSU_LEDGER", str(path))
    return path


def _app(user: dict | None, script: str = APP) -> AppTest:
    at = AppTest.from_file(script, default_timeout=TIMEOUT)
    if user is not None:
        at.secrets = {k: dict(v) for k, v in SECRETS.items()}
        at.user = dict(user)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def _go(at: AppTest, page: str) -> None:
    at.switch_page(str(REPO / "pages" / f"{page}.py"))
    at.run()
    assert not at.exception, [e.message for e in at.exception]


def _sidebar_text(at: AppTest) -> str:
    return " ".join(str(c.value) for c in at.sidebar.caption).replace("\\", "")  # Markdown escapes


def test_a_visitor_not_signed_in_sees_only_the_sign_in():
    at = _app({"is_logged_in": False})
    assert _titles(at) == ["Sign in to dpsu"] and [b.label for b in at.button] == ["Sign in"]
    assert len(at.sidebar) == 0 and not at.tabs and not at.dataframe and not at.number_input
    for page in [*PAGES, "9_custodian"]:
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(str(REPO / "pages" / f"{page}.py"))
    direct = _app({"is_logged_in": False}, str(REPO / "pages" / "2_release.py"))  # a page's URL on a new server
    assert _titles(direct) == ["Sign in to dpsu"] and not direct.number_input


def test_an_analyst_has_every_page_but_the_custodians():
    at = _app(ANALYST)
    assert "signed in as Ann Analyst (ann@lab.example), analyst" in _sidebar_text(at)
    assert [b.label for b in at.sidebar.button if b.label == "Sign out"] == ["Sign out"]
    for page in PAGES:
        _go(at, page)
        assert _titles(at) and _titles(at)[0] != "Custodian", page
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(CUSTODIAN_PAGE)
    direct = _app(ANALYST, CUSTODIAN_PAGE)  # the custodian page's URL on a new server: app.py routes it away
    assert "Custodian" not in _titles(direct) and not [b for b in direct.button if b.label == "Register"]


def test_the_custodian_has_the_page_and_its_actions_hold(ledger):
    at = _app(CUSTODIAN)
    assert "signed in as Boss (boss@owner.example), custodian" in _sidebar_text(at)
    for page in PAGES:
        _go(at, page)
    at.switch_page(CUSTODIAN_PAGE)
    at.run()
    assert _titles(at) == ["Custodian"] and not at.exception
    at.text_input[0].set_value("tickets")
    at.number_input(key="custodian_register_eps").set_value(3.0)
    next(b for b in at.button if b.label == "Register").click()
    at.run()
    assert not at.error, [e.value for e in at.error]
    with open_store(ledger) as s:
        (c,) = s.corpora()
        assert (c.name, c.epsilon_cap, c.created_by) == ("tickets", 3.0, "boss@owner.example")
    at.number_input(key=f"custodian_cap_{c.id}_eps").set_value(5.5)
    next(b for b in at.button if b.label == "Change the cap").click()
    at.run()
    next(b for b in at.button if b.label == "Verify the hash chain").click()
    at.run()
    assert any("The hash chain holds: 2 entries checked" in s.value for s in at.success)
    with open_store(ledger) as s:
        assert s.corpus("tickets").epsilon_cap == 5.5
        assert [(r["kind"], r["actor"]) for r in s.chain_rows()] == [
            ("register", "boss@owner.example"), ("cap", "boss@owner.example")]  # fmt: skip


def test_without_auth_the_app_is_single_user_as_before():
    at = _app(None)
    assert _titles(at) == ["1 · Corpus"]
    assert "single-user mode: you are the custodian of this store" in _sidebar_text(at)
    assert not [b for b in at.button if b.label in ("Sign in", "Sign out")]
    at.switch_page(CUSTODIAN_PAGE)  # the local user is the custodian: the page is there
    at.run()
    assert _titles(at) == ["Custodian"] and not at.exception


@pytest.fixture
def proxy_headers():
    """``server.trustedUserHeaders`` set, as behind oauth2-proxy (AppTest's at.user stands in for the headers)."""
    from streamlit import config

    before = config.get_option("server.trustedUserHeaders")
    config.set_option("server.trustedUserHeaders", {"X-Forwarded-Email": "email", "X-Forwarded-Groups": "groups"})
    yield
    config.set_option("server.trustedUserHeaders", before)


def _proxy_app(user: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets = {"dpsu": {"custodians": [], "custodian_groups": ["dpsu-custodians"]}}  # no [auth]: the proxy signs in
    at.user = dict(user)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_behind_a_proxy_the_headers_name_the_user_and_groups_give_the_role(proxy_headers):
    nobody = _proxy_app({"email": None, "groups": None})
    assert _titles(nobody) == ["Sign in to dpsu"] and not nobody.button and len(nobody.sidebar) == 0
    assert "without its sign-in proxy" in nobody.error[0].value
    ann = _proxy_app({"email": "ann@lab.example", "groups": "staff"})
    assert "signed in as ann@lab.example, analyst" in _sidebar_text(ann)
    assert not [b for b in ann.button if b.label == "Sign out"]  # the proxy signs people out
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        ann.switch_page(CUSTODIAN_PAGE)
    boss = _proxy_app({"email": "boss@lab.example", "groups": "staff,dpsu-custodians"})
    assert "signed in as boss@lab.example, custodian" in _sidebar_text(boss)
    boss.switch_page(CUSTODIAN_PAGE)
    boss.run()
    assert _titles(boss) == ["Custodian"] and not boss.exception
