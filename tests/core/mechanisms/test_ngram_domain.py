"""The valid-n-gram domain V_k of DPNE: exact size, exact index <-> k-gram bijection, uniform sampling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms.ngram_domain import match_rows, row_codes, unique_rows, valid_domain


def brute_force_valid(s_prev: set[tuple], s1: set[int], alphabet: int, k: int, pruning: str) -> set[tuple]:
    out = set()
    for w in itertools.product(range(alphabet), repeat=k):
        pre_ok = w[:-1] in s_prev and w[-1] in s1
        if pruning == "single":
            ok = pre_ok
        else:
            ok = pre_ok and w[1:] in s_prev and w[0] in s1
        if ok:
            out.add(w)
    return out


@st.composite
def released_sets(draw):
    alphabet = draw(st.integers(2, 5))
    k = draw(st.integers(2, 4))
    all_prev = list(itertools.product(range(alphabet), repeat=k - 1))
    s_prev = draw(st.lists(st.sampled_from(all_prev), min_size=0, max_size=len(all_prev)))
    s1 = draw(st.lists(st.integers(0, alphabet - 1), min_size=0, max_size=alphabet))
    pruning = draw(st.sampled_from(["both", "single"]))
    return alphabet, k, s_prev, s1, pruning


@settings(max_examples=120, deadline=None)
@given(released_sets())
def test_size_and_bijection_match_brute_force(case):
    alphabet, k, s_prev, s1, pruning = case
    prev_arr = np.array(s_prev, dtype=np.int32).reshape(-1, k - 1)
    dom = valid_domain(prev_arr, np.array(s1, dtype=np.int32), pruning)
    expected = brute_force_valid(set(s_prev), set(s1), alphabet, k, pruning)
    assert dom.size == len(expected)
    decoded = dom.decode(np.arange(dom.size))
    got = {tuple(int(x) for x in row) for row in decoded}
    assert got == expected  # every index is a valid k-gram and none repeats
    np.testing.assert_array_equal(dom.index_of(decoded), np.arange(dom.size))
    everything = np.array(list(itertools.product(range(alphabet), repeat=k)), dtype=np.int32)
    valid = np.array([tuple(r) in expected for r in everything.tolist()], dtype=bool)
    np.testing.assert_array_equal(dom.contains(everything), valid)


def test_k2_is_s1_squared_for_both_rules():
    s1 = np.array([3, 7, 9], dtype=np.int32)
    for pruning in ("both", "single"):
        dom = valid_domain(s1.reshape(-1, 1), s1, pruning)
        assert dom.size == 9
        assert {tuple(r) for r in dom.decode(np.arange(9)).tolist()} == set(itertools.product([3, 7, 9], repeat=2))


def test_bad_pruning_rule():
    with pytest.raises(ParameterError, match="pruning must be one of"):
        valid_domain(np.zeros((1, 1), np.int32), np.zeros(1, np.int32), "sideways")


def _skewed_domain():
    """Groups of very different sizes: a sampler that picks the overlap uniformly would fail."""
    s1 = np.arange(4, dtype=np.int32)
    s_prev = np.array([[0, 1], [1, 1], [2, 1], [3, 1], [1, 0], [1, 2], [1, 3], [0, 2], [2, 3], [3, 0]], dtype=np.int32)
    return valid_domain(s_prev, s1, "both")


def test_sampler_is_uniform_chi_square():
    dom = _skewed_domain()
    assert 8 <= dom.size <= 40
    assert len(set(dom.l_count * dom.r_count)) > 1  # group sizes differ
    rng = np.random.default_rng(12345)
    n = 40_000
    idx = dom.index_of(dom.sample(rng, n))
    assert np.all(idx >= 0)
    counts = np.bincount(idx, minlength=dom.size)
    assert chisquare(counts).pvalue > 1e-4


def test_distinct_excluding_complement_branch_uniform_subsets():
    dom = valid_domain(np.arange(3, dtype=np.int32).reshape(-1, 1), np.arange(3, dtype=np.int32), "both")
    assert dom.size == 9
    exclude = np.array([0, 4, 8])
    rng = np.random.default_rng(7)
    tally: dict[tuple, int] = {}
    for _ in range(3000):
        s = dom.sample_distinct_excluding(rng, 2, exclude)  # 4*2 >= 6 free: explicit complement
        assert len(set(s.tolist())) == 2 and not set(s.tolist()) & {0, 4, 8}
        tally[tuple(s.tolist())] = tally.get(tuple(s.tolist()), 0) + 1
    assert len(tally) == 15  # C(6, 2) subsets, all reachable
    assert chisquare(list(tally.values())).pvalue > 1e-4


def test_distinct_excluding_rejection_branch_uniform_inclusion():
    s1 = np.arange(7, dtype=np.int32)
    dom = valid_domain(s1.reshape(-1, 1), s1, "both")  # 49 bigrams
    exclude = np.arange(0, 49, 5)  # 10 excluded, 39 free
    rng = np.random.default_rng(99)
    inc = np.zeros(dom.size, dtype=np.int64)
    for _ in range(4000):
        s = dom.sample_distinct_excluding(rng, 3, exclude)  # 12 < 39: rejection sampling
        assert np.unique(s).size == 3
        inc[s] += 1
    assert inc[exclude].sum() == 0
    free = np.setdiff1d(np.arange(dom.size), exclude)
    assert chisquare(inc[free]).pvalue > 1e-4


def test_distinct_excluding_zero_and_all():
    dom = valid_domain(np.arange(3, dtype=np.int32).reshape(-1, 1), np.arange(3, dtype=np.int32), "single")
    rng = np.random.default_rng(1)
    assert dom.sample_distinct_excluding(rng, 0, np.array([1, 2])).size == 0
    np.testing.assert_array_equal(
        dom.sample_distinct_excluding(rng, 7, np.array([1, 2])), np.setdiff1d(np.arange(9), [1, 2])
    )


def test_row_helpers():
    a = np.array([[1, 2], [3, 4], [1, 2], [0, 0]], dtype=np.int32)
    b = np.array([[3, 4], [9, 9], [1, 2]], dtype=np.int32)
    ca, cb = row_codes(a, b)
    assert ca[0] == ca[2] == cb[2] and ca[1] == cb[0] and cb[1] not in set(ca.tolist())
    np.testing.assert_array_equal(unique_rows(a), a[[0, 1, 3]])
    np.testing.assert_array_equal(match_rows(a[[0, 1, 3]], b), [1, -1, 0])
