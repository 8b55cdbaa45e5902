"""The deployment guide's example files (docs/examples) load, and say what the guide says: every Streamlit key is
a real option of the installed Streamlit, secrets have what st.login needs, the proxies keep Streamlit on loopback
and HTTPS in front; the app's own config keeps XSRF on and tracebacks hidden."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import streamlit as st

from dpsu_core.accounting.identity import Role, custodian_patterns, role_for

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples"
AUTH_KEYS = {"redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url"}


def _toml(name: str) -> dict:
    return tomllib.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def _options(doc: dict) -> dict[str, object]:
    return {f"{section}.{key}": value for section, table in doc.items() for key, value in table.items()}


@pytest.mark.parametrize("name", ["config.toml", "config-oauth2-proxy.toml", "../../.streamlit/config.toml"])
def test_streamlit_configs_use_real_options_and_keep_the_protections(name):
    options = _options(_toml(name))
    for key in options:
        st.get_option(key)  # raises for an option the installed Streamlit does not have
    assert options.get("server.enableXsrfProtection", True) is True
    assert options["client.showErrorDetails"] == "none"
    assert int(options["server.maxUploadSize"]) > 0  # type: ignore[call-overload]
    if "server.address" in options:  # the production examples: loopback only, named hosts only
        assert options["server.address"] == "127.0.0.1"
        assert options["server.allowedHosts"] and "*" not in options["server.allowedHosts"]  # type: ignore[operator]


def test_the_proxy_config_maps_the_headers_dpsu_reads():
    headers = _options(_toml("config-oauth2-proxy.toml"))["server.trustedUserHeaders"]
    assert isinstance(headers, dict) and {"email", "groups"} <= set(headers.values())
    assert len(set(headers.values())) == len(headers)  # Streamlit refuses two headers on one key


def test_the_secrets_example_has_what_sign_in_needs():
    doc = _toml("secrets.toml")
    assert set(doc["auth"]) == AUTH_KEYS
    assert doc["auth"]["redirect_uri"].startswith("https://") and doc["auth"]["redirect_uri"].endswith(
        "/oauth2callback"
    )
    assert doc["auth"]["server_metadata_url"].endswith("/.well-known/openid-configuration")
    assert all("REPLACE" in doc["auth"][k] for k in ("cookie_secret", "client_id", "client_secret"))  # placeholders
    patterns = custodian_patterns(doc["dpsu"]["custodians"])
    assert role_for(patterns[0], patterns) is Role.CUSTODIAN
    assert role_for("someone.else@example.org", patterns) is Role.ANALYST


def test_the_oauth2_proxy_config_forwards_to_loopback_over_https_only():
    doc = _toml("oauth2-proxy.cfg")
    assert doc["upstreams"] == ["http://127.0.0.1:8501/"] and doc["http_address"].startswith("127.0.0.1:")
    assert doc["pass_user_headers"] is True and doc["cookie_secure"] is True and doc["cookie_httponly"] is True
    assert doc["redirect_url"].startswith("https://") and doc["provider"] == "oidc"


def _nginx_blocks(text: str) -> list[str]:
    """The nginx file's statements, checked for structure: braces balance, every statement ends with ';', '{' or
    '}'. Returns the statements."""
    depth, statements = 0, []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        assert line.endswith((";", "{", "}")), f"nginx line does not end a statement: {raw!r}"
        depth += line.count("{") - line.count("}")
        assert depth >= 0, f"unbalanced '}}' at {raw!r}"
        statements.append(line)
    assert depth == 0, "unbalanced braces in the nginx example"
    return statements


def test_the_nginx_example_is_https_with_websockets_sticky_and_strips_identity_headers():
    statements = _nginx_blocks((EXAMPLES / "nginx.conf").read_text(encoding="utf-8"))
    text = "\n".join(statements)
    assert "listen 443 ssl;" in statements and "return 301 https://$host$request_uri;" in statements
    assert "ip_hash;" in statements  # sticky sessions
    assert "proxy_set_header Upgrade $http_upgrade;" in statements and "proxy_http_version 1.1;" in statements
    assert re.search(r"client_max_body_size \d+m;", text)
    for header in ("X-Forwarded-Email", "X-Forwarded-Groups"):
        assert f'proxy_set_header {header} "";' in statements


def test_the_guide_links_every_example():
    guide = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    for f in EXAMPLES.iterdir():
        assert f"examples/{f.name}" in guide, f.name
