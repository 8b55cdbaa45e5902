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
def sample_in_place(sel, n, uniforms, ui, max_items):
    """Partial Fisher-Yates on sel[:n] (n > max_items): afterwards sel[:max_items] is a uniform
    max_items-subset, driven by the pre-drawn ``uniforms`` from index ``ui`` on (consumed in processing
    order). Uses min(max_items, n - max_items) uniforms: when most items stay, it draws the uniform
    (n - max_items)-subset to drop into sel[max_items:n] instead. Returns the next uniform index.
    Every kernel that samples a row goes through here."""
    if 2 * max_items <= n:
        for j in range(max_items):
            k = j + int(uniforms[ui] * (n - j))
            ui += 1
            if k >= n:  # guard against u * (n - j) rounding up to n - j
                k = n - 1
            t = sel[j]
            sel[j] = sel[k]
            sel[k] = t
    else:
        for j in range(n - 1, max_items - 1, -1):
            k = int(uniforms[ui] * (j + 1))
            ui += 1
            if k > j:
                k = j
            t = sel[j]
            sel[j] = sel[k]
            sel[k] = t
    return ui


@numba.njit(cache=True, nogil=True)
def select_kept(indptr, items, row, keep, max_items, sel, u, rng):
    """Row ``row``'s entries whose item passes ``keep``, into ``sel[:n]``; a row longer than ``max_items`` is
    sampled down to max_items of them (``sample_in_place``, its uniforms drawn from ``rng`` into the scratch
    ``u``; max_items = 0 keeps all). Returns n. The one filter-and-sample step of the kernels that run over
    the items not yet released (``dpsu_step``'s weighted pass, Policy DP-SIPS's rounds)."""
    n = 0
    for j in range(indptr[row], indptr[row + 1]):
        if keep[items[j]]:
            sel[n] = j
            n += 1
    if max_items > 0 and n > max_items:
        for j in range(min(max_items, n - max_items)):
            u[j] = rng.random()
        sample_in_place(sel, n, u, 0, max_items)
        n = max_items
    return n


@numba.njit(cache=True, nogil=True)
def kept_positions(indptr, u, uniforms, ui, max_items, sel):
    """Fill ``sel`` with the CSR positions of user u's kept items; return (how many, next uniform index).

    A row longer than max_items keeps a uniform max_items-subset (``sample_in_place``). ``sel`` is a
    scratch buffer at least as long as the longest row.
    """
    s = indptr[u]
    n = indptr[u + 1] - s
    for j in range(n):
        sel[j] = s + j
    if max_items <= 0 or n <= max_items:
        return n, ui
    return max_items, sample_in_place(sel, n, uniforms, ui, max_items)


@numba.njit(cache=True, nogil=True)
def _gather_rows(indptr, items, counts, order, uniforms, max_items, longest, out_indptr, out_items, out_counts):
    sel = np.empty(longest, dtype=np.int64)
    ui = 0
    for r in range(order.shape[0]):
        n, ui = kept_positions(indptr, order[r], uniforms, ui, max_items, sel)
        o = out_indptr[r]
        for j in range(n):
            out_items[o + j] = items[sel[j]]
            out_counts[o + j] = counts[sel[j]]


@dataclass(frozen=True)
class SamplingPlan:
    """The randomness of steps 1-2, drawn up front: a user order and the uniforms for long rows."""

    order: np.ndarray  # int64 user indices in processing order
    uniforms: np.ndarray  # float64, min(max_items, n - max_items) per over-long row of n items, in processing order
    max_items: int  # 0 = keep every item
    kept_lengths: np.ndarray  # int64 kept items per row, in processing order
    longest: int  # longest row of the corpus (scratch size)


def sampling_plan(
    corpus: Corpus,
    rng: np.random.Generator,
    max_items: int | None,
    *,
    shuffle: bool = True,
) -> SamplingPlan:
    """Uniform user order (``rng.permutation``) and the uniforms for uniform Delta0-subsets.

    ``max_items=None`` keeps every item (GW/GW-KT). ``shuffle=False`` keeps the corpus order and is only
    for order-independent policies (Count, Weighted), where the order cannot affect the output.
    """
    n = corpus.n_users
    order = rng.permutation(n).astype(np.int64) if shuffle else np.arange(n, dtype=np.int64)
    m = 0 if max_items is None else int(max_items)
    row_len = corpus.row_lengths[order]
    n_long = int(np.count_nonzero(row_len > m)) if m > 0 else 0
    # sample_in_place uses min(m, n - m) uniforms for a row of n > m items
    n_draws = int(np.minimum(m, row_len - m)[row_len > m].sum()) if n_long else 0
    uniforms = rng.random(n_draws) if n_draws else np.zeros(0, dtype=np.float64)
    kept = np.minimum(row_len, m) if n_long else row_len
    longest = int(row_len.max()) if n else 0
    return SamplingPlan(order, uniforms, m if n_long else 0, kept.astype(np.int64), max(longest, 1))


def order_and_sample(
    corpus: Corpus, rng: np.random.Generator, max_items: int | None, *, shuffle: bool = True
) -> OrderedRows:
    """Steps 1-2 materialised: the users' kept items as a CSR in processing order (see ``sampling_plan``)."""
    return apply_plan(corpus, sampling_plan(corpus, rng, max_items, shuffle=shuffle))


def apply_plan(corpus: Corpus, plan: SamplingPlan) -> OrderedRows:
    out_indptr = np.zeros(plan.order.shape[0] + 1, dtype=np.int64)
    np.cumsum(plan.kept_lengths, out=out_indptr[1:])
    out_items = np.empty(int(out_indptr[-1]), dtype=np.int32)
    out_counts = np.empty(int(out_indptr[-1]), dtype=np.int32)
    _gather_rows(
        corpus.indptr,
        corpus.items,
        corpus.counts,
        plan.order,
        plan.uniforms,
        plan.max_items,
        plan.longest,
        out_indptr,
        out_items,
        out_counts,
    )
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
