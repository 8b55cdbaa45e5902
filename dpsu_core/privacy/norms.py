"""Per-user increments whose exact norm is at most 1 (docs/algorithms.md §2, §3), for every update policy.

Weighted Laplace / Gaussian: a user with n kept items adds w(n) to each, w = 1/n (l1 norm n w = 1) or
1/sqrt(n) (l2 norm sqrt(n) w = 1). In floats 1/n and 1/sqrt(n) may round up (n = 5: 5 fl(1/5) = 1 + 2^-54),
and the noise is calibrated for a norm of at most 1. The kernels therefore use
``fl(fl(1/n^power) * UNIT_NORM_SAFETY)`` with UNIT_NORM_SAFETY = 1 - 2^-48 for n >= 2 (n = 1: exactly 1).
Proof: fl(1/n) = (1/n)(1 + a) and fl(sqrt(n)) = sqrt(n)(1 + b), |a|, |b| <= 2^-52 even for a pow/sqrt
off by one ulp; each further rounding adds a factor (1 + c), |c| <= 2^-53; the product of these factors
times (1 - 2^-48) is < 1, so w < 1/n^power and the exact norm is < 1. The tests check every n up to
2,000 with ``fractions.Fraction``. (Rounding when the users are summed into one float histogram is not
part of a user's increment; any float sum does it.)

The sequential policies (l1/l2 descent, GW's greedy update) spend a budget through float operations:
each of a user's n updated weights (all <= Gamma) is off by at most half an ulp of Gamma, i.e.
2^-53 Gamma, and the budget bookkeeping by a few ulp per item. They therefore spend
``DESCENT_BUDGET`` = 1 - 2^-32 instead of 1: the exact norm of a user's increments stays <= 1 as long
as n Gamma <= 2^20 (about 10^6; e.g. Delta0 = 10^4 items at Gamma = 100). ``descent_budget`` gives the
budget for larger products: the descent kernels and GW take their budget from it, so the bound holds
for every Delta0 and Gamma the parameters allow.
"""

from __future__ import annotations

DESCENT_BUDGET = 1.0 - 2.0**-32


def descent_budget(max_items: int, gamma: float) -> float:
    """Budget for users of at most ``max_items`` updated items with weights <= ``gamma``: the rounding of
    each update (<= 2^-52 gamma, with room for the bookkeeping) is taken off the budget of 1."""
    slack = max(2.0**-32, 4.0 * max_items * max(gamma, 1.0) * 2.0**-52)
    return 1.0 - slack


UNIT_NORM_SAFETY = 1.0 - 2.0**-48
