"""The Corpus CSR model: restricting rows to a subset of items."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus.model import Corpus


def _corpus(rows: list[list[int]], n_items: int) -> Corpus:
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    items = np.array([x for r in rows for x in r], dtype=np.int32)
    return Corpus(
        indptr=indptr,
        items=items,
        counts=np.arange(1, items.size + 1, dtype=np.int32),
        vocab=np.array([f"w{i}" for i in range(n_items)], dtype=object),
        ngram_len=np.ones(n_items, dtype=np.int8),
        gram_tokens=np.arange(n_items, dtype=np.int32).reshape(-1, 1),
    )


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.lists(st.integers(0, 5), unique=True, max_size=6).map(sorted), max_size=12),
    keep=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_restrict_to_matches_brute_force_including_empty_rows(rows, keep):
    c = _corpus(rows, 6)
    r = c.restrict_to(np.array(keep))
    assert r.n_users == c.n_users and r.vocab is c.vocab
    for i, row in enumerate(rows):
        got = r.items[r.indptr[i] : r.indptr[i + 1]].tolist()
        assert got == [x for x in row if keep[x]]
        # counts travel with their items
        src = c.counts[c.indptr[i] : c.indptr[i + 1]][[keep[x] for x in row]] if row else []
        assert r.counts[r.indptr[i] : r.indptr[i + 1]].tolist() == list(src)


def test_restrict_to_with_trailing_empty_rows():
    c = _corpus([[0, 1], [1], [], []], 2)
    r = c.restrict_to(np.array([False, True]))
    assert r.indptr.tolist() == [0, 1, 2, 2, 2] and r.items.tolist() == [1, 1]


# --------------------------------------------------------------------------- row validation (issue 8, item 4)
def test_a_row_with_a_repeated_item_is_refused_with_the_row_and_the_fix():
    from dpsu_core.corpus.model import CorpusRowError
    from dpsu_core.errors import InputError

    _corpus([[0, 1], [2, 0, 1]], 3)  # distinct but not sorted: accepted
    for rows, bad in [([[0, 1], [1, 1]], 1), ([[0, 2, 1, 2]], 0), ([[1], [0, 2], [2, 0, 3, 0]], 2)]:
        with pytest.raises(CorpusRowError, match=f"user row {bad} .*DISTINCT") as info:
            _corpus(rows, 4)
        assert isinstance(info.value, InputError)


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(items=np.array([0, 5], dtype=np.int32)), "vocabulary ids"),
        (dict(counts=np.array([1, 0], dtype=np.int32)), "counts must be >= 1"),
        (dict(counts=np.array([1], dtype=np.int32)), "one entry per item"),
        (dict(indptr=np.array([0, 1], dtype=np.int64)), "end at len"),
        (dict(indptr=np.array([0, 2, 1, 2], dtype=np.int64)), "non-decreasing"),
    ],
)
def test_other_broken_csr_contracts_are_typed_errors(change, match):
    from dataclasses import replace

    from dpsu_core.corpus.model import CorpusRowError

    good = _corpus([[0, 1]], 3)
    with pytest.raises(CorpusRowError, match=match):
        replace(good, **change)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(st.integers(0, 5), max_size=6), max_size=8))
def test_validation_accepts_exactly_the_rows_without_repeats(rows):
    from dpsu_core.corpus.model import CorpusRowError

    distinct = all(len(set(r)) == len(r) for r in rows)
    if distinct:
        _corpus(rows, 6)
    else:
        with pytest.raises(CorpusRowError, match="more than once"):
            _corpus(rows, 6)


def test_validate_csr_reports_each_problem_from_its_one_compiled_pass():
    """The checks of validate_csr come from one kernel pass; each problem is still named (issue 20)."""
    from dpsu_core.corpus.model import CorpusRowError, validate_csr

    ip = np.array([0, 2, 4], dtype=np.int64)
    ok_items, ok_counts = np.array([0, 3, 1, 2], dtype=np.int32), np.ones(4, dtype=np.int32)
    validate_csr(ip, ok_items, ok_counts, 4)
    cases = [
        (np.array([0, 3, 1, 4], dtype=np.int32), ok_counts, "vocabulary ids in \\[0, 4\\); got values from 0 to 4"),
        (np.array([-1, 3, 1, 2], dtype=np.int32), ok_counts, "got values from -1 to 3"),
        (ok_items, np.array([1, 1, 0, 1], dtype=np.int32), "counts must be >= 1"),
        (np.array([0, 3, 2, 2], dtype=np.int32), ok_counts, "user row 1 .* more than once"),
        (ok_items.astype(np.float64), ok_counts, "must be integer arrays"),
    ]
    for items, counts, message in cases:
        with pytest.raises(CorpusRowError, match=message):
            validate_csr(ip, items, counts, 4)
    validate_csr(ip, np.array([3, 0, 2, 1], dtype=np.int64), ok_counts.astype(np.int64), 4)  # unsorted, distinct
