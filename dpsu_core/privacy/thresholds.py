"""Noise scales and thresholds rho of the set-union mechanisms (spec section 2).

Each function is the closed form of the paper it cites; tests check them against
the spec's reference values and against dp-accounting.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from .gaussian import analytic_gaussian_sigma
from .validate import check_delta, check_epsilon, check_max_items


def _one_minus_root(delta: float, t: np.ndarray) -> np.ndarray:
    """1 - (1 - delta)^(1/t), without cancellation."""
    return -np.expm1(np.log1p(-delta) / t)


def _upper_quantile_of_root(q: float, t: np.ndarray) -> np.ndarray:
    """Phi^-1((1 - q)^(1/t)) = -Phi^-1(1 - (1-q)^(1/t)), accurate when q is tiny."""
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


def rho_greedy(epsilon: float, delta: float) -> float:
    """GW / GW-KT (Carvalho et al.): rho = 1 - (1/eps) ln(2 delta)."""
    e, d = check_epsilon(epsilon), check_delta(delta)
    return 1.0 - math.log(2.0 * d) / e
