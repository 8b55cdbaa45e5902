"""The one DPSU step (dpsu_step.py): sample <= Delta0 per user, weighted update, noisy threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.mechanisms.dpsu_step import (
    COUNT,
    WEIGHTED_GAUSSIAN,
    WEIGHTED_LAPLACE,
    weighted_gaussian_step,
    weighted_histogram,
    weighted_update,
)
from dpsu_core.mechanisms.sampling import order_and_sample


def _corpus(sizes, n_words=30, seed=0):
    rng = np.random.default_rng(seed)
    users = [[f"w{j}" for j in rng.choice(n_words, size=s, replace=False)] for s in sizes]
    return corpus_from_token_lists(users, posts_per_user=False)


@pytest.mark.parametrize("power", [COUNT, WEIGHTED_LAPLACE, WEIGHTED_GAUSSIAN])
def test_unfiltered_pass_equals_order_and_sample_then_update(power):
    # the fused pass draws exactly the sample order_and_sample draws from the same generator
    corpus = _corpus(np.random.default_rng(1).integers(1, 25, size=200))
    for seed in range(5):
        fused = weighted_histogram(corpus, np.random.default_rng(seed), 6, power)
        rows = order_and_sample(corpus, np.random.default_rng(seed), 6, shuffle=False)
        np.testing.assert_array_equal(fused, weighted_update(rows, corpus.n_items, power))


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 20), min_size=1, max_size=30).filter(any),
    m=st.integers(1, 8),
    keep_bits=st.lists(st.booleans(), min_size=30, max_size=30),
    seed=st.integers(0, 2**31 - 1),
)
def test_filtered_pass_keeps_min_n_delta0_of_the_allowed_items(sizes, m, keep_bits, seed):
    corpus = _corpus(sizes, seed=seed % 1000)
    keep = np.zeros(corpus.n_items, dtype=bool)
    allowed = {f"w{j}" for j, b in enumerate(keep_bits) if b}
    keep[[i for i, w in enumerate(corpus.vocab.astype(str)) if w in allowed]] = True
    n_allowed = np.array(
        [int(keep[corpus.items[corpus.indptr[u] : corpus.indptr[u + 1]]].sum()) for u in range(corpus.n_users)]
    )
    kept = np.minimum(n_allowed, m)
    count = weighted_histogram(corpus, np.random.default_rng(seed), m, COUNT, keep)
    assert np.all(count[~keep] == 0)  # nothing outside the filter is ever touched
    assert count.sum() == kept.sum()  # each user contributes min(n, Delta0) items, +1 each
    assert count.max(initial=0) <= corpus.n_users
    gauss = weighted_histogram(corpus, np.random.default_rng(seed), m, WEIGHTED_GAUSSIAN, keep)
    # l2 norm 1 per user: the total is sum_u sqrt(kept_u)
    assert gauss.sum() == pytest.approx(float(np.sqrt(kept[kept > 0]).sum()), rel=1e-12)
    np.testing.assert_array_equal(gauss > 0, count > 0)
    short = n_allowed <= m  # users who keep every allowed item: their weights are exact
    if short.all():
        expect = np.zeros(corpus.n_items)
        for u in range(corpus.n_users):
            row = corpus.items[corpus.indptr[u] : corpus.indptr[u + 1]]
            row = row[keep[row]]
            if row.size:
                expect[row] += 1 / math.sqrt(row.size)
        np.testing.assert_allclose(gauss, expect, rtol=1e-12)


def test_filtered_sample_is_uniform():
    # one user with 6 allowed items (and 4 filtered out) keeps 2: each allowed item with probability 1/3
    corpus = corpus_from_token_lists([[f"w{j}" for j in range(10)]], posts_per_user=False)
    keep = np.zeros(corpus.n_items, dtype=bool)
    keep[:6] = True
    rng = np.random.default_rng(12345)
    n = 3000
    hits = np.zeros(corpus.n_items)
    for _ in range(n):
        hits += weighted_histogram(corpus, rng, 2, COUNT, keep)
    assert hits[6:].sum() == 0 and hits.sum() == 2 * n
    chi2 = stats.chisquare(hits[:6], np.full(6, 2 * n / 6))
    assert chi2.pvalue > 1e-4


def test_weighted_gaussian_step_never_releases_weight_zero_items():
    corpus = _corpus([5] * 50)
    keep = np.zeros(corpus.n_items, dtype=bool)
    keep[: corpus.n_items // 2] = True
    ids, h = weighted_gaussian_step(corpus, np.random.default_rng(0), 3, 1e6, -1e300, keep)
    np.testing.assert_array_equal(ids, np.flatnonzero(h > 0))  # threshold at -inf: exactly the support
    assert keep[ids].all()
