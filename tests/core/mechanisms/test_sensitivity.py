"""Sensitivity of every set-union update policy under the coupling the proofs use
(Gopi et al. 2020, Lemmas 4.1-4.2 and 5.2): D and D+u process the shared users in the
same order with the same sampled items; u is inserted at an arbitrary position.

Random corpora come from hypothesis over a tiny item universe with a small cutoff Gamma,
so items reach Gamma often and the descent edge cases (items at Gamma, all items
reaching Gamma, ties between gaps) are exercised.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.mechanisms.dpsu_step import count_update, weighted_update
from dpsu_core.mechanisms.sampling import apply_plan, rows_from_lists, sampling_plan
from dpsu_core.mechanisms.setunion import l1_descent_update, l2_descent_update, policy_update
from dpsu_core.privacy.norms import DESCENT_BUDGET
from tests.helpers import GAMMAS, coupled_neighbours, neighbouring_rows

TOL = 1e-9
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A policy: (name, update(rows, n_items, gamma), norm order it is bounded in, bound as a function of Delta0)
POLICIES = {
    "count-l1": (lambda r, n, g: count_update(r, n), 1, lambda m: m),
    "count-l2": (lambda r, n, g: count_update(r, n), 2, lambda m: math.sqrt(m)),
    "weighted-laplace": (lambda r, n, g: weighted_update(r, n, 1.0), 1, lambda m: 1.0),
    "weighted-gaussian": (lambda r, n, g: weighted_update(r, n, 0.5), 2, lambda m: 1.0),
    "l1-descent": (l1_descent_update, 1, lambda m: 1.0),
    "l2-descent": (l2_descent_update, 2, lambda m: 1.0),
}


@pytest.mark.parametrize("policy", list(POLICIES))
@SETTINGS
@given(case=coupled_neighbours())
def test_neighbour_sensitivity(policy, case):
    update, order, bound = POLICIES[policy]
    n_items, m, rows, extra, pos, gamma = case
    d, du = neighbouring_rows(rows, extra, pos)
    h_d = update(d, n_items, gamma)
    h_du = update(du, n_items, gamma)
    diff = h_du - h_d
    assert np.linalg.norm(diff, ord=order) <= bound(m) + TOL
    # the threshold proofs: items only u holds (T = supp(H(D+u)) minus supp(H(D))) carry weight <= 1/|T| (l1)
    # or 1/sqrt(|T|) (l2) -- count: <= 1 each
    new = np.flatnonzero((h_du > 0) & (h_d == 0))
    assert set(new) <= set(extra)
    if new.size:
        cap = {"count-l1": 1.0, "count-l2": 1.0}.get(policy, 1.0 / new.size ** (1.0 / order))
        assert h_du[new].max() <= cap + TOL
    # no item outside u's row and the other users' rows ever gets weight
    held = set(extra).union(*map(set, rows)) if rows else set(extra)
    assert set(np.flatnonzero(h_du)) <= held


@pytest.mark.parametrize("policy", ["count-l1", "weighted-laplace", "weighted-gaussian", "l1-descent"])
@SETTINGS
@given(case=coupled_neighbours())
def test_adding_a_user_never_lowers_a_weight(policy, case):
    # Lemma 4.1's invariant G1 >= G2 for l1-descent; trivially true for the additive policies
    update = POLICIES[policy][0]
    n_items, m, rows, extra, pos, gamma = case
    d, du = neighbouring_rows(rows, extra, pos)
    assert np.all(update(du, n_items, gamma) - update(d, n_items, gamma) >= -TOL)


@pytest.mark.parametrize("policy", list(POLICIES))
@SETTINGS
@given(case=coupled_neighbours())
def test_each_user_moves_the_histogram_by_at_most_its_budget(policy, case):
    update, order, bound = POLICIES[policy]
    n_items, m, rows, _, _, gamma = case
    prev = np.zeros(n_items)
    for k in range(1, len(rows) + 1):
        cur = update(rows_from_lists(rows[:k]), n_items, gamma)
        step = cur - prev
        assert np.linalg.norm(step, ord=order) <= bound(m) + TOL
        assert np.all(step >= -TOL)  # a user only ever adds weight
        assert set(np.flatnonzero(step > TOL)) <= set(rows[k - 1])  # ... and only to its own items
        prev = cur


@pytest.mark.parametrize("update", [l1_descent_update, l2_descent_update], ids=["l1", "l2"])
@SETTINGS
@given(case=coupled_neighbours())
def test_policy_weights_never_exceed_gamma(update, case):
    n_items, m, rows, extra, pos, gamma = case
    _, du = neighbouring_rows(rows, extra, pos)
    h = update(du, n_items, gamma)
    assert np.all(h <= gamma)
    assert np.all(h >= 0)


@pytest.mark.parametrize("update", [l1_descent_update, l2_descent_update], ids=["l1", "l2"])
@SETTINGS
@given(case=coupled_neighbours())
def test_policy_spends_the_whole_budget_unless_all_reach_gamma(update, case):
    # the descent is not lazy: a user whose items cannot all reach Gamma spends exactly its budget
    # (DESCENT_BUDGET = 1 - 2^-32: the margin that keeps the exact norm of the increments <= 1)
    n_items, m, rows, _, _, gamma = case
    order = 1 if update is l1_descent_update else 2
    prev = np.zeros(n_items)
    for k in range(1, len(rows) + 1):
        cur = update(rows_from_lists(rows[:k]), n_items, gamma)
        row = rows[k - 1]
        gaps = gamma - prev[row]
        if np.linalg.norm(gaps, ord=order) > DESCENT_BUDGET:
            assert np.linalg.norm(cur - prev, ord=order) == pytest.approx(1.0, abs=1e-9)
        else:
            assert np.allclose(cur[row], gamma, atol=1e-12, rtol=0)
        prev = cur


# --------------------------------------------------------------------------- hand-worked updates (docs/algorithms.md §3)
def test_l1_descent_worked_example():
    # Gamma = 1. User 1 holds {0}: 0 rises by its full budget 1 -> reaches Gamma exactly.
    # User 2 holds {0, 1, 2}: 0 is at Gamma (skipped); 1 and 2 rise by 1/2 each.
    # User 3 holds {1, 3}: gaps 0.5 and 1; both rise 0.5 (cost 1.0) -> 1 reaches Gamma, 3 at 0.5, budget 0.
    # User 4 holds {3, 4}: gaps 0.5, 1 -> +0.5 each (cost 1.0): 3 -> 1.0, 4 -> 0.5.
    rows = rows_from_lists([[0], [0, 1, 2], [1, 3], [3, 4]])
    np.testing.assert_allclose(l1_descent_update(rows, 5, 1.0), [1.0, 1.0, 0.5, 1.0, 0.5], atol=1e-15)
    # Gamma = 0.3, a user with 4 fresh items: reaching Gamma would cost 1.2 > 1, so each rises 1/4.
    np.testing.assert_allclose(l1_descent_update(rows_from_lists([[0, 1, 2, 3]]), 4, 0.3), [0.25] * 4)
    # ... and with Gamma = 0.2 all four reach Gamma (cost 0.8), the rest of the budget is unused.
    np.testing.assert_allclose(l1_descent_update(rows_from_lists([[0, 1, 2, 3]]), 4, 0.2), [0.2] * 4)


def test_l1_descent_drops_items_as_they_reach_gamma():
    # Gamma = 1. {0, 5}: +0.5 each. {0, 6, 7, 8, 9}: gaps (0.5, 1, 1, 1, 1), 5 * 0.5 > 1, so +0.2 each
    # (item 0 -> 0.7). {0, 10}: gaps (0.3, 1): both +0.3 (cost 0.6), item 0 stops at Gamma, item 10 gets
    # the remaining 0.4 -> 0.7.
    rows = rows_from_lists([[0, 5], [0, 6, 7, 8, 9], [0, 10]])
    h = l1_descent_update(rows, 11, 1.0)
    np.testing.assert_allclose(h[[0, 5, 6, 10]], [1.0, 0.5, 0.2, 0.7], atol=1e-12)
    assert h.sum() == pytest.approx(3.0)


def test_l2_descent_worked_example():
    # Gamma = 5: user {0, 1} with gaps (5, 5): Z = 5 sqrt 2 > 1 -> +1/sqrt2 each.
    h = l2_descent_update(rows_from_lists([[0, 1]]), 2, 5.0)
    np.testing.assert_allclose(h, [1 / math.sqrt(2)] * 2)
    # gaps (3, 4) -> Z = 5 -> +0.6, +0.8: first bring items to (2, 1) with Gamma = 5 via single-item users
    # (each +1), then one user on both.
    rows = rows_from_lists([[0], [0], [1], [0, 1]])
    np.testing.assert_allclose(l2_descent_update(rows, 2, 5.0), [2.6, 1.8], atol=1e-12)
    # Gamma = 1.6, items at (1, 1) -> gaps (0.6, 0.6), Z = 0.85 <= 1 -> both land on Gamma exactly
    rows = rows_from_lists([[0], [1], [0, 1]])
    np.testing.assert_allclose(l2_descent_update(rows, 2, 1.6), [1.6, 1.6], atol=1e-12)


def test_weighted_and_count_updates_by_hand():
    rows = rows_from_lists([[0, 1, 2, 3], [1], []])
    np.testing.assert_allclose(count_update(rows, 5), [1, 2, 1, 1, 0])
    np.testing.assert_allclose(weighted_update(rows, 5, 1.0), [0.25, 1.25, 0.25, 0.25, 0])
    np.testing.assert_allclose(weighted_update(rows, 5, 0.5), [0.5, 1.5, 0.5, 0.5, 0])


# --------------------------------------------------------------------------- the release path is the proven update
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    users=st.lists(st.lists(st.integers(0, 15), min_size=1, max_size=20), min_size=1, max_size=30),
    m=st.integers(1, 6),
    gamma=GAMMAS,
    seed=st.integers(0, 2**32 - 1),
    shuffle=st.booleans(),
)
def test_fused_policy_pass_equals_sample_then_update(users, m, gamma, seed, shuffle):
    # Policy mechanisms sample Delta0 items inside the update kernel; the result must be exactly the
    # descent applied to the materialised ordered-and-sampled rows that the coupling tests above verify.
    corpus = corpus_from_token_lists([[str(t) for t in u] for u in users], posts_per_user=False)
    plan = sampling_plan(corpus, np.random.default_rng(seed), m, shuffle=shuffle)
    rows = apply_plan(corpus, plan)
    assert np.diff(rows.indptr).max() <= m
    np.testing.assert_array_equal(
        policy_update(corpus, plan, gamma, l1=True), l1_descent_update(rows, corpus.n_items, gamma)
    )
    np.testing.assert_array_equal(
        policy_update(corpus, plan, gamma, l1=False), l2_descent_update(rows, corpus.n_items, gamma)
    )
