"""Policy DP-SIPS (docs/policy_sips.md): per-round calibration recomputed independently, the rounds'
composition within (epsilon, delta) exactly and against dp-accounting, the round kernel's sensitivity on
random coupled neighbours, rounds never re-release, and the lone user's items released with probability
<= delta (Monte Carlo with its own power check)."""

from __future__ import annotations

import math
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import policy_sips as mod
from dpsu_core.mechanisms.registry import get_mechanism, list_mechanisms
from dpsu_core.mechanisms.sampling import rows_from_lists
from dpsu_core.mechanisms.setunion import l2_descent_update
from tests.helpers import (
    coupled_neighbours,
    exceed_probability,
    lone_user_release_rate,
    neighbouring_rows,
    zipf_corpus,
)

TOL = 1e-9


def psips(epsilon=1.0, delta=1e-5, **params):
    return get_mechanism("policy-sips", epsilon=epsilon, delta=delta, **params)


def independent_rounds(eps, delta, m, alpha, rounds, r, share=0.5):
    """docs/policy_sips.md from scratch: sigma from the analytic-Gaussian curve at delta_noise = share * delta,
    f_i ~ r^(I-i), sigma_i = sigma / sqrt(f_i), delta_i = f_i (1 - share) delta, T_i by its max over t,
    Gamma_i = T_i + alpha sigma_i."""

    def gauss_delta(sig):
        return norm.cdf(1 / (2 * sig) - eps * sig) - math.exp(eps) * norm.cdf(-1 / (2 * sig) - eps * sig)

    sigma = brentq(lambda s: gauss_delta(s) - share * delta, 1e-2, 1e3, xtol=1e-15, rtol=1e-15)
    w = [r ** (rounds - i) for i in range(1, rounds + 1)]
    f = [x / sum(w) for x in w]
    sig = [sigma / math.sqrt(fi) for fi in f]
    dlt = [fi * (1 - share) * delta for fi in f]
    t = np.arange(1, m + 1)
    thr = [float(np.max(1 / np.sqrt(t) + s * norm.isf(1 - (1 - d) ** (1 / t)))) for s, d in zip(sig, dlt)]
    return sigma, sig, dlt, thr, [a + alpha * s for a, s in zip(thr, sig)]


CASES = [
    (1.0, 1e-5, 100, 5.0, 3, 0.3),
    (3.0, math.exp(-10), 100, 5.0, 2, 0.02),
    (3.0, math.exp(-10), 100, 3.0, 3, 0.02),
    (0.5, 1e-8, 10, 4.0, 5, 0.5),
    (8.0, 1e-6, 30, 2.0, 1, 0.3),
]


# --------------------------------------------------------------------------- calibration
@pytest.mark.parametrize("eps, delta, m, alpha, rounds, r", CASES)
def test_per_round_calibration_against_an_independent_recomputation(eps, delta, m, alpha, rounds, r):
    sigma, sig, dlt, thr, gam = independent_rounds(eps, delta, m, alpha, rounds, r)
    cal = psips(eps, delta, max_items=m, alpha=alpha, rounds=rounds, round_ratio=r).calibrate()
    d = cal.details
    assert cal.scale == pytest.approx(sigma, rel=1e-8) and d.mu_gdp == pytest.approx(1 / sigma, rel=1e-8)
    np.testing.assert_allclose(d.sigma_i, sig, rtol=1e-8)
    np.testing.assert_allclose(d.delta_i, dlt, rtol=1e-12)
    np.testing.assert_allclose(d.threshold_i, thr, rtol=1e-6)
    np.testing.assert_allclose(d.gamma_i, gam, rtol=1e-6)
    assert (cal.rho, cal.gamma) == (d.threshold_i[-1], d.gamma_i[-1]) and cal.noise == "gaussian"  # the headline


@pytest.mark.parametrize("how", ["half", "tuned"])
@pytest.mark.parametrize("eps, delta, m, alpha, rounds, r", CASES)
def test_rounds_never_spend_more_than_epsilon_delta(eps, delta, m, alpha, rounds, r, how):
    cal = psips(eps, delta, max_items=m, alpha=alpha, rounds=rounds, round_ratio=r, delta_split=how).calibrate()
    d = cal.details
    # exact: the Gaussian rounds' mu_i^2 add up to at most 1/sigma^2, the threshold deltas to at most
    # delta_thresholds, and delta_noise + delta_thresholds <= delta
    assert sum(1 / Fraction(s) ** 2 for s in d.sigma_i) <= 1 / Fraction(cal.scale) ** 2
    assert sum(Fraction(x) for x in d.delta_i) <= Fraction(d.delta_thresholds)
    assert Fraction(d.delta_noise) + Fraction(d.delta_thresholds) <= Fraction(delta)
    # dp-accounting: the adaptive composition of the rounds' Gaussian mechanisms (l2-sensitivity 1) is
    # (eps, delta_noise)-DP, and tightly so
    acc = PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(s) for s in d.sigma_i]))
    assert eps * (1 - 1e-3) <= acc.get_epsilon(d.delta_noise) <= eps * (1 + 1e-5)
    # each round's threshold: a lone user's t items at 1/sqrt(t) cross T_i with probability <= delta_i
    t = np.arange(1, m + 1)
    for s, thr, di in zip(d.sigma_i, d.threshold_i, d.delta_i):
        assert -np.expm1(t * norm.logcdf((thr - 1 / np.sqrt(t)) / s)).max() <= di * (1 + 1e-9)
    # the ledger's declared cost: rho_zcdp = 1/(2 sigma^2) (rounded up), delta = the thresholds' share
    from dpsu_core.accounting.ledger import zcdp_cost

    cost = zcdp_cost(cal)
    assert cost is not None and cost.delta == d.delta_thresholds
    assert Fraction(cost.rho) >= 1 / (2 * Fraction(cal.scale) ** 2) and cost.rho == pytest.approx(0.5 / cal.scale**2)


def test_one_round_is_policy_gaussian():
    for eps, delta, m, alpha, _, _ in CASES:
        a = get_mechanism("policy-gaussian", epsilon=eps, delta=delta, max_items=m, alpha=alpha).calibrate()
        b = psips(eps, delta, max_items=m, alpha=alpha, rounds=1).calibrate()
        assert (a.scale, a.rho, a.gamma) == (b.scale, b.rho, b.gamma)


def test_a_round_share_below_the_smallest_float_is_a_clear_error():
    with pytest.raises(ParameterError, match="too small to share over 20 rounds"):
        psips(3.0, 1e-300, rounds=20, round_ratio=1e-6).calibrate()
    # round 1's share 5e-307 over t <= Delta0 must stay a normal float: refused at Delta0 = 100, kept at Delta0 = 1
    with pytest.raises(ParameterError, match="leaves the float range"):
        psips(3.0, 1e-300, rounds=2, round_ratio=1e-6).calibrate()
    assert psips(3.0, 1e-300, rounds=2, round_ratio=1e-6, max_items=1).calibrate().details.delta_i[0] > 0


def test_registered_with_its_parameters():
    cls = list_mechanisms("set-union")["policy-sips"]
    assert cls.param_names == ("max_items", "alpha", "rounds", "round_ratio", "delta_split", "tune_users")
    assert psips().params == {
        "max_items": 100,
        "alpha": 5.0,
        "rounds": 3,
        "round_ratio": 0.02,
        "delta_split": "half",
        "tune_users": 0,
    }


# --------------------------------------------------------------------------- sensitivity of one round
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def coupled(draw):
    """A coupled pair (``coupled_neighbours``) and which items the round still holds (the others released)."""
    n_items, _, rows, extra, pos, gamma = draw(coupled_neighbours())
    keep = np.array(draw(st.lists(st.booleans(), min_size=n_items, max_size=n_items)), dtype=bool)
    return n_items, rows, extra, pos, gamma, keep


@SETTINGS
@given(case=coupled())
def test_one_round_moves_h_by_at_most_one_in_l2_and_new_items_are_the_added_users(case):
    # the coupling of the proof: D and D+u share the earlier rounds' output (``keep``), the order and the
    # samples of D's users; u is inserted anywhere
    n_items, rows, extra, pos, gamma, keep = case
    d, du = neighbouring_rows(rows, extra, pos)
    h_d = mod.policy_round_update(d, n_items, gamma, keep)
    h_du = mod.policy_round_update(du, n_items, gamma, keep)
    assert np.linalg.norm(h_du - h_d) <= 1.0 + TOL
    assert np.all(h_du <= gamma) and np.all(h_d >= 0)
    assert not np.any(h_du[~keep]) and not np.any(h_d[~keep])  # released items never get weight again
    new = np.flatnonzero((h_du > 0) & (h_d == 0))
    assert set(new) <= set(extra) & set(np.flatnonzero(keep))
    if new.size:  # the threshold's event: u's t new items carry at most 1/sqrt(t) each
        assert h_du[new].max() <= 1 / math.sqrt(new.size) + TOL


@SETTINGS
@given(case=coupled())
def test_the_round_kernel_is_the_l2_descent_over_the_remaining_items(case):
    n_items, rows, _, _, gamma, keep = case
    filtered = rows_from_lists([[x for x in r if keep[x]] for r in rows])
    np.testing.assert_array_equal(
        mod.policy_round_update(rows_from_lists(rows), n_items, gamma, keep),
        l2_descent_update(filtered, n_items, gamma),
    )


# --------------------------------------------------------------------------- rounds
def test_released_items_never_reenter_a_later_round(monkeypatch):
    corpus = zipf_corpus()
    calls: list[dict] = []
    real_h, real_thr = mod.policy_round_histogram, mod.noisy_threshold

    def spy_h(corpus_, rng, max_items, gamma, keep):
        h = real_h(corpus_, rng, max_items, gamma, keep)
        calls.append(dict(keep=keep.copy(), h=h, gamma=gamma, max_items=max_items))
        return h

    def spy_thr(h, rng, noise, scale, rho):
        ids = real_thr(h, rng, noise, scale, rho)
        calls[-1].update(ids=ids, sigma=scale, rho=rho)
        return ids

    monkeypatch.setattr(mod, "policy_round_histogram", spy_h)
    monkeypatch.setattr(mod, "noisy_threshold", spy_thr)
    mech = psips(epsilon=4.0, delta=1e-4, max_items=5, rounds=4, round_ratio=0.5)
    d = mech.calibrate().details
    rel = mech.release(corpus, seed=1)
    assert len(calls) == 4
    released_before = np.zeros(corpus.n_items, dtype=bool)
    for i, c in enumerate(calls):
        assert (c["gamma"], c["sigma"], c["rho"]) == (d.gamma_i[i], d.sigma_i[i], d.threshold_i[i])
        assert c["max_items"] == 5
        np.testing.assert_array_equal(c["keep"], ~released_before)  # every earlier release is filtered out
        assert np.all(c["h"][released_before] == 0)  # ... so it gets no weight and cannot be a candidate
        assert not released_before[c["ids"]].any()
        released_before[c["ids"]] = True
    assert sum(c["ids"].size for c in calls) == rel.n_released  # disjoint rounds: no duplicates
    np.testing.assert_array_equal(np.sort(rel.item_ids), np.flatnonzero(released_before))
    assert calls[1]["ids"].size > 0  # a later round did release something: the test has teeth
    assert [r["released"] for r in rel.diagnostics.extra["rounds"]] == [c["ids"].size for c in calls]
    assert "NOT private" in rel.diagnostics.extra["note"]


# --------------------------------------------------------------------------- a lone user's items: P <= delta
DELTA_MC = 0.05


@pytest.mark.parametrize(
    "n_unique, lone_common, split, share",
    [
        (1, 0, {}, 0.5),
        (5, 0, {}, 0.5),
        (3, 4, {}, 0.5),
        (1, 0, {"delta_split": "tuned", "tune_users": 1}, 0.05),
        (5, 0, {"delta_split": "tuned"}, 0.7),
    ],
)
def test_lone_user_items_released_with_probability_at_most_delta(n_unique, lone_common, split, share):
    # the tuned rows: k = 1 gives the threshold 95% of delta (noise share 0.05), the margin k = 17 gives it 30%
    m = 8

    def factory():
        return psips(epsilon=1.0, delta=DELTA_MC, max_items=m, alpha=2.0, rounds=3, round_ratio=0.5, **split)

    est = lone_user_release_rate(
        factory, 2500, n_unique=n_unique, lone_common=lone_common, n_users=150, seed=11 + n_unique
    )
    assert est.lower <= DELTA_MC, est
    if lone_common:
        return
    # Power: with only unique words the lone user's step gives each of them 1/sqrt(n_unique) (all start at
    # gap Gamma_i) in every round until one is released; the estimate must contain that exact probability
    d = factory().calibrate().details
    assert d.noise_share == share
    w = [1 / math.sqrt(n_unique)] * n_unique
    miss = np.prod([1 - exceed_probability("gaussian", s, t, w) for s, t in zip(d.sigma_i, d.threshold_i)])
    exact = 1 - miss
    assert exact <= d.delta_thresholds * (1 + 1e-9) <= DELTA_MC * (1 + 1e-9)  # the thresholds' share of delta
    assert est.contains(exact), (est, exact)


def test_a_share_that_underflows_to_zero_is_shown_by_its_exact_value():
    """Round 1's share of delta = 1e-250 over 20 rounds at ratio 1e-6 is about 5e-365: a float holds 0, and the
    refusal showed "(0)"; it names the exact share instead."""
    for mech in (lambda: psips(3.0, 1e-250, rounds=20, round_ratio=1e-6), lambda: dpsips(1e-250)):
        with pytest.raises(ParameterError) as err:
            mech().calibrate()
        assert "share of it (5e-365)" in str(err.value) and "(0)" not in str(err.value)


def dpsips(delta: float):
    return get_mechanism("dp-sips", epsilon=3.0, delta=delta, rounds=20, ratio=1e-6)
