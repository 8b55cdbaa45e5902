"""The one DPSU step (dpsu_step.py): sample <= Delta0 per user, weighted update, noisy threshold."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.corpus.model import Corpus
from dpsu_core.mechanisms.dpsu_step import (
    CAP_UNITS,
    COUNT,
    WEIGHTED_GAUSSIAN,
    WEIGHTED_LAPLACE,
    grid_bits,
    sum_units,
    units_to_weights,
    weighted_gaussian_step,
    weighted_histogram,
    weighted_update,
    weighted_update_units,
)
from dpsu_core.mechanisms.sampling import order_and_sample
from dpsu_core.privacy.norms import UNIT_NORM_SAFETY
from tests.helpers import coupled_neighbours, neighbouring_rows


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
    # l2 norm 1 per user: the total is sum_u sqrt(kept_u), less at most one grid unit (2^-32) per increment
    exact = float(np.sqrt(kept[kept > 0]).sum())
    assert exact - kept.sum() * 2.0**-32 - 1e-12 <= gauss.sum() <= exact
    np.testing.assert_array_equal(gauss > 0, count > 0)
    short = n_allowed <= m  # users who keep every allowed item: their weights are exact
    if short.all():
        expect = np.zeros(corpus.n_items)
        for u in range(corpus.n_users):
            row = corpus.items[corpus.indptr[u] : corpus.indptr[u + 1]]
            row = row[keep[row]]
            if row.size:
                expect[row] += 1 / math.sqrt(row.size)
        np.testing.assert_allclose(gauss, expect, rtol=0, atol=corpus.n_users * 2.0**-32)


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


# --------------------------------------------------------------------------- the histogram's sums are exact
def _csr_corpus(lens: np.ndarray, items: np.ndarray, n_items: int) -> Corpus:
    indptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    return Corpus(
        indptr=indptr,
        items=items.astype(np.int32),
        counts=np.ones(items.shape[0], dtype=np.int32),
        vocab=np.array([f"w{i}" for i in range(n_items)], dtype=object),
        ngram_len=np.ones(n_items, dtype=np.int8),
        gram_tokens=np.arange(n_items, dtype=np.int32).reshape(-1, 1),
    )


def _exact_sq(a: np.ndarray, b: np.ndarray) -> Fraction:
    return sum(((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(a, b)), Fraction(0))


def test_a_million_weighted_gaussian_users_move_the_released_histogram_by_norm_one_exactly():
    """10^6 users with 1-7 items over 20 words, and one more user of 7 items first, in the middle or last: the
    histogram each release thresholds differs by l2 norm <= 1 in exact arithmetic. A float sum in user order
    does not (checked here too: 1 + 1.2e-11 with the extra user first), the audit's construction."""
    rng = np.random.default_rng(0)
    n, words = 10**6, 20
    lens = rng.integers(1, 8, size=n)
    perm = rng.permuted(np.tile(np.arange(words, dtype=np.int8), (n, 1)), axis=1)
    mask = np.arange(words) < lens[:, None]
    perm = np.where(mask, perm, 127)
    perm.sort(axis=1)
    items = perm[mask].astype(np.int64)
    extra = np.arange(7)
    d = _csr_corpus(lens, items, words)
    h = weighted_histogram(d, np.random.default_rng(1), 7, WEIGHTED_GAUSSIAN)
    starts = np.concatenate([[0], np.cumsum(lens)])
    for pos in (0, n // 2, n):
        cut = starts[pos]
        du = _csr_corpus(
            np.concatenate([lens[:pos], [7], lens[pos:]]), np.concatenate([items[:cut], extra, items[cut:]]), words
        )
        hu = weighted_histogram(du, np.random.default_rng(1), 7, WEIGHTED_GAUSSIAN)
        assert _exact_sq(hu, h) <= 1
        assert _exact_sq(hu, h) > 1 - Fraction(1, 10**8)  # the extra user's own increment, barely rounded down
    # the same construction summed in floats, user by user, goes over
    w = np.where(lens == 1, 1.0, (1.0 / np.sqrt(lens)) * UNIT_NORM_SAFETY)
    f, fu = np.zeros(words), np.zeros(words)
    np.add.at(f, items, np.repeat(w, lens))
    np.add.at(fu, extra, np.full(7, (1.0 / math.sqrt(7)) * UNIT_NORM_SAFETY))
    np.add.at(fu, items, np.repeat(w, lens))
    assert _exact_sq(fu, f) > 1


@settings(max_examples=150, deadline=None)
@given(case=coupled_neighbours(), crowd=st.integers(0, 200_000), crowd_row=st.lists(st.integers(0, 7), unique=True))
def test_neighbouring_histograms_differ_by_norm_one_exactly(case, crowd, crowd_row):
    """Any coupled neighbours, behind a crowd of identical users that makes the totals large (where a float sum
    rounds): from the integer sums, ||H(D+u) - H(D)|| <= 1 exactly (l2 Weighted Gaussian, l1 Weighted Laplace,
    each coordinate <= 1 for Count); and H is exactly the units times the grid."""
    n_items, _, rows, extra, pos, _ = case
    n_items = 8
    rows = [crowd_row] * crowd + rows
    d, du = neighbouring_rows(rows, extra, pos + crowd)
    for power, order in ((WEIGHTED_GAUSSIAN, 2), (WEIGHTED_LAPLACE, 1), (COUNT, math.inf)):
        a, b = weighted_update_units(d, n_items, power), weighted_update_units(du, n_items, power)
        diff = [int(x) - int(y) for x, y in zip(b, a)]
        assert min(diff) >= 0
        one = 2 ** grid_bits(power)
        if order == 2:
            assert sum(x * x for x in diff) <= one * one
        elif order == 1:
            assert sum(diff) <= one
        else:
            assert max(diff) <= one
        h = weighted_update(du, n_items, power)
        assert [Fraction(float(x)) for x in h] == [Fraction(int(u), one) for u in b]


def test_exact_sums_saturate_at_the_cap_and_do_not_depend_on_the_order():
    """``sum_units`` (how Spark adds its parts): order-free, int64, and an item's total stops at CAP_UNITS (a
    clamp moves no coordinate further than the sum does)."""
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 5, size=10_000)
    units = rng.integers(1, 2**32, size=10_000)
    a = sum_units(ids, units, 5)
    order = rng.permutation(ids.shape[0])
    np.testing.assert_array_equal(a, sum_units(ids[order], units[order], 5))
    np.testing.assert_array_equal(a, [int(units[ids == i].sum()) for i in range(5)])
    big = sum_units(np.zeros(3, dtype=np.int64), np.array([CAP_UNITS - 5, 3, 2**32]), 1)
    assert big[0] == CAP_UNITS
    assert units_to_weights(np.array([CAP_UNITS]), WEIGHTED_GAUSSIAN)[0] == 2.0**21
