"""Numba kernels behind ``model.validate_csr`` (imported when a Corpus is checked, not with the model)."""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def csr_summary(indptr, items, counts):  # pragma: no cover - compiled
    """One pass over a CSR whose ``indptr`` starts at 0, never decreases and ends at len(items) > 0, with
    len(counts) == len(items): (smallest item, largest item, smallest count, every row strictly increasing)."""
    lo = hi = np.int64(items[0])
    c_lo = np.int64(counts[0])
    for j in range(items.shape[0]):
        v = np.int64(items[j])
        if v < lo:
            lo = v
        if v > hi:
            hi = v
        if counts[j] < c_lo:
            c_lo = np.int64(counts[j])
    increasing = True
    for r in range(indptr.shape[0] - 1):
        for j in range(indptr[r] + 1, indptr[r + 1]):
            if items[j] <= items[j - 1]:
                increasing = False
                break
        if not increasing:
            break
    return lo, hi, c_lo, increasing


@numba.njit(cache=True, nogil=True)
def first_repeated_row(indptr, items, n_items):  # pragma: no cover - compiled
    """First row holding an item twice, or -1: one pass, stamping each item with the row that last held it."""
    stamp = np.full(n_items, -1, dtype=np.int64)
    for r in range(indptr.shape[0] - 1):
        for j in range(indptr[r], indptr[r + 1]):
            u = items[j]
            if stamp[u] == r:
                return r
            stamp[u] = r
    return -1
