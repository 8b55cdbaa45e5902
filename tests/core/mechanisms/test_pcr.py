"""PCR (Rogers 2024) and the bounded-counts baseline: budget accounting, the Gumbel step, counts."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import dpsu_step, get_mechanism, list_mechanisms
from dpsu_core.mechanisms import pcr as pcr_mod
from dpsu_core.mechanisms.base import noisy_threshold as base_noisy_threshold
from dpsu_core.mechanisms.pcr import (
    default_delta_star,
    gumbel_threshold,
    pcr_count_sigma,
    private_count_release,
    relative_error_threshold,
)
from dpsu_core.privacy.gaussian import analytic_gaussian_sigma, gaussian_delta
from dpsu_core.privacy.zcdp import zcdp_to_dp_epsilon


# --------------------------------------------------------------------------- the filter never overspends
@settings(max_examples=120, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=0, max_value=50_000), min_size=0, max_size=200),
    kbar=st.integers(min_value=1, max_value=60),
    rho=st.floats(min_value=1e-7, max_value=5.0),
    delta=st.floats(min_value=1e-12, max_value=1e-3),
    eps_star=st.floats(min_value=1e-4, max_value=0.5),
    delta_star=st.floats(min_value=1e-14, max_value=1e-5),
    rel_error=st.floats(min_value=0.01, max_value=0.9),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_filter_never_overspends(counts, kbar, rho, delta, eps_star, delta_star, rel_error, seed):
    c = np.asarray(counts, dtype=np.int64)
    res = private_count_release(
        c,
        np.random.default_rng(seed),
        rho=rho,
        delta=delta,
        eps_star=eps_star,
        delta_star=delta_star,
        kbar=kbar,
        rel_error=rel_error,
    )
    lg = res.ledger
    hit = lg.position >= 0
    # the spend, recomputed from the mechanism's own record
    gumbel_rho = np.sum(lg.eps**2 / 8.0)
    gauss_rho = np.sum(1.0 / (2.0 * lg.sigma[hit] ** 2))
    spent = gumbel_rho + gauss_rho
    assert spent <= rho * (1 + 1e-12)
    assert lg.n_steps * delta_star <= delta * (1 + 1e-12)
    assert spent == pytest.approx(lg.rho_spent, rel=1e-9, abs=1e-300)
    # the filter's rule, step by step: a step starts only if its worst case (eps_i^2/8 for the Gumbel step
    # plus at most eps_i^2/8 for the count) still fits
    step_cost = lg.eps**2 / 8.0 + np.where(hit, 1.0 / (2.0 * np.where(hit, lg.sigma, 1.0) ** 2), 0.0)
    before = np.concatenate([[0.0], np.cumsum(step_cost)[:-1]])
    assert np.all(before + lg.eps**2 / 4.0 <= rho * (1 + 1e-12))
    assert np.all(step_cost <= lg.eps**2 / 4.0 * (1 + 1e-12))
    # every Gumbel step used T = 1 + beta ln(kbar/delta_*), beta = 1/eps_i
    assert np.allclose(lg.threshold, 1.0 + np.log(kbar / delta_star) / lg.eps, rtol=1e-12)
    # s = max((r/1.5)(1 + ln(kbar/delta_*)/eps_i), 2/eps_i) and never below 2/eps_i
    s_eps = lg.eps[hit]
    assert np.all(lg.sigma[hit] >= 2.0 / s_eps * (1 - 1e-12))
    expected_s = np.maximum((rel_error / 1.5) * (1 + np.log(kbar / delta_star) / s_eps), 2.0 / s_eps)
    assert np.allclose(lg.sigma[hit], expected_s, rtol=1e-12)
    # eps starts at eps_* and grows by sqrt(2) exactly after each bottom
    if lg.n_steps:
        assert lg.eps[0] == eps_star
        grow = np.where(hit[:-1], 1.0, math.sqrt(2.0))
        assert np.allclose(lg.eps[1:], lg.eps[:-1] * grow, rtol=1e-12)
    # released items are distinct, had a positive count, and are what the result reports
    assert np.all(c[res.positions] > 0)
    assert np.unique(res.positions).size == res.positions.size
    assert np.array_equal(res.sigma, lg.sigma[hit])
    # the loop stops only when the next step could overspend, or nothing is left to find
    if lg.stop_reason == "budget":
        eps_next = eps_star if lg.n_steps == 0 else lg.eps[-1] * (1.0 if hit[-1] else math.sqrt(2.0))
        assert lg.rho_spent + eps_next**2 / 4 > rho or lg.delta_spent + delta_star > delta
    else:
        assert res.positions.size == np.count_nonzero(c > 0)


def test_zero_counts_never_released():
    c = np.array([0, 5000, 0, 7000, 0, 0], dtype=np.int64)
    for seed in range(20):
        res = private_count_release(
            c, np.random.default_rng(seed), rho=1.0, delta=1e-6, eps_star=0.01, delta_star=1e-11, kbar=10, rel_error=0.1
        )
        assert set(res.positions.tolist()) <= {1, 3}
        assert res.ledger.stop_reason == "no candidates left"
        assert sorted(res.positions.tolist()) == [1, 3]


# --------------------------------------------------------------------------- the Gumbel step, statistically
def _one_step(counts, kbar, seed, eps=1.0, delta_star=1e-3):
    """Budget for exactly one step: rho = 1.5 eps^2/4 admits the first step and no second."""
    res = private_count_release(
        np.asarray(counts, dtype=np.int64),
        np.random.default_rng(seed),
        rho=1.5 * eps**2 / 4,
        delta=1.0,
        eps_star=eps,
        delta_star=delta_star,
        kbar=kbar,
        rel_error=0.1,
    )
    assert res.ledger.n_steps == 1
    return res.positions[0] if res.positions.size else -1


def test_gumbel_step_passes_threshold_with_logistic_probability():
    # one candidate of count c vs the noisy threshold T + c_(kbar+1) + Gumbel: two Gumbels of scale 1
    # differ by a Logistic(0, 1), so P(release) = 1 / (1 + exp(T + c_next - c)).
    kbar, delta_star = 1, 1e-3
    t = gumbel_threshold(1.0, kbar, delta_star)
    c_next = 40
    c = int(round(t + c_next - math.log(3.0)))  # P about 1/4
    p = 1.0 / (1.0 + math.exp(t + c_next - c))
    n = 4000
    hits = sum(_one_step([c, c_next], kbar, seed) == 0 for seed in range(n))
    assert abs(hits / n - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_gumbel_step_top1_follows_softmax():
    # both candidates far above the threshold: the winner is the argmax of c_i + Gumbel, i.e. softmax(c)
    counts = [300, 299]  # P(first) = e / (e + 1)
    p = math.e / (math.e + 1)
    n = 4000
    first = sum(_one_step(counts, 2, seed) == 0 for seed in range(n))
    assert abs(first / n - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_kbar_plus_one_count_raises_the_threshold():
    # kbar = 1: the second count enters the threshold; two equal counts are (almost) never released,
    # while the same count alone is released at once
    equal = private_count_release(
        np.array([500, 500]),
        np.random.default_rng(1),
        rho=1.0,
        delta=1e-6,
        eps_star=0.05,
        delta_star=1e-11,
        kbar=1,
        rel_error=0.1,
    )
    assert equal.positions.size == 0 and equal.ledger.n_bottom == equal.ledger.n_steps > 10
    alone = private_count_release(
        np.array([500, 0]),
        np.random.default_rng(1),
        rho=1.0,
        delta=1e-6,
        eps_star=0.05,
        delta_star=1e-11,
        kbar=1,
        rel_error=0.1,
    )
    assert alone.positions.tolist() == [0]


# --------------------------------------------------------------------------- the mechanism
def _easy_corpus():
    """600 users: 'a' used by all, 'b' by 450, 'c' by 300; each user also has a word of their own."""
    users = []
    for i in range(600):
        words = ["a", f"own{i}"]
        if i < 450:
            words.append("b")
        if i < 300:
            words.append("c")
        users.append([words])
    return corpus_from_token_lists(users)


def test_pcr_registered_and_counts_close_to_truth():
    assert list_mechanisms()["pcr"].kind == "count"
    corpus = _easy_corpus()
    m = get_mechanism("pcr", epsilon=4.0, delta=1e-6, eps_star=0.05)
    truth = {"a": 600, "b": 450, "c": 300}
    for seed in range(5):
        rel = m.release(corpus, seed=seed)
        assert set(rel.items.tolist()) <= set(truth)  # the users' own words are never released
        assert set(rel.items.tolist()) == set(truth)
        for item, noisy, std in zip(rel.items, rel.noisy_counts, rel.count_std):
            assert float(noisy).is_integer()
            assert abs(noisy - truth[item]) <= 6 * std + 0.5
        frame = rel.private_frame()
        assert list(frame.columns) == ["item", "n", "count", "std"]
        assert rel.diagnostics.extra["rho_spent"] <= rel.calibration.details.rho_zcdp
        # the Gumbel steps may spend only the approximate-zCDP share of delta (the rest is the conversion's)
        assert rel.diagnostics.extra["delta_spent"] <= rel.calibration.details.delta_zcdp


def test_pcr_runs_the_filter_on_the_zcdp_budget(monkeypatch):
    """The release path hands the filter (rho_z, delta_z) = (the rho whose conversion at delta/2 is epsilon,
    delta/2), not the full delta."""
    seen = []
    real = private_count_release

    def spy(counts, rng, **kw):
        seen.append(kw)
        return real(counts, rng, **kw)

    monkeypatch.setattr(pcr_mod, "private_count_release", spy)
    eps, delta = 4.0, 1e-6
    m = get_mechanism("pcr", epsilon=eps, delta=delta, eps_star=0.05)
    rel = m.release(_easy_corpus(), seed=0)
    [kw] = seen
    assert kw["delta"] == delta / 2
    assert zcdp_to_dp_epsilon(kw["rho"], delta / 2) == pytest.approx(eps, rel=1e-12)
    assert kw["rho"] == rel.calibration.details.rho_zcdp
    assert kw["delta"] == rel.calibration.details.delta_zcdp
    assert (kw["eps_star"], kw["kbar"], kw["rel_error"]) == (0.05, 10_000, 0.1)
    assert kw["delta_star"] == rel.calibration.details.delta_star  # derived from delta by default


def test_pcr_stops_when_delta_binds():
    """delta_z = 5e-10 and delta_* = 1e-10 allow exactly 5 Gumbel steps, while rho (epsilon = 50) would
    allow many more: the filter must stop after the 5th step."""
    m = get_mechanism("pcr", epsilon=50.0, delta=1e-9, delta_star=1e-10, eps_star=1e-4)
    d = m.calibrate().details
    assert d.max_gumbel_steps == 5
    for seed in range(3):
        rel = m.release(_easy_corpus(), seed=seed)
        lg = rel.diagnostics.extra["ledger"]
        assert lg.n_steps == 5 and lg.stop_reason == "budget"
        assert lg.delta_spent == pytest.approx(5e-10, rel=1e-12)
        assert lg.delta_spent <= d.delta_zcdp
        # rho did not bind: the next step's worst case still fits
        eps_next = lg.eps[-1] * (1.0 if lg.position[-1] >= 0 else math.sqrt(2.0))
        assert lg.rho_spent + eps_next**2 / 4 < d.rho_zcdp


def test_derived_delta_star_lets_rho_stop_the_filter_where_the_papers_default_stops_at_5_steps():
    # delta = 1e-10: the paper's delta_* = 1e-11 allows delta_z / delta_* = 5 Gumbel steps, so at most 5
    # items; derived, delta never binds and the zCDP budget decides.
    corpus = _easy_corpus()
    paper = get_mechanism("pcr", epsilon=1.0, delta=1e-10, delta_star=1e-11, eps_star=0.005)
    derived = get_mechanism("pcr", epsilon=1.0, delta=1e-10, eps_star=0.005)
    d = derived.calibrate().details
    assert paper.calibrate().details.max_gumbel_steps == 5 and d.max_gumbel_steps > 5
    assert "derived" in d.delta_star_rule and paper.calibrate().details.delta_star_rule == "given"
    for seed in range(3):
        lg_p = paper.release(corpus, seed=seed).diagnostics.extra["ledger"]
        lg_d = derived.release(corpus, seed=seed).diagnostics.extra["ledger"]
        assert lg_p.n_steps <= 5
        assert lg_d.delta_spent <= d.delta_zcdp and lg_d.rho_spent <= d.rho_zcdp
        if lg_d.stop_reason == "budget":  # stopped by rho, not by delta: one more step would overspend rho
            eps_next = lg_d.eps[-1] * (1.0 if lg_d.position[-1] >= 0 else math.sqrt(2.0))
            assert lg_d.rho_spent + eps_next**2 / 4 > d.rho_zcdp * (1 - 1e-9)
            assert lg_d.delta_spent + d.delta_star <= d.delta_zcdp * (1 + 1e-12)
        assert lg_d.n_steps > lg_p.n_steps


def test_pcr_error_scales_with_reported_std():
    corpus = _easy_corpus()
    m = get_mechanism("pcr", epsilon=4.0, delta=1e-6, eps_star=0.05)
    z = []
    for seed in range(40):
        rel = m.release(corpus, seed=seed)
        assert np.array_equal(
            np.sort(rel.diagnostics.extra["ledger"].position[rel.diagnostics.extra["ledger"].position >= 0]),
            np.sort(rel.item_ids),
        )
        z.extend(((rel.noisy_counts - corpus.user_counts[rel.item_ids]) / rel.count_std).tolist())
    z = np.asarray(z)
    # standardised errors of Gaussian noise (plus rounding): mean 0, sd about 1
    assert abs(z.mean()) < 0.5
    assert 0.7 < z.std() < 1.3


def test_pcr_calibration_shows_budget_split():
    cal = get_mechanism("pcr", epsilon=1.0, delta=1e-6).calibrate()
    d = cal.details
    assert d.delta_zcdp + d.delta_conversion == pytest.approx(1e-6)
    assert zcdp_to_dp_epsilon(d.rho_zcdp, d.delta_conversion) == pytest.approx(1.0, rel=1e-12)
    # delta_* derived from delta alone: delta_zcdp / (10^7 hits + 1,100 bottoms), written out here
    cap = 10_000_000 + 1_100
    assert d.delta_star == pytest.approx(d.delta_zcdp / cap, rel=1e-12)
    assert Fraction(d.delta_star) * cap <= Fraction(d.delta_zcdp)  # exactly
    # rho binds first: the steps rho allows (8 rho/eps*^2 - 1) are fewer than the cap
    steps = math.floor(8 * d.rho_zcdp / 0.0005**2) - 1
    assert d.max_gumbel_steps == steps < cap
    ds = d.delta_star
    assert d.first_threshold == pytest.approx(1 + math.log(1e4 / ds) / 0.0005)
    # the Gumbel scale and the count noise std under their own names
    assert d.gumbel_scale == cal.scale == pytest.approx(1 / 0.0005)
    assert d.count_noise_std_first == pytest.approx(pcr_count_sigma(0.0005, 10_000, ds, 0.1))
    assert cal.params == {"kbar": 10_000, "rel_error": 0.1, "eps_star": 0.0005, "delta_star": 0.0}
    assert "zCDP" in cal.guarantee
    cal.as_dict()  # JSON-able


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(epsilon=0.001, delta=1e-6, eps_star=0.5),  # first step alone exceeds rho
        dict(epsilon=1.0, delta=1e-10, delta_star=1e-10),  # delta_* above delta/2
        dict(epsilon=1.0, delta=1e-6, kbar=0),
        dict(epsilon=1.0, delta=1e-6, rel_error=1.5),
        dict(epsilon=1.0, delta=1e-6, max_items=10),  # PCR has no Delta0
    ],
)
def test_pcr_bad_parameters(kwargs):
    with pytest.raises(ParameterError):
        get_mechanism("pcr", **kwargs).calibrate()


@pytest.mark.parametrize(
    "bad",
    [dict(rho=0.0), dict(delta=0.0), dict(kbar=0), dict(eps_star=-1.0), dict(rel_error=1.0), dict(delta_star=1.0)],
)
def test_filter_rejects_bad_parameters(bad):
    kw = dict(rho=1.0, delta=1e-6, eps_star=0.01, delta_star=1e-11, kbar=10, rel_error=0.1) | bad
    with pytest.raises(ParameterError):
        private_count_release(np.array([5, 3]), np.random.default_rng(0), **kw)


def test_filter_rejects_bad_counts():
    kw = dict(rho=1.0, delta=1e-6, eps_star=0.01, delta_star=1e-11, kbar=10, rel_error=0.1)
    for counts in (np.array([5, -3]), np.array([[1, 2]]), np.array([1.0, np.nan])):
        with pytest.raises(ParameterError):
            private_count_release(counts, np.random.default_rng(0), **kw)


def test_pcr_ignores_items_nobody_uses():
    """Only 'b' and 'c' keep their users; 'a' and the 600 own words stay in the vocabulary with 0 users.
    If an item of count 0 were a candidate it would never be released (it cannot beat T), so the filter
    could never run out of candidates; with only 'b' and 'c' it releases both and stops on "no candidates"."""
    corpus = _easy_corpus()
    restricted = corpus.restrict_to(np.isin(corpus.vocab, ["b", "c"]))
    assert int(np.count_nonzero(restricted.user_counts)) == 2 and restricted.n_items == corpus.n_items
    m = get_mechanism("pcr", epsilon=4.0, delta=1e-6, eps_star=0.05)
    for seed in range(3):
        rel = m.release(restricted, seed=seed)
        assert rel.items.tolist() == ["b", "c"]
        assert rel.diagnostics.extra["stop_reason"] == "no candidates left"


# --------------------------------------------------------------------------- bounded counts
def test_bounded_counts_calibration():
    m = get_mechanism("bounded-counts", epsilon=2.0, delta=1e-6, max_items=16)
    d = m.calibrate().details
    assert list_mechanisms()["bounded-counts"].kind == "count"
    # Gaussian counts at (eps/2, delta/2) with l2-sensitivity sqrt(Delta0)
    assert gaussian_delta(d.count_sigma, 1.0, math.sqrt(16)) == pytest.approx(5e-7, rel=1e-6)
    assert d.count_epsilon + d.selection_epsilon == pytest.approx(2.0)
    assert d.count_delta + d.selection_delta == pytest.approx(1e-6)
    assert d.count_threshold == pytest.approx((2 + 0.1) * d.count_sigma / 0.1)
    d4 = get_mechanism("bounded-counts", epsilon=2.0, delta=1e-6, max_items=64).calibrate().details
    assert d4.count_sigma == pytest.approx(2 * d.count_sigma, rel=1e-9)
    off = get_mechanism("bounded-counts", epsilon=2.0, delta=1e-6, max_items=16, use_threshold="no")
    assert off.calibrate().details.count_threshold is None


def _wide_corpus(n_users=400, n_words=60, seed=0):
    rng = np.random.default_rng(seed)
    users = []
    for _ in range(n_users):
        k = int(rng.integers(1, 40))
        w = rng.zipf(1.3, size=k) % n_words
        users.append([[f"w{x}" for x in w]])
    return corpus_from_token_lists(users)


def test_bounded_counts_threshold_filters_the_same_draws():
    corpus = _wide_corpus()
    kw = dict(epsilon=8.0, delta=1e-6, max_items=5, rel_error=0.1)
    with_t = get_mechanism("bounded-counts", use_threshold="yes", **kw)
    without = get_mechanism("bounded-counts", use_threshold="no", **kw)
    thr = with_t.calibrate().details.count_threshold
    for seed in range(5):
        a = with_t.release(corpus, seed=seed)
        b = without.release(corpus, seed=seed)
        # same seed: same selection and noise, so the thresholded release is the other one filtered
        assert set(a.items.tolist()) <= set(b.items.tolist())
        assert b.n_released > a.n_released > 0
        assert np.all(a.noisy_counts >= math.floor(thr))
        kept = dict(zip(b.items.tolist(), b.noisy_counts.tolist()))
        assert all(kept[i] == c for i, c in zip(a.items.tolist(), a.noisy_counts.tolist()))
        dropped = set(b.items.tolist()) - set(a.items.tolist())
        assert all(kept[i] <= math.ceil(thr) for i in dropped)
        assert np.all(a.count_std == pytest.approx(with_t.calibrate().details.count_sigma))


def test_bounded_counts_respect_the_bound():
    corpus = _wide_corpus()
    rel = get_mechanism("bounded-counts", epsilon=8.0, delta=1e-6, max_items=3, use_threshold="no").release(
        corpus, seed=2
    )
    bounded = rel.diagnostics.extra["bounded_counts"]  # over the vocabulary, 0 outside the selected domain
    assert bounded.shape == (corpus.n_items,)
    assert np.all(bounded <= corpus.user_counts)
    assert np.all(bounded[rel.item_ids] > 0)
    assert bounded.sum() <= 3 * corpus.n_users
    assert bounded.sum() < corpus.user_counts[bounded > 0].sum()  # the bound bit: users have > 3 words
    assert rel.n_released > 0


def _dense_corpus(n_users=1000, n_words=20, per_user=12, seed=0):
    """Every user writes 12 of 20 words: every word is selected and its bounded count is in the hundreds,
    far from the clip at 0."""
    rng = np.random.default_rng(seed)
    return corpus_from_token_lists(
        [[[f"w{x}" for x in rng.choice(n_words, size=per_user, replace=False)]] for _ in range(n_users)]
    )


def test_bounded_counts_selection_uses_the_calibrated_noise(monkeypatch):
    calls = []

    def spy(weights, rng, noise, scale, rho):
        calls.append((noise, float(scale), float(rho)))
        return base_noisy_threshold(weights, rng, noise, scale, rho)

    monkeypatch.setattr(dpsu_step, "noisy_threshold", spy)
    eps, delta, m = 2.0, 1e-6, 5
    get_mechanism("bounded-counts", epsilon=eps, delta=delta, max_items=m).release(_wide_corpus(), seed=0)
    [(noise, scale, rho)] = calls
    # selection at (eps/2, delta/2): Gaussian noise at delta/4, threshold event at delta/4
    sigma = analytic_gaussian_sigma(eps / 2, delta / 4, 1.0)
    t = np.arange(1, m + 1)
    assert noise == "gaussian"
    assert scale == pytest.approx(sigma, rel=1e-9)
    assert rho == pytest.approx(
        float(np.max(1 / np.sqrt(t) + sigma * norm.isf(1 - (1 - delta / 4) ** (1 / t)))), rel=1e-6
    )


def test_bounded_counts_noise_is_the_calibrated_gaussian():
    """z = (released count - bounded count) / reported std is N(0, 1), and the std is the analytic-Gaussian
    sigma for (eps/2, delta/2) at l2-sensitivity sqrt(Delta0)."""
    corpus = _dense_corpus()
    eps, delta, m = 2.0, 1e-6, 5
    mech = get_mechanism("bounded-counts", epsilon=eps, delta=delta, max_items=m, use_threshold="no")
    sigma = analytic_gaussian_sigma(eps / 2, delta / 2, math.sqrt(m))
    z = []
    for seed in range(40):
        rel = mech.release(corpus, seed=seed)
        bounded = rel.diagnostics.extra["bounded_counts"]
        assert rel.n_released == 20 and bounded.sum() == m * corpus.n_users  # every word selected, Delta0 each
        np.testing.assert_allclose(rel.count_std, sigma, rtol=1e-9)
        z.extend(((rel.noisy_counts - bounded[rel.item_ids]) / rel.count_std).tolist())
    z = np.asarray(z)
    assert z.size == 800
    assert abs(z.mean()) < 4 / math.sqrt(z.size)
    assert 0.9 < z.std() < 1.1


def test_relative_error_threshold_formula():
    assert relative_error_threshold(10.0, 0.1) == pytest.approx(210.0)


# --------------------------------------------------------------------------- epsilon over its whole range
EPS_RANGE = [1e-3, 1e-2, 0.1, 0.5, 1.0, 3.0, 10.0, 100.0, 1e4, 1e6, 1e12, 1e50, 1e100, 1e200, 1e300]


def _range_mechanism(eps, delta=1e-6):
    """PCR at ``eps`` with the default eps_* where the budget allows it, else the largest that fits (eps_*^2/4 <=
    rho/4): below about epsilon = 0.003 the default first step alone would cost more than the whole budget."""
    from dpsu_core.privacy.zcdp import approx_zcdp_budget

    rho = approx_zcdp_budget(eps, delta).rho
    return get_mechanism("pcr", epsilon=eps, delta=delta, eps_star=min(0.0005, math.sqrt(rho)))


def test_count_noise_std_is_finite_and_never_grows_with_epsilon():
    stds, thresholds = [], []
    for eps in EPS_RANGE:
        d = _range_mechanism(eps).calibrate().details
        assert 0 < d.delta_star and math.isfinite(d.count_noise_std_first) and math.isfinite(d.first_threshold)
        assert 1 <= d.max_gumbel_steps <= pcr_mod.PCR_STEP_CAP
        stds.append(d.count_noise_std_first)
        thresholds.append(d.first_threshold)
    assert all(b <= a for a, b in zip(stds, stds[1:])), stds
    assert all(b <= a for a, b in zip(thresholds, thresholds[1:])), thresholds
    # the figures at delta = 1e-6 under the earlier rule were 5,205 (eps 3), 7,308 (1e6), 36,168 (1e100)
    at = dict(zip(EPS_RANGE, stds))
    assert at[3.0] == at[1e6] == at[1e100] < 5400


@pytest.mark.parametrize("eps", [1e-3, 1.0, 1e6, 1e300])
def test_release_over_the_epsilon_range(eps):
    """Finite noisy counts at every epsilon. The frequent words (600, 450, 300 users) are released: all three at
    epsilon >= 1e6, the first at 1; at 1e-3 the Gumbel threshold is far above any count and the release is empty."""
    corpus = _easy_corpus()
    rel = _range_mechanism(eps).release(corpus)
    assert np.all(np.isfinite(rel.count_std)) and np.all(np.isfinite(rel.noisy_counts))
    lg = rel.diagnostics.extra["ledger"]
    assert lg.delta_spent <= rel.calibration.details.delta_zcdp and np.all(np.isfinite(lg.eps))
    if eps >= 1e6:
        assert set(rel.items.tolist()) == {"a", "b", "c"}  # and nobody's own word
    elif eps >= 1.0:
        assert "a" in set(rel.items.tolist()) <= {"a", "b", "c"}
    else:
        assert rel.n_released == 0


def test_epsilon_above_its_bound_is_one_clear_error():
    with pytest.raises(ParameterError, match="epsilon must be at most 1e[+]300"):
        get_mechanism("pcr", epsilon=1e301, delta=1e-6)
    with pytest.raises(ParameterError, match="at most 1e[+]300"):
        get_mechanism("weighted-gaussian", epsilon=float("1.1e300"), delta=1e-6)


def test_derived_delta_star_is_one_clear_error_when_delta_underflows():
    # a release's delta below DELTA_MIN is refused up front; the derived delta_star keeps its own backstop
    with pytest.raises(ParameterError, match="delta must be at least 1e-300"):
        get_mechanism("pcr", epsilon=1.0, delta=1e-310)
    with pytest.raises(ParameterError, match="too small for PCR's derived delta_star"):
        default_delta_star(1e-310 / 2)
