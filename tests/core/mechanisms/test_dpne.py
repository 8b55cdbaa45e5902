"""DPNE (Kim et al. 2021) and the DPSU-all / -even / -single baselines."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import dpne as dpne_mod
from dpsu_core.mechanisms import dpsu_step
from dpsu_core.mechanisms.base import noisy_threshold as base_noisy_threshold
from dpsu_core.mechanisms.dpne import DPNE, DPSUAll, DPSUEven, DPSUSingle, level_threshold, noise_schedule
from dpsu_core.mechanisms.registry import get_mechanism, list_mechanisms
from dpsu_core.privacy.thresholds import gaussian_scale


# --------------------------------------------------------------------------- helpers
def released_by_length(rel) -> dict[int, set[tuple[str, ...]]]:
    out: dict[int, set[tuple[str, ...]]] = {}
    for item, n in zip(rel.items.tolist(), rel.ngram_len.tolist()):
        toks = tuple(item.split(" "))
        assert len(toks) == n
        out.setdefault(n, set()).add(toks)
    return out


def assert_closed(rel, pruning: str = "both") -> None:
    """Prop 2.1: every released k-gram has its (k-1)-prefix (and for both-side its (k-1)-suffix) and
    its boundary unigrams released, i.e. S_k is inside V_k of the released sets."""
    s = released_by_length(rel)
    for k, grams in s.items():
        if k == 1:
            continue
        prev, uni = s.get(k - 1, set()), s.get(1, set())
        for w in grams:
            assert w[:-1] in prev and (w[-1],) in uni, w
            if pruning == "both":
                assert w[1:] in prev and (w[0],) in uni, w


def brute_valid(prev: set[tuple], uni: set[tuple], k: int, pruning: str) -> set[tuple]:
    toks = sorted(t[0] for t in uni)
    out = set()
    for w in itertools.product(toks, repeat=k):
        if w[:-1] in prev and (pruning == "single" or w[1:] in prev):
            out.add(w)
    return out


def rho_formula(sigma: float, delta_thr: float, t_max: int) -> float:
    """Gopi et al.'s weighted-Gaussian threshold max_{t <= t_max} [1/sqrt(t) + sigma Phi^-1((1 - delta_thr)^(1/t))],
    with delta_thr the threshold event's own delta (written out here, independent of the library)."""
    t = np.arange(1, t_max + 1)
    return float(np.max(1 / np.sqrt(t) + sigma * norm.isf(1 - (1 - delta_thr) ** (1 / t))))


class ThresholdSpy:
    """Replaces ``dpsu_step.noisy_threshold`` (the name the weighted-Gaussian step calls) by a wrapper that records what the
    release path passes to it (noise, scale, rho, the lengths of the candidates) and calls the real one."""

    def __init__(self, monkeypatch, corpus):
        self.calls: list[dict] = []
        real = base_noisy_threshold

        def spy(weights, rng, noise, scale, rho):
            lengths = set(np.unique(corpus.ngram_len[np.flatnonzero(weights > 0)]).tolist())
            self.calls.append(
                dict(
                    noise=noise,
                    scale=float(scale),
                    rho=float(rho),
                    lengths=lengths,
                    candidates=int(np.count_nonzero(weights > 0)),
                )
            )
            return real(weights, rng, noise, scale, rho)

        monkeypatch.setattr(dpsu_step, "noisy_threshold", spy)


def rich_corpus(n_users: int = 240, alphabet: int = 10, seed: int = 0):
    """Every user writes all tokens (so S_1 is everything) in one of a few orders: few bigrams are used,
    so most of V_2 = S_1 x S_1 (and of V_3) is valid but unused."""
    rng = np.random.default_rng(seed)
    letters = [f"t{i}" for i in range(alphabet)]
    orders = [list(rng.permutation(letters)) for _ in range(4)]
    return corpus_from_token_lists([[orders[u % 4]] for u in range(n_users)], max_n=3)


# --------------------------------------------------------------------------- calibration
@pytest.mark.parametrize("T", [1, 2, 3, 6, 9])
@pytest.mark.parametrize(
    "schedule,ratio", [("equal", 1.0), ("geometric", 0.5), ("geometric", 0.9), ("geometric", 1.0), ("geometric", 1.3)]
)
def test_schedule_spends_exactly_the_budget(T, schedule, ratio):
    sigma = 3.7
    sig = noise_schedule(sigma, T, schedule, ratio)
    assert sig.shape == (T,)
    assert math.isclose(float(np.sum(sig**-2.0)), sigma**-2.0, rel_tol=1e-12)
    if schedule == "geometric":
        np.testing.assert_allclose(sig[1:] / sig[:-1], ratio, rtol=1e-12)
    else:
        np.testing.assert_allclose(sig, math.sqrt(T) * sigma, rtol=1e-12)


@pytest.mark.parametrize("schedule", ["equal", "geometric"])
@pytest.mark.parametrize("T", [2, 3, 5, 6, 7, 10])
@pytest.mark.parametrize("sigma", [0.3, 1.3327913, 3.7, 13.3279, 1e3])
@pytest.mark.parametrize("ratio", [0.7, 0.8, 0.9, 1.1])
def test_schedule_never_overspends_in_exact_arithmetic(schedule, T, sigma, ratio):
    # the levels compose to sigma only if sum_k 1/sigma_k^2 <= 1/sigma^2 holds exactly, not just to 1e-12
    sig = noise_schedule(sigma, T, schedule, ratio)
    assert sum(1 / Fraction(float(s)) ** 2 for s in sig) <= 1 / Fraction(sigma) ** 2
    assert float(np.max(sig / noise_schedule_unrounded(sigma, T, schedule, ratio))) < 1 + 1e-13


def noise_schedule_unrounded(sigma, T, schedule, ratio):
    if schedule == "equal":
        return np.full(T, math.sqrt(T) * sigma)
    return sigma * math.sqrt(sum(ratio ** (-2 * j) for j in range(T))) * ratio ** np.arange(T)


@pytest.mark.parametrize("T, c", [(6, 0.8), (3, 0.8), (4, 1.25)])
def test_geometric_schedule_closed_form(T, c):
    # written out from docs/algorithms.md §5: sigma_k = c^(k-1) sigma_1 and sum_k 1/sigma_k^2 = 1/sigma^2
    sigma = 4.2
    sigma1 = sigma * math.sqrt(sum(c ** (-2 * j) for j in range(T)))
    expect = [sigma1 * c ** (k - 1) for k in range(1, T + 1)]
    np.testing.assert_allclose(noise_schedule(sigma, T, "geometric", c), expect, rtol=1e-13)
    if c < 1:  # budget moves to the longer n-grams: the last level gets less noise than under "equal"
        assert expect[-1] < math.sqrt(T) * sigma < expect[0]


@pytest.mark.parametrize("schedule", ["equal", "geometric"])
def test_schedule_composes_to_epsilon_by_dp_accounting(schedule):
    """The T levels' Gaussian parts, composed by dp-accounting's PLD accountant, are (epsilon, delta/2)-DP
    at the calibrated sigma_k (and tight: not much less than epsilon)."""
    eps, delta, T = 1.0, 1e-7, 6
    cal = DPNE(epsilon=eps, delta=delta, max_n=T, max_items=10, schedule=schedule, schedule_ratio=0.8).calibrate()
    acc = PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(s) for s in cal.details.sigma_k]))
    got = acc.get_epsilon(delta / 2)
    assert eps * (1 - 1e-3) <= got <= eps * (1 + 1e-5)  # PLD's discretisation is pessimistic by ~1e-7


def test_best_schedule_is_the_documented_default_ratio():
    # the ratio measured best on MSNBC is the default of --schedule-ratio, so "--schedule geometric" picks it
    from dpsu_core.params import PARAMS

    assert PARAMS["schedule_ratio"].default == dpne_mod.BEST_SCHEDULE_RATIO == 0.8
    assert "0.8" in PARAMS["schedule"].help and PARAMS["schedule_ratio"].cli == "--schedule-ratio"
    mech = DPNE(epsilon=1.0, delta=1e-7, max_n=6, max_items=10, schedule="geometric")
    sig = mech.calibrate().details.sigma_k
    np.testing.assert_allclose(np.divide(sig[1:], sig[:-1]), 0.8, rtol=1e-12)


def test_calibration_sigmas_and_rho1_match_spec_formula():
    eps, delta, m, T = 2.0, 1e-5, 20, 4
    mech = DPNE(epsilon=eps, delta=delta, max_items=m, max_n=T, schedule="geometric", schedule_ratio=0.8)
    cal = mech.calibrate()
    sigma = gaussian_scale(eps, delta)
    sig = np.asarray(cal.details.sigma_k)
    assert math.isclose(float(np.sum(sig**-2.0)), sigma**-2.0, rel_tol=1e-12)
    t = np.arange(1, m + 1)
    rho1 = np.max(1.0 / np.sqrt(t) + sig[0] * norm.ppf((1.0 - delta / 2.0) ** (1.0 / t)))
    assert math.isclose(cal.rho, rho1, rel_tol=1e-6)
    assert cal.scale == sigma and cal.noise == "gaussian"


def test_level_threshold_formula():
    for sk, eta, n_prev, n_valid in [(2.0, 0.01, 10, 100), (5.0, 0.1, 300, 200), (1.3, 1e-4, 1, 10**9)]:
        expect = sk * norm.isf(eta * min(1.0, n_prev / n_valid))
        assert math.isclose(level_threshold(sk, eta, n_prev, n_valid), expect, rel_tol=1e-9)


# --------------------------------------------------------------------------- level weights
def test_level_weights_follow_the_weighted_gaussian_policy_on_valid_ngrams():
    users = [[["a", "b", "c"]], [["a", "b"], ["c", "a"]], [["b", "c", "a", "b"]], [["z", "a"]]] * 30
    corpus = corpus_from_token_lists(users, max_n=2)
    rel = DPNE(epsilon=8, delta=1e-5, max_items=50, max_n=2).release(corpus, seed=3)
    h = rel.diagnostics.weights
    s = released_by_length(rel)
    uni = s[1]
    # level 1: each user adds 1/sqrt(#distinct unigrams) to each unigram (no cap hit at Delta = 50)
    exp1: dict[str, float] = {}
    for u in users:
        toks = {t for post in u for t in post}
        for t in toks:
            exp1[t] = exp1.get(t, 0.0) + 1.0 / math.sqrt(len(toks))
    # level 2: bigrams filtered to V_2 = S_1 x S_1 before weighting
    exp2: dict[str, float] = {}
    for u in users:
        grams = {(p[i], p[i + 1]) for p in u for i in range(len(p) - 1)}
        valid = {g for g in grams if (g[0],) in uni and (g[1],) in uni}
        for g in valid:
            exp2[" ".join(g)] = exp2.get(" ".join(g), 0.0) + 1.0 / math.sqrt(len(valid))
    vocab = corpus.vocab.tolist()
    for i, item in enumerate(vocab):
        want = exp1.get(item, 0.0) if corpus.ngram_len[i] == 1 else exp2.get(item, 0.0)
        # summed exactly on the 2^-32 grid: each user's increment rounded down by less than one unit
        assert want - len(users) * 2.0**-32 - 1e-12 <= h[i] <= want + 1e-12, item
    assert_closed(rel)


def test_delta_cap_applies_after_filtering_to_valid_ngrams():
    """Each user has one valid and one invalid bigram (its own rare token is never in S_1). With Delta = 1
    the cap must come after the filter to V_2: the user keeps the valid bigram, at weight 1/sqrt(1) = 1.
    Capping first would drop the valid bigram for about half of the users."""
    n = 150
    users = [[["a", "b"], [f"x{i}", "a"]] for i in range(n)] + [[["b", "a"], [f"y{i}", "b"]] for i in range(n)]
    corpus = corpus_from_token_lists(users, max_n=2)
    vocab = corpus.vocab.tolist()
    mech = DPNE(epsilon=8, delta=1e-5, max_items=1, max_n=2)
    for seed in range(3):
        rel = mech.release(corpus, seed=seed)
        assert released_by_length(rel)[1] == {("a",), ("b",)}  # the rare tokens are not released
        h = rel.diagnostics.weights
        bigrams = np.flatnonzero(corpus.ngram_len == 2)
        want = {"a b": float(n), "b a": float(n)}
        np.testing.assert_array_equal(h[bigrams], [want.get(vocab[i], 0.0) for i in bigrams])


# --------------------------------------------------------------------------- the noise the release path uses
@pytest.mark.parametrize("schedule,ratio", [("equal", 1.0), ("geometric", 0.7)])
def test_dpne_release_uses_the_calibrated_sigma_k_and_rho_k(monkeypatch, schedule, ratio):
    corpus = rich_corpus()
    eps, delta, m, T, eta = 4.0, 1e-6, 10, 3, 0.3
    mech = DPNE(epsilon=eps, delta=delta, max_items=m, max_n=T, eta=eta, schedule=schedule, schedule_ratio=ratio)
    cal = mech.calibrate()
    sigma_k = cal.details.sigma_k
    # the budget the release path really spends: Gaussian noise at sigma_k on level k composes to sigma
    assert math.isclose(sum(x**-2 for x in sigma_k), gaussian_scale(eps, delta) ** -2, rel_tol=1e-12)
    for seed in range(3):
        spy = ThresholdSpy(monkeypatch, corpus)
        rel = mech.release(corpus, seed=seed)
        calls = spy.calls
        assert len(calls) == T  # one noisy threshold per level (V_k is never empty on this corpus)
        s = released_by_length(rel)
        levels = rel.diagnostics.extra["levels"]
        for k, call in enumerate(calls, start=1):
            assert call["noise"] == "gaussian"
            assert call["lengths"] == {k}  # level k noises k-grams only
            assert call["scale"] == sigma_k[k - 1]
            assert call["candidates"] == levels[k - 1]["candidates"]
            if k == 1:
                assert call["rho"] == cal.rho
                assert math.isclose(call["rho"], rho_formula(sigma_k[0], delta / 2, m), rel_tol=1e-6)
            else:
                # rho_k from |S_(k-1)| and |V_k| of the released sets (V_k by brute force)
                n_prev = len(s.get(k - 1, ()))
                n_valid = len(brute_valid(s.get(k - 1, set()), s.get(1, set()), k, "both"))
                expect = sigma_k[k - 1] * norm.isf(eta * min(1.0, n_prev / n_valid))
                assert math.isclose(call["rho"], expect, rel_tol=1e-9)


def test_dpsu_baselines_release_with_the_calibrated_noise(monkeypatch):
    corpus = rich_corpus()
    eps, delta, m, T = 2.0, 1e-6, 10, 3
    sigma = gaussian_scale(eps, delta)

    spy = ThresholdSpy(monkeypatch, corpus)
    DPSUAll(epsilon=eps, delta=delta, max_items=m, max_n=T).release(corpus, seed=1)
    [call] = spy.calls
    assert call["noise"] == "gaussian" and call["lengths"] == {1, 2, 3}
    assert call["scale"] == sigma
    assert math.isclose(call["rho"], rho_formula(sigma, delta / 2, T * m), rel_tol=1e-6)

    spy = ThresholdSpy(monkeypatch, corpus)
    DPSUEven(epsilon=eps, delta=delta, max_items=m, max_n=T).release(corpus, seed=1)
    assert [c["lengths"] for c in spy.calls] == [{1}, {2}, {3}]  # one DPSU per length
    for call in spy.calls:
        # sigma_k = sqrt(T) sigma, and the threshold event of each length gets delta/(2T)
        assert call["noise"] == "gaussian"
        assert math.isclose(call["scale"], math.sqrt(T) * sigma, rel_tol=1e-12)
        assert math.isclose(call["rho"], rho_formula(math.sqrt(T) * sigma, delta / (2 * T), m), rel_tol=1e-6)
    assert math.isclose(sum(c["scale"] ** -2 for c in spy.calls), sigma**-2, rel_tol=1e-12)

    spy = ThresholdSpy(monkeypatch, corpus)
    DPSUSingle(epsilon=eps, delta=delta, max_items=m, only_n=2).release(corpus, seed=1)
    [call] = spy.calls
    assert call["noise"] == "gaussian" and call["lengths"] == {2}
    assert call["scale"] == sigma
    assert math.isclose(call["rho"], rho_formula(sigma, delta / 2, m), rel_tol=1e-6)


# --------------------------------------------------------------------------- closure and spurious validity
@st.composite
def small_corpora(draw):
    alphabet = draw(st.integers(2, 5))
    n_users = draw(st.integers(1, 60))
    tok = st.sampled_from([f"w{i}" for i in range(alphabet)])
    users = draw(
        st.lists(
            st.lists(st.lists(tok, min_size=1, max_size=8), min_size=1, max_size=2), min_size=n_users, max_size=n_users
        )
    )
    return users


@settings(max_examples=30, deadline=None)
@given(small_corpora(), st.sampled_from(["both", "single"]), st.integers(0, 2**31 - 1))
def test_every_run_is_closed_and_spurious_ngrams_are_valid(users, pruning, seed):
    corpus = corpus_from_token_lists(users, max_n=4)
    # a weak guarantee and a large eta make both released and spurious n-grams common
    rel = DPNE(epsilon=20, delta=1e-3, max_items=6, max_n=4, eta=0.5, pruning=pruning).release(corpus, seed=seed)
    assert_closed(rel, pruning)
    s = released_by_length(rel)
    for k in range(2, 5):
        valid = brute_valid(s.get(k - 1, set()), s.get(1, set()), k, pruning)
        spurious = {
            tuple(it.split(" ")) for it, i, n in zip(rel.items, rel.item_ids, rel.ngram_len) if i == -1 and n == k
        }
        assert spurious <= valid
    levels = rel.diagnostics.extra["levels"]
    assert [lv["released"] for lv in levels] == [len(s.get(k, ())) for k in range(1, 5)]


def test_release_is_closed_on_rich_corpus_and_reproducible():
    corpus = rich_corpus()
    for pruning in ("both", "single"):
        mech = DPNE(epsilon=4, delta=1e-6, max_items=10, max_n=3, eta=0.3, pruning=pruning)
        a, b = mech.release(corpus, seed=11), mech.release(corpus, seed=11)
        assert_closed(a, pruning)
        assert a.items.tolist() == b.items.tolist()
        assert (a.item_ids == -1).any()  # spurious n-grams the corpus never contained are released
        frame = a.private_frame()
        assert list(frame.columns) == ["item", "n"]


# --------------------------------------------------------------------------- spurious rate
def test_spurious_draws_follow_the_binomial_and_stay_below_eta():
    corpus = rich_corpus()
    eta = 0.2
    mech = DPNE(epsilon=4, delta=1e-6, max_items=10, max_n=3, eta=eta)
    sigma_k = mech.calibrate().details.sigma_k
    total_b, total_mean, total_var = 0, 0.0, 0.0
    spurious, released = [], []
    for seed in range(40):
        rel = mech.release(corpus, seed=seed)
        assert_closed(rel)
        s = released_by_length(rel)
        h = rel.diagnostics.weights
        for k, lv in enumerate(rel.diagnostics.extra["levels"][1:], start=2):
            # expected from the calibration and the released sets, not from the mechanism's own record:
            # every valid k-gram of weight 0 is drawn with probability eta min(1, |S_(k-1)| / |V_k|)
            n_valid = len(brute_valid(s.get(k - 1, set()), s.get(1, set()), k, "both"))
            q = eta * min(1.0, len(s.get(k - 1, ())) / n_valid)
            assert math.isclose(q, norm.sf(lv["rho"] / sigma_k[k - 1]), rel_tol=1e-9)
            n0 = n_valid - int(np.count_nonzero(h[corpus.ngram_len == k] > 0))
            total_b += lv["spurious_drawn"]
            total_mean += n0 * q
            total_var += n0 * q * (1 - q)
        # every user's n-grams are kept (rows <= Delta), so weight 0 <=> nobody used it <=> id -1
        spurious.append(int(np.count_nonzero(rel.item_ids == -1)))
        released.append(rel.n_released)
    assert total_mean > 50  # the test has power: many spurious draws are expected
    assert abs(total_b - total_mean) <= 4 * math.sqrt(total_var)
    assert sum(spurious) == total_b
    assert np.mean(spurious) / np.mean(released) <= eta


def test_spurious_draw_excludes_exactly_the_support_of_h():
    """The spurious draw is over V_k minus supp(H_k), not V_k minus the corpus' k-grams: a valid k-gram that
    is in the corpus but got weight 0 (its only user sampled it out) must still be drawn with probability q,
    as it is when that user is absent. With Delta = 1 the last user keeps one of 'a b', 'b b', so
    H['b b'] = 0 in about half of the runs."""
    users = [[["a", "b"]]] * 200 + [[["b", "a"]]] * 200 + [[["a", "b"], ["b", "b"]]]
    corpus = corpus_from_token_lists(users, max_n=2)
    vocab = corpus.vocab.tolist()
    bb = vocab.index("b b")
    bigrams = corpus.ngram_len == 2
    mech = DPNE(epsilon=8, delta=1e-5, max_items=1, max_n=2, eta=0.5)
    q = 0.5 * min(1.0, 2 / 4)  # |S_1| = 2, V_2 = {a, b}^2
    n_zero = bb_released = aa_released = n_runs = 0
    for seed in range(1000):
        rel = mech.release(corpus, seed=seed)
        h = rel.diagnostics.weights
        lv = rel.diagnostics.extra["levels"][1]
        assert lv["candidates"] == int(np.count_nonzero(h[bigrams] > 0))
        if released_by_length(rel)[1] != {("a",), ("b",)}:
            continue
        n_runs += 1
        assert lv["valid"] == 4
        items = set(rel.items.tolist())
        aa_released += "a a" in items  # never in the corpus: spurious only
        if h[bb] == 0:
            n_zero += 1
            bb_released += "b b" in items
    assert n_runs > 900 and n_zero > 400
    assert abs(bb_released / n_zero - q) <= 4 * math.sqrt(q * (1 - q) / n_zero)
    assert abs(aa_released / n_runs - q) <= 4 * math.sqrt(q * (1 - q) / n_runs)


def test_eta_too_large_is_a_parameter_error(monkeypatch):
    monkeypatch.setattr(dpne_mod, "MAX_SPURIOUS", 1)
    with pytest.raises(ParameterError, match="eta=0.5 is too large for this corpus") as err:
        DPNE(epsilon=4, delta=1e-6, max_items=10, max_n=2, eta=0.5).release(rich_corpus(), seed=0)
    # the levels below were computed from the data: re-running is a second release
    assert "spends its own (epsilon, delta) again" in str(err.value)


# --------------------------------------------------------------------------- baselines
def test_baselines_registered_with_their_parameters():
    regs = list_mechanisms()
    want = {
        "dpne": ("max_items", "max_n", "eta", "pruning", "schedule", "schedule_ratio"),
        "dpsu-all": ("max_items", "max_n"),
        "dpsu-even": ("max_items", "max_n"),
        "dpsu-single": ("max_items", "only_n"),
    }
    for name, params in want.items():
        assert regs[name].kind == "ngram" and regs[name].param_names == params
        assert get_mechanism(name, epsilon=1, delta=1e-6).name == name


def test_baseline_calibrations():
    eps, delta, m, T = 1.0, 1e-7, 10, 6
    sigma = gaussian_scale(eps, delta)
    rho = rho_formula
    all_cal = DPSUAll(epsilon=eps, delta=delta, max_items=m, max_n=T).calibrate()
    assert math.isclose(all_cal.rho, rho(sigma, delta / 2, T * m), rel_tol=1e-6)
    even = DPSUEven(epsilon=eps, delta=delta, max_items=m, max_n=T).calibrate()
    np.testing.assert_allclose(even.details.sigma_k, math.sqrt(T) * sigma, rtol=1e-12)
    assert math.isclose(sum(s**-2 for s in even.details.sigma_k), sigma**-2, rel_tol=1e-12)
    assert math.isclose(even.details.rho_k[0], rho(math.sqrt(T) * sigma, delta / (2 * T), m), rel_tol=1e-6)
    single = DPSUSingle(epsilon=eps, delta=delta, max_items=m, only_n=3).calibrate()
    assert math.isclose(single.rho, rho(sigma, delta / 2, m), rel_tol=1e-6)


def test_baselines_release_only_used_ngrams_of_their_lengths():
    corpus = rich_corpus()
    for mech, lengths in [
        (DPSUAll(epsilon=4, delta=1e-6, max_items=10, max_n=2), {1, 2}),
        (DPSUEven(epsilon=4, delta=1e-6, max_items=10, max_n=3), {1, 2, 3}),
        (DPSUSingle(epsilon=4, delta=1e-6, max_items=10, only_n=2), {2}),
    ]:
        rel = mech.release(corpus, seed=5)
        assert rel.n_released > 0
        assert set(rel.per_length()) <= lengths
        assert np.all(rel.item_ids >= 0)
        assert np.all(rel.diagnostics.weights[rel.item_ids] > 0)  # weight-0 items are never candidates


# --------------------------------------------------------------------------- parameter errors
def test_corpus_too_short_for_T():
    corpus = corpus_from_token_lists([[["a", "b", "c"]]] * 5, max_n=2)
    for mech in [
        DPNE(epsilon=1, delta=1e-6, max_n=3),
        DPSUAll(epsilon=1, delta=1e-6, max_n=3),
        DPSUEven(epsilon=1, delta=1e-6, max_n=3),
        DPSUSingle(epsilon=1, delta=1e-6, only_n=3),
    ]:
        with pytest.raises(ParameterError, match="n-grams up to length 3.*at least 3"):
            mech.release(corpus, seed=0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(eta=0.0), "eta"),
        (dict(eta=1.5), "eta"),
        (dict(pruning="left"), "pruning"),
        (dict(schedule="linear"), "schedule"),
        (dict(schedule_ratio=0.0), "schedule_ratio"),
        (dict(max_n=0), "max_n"),
        (dict(max_items=0), "max_items"),
        (dict(only_n=2), "takes no parameter only_n"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        DPNE(epsilon=1, delta=1e-6, **kwargs)


def test_noise_schedule_errors():
    with pytest.raises(ParameterError, match="schedule_ratio"):
        noise_schedule(1.0, 3, "geometric", -1.0)
    with pytest.raises(ParameterError, match="schedule"):
        noise_schedule(1.0, 3, "linear")
    with pytest.raises(ParameterError, match=">= 1"):
        noise_schedule(1.0, 0)


def test_dpsu_even_per_length_deltas_never_add_up_past_half_delta():
    """Issue 27: delta / T / 2 in floats is 1 ulp over delta/2 (times T) for about a quarter of parameter sets; the
    per-length delta is rounded down so that T of them add up to at most delta/2, exactly (fractions), over 2,000
    parameter sets, and by at most a few ulps below the float quotient."""
    import random
    from fractions import Fraction

    from dpsu_core.mechanisms.dpne import per_length_delta

    rng = random.Random(27)
    naive_over = 0
    for _ in range(2000):
        delta, t = 10 ** rng.uniform(-14, -0.31), rng.randint(1, 12)
        d = per_length_delta(delta, t)
        assert Fraction(d) * (2 * t) <= Fraction(delta)
        assert d <= delta / (2 * t) and (delta / (2 * t) - d) <= 4 * math.ulp(d)
        naive_over += Fraction(delta / t / 2.0) * (2 * t) > Fraction(delta)
    assert naive_over > 100  # the case the rounding is for does occur in this sample
    cal = get_mechanism("dpsu-even", epsilon=1.0, delta=3e-7, max_n=3, max_items=5).calibrate()
    assert Fraction(cal.details.threshold_delta_per_length) * 6 <= Fraction(3e-7)
