"""The privacy ledger: basic composition, zCDP composition of Gaussian-family entries, per-corpus totals."""

from __future__ import annotations

import math

import pytest

from dpsu_core.errors import ParameterError
from dpsu_core.ledger import Ledger, cost_of, spent_line, total, zcdp_cost
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.privacy.thresholds import gaussian_scale

EPS, DELTA = 3.0, 1e-6


def _cal(name, eps=EPS, delta=DELTA, **p):
    return get_mechanism(name, epsilon=eps, delta=delta, **p).calibrate()


def test_basic_composition_adds_epsilon_and_delta_per_corpus():
    led = Ledger()
    led.record(_cal("policy-laplace"), corpus_id=1, source="Release")
    led.record(_cal("gw", eps=1.0), corpus_id=1, source="Release")
    led.record(_cal("weighted-laplace", eps=2.0, delta=1e-7), corpus_id=1, source="Compare", releases=3)
    led.record(_cal("policy-laplace"), corpus_id=2, source="Release")  # another corpus: its own users
    t = led.total(1)
    assert t.releases == 5
    assert t.basic_epsilon == pytest.approx(3.0 + 1.0 + 3 * 2.0)
    assert t.basic_delta == pytest.approx(1e-6 + 1e-6 + 3e-7)
    assert t.zcdp_epsilon is None  # Laplace entries: no zCDP total
    assert t.epsilon == t.basic_epsilon and t.method == "basic composition"
    assert led.total(2).basic_epsilon == pytest.approx(3.0)
    assert led.total(3).releases == 0 and led.total(3).sentence() == "nothing spent yet"
    assert len(led.frame(1)) == 3


@pytest.mark.parametrize(
    "name,params", [("weighted-gaussian", {}), ("policy-gaussian", {}), ("count-gaussian", {}), ("dpne", {"max_n": 3})]
)
def test_gaussian_zcdp_cost_is_half_inverse_sigma_squared(name, params):
    """rho = 1/(2 sigma^2) with sigma the analytic-Gaussian sigma of (eps, delta/2) at l2-sensitivity 1
    (computed here directly, not read from the calibration); the threshold's delta/2 is the approximate delta."""
    sigma = gaussian_scale(EPS, DELTA)
    z = zcdp_cost(_cal(name, **params))
    assert z is not None
    assert z.rho == pytest.approx(1.0 / (2.0 * sigma**2), rel=1e-12)
    assert z.delta == pytest.approx(DELTA / 2)


def test_laplace_and_greedy_are_not_zcdp_accounted():
    for name in ("count-laplace", "weighted-laplace", "policy-laplace", "gw"):
        assert zcdp_cost(_cal(name)) is None


def test_zcdp_total_matches_closed_form_and_beats_basic_for_gaussian_only():
    k = 5
    led = Ledger()
    for _ in range(k):
        led.record(_cal("policy-gaussian"), corpus_id="c", source="Release")
    t = led.total("c")
    sigma = gaussian_scale(EPS, DELTA)
    rho = k / (2 * sigma**2)
    delta_conv = k * DELTA - k * DELTA / 2
    expected = rho + 2 * math.sqrt(rho * math.log(1 / delta_conv))
    assert t.zcdp_epsilon == pytest.approx(expected, rel=1e-12)
    assert t.basic_delta == pytest.approx(k * DELTA)
    assert t.zcdp_epsilon < t.basic_epsilon == pytest.approx(k * EPS)
    assert t.gdp_epsilon is not None and t.epsilon == t.gdp_epsilon < t.zcdp_epsilon  # Gaussian DP is tighter still
    assert "zCDP" in t.sentence()


def test_zcdp_total_is_dropped_as_soon_as_one_laplace_entry_joins():
    cal_g, cal_l = _cal("weighted-gaussian"), _cal("weighted-laplace")
    led = Ledger()
    led.record(cal_g, corpus_id=0, source="Release", releases=4)
    assert led.total(0).zcdp_epsilon is not None
    led.record(cal_l, corpus_id=0, source="Release")
    assert led.total(0).zcdp_epsilon is None


def test_pcr_uses_its_own_zcdp_budget():
    cal = _cal("pcr")
    z = zcdp_cost(cal)
    assert z.rho == cal.details.rho_zcdp and z.delta == cal.details.delta_zcdp
    # one PCR release converts back to exactly its (epsilon, delta)
    t = cost_of(cal, 1)
    assert t.zcdp_epsilon == pytest.approx(EPS, rel=1e-9)


def test_bounded_counts_adds_selection_and_count_rho():
    cal = _cal("bounded-counts")
    z = zcdp_cost(cal)
    sel_sigma = gaussian_scale(EPS / 2, DELTA / 2)
    assert z.rho == pytest.approx(1 / (2 * sel_sigma**2) + cal.details.count_zcdp_rho)
    assert z.delta == pytest.approx(DELTA / 4)


def test_cost_of_a_comparison_and_bad_counts():
    t = cost_of(_cal("weighted-laplace"), 15)
    assert t.basic_epsilon == pytest.approx(45.0)
    assert t.sentence().startswith("15 releases: ε = 45, δ = 1.5e-05 by basic composition")
    with pytest.raises(ParameterError):
        cost_of(_cal("weighted-laplace"), 0)


def test_spent_line_is_one_line():
    line = spent_line(_cal("policy-gaussian"))
    assert "\n" not in line and "epsilon = 3" in line and "rho" in line
    for name in ("policy-gaussian", "weighted-laplace", "dp-sips"):  # the basic total of one release
        cal, t = _cal(name, eps=1.5, delta=2e-6), cost_of(_cal(name, eps=1.5, delta=2e-6), 1)
        assert f"epsilon = {t.basic_epsilon:g}, delta = {t.basic_delta:.3g} on" in spent_line(cal)
    assert total([]).releases == 0


def test_dp_sips_zcdp_cost_is_its_rho_and_threshold_delta():
    cal = _cal("dp-sips", eps=1.0, delta=1e-5)
    z = zcdp_cost(cal)
    assert z.rho == pytest.approx(cal.details.rho_zcdp, rel=1e-9)
    assert z.delta == pytest.approx(cal.details.delta_thresholds)


# ---- the headline: the smallest valid bound; exact Gaussian DP on Gaussian-only ledgers (issue 16) -------------


def _pld_epsilon(sigmas_runs: list[tuple[float, int]], delta: float) -> float:
    """dp-accounting's PLD accountant composing Gaussian events (noise multiplier sigma at sensitivity 1)."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-5)
    for sigma, runs in sigmas_runs:
        acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=sigma), runs)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize("k,expected", [(2, 4.29), (10, 10.26)])
def test_weighted_gaussian_releases_compose_as_gaussian_dp(k, expected):
    """The issue's figures: ε = 3, δ = 1e-6 per weighted-Gaussian release gives 4.29 after 2 and 10.26 after 10
    (zCDP: 5.08, 11.82; basic: 6, 30), and dp-accounting's PLD accountant on the same Gaussian events agrees."""
    led = Ledger()
    for _ in range(k):
        led.record(_cal("weighted-gaussian"), corpus_id="c", source="Release")
    t = led.total("c")
    assert round(t.epsilon, 2) == expected and t.method == "Gaussian-DP composition"
    assert round(t.zcdp_epsilon, 2) == {2: 5.08, 10: 11.82}[k] and t.basic_epsilon == pytest.approx(3 * k)
    sigma = gaussian_scale(EPS, DELTA)  # each release's Gaussian part: sensitivity 1, noise sigma
    pld = _pld_epsilon([(sigma, k)], k * DELTA - k * DELTA / 2)  # the thresholds' delta/2 each taken out first
    assert t.gdp_epsilon == pytest.approx(pld, abs=2e-3)
    assert t.epsilon <= min(t.basic_epsilon, t.zcdp_epsilon)


def test_headline_is_at_most_every_bound_on_mixed_ledgers():
    cases = [
        [("weighted-laplace", {})],
        [("policy-gaussian", {}), ("weighted-laplace", {})],
        [("pcr", {}), ("policy-gaussian", {})],
        [("bounded-counts", {}), ("dpne", {"max_n": 3}), ("dp-sips", {})],
        [("policy-gaussian", {})],
    ]
    for case in cases:
        t = total([Ledger().record(_cal(n, **p), corpus_id=0, source="x", releases=2) for n, p in case])
        assert t.epsilon == min(t.bounds.values()) and all(t.epsilon <= b for b in t.bounds.values())
        assert t.method in t.detail()
    # PCR (Gumbel steps) is not a Gaussian composition: zCDP stays, Gaussian DP does not apply
    mixed = total([Ledger().record(_cal(n), corpus_id=0, source="x") for n in ("pcr", "policy-gaussian")])
    assert mixed.zcdp_epsilon is not None and mixed.gdp_epsilon is None


def test_mixed_gaussian_mechanisms_match_dp_accounting():
    """Gaussian mechanisms of different sigmas (DP-SIPS rounds, bounded counts, weighted Gaussian at another ε):
    mu^2 adds; dp-accounting composes the same Gaussian events."""
    cals = [_cal("weighted-gaussian", eps=1.0), _cal("policy-gaussian", eps=2.0), _cal("weighted-gaussian", eps=0.5)]
    t = total([Ledger().record(c, corpus_id=0, source="x") for c in cals])
    sig = [gaussian_scale(c.epsilon, c.delta) for c in cals]
    pld = _pld_epsilon([(s, 1) for s in sig], sum(c.delta / 2 for c in cals))
    assert t.gdp_epsilon == pytest.approx(pld, abs=2e-3)
    assert t.gdp_mu == pytest.approx(math.sqrt(sum(1 / s**2 for s in sig)), rel=1e-12)


def test_gaussian_mu_sq_is_two_rho_for_gaussian_costs_and_none_for_pcr():
    for name, p in [("weighted-gaussian", {}), ("dpne", {"max_n": 3}), ("dp-sips", {}), ("bounded-counts", {})]:
        z = zcdp_cost(_cal(name, **p))
        assert z.gaussian_mu_sq == pytest.approx(2 * z.rho, rel=1e-15)
    assert zcdp_cost(_cal("pcr")).gaussian_mu_sq is None


def test_a_seeded_release_leaves_no_guarantee():
    led = Ledger()
    led.record(_cal("policy-gaussian"), corpus_id=0, source="Release")
    assert led.total(0).guaranteed and led.total(0).headline().startswith("ε = 3")
    led.record(_cal("policy-gaussian"), corpus_id=0, source="Release", teaching=True)
    t = led.total(0)
    assert not t.guaranteed and t.headline() == "no DP guarantee on this corpus"
    assert "no DP guarantee" in t.sentence() and "ε =" not in t.sentence()
