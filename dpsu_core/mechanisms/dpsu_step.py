"""One DPSU step (Gopi et al. 2020, Algorithms 1-2 with an order-independent policy), in one place:

1. each user keeps at most Delta0 of their candidate items, a uniform sample without replacement;
2. each kept item of a user with |W| kept items gets 1/|W|^power (power 0: Count, +1 each;
   1: Weighted Laplace, l1 norm 1; 1/2: Weighted Gaussian, l2 norm 1);
3. ``noisy_threshold``: every item with weight > 0 gets independent noise; those above rho are released.

The weighted-Gaussian form (power 1/2, Gaussian noise) is ``weighted_gaussian_step``: Weighted Gaussian,
every level of DPNE and its DPSU baselines, the partition selection of bounded counts and every round of
DP-SIPS call it. Steps 1-2 run as ONE numba pass over the corpus CSR: no gathered copy of the sampled
rows, and with ``keep`` (an item filter: DPNE's valid k-grams, DP-SIPS's not yet released items) the
filter, the sample and the update happen per row in the same pass (``_filter_sample_and_add``), so no
restricted corpus is built either. The sum is invariant to the user order, so users are visited in
corpus order (no shuffle); each user's subset is still a uniform sample. Without a filter the sample is
the one ``order_and_sample`` draws from the same generator.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..corpus.model import Corpus
from ..privacy.norms import UNIT_NORM_SAFETY
from .base import noisy_threshold
from .sampling import OrderedRows, SamplingPlan, sample_in_place, sampling_plan, select_kept
from .seam import EngineCorpus, RowsElsewhere, rows_here

#: the update powers of the order-independent policies
COUNT, WEIGHTED_LAPLACE, WEIGHTED_GAUSSIAN = 0.0, 1.0, 0.5


@numba.njit(cache=True, nogil=True, inline="always")
def _user_weight(n, power):
    """Each kept item's increment for a user with n kept items: 1/n^power, a hair below it so that the exact
    l_(1/power) norm is <= 1 (``privacy.norms.UNIT_NORM_SAFETY``, proof there)."""
    if power == 0.0 or n == 1:
        return 1.0
    if power == 0.5:
        return (1.0 / math.sqrt(n)) * UNIT_NORM_SAFETY
    return (1.0 / float(n) ** power) * UNIT_NORM_SAFETY


@numba.njit(cache=True, nogil=True, inline="always")
def _add_row(h, items, sel, n, power):
    if n > 0:
        w = _user_weight(n, power)
        for j in range(n):
            h[items[sel[j]]] += w


@numba.njit(cache=True, nogil=True)
def _sample_and_add(indptr, items, order, uniforms, max_items, longest, n_items, power):
    """Steps 1-2 in one pass over whole rows: for each user in ``order``, sample max_items of the row when
    it is longer (``sample_in_place`` with the plan's uniforms, consumed in processing order) and add
    1/n^power to each kept item's weight. The common short row is added straight from the CSR."""
    h = np.zeros(n_items, dtype=np.float64)
    sel = np.empty(longest, dtype=np.int64)
    ui = 0
    for r in range(order.shape[0]):
        s = indptr[order[r]]
        n = indptr[order[r] + 1] - s
        if max_items <= 0 or n <= max_items:
            if n > 0:
                w = _user_weight(n, power)
                for j in range(s, s + n):
                    h[items[j]] += w
            continue
        for j in range(n):
            sel[j] = s + j
        ui = sample_in_place(sel, n, uniforms, ui, max_items)
        _add_row(h, items, sel, max_items, power)
    return h


@numba.njit(cache=True, nogil=True)
def _filter_sample_and_add(indptr, items, keep, max_items, longest, n_items, power, rng):
    """Steps 1-2 over the items passing ``keep``, in ONE pass: each row is filtered into a scratch buffer,
    sampled down to max_items when longer (``sample_in_place``, uniforms drawn from ``rng`` as needed) and
    added. No filtered corpus and no gathered copy is built."""
    h = np.zeros(n_items, dtype=np.float64)
    sel = np.empty(longest, dtype=np.int64)
    u = np.empty(max(min(max_items, longest), 1), dtype=np.float64)  # never more than the longest row needs
    for r in range(indptr.shape[0] - 1):
        n = select_kept(indptr, items, r, keep, max_items, sel, u, rng)
        _add_row(h, items, sel, n, power)
    return h


def sample_and_add(corpus: Corpus, plan: SamplingPlan, power: float) -> np.ndarray:
    """The weighted histogram H of steps 1-2 under ``plan`` (users' whole rows)."""
    return _sample_and_add(
        corpus.indptr, corpus.items, plan.order, plan.uniforms, plan.max_items, plan.longest, corpus.n_items, power
    )


def weighted_histogram(
    corpus: EngineCorpus, rng: np.random.Generator, max_items: int, power: float, keep: np.ndarray | None = None
) -> np.ndarray:
    """Steps 1-2: sample at most ``max_items`` of each user's items (only those where ``keep`` is True, if
    given), weight 1/|W|^power. Users in corpus order: the sum does not depend on it."""
    if not isinstance(corpus, Corpus):  # the engine seam (``seam``): steps 1-2 where the rows are
        if isinstance(corpus, RowsElsewhere):
            return corpus.weighted_histogram(max_items, power, keep)
        corpus = rows_here(corpus, "the DPSU step")
    if keep is None:
        return sample_and_add(corpus, sampling_plan(corpus, rng, max_items, shuffle=False), float(power))
    longest = int(corpus.row_lengths.max()) if corpus.n_users else 1
    return _filter_sample_and_add(
        corpus.indptr,
        corpus.items,
        np.asarray(keep, dtype=np.bool_),
        int(max_items),
        max(longest, 1),
        corpus.n_items,
        float(power),
        rng,
    )


def dpsu_step(
    corpus: EngineCorpus,
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
    corpus: EngineCorpus,
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
    order = np.arange(n, dtype=np.int64)
    return _sample_and_add(rows.indptr, rows.items, order, np.zeros(0), 0, max(longest, 1), int(n_items), float(power))


def count_update(rows: OrderedRows, n_items: int) -> np.ndarray:
    """Count policy over rows already sampled: +1 on every kept item."""
    return weighted_update(rows, n_items, COUNT)
