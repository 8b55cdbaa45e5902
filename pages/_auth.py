"""Sign-in and roles in the app: who is using it (``current_identity``), the gate app.py passes before any page
(``gate``), the sidebar's line about it, and the ledger store the app charges (``ledger_store``). Layout only: the
identity and roles are ``dpsu_core.accounting.identity``, the custodian's actions ``dpsu_core.accounting.custodian``.

Modes (``dpsu_core.accounting.identity``): an ``[auth]`` section in ``.streamlit/secrets.toml`` turns on the native sign-in
(``st.login``, OpenID Connect); ``server.trustedUserHeaders`` in the config means a proxy signs people in and
names them in headers; neither is single-user mode, where the local user is the custodian of their own store."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import streamlit as st

from dpsu_core.accounting.identity import Identity, Mode, custodian_patterns, from_claims, local_user
from dpsu_core.errors import DpsuError
from pages._format import escape_markdown

if TYPE_CHECKING:  # the store (and the ledger under it) loads on first use, after the menu is drawn
    from dpsu_core.accounting import LedgerStore

SIGN_IN_TITLE = "Sign in to dpsu"


def _secrets_section(name: str) -> dict[str, Any]:
    # st.secrets is looked up at call time: AppTest replaces it with the test's secrets
    secrets = st.secrets
    if not secrets.load_if_toml_exists() or name not in secrets:
        return {}
    section = secrets[name]
    return dict(section) if hasattr(section, "keys") else {}


def mode() -> Mode:
    if _secrets_section("auth"):
        return "oidc"
    headers = st.get_option("server.trustedUserHeaders")
    if headers:
        return "proxy"
    return "single-user"


def current_identity() -> Identity:
    """Who is using this session, read afresh from ``st.user`` on every call (the server's own record of the
    sign-in: nothing a browser sends in a widget can change it). The release path records ``.actor``."""
    m = mode()
    if m == "single-user":
        return local_user()
    settings = _secrets_section("dpsu")
    return from_claims(
        st.user.to_dict(),
        mode=m,
        custodians=custodian_patterns(settings.get("custodians")),
        custodian_groups=settings.get("custodian_groups") or (),
    )


def _sign_in_page() -> None:
    st.title(SIGN_IN_TITLE)
    if mode() == "oidc":
        st.write("This dpsu deployment is shared: sign in so the privacy ledger knows who spends its budget.")
        st.button("Sign in", type="primary", icon=":material/login:", on_click=st.login)
    else:
        st.error(
            "You reached dpsu without its sign-in proxy: open it through the address your team was given.",
            icon=":material/block:",
        )


def gate() -> Identity:
    """The signed-in identity; for a visitor not signed in, nothing but the sign-in (every URL leads to it: the
    navigation holds no other page), and the script stops."""
    try:
        who = current_identity()
    except DpsuError as exc:  # e.g. a malformed [dpsu] custodians setting: say so, show nothing else
        st.navigation([st.Page(_sign_in_page, title=SIGN_IN_TITLE, default=True)], position="hidden")
        st.error(f"The app's sign-in settings are wrong: {exc}", icon=":material/block:")
        st.stop()
    if not who.signed_in:
        st.navigation([st.Page(_sign_in_page, title=SIGN_IN_TITLE, default=True)], position="hidden").run()
        st.stop()
    return who


def sidebar(who: Identity) -> None:
    """Who is signed in, and the sign-out (native sign-in only: behind a proxy, the proxy signs people out)."""
    with st.sidebar:
        st.caption(escape_markdown(who.describe()))
        if who.mode == "oidc":
            st.button("Sign out", icon=":material/logout:", on_click=st.logout, key="dpsu_sign_out")


@st.cache_resource(show_spinner=False, max_entries=4)
def _store(location: str) -> LedgerStore:
    # the one ledger every session charges (thread-safe); it holds no session's data
    from dpsu_core.accounting import open_store

    return open_store(location or None)


def ledger_store() -> LedgerStore:
    """The ledger store of this deployment (``$DPSU_LEDGER``, else the per-user default file)."""
    return _store(os.environ.get("DPSU_LEDGER", ""))
