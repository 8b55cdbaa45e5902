"""The sequential updates keep every user's increments within norm 1 exactly for every Gamma a valid calibration
can produce (privacy.norms; issue 26: the old rounding allowance 4 Delta0 Gamma 2^-52 turned the budget negative
past Gamma ~ 1e13 and every touched item jumped to Gamma).

Checked in exact arithmetic (``fractions.Fraction``) on the kernels themselves, with weights anywhere in [0, Gamma)
and in particular a hair below Gamma, where a float add of a tiny step rounds by an ulp of Gamma.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.errors import DpsuError, ParameterError
from dpsu_core.mechanisms.registry import MECHANISM_CLASSES
from dpsu_core.privacy.norms import add_down, check_descent_range, descent_budget
from tests.corners import EPSILON_MIN, corner_grid
from tests.helpers import descent_steps


@functools.cache
def largest_valid_gamma() -> float:
    """The largest cutoff (Gamma, or a round's Gamma_i) any calibration inside the documented ranges gives."""
    best = 0.0
    for cls in MECHANISM_CLASSES:
        default = cls(epsilon=1.0, delta=1e-6).calibrate()
        if default.gamma is None and "gamma_i" not in default.details.as_dict():
            continue  # no cutoff: not a descent
        for eps, delta, params in corner_grid(cls):
            if eps != EPSILON_MIN:  # every cutoff grows as epsilon shrinks
                continue
            try:
                cal = cls(epsilon=eps, delta=delta, **params).calibrate()
            except DpsuError:
                continue
            gammas = [cal.gamma or 0.0, *cal.details.as_dict().get("gamma_i", [])]
            best = max(best, *map(float, gammas))
    return best


def test_the_largest_valid_gamma_is_far_past_the_old_limit():
    g = largest_valid_gamma()
    assert math.isfinite(g) and g > 1e20  # the old budget was negative past ~1e13 at Delta0 = 100


def _exact_increments(h0: np.ndarray, h1: np.ndarray) -> list[Fraction]:
    return [Fraction(float(b)) - Fraction(float(a)) for a, b in zip(h0, h1)]


def _weights(gamma: float, gaps: list[float]) -> np.ndarray:
    """Weights Gamma * (1 - g) for relative gaps g in (0, 1]: some a hair below Gamma, some at 0."""
    return np.array([max(0.0, gamma - gamma * g) for g in gaps], dtype=np.float64)


GAPS = st.lists(
    st.one_of(
        st.floats(1e-18, 1e-6),  # a hair below Gamma: the step is far below an ulp of the weight
        st.floats(1e-6, 1.0),
        st.just(1.0),  # weight 0
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(log_gamma=st.floats(0.0, 1.0), gaps=GAPS)
def test_descent_step_has_exact_norm_at_most_one_for_every_valid_gamma(log_gamma, gaps):
    gamma = float(np.exp(log_gamma * math.log(largest_valid_gamma())))
    h0 = _weights(gamma, gaps)
    for order, h in descent_steps(h0, gamma).items():
        inc = _exact_increments(h0, h)
        assert all(d >= 0 for d in inc)
        assert np.all(h <= gamma)
        assert sum(d**order for d in inc) <= 1, (gamma, order)


@pytest.mark.parametrize("n", [1, 7, 3000])
def test_descent_step_near_gamma_at_huge_gamma(n):
    # the failing case of issue 26: Gamma ~ 1e13 and beyond, every weight just below Gamma
    gamma = largest_valid_gamma()
    h0 = gamma - gamma * np.random.default_rng(n).uniform(1e-17, 1e-15, size=n)  # test data only
    for order, h in descent_steps(h0, gamma).items():
        assert sum(d**order for d in _exact_increments(h0, h)) <= 1


@settings(max_examples=300, deadline=None)
@given(a=st.floats(0.0, 1e300), b=st.floats(0.0, 1e10))
def test_add_down_never_exceeds_the_exact_sum_and_loses_at_most_an_ulp(a, b):
    s = add_down(a, b)
    assert Fraction(s) <= Fraction(a) + Fraction(b)
    assert s >= np.nextafter(a + b, -np.inf)


def test_descent_budget_is_positive_below_one_and_independent_of_gamma():
    for n in (1, 100, 10**6):
        b = descent_budget(n)
        assert 0.5 < b < 1.0
    with pytest.raises(ParameterError, match="no proven rounding margin"):
        descent_budget(2**60)


def test_a_gamma_outside_the_proven_range_is_refused():
    assert check_descent_range(100, 1e100) == 1e100
    for bad in (math.inf, math.nan, 0.0, 1e150):
        with pytest.raises(ParameterError, match="raise epsilon"):
            check_descent_range(10**6, bad)
