"""Every calibrated value errs on the private side, checked in exact arithmetic (issue 8, item 1).

* sigma: the Gaussian privacy profile delta(sigma), evaluated with mpmath at 60 digits, is <= the target
  over a grid of epsilon in [0.01, 20] x delta in [1e-15, 0.1] (and at epsilon/2, delta/2 for the
  bounded-counts baseline, with the exact sqrt(Delta0) count sensitivity);
* rho: the threshold event "one of a lone user's t items passes" has probability <= its share of
  delta for every t <= Delta0, again in mpmath;
* Laplace scales, the zCDP conversions and the delta split are rounded the safe way (Fraction/mpmath);
* each user's increments to the weighted histogram have exact (Fraction) l1 / l2 norm <= 1.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.mechanisms.dpsu_step import weighted_update
from dpsu_core.mechanisms.greedy import greedy_update, item_hash_keys
from dpsu_core.mechanisms.registry import get_mechanism
from dpsu_core.mechanisms.sampling import rows_from_lists
from dpsu_core.mechanisms.setunion import l1_descent_update, l2_descent_update
from dpsu_core.privacy import (
    count_l2_sensitivity,
    cutoff,
    gaussian_scale,
    laplace_scale,
    rho_count_gaussian,
    rho_count_laplace,
    rho_greedy,
    rho_weighted_gaussian,
    rho_weighted_laplace,
)
from dpsu_core.privacy.zcdp import (
    approx_zcdp_budget,
    dp_epsilon_to_zcdp_rho,
    gaussian_zcdp,
    pure_dp_to_zcdp,
    zcdp_delta_prime,
    zcdp_to_dp_epsilon,
)
from tests.helpers import descent_steps

EPSILONS = [0.01, 0.05, 0.3, 1.0, 3.0, 8.0, 20.0]
DELTAS = [1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 0.1]
GRID = [(e, d) for e in EPSILONS for d in DELTAS]
DIGITS = 60


def _delta_exact(sigma, epsilon, sensitivity):
    """delta(sigma) of the Gaussian mechanism, all arguments mpf (60 digits), written out independently."""
    r = sigma / sensitivity
    return mp.ncdf(1 / (2 * r) - epsilon * r) - mp.exp(epsilon) * mp.ncdf(-1 / (2 * r) - epsilon * r)


# --------------------------------------------------------------------------- sigma
@pytest.mark.parametrize("eps, delta", GRID)
def test_sigma_meets_half_delta_in_exact_arithmetic(eps, delta):
    with mp.workdps(DIGITS):
        sigma = gaussian_scale(eps, delta)
        assert _delta_exact(mp.mpf(sigma), mp.mpf(eps), 1) <= mp.mpf(delta) / 2
        # bounded counts: selection at (eps/2, delta/2) with l2 = 1, counts at (eps/2, delta/2) with l2 = sqrt(100)
        cal = get_mechanism("bounded-counts", epsilon=eps, delta=delta, max_items=100).calibrate().details.as_dict()
        e2, d2 = mp.mpf(cal["selection_epsilon"]), mp.mpf(cal["selection_delta"])
        assert e2 + mp.mpf(cal["count_epsilon"]) <= mp.mpf(eps) and d2 + mp.mpf(cal["count_delta"]) <= mp.mpf(delta)
        assert _delta_exact(mp.mpf(cal["selection_sigma"]), e2, 1) <= d2 / 2
        s_cnt = mp.mpf(cal["count_sigma"])
        assert _delta_exact(s_cnt, mp.mpf(cal["count_epsilon"]), mp.sqrt(100)) <= mp.mpf(cal["count_delta"])
        # power: one percent less noise breaks the constraint, so the check can fail
        assert _delta_exact(mp.mpf(sigma) * mp.mpf("0.99"), mp.mpf(eps), 1) > mp.mpf(delta) / 2


@pytest.mark.parametrize("m", [1, 2, 3, 10, 99, 100, 12345])
def test_count_sensitivity_is_at_least_sqrt_delta0(m):
    assert Fraction(count_l2_sensitivity(m)) ** 2 >= m
    assert Fraction(math.nextafter(count_l2_sensitivity(m), 0)) ** 2 < m  # and not more than one ulp above


# --------------------------------------------------------------------------- rho
def _lap_tail(x, lam):
    return mp.exp(-x / lam) / 2 if x >= 0 else 1 - mp.exp(x / lam) / 2


def _event(p_one, t):
    """P[at least one of t independent items passes] = 1 - (1 - p)^t."""
    return 1 - (1 - p_one) ** t


T_CHECK = [1, 2, 3, 5, 10, 20, 37, 50, 99, 100]  # every t <= Delta0 = 100 that can bind (t=1 and t=Delta0)
# plus the interior; the max over t in the library covers all 100


@pytest.mark.parametrize("eps, delta", GRID)
def test_rho_event_probability_is_within_its_delta_share(eps, delta):
    m = 100
    with mp.workdps(DIGITS):
        d = mp.mpf(delta)
        lam = mp.mpf(laplace_scale(eps))
        r_wl = mp.mpf(rho_weighted_laplace(eps, delta, m))
        sig = mp.mpf(gaussian_scale(eps, delta))
        r_wg = mp.mpf(rho_weighted_gaussian(eps, delta, m))
        for t in range(1, m + 1):
            # weighted/policy Laplace: t items of weight 1/t, noise Laplace(lambda), share delta
            assert _event(_lap_tail(r_wl - mp.mpf(1) / t, lam), t) <= d
            # weighted/policy Gaussian: t items of weight 1/sqrt(t), share delta/2
            assert _event(mp.ncdf(-(r_wg - 1 / mp.sqrt(t)) / sig), t) <= d / 2
        # count Laplace: Delta0 items of weight 1, noise Laplace(Delta0/eps)
        lam_c = mp.mpf(laplace_scale(eps, m))
        assert lam_c >= mp.mpf(m) / mp.mpf(eps)
        assert _event(_lap_tail(mp.mpf(rho_count_laplace(eps, delta, m)) - 1, lam_c), m) <= d
        # count Gaussian: Delta0 items of weight 1, sigma for l2 sqrt(Delta0), share delta/2
        sig_c = mp.mpf(gaussian_scale(eps, delta, count_l2_sensitivity(m)))
        assert _event(mp.ncdf(-(mp.mpf(rho_count_gaussian(eps, delta, m)) - 1) / sig_c), m) <= d / 2
        # capped GW (docs/algorithms.md §4): new candidates carry weights summing to <= 1 over at most Delta0 items; the
        # union bound is largest at one weight 1 and Delta0 - 1 weights 0
        r_gw = mp.mpf(rho_greedy(eps, delta, m))
        assert _lap_tail(r_gw - 1, lam) + (m - 1) * _lap_tail(r_gw, lam) <= d
        # power: the published GW threshold breaks the same bound
        r_pub = 1 - mp.log(2 * d) / mp.mpf(eps)
        assert _lap_tail(r_pub - 1, lam) + (m - 1) * _lap_tail(r_pub, lam) > d


def test_thresholds_take_constant_memory_for_large_delta0():
    import tracemalloc

    # warm up first (lazy scipy/mpmath imports and the cached sigma of (1, 1e-6) are not what is measured)
    rho_weighted_laplace(1.0, 1e-6, 10)
    rho_weighted_gaussian(1.0, 1e-6, 10)
    tracemalloc.start()
    rho_weighted_laplace(1.0, 1e-6, 10**6)
    rho_weighted_gaussian(1.0, 1e-6, 10**6)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2_000_000  # an array of length Delta0 alone would be 8 MB
    # blocks give the same max as the whole range (the Laplace max over t is at t = Delta0 here)
    assert rho_weighted_laplace(1.0, 1e-6, 10**6) >= rho_weighted_laplace(1.0, 1e-6, 10**6 - 1)


# --------------------------------------------------------------------------- scales, cutoffs, zCDP
@pytest.mark.parametrize("eps", EPSILONS + [0.1, 0.7, 1 / 3, 2.9])
def test_laplace_scale_and_cutoff_round_up(eps):
    assert Fraction(laplace_scale(eps)) >= 1 / Fraction(eps)
    assert Fraction(laplace_scale(eps, 100)) >= 100 / Fraction(eps)
    rho, scale = 4.6956, laplace_scale(eps)
    assert Fraction(cutoff(rho, 3.0, scale)) >= Fraction(rho) + 3 * Fraction(scale)


@pytest.mark.parametrize("eps, delta", [(e, d) for e in EPSILONS for d in (1e-12, 1e-6, 0.1)])
def test_zcdp_conversions_round_toward_safety(eps, delta):
    with mp.workdps(DIGITS):
        budget = approx_zcdp_budget(eps, delta)
        assert Fraction(budget.delta_zcdp) + Fraction(budget.delta_conversion) <= Fraction(delta)
        r, dc = mp.mpf(budget.rho), mp.mpf(budget.delta_conversion)
        assert r + 2 * mp.sqrt(r * mp.log(1 / dc)) <= mp.mpf(eps)  # rho from epsilon: rounded down
        rho = dp_epsilon_to_zcdp_rho(eps, delta)
        rr = mp.mpf(rho)
        assert rr + 2 * mp.sqrt(rr * mp.log(1 / mp.mpf(delta))) <= mp.mpf(eps)
        assert mp.mpf(zcdp_to_dp_epsilon(rho, delta)) >= rr + 2 * mp.sqrt(rr * mp.log(1 / mp.mpf(delta)))
        assert Fraction(pure_dp_to_zcdp(eps)) >= Fraction(eps) ** 2 / 2
        assert Fraction(gaussian_zcdp(1.7, 3.0)) >= Fraction(9) / (2 * Fraction(1.7) ** 2)
        if eps > 0.5:
            dp = mp.mpf(zcdp_delta_prime(0.5, eps))
            assert dp >= mp.exp(-((mp.mpf(eps) - mp.mpf(0.5)) ** 2) / (4 * mp.mpf(0.5)))


# --------------------------------------------------------------------------- per-user increments
def test_naive_weights_would_exceed_norm_one():
    """Power of the norm tests below: 1/n and 1/sqrt(n) in floats do overshoot for some n."""
    assert any(Fraction(1.0 / n) * n > 1 for n in range(2, 50))
    assert any(Fraction(1.0 / math.sqrt(n)) ** 2 * n > 1 for n in range(2, 50))


@pytest.mark.parametrize("power", [1.0, 0.5])
def test_each_users_weights_are_exactly_within_norm_one(power):
    # one user with n items, for every n up to 2,000: the kernel's increments, summed exactly
    for n in range(1, 2001):
        inc = weighted_update(rows_from_lists([list(range(n))]), n, power)
        w = Fraction(float(inc[0]))
        assert np.all(inc == inc[0])
        assert (w * n if power == 1.0 else w * w * n) <= 1
        assert float(inc[0]) >= (1 / n**power) * (1 - 1e-14) - 2.0**-32  # only a grid unit below 1/n^power


def _exact_increments(update, rows_l, n_items, **kw):
    """Each user's exact increments: H after users 0..k minus H after users 0..k-1, as Fractions."""
    prev = [Fraction(0)] * n_items
    out = []
    for k in range(1, len(rows_l) + 1):
        cur = [Fraction(float(x)) for x in update(rows_from_lists(rows_l[:k]), n_items, **kw)]
        out.append([c - p for c, p in zip(cur, prev)])
        prev = cur
    return out


ROWS = st.lists(st.lists(st.integers(0, 29), unique=True, min_size=1, max_size=25), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(rows_l=ROWS)
def test_weighted_increments_have_exact_norm_at_most_one(rows_l):
    # Each user's increment vector is what the update adds for that user alone (from H = 0 nothing is
    # rounded away: the row's items are distinct). The users' sum is exact too (integer grid units:
    # ``test_dpsu_step``'s neighbouring-histogram tests).
    for power, order in ((1.0, 1), (0.5, 2)):
        for row in rows_l:
            inc = weighted_update(rows_from_lists([row]), 30, power)
            assert sum(Fraction(float(x)) ** order for x in inc) <= 1


@settings(max_examples=40, deadline=None)
@given(rows_l=ROWS, gamma=st.sampled_from([0.3, 1.0, 1.7, 3.0, 123.456]))
def test_descent_increments_have_exact_norm_at_most_one(rows_l, gamma):
    for update, order in ((l1_descent_update, 1), (l2_descent_update, 2)):
        for inc in _exact_increments(update, rows_l, 30, gamma=gamma):
            assert sum(abs(x) ** order for x in inc) <= 1


@settings(max_examples=40, deadline=None)
@given(rows_l=ROWS, gamma=st.sampled_from([1.0, 1.7, 3.0, 123.456]), max_items=st.integers(1, 25))
def test_greedy_increments_have_exact_l1_norm_at_most_one(rows_l, gamma, max_items):
    keys = item_hash_keys(np.array([f"w{i}" for i in range(30)], dtype=object))

    def update(rows, n_items, gamma):
        return greedy_update(rows, n_items, gamma, keys, 99, max_items=max_items, counts=rows.counts)[0]

    for inc in _exact_increments(update, rows_l, 30, gamma=gamma):
        assert sum(abs(x) for x in inc) <= 1


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("gamma", [2.0**11 + 0.1, 9_999.37])
def test_descent_step_stays_within_norm_one_when_delta0_times_gamma_is_large(gamma, seed):
    # n Gamma far above 2^20 with every weight just below Gamma: each updated weight is rounded to an ulp
    # of Gamma, which the fixed 2^-32 slack does not cover (the l1 step exceeded norm 1 by 1.9e-9 here),
    # so the kernels add rounding down (privacy.norms.add_down) and take their budget from descent_budget.
    h0 = gamma - np.random.default_rng(seed).uniform(1e-4, 0.05, size=3000)  # test data only
    for order, h in descent_steps(h0, gamma).items():
        assert sum(abs(Fraction(float(a)) - Fraction(float(b))) ** order for a, b in zip(h, h0)) <= 1


@pytest.mark.parametrize("delta", [0.6, 0.75, 0.9, 0.99, 0.999999])
@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 10.0])
def test_negative_laplace_thresholds_are_rounded_up_too(eps, delta):
    """delta > 0.5 at Delta0 = 1: the log term turns negative and so may rho; it is still rounded toward privacy
    (up), never down, checked against the exact value at the rounded scale (mpmath, 60 digits). Through the
    mechanisms' calibrations (Weighted/Policy Laplace, Count Laplace, GW)."""
    mp.mp.dps = 60
    lam = mp.mpf(laplace_scale(eps))
    d = mp.mpf(delta)
    exact = {
        "weighted-laplace": 1 + lam * mp.log(1 / (2 * d)),  # t = 1: 1 - (1 - delta)^1 = delta
        "policy-laplace": 1 + lam * mp.log(1 / (2 * d)),
        "count-laplace": 1 + lam * mp.log(1 / (2 * d)),
        "gw": lam * (mp.mpf(eps) - mp.log(2 * d)),  # ln(e^eps + Delta0 - 1) = eps at Delta0 = 1
    }
    negative = 0
    for name, want in exact.items():
        rho = get_mechanism(name, epsilon=eps, delta=delta, max_items=1).calibrate().rho
        assert rho is not None and mp.mpf(rho) >= want, (name, rho, want)
        assert mp.mpf(rho) - want <= 1e-11 * (abs(want) + 1)  # by the margin only
        negative += rho < 0
    if eps <= 0.1 and delta >= 0.75:
        assert negative == len(exact)  # the case at issue is exercised
