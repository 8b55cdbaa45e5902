"""The spend gate (dpsu_core.accounting.spend) and the release history (dpsu_core.accounting.history)."""

from __future__ import annotations

import pytest

from dpsu_core.accounting.history import CorpusRef, ReleaseHistory
from dpsu_core.accounting.ledger import Ledger
from dpsu_core.accounting.spend import PUBLIC_DEMO_SPENT, TEACHING_REFUSED, plan_spend, spent_figure
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import get_mechanism

EPS, DELTA = 3.0, 1e-6


def _cal(name="weighted-gaussian", eps=EPS):
    return get_mechanism(name, epsilon=eps, delta=DELTA).calibrate()


def _plan(
    spent, planned, *, on_private=True, teaching=False, public_demo=False, limit=EPS, limit_delta=1e-5, action="Release"
):
    return plan_spend(
        action,
        planned,
        spent,
        corpus_id="upload:abc",
        corpus_name="posts.csv",
        limit_epsilon=limit,
        limit_delta=limit_delta,
        on_private=on_private,
        teaching=teaching,
        public_demo=public_demo,
    )


def test_a_spend_within_the_session_budget_runs_and_one_past_it_is_blocked_until_a_new_budget():
    led = Ledger()
    first = _plan(led.entries, [(_cal(), 1)])
    assert first.allowed and not first.needs_yes and not first.over_budget and first.after.epsilon == pytest.approx(3.0)
    assert "1 release on posts.csv, ε = 3, δ = 1e-06 by basic composition" in first.cost_text()
    assert "the session budget is ε = 3, δ = 1e-05" in first.cost_text()
    led.add(first.entries)
    second = _plan(led.entries, [(_cal(), 1)])
    assert second.over_budget and not second.needs_yes and round(second.after.epsilon, 2) == 4.29
    assert "would become ε = 4.286" in second.over_budget_text() and "past the session budget ε = 3" in (
        second.over_budget_text()
    )
    # the budget that covers it: ε rounded up to 3 digits, δ kept (it is not passed)
    assert second.covering_budget == (4.29, 1e-5)
    assert not _plan(led.entries, [(_cal(), 1)], limit=4.29).over_budget
    # the session's δ is a cap too: 11 releases at δ = 1e-6 pass δ = 1e-5 whatever ε allows
    many = _plan(led.entries, [(_cal(), 10)], limit=1000.0)
    assert many.over_budget and many.covering_budget == (1000.0, 1.1e-5)
    # an action's identity: another action, another cost or a later total is another key
    assert second.key != first.key
    assert second.key != _plan(led.entries, [(_cal(), 2)]).key
    assert second.key != _plan(led.entries, [(_cal(), 1)], action="Compare").key
    led.add(second.entries)
    assert _plan(led.entries, [(_cal(), 1)]).key != second.key


def test_round_up_never_rounds_below():
    from dpsu_core.accounting.spend import round_up

    for x in (4.2857, 2.3e-5, 1.1e-5, 9.999, 36.8802, 1e-6, 0.1 + 0.2):
        for d in (1, 2, 3):
            r = round_up(x, d)
            assert r >= x and len(f"{r:.{d}g}") <= len(f"{x:.{d}g}") + 4 and float(f"{r:.{d}g}") == r


def test_entries_carry_the_corpus_and_the_teaching_flag():
    plan = _plan([], [(_cal(), 4), (_cal("weighted-laplace"), 1)], teaching=True, public_demo=True)
    assert [(e.corpus_id, e.releases, e.teaching) for e in plan.entries] == [
        ("upload:abc", 4, True),
        ("upload:abc", 1, True),
    ]
    assert plan.cost.releases == 5 and not plan.after.guaranteed and plan.public_demo
    # the public demo: nothing private to spend, so no yes is asked and the cost says why
    assert not plan.needs_yes and not plan.over_budget
    assert PUBLIC_DEMO_SPENT in plan.cost_text() and "public data needs none" in plan.cost_text()
    # the same totals on a private corpus (a seeded entry from elsewhere) still need the explicit yes
    seeded = plan.entries[0]
    private = _plan([seeded], [(_cal(), 1)])
    assert not private.public_demo and not private.after.guaranteed and private.needs_yes
    assert "no DP guarantee" in private.question()
    assert spent_figure(private.after, False) == "no DP guarantee"
    assert spent_figure(plan.after, True) == PUBLIC_DEMO_SPENT
    assert spent_figure(_plan([], [(_cal(), 1)]).after, True) == "3"  # a guaranteed total is a figure, demo or not


def test_teaching_is_refused_on_an_uploaded_private_corpus_and_free_elsewhere():
    refused = _plan([], [(_cal(), 1)], teaching=True)
    assert not refused.allowed and refused.refusal == TEACHING_REFUSED and not refused.needs_yes
    assert _plan([], [(_cal(), 1)], teaching=True, public_demo=True).allowed
    explore = _plan([], [(_cal(), 400)], teaching=True, on_private=False)
    assert explore.allowed and not explore.needs_yes and explore.after.releases == 0
    assert "not your private corpus: nothing is spent" in explore.cost_text()


def test_release_history_keeps_every_release_and_defaults_to_the_release_page():
    corpus = corpus_from_token_lists([["a", "b"], ["a"], ["a", "c"]] * 20)
    mech = get_mechanism("weighted-laplace", epsilon=5.0, delta=1e-3, max_items=2)
    ref = CorpusRef(1, "posts.csv", "upload:abc", True, "posts.csv")
    other = CorpusRef(2, "demo", "demo", False)
    h = ReleaseHistory()
    assert h.default() is None
    r1 = h.add(mech.release(corpus), ref, "Release", {"max_items": 2, "public_source": corpus})
    r2 = h.add(mech.release(corpus), ref, "Histogram fill")
    r3 = h.add(mech.release(corpus), other, "Release")
    assert [r.number for r in h.records] == [1, 2, 3] and r1.params == {"max_items": 2}  # scalars only
    assert h.default(1) is r1 and h.last(1) is r2 and h.default() is r3
    assert h.latest_by_mechanism(1) == {"weighted-laplace": r2}
    assert r1.title().startswith("#1 · Weighted Laplace, ε = 5, δ = 0.001 on posts.csv (Release page, ")
    assert "(exploration)" in r3.title()
    assert r1.cost.epsilon == 5.0
    with pytest.raises(ParameterError, match="no release #4"):
        h.get(4)
