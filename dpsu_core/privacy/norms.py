"""Per-user weights whose exact norm is at most 1 (spec section 3: Weighted Laplace / Weighted Gaussian).

A user with n kept items adds w(n) to each: w = 1/n (l1 norm n w = 1) or w = 1/sqrt(n) (l2 norm
sqrt(n) w = 1). In floats 1/n and 1/sqrt(n) may round up, making the norm 1 + 2e-16; the noise is
calibrated for a norm of at most 1. ``unit_norm_weights`` checks n w <= 1 (or n w^2 <= 1) exactly with
``fractions.Fraction`` for each distinct n and steps w down one ulp at a time until it holds.

The sequential policies (l1/l2 descent, GW's greedy update) spend a budget through float operations:
each of a user's n updated weights (all <= Gamma) is off by at most half an ulp of Gamma, i.e.
2^-53 Gamma, and the budget bookkeeping by a few ulp per item. They therefore spend
``DESCENT_BUDGET`` = 1 - 2^-32 instead of 1: the exact norm of a user's increments stays <= 1 as long
as n Gamma <= 2^20 (about 10^6; e.g. Delta0 = 10^4 items at Gamma = 100). ``descent_budget`` gives the
budget for larger products (GW uses it).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

DESCENT_BUDGET = 1.0 - 2.0**-32


def descent_budget(max_items: int, gamma: float) -> float:
    """Budget for users of at most ``max_items`` updated items with weights <= ``gamma``: the rounding of
    each update (<= 2^-52 gamma, with room for the bookkeeping) is taken off the budget of 1."""
    slack = max(2.0**-32, 4.0 * max_items * max(gamma, 1.0) * 2.0**-52)
    return 1.0 - slack


def _safe_weight(n: int, power: float) -> float:
    w = 1.0 / n if power == 1.0 else 1.0 / math.sqrt(n)
    if power == 1.0:
        ok = lambda x: Fraction(x) * n <= 1  # noqa: E731
    else:
        ok = lambda x: Fraction(x) ** 2 * n <= 1  # noqa: E731
    while not ok(w):
        w = math.nextafter(w, 0.0)
    return w


def unit_norm_weights(lengths: np.ndarray, power: float) -> np.ndarray:
    """Weight per row (float64): 1/n^power rounded so that the row's exact l1 (power 1) or l2 (power 1/2)
    norm is <= 1; 0 for empty rows. One exact check per distinct length."""
    if power not in (1.0, 0.5):
        raise ValueError("power must be 1 (l1) or 0.5 (l2)")
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.shape[0], dtype=np.float64)
    if lengths.size == 0:
        return out
    uniq, inv = np.unique(lengths, return_inverse=True)
    table = np.array([_safe_weight(int(n), power) if n > 0 else 0.0 for n in uniq], dtype=np.float64)
    out[:] = table[inv.reshape(-1)]
    return out
