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
restricted corpus is built either. The sum (exact, below) is invariant to the user order, so users are visited in
corpus order (no shuffle); each user's subset is still a uniform sample. Without a filter the sample is
the one ``order_and_sample`` draws from the same generator.

The histogram is summed EXACTLY, in integers on a fixed-point grid (``GRID_BITS``), so that the released
statistic's l1/l2 sensitivity, not only each increment's, is the proof's: a float sum rounds, and the rounding
differs between neighbours (10^6 Weighted Gaussian users with 1-7 items over 20 words gave ||H(D') - H(D)||^2 =
1 + 2.3e-11). Each user's increment w = fl(1/n^power * (1 - 2^-48)) (exact norm < 1, ``privacy.norms``) is
rounded DOWN to a whole number of units 2^-GRID_BITS (its norm only shrinks), and the units add as int64:
exact, and the same in any order (Spark sums its partitions' parts to the same integers). Count (power 0) adds
whole units of 1. Each item's total saturates at ``CAP_UNITS`` = 2^53 units: min(total, cap) moves no
coordinate further than the total does (1-Lipschitz), so the bound still holds, and every value up to 2^53 units
is exact as a float (H = units * 2^-GRID_BITS, a power of two). The cap is 2^53 whole counts for Count and
2^21 = 2,097,152 for the weighted policies (2^21 users with one item each on one item: above any threshold
except at epsilon < 1e-5, where the noise dwarfs it); a running total <= 2^53 plus an increment <= 2^32 never
overflows int64, for any number of users. The grid's loss: at most 2^-32 = 2.3e-10 per increment.
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

#: the fixed-point grid of the weighted policies: each increment is a whole number of 2^-GRID_BITS units
GRID_BITS = 32
#: each item's total saturates here (exact as a float); see the module docstring
CAP_UNITS = 2**53


def grid_bits(power: float) -> int:
    """The grid of an update power: whole counts for Count, 2^-GRID_BITS for the weighted policies."""
    return 0 if power == COUNT else GRID_BITS


def units_to_weights(units: np.ndarray, power: float) -> np.ndarray:
    """The histogram H (float64) from its integer units: exact (units <= 2^53, times a power of two)."""
    return np.ldexp(np.asarray(units, dtype=np.int64).astype(np.float64), -grid_bits(power))


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
def _user_units(n, power, scale):
    """The increment in whole grid units (``scale`` = 2^bits), rounded down: <= the float weight, exactly
    (the product by a power of two and the floor are exact)."""
    return np.int64(math.floor(_user_weight(n, power) * scale))


@numba.njit(cache=True, nogil=True, inline="always")
def _add_units(h, i, w, cap):
    """h[i] + w, saturating at ``cap`` (both <= 2^53: no overflow)."""
    t = h[i] + w
    h[i] = t if t < cap else cap


@numba.njit(cache=True, nogil=True, inline="always")
def _add_row(h, items, sel, n, power, scale, cap):
    if n > 0:
        w = _user_units(n, power, scale)
        for j in range(n):
            _add_units(h, items[sel[j]], w, cap)


@numba.njit(cache=True, nogil=True)
def _sample_and_add(indptr, items, order, uniforms, max_items, longest, n_items, power, scale, cap):
    """Steps 1-2 in one pass over whole rows: for each user in ``order``, sample max_items of the row when
    it is longer (``sample_in_place`` with the plan's uniforms, consumed in processing order) and add
    1/n^power, in grid units, to each kept item's total. The common short row is added straight from the CSR."""
    h = np.zeros(n_items, dtype=np.int64)
    sel = np.empty(longest, dtype=np.int64)
    ui = 0
    for r in range(order.shape[0]):
        s = indptr[order[r]]
        n = indptr[order[r] + 1] - s
        if max_items <= 0 or n <= max_items:
            if n > 0:
                w = _user_units(n, power, scale)
                for j in range(s, s + n):
                    _add_units(h, items[j], w, cap)
            continue
        for j in range(n):
            sel[j] = s + j
        ui = sample_in_place(sel, n, uniforms, ui, max_items)
        _add_row(h, items, sel, max_items, power, scale, cap)
    return h


@numba.njit(cache=True, nogil=True)
def _filter_sample_and_add(indptr, items, keep, max_items, longest, n_items, power, scale, cap, rng):
    """Steps 1-2 over the items passing ``keep``, in ONE pass: each row is filtered into a scratch buffer,
    sampled down to max_items when longer (``sample_in_place``, uniforms drawn from ``rng`` as needed) and
    added. No filtered corpus and no gathered copy is built."""
    h = np.zeros(n_items, dtype=np.int64)
    sel = np.empty(longest, dtype=np.int64)
    u = np.empty(max(min(max_items, longest), 1), dtype=np.float64)  # never more than the longest row needs
    for r in range(indptr.shape[0] - 1):
        n = select_kept(indptr, items, r, keep, max_items, sel, u, rng)
        _add_row(h, items, sel, n, power, scale, cap)
    return h


@numba.njit(cache=True, nogil=True)
def _sum_units(h, ids, units, cap):
    """h[ids[k]] += units[k] for every k, saturating at ``cap`` (parts already <= cap: no overflow)."""
    for k in range(ids.shape[0]):
        _add_units(h, ids[k], units[k], cap)
    return h


def sum_units(ids: np.ndarray, units: np.ndarray, n_items: int, into: np.ndarray | None = None) -> np.ndarray:
    """Partial histograms in grid units summed by item id, exactly (int64, saturating at ``CAP_UNITS``): how the
    Spark engine adds its users' and its partitions' parts, giving the same integers as one local pass."""
    h = np.zeros(n_items, dtype=np.int64) if into is None else into
    return _sum_units(h, np.asarray(ids, dtype=np.int64), np.asarray(units, dtype=np.int64), np.int64(CAP_UNITS))


def _grid(power: float) -> tuple[float, np.int64]:
    return float(2.0 ** grid_bits(power)), np.int64(CAP_UNITS)


def sample_and_add(corpus: Corpus, plan: SamplingPlan, power: float) -> np.ndarray:
    """The weighted histogram H of steps 1-2 under ``plan`` (users' whole rows), summed exactly in grid units."""
    units = _sample_and_add(
        corpus.indptr,
        corpus.items,
        plan.order,
        plan.uniforms,
        plan.max_items,
        plan.longest,
        corpus.n_items,
        power,
        *_grid(power),
    )
    return units_to_weights(units, power)


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
    units = _filter_sample_and_add(
        corpus.indptr,
        corpus.items,
        np.asarray(keep, dtype=np.bool_),
        int(max_items),
        max(longest, 1),
        corpus.n_items,
        float(power),
        *_grid(power),
        rng,
    )
    return units_to_weights(units, power)


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
def weighted_update_units(rows: OrderedRows, n_items: int, power: float) -> np.ndarray:
    """Step 2 alone over rows already ordered and sampled, in grid units (int64; ``units_to_weights`` gives H)."""
    n = rows.n_rows
    longest = int(np.diff(rows.indptr).max()) if n else 1
    order = np.arange(n, dtype=np.int64)
    return _sample_and_add(
        rows.indptr, rows.items, order, np.zeros(0), 0, max(longest, 1), int(n_items), float(power), *_grid(power)
    )


def weighted_update(rows: OrderedRows, n_items: int, power: float) -> np.ndarray:
    """Step 2 alone over rows already ordered and sampled (the coupling of the sensitivity tests)."""
    return units_to_weights(weighted_update_units(rows, n_items, power), power)


def count_update(rows: OrderedRows, n_items: int) -> np.ndarray:
    """Count policy over rows already sampled: +1 on every kept item."""
    return weighted_update(rows, n_items, COUNT)
