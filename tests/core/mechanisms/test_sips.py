"""DP-SIPS (docs/algorithms.md §7): per-round calibration, composition, rounds never re-release, lone-user bound."""

from __future__ import annotations

import json
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from scipy.optimize import brentq
from scipy.stats import norm

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import dpsu_step
from dpsu_core.mechanisms import sips as sips_mod
from dpsu_core.mechanisms.registry import get_mechanism
from tests.helpers import exceed_probability, lone_user_release_rate, zipf_corpus


def sips(epsilon=1.0, delta=1e-5, **params):
    return get_mechanism("dp-sips", epsilon=epsilon, delta=delta, **params)


def independent_rounds(eps, delta, m, rounds, r):
    """docs/algorithms.md §7 written out from scratch: mu from the Gaussian-DP curve at delta' = delta/2, shares
    f_i ~ r^(I-i), rho_i = f_i mu^2/2, sigma_i = 1/sqrt(2 rho_i), delta_i = f_i delta/2, T_i by its max over t."""

    def gdp_delta(mu):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)

    mu = brentq(lambda x: gdp_delta(x) - delta / 2, 1e-3, 50.0, xtol=1e-15, rtol=1e-15)
    w = [r ** (rounds - i) for i in range(1, rounds + 1)]
    f = [x / sum(w) for x in w]
    rho = [fi * mu * mu / 2 for fi in f]
    sig = [1 / math.sqrt(2 * p) for p in rho]
    dlt = [fi * delta / 2 for fi in f]
    t = np.arange(1, m + 1)
    thr = [float(np.max(1 / np.sqrt(t) + s * norm.isf(1 - (1 - d) ** (1 / t)))) for s, d in zip(sig, dlt)]
    return mu, f, rho, sig, dlt, thr


# --------------------------------------------------------------------------- calibration
def test_spec_reference_values():
    # docs/algorithms.md §7: eps 1, delta 1e-5 (5e-6 / 5e-6), I = 3, r = 0.3, Delta0 = 100
    d = sips(max_items=100).calibrate().details
    assert d.mu_gdp == pytest.approx(0.2575, abs=5e-5)
    np.testing.assert_allclose(d.sigma_i, [15.264, 8.361, 4.579], atol=5e-4)
    # recomputed: 88.695 / 46.910 / 24.765 (older notes printed T_1 rounded up to 88.70)
    np.testing.assert_allclose(d.threshold_i, [88.70, 46.91, 24.77], atol=6e-3)
    assert d.delta_thresholds == d.delta_conversion == 5e-6


@pytest.mark.parametrize(
    "eps, delta, m, rounds, r",
    [(1.0, 1e-5, 100, 3, 0.3), (3.0, math.exp(-10), 100, 3, 0.3), (0.5, 1e-8, 10, 5, 0.5), (8.0, 1e-6, 30, 1, 0.3)],
)
def test_per_round_sigma_and_threshold_against_an_independent_recomputation(eps, delta, m, rounds, r):
    mu, f, rho, sig, dlt, thr = independent_rounds(eps, delta, m, rounds, r)
    cal = sips(eps, delta, max_items=m, rounds=rounds, ratio=r).calibrate()
    d = cal.details
    assert d.mu_gdp == pytest.approx(mu, rel=1e-8)
    np.testing.assert_allclose(d.fraction_i, f, rtol=1e-12)
    np.testing.assert_allclose(d.sigma_i, sig, rtol=1e-8)
    np.testing.assert_allclose(d.rho_zcdp_i, rho, rtol=1e-8)
    np.testing.assert_allclose(d.delta_i, dlt, rtol=1e-12)
    np.testing.assert_allclose(d.threshold_i, thr, rtol=1e-6)
    assert cal.rho == d.threshold_i[-1] and cal.noise == "gaussian"  # the last round's, the headline
    assert all(a > b for a, b in zip(d.sigma_i, d.sigma_i[1:]))  # r < 1: the last round is the least noisy


def test_rounds_compose_to_the_budget():
    eps, delta = 3.0, math.exp(-10)
    d = sips(eps, delta, max_items=100).calibrate().details
    # zCDP: the rounds' rho_i add up to rho_z = mu^2 / 2, and the threshold deltas to delta/2
    assert sum(d.rho_zcdp_i) == pytest.approx(d.rho_zcdp, rel=1e-12)
    assert d.rho_zcdp == pytest.approx(d.mu_gdp**2 / 2, rel=1e-12)
    assert sum(d.delta_i) == pytest.approx(delta / 2, rel=1e-12)
    assert d.delta_thresholds + d.delta_conversion == pytest.approx(delta, rel=1e-15)
    # dp-accounting: the adaptive composition of the rounds' Gaussian mechanisms (l2-sensitivity 1) is
    # (eps, delta/2)-DP, and tightly so
    acc = PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(s) for s in d.sigma_i]))
    assert eps * (1 - 1e-3) <= acc.get_epsilon(delta / 2) <= eps * (1 + 1e-5)
    # the Gaussian-DP curve is tighter than the generic zCDP conversion rho + 2 sqrt(rho ln(1/delta'))
    rho = d.rho_zcdp
    assert rho + 2 * math.sqrt(rho * math.log(2 / delta)) > eps


@pytest.mark.parametrize(
    "kwargs, word", [(dict(rounds=0), "rounds"), (dict(ratio=0.0), "ratio"), (dict(ratio=1.5), "ratio")]
)
def test_bad_parameters(kwargs, word):
    with pytest.raises(ParameterError, match=word):
        sips(**kwargs)


# --------------------------------------------------------------------------- rounds
def test_released_items_never_reenter_a_later_round(monkeypatch):
    corpus = zipf_corpus()
    calls = []
    real = dpsu_step.weighted_gaussian_step

    def spy(corpus_, rng, max_items, sigma, rho, keep=None):
        ids, h = real(corpus_, rng, max_items, sigma, rho, keep)
        calls.append(dict(keep=keep.copy(), ids=ids, h=h, sigma=sigma, rho=rho, max_items=max_items))
        return ids, h

    monkeypatch.setattr(sips_mod, "weighted_gaussian_step", spy)
    mech = sips(epsilon=4.0, delta=1e-4, max_items=5, rounds=4, ratio=0.5)
    d = mech.calibrate().details
    rel = mech.release(corpus, seed=1)
    assert len(calls) == 4
    released_before = np.zeros(corpus.n_items, dtype=bool)
    for i, c in enumerate(calls):
        assert c["sigma"] == d.sigma_i[i] and c["rho"] == d.threshold_i[i] and c["max_items"] == 5
        np.testing.assert_array_equal(c["keep"], ~released_before)  # every earlier release is filtered out
        assert np.all(c["h"][released_before] == 0)  # ... so it gets no weight and cannot be a candidate
        assert not released_before[c["ids"]].any()
        released_before[c["ids"]] = True
    assert sum(c["ids"].size for c in calls) == rel.n_released  # disjoint rounds: no duplicates
    np.testing.assert_array_equal(np.sort(rel.item_ids), np.flatnonzero(released_before))
    assert calls[1]["ids"].size > 0  # a later round did release something: the test has teeth
    rounds = rel.diagnostics.extra["rounds"]
    assert [r["released"] for r in rounds] == [c["ids"].size for c in calls]


def test_later_rounds_resample_among_the_remaining_items():
    # one heavy user with 12 words, Delta0 = 3: once the popular words are released in round 1, round 2
    # samples this user's 3 among the words that remain (weights land only on unreleased items)
    users = [[f"p{j}" for j in range(4)]] * 300 + [[f"p{j}" for j in range(4)] + [f"q{j}" for j in range(8)]]
    corpus = corpus_from_token_lists(users, posts_per_user=False)
    rel = sips(epsilon=5.0, delta=1e-3, max_items=3, rounds=2, ratio=1.0).release(corpus, seed=0)
    p_ids = np.flatnonzero(np.char.startswith(corpus.vocab.astype(str), "p"))
    assert np.isin(p_ids, rel.item_ids).all()  # round 1 releases the 4 popular words
    assert rel.diagnostics.extra["rounds"][1]["candidates"] == 3  # round 2: 3 of the heavy user's q words


def test_release_diagnostics_are_labelled_not_private():
    corpus = zipf_corpus()
    rel = sips(epsilon=3.0, delta=1e-5, max_items=5).release(corpus, seed=0)
    assert "NOT private" in rel.diagnostics.extra["note"]
    assert rel.diagnostics.weights is not None and rel.diagnostics.weights.shape == (corpus.n_items,)
    assert rel.calibration.details.sigma_i and rel.calibration.params == {"max_items": 5, "rounds": 3, "ratio": 0.3}


# --------------------------------------------------------------------------- a lone user's items: P <= delta
DELTA_MC = 0.05


@pytest.mark.parametrize("n_unique", [1, 5])
def test_lone_user_items_released_with_probability_at_most_delta(n_unique):
    m = 5

    def factory():
        return sips(epsilon=1.0, delta=DELTA_MC, max_items=m, rounds=3, ratio=0.5)

    est = lone_user_release_rate(factory, 2500, n_unique=n_unique, n_users=150, seed=11 + n_unique)
    assert est.lower <= DELTA_MC, est
    # Power: the exact probability that some unique word is released in some round (the lone user's set
    # is the same in every round until one of its words is released), which the estimate must contain
    d = factory().calibrate().details
    w = [1 / math.sqrt(n_unique)] * n_unique
    miss = np.prod([1 - exceed_probability("gaussian", s, t, w) for s, t in zip(d.sigma_i, d.threshold_i)])
    exact = 1 - miss
    assert exact <= DELTA_MC / 2 * (1 + 1e-9)  # the thresholds' share delta/2
    assert est.contains(exact), (est, exact)


def test_round_budgets_are_rounded_to_the_private_side_exactly():
    """Over 400 parameter sets the per-round shares, summed in exact arithmetic (Fractions of the floats), never
    exceed what they split: sum_i delta_i <= delta/2 and sum_i 1/sigma_i^2 <= 1/sigma^2 (the plain products
    f_i * delta/2 overshoot in a good share of such sets: ``over`` counts them, so the check is not vacuous)."""
    from fractions import Fraction

    from dpsu_core.privacy.gaussian import round_down_shares, round_up_composition
    from dpsu_core.privacy.thresholds import gaussian_scale

    rng = np.random.default_rng()
    checked = over = 0
    for eps in (0.3, 1.0, 3.0, 8.0):
        for delta in (1e-5, 1e-7, math.exp(-10), 3.7e-9, 1e-12):
            for rounds in (2, 3, 4, 7, 11):
                for r in rng.uniform(0.05, 1.0, size=4):
                    f = sips_mod.round_fractions(rounds, float(r))
                    sigma = gaussian_scale(eps, delta)
                    sig = round_up_composition(sigma / np.sqrt(f), sigma)
                    dlt = round_down_shares(delta / 2, f)
                    over += sum(Fraction(float(d)) for d in f * (delta / 2)) > Fraction(delta / 2)
                    assert sum(Fraction(float(d)) for d in dlt) <= Fraction(delta / 2)
                    assert sum(1 / Fraction(float(s)) ** 2 for s in sig) <= 1 / Fraction(sigma) ** 2
                    # and by at most a few ulps: the shares are still the shares
                    np.testing.assert_allclose(dlt, f * delta / 2, rtol=1e-14)
                    np.testing.assert_allclose(sig, sigma / np.sqrt(f), rtol=1e-14)
                    checked += 1
    assert checked == 400 and over > 0
    # the calibration uses exactly these roundings
    d = sips(3.0, math.exp(-10), max_items=50, rounds=7, ratio=0.37).calibrate().details
    assert sum(Fraction(x) for x in d.delta_i) <= Fraction(d.delta_thresholds)
    assert sum(1 / Fraction(s) ** 2 for s in d.sigma_i) <= 1 / Fraction(gaussian_scale(3.0, math.exp(-10))) ** 2


# --------------------------------------------------------------------------- shown as rounds (issue 27.2)
@pytest.mark.parametrize("name", ["dp-sips", "policy-sips"])
def test_calibrate_and_the_report_show_every_round_with_the_last_as_headline(name, capsys):
    from dpsu_core.interfaces.cli import main
    from dpsu_core.mechanisms.base import Diagnostics, make_release
    from dpsu_core.mechanisms.registry import mechanism_class
    from dpsu_core.outputs.export import report_dict, report_json, report_markdown

    cal = get_mechanism(name, epsilon=3.0, delta=1e-6, max_items=100).calibrate()
    d = cal.details
    mu, f, rho, sig, dlt, thr = independent_rounds(3.0, 1e-6, 100, 3, 0.3) if name == "dp-sips" else (None,) * 6
    if thr is not None:  # DP-SIPS: the last round's threshold against the independent recomputation
        assert d.threshold_i[-1] == pytest.approx(thr[-1], rel=1e-6)
    view = mechanism_class(name).calibration_view(cal)
    assert view.threshold == d.threshold_i[-1] == cal.rho < d.threshold_i[0]  # the headline is not round 1's
    assert [r.threshold for r in view.rounds] == list(d.threshold_i) and [r.share for r in view.rounds] == list(
        d.fraction_i
    )
    # dpsu calibrate: the headline lines and one line per round
    assert main(["calibrate", "-m", name, "-e", "3", "-d", "1e-6", "--max-items", "100"]) == 0
    vals = dict(line.split(": ", 1) for line in capsys.readouterr().out.strip().splitlines())
    assert float(vals["Threshold T₃ (last round)"]) == pytest.approx(d.threshold_i[-1], rel=1e-5)
    assert "rho" not in vals and "Gamma" not in vals  # no round-1 figure under a headline name
    for i in range(3):
        assert f"T_i {d.threshold_i[i]:.6g}" in vals[f"round {i + 1}"]
        assert f"sigma_i {d.sigma_i[i]:.6g}" in vals[f"round {i + 1}"]
    # the report: its keys unchanged, the rounds table in the Markdown
    empty = corpus_from_token_lists([[["a"]]])
    rel = make_release(cal, empty, np.zeros(0, dtype=np.int64), Diagnostics(), seed=None, elapsed=0.0)
    rep = json.loads(report_json(rel))  # what a script reading the JSON report gets
    assert rep["calibration"]["details"]["threshold_i"] == list(d.threshold_i)
    # rho and gamma are the last round's (as the app, the Markdown and Thresholds show); every round in "rounds"
    assert rep["calibration"]["rho"] == d.threshold_i[-1] == view.threshold
    assert rep["calibration"]["gamma"] == (None if d.gamma_i is None else d.gamma_i[-1]) == view.cutoff
    assert [r["round"] for r in rep["calibration"]["rounds"]] == [1, 2, 3]
    assert [r["threshold"] for r in rep["calibration"]["rounds"]] == list(d.threshold_i)
    assert [r["sigma"] for r in rep["calibration"]["rounds"]] == list(d.sigma_i)
    assert [r["gamma"] for r in rep["calibration"]["rounds"]] == list(d.gamma_i or [None] * 3)
    assert report_dict(rel)["calibration"]["rounds"] == rep["calibration"]["rounds"]
    md = report_markdown(rel)
    assert "round 1's" not in md and "round 1's" not in json.dumps(rep)  # no stale note
    assert "### Rounds" in md and f"| 3 | {d.sigma_i[2]:.6g} | {d.threshold_i[2]:.6g} |" in md
