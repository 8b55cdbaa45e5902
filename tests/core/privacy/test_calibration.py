"""Calibration of the set-union mechanisms: docs/algorithms.md §2 reference values, the analytic
Gaussian mechanism against dp-accounting, each mechanism's calibrate() against the closed
forms, and parameter validation."""

from __future__ import annotations

import json
import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from scipy.stats import norm

from dpsu_core.errors import DpsuError, ParameterError
from dpsu_core.mechanisms.registry import get_mechanism, list_mechanisms
from dpsu_core.privacy import (
    analytic_gaussian_sigma,
    gaussian_delta,
    gaussian_delta_exact,
    gaussian_scale,
    laplace_scale,
    rho_count_gaussian,
    rho_count_laplace,
    rho_greedy,
    rho_greedy_published,
    rho_weighted_gaussian,
    rho_weighted_gaussian_sigma,
    rho_weighted_laplace,
)

EPS, DELTA = 3.0, math.exp(-10)
SET_UNION = [
    "count-laplace",
    "count-gaussian",
    "weighted-laplace",
    "weighted-gaussian",
    "policy-laplace",
    "policy-gaussian",
]


# --------------------------------------------------------------------------- docs/algorithms.md §2 reference values
@pytest.mark.parametrize(
    "max_items, rho_lap, rho_gauss",
    [
        (1, 4.1023, 6.4353),
        (10, 4.1023, 6.4353),
        (50, 4.4263, 6.6862),
        (100, 4.6473, 6.8237),
        (200, 4.8734, 6.9689),
        (300, 5.0069, 7.0561),
    ],
)
def test_rho_reference_table(max_items, rho_lap, rho_gauss):
    # the table is printed to 4 decimals: |error| <= 0.5e-4 plus float slack
    assert rho_weighted_laplace(EPS, DELTA, max_items) == pytest.approx(rho_lap, abs=1e-4)
    assert rho_weighted_gaussian(EPS, DELTA, max_items) == pytest.approx(rho_gauss, abs=1e-4)


def test_scale_and_count_reference_values():
    assert gaussian_scale(EPS, DELTA) == pytest.approx(1.3327913, abs=1e-7)
    assert laplace_scale(EPS) == pytest.approx(1 / 3)
    assert rho_count_laplace(EPS, DELTA, 100) == pytest.approx(464.73, abs=1e-2)
    assert math.sqrt(100) * gaussian_scale(EPS, DELTA) == pytest.approx(13.3279, abs=1e-4)
    assert rho_count_gaussian(EPS, DELTA, 100) == pytest.approx(68.237, abs=1e-3)
    assert rho_greedy_published(EPS, DELTA) == pytest.approx(4.1023, abs=1e-4)
    assert rho_greedy(EPS, DELTA, 100) == pytest.approx(4.6956, abs=1e-4)  # capped GW (docs/algorithms.md §4)
    assert rho_greedy(EPS, DELTA, 30) == pytest.approx(4.4001, abs=1e-4)


@pytest.mark.parametrize(
    "sigma, eps, delta",
    [
        (0.5, 1.0, 0.5098616600547),
        (1.0, 1.0, 0.1269367375066),
        (2.0, 0.5, 0.05244032328767),
        (5.0, 0.3, 0.006785352684196),
    ],
)
def test_analytic_gaussian_oracle_points(sigma, eps, delta):
    assert gaussian_delta(sigma, eps) == pytest.approx(delta, rel=1e-11)


def test_smallest_sigma_reference():
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306316348, abs=1e-9)


# --------------------------------------------------------------------------- analytic Gaussian vs dp-accounting
GRID = [(float(e), float(d)) for e in np.geomspace(0.1, 10.0, 9) for d in np.geomspace(1e-12, 1e-2, 6)]


@pytest.mark.parametrize("eps, delta", GRID)
def test_analytic_sigma_matches_dp_accounting(eps, delta):
    # dp_accounting.get_sigma_gaussian (0.6) runs brentq with xtol=1e-12 on sigma; over this grid
    # sigma >= ~0.35, so its own error is below 3e-12 relative: a 1e-9 relative comparison is meaningful.
    ours = analytic_gaussian_sigma(eps, delta)
    ref = dp_accounting.get_sigma_gaussian(eps, delta)
    assert ours == pytest.approx(ref, rel=1e-9, abs=0)
    # it is on the safe side of the root in exact arithmetic (mpmath at 60 digits; the float log-space
    # evaluation itself is off by up to ~2e-12 relative, on either side) ...
    assert gaussian_delta_exact(ours, eps) <= mpmath.mpf(delta)
    # ... and it is the SMALLEST such sigma: 1e-9 less noise breaks it
    assert gaussian_delta(ours * (1 - 1e-9), eps) > delta


@pytest.mark.parametrize("sensitivity", [0.5, 1.0, math.sqrt(10), 7.0])
def test_analytic_sigma_scales_with_sensitivity(sensitivity):
    base = analytic_gaussian_sigma(1.0, 1e-6)
    assert analytic_gaussian_sigma(1.0, 1e-6, sensitivity) == pytest.approx(sensitivity * base, rel=1e-12)
    # the profile with that sensitivity is met at exactly that sigma
    assert gaussian_delta(sensitivity * base, 1.0, sensitivity) == pytest.approx(1e-6, rel=1e-8)


def test_gaussian_scale_spends_half_of_delta():
    assert gaussian_scale(1.0, 1e-6) == pytest.approx(dp_accounting.get_sigma_gaussian(1.0, 5e-7), rel=1e-9)


# --------------------------------------------------------------------------- each mechanism's calibrate() = closed forms
def _closed_rho_laplace_weighted(eps, delta, m):
    t = np.arange(1, m + 1)
    return max(1 / t + (1 / eps) * np.log(1 / (2 * (1 - (1 - delta) ** (1 / t)))))


def _closed_rho_gauss_weighted(sigma, delta, m):
    t = np.arange(1, m + 1)
    return max(1 / np.sqrt(t) + sigma * norm.ppf((1 - delta / 2) ** (1 / t)))


# Moderate delta so the naive closed forms (no log-space tricks) are accurate to ~1e-10.
CAL_CASES = [(1.0, 1e-5, 1, 3.0), (0.5, 1e-6, 10, 5.0), (2.0, 1e-3, 37, 0.0), (3.0, 1e-4, 100, 4.0)]


@pytest.mark.parametrize("eps, delta, m, alpha", CAL_CASES)
def test_mechanism_calibrations_equal_closed_forms(eps, delta, m, alpha):
    sigma = dp_accounting.get_sigma_gaussian(eps, delta / 2)
    lam = 1 / eps
    expected = {
        "count-laplace": ("laplace", m / eps, 1 + (m / eps) * math.log(1 / (2 * (1 - (1 - delta) ** (1 / m)))), None),
        "count-gaussian": (
            "gaussian",
            math.sqrt(m) * sigma,
            1 + math.sqrt(m) * sigma * norm.ppf((1 - delta / 2) ** (1 / m)),
            None,
        ),
        "weighted-laplace": ("laplace", lam, _closed_rho_laplace_weighted(eps, delta, m), None),
        "weighted-gaussian": ("gaussian", sigma, _closed_rho_gauss_weighted(sigma, delta, m), None),
    }
    expected["policy-laplace"] = (
        "laplace",
        lam,
        expected["weighted-laplace"][2],
        expected["weighted-laplace"][2] + alpha * lam,
    )
    expected["policy-gaussian"] = (
        "gaussian",
        sigma,
        expected["weighted-gaussian"][2],
        expected["weighted-gaussian"][2] + alpha * sigma,
    )
    for name in SET_UNION:
        params = {"max_items": m} if "policy" not in name else {"max_items": m, "alpha": alpha}
        cal = get_mechanism(name, epsilon=eps, delta=delta, **params).calibrate()
        noise, scale, rho, gamma = expected[name]
        assert cal.mechanism == name
        assert (cal.epsilon, cal.delta) == (eps, delta)
        assert cal.noise == noise, name
        assert cal.scale == pytest.approx(scale, rel=1e-9), name
        assert cal.rho == pytest.approx(rho, rel=1e-8), name
        if gamma is None:
            assert cal.gamma is None, name
        else:
            assert cal.gamma == pytest.approx(gamma, rel=1e-8), name
            assert cal.gamma >= cal.rho
        assert cal.params == params
        assert f"({eps:g}," in cal.guarantee
        json.dumps(cal.as_dict())  # publishable as-is


def test_calibration_does_not_depend_on_data_or_calls():
    m = get_mechanism("policy-gaussian", epsilon=1.0, delta=1e-6, max_items=20, alpha=3.0)
    assert m.calibrate() == m.calibrate()


def test_rho_weighted_gaussian_sigma_is_the_general_form():
    sigma = gaussian_scale(1.0, 1e-6)
    # the threshold's own delta is passed as is: delta/2 of the (1.0, 1e-6) budget
    assert rho_weighted_gaussian_sigma(sigma, 30, delta_threshold=0.5e-6) == rho_weighted_gaussian(1.0, 1e-6, 30)
    assert rho_weighted_gaussian_sigma(2 * sigma, 30, delta_threshold=0.5e-6) > rho_weighted_gaussian(1.0, 1e-6, 30)
    # a larger threshold delta gives a lower threshold: nothing is halved behind the caller's back
    assert rho_weighted_gaussian_sigma(sigma, 30, delta_threshold=1e-6) < rho_weighted_gaussian(1.0, 1e-6, 30)


def test_thresholds_stable_at_tiny_delta():
    # the naive 1 - (1 - delta)^(1/t) is 0 in float64 for delta = 1e-20; the log-space form is not
    for m in (1, 100):
        r = rho_weighted_laplace(1.0, 1e-20, m)
        assert math.isfinite(r) and r > rho_weighted_laplace(1.0, 1e-10, m)
        g = rho_weighted_gaussian(1.0, 1e-20, m)
        assert math.isfinite(g) and g > rho_weighted_gaussian(1.0, 1e-10, m)
    # t = 1 closed form with log1p: rho = 1 + ln(1/(2 delta)) / eps up to O(delta)
    # (rho is rounded up by the relative margin RHO_MARGIN = 1e-12)
    assert rho_weighted_laplace(1.0, 1e-20, 1) == pytest.approx(1 + math.log(1 / 2e-20), rel=3e-12)
    assert rho_weighted_laplace(1.0, 1e-20, 1) > 1 + math.log(1 / 2e-20)


# --------------------------------------------------------------------------- validation
BAD = [
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": float("nan")}, "epsilon"),
    ({"epsilon": float("inf")}, "epsilon"),
    ({"epsilon": "1"}, "epsilon"),
    ({"epsilon": True}, "epsilon"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.0}, "delta"),
    ({"delta": -1e-6}, "delta"),
    ({"delta": 1.5}, "delta"),
    ({"delta": float("nan")}, "delta"),
    ({"max_items": 0}, "max_items"),
    ({"max_items": -3}, "max_items"),
    ({"max_items": 2.5}, "max_items"),
    ({"max_items": "10"}, "max_items"),
    ({"max_items": True}, "max_items"),
]


@pytest.mark.parametrize("name", SET_UNION)
@pytest.mark.parametrize("bad, word", BAD)
def test_bad_parameters_raise_typed_errors_naming_problem_and_fix(name, bad, word):
    kw = {"epsilon": 1.0, "delta": 1e-6, "max_items": 10}
    kw.update(bad)
    with pytest.raises(ParameterError) as info:
        get_mechanism(name, **kw)
    msg = str(info.value)
    assert isinstance(info.value, DpsuError) and isinstance(info.value, ValueError)
    assert word in msg  # names the parameter
    assert any(h in msg for h in ("e.g.", "typical", "choose", "use ", "between")), msg  # and a fix


@pytest.mark.parametrize("name", ["policy-laplace", "policy-gaussian"])
@pytest.mark.parametrize("alpha", [-1.0, -1e-9, float("nan"), float("inf"), "x"])
def test_bad_alpha(name, alpha):
    with pytest.raises(ParameterError, match="alpha"):
        get_mechanism(name, epsilon=1.0, delta=1e-6, max_items=10, alpha=alpha)


def test_unknown_parameter_and_mechanism():
    with pytest.raises(ParameterError, match="alpha"):
        get_mechanism("weighted-laplace", epsilon=1.0, delta=1e-6, alpha=3.0)
    with pytest.raises(ParameterError, match="choose one of"):
        get_mechanism("no-such-mechanism", epsilon=1.0, delta=1e-6)


def test_valid_edge_parameters_accepted():
    get_mechanism("policy-laplace", epsilon=1e-3, delta=1e-300, max_items=1, alpha=0.0).calibrate()
    get_mechanism(
        "policy-gaussian", epsilon=np.float64(2.0), delta=np.float32(1e-3), max_items=np.int64(5), alpha=3
    ).calibrate()
    assert set(SET_UNION) <= set(list_mechanisms())


@pytest.mark.parametrize(
    "fn, args",
    [
        (rho_weighted_laplace, (0.0, 1e-6, 10)),
        (rho_weighted_gaussian, (1.0, 0.0, 10)),
        (rho_count_laplace, (1.0, 1e-6, 0)),
        (rho_count_gaussian, (1.0, 2.0, 10)),
        (analytic_gaussian_sigma, (-1.0, 1e-6)),
        (rho_greedy, (1.0, 1.0, 10)),
        (rho_greedy, (1.0, 1e-6, 0)),
    ],
)
def test_privacy_functions_validate_too(fn, args):
    with pytest.raises(ParameterError):
        fn(*args)
