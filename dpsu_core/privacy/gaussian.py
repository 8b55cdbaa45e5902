"""The analytic Gaussian mechanism (Balle & Wang 2018), evaluated in log space."""

from __future__ import annotations

import math

import numpy as np

from .validate import check_delta, check_epsilon


def _log_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    from scipy.special import log_ndtr  # scipy loads on first use (start-up time)

    """log of  Phi(s/(2 sigma) - eps sigma/s) - e^eps Phi(-s/(2 sigma) - eps sigma/s)."""
    a = sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    la = float(log_ndtr(a))
    lb = float(log_ndtr(b)) + epsilon
    if lb >= la:  # numerically zero privacy loss
        return -math.inf
    return la + math.log1p(-math.exp(lb - la))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact delta of the Gaussian mechanism with noise sigma at epsilon (tight, Balle & Wang Thm 8)."""
    if sigma <= 0:
        raise ValueError("sigma must be > 0")
    return math.exp(_log_delta(sigma, epsilon, sensitivity))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest sigma for which the Gaussian mechanism with this l2-sensitivity is (epsilon, delta)-DP.

    The privacy profile delta(sigma) is strictly decreasing in sigma, so a bracketing
    root finder on log delta(sigma) - log(delta) finds the unique crossing.
    """
    from scipy.optimize import brentq  # scipy loads on first use (start-up time)

    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    target = math.log(delta)

    def f(log_sigma: float) -> float:
        ld = _log_delta(math.exp(log_sigma), epsilon, 1.0)
        if ld == -math.inf:
            return -1e300
        return ld - target

    lo, hi = -10.0, 1.0
    while f(lo) < 0:
        lo -= 5.0
    while f(hi) > 0:
        hi += 2.0
    log_sigma = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    # brentq may stop a hair on the unsafe side of the root: step up until the constraint holds exactly.
    sigma = math.exp(log_sigma)
    while _log_delta(sigma, epsilon, 1.0) > target:
        sigma = math.nextafter(sigma, math.inf)
    return sigma * sensitivity
