"""The privacy ledger: basic composition, zCDP composition of Gaussian-family entries, per-corpus totals."""

from __future__ import annotations

import math

import pytest

from dpsu_core.accounting.ledger import Ledger, cost_of, spent_line, total, zcdp_cost
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.privacy.pld import pld_epsilon
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


def test_a_laplace_entry_joins_the_zcdp_and_gaussian_dp_totals_by_basic_composition():
    """4 weighted-Gaussian releases and 1 weighted-Laplace: zCDP on the 4 (their rho converted at the delta the
    whole total leaves after their threshold deltas and the Laplace release's delta) plus the Laplace release's ε."""
    cal_g, cal_l = _cal("weighted-gaussian"), _cal("weighted-laplace")
    led = Ledger()
    led.record(cal_g, corpus_id=0, source="Release", releases=4)
    assert led.total(0).zcdp_epsilon is not None and not led.total(0).zcdp_mixed
    led.record(cal_l, corpus_id=0, source="Release")
    t = led.total(0)
    sigma = gaussian_scale(EPS, DELTA)
    rho = 4 / (2 * sigma**2)
    conv = 5 * DELTA - 4 * DELTA / 2 - DELTA
    assert t.zcdp_mixed and t.zcdp_epsilon == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / conv)) + EPS)
    assert t.gdp_mixed and t.gdp_epsilon < t.zcdp_epsilon < t.basic_epsilon == pytest.approx(5 * EPS)
    assert "basic composition of the rest" in t.detail()


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
        least = min(t.bounds.values())  # the headline: the smallest, or the simplest within a relative 1e-9 of it
        assert least <= t.epsilon <= least * (1 + 1e-9) and t.epsilon == t.bounds[t.method]
        assert t.method in t.detail()
    # PCR (Gumbel steps) is not a Gaussian composition: zCDP covers both, Gaussian DP the Gaussian one (PCR by basic)
    mixed = total([Ledger().record(_cal(n), corpus_id=0, source="x") for n in ("pcr", "policy-gaussian")])
    assert mixed.zcdp_epsilon is not None and not mixed.zcdp_mixed
    assert mixed.gdp_epsilon is not None and mixed.gdp_mixed and mixed.gdp_epsilon > EPS  # PCR's own ε plus more


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


# ---- the privacy-loss-distribution total (issue 27) -------------------------------------------------------------


def _mp_gdp_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon of mu-GDP at delta, by mpmath at 50 digits (Dong, Roth & Su 2019, Cor. 2.13), bisected
    independently of the ledger's code."""
    import mpmath as mp

    with mp.workdps(50):
        m, d = mp.mpf(mu), mp.mpf(delta)

        def dlt(e):
            return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)

        lo, hi = mp.mpf(0), mp.mpf(200)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if dlt(mid) <= d else (mid, hi)
        return float(hi)


def _dp_accounting(gauss_mu: float | None, laplace: list[tuple[float, int]], delta: float, pessimistic: bool):
    """dp-accounting's PLD on the same parts, built here (fine grid), as a reference: pessimistic (an upper bound
    on the exact epsilon) or optimistic (a lower bound)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    kw = {"value_discretization_interval": 1e-4, "pessimistic_estimate": pessimistic}
    if not pessimistic:
        kw["use_connect_dots"] = False
    parts = []
    if gauss_mu is not None:
        parts.append(pld.from_gaussian_mechanism(1.0 / gauss_mu, **kw))
    for eps, k in laplace:
        parts.append(pld.from_laplace_mechanism(1.0 / eps, **kw).self_compose(k))
    out = parts[0]
    for p in parts[1:]:
        out = out.compose(p)
    return float(out.get_epsilon_for_delta(delta))


@pytest.mark.parametrize("k,eps", [(3, 3.0), (12, 1.0)])
def test_gaussian_only_ledgers_match_mpmath(k, eps):
    """Gaussian-only: the headline is the exact Gaussian-DP epsilon (mpmath, independently) at the delta the
    thresholds leave; the PLD bound sits just above it (its pessimistic discretisation), never below."""
    led = Ledger()
    led.record(_cal("weighted-gaussian", eps=eps), corpus_id=0, source="x", releases=k)
    t = led.total(0)
    sigma = gaussian_scale(eps, DELTA)
    exact = _mp_gdp_epsilon(math.sqrt(k) / sigma, k * DELTA / 2)
    assert exact <= t.epsilon <= exact * (1 + 1e-6) and t.method == "Gaussian-DP composition"
    # Gaussian DP is exact here: the PLD (which could only match it, from above) is not computed
    assert t.pld_epsilon is None
    # the PLD module on the same Gaussian composition: never below the exact value, within its discretisation
    p, note = pld_epsilon(math.sqrt(k) / sigma, (), (), k * DELTA / 2)
    assert p is not None and note is None and exact <= p <= exact + 5e-3


def test_laplace_only_ledgers_are_basic_composition():
    """Laplace-only: each release's whole delta bounds its threshold event, so no delta is left for the PLD at the
    session's total delta: the headline is basic composition, exactly the sum of the epsilons."""
    for k in (1, 40):
        led = Ledger()
        led.record(_cal("weighted-laplace", eps=1.0, delta=1e-7), corpus_id=0, source="x", releases=k)
        led.record(_cal("gw", eps=0.5, delta=1e-7), corpus_id=0, source="x")
        t = led.total(0)
        assert t.epsilon == t.basic_epsilon == k * 1.0 + 0.5 and t.method == "basic composition"
        assert t.pld_epsilon is None and t.zcdp_epsilon is None and t.gdp_epsilon is None


def test_mixed_ledger_headline_is_the_pld_bound_below_basic_and_gdp_plus_basic():
    """The issue's session: 14 Gaussian-family and 9 Laplace-family releases at ε = 3, δ = 1e-6. Basic: 69;
    Gaussian DP on the 14 plus basic on the 9: 39.45; the headline is dp-accounting's PLD over everything, equal to
    the reference built here within the discretisation and never below its optimistic (lower) bound."""
    led = Ledger()
    led.record(_cal("policy-gaussian"), corpus_id=0, source="Release", releases=7)
    led.record(_cal("weighted-gaussian"), corpus_id=0, source="Compare", releases=7)
    led.record(_cal("weighted-laplace"), corpus_id=0, source="Compare", releases=5)
    led.record(_cal("gw"), corpus_id=0, source="Compare", releases=4)
    t = led.total(0)
    assert t.releases == 23 and t.basic_epsilon == pytest.approx(69.0)
    assert t.gdp_mixed and round(t.gdp_epsilon, 2) == 39.45
    mu = math.sqrt(14) / gaussian_scale(EPS, DELTA)
    rest = 23 * DELTA - 14 * DELTA / 2 - 9 * DELTA  # the thresholds' deltas taken out
    ref = _dp_accounting(mu, [(EPS, 9)], rest, pessimistic=True)
    low = _dp_accounting(mu, [(EPS, 9)], rest, pessimistic=False)
    assert t.method == "privacy-loss distribution (dp-accounting)" and t.epsilon == t.pld_epsilon
    assert low <= t.epsilon and abs(t.epsilon - ref) <= 10 * 1e-3
    assert t.epsilon < t.gdp_epsilon < t.basic_epsilon and t.basic_delta == pytest.approx(23 * DELTA)
    assert "privacy-loss distribution" in t.detail() and "basic composition: ε = 69" in t.detail()


def test_pcr_enters_the_pld_through_its_own_bound():
    """PCR + Gaussian: PCR as a generic (ε, δ)-DP mechanism; never above the zCDP or Gaussian-DP + basic totals
    by more than the discretisation, and valid (at least the Gaussian part's own exact epsilon)."""
    t = total([Ledger().record(_cal(n), corpus_id=0, source="x", releases=3) for n in ("pcr", "policy-gaussian")])
    assert t.pld_epsilon is not None and t.pld_epsilon <= t.gdp_epsilon + 0.05
    assert t.pld_epsilon >= _mp_gdp_epsilon(math.sqrt(3) / gaussian_scale(EPS, DELTA), 6 * DELTA)


def test_deltas_add_exactly_and_round_up():
    """δ's that float addition rounds down (0.1 + 0.2 + ...) add up in exact rational arithmetic, rounded up."""
    from fractions import Fraction

    deltas = [1e-6, 3e-7, 7e-8, 1.1e-6, 2.9e-7, 1e-10, 3.3e-6]
    led = Ledger()
    for d in deltas:
        led.record(_cal("weighted-laplace", delta=d), corpus_id=0, source="x", releases=3)
    t = led.total(0)
    exact = sum(Fraction(d) * 3 for d in deltas)
    assert Fraction(t.basic_delta) >= exact and Fraction(math.nextafter(t.basic_delta, 0)) < exact


def test_a_split_laplace_shift_is_dominated_by_the_single_shift():
    """The Laplace part models a histogram at l1-distance <= 1 as one scalar shift of 1: on a grid of ε' and of
    splits a + b = s, the composed pair (shift a, shift b) never has a larger hockey-stick δ(ε') than shift s."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    def lap(shift):
        return pld.from_laplace_mechanism(
            1.0,
            sensitivity=shift,
            pessimistic_estimate=False,
            use_connect_dots=False,
            value_discretization_interval=1e-4,
        )

    for s in (0.5, 1.0, 3.0):
        single = lap(s)
        for frac in (0.1, 0.3, 0.5):
            split = lap(s * frac).compose(lap(s * (1 - frac)))
            for e in [s * i / 8 for i in range(9)]:
                assert split.get_delta_for_epsilon(e) <= single.get_delta_for_epsilon(e) + 1e-9


# --------------------------------------------------------------------------- the totals' extremes (issue 38)
def _entries(*specs):
    """(mechanism, epsilon, delta, releases) -> ledger entries on corpus 0."""
    led = Ledger()
    for name, eps, delta, k in specs:
        led.record(_cal(name, eps=eps, delta=delta), corpus_id=0, source="x", releases=k)
    return led.entries


@pytest.mark.parametrize(
    "specs,shown",
    [
        ((("gw", 1.0, 0.0099, 200),), "1.98"),  # 200 releases: the deltas add to 1.98
        ((("gw", 1.0, 1e-6, 10**6),), "1"),  # 10^6 releases at 1e-6: exactly 1 (rounded up)
        ((("policy-gaussian", 1.0, 0.3, 2), ("pcr", 1.0, 0.5, 1)), "1.1"),  # every kind of entry
    ],
)
def test_a_delta_of_one_or_more_is_no_guarantee(specs, shown):
    """Past delta = 1 there is no guarantee: the headline, the sentence and the report say so (never "ε = 200,
    δ = 2" as if it were one), no conversion runs at such a delta, and the spend gate treats it as over any budget
    and refuses it."""
    from dpsu_core.accounting.ledger import ledger_summary
    from dpsu_core.accounting.spend import plan_spend

    t = total(_entries(*specs))
    assert t.delta_exceeded and not t.guaranteed and t.basic_delta >= 1
    assert t.headline() == f"no DP guarantee on this corpus (δ = {shown} ≥ 1)"
    assert "ε =" not in t.sentence() and "a δ of 1 or more bounds nothing" in t.sentence()
    assert t.zcdp_epsilon is None and t.gdp_epsilon is None and t.pld_epsilon is None
    rep = ledger_summary(t)
    assert rep["epsilon"] is None and rep["method"] == "no DP guarantee on this corpus"
    cals = [(_cal(n, eps=e, delta=d), k) for n, e, d, k in specs]
    plan = plan_spend(
        "Release",
        cals,
        [],
        corpus_id="c",
        corpus_name="c",
        limit_epsilon=1e300,
        on_private=True,
        teaching=False,
        limit_delta=0.999,
    )
    assert plan.over_budget and not plan.allowed and "δ" in (plan.refusal or "")
    below = total(_entries(("gw", 1.0, 0.0099, 100)))
    assert below.guaranteed and below.headline() == "ε = 100, δ = 0.99"


@pytest.mark.parametrize(
    "specs",
    [
        (("gw", 1e300, 1e-6, 1), ("gw", 1e300, 1e-6, 1), ("policy-gaussian", 1e300, 1e-6, 1)),
        (("gw", 1e300, 1e-6, 1), ("gw", 1e-12, 1e-6, 1), ("pcr", 3.0, 1e-6, 1)),
        (("pcr", 710.0, 1e-6, 1), ("gw", 3.0, 1e-6, 1)),  # exp(710) overflows inside dp-accounting
        (("gw", 1e9, 1e-6, 1), ("gw", 1e-3, 1e-6, 1), ("pcr", 1.0, 1e-6, 1)),  # a span of 1e9: the step > 709
        (("gw", 1e300, 1e-6, 10**5), ("pcr", 3.0, 1e-6, 1)),  # the sum passes the largest float: inf, no error
    ],
)
def test_totals_at_the_documented_extremes_never_overflow(specs):
    """Every documented epsilon (up to 1e300), alone or beside others: no OverflowError; where dp-accounting's PLD
    cannot be computed in floats it is left out and the sentence says why; basic composition is always there."""
    t = total(_entries(*specs))
    assert t.guaranteed and t.basic_epsilon >= sum(e * k for _, e, _, k in specs) * (1 - 1e-15)
    assert t.pld_epsilon is None and t.pld_note
    assert (
        "privacy-loss distribution (dp-accounting) left out" in t.sentence() and "the other bounds hold" in t.sentence()
    )
    assert t.epsilon <= t.basic_epsilon


def test_tiny_epsilons_never_list_a_pld_figure_above_basic_composition():
    """1,000 GW releases at epsilon 1e-12 and a Policy Gaussian: dp-accounting's fixed 1e-3 grid gave 9.995e-07
    against basic 1.001e-09. No PLD figure above basic composition is listed as a bound (left out, with why)."""
    for pg in (1e-12, 1.0):
        t = total(_entries(("gw", 1e-12, 1e-6, 1000), ("policy-gaussian", pg, 1e-6, 1)))
        assert t.pld_epsilon is None or t.pld_epsilon <= t.basic_epsilon
        assert t.epsilon <= t.basic_epsilon and t.basic_epsilon == pytest.approx(1000 * 1e-12 + pg)
        if pg == 1e-12:
            assert t.pld_epsilon is None and "left out" in t.sentence()


def test_the_pld_grid_follows_small_epsilons():
    """At epsilon 1e-4 the grid is refined with the epsilons (dp-accounting's 1e-3 would be ten times the
    epsilon): 1,000 GW releases and a Policy Gaussian get a PLD bound far below basic composition, and it matches
    dp-accounting's own accountant on a fine grid (pessimistic, an upper bound) within the discretisation."""
    t = total(_entries(("gw", 1e-4, 1e-6, 1000), ("policy-gaussian", 1e-4, 1e-6, 1)))
    assert t.method == "privacy-loss distribution (dp-accounting)"
    assert t.pld_epsilon is not None and t.pld_epsilon < t.basic_epsilon / 5
    ref = _dp_accounting(t.gdp_mu, [(1e-4, 1000)], 1001 * 1e-6 - 1000 * 1e-6 - 0.5e-6, pessimistic=False)
    assert ref <= t.pld_epsilon <= ref * 1.05
