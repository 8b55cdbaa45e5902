"""Steps 1-2 of the common frame: a uniform user order, and a uniform Delta0-subset of each
user's own distinct items (Gopi et al. 2020, Algorithms 1-2)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.mechanisms.sampling import order_and_sample, rows_from_lists


def _users_with_own_items(sizes):
    """User i holds items 'u{i}w{j}' (j < sizes[i]); item j occurs j+1 times, so counts are checkable."""
    return [[f"u{i}w{j}" for j in range(k) for _ in range(j + 1)] for i, k in enumerate(sizes)]


def _row_owner(corpus, rows, r):
    names = corpus.vocab[rows.items[rows.indptr[r] : rows.indptr[r + 1]]].astype(str)
    owners = {n.split("w")[0] for n in names}
    assert len(owners) <= 1, "a processed row mixes items of several users"
    return owners.pop() if owners else None


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=15),
    m=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
    shuffle=st.booleans(),
)
def test_each_user_keeps_min_w_delta0_distinct_own_items(sizes, m, seed, shuffle):
    corpus = corpus_from_token_lists(_users_with_own_items(sizes), posts_per_user=False)
    rows = order_and_sample(corpus, np.random.default_rng(seed), m, shuffle=shuffle)
    assert rows.n_rows == corpus.n_users
    owners = []
    for r in range(rows.n_rows):
        seg = slice(rows.indptr[r], rows.indptr[r + 1])
        items = rows.items[seg]
        owner = _row_owner(corpus, rows, r)
        owners.append(owner)
        k = sizes[int(owner[1:])]
        assert items.size == min(k, m)
        assert np.unique(items).size == items.size  # distinct
        # counts travel with their items: item u{i}w{j} occurs j + 1 times
        j = np.char.partition(corpus.vocab[items].astype(str), "w")[:, 2].astype(int)
        np.testing.assert_array_equal(rows.counts[seg], j + 1)
    # the processing order is a permutation of the users; without shuffle it is the corpus order
    assert sorted(owners, key=lambda o: int(o[1:])) == [f"u{i}" for i in range(len(sizes))]
    if not shuffle:
        assert owners == [f"u{i}" for i in range(len(sizes))]


def test_no_limit_keeps_everything():
    corpus = corpus_from_token_lists([["a", "b", "c"], ["c", "d"], ["e"]], posts_per_user=False)
    rows = order_and_sample(corpus, np.random.default_rng(1), None, shuffle=False)
    np.testing.assert_array_equal(rows.indptr, corpus.indptr)
    np.testing.assert_array_equal(rows.items, corpus.items)
    np.testing.assert_array_equal(rows.counts, corpus.counts)


@pytest.mark.parametrize("n_words, m", [(5, 2), (6, 3), (4, 1)])
def test_kept_subset_is_uniform(n_words, m):
    # many identical users holding the same n_words words: each processed row is one independent draw
    words = [f"w{j}" for j in range(n_words)]
    n_users = 4000
    corpus = corpus_from_token_lists([words] * n_users, posts_per_user=False)
    rows = order_and_sample(corpus, np.random.default_rng(20240611 + n_words), m)
    kept = rows.items.reshape(n_users, m)
    subsets = list(itertools.combinations(range(n_words), m))
    freq = Counter(tuple(sorted(r)) for r in kept.tolist())
    assert set(freq) <= set(subsets)
    observed = np.array([freq[s] for s in subsets])
    p = stats.chisquare(observed).pvalue  # H0: uniform over all C(n, m) subsets
    assert p > 1e-4, (observed, p)


def test_kept_subset_is_not_biased_by_counts_or_position():
    # the sample must not prefer frequent items or early ids: give one word a huge count
    words = ["a"] * 50 + ["b", "c", "d"]
    corpus = corpus_from_token_lists([words] * 3000, posts_per_user=False)
    rows = order_and_sample(corpus, np.random.default_rng(7), 1)
    freq = np.bincount(rows.items, minlength=corpus.n_items)
    assert stats.chisquare(freq).pvalue > 1e-4, freq


def test_user_order_is_uniform_over_permutations():
    corpus = corpus_from_token_lists(_users_with_own_items([1, 2, 3]), posts_per_user=False)
    rng = np.random.default_rng(99)
    seen = Counter()
    n = 1800
    for _ in range(n):
        rows = order_and_sample(corpus, rng, 2)
        seen[tuple(_row_owner(corpus, rows, r) for r in range(3))] += 1
    perms = list(itertools.permutations(["u0", "u1", "u2"]))
    assert set(seen) == set(perms)
    assert stats.chisquare([seen[p] for p in perms]).pvalue > 1e-4, seen


def test_sampling_uses_the_generator_it_is_given():
    corpus = corpus_from_token_lists([[f"w{j}" for j in range(20)]] * 50, posts_per_user=False)
    a = order_and_sample(corpus, np.random.default_rng(3), 5)
    b = order_and_sample(corpus, np.random.default_rng(3), 5)
    c = order_and_sample(corpus, np.random.default_rng(4), 5)
    np.testing.assert_array_equal(a.items, b.items)
    assert not np.array_equal(a.items, c.items)  # C(20, 5)^50 possibilities: equal only by a bug


def test_rows_from_lists_builds_the_csr():
    rows = rows_from_lists([[3, 1], [], [2]], [[5, 6], [], [7]])
    np.testing.assert_array_equal(rows.indptr, [0, 2, 2, 3])
    np.testing.assert_array_equal(rows.items, [3, 1, 2])
    np.testing.assert_array_equal(rows.counts, [5, 6, 7])
    assert rows.n_rows == 3
    assert rows_from_lists([[1, 2]]).counts.tolist() == [1, 1]
