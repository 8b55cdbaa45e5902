"""Who is using dpsu, and what they may do: a person's identity and role (no Streamlit here; the app's
``pages/_auth.py`` reads ``st.user`` and the secrets and calls these functions).

Three modes:
  * ``single-user``: no sign-in configured (the README's first command on a laptop). The local user is the custodian
    of their own store, named from the operating system's user.
  * ``oidc``: the app signs people in itself (``st.login``, an ``[auth]`` section in ``.streamlit/secrets.toml``).
  * ``proxy``: a proxy in front of the app (e.g. oauth2-proxy) signs people in and passes who they are in headers
    Streamlit trusts (``server.trustedUserHeaders``).
Roles come from configuration: ``[dpsu] custodians = [...]`` in the secrets, each an e-mail address or an e-mail
domain (``@example.org`` or ``example.org``), compared without case. Everyone else who signs in is an analyst.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from ..errors import DpsuError, ParameterError

Mode = Literal["single-user", "oidc", "proxy"]
MODES: tuple[Mode, ...] = ("single-user", "oidc", "proxy")


class Role(StrEnum):
    CUSTODIAN = "custodian"  # registers corpora, sets their caps, sees and exports the whole ledger
    ANALYST = "analyst"  # releases within the caps, and may set a smaller cap for themselves


class NotCustodian(DpsuError):
    """An action only the data custodian may take was asked for by someone else (nothing was done)."""


class NotSignedIn(DpsuError):
    """An action was asked for by a visitor who has not signed in (nothing was done)."""


@dataclass(frozen=True)
class Identity:
    """A person using dpsu. ``email`` is empty in single-user mode (``name`` is the OS user)."""

    email: str
    name: str
    role: Role
    signed_in: bool
    mode: Mode

    @property
    def actor(self) -> str:
        """Who the ledger records as having caused an entry: the e-mail address, else the name."""
        return self.email or self.name

    @property
    def is_custodian(self) -> bool:
        return self.signed_in and self.role is Role.CUSTODIAN

    def describe(self) -> str:
        """One line for the sidebar."""
        if self.mode == "single-user":
            return f"single-user mode: you are the custodian of this store ({self.name})"
        if not self.signed_in:
            return "not signed in"
        who = f"{self.name} ({self.email})" if self.name and self.name != self.email else self.email
        return f"signed in as {who}, {self.role.value}"


def _pattern(entry: Any) -> str:
    if not isinstance(entry, str) or not entry.strip() or any(c.isspace() for c in entry.strip()):
        raise ParameterError(
            f"[dpsu] custodians: each entry must be an e-mail address or a domain (@example.org), got {entry!r}"
        )
    text = entry.strip().lower()
    if text.count("@") > 1 or text.endswith("@") or ("@" not in text and "." not in text):
        raise ParameterError(
            f"[dpsu] custodians: {entry!r} is neither an e-mail address nor a domain such as @example.org"
        )
    return text


def custodian_patterns(entries: Any) -> list[str]:
    """The ``[dpsu] custodians`` setting checked and lower-cased (a missing setting: nobody)."""
    if entries is None:
        return []
    if isinstance(entries, str) or not isinstance(entries, Iterable):
        raise ParameterError(
            '[dpsu] custodians must be a list, e.g. custodians = ["owner@example.org", "@example.org"]'
        )
    return [_pattern(e) for e in entries]


def role_for(email: str, custodians: Iterable[str]) -> Role:
    """The custodian when ``email`` is listed, or its domain is (``@domain`` or ``domain``: the exact domain, not its
    subdomains); else an analyst. Case-insensitive. An address that is not one (no ``@``) is never a custodian."""
    address = (email or "").strip().lower()
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain:
        return Role.ANALYST
    for p in custodian_patterns(list(custodians)):
        bare = p.removeprefix("@")
        if p == address or ("@" not in bare and bare == domain):
            return Role.CUSTODIAN
    return Role.ANALYST


def local_user() -> Identity:
    """Single-user mode: the OS user, custodian of their own store."""
    return Identity(email="", name=local_actor(), role=Role.CUSTODIAN, signed_in=True, mode="single-user")


def local_actor() -> str:
    """Who runs a command-line or single-user tool, as the ledger records it: the operating system's user name."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no user name in the environment or the password database (a container)
        name = ""
    return name or "local user"  # still a stable label


def groups_of(value: Any) -> set[str]:
    """A groups claim (a list, or the comma-separated header oauth2-proxy sends as ``X-Forwarded-Groups``)."""
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    return {str(g).strip().lower() for g in items if str(g).strip()}


def from_claims(
    claims: Mapping[str, Any], *, mode: Mode, custodians: Iterable[str], custodian_groups: Iterable[str] = ()
) -> Identity:
    """The identity from a signed-in user's claims (``st.user``: the provider's ID token, or the proxy's headers).
    Not signed in: no ``is_logged_in`` claim true in ``oidc`` mode; no e-mail in ``proxy`` mode. The custodian: an
    e-mail matching ``custodians``, or a ``groups`` claim holding one of ``custodian_groups``."""
    if mode not in ("oidc", "proxy"):
        raise ParameterError(f"sign-in mode must be oidc or proxy, got {mode!r}")
    email = str(claims.get("email") or "").strip()
    name = str(claims.get("name") or claims.get("preferred_username") or email).strip()
    signed_in = bool(claims.get("is_logged_in")) if mode == "oidc" else bool(email)
    if mode == "oidc" and signed_in and claims.get("email_verified") is False:
        signed_in = False  # an unverified address names nobody: it must not match a custodian pattern
    role = role_for(email, custodians) if signed_in else Role.ANALYST
    if signed_in and groups_of(claims.get("groups")) & groups_of(list(custodian_groups)):
        role = Role.CUSTODIAN
    return Identity(email=email if signed_in else "", name=name if signed_in else "", role=role,
                    signed_in=signed_in, mode=mode)  # fmt: skip


def require_signed_in(who: Identity) -> None:
    if not who.signed_in:
        raise NotSignedIn("sign in first: this action needs to know who you are")


def require_custodian(who: Identity) -> None:
    """Raise ``NotCustodian`` unless ``who`` is the data custodian (checked by every custodian action)."""
    require_signed_in(who)
    if not who.is_custodian:
        raise NotCustodian(
            f"only the data custodian may do this; {who.actor} is an analyst "
            "(custodians are listed in [dpsu] custodians in the app's secrets)"
        )
