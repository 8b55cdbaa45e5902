"""Steps 1 and 2 of the common frame (Gopi et al., Algorithms 1-2): a uniformly random
user order, and for each user with more than Delta0 distinct items a uniform sample of
Delta0 of them without replacement.

The result is a CSR whose rows are already in processing order, so every update
kernel simply walks rows 0..n-1. Tests build such CSRs directly to couple two
neighbouring corpora (same order and samples for the shared users), exactly as the
sensitivity proofs do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..corpus.model import Corpus


@dataclass(frozen=True)
class OrderedRows:
    """Users' kept items in processing order (CSR). ``counts`` follow ``items``."""

    indptr: np.ndarray  # int64
    items: np.ndarray  # int32
    counts: np.ndarray  # int32

    @property
    def n_rows(self) -> int:
        return int(self.indptr.shape[0] - 1)


@numba.njit(cache=True, nogil=True)
def _gather_rows(indptr, items, counts, order, keys, max_items, out_indptr, out_items, out_counts):
    for r in range(order.shape[0]):
        u = order[r]
        s = indptr[u]
        e = indptr[u + 1]
        o = out_indptr[r]
        n = e - s
        if max_items <= 0 or n <= max_items:
            for j in range(n):
                out_items[o + j] = items[s + j]
                out_counts[o + j] = counts[s + j]
        else:
            sel = np.argsort(keys[s:e])[:max_items]
            sel.sort()  # keep the row's id order: the kept set, not its order, is what was sampled
            for j in range(max_items):
                out_items[o + j] = items[s + sel[j]]
                out_counts[o + j] = counts[s + sel[j]]


def order_and_sample(corpus: Corpus, rng: np.random.Generator, max_items: int | None,
                     *, shuffle: bool = True) -> OrderedRows:
    """Uniform user order (``rng.permutation``) and uniform Delta0-subsets (smallest of i.i.d. uniform keys).

    ``max_items=None`` keeps every item (GW/GW-KT). ``shuffle=False`` keeps the corpus order and is only
    for order-independent policies (Count, Weighted), where the order cannot affect the output.
    """
    n = corpus.n_users
    order = rng.permutation(n).astype(np.int64) if shuffle else np.arange(n, dtype=np.int64)
    m = 0 if max_items is None else int(max_items)
    row_len = corpus.row_lengths[order]
    kept = row_len if m <= 0 else np.minimum(row_len, m)
    out_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(kept, out=out_indptr[1:])
    if m > 0 and np.any(corpus.row_lengths > m):
        keys = rng.random(corpus.nnz)
    else:
        keys = np.zeros(1, dtype=np.float64)
        m = 0
    out_items = np.empty(int(out_indptr[-1]), dtype=np.int32)
    out_counts = np.empty(int(out_indptr[-1]), dtype=np.int32)
    _gather_rows(corpus.indptr, corpus.items, corpus.counts, order, keys, m, out_indptr, out_items, out_counts)
    return OrderedRows(out_indptr, out_items, out_counts)


def rows_from_lists(rows: list[list[int]], counts: list[list[int]] | None = None) -> OrderedRows:
    """Build OrderedRows from explicit lists (tests, and coupling neighbouring corpora)."""
    lens = np.array([len(r) for r in rows], dtype=np.int64)
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    flat = np.array([x for r in rows for x in r], dtype=np.int32)
    if counts is None:
        c = np.ones(flat.shape[0], dtype=np.int32)
    else:
        c = np.array([x for r in counts for x in r], dtype=np.int32)
    return OrderedRows(indptr, flat, c)
