"""Numba kernel behind ``model.validate_csr`` (imported lazily: only for rows not in sorted order)."""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def first_repeated_row(indptr, items, n_items):
    """First row holding an item twice, or -1: one pass, stamping each item with the row that last held it."""
    stamp = np.full(n_items, -1, dtype=np.int64)
    for r in range(indptr.shape[0] - 1):
        for j in range(indptr[r], indptr[r + 1]):
            u = items[j]
            if stamp[u] == r:
                return r
            stamp[u] = r
    return -1
