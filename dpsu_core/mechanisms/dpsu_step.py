"""One DPSU step (Gopi et al. 2020, Algorithms 1-2 with an order-independent policy), in one place:

1. each user keeps at most Delta0 of their candidate items, a uniform sample without replacement;
2. each kept item of a user with |W| kept items gets 1/|W|^power (power 0: Count, +1 each;
   1: Weighted Laplace, l1 norm 1; 1/2: Weighted Gaussian, l2 norm 1);
3. ``noisy_threshold``: every item with weight > 0 gets independent noise; those above rho are released.

The weighted-Gaussian form (power 1/2, Gaussian noise) is ``weighted_gaussian_step``: Weighted Gaussian,
every level of DPNE and its DPSU baselines, the partition selection of bounded counts and every round of
DP-SIPS call it. Steps 1-2 run as ONE numba pass over the corpus CSR (``_sample_and_add``): no gathered
copy of the sampled rows, and with ``keep`` (an item filter: DPNE's valid k-grams, DP-SIPS's not yet
released items) the filter is applied inside the same pass, so no restricted corpus is built either.
The sum is invariant to the user order, so users are visited in corpus order (no shuffle); each user's
subset is still uniform. The sample is the same as ``order_and_sample`` with the same generator would draw.
"""

from __future__ import annotations

import numba
import numpy as np

from ..corpus.model import Corpus
from .base import noisy_threshold
from .sampling import OrderedRows, SamplingPlan, sample_in_place, sampling_plan

#: the update powers of the order-independent policies
COUNT, WEIGHTED_LAPLACE, WEIGHTED_GAUSSIAN = 0.0, 1.0, 0.5

_NO_FILTER = np.zeros(0, dtype=np.bool_)


@numba.njit(cache=True, nogil=True, inline="always")
def _user_weight(n, power):
    """Each kept item's increment for a user with n kept items: 1/n^power (so the l_(1/power) norm is 1)."""
    if power == 0.0:
        return 1.0
    return 1.0 / float(n) ** power


@numba.njit(cache=True, nogil=True)
def _filtered_lengths(indptr, items, keep):
    """Per user: how many of their items pass the filter ``keep`` (bool per item)."""
    n_rows = indptr.shape[0] - 1
    out = np.zeros(n_rows, dtype=np.int64)
    for r in range(n_rows):
        c = 0
        for j in range(indptr[r], indptr[r + 1]):
            if keep[items[j]]:
                c += 1
        out[r] = c
    return out


@numba.njit(cache=True, nogil=True)
def _sample_and_add(indptr, items, keep, order, uniforms, max_items, longest, n_items, power):
    """Steps 1-2 in one pass: for each user in ``order`` take the items passing ``keep`` (all if ``keep``
    is empty), sample max_items of them when there are more (``sample_in_place``, uniforms consumed in
    processing order) and add 1/n^power to each kept item's weight."""
    h = np.zeros(n_items, dtype=np.float64)
    sel = np.empty(longest, dtype=np.int64)
    filtered = keep.shape[0] > 0
    ui = 0
    for r in range(order.shape[0]):
        s = indptr[order[r]]
        e = indptr[order[r] + 1]
        n = 0
        if filtered:
            for j in range(s, e):
                if keep[items[j]]:
                    sel[n] = j
                    n += 1
        else:
            n = e - s
            if max_items <= 0 or n <= max_items:  # the common short row: no copy of its positions
                if n > 0:
                    w = _user_weight(n, power)
                    for j in range(s, e):
                        h[items[j]] += w
                continue
            for j in range(n):
                sel[j] = s + j
        if max_items > 0 and n > max_items:
            ui = sample_in_place(sel, n, uniforms, ui, max_items)
            n = max_items
        if n > 0:
            w = _user_weight(n, power)
            for j in range(n):
                h[items[sel[j]]] += w
    return h


def filtered_plan(corpus: Corpus, rng: np.random.Generator, max_items: int, keep: np.ndarray | None) -> SamplingPlan:
    """The randomness of steps 1-2 for an order-independent policy over the items where ``keep`` is True."""
    lengths = None if keep is None else _filtered_lengths(corpus.indptr, corpus.items, keep)
    return sampling_plan(corpus, rng, max_items, shuffle=False, row_lengths=lengths)


def sample_and_add(corpus: Corpus, plan: SamplingPlan, power: float, keep: np.ndarray | None = None) -> np.ndarray:
    """The weighted histogram H of steps 1-2 under ``plan`` (from ``filtered_plan`` with the same ``keep``)."""
    return _sample_and_add(
        corpus.indptr,
        corpus.items,
        _NO_FILTER if keep is None else np.asarray(keep, dtype=np.bool_),
        plan.order,
        plan.uniforms,
        plan.max_items,
        plan.longest,
        corpus.n_items,
        float(power),
    )


def weighted_histogram(
    corpus: Corpus, rng: np.random.Generator, max_items: int, power: float, keep: np.ndarray | None = None
) -> np.ndarray:
    """Steps 1-2: sample at most ``max_items`` of each user's items (those in ``keep``), weight 1/|W|^power."""
    return sample_and_add(corpus, filtered_plan(corpus, rng, max_items, keep), power, keep)


def dpsu_step(
    corpus: Corpus,
    rng: np.random.Generator,
    max_items: int,
    power: float,
    noise: str,
    scale: float,
    rho: float,
    keep: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Steps 1-3: (released item ids, the weighted histogram H). H is NOT private: diagnostics only."""
    h = weighted_histogram(corpus, rng, max_items, power, keep)
    return noisy_threshold(h, rng, noise, scale, rho), h


def weighted_gaussian_step(
    corpus: Corpus,
    rng: np.random.Generator,
    max_items: int,
    sigma: float,
    rho: float,
    keep: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted-Gaussian DPSU step over the items where ``keep`` is True: sample <= Delta0 per user,
    +1/sqrt(|W|) each, release u iff H[u] + N(0, sigma^2) > rho. Returns (released ids, H)."""
    return dpsu_step(corpus, rng, max_items, WEIGHTED_GAUSSIAN, "gaussian", sigma, rho, keep)


# --------------------------------------------------------------------------- rows already sampled (tests)
def weighted_update(rows: OrderedRows, n_items: int, power: float) -> np.ndarray:
    """Step 2 alone over rows already ordered and sampled (the coupling of the sensitivity tests)."""
    n = rows.n_rows
    longest = int(np.diff(rows.indptr).max()) if n else 1
    return _sample_and_add(
        rows.indptr,
        rows.items,
        _NO_FILTER,
        np.arange(n, dtype=np.int64),
        np.zeros(0),
        0,
        max(longest, 1),
        int(n_items),
        float(power),
    )


def count_update(rows: OrderedRows, n_items: int) -> np.ndarray:
    """Count policy over rows already sampled: +1 on every kept item."""
    return weighted_update(rows, n_items, COUNT)
