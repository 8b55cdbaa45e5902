"""Per-user increments whose exact norm is at most 1 (docs/algorithms.md §2, §3), for every update policy.

Weighted Laplace / Gaussian: a user with n kept items adds w(n) to each, w = 1/n (l1 norm n w = 1) or
1/sqrt(n) (l2 norm sqrt(n) w = 1). In floats 1/n and 1/sqrt(n) may round up (n = 5: 5 fl(1/5) = 1 + 2^-54),
and the noise is calibrated for a norm of at most 1. The kernels therefore use
``fl(fl(1/n^power) * UNIT_NORM_SAFETY)`` with UNIT_NORM_SAFETY = 1 - 2^-48 for n >= 2 (n = 1: exactly 1).
Proof: fl(1/n) = (1/n)(1 + a) and fl(sqrt(n)) = sqrt(n)(1 + b), |a|, |b| <= 2^-52 even for a pow/sqrt
off by one ulp; each further rounding adds a factor (1 + c), |c| <= 2^-53; the product of these factors
times (1 - 2^-48) is < 1, so w < 1/n^power and the exact norm is < 1. The tests check every n up to
2,000 with ``fractions.Fraction``. The users' increments are then summed exactly, rounded down to an integer
grid (``mechanisms.dpsu_step``), so the histogram's sensitivity is the increments' bound, not only each one's.

The sequential policies (l1/l2 descent, GW's greedy update) move a user's weights toward Gamma through
float operations. Two kinds of rounding could push the exact norm of a user's increments past 1:

1. Adding a step s to a weight H: fl(H + s) may round up by half an ulp of H, which is relative to H (up to
   Gamma), not to s. For a large Gamma (round 1 of many Policy DP-SIPS rounds at a small ratio, or a tiny
   epsilon: Gamma ~ 1e13 and more) that rounding dwarfs the step, and no budget of the form 1 - c Gamma
   can absorb it (it turns negative). The kernels therefore add with ``add_down``: the sum rounded
   toward -inf, so every weight rises by at most the step it was given, exactly, for any Gamma.
2. Computing the step itself: the gaps g = fl(Gamma - H) (relative error <= 2^-53 of the gap, one float
   subtraction), their norm (a sum of n positive terms and a square root) and the division by it, and
   the l1 bookkeeping (budget -= step * k, raised += budget / k, all of quantities <= 1): each is exact up
   to a relative error of a few ulp per item, of quantities whose exact total is the budget. With
   budget b = 1 - slack(n) and slack(n) = max(2^-32, 16 (n + 2) 2^-53), the exact norm of the steps is
   <= b (1 + (n + 8) 2^-52) < 1 for every n a parameter allows (Delta0 <= 10^6: slack <= 1.8e-9).
   Where a weight is set to Gamma instead (the user's gaps all fit), its increment is the exact gap,
   whose norm the same computation bounds.

Neither bound depends on Gamma, so the exact norm of every user's increments is <= 1 for every Gamma a
calibration can produce, provided the squares of the l2 norm do not overflow: ``check_descent_range``
refuses (``ParameterError``) a Gamma where n Gamma^2 would leave the float range, and
``descent_budget`` asserts that the budget it returns is positive and finite where it computes it.
The tests check the exact increments with ``fractions.Fraction`` for Gamma up to 1e150.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..errors import ParameterError

#: the smallest slack: the budget of a user with few items
DESCENT_BUDGET = 1.0 - 2.0**-32

#: Gamma^2 times the items of a user must stay below this (2^1000) for the l2 norm's sum of squares
_SQUARES_LIMIT = 2.0**1000


def descent_slack(max_items: int) -> float:
    """What a user of at most ``max_items`` updated items leaves unspent to cover the rounding of its steps
    (item 2 of the module docstring): max(2^-32, 16 (n + 2) 2^-53). Independent of Gamma."""
    return max(2.0**-32, 16.0 * (int(max_items) + 2) * 2.0**-53)


def descent_budget(max_items: int) -> float:
    """The budget a sequential update spends per user of at most ``max_items`` updated items: 1 minus
    ``descent_slack``. Asserted positive and finite here, where it is computed."""
    budget = 1.0 - descent_slack(max_items)
    if not (math.isfinite(budget) and 0.5 < budget < 1.0):
        raise ParameterError(
            f"max_items (Delta0) = {max_items} leaves no proven rounding margin for the descent update; "
            "choose Delta0 <= 1,000,000"
        )
    return budget


def check_descent_range(max_items: int, gamma: float, what: str = "epsilon") -> float:
    """Gamma where the descent's proof holds: positive, finite, and with n Gamma^2 inside the float range
    (the l2 norm's sum of squares). Otherwise ``ParameterError`` naming ``what`` to raise."""
    g = float(gamma)
    if not (math.isfinite(g) and g > 0.0 and max(int(max_items), 1) * g * g < _SQUARES_LIMIT):
        raise ParameterError(
            f"the cutoff Gamma = {g:.4g} is outside the range where the descent update is proven "
            f"(positive, with Delta0 * Gamma^2 < 2^1000); raise {what}"
        )
    return g


@numba.njit(cache=True, nogil=True, inline="always")
def add_down(a, b):
    """fl(a + b) rounded toward -inf: a value <= a + b exactly (TwoSum gives the exact rounding error)."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)  # a + b = s + err exactly
    if err < 0.0:
        return np.nextafter(s, -np.inf)
    return s


@numba.njit(cache=True, nogil=True, inline="always")
def add_up(a, b):
    """fl(a + b) rounded toward +inf: a value >= a + b exactly (TwoSum, as ``add_down``)."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    if err > 0.0:
        return np.nextafter(s, np.inf)
    return s


UNIT_NORM_SAFETY = 1.0 - 2.0**-48
