"""Noise scales and thresholds rho of the set-union mechanisms (spec section 2).

Each function is the closed form of the paper it cites; tests check them against
the spec's reference values and against dp-accounting.
"""

from __future__ import annotations

import math

import numpy as np

from .gaussian import analytic_gaussian_sigma
from .validate import check_delta, check_epsilon, check_max_items


def _one_minus_root(delta: float, t: np.ndarray | float) -> np.ndarray:
    """1 - (1 - delta)^(1/t), without cancellation."""
    return -np.expm1(np.log1p(-delta) / t)


def _upper_quantile_of_root(q: float, t: np.ndarray | float) -> np.ndarray:
    """Phi^-1((1 - q)^(1/t)) = -Phi^-1(1 - (1-q)^(1/t)), accurate when q is tiny."""
    from scipy.special import ndtri  # scipy loads on first use (start-up time)

    return -ndtri(_one_minus_root(q, t))


def laplace_scale(epsilon: float) -> float:
    """lambda = 1/epsilon: every Laplace-family policy has l1-sensitivity 1."""
    return 1.0 / check_epsilon(epsilon)


def gaussian_scale(epsilon: float, delta: float) -> float:
    """sigma for l2-sensitivity 1, spending delta/2 (the other half goes to the threshold)."""
    return analytic_gaussian_sigma(epsilon, check_delta(delta) / 2.0, 1.0)


def rho_count_laplace(epsilon: float, delta: float, max_items: int) -> float:
    """Gopi et al. Thm: rho = 1 + (Delta0/eps) ln(1 / (2 (1 - (1-delta)^(1/Delta0))))."""
    e, d, m = check_epsilon(epsilon), check_delta(delta), check_max_items(max_items)
    return float(1.0 + (m / e) * np.log(1.0 / (2.0 * _one_minus_root(d, np.float64(m)))))


def rho_weighted_laplace(epsilon: float, delta: float, max_items: int) -> float:
    """rho = max_{1<=t<=Delta0} [1/t + (1/eps) ln(1 / (2 (1 - (1-delta)^(1/t))))] (Weighted and Policy Laplace)."""
    e, d, m = check_epsilon(epsilon), check_delta(delta), check_max_items(max_items)
    t = np.arange(1, m + 1, dtype=np.float64)
    return float(np.max(1.0 / t + (1.0 / e) * np.log(1.0 / (2.0 * _one_minus_root(d, t)))))


def rho_count_gaussian(epsilon: float, delta: float, max_items: int) -> float:
    """rho = 1 + sigma_count Phi^-1((1 - delta/2)^(1/Delta0)), sigma_count = sqrt(Delta0) sigma."""
    d, m = check_delta(delta), check_max_items(max_items)
    sigma_count = math.sqrt(m) * gaussian_scale(epsilon, d)
    return float(1.0 + sigma_count * _upper_quantile_of_root(d / 2.0, np.float64(m)))


def rho_weighted_gaussian_sigma(sigma: float, delta: float, max_items: int) -> float:
    """rho = max_{1<=t<=Delta0} [1/sqrt(t) + sigma Phi^-1((1 - delta/2)^(1/t))] for a given sigma.

    Split out so DPNE can reuse it with its level-1 sigma_1.
    """
    d, m = check_delta(delta), check_max_items(max_items)
    t = np.arange(1, m + 1, dtype=np.float64)
    return float(np.max(1.0 / np.sqrt(t) + sigma * _upper_quantile_of_root(d / 2.0, t)))


def rho_weighted_gaussian(epsilon: float, delta: float, max_items: int) -> float:
    """Weighted and Policy Gaussian threshold with sigma from (epsilon, delta/2)."""
    return rho_weighted_gaussian_sigma(gaussian_scale(epsilon, delta), delta, max_items)


def rho_greedy(epsilon: float, delta: float, max_users: int = 1) -> float:
    """GW / GW-KT threshold, corrected: rho = ln((e^eps + N - 1) / (2 delta)) / eps, N = ``max_users``.

    Carvalho et al. (2022) publish rho = 1 - ln(2 delta)/eps (N = 1), from their Lemma 2: "an item
    that only one of two neighbouring corpora can release must be added by the differing user u,
    who reaches at most one such item". The second half holds (Gamma >= 1 exhausts u's budget on
    the first item at weight 0), the first does not: once u fills items that later users also hold,
    those users skip them and spend their leftover budget on their own items that had weight 0
    without u. So T = supp H(D+u) \\ supp H(D) can hold up to one item per user, none of them u's,
    with weights summing to at most 1 (the l1 bound, Lemma 1, still holds). A release of some item
    of T then has probability <= sum_j (1/2) e^{-eps (rho - w_j)} <= (1/2) e^{-eps rho} (e^eps + N - 1)
    (convexity: the sum is largest with one weight at 1 and the rest near 0), which is <= delta for
    this rho. N must be a PUBLIC upper bound on the number of users; the mechanism refuses a corpus
    with more users. The regression test ``test_greedy.py::test_published_rho_fails_on_cascades``
    builds neighbouring corpora where the published rho gives more than delta.
    """
    e, d = check_epsilon(epsilon), check_delta(delta)
    n = check_max_items(max_users, "max_users (public bound on the number of users)")
    # ln(e^eps + N - 1) = eps + log1p((N - 1) e^-eps), stable for large eps and N
    return (e + math.log1p((n - 1) * math.exp(-e)) - math.log(2.0 * d)) / e
