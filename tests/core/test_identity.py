"""Identities and roles (dpsu_core.accounting.identity): who is the custodian, from the configured e-mails, domains or groups."""

from __future__ import annotations

import getpass

import pytest

from dpsu_core.accounting.identity import (
    NotCustodian,
    NotSignedIn,
    Role,
    custodian_patterns,
    from_claims,
    local_actor,
    local_user,
    require_custodian,
    role_for,
)
from dpsu_core.errors import ParameterError

CUSTODIANS = ["Owner@Example.org", "@trust.example", "data.example"]


@pytest.mark.parametrize(
    ("email", "role"),
    [
        ("owner@example.org", Role.CUSTODIAN),  # the listed address, other case
        ("OWNER@EXAMPLE.ORG", Role.CUSTODIAN),
        ("other@example.org", Role.ANALYST),  # same domain, address not listed
        ("anyone@trust.example", Role.CUSTODIAN),  # @domain
        ("x@DATA.example", Role.CUSTODIAN),  # bare domain
        ("x@sub.data.example", Role.ANALYST),  # a subdomain is another domain
        ("x@evildata.example", Role.ANALYST),  # a suffix is not the domain
        ("owner@example.org.evil", Role.ANALYST),
        ("trust.example", Role.ANALYST),  # not an address
        ("@trust.example", Role.ANALYST),
        ("", Role.ANALYST),
    ],
)
def test_role_for_matches_addresses_and_exact_domains_without_case(email, role):
    assert role_for(email, CUSTODIANS) is role


def test_no_custodians_configured_means_everyone_is_an_analyst():
    assert role_for("owner@example.org", []) is Role.ANALYST
    assert custodian_patterns(None) == []


@pytest.mark.parametrize(
    "bad", ["owner@example.org", [""], ["a b@x.org"], ["a@@x.org"], ["owner@"], ["localhost"], [3]]
)
def test_a_malformed_custodians_setting_is_one_clear_line(bad):
    with pytest.raises(ParameterError, match=r"\[dpsu\] custodians") as err:
        custodian_patterns(bad)
    assert "\n" not in str(err.value)


def test_single_user_mode_the_os_user_is_the_custodian():
    me = local_user()
    assert (me.mode, me.role, me.signed_in, me.is_custodian) == ("single-user", Role.CUSTODIAN, True, True)
    assert me.name == getpass.getuser() and me.actor == me.name
    assert me.describe().startswith("single-user mode: you are the custodian of this store")


def test_the_ledgers_actor_is_the_single_user_identity(monkeypatch):
    """One reading of the OS user: the name the ledger records is the single-user identity's, fallback included
    (a uid with no name, as in some containers, cannot be made here: ``getuser`` is made to fail as it then does)."""
    assert local_actor() == local_user().name == getpass.getuser()

    def no_name() -> str:
        raise OSError("no user name for this uid")

    monkeypatch.setattr(getpass, "getuser", no_name)
    assert local_actor() == local_user().name == "local user"


def test_oidc_claims_signed_in_or_not():
    ann = from_claims({"is_logged_in": True, "email": "ann@x.org", "name": "Ann"}, mode="oidc", custodians=CUSTODIANS)
    assert (ann.signed_in, ann.role, ann.actor) == (True, Role.ANALYST, "ann@x.org")
    out = from_claims({"is_logged_in": False, "email": "owner@example.org"}, mode="oidc", custodians=CUSTODIANS)
    assert (out.signed_in, out.is_custodian, out.actor) == (False, False, "")
    missing = from_claims({"email": "owner@example.org"}, mode="oidc", custodians=CUSTODIANS)
    assert not missing.signed_in  # no is_logged_in claim: not signed in
    unverified = {"is_logged_in": True, "email": "owner@example.org", "email_verified": False}
    assert not from_claims(unverified, mode="oidc", custodians=CUSTODIANS).is_custodian


def test_proxy_headers_name_the_user_and_groups_can_make_a_custodian():
    assert not from_claims({"email": None}, mode="proxy", custodians=CUSTODIANS).signed_in
    bob = from_claims({"email": "bob@x.org", "groups": "staff, dpsu-custodians"}, mode="proxy", custodians=[],
                      custodian_groups=["DPSU-custodians"])  # fmt: skip
    assert bob.is_custodian and bob.mode == "proxy"
    carl = from_claims({"email": "carl@x.org", "groups": "staff"}, mode="proxy", custodians=[],
                       custodian_groups=["dpsu-custodians"])  # fmt: skip
    assert carl.signed_in and carl.role is Role.ANALYST


def test_require_custodian_refuses_analysts_and_visitors():
    ann = from_claims({"is_logged_in": True, "email": "ann@x.org"}, mode="oidc", custodians=CUSTODIANS)
    with pytest.raises(NotCustodian, match="ann@x.org is an analyst"):
        require_custodian(ann)
    with pytest.raises(NotSignedIn):
        require_custodian(from_claims({"is_logged_in": False}, mode="oidc", custodians=CUSTODIANS))
    require_custodian(local_user())  # no error
