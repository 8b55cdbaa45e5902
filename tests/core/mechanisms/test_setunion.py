"""End-to-end privacy regressions of the six set-union mechanisms (Gopi et al. 2020):
weight-0 items are never candidates, a lone user's items pass with probability <= delta
(Monte Carlo with an exact Clopper-Pearson bound), reproducibility and the shape of a Release.
"""

from __future__ import annotations

import dataclasses
import math
import zlib

import numpy as np
import pytest

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.mechanisms.base import Diagnostics, make_release, noisy_threshold
from dpsu_core.mechanisms.registry import get_mechanism
from dpsu_core.mechanisms.sampling import order_and_sample
from dpsu_core.mechanisms.setunion import WeightedLaplace
from dpsu_core.privacy import rho_weighted_laplace
from tests.helpers import exceed_probability, lone_user_corpus, lone_user_release_rate

SET_UNION = [
    "count-laplace",
    "count-gaussian",
    "weighted-laplace",
    "weighted-gaussian",
    "policy-laplace",
    "policy-gaussian",
]


def make(name, epsilon=1.0, delta=1e-3, max_items=5, alpha=3.0):
    params = {"max_items": max_items}
    if name.startswith("policy"):
        params["alpha"] = alpha
    return get_mechanism(name, epsilon=epsilon, delta=delta, **params)


def _seed(name):
    return zlib.crc32(name.encode())


# --------------------------------------------------------------------------- weight-0 items are never candidates
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_noisy_threshold_never_returns_weight_zero_items(noise):
    rng = np.random.default_rng(5)
    w = np.zeros(10_000)
    pos = rng.choice(w.size, 300, replace=False)
    w[pos] = rng.uniform(1e-12, 3.0, pos.size)
    # a threshold far below any noise value: every candidate passes, so the output IS the candidate set
    out = noisy_threshold(w, rng, noise, 1e6, -1e300)
    np.testing.assert_array_equal(out, np.sort(pos))
    # with a huge scale and an ordinary threshold about half the candidates pass, never a zero
    for _ in range(20):
        out = noisy_threshold(w, rng, noise, 1e6, 1.0)
        assert np.all(w[out] > 0)
        assert 0 < out.size < pos.size
    assert noisy_threshold(np.zeros(50), rng, noise, 1e6, -1e300).size == 0


@pytest.mark.parametrize("name", SET_UNION)
def test_release_never_contains_an_item_nobody_kept(name):
    # users hold more items than Delta0, so sampling drops some; with the threshold forced down to -inf
    # the release must be EXACTLY the union of the kept sets (weight > 0), and nothing else.
    rng0 = np.random.default_rng(11)
    users = [[f"w{j}" for j in rng0.choice(400, size=rng0.integers(1, 30), replace=False)] for _ in range(60)]
    corpus = corpus_from_token_lists(users, posts_per_user=False)
    mech = make(name, max_items=3)
    cal = dataclasses.replace(mech.calibrate(), rho=-1e300)
    for seed in range(5):
        parts = mech._release(corpus, np.random.default_rng(seed), cal, None)
        ids, diag = parts.ids, parts.diagnostics
        rows = order_and_sample(corpus, np.random.default_rng(seed), 3, shuffle=mech.shuffle)
        kept = np.unique(rows.items)
        np.testing.assert_array_equal(np.sort(ids), kept)
        assert kept.size < np.unique(corpus.items).size  # sampling did drop items: the test has teeth
        np.testing.assert_array_equal(np.flatnonzero(diag.weights > 0), kept)


# --------------------------------------------------------------------------- a lone user's items: P <= delta
N_RUNS = 2500
DELTA_MC = 0.05


def _lone_weight(name, t):
    """Weight each of a lone user's t fresh items receives: count 1; weighted/policy 1/t (l1) or 1/sqrt(t) (l2)."""
    if name.startswith("count"):
        return 1.0
    return 1.0 / t if name.endswith("laplace") else 1.0 / math.sqrt(t)


@pytest.mark.parametrize("name", SET_UNION)
def test_lone_user_items_released_with_probability_at_most_delta(name):
    # Delta0 = 5 and the lone user holds 5 unique words: the worst case t = Delta0 of the rho maximum
    # for the Laplace family, so the true rate is ~delta there (delta/2 for the Gaussian family).
    m = 5
    est = lone_user_release_rate(
        lambda: make(name, epsilon=1.0, delta=DELTA_MC, max_items=m), N_RUNS, n_unique=m, n_users=150, seed=_seed(name)
    )
    assert est.lower <= DELTA_MC, est
    # Power: the estimate must agree with the exact probability for this lone user, so a harness that
    # never saw a release (or a rho set absurdly high) fails here.
    cal = make(name, epsilon=1.0, delta=DELTA_MC, max_items=m).calibrate()
    exact = exceed_probability(cal.noise, cal.scale, cal.rho, [_lone_weight(name, m)] * m)
    assert exact <= DELTA_MC * (1 + 1e-9)
    assert est.contains(exact), (est, exact)


@pytest.mark.parametrize("name", ["weighted-laplace", "policy-gaussian"])
def test_lone_user_with_more_items_than_delta0_and_common_words(name):
    # 12 unique words, Delta0 = 4: sampling keeps 4; the lone user also holds common words
    est = lone_user_release_rate(
        lambda: make(name, epsilon=1.0, delta=DELTA_MC, max_items=4),
        1500,
        n_unique=12,
        lone_common=3,
        n_users=100,
        seed=_seed(name) + 1,
    )
    assert est.lower <= DELTA_MC, est


class _MiscalibratedWeightedLaplace(WeightedLaplace):
    """rho computed for Delta0 = 1 while users keep up to Delta0 items: the classic under-calibration."""

    name = "test-miscalibrated"

    def calibrate(self):
        cal = super().calibrate()
        return dataclasses.replace(cal, rho=rho_weighted_laplace(self.epsilon, self.delta, 1))


def test_harness_detects_an_under_calibrated_threshold():
    # The same harness must FAIL a mechanism that is not (eps, delta)-DP: rho(t=1) = 1 + ln(1/(2 delta))
    # lets one of the lone user's 20 items through with probability ~0.27 >> delta.
    mech = _MiscalibratedWeightedLaplace(epsilon=1.0, delta=DELTA_MC, max_items=20)
    est = lone_user_release_rate(mech, 1000, n_unique=20, seed=3)
    assert est.lower > DELTA_MC, est


# --------------------------------------------------------------------------- reproducibility
def _noisy_corpus(name):
    """Items whose weights sit near rho (Delta0 = 1, so every user has weight 1 on one item): each of the
    200 items passes with a probability well inside (0.2, 0.8), so two unseeded runs agree with
    probability < 0.8^200."""
    rho = make(name, max_items=1).calibrate().rho
    k = max(1, round(rho))
    users = [[f"w{j}"] for j in range(200) for _ in range(k)]
    return corpus_from_token_lists(users, posts_per_user=False)


@pytest.mark.parametrize("name", SET_UNION)
def test_seed_reproduces_and_no_seed_uses_os_entropy(name):
    corpus = _noisy_corpus(name)
    mech = make(name, max_items=1)
    a = mech.release(corpus, seed=123)
    b = mech.release(corpus, seed=123)
    np.testing.assert_array_equal(a.items, b.items)
    np.testing.assert_array_equal(a.item_ids, b.item_ids)
    assert a.seed == 123 and a.seeded
    assert 20 < a.n_released < 180  # weights really sit near rho
    c = mech.release(corpus)
    d = mech.release(corpus)
    assert c.seed is None and d.seed is None and not c.seeded
    assert not np.array_equal(c.items, d.items)
    e = mech.release(corpus, rng=np.random.default_rng(123))
    assert e.seed is None  # a caller-supplied generator is not recorded as a seed


@pytest.mark.parametrize("name", SET_UNION)
def test_output_order_depends_only_on_the_released_set(name):
    # the same users listed in two different orders give different vocab ids; with rho = -inf the
    # released set is the same, and so must be the released sequence (by length, then string)
    rng0 = np.random.default_rng(2)
    users = [[f"w{j}" for j in rng0.choice(50, size=4, replace=False)] for _ in range(40)]
    mech = make(name, max_items=10)
    cal = dataclasses.replace(mech.calibrate(), rho=-1e300)
    outs = []
    for us in (users, users[::-1]):
        corpus = corpus_from_token_lists(us, posts_per_user=False)
        parts = mech._release(corpus, np.random.default_rng(0), cal, None)
        ids, diag = parts.ids, parts.diagnostics
        rel = make_release(cal, corpus, np.random.default_rng(1).permutation(ids), diag, seed=None, elapsed=0.0)
        outs.append(rel.items.tolist())
        np.testing.assert_array_equal(corpus.vocab[rel.item_ids], rel.items)
    assert outs[0] == outs[1] == sorted(outs[0])


def test_output_order_with_ngrams_is_by_length_then_string():
    corpus = corpus_from_token_lists([[["b", "a", "c"]], [["a", "b"]]], max_n=2)
    mech = make("weighted-gaussian", max_items=10)
    cal = dataclasses.replace(mech.calibrate(), rho=-1e300)
    parts = mech._release(corpus, np.random.default_rng(0), cal, None)
    ids, diag = parts.ids, parts.diagnostics
    rel = make_release(cal, corpus, ids[::-1], diag, seed=None, elapsed=0.0)
    assert rel.items.tolist() == ["a", "b", "c", "a b", "a c", "b a"]
    assert rel.ngram_len.tolist() == [1, 1, 1, 2, 2, 2]
    assert rel.per_length() == {1: 3, 2: 3}


# --------------------------------------------------------------------------- weights stay in diagnostics
@pytest.mark.parametrize("name", SET_UNION)
def test_release_exposes_weights_only_in_diagnostics(name):
    corpus, _ = lone_user_corpus(5, n_users=80)
    rel = make(name, epsilon=2.0, delta=1e-3).release(corpus, seed=1)
    assert isinstance(rel.diagnostics, Diagnostics)
    assert rel.diagnostics.weights.shape == (corpus.n_items,)
    assert rel.n_released > 0
    frame = rel.private_frame()
    assert list(frame.columns) == ["item", "n"]
    assert rel.noisy_counts is None and rel.count_std is None
    for f in dataclasses.fields(rel):
        if f.name == "diagnostics":
            continue
        value = getattr(rel, f.name)
        if isinstance(value, np.ndarray):
            assert value.dtype.kind != "f", f"Release.{f.name} is a float array: weights belong in diagnostics"
            assert value.shape[0] == rel.n_released, f.name
    # the published calibration holds no per-item data at all
    cal = rel.calibration.as_dict()
    assert not any(isinstance(v, list) and len(v) >= corpus.n_items for v in cal.values())
    assert not any(isinstance(v, list) and len(v) >= corpus.n_items for v in cal["details"].values())
    # the calibration is the data-independent one
    assert rel.calibration == make(name, epsilon=2.0, delta=1e-3).calibrate()


@pytest.mark.parametrize("name", SET_UNION)
def test_diagnostic_weights_are_the_policy_histogram(name):
    # with Delta0 >= every row and a fixed seed, the diagnostic H equals the update rule applied to the corpus
    users = [["a", "b"], ["a"], ["a", "c", "d"], ["b", "c"]] * 5
    corpus = corpus_from_token_lists(users, posts_per_user=False)
    mech = make(name, max_items=10)
    rel = mech.release(corpus, seed=4)
    h = rel.diagnostics.weights
    a, b, c, d = (int(np.flatnonzero(corpus.vocab == x)[0]) for x in "abcd")
    if name.startswith("count"):
        np.testing.assert_allclose(h[[a, b, c, d]], [15, 10, 10, 5])
    elif name == "weighted-laplace":
        np.testing.assert_allclose(h[[a, b, c, d]], [5 * (1 / 2 + 1 + 1 / 3), 5 * 1.0, 5 * (1 / 3 + 1 / 2), 5 / 3])
    elif name == "weighted-gaussian":
        s2, s3 = 1 / math.sqrt(2), 1 / math.sqrt(3)
        np.testing.assert_allclose(h[[a, b, c, d]], [5 * (s2 + 1 + s3), 5 * 2 * s2, 5 * (s3 + s2), 5 * s3])
    else:
        # policies are order dependent; the total mass is at most one per user and no weight passes Gamma
        order = 1 if name.endswith("laplace") else 2
        assert h.max() <= rel.calibration.gamma
        assert h.sum() <= len(users) * (1 if order == 1 else math.sqrt(3)) + 1e-9
        assert np.all(h[[a, b, c, d]] > 0)
