"""zCDP <-> DP conversions (docs/algorithms.md §6) against their closed forms, written out here independently."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.errors import ParameterError
from dpsu_core.privacy.zcdp import (
    approx_zcdp_budget,
    dp_epsilon_to_zcdp_rho,
    gaussian_zcdp,
    pure_dp_to_zcdp,
    zcdp_delta_prime,
    zcdp_to_dp_epsilon,
)

eps_st = st.floats(min_value=1e-4, max_value=50.0)
delta_st = st.floats(min_value=1e-300, max_value=0.5)
rho_st = st.floats(min_value=1e-10, max_value=100.0)


def test_rho_to_epsilon_hand_values():
    # rho = 0.5, delta' = e^-2: 0.5 + 2 sqrt(0.5 * 2) = 2.5
    assert zcdp_to_dp_epsilon(0.5, math.exp(-2.0)) == pytest.approx(2.5, rel=1e-14)
    # rho = 1, delta' = e^-9: 1 + 2 * 3 = 7
    assert zcdp_to_dp_epsilon(1.0, math.exp(-9.0)) == pytest.approx(7.0, rel=1e-14)


def test_epsilon_to_rho_hand_values():
    # eps = 7, delta' = e^-9: rho = (sqrt(16) - sqrt(9))^2 = 1
    assert dp_epsilon_to_zcdp_rho(7.0, math.exp(-9.0)) == pytest.approx(1.0, rel=1e-13)
    # eps = 1, delta' = 1e-6 via the quadratic's textbook root
    big_l = math.log(1e6)
    expected = (-2 * math.sqrt(big_l) + math.sqrt(4 * big_l + 4)) ** 2 / 4
    assert dp_epsilon_to_zcdp_rho(1.0, 1e-6) == pytest.approx(expected, rel=1e-10)


@settings(max_examples=300, deadline=None)
@given(eps=eps_st, delta=delta_st)
def test_eps_rho_eps_round_trip(eps, delta):
    rho = dp_epsilon_to_zcdp_rho(eps, delta)
    assert rho > 0
    back = zcdp_to_dp_epsilon(rho, delta)
    assert back == pytest.approx(eps, rel=1e-12)


@settings(max_examples=300, deadline=None)
@given(rho=rho_st, delta=delta_st)
def test_rho_eps_rho_round_trip(rho, delta):
    eps = zcdp_to_dp_epsilon(rho, delta)
    assert eps == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-13)
    assert dp_epsilon_to_zcdp_rho(eps, delta) == pytest.approx(rho, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(eps=eps_st, delta=delta_st)
def test_inverse_is_largest_rho(eps, delta):
    rho = dp_epsilon_to_zcdp_rho(eps, delta)
    # a slightly larger rho gives a larger epsilon: rho is the largest rho within budget
    assert zcdp_to_dp_epsilon(rho * (1 + 1e-6), delta) > eps


@settings(max_examples=200, deadline=None)
@given(rho=st.floats(min_value=1e-4, max_value=10.0), gap=st.floats(min_value=0.05, max_value=20.0))
def test_delta_prime_inverts_epsilon(rho, gap):
    eps = rho + gap
    d = zcdp_delta_prime(rho, eps)
    assert d == pytest.approx(math.exp(-(gap**2) / (4 * rho)), rel=1e-12)
    if d > 1e-300:
        assert zcdp_to_dp_epsilon(rho, d) == pytest.approx(eps, rel=1e-9)


def test_pure_and_gaussian():
    assert pure_dp_to_zcdp(2.0) == pytest.approx(2.0)
    assert gaussian_zcdp(2.0) == pytest.approx(1 / 8)
    assert gaussian_zcdp(3.0, math.sqrt(10)) == pytest.approx(10 / 18)


def test_budget_split_sums_to_delta_and_converts_back():
    b = approx_zcdp_budget(1.0, 1e-6)
    assert b.delta_zcdp + b.delta_conversion == pytest.approx(1e-6, rel=1e-15)
    assert b.delta_zcdp == pytest.approx(5e-7)
    assert zcdp_to_dp_epsilon(b.rho, b.delta_conversion) <= 1.0 + 1e-12
    assert zcdp_to_dp_epsilon(b.rho, b.delta_conversion) == pytest.approx(1.0, rel=1e-12)
    assert set(b.as_dict()) >= {"rho", "delta_zcdp", "delta_conversion"}
    b2 = approx_zcdp_budget(1.0, 1e-6, conversion_share=0.9)
    assert b2.delta_conversion == pytest.approx(9e-7) and b2.rho > b.rho


@pytest.mark.parametrize(
    "call",
    [
        lambda: zcdp_to_dp_epsilon(-1.0, 1e-6),
        lambda: zcdp_to_dp_epsilon(0.1, 0.0),
        lambda: zcdp_to_dp_epsilon(float("nan"), 1e-6),
        lambda: dp_epsilon_to_zcdp_rho(0.0, 1e-6),
        lambda: dp_epsilon_to_zcdp_rho(1.0, 1.5),
        lambda: zcdp_delta_prime(1.0, 0.5),
        lambda: gaussian_zcdp(0.0),
        lambda: approx_zcdp_budget(1.0, 1e-6, conversion_share=1.0),
    ],
)
def test_bad_input_raises_parameter_error(call):
    with pytest.raises(ParameterError):
        call()
