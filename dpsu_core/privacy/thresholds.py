"""Noise scales and thresholds rho of the set-union mechanisms (docs/algorithms.md §2), rounded toward safety.

Each function is the closed form of the paper it cites; tests check them against the reference
values, against dp-accounting, and in exact arithmetic (mpmath) over a grid of (epsilon, delta).

Rounding (every value errs on the private side):
* noise scales: Laplace ``nextafter(sensitivity/epsilon, inf)`` (one correctly rounded division, then
  one ulp up, is >= the exact quotient); Gaussian sigma checked exactly (``gaussian.analytic_gaussian_sigma``);
  the count l2-sensitivity sqrt(Delta0) is rounded up (``sqrt_up``).
* thresholds rho: computed in floats, then raised by the relative margin ``RHO_MARGIN`` and one ulp.
  Each rho is a max over t of a few correctly rounded or faithfully rounded operations (log1p, expm1,
  log, one product, one sum) and the normal quantile (``normal.ndtri``, AS241 in numpy, within 1e-14
  relative: ``test_normal``): their float error is below 100 ulp of the result (relative < 3e-14), and every rho is >= ln(5)/epsilon (Laplace) or >= 1.6 sigma (Gaussian) for delta <= 0.1,
  so the margin 1e-12 covers it with room to spare. Each rho is also computed with the *rounded* noise
  scale, so a larger scale cannot make the threshold event likelier than its share of delta.
* cutoffs Gamma = rho + alpha * scale: rounded up (``cutoff``).
* the max over t = 1..Delta0 runs in fixed-size blocks: O(1) memory for any Delta0.

Which delta: a function taking ``(epsilon, delta)`` takes the release's whole budget and splits it itself (the
Gaussian ones: delta/2 to the noise, delta/2 to the threshold); ``rho_weighted_gaussian_sigma`` takes a noise
scale and the threshold's own ``delta_threshold``, and splits nothing.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..errors import ParameterError
from .gaussian import analytic_gaussian_sigma, sqrt_up
from .normal import ndtri
from .validate import check_alpha, check_delta, check_epsilon, check_max_items

RHO_MARGIN = 1e-12  # relative; see the module docstring
_BLOCK = 1 << 14  # t values evaluated at once in the max over t


def round_up(x: float, rel: float = RHO_MARGIN) -> float:
    """x raised by the margin ``rel`` and one more ulp: always toward a larger value (a larger threshold is more
    private), whatever the sign of x. A positive x is raised by ``rel`` of itself. A negative x (delta > 0.5, where
    the log of the tail term turns negative) is a sum of a term 1/t^p <= 1 and a term of the other sign, so each
    term is at most |x| + 1 in size and the float error is relative to that, not to x (which may cancel to near
    0): it is raised by ``rel`` of |x| + 1."""
    if x >= 0.0:
        return math.nextafter(x * (1.0 + rel), math.inf)
    return math.nextafter(x + rel * (1.0 - x), math.inf)


def _one_minus_root(delta: float, t: np.ndarray | float) -> np.ndarray:
    """1 - (1 - delta)^(1/t), without cancellation; asserted a normal float (below the smallest normal float
    its rounding is no longer relative, and the threshold's margin no longer covers it)."""
    q = -np.expm1(np.log1p(-delta) / t)
    if not float(np.min(q)) >= sys.float_info.min:
        raise ParameterError(
            f"delta share {delta:.3g} is too small for Delta0 = {int(np.max(t)):,}: the threshold's tail "
            "probability leaves the float range; raise delta or lower Delta0"
        )
    return q


def _upper_quantile_of_root(q: float, t: np.ndarray | float) -> np.ndarray:
    """Phi^-1((1 - q)^(1/t)) = -Phi^-1(1 - (1-q)^(1/t)), accurate when q is tiny."""
    return -ndtri(_one_minus_root(q, t))


def _max_over_t(f, max_items: int) -> float:
    """max_{t = 1..max_items} f(t) for a vectorised f, in blocks of at most ``_BLOCK`` values of t."""
    best = -math.inf
    for start in range(1, max_items + 1, _BLOCK):
        t = np.arange(start, min(start + _BLOCK, max_items + 1), dtype=np.float64)
        best = max(best, float(np.max(f(t))))
    return best


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """lambda = sensitivity/epsilon rounded up: every Laplace-family policy has l1-sensitivity 1 (Count: Delta0)."""
    return math.nextafter(float(sensitivity) / check_epsilon(epsilon), math.inf)


def gaussian_scale(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """sigma for this l2-sensitivity, spending delta/2 (the other half goes to the threshold)."""
    return analytic_gaussian_sigma(epsilon, check_delta(delta) / 2.0, sensitivity)


def count_l2_sensitivity(max_items: int) -> float:
    """sqrt(Delta0) rounded up: the l2-sensitivity of the Count policy."""
    return sqrt_up(check_max_items(max_items))


def cutoff(rho: float, alpha: float, scale: float) -> float:
    """Gamma = rho + alpha * scale, rounded up."""
    return math.nextafter(rho + check_alpha(alpha) * scale, math.inf)


def rho_count_laplace(epsilon: float, delta: float, max_items: int) -> float:
    """Gopi et al. Thm: rho = 1 + lambda ln(1 / (2 (1 - (1-delta)^(1/Delta0)))), lambda = Delta0/eps (rounded up)."""
    d, m = check_delta(delta), check_max_items(max_items)
    lam = laplace_scale(epsilon, m)
    return round_up(float(1.0 + lam * np.log(1.0 / (2.0 * _one_minus_root(d, np.float64(m))))))


def rho_weighted_laplace(epsilon: float, delta: float, max_items: int) -> float:
    """rho = max_{1<=t<=Delta0} [1/t + lambda ln(1 / (2 (1 - (1-delta)^(1/t))))] (Weighted and Policy Laplace)."""
    d, m = check_delta(delta), check_max_items(max_items)
    lam = laplace_scale(epsilon)
    return round_up(_max_over_t(lambda t: 1.0 / t + lam * np.log(1.0 / (2.0 * _one_minus_root(d, t))), m))


def rho_count_gaussian(epsilon: float, delta: float, max_items: int) -> float:
    """rho = 1 + sigma_count Phi^-1((1 - delta/2)^(1/Delta0)), sigma_count = sigma for l2-sensitivity sqrt(Delta0)."""
    d, m = check_delta(delta), check_max_items(max_items)
    sigma_count = gaussian_scale(epsilon, d, count_l2_sensitivity(m))
    return round_up(float(1.0 + sigma_count * _upper_quantile_of_root(d / 2.0, np.float64(m))))


def rho_weighted_gaussian_sigma(sigma: float, max_items: int, *, delta_threshold: float) -> float:
    """rho = max_{1<=t<=Delta0} [1/sqrt(t) + sigma Phi^-1((1 - delta_threshold)^(1/t))] for a given sigma.

    ``delta_threshold`` is the threshold's OWN delta, taken as given (nothing is halved here): the bound on the
    probability that an item only the extra user holds crosses rho (docs/algorithms.md §2). Weighted and Policy
    Gaussian pass delta/2; DPNE's level 1 passes delta/2 with its sigma_1; DP-SIPS passes each round's delta_i.
    """
    d, m = check_delta(delta_threshold), check_max_items(max_items)
    return round_up(_max_over_t(lambda t: 1.0 / np.sqrt(t) + sigma * _upper_quantile_of_root(d, t), m))


def rho_weighted_gaussian(epsilon: float, delta: float, max_items: int) -> float:
    """Weighted and Policy Gaussian threshold: sigma from (epsilon, delta/2), the other delta/2 to the threshold."""
    d = check_delta(delta)
    return rho_weighted_gaussian_sigma(gaussian_scale(epsilon, d), max_items, delta_threshold=d / 2.0)


def rho_greedy(epsilon: float, delta: float, max_items: int) -> float:
    """GW / GW-KT threshold in the capped form (docs/algorithms.md §4): rho = lambda ln((e^eps + Delta0 - 1) / (2 delta)).

    lambda = 1/eps rounded up (``laplace_scale``). Each user's greedy update runs on its first Delta0
    items in its own order and every such item is a candidate (weight 0 included). Between neighbours
    D and D+u the candidates that only D+u has are u's own, at most Delta0 of them, touched by u alone
    (total weight <= 1), so P[one of them is released] <= sum_j (1/2) e^{-(rho - w_j)/lambda}
    <= (1/2) e^{-rho/lambda} (e^{1/lambda} + Delta0 - 1) <= delta (convexity: the sum is largest with
    one weight at 1 and the others at 0; e^{1/lambda} <= e^eps). No bound on the number of users.
    """
    e, d, m = check_epsilon(epsilon), check_delta(delta), check_max_items(max_items)
    lam = laplace_scale(e)
    # ln(e^eps + Delta0 - 1) = eps + log1p((Delta0 - 1) e^-eps), stable for large eps and Delta0
    return round_up(lam * (e + math.log1p((m - 1) * math.exp(-e)) - math.log(2.0 * d)))


def rho_greedy_published(epsilon: float, delta: float) -> float:
    """Carvalho et al.'s published GW threshold rho = 1 - ln(2 delta)/eps: NOT proven (docs/algorithms.md §4).

    Its Lemma 2 ("only the added user can lift an item from weight 0") fails under the greedy update:
    other users' leftover budget spills onto items nobody touched without u. Shown for reference only;
    no mechanism uses it. ``test_greedy.py`` builds neighbours where it gives more than delta.
    """
    e, d = check_epsilon(epsilon), check_delta(delta)
    return 1.0 - math.log(2.0 * d) / e
