"""The custodian's actions on a real ledger store (SQLite file): each re-checks the role, so an analyst's request
does nothing; an analyst may only lower their own cap."""

from __future__ import annotations

import json

import pytest

from dpsu_core.accounting import BudgetRefused, custodian, open_store
from dpsu_core.accounting.identity import NotCustodian, NotSignedIn, from_claims
from dpsu_core.accounting.ledger import LedgerEntry
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms.registry import get_mechanism

CUSTODIANS = ["@owner.example"]
BOSS = from_claims({"is_logged_in": True, "email": "boss@owner.example"}, mode="oidc", custodians=CUSTODIANS)
ANN = from_claims({"is_logged_in": True, "email": "ann@lab.example"}, mode="oidc", custodians=CUSTODIANS)
VISITOR = from_claims({"is_logged_in": False}, mode="oidc", custodians=CUSTODIANS)


def entry(epsilon: float = 1.0) -> LedgerEntry:
    cal = get_mechanism("policy-gaussian", epsilon=epsilon, delta=1e-7).calibrate()
    return LedgerEntry.from_calibration(cal, corpus_id=None, source="test")


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "ledger.sqlite") as s:
        yield s


def test_the_custodian_registers_changes_caps_and_sees_spend_per_analyst(store):
    c = custodian.register_corpus(store, BOSS, "tickets", 2.5, 1e-5)
    assert (c.created_by, c.epsilon_cap) == ("boss@owner.example", 2.5)
    store.charge("tickets", [entry(1.0)], actor=ANN.actor, tool="app", job={})
    with pytest.raises(BudgetRefused):
        store.charge("tickets", [entry(3.0)], actor=ANN.actor, tool="app", job={})  # 1 and 3 compose past 2.5
    custodian.set_cap(store, BOSS, "tickets", 4.0, 1e-5)
    store.charge("tickets", [entry(3.0)], actor=ANN.actor, tool="app", job={})  # the new cap holds it
    (s,) = custodian.corpus_spend(store, BOSS)
    assert s.corpus.epsilon_cap == 4.0 and set(s.by_actor) == {"ann@lab.example"}
    assert s.by_actor["ann@lab.example"].releases == 2 and s.total.epsilon == pytest.approx(store.total(c.id).epsilon)
    assert s.remaining_epsilon == pytest.approx(4.0 - s.total.epsilon)
    assert [r.actor for r in custodian.refusal_list(store, BOSS, "tickets")] == ["ann@lab.example"]
    rows = custodian.audit_rows(store, BOSS)
    assert [(r["kind"], r["actor"]) for r in rows] == [
        ("register", "boss@owner.example"), ("spend", "ann@lab.example"), ("cap", "boss@owner.example"),
        ("spend", "ann@lab.example"),
    ]  # fmt: skip
    assert custodian.verify_ledger(store, BOSS).ok
    doc = json.loads(custodian.export_ledger(store, BOSS, "json"))
    assert [e["actor"] for e in doc["entries"]] == [r["actor"] for r in rows]
    custodian.set_default_cap(store, BOSS, 1.5, 1e-6)
    assert store.charge("new-one", [entry(1.0)], actor=ANN.actor, tool="app", job={}).corpus.epsilon_cap == 1.5


@pytest.mark.parametrize("who", [ANN, VISITOR], ids=["analyst", "signed-out"])
def test_no_custodian_action_runs_for_anyone_else(store, who):
    c = custodian.register_corpus(store, BOSS, "tickets", 2.5, 1e-5)
    default = store.default_cap()
    actions = [
        lambda: custodian.register_corpus(store, who, "mine", 100.0, 0.1),
        lambda: custodian.set_cap(store, who, c.id, 100.0, 0.1),
        lambda: custodian.set_default_cap(store, who, 100.0, 0.1),
        lambda: custodian.corpus_spend(store, who),
        lambda: custodian.audit_rows(store, who),
        lambda: custodian.release_list(store, who, c.id),
        lambda: custodian.refusal_list(store, who, c.id),
        lambda: custodian.export_ledger(store, who),
        lambda: custodian.verify_ledger(store, who),
    ]
    for act in actions:
        with pytest.raises(NotCustodian if who.signed_in else NotSignedIn):
            act()
    assert [x.name for x in store.corpora()] == ["tickets"]
    assert store.corpus("tickets").epsilon_cap == 2.5 and len(store.chain_rows()) == 1
    assert store.default_cap() == default


def test_an_analyst_may_only_lower_their_own_cap(store):
    custodian.register_corpus(store, BOSS, "tickets", 5.0, 1e-5)
    with pytest.raises(ParameterError, match="must not exceed corpus 'tickets'"):
        custodian.set_own_cap(store, ANN, "tickets", 6.0, 1e-6)
    custodian.set_own_cap(store, ANN, "tickets", 1.2, 1e-6)  # two releases at ε = 1 compose past 1.2
    assert store.analyst_cap("tickets", ANN.actor) == (1.2, 1e-6)
    store.charge("tickets", [entry(1.0)], actor=ANN.actor, tool="app", job={})
    with pytest.raises(BudgetRefused, match="own cap"):
        store.charge("tickets", [entry(1.0)], actor=ANN.actor, tool="app", job={})
    store.charge("tickets", [entry(1.0)], actor="bob@lab.example", tool="app", job={})  # Ann's cap is hers only
    with pytest.raises(NotSignedIn):
        custodian.set_own_cap(store, VISITOR, "tickets", 1.0, 1e-6)
