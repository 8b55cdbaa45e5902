"""The sign-in browser tests' server and people (tests/e2e/test_signin.py, test_analysts.py): a local OpenID
provider (oidc-provider-mock) on 127.0.0.1 with one-click users, the app with an ``[auth]`` section of its own, and
the steps a person takes to sign in. The fixtures ``provider`` and ``signin_app`` (tests/e2e/conftest.py) use it."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import threading
from pathlib import Path

from tests.e2e.conftest import free_port, streamlit_server_process

with contextlib.suppress(ImportError):  # playwright is a test dependency; without it the browser tests skip
    from playwright.sync_api import Page, expect

#: the people of the tests (sub, e-mail, name): every one signs in with a click on the provider's page
ANALYST = ("ann", "ann@lab.example", "Ann Analyst")
ANALYST2 = ("bea", "bea@lab.example", "Bea Analyst")
CUSTODIAN = ("boss", "boss@owner.example", "Boss Custodian")
PEOPLE = (ANALYST, ANALYST2, CUSTODIAN)
SIGN_IN = "Sign in to dpsu"
#: the first page after signing in: a cold server first loads the demo corpus (imports, compiled kernels)
START_TIMEOUT_MS = 120_000


@contextlib.contextmanager
def provider_server():
    """oidc-provider-mock on a free loopback port, with the people as one-click users; yields its URL."""
    import oidc_provider_mock
    from werkzeug import serving

    users = [oidc_provider_mock.User(sub=s, claims={"email": e, "name": n}) for s, e, n in PEOPLE]
    server = serving.make_server("127.0.0.1", 0, oidc_provider_mock.app(user_claims=users), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


@contextlib.contextmanager
def signin_server(provider: str, tmp: Path):
    """The app with native sign-in configured in a secrets file of its own (CUSTODIAN is the custodian); yields
    (URL, ledger path)."""
    port = free_port()
    secrets_file = tmp / "secrets.toml"
    secrets_file.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        'client_id = "dpsu"\n'
        'client_secret = "mock-secret"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n'
        "\n[dpsu]\n"
        f'custodians = ["{CUSTODIAN[1]}"]\n'
    )
    ledger = tmp / "ledger.sqlite"
    env = {**os.environ, "DPSU_LEDGER": str(ledger)}
    args = ("--secrets.files", str(secrets_file))
    with streamlit_server_process(tmp, env=env, args=args, port=port) as (url, _proc):
        yield url, ledger


def offline(context) -> None:
    """The provider's pages link a stylesheet on a CDN: the test stays on loopback."""
    context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/]).*"), lambda route: route.abort())


def sign_in(page: Page, url: str, sub: str) -> None:
    """Open the app, sign in as the provider's user ``sub`` and wait for the Corpus page."""
    page.goto(url)
    expect(page.get_by_role("heading", name=SIGN_IN)).to_be_visible()
    page.get_by_role("button", name="Sign in").click()
    page.locator(f'button[name="sub"][value="{sub}"]').click()  # the provider's one-click user
    expect(page.get_by_role("heading", name="1 · Corpus")).to_be_visible(timeout=START_TIMEOUT_MS)


def nav(page: Page):
    """The app's menu (its own page links, in sections: app.py)."""
    return page.locator(".st-key-app_menu")
