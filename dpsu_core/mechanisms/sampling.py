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
def _gather_rows(indptr, items, counts, order, uniforms, max_items, out_indptr, out_items, out_counts):
    """Copy each user's row in processing order; a row longer than max_items keeps a uniform
    max_items-subset, chosen by a partial Fisher-Yates shuffle driven by pre-drawn uniforms."""
    pos = np.empty(0, dtype=np.int64)
    ui = 0
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
            if pos.shape[0] < n:
                pos = np.empty(n, dtype=np.int64)
            for j in range(n):
                pos[j] = j
            for j in range(max_items):
                k = j + int(uniforms[ui] * (n - j))
                ui += 1
                if k >= n:  # guard against u rounding to 1.0
                    k = n - 1
                t = pos[j]
                pos[j] = pos[k]
                pos[k] = t
            # The kept set is what was sampled; its order inside the row carries no meaning
            # (every update policy is invariant to the order of one user's items).
            for j in range(max_items):
                out_items[o + j] = items[s + pos[j]]
                out_counts[o + j] = counts[s + pos[j]]


def order_and_sample(corpus: Corpus, rng: np.random.Generator, max_items: int | None,
                     *, shuffle: bool = True) -> OrderedRows:
    """Uniform user order (``rng.permutation``) and uniform Delta0-subsets (partial Fisher-Yates shuffle).

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
    n_long = int(np.count_nonzero(row_len > m)) if m > 0 else 0
    # One uniform per sampled slot of each over-long row (partial Fisher-Yates), drawn in processing order.
    uniforms = rng.random(n_long * m) if n_long else np.zeros(0, dtype=np.float64)
    if not n_long:
        m = 0
    out_items = np.empty(int(out_indptr[-1]), dtype=np.int32)
    out_counts = np.empty(int(out_indptr[-1]), dtype=np.int32)
    _gather_rows(corpus.indptr, corpus.items, corpus.counts, order, uniforms, m, out_indptr, out_items, out_counts)
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
