"""Metrics on a 4-user corpus; every expected number below was worked out by hand.

Users (one post each, unigrams and bigrams):
    U1 "a b c"   U2 "a b"   U3 "a c"   U4 "b a"
Distinct-user counts:  a 4, b 3, c 2 | "a b" 2, "b c" 1, "a c" 1, "b a" 1
(user, item) pairs: unigrams 4+3+2 = 9, bigrams 2+1+1+1 = 5, all 14.
The release R = {a, c, "a b", "b a", "x y"}; "x y" is not in the corpus (item id -1).
"""

import math

import numpy as np
import pandas as pd
import pytest

from dpsu_core.analysis.metrics import (
    HistogramFill,
    canaries_released,
    coverage_table,
    histogram_fill,
    kanon_sets_sizes,
    matching_k,
    missing_mass,
    relative_errors,
    share_within,
    spurious_fraction,
)
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms.base import Calibration, Diagnostics, Release, make_release

CAL = Calibration(
    mechanism="test",
    label="test",
    epsilon=1.0,
    delta=1e-6,
    noise="gaussian",
    scale=1.0,
    rho=1.0,
    gamma=None,
    params={},
    guarantee="",
)


@pytest.fixture(scope="module")
def corpus():
    return corpus_from_token_lists([[["a", "b", "c"]], [["a", "b"]], [["a", "c"]], [["b", "a"]]], max_n=2)


def _ids(corpus, items):
    pos = {s: i for i, s in enumerate(corpus.vocab.tolist())}
    return np.array([pos[s] for s in items], dtype=np.int64)


def _release(corpus, items, extra=(), noisy=None):
    ids = _ids(corpus, items)
    extra_len = [len(e.split()) for e in extra]
    std = None if noisy is None else np.ones(len(noisy))
    return make_release(
        CAL,
        corpus,
        ids,
        Diagnostics(),
        seed=None,
        elapsed=0.0,
        extra_items=np.array(list(extra), dtype=object) if extra else None,
        extra_len=np.array(extra_len) if extra else None,
        noisy_counts=None if noisy is None else np.asarray(noisy),
        count_std=std,
    )


@pytest.fixture(scope="module")
def release(corpus):
    return _release(corpus, ["a", "c", "a b", "b a"], extra=["x y"])


def _row(df, **key):
    mask = np.ones(len(df), dtype=bool)
    for k, v in key.items():
        mask &= df[k].to_numpy() == v
    assert mask.sum() == 1, key
    return df[mask].iloc[0]


def test_corpus_is_what_the_docstring_says(corpus):
    uc = dict(zip(corpus.vocab.tolist(), corpus.user_counts.tolist()))
    assert uc == {"a": 4, "b": 3, "c": 2, "a b": 2, "b c": 1, "a c": 1, "b a": 1}


def test_kanon_sets_sizes(corpus):
    df = kanon_sets_sizes(corpus, [1, 2, 3, 4, 5])
    assert list(df.columns) == ["n", "k", "s_k"]
    expected = {
        1: [3, 3, 2, 1, 0],
        2: [4, 1, 0, 0, 0],
        0: [7, 4, 2, 1, 0],
    }
    for n, sizes in expected.items():
        got = df[df.n == n].sort_values("k").s_k.tolist()
        assert got == sizes, n
    all_only = kanon_sets_sizes(corpus, [2], by_length=False)
    assert all_only.to_dict("records") == [{"n": 0, "k": 2, "s_k": 4}]


def test_coverage_table(corpus, release):
    df = coverage_table(corpus, release, [1, 2, 3])
    assert list(df.columns) == ["n", "k", "s_k", "released", "size_ratio", "recall"]
    expected = {  # (n, k): (s_k, released, size_ratio, recall)
        (1, 1): (3, 2, 2 / 3, 2 / 3),
        (1, 2): (3, 2, 2 / 3, 2 / 3),
        (1, 3): (2, 2, 1.0, 1 / 2),
        (2, 1): (4, 3, 3 / 4, 2 / 4),
        (2, 2): (1, 3, 3.0, 1.0),
        (0, 1): (7, 5, 5 / 7, 4 / 7),
        (0, 2): (4, 5, 5 / 4, 3 / 4),
        (0, 3): (2, 5, 5 / 2, 1 / 2),
    }
    for (n, k), (s_k, rel, ratio, recall) in expected.items():
        r = _row(df, n=n, k=k)
        assert (r.s_k, r.released) == (s_k, rel)
        assert r.size_ratio == pytest.approx(ratio)
        assert r.recall == pytest.approx(recall)
    empty_k = _row(df, n=2, k=3)  # no bigram has 3 users: ratios undefined
    assert empty_k.s_k == 0 and math.isnan(empty_k.size_ratio) and math.isnan(empty_k.recall)


def test_matching_k(corpus, release):
    # all lengths: |R| = 5, |S_1| = 7 > 5, |S_2| = 4 <= 5
    assert matching_k(corpus, release) == 2
    # unigrams: |R| = 2, |S_2| = 3 > 2, |S_3| = 2 <= 2
    assert matching_k(corpus, release, n=1) == 3
    # bigrams: |R| = 3, |S_1| = 4 > 3, |S_2| = 1
    assert matching_k(corpus, release, n=2) == 2
    # releasing every unigram matches k = 1; releasing nothing matches nothing
    assert matching_k(corpus, _release(corpus, ["a", "b", "c"]), n=1) == 1
    assert matching_k(corpus, _release(corpus, [])) is None


def test_missing_mass(corpus, release):
    df = missing_mass(corpus, release)
    assert list(df.columns) == ["n", "pairs", "recovered_pairs", "recovered_mass", "missing_mass"]
    # recovered: a 4 + c 2 = 6 of 9; "a b" 2 + "b a" 1 = 3 of 5; 9 of 14
    for n, pairs, rec in [(1, 9, 6), (2, 5, 3), (0, 14, 9)]:
        r = _row(df, n=n)
        assert (r.pairs, r.recovered_pairs) == (pairs, rec)
        assert r.recovered_mass == pytest.approx(rec / pairs)
        assert r.missing_mass == pytest.approx(1 - rec / pairs)


def test_spurious_fraction(corpus, release):
    df = spurious_fraction(corpus, release)
    assert list(df.columns) == ["n", "released", "spurious", "fraction"]
    for n, rel, sp in [(1, 2, 0), (2, 3, 1), (0, 5, 1)]:
        r = _row(df, n=n)
        assert (r.released, r.spurious) == (rel, sp)
        assert r.fraction == pytest.approx(sp / rel)


def test_spurious_counts_vocab_items_with_no_users(corpus):
    # drop "b a" from every user: it stays in the vocabulary with 0 users, so releasing it is spurious
    restricted = corpus.restrict_to(corpus.vocab != "b a")
    rel = _release(restricted, ["a", "b a"])
    df = spurious_fraction(restricted, rel)
    assert _row(df, n=2).spurious == 1 and _row(df, n=1).spurious == 0


def test_histogram_fill():
    h = np.array([0.0, 0.5, 2.0, 3.0, 3.0 + 5e-10, 1.0])
    f = histogram_fill(h, rho=1.5, gamma=3.0)
    assert isinstance(f, HistogramFill)
    assert f.n_positive == 5
    assert f.share_above_rho == pytest.approx(3 / 5)  # 2.0, 3.0, 3.0 + 5e-10
    assert f.share_at_gamma == pytest.approx(2 / 5)  # 3.0 and 3.0 + 5e-10 (within 1e-9)
    assert f.total_weight == pytest.approx(9.5)
    assert f.weight_beyond_rho_need == pytest.approx(0.5 + 1.5 + 1.5)
    assert f.as_dict()["n_positive"] == 5
    assert histogram_fill(h, rho=1.5, gamma=None).share_at_gamma is None
    assert histogram_fill(np.array([0.0, 3.0 + 1e-6]), 1.5, 3.0).share_at_gamma == 0.0
    with pytest.raises(ParameterError):
        histogram_fill(None, 1.5, None)  # a count mechanism such as PCR has no H
    with pytest.raises(ParameterError):
        histogram_fill(h, None, None)


def test_histogram_fill_counts_items_near_gamma_relative_to_the_noise_scale():
    # Hand-made l2-descent-like weights: approach Gamma = 10 without landing on it (noise scale sigma = 2).
    gamma, sigma = 10.0, 2.0
    h = np.array([0.0, 4.0, gamma, gamma - 1e-12, gamma - 1.5e-3, gamma - 1.9e-3, gamma - 2.5e-3, gamma - 0.5])
    exact = histogram_fill(h, rho=5.0, gamma=gamma)  # no scale: only rounding is forgiven
    assert exact.share_at_gamma == pytest.approx(2 / 7)  # gamma and gamma - 1e-12
    assert exact.gamma_tol == pytest.approx(1e-8)
    f = histogram_fill(h, rho=5.0, gamma=gamma, scale=sigma)  # tol = 1e-3 * 2 = 2e-3
    assert f.gamma_tol == pytest.approx(2e-3)
    assert f.share_at_gamma == pytest.approx(4 / 7)  # ... and 1.5e-3, 1.9e-3 below; not 2.5e-3, 0.5 below
    # a larger noise scale forgives more; an explicit absolute tol overrides the scale
    assert histogram_fill(h, 5.0, gamma, scale=10 * sigma).share_at_gamma == pytest.approx(5 / 7)
    assert histogram_fill(h, 5.0, gamma, scale=sigma, tol=0.0).share_at_gamma == pytest.approx(1 / 7)
    assert histogram_fill(h, 5.0, gamma, tol=1.0).share_at_gamma == pytest.approx(6 / 7)
    # weight-0 items are never "at Gamma", however large the tolerance
    assert histogram_fill(np.array([0.0, 0.0, 1.0]), 0.5, 1.0, tol=5.0).share_at_gamma == pytest.approx(1.0)
    assert histogram_fill(h, 5.0, None, scale=sigma).gamma_tol is None
    for bad in ({"scale": 0.0}, {"scale": -1.0}, {"scale": float("nan")}, {"tol": -1e-3}, {"tol": "big"}):
        with pytest.raises(ParameterError):
            histogram_fill(h, 5.0, gamma, **bad)


def test_relative_errors_and_share_within(corpus):
    rel = _release(corpus, ["a", "c"], extra=["x y"], noisy=None)
    with pytest.raises(ParameterError):
        relative_errors(corpus, rel)
    # canonical order is (length, string): a, c, "x y"
    counted = _release(corpus, ["a", "c"], extra=["x y"], noisy=[5, 2, 3])
    df = relative_errors(corpus, counted)
    assert list(df.columns) == ["item", "true_count", "noisy_count", "rel_error"]
    got = {r.item: (r.true_count, r.noisy_count, r.rel_error) for r in df.itertuples()}
    assert got["a"] == (4, 5, pytest.approx(0.25))
    assert got["c"] == (2, 2, 0.0)
    assert got["x y"][0] == 0 and math.isinf(got["x y"][2])
    assert share_within(df, 0.1) == pytest.approx(1 / 3)
    assert share_within(df, 0.25) == pytest.approx(2 / 3)
    assert share_within(np.array([0.05, 0.5]), 0.1) == pytest.approx(0.5)
    assert math.isnan(share_within(pd.DataFrame({"rel_error": []}), 0.1))
    for bad in (-0.1, "x", float("nan")):
        with pytest.raises(ParameterError):
            share_within(df, bad)


def test_canaries_released(release):
    assert canaries_released(release, ["a  b", "zz", "x y", "b  c"]) == ["a  b", "x y"]
    assert canaries_released(release, []) == []


def test_canaries_found_as_items_and_inside_released_ngrams():
    cal = Calibration("x", "X", 1.0, 1e-6, "gaussian", 1.0, 1.0, None, {}, "g")
    rel = Release(
        cal,
        np.array([0, 1, 2]),
        np.array(["alpha", "beta", "is acct42"], dtype=object),
        np.array([1, 1, 2], dtype=np.int16),
    )
    # "acct42" leaks inside the bigram; "acct4" is only a prefix of a token; "is acct" is not a released item
    assert canaries_released(rel, ["alpha", "acct42", "gamma", "acct4", "is acct"]) == ["alpha", "acct42"]
    assert canaries_released(rel, []) == []


@pytest.mark.parametrize("ks", [[], [0], [1.5], ["x"], [-2]])
def test_bad_ks(corpus, ks):
    with pytest.raises(ParameterError):
        kanon_sets_sizes(corpus, ks)


def test_release_from_another_corpus_is_rejected(corpus, release):
    other = corpus_from_token_lists([[["q", "r"]], [["r", "s"]]], max_n=2)
    with pytest.raises(ParameterError):
        coverage_table(other, release, [1])
