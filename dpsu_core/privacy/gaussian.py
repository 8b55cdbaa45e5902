"""The analytic Gaussian mechanism (Balle & Wang 2018): a fast float search, then an exact check.

The float search works in log space (``log_ndtr``) and lands within a few ulp of the root. Floating
point alone cannot say on which side of the root it landed, so ``analytic_gaussian_sigma`` then
evaluates delta(sigma) with mpmath at 60 significant digits and raises sigma (by 1 ulp, 2 ulp, 4 ulp,
...) until that exact evaluation is <= the target delta. The returned sigma therefore satisfies the
privacy constraint in exact arithmetic, not just in floating point.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from .calcache import MINIMAL_REL, kept
from .validate import check_delta, check_epsilon

MP_DIGITS = 60  # precision of the exact check (the two terms of delta(sigma) cancel to at most ~20 digits)


def _log_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """log of  Phi(s/(2 sigma) - eps sigma/s) - e^eps Phi(-s/(2 sigma) - eps sigma/s), in floats."""
    from scipy.special import log_ndtr

    a = sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    la = float(log_ndtr(a))
    lb = float(log_ndtr(b)) + epsilon
    if lb >= la:  # numerically zero privacy loss
        return -math.inf
    return la + math.log1p(-math.exp(lb - la))


def gaussian_delta_exact(sigma: float, epsilon: float, sensitivity: float = 1.0):
    """delta(sigma) of the Gaussian mechanism at epsilon, evaluated with mpmath at 60 digits (an ``mpf``).

    ``sigma``, ``epsilon`` and ``sensitivity`` are taken as the exact values of the floats given.
    """
    import mpmath as mp

    with mp.workdps(MP_DIGITS):
        r = mp.mpf(sigma) / mp.mpf(sensitivity)
        e = mp.mpf(epsilon)
        half = 1 / (2 * r)
        return +(mp.ncdf(half - e * r) - mp.exp(e) * mp.ncdf(-half - e * r))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact delta of the Gaussian mechanism with noise sigma at epsilon (tight, Balle & Wang Thm 8), as a float."""
    if sigma <= 0:
        raise ValueError("sigma must be > 0")
    return math.exp(_log_delta(sigma, epsilon, sensitivity))


def raise_until(x: float, ok) -> float:
    """The first of x, x + 1 ulp, x + 2 ulp, x + 4 ulp, ... (doubling steps) for which ``ok`` holds."""
    if ok(x):
        return x
    step = math.ulp(x)
    while True:
        y = x + step
        if ok(y):
            return y
        step *= 2.0


def lower_until(x: float, ok) -> float:
    """The first of x, x - 1 ulp, x - 2 ulp, x - 4 ulp, ... (x > 0, never below x/2 steps) for which ``ok`` holds."""
    if ok(x):
        return x
    step = math.ulp(x)
    while True:
        y = x - step
        if y <= 0.0:
            raise ArithmeticError("no positive value satisfies the constraint")
        if ok(y):
            return y
        step *= 2.0


def round_up_composition(sigmas: np.ndarray, sigma: float) -> np.ndarray:
    """Noise scales sigma_k raised by whole ulps until sum_k 1/sigma_k^2 <= 1/sigma^2 holds in exact arithmetic:
    Gaussian mechanisms that compose to at most the budget that ``sigma`` was calibrated for, whatever the float
    rounding of the shares (DPNE's levels, DP-SIPS's rounds)."""
    sig = np.asarray(sigmas, dtype=np.float64)
    target = 1 / Fraction(sigma) ** 2
    while sum(1 / Fraction(float(s)) ** 2 for s in sig) > target:
        sig = np.nextafter(sig, np.inf)
    return sig


def share_sigmas(sigma: float, fractions: np.ndarray) -> np.ndarray:
    """Noise scales of Gaussian mechanisms that split the budget ``sigma`` was calibrated for into ``fractions``
    (sum 1) of mu^2 = 1/sigma^2: each sigma_k >= sigma / sqrt(f_k) exactly (a whole ulp up where the float fell
    short), then ``round_up_composition`` (DP-SIPS's and Policy DP-SIPS's rounds)."""
    target = Fraction(sigma) ** 2
    sig = [
        raise_until(sigma / math.sqrt(fk), lambda s, fk=fk: Fraction(s) ** 2 * Fraction(fk) >= target)
        for fk in np.asarray(fractions, dtype=np.float64).tolist()
    ]
    return round_up_composition(np.asarray(sig, dtype=np.float64), sigma)


def round_down_shares(total: float, fractions: np.ndarray) -> np.ndarray:
    """``fractions * total`` lowered by whole ulps until the parts sum to at most ``total`` in exact arithmetic
    (a delta split into shares never spends more than the delta it splits)."""
    parts = np.asarray(fractions, dtype=np.float64) * total
    target = Fraction(total)
    while sum(Fraction(float(x)) for x in parts) > target:
        parts = np.nextafter(parts, 0.0)
    return parts


def _float_sigma_unit(epsilon: float, delta: float) -> float:
    """The float root of log delta(sigma) = log(delta) for l2-sensitivity 1 (bracketing root finder)."""
    from scipy.optimize import brentq

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
    log_sigma = brentq(f, lo, hi, xtol=1e-15, rtol=4 * 2.0**-52, maxiter=500)
    return math.exp(log_sigma)


@functools.lru_cache(maxsize=4096)
def _safe_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    return gaussian_sigma(epsilon, delta, sensitivity, lambda: _search_sigma(epsilon, delta, sensitivity))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float, search: Callable[[], float]) -> float:
    """The analytic Gaussian's sigma: kept on disk (``calcache``), or ``search()`` (the scipy + mpmath search)
    then kept.

    A kept sigma is returned only when delta(sigma) <= delta holds in 60-digit arithmetic (the search's
    own final check, so the value is exactly what the search gives) and it is the smallest such sigma
    to a relative 2^-40 (``calcache.MINIMAL_REL``)."""
    import mpmath as mp

    target = mp.mpf(delta)  # the exact value of the float delta

    def holds(sigma: float) -> bool:
        if not (sigma > 0.0 and sigma < float("inf")):
            return False
        try:
            private = gaussian_delta_exact(sigma, epsilon, sensitivity) <= target
            return private and gaussian_delta_exact(sigma * (1.0 - MINIMAL_REL), epsilon, sensitivity) > target
        except (ArithmeticError, ValueError):  # an absurd value mpmath cannot evaluate: not trusted
            return False

    inputs = {"epsilon": epsilon, "delta": delta, "sensitivity": sensitivity}
    return kept("analytic-gaussian-sigma", inputs, search, holds)


def _search_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    import mpmath as mp

    target = mp.mpf(delta)  # exact value of the float delta
    sigma = _float_sigma_unit(epsilon, delta) * sensitivity
    return raise_until(sigma, lambda s: gaussian_delta_exact(s, epsilon, sensitivity) <= target)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest float sigma (up to a few ulp) for which the Gaussian mechanism with this l2-sensitivity is
    (epsilon, delta)-DP, where delta(sigma) <= delta is checked in exact arithmetic (mpmath, 60 digits).

    ``sensitivity`` is taken as the exact value of the float given: pass an upper bound (``sqrt_up``).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError("sensitivity must be a finite number > 0")
    return _safe_sigma(epsilon, delta, float(sensitivity))


def sqrt_up(m: int) -> float:
    """A float >= sqrt(m) exactly (math.sqrt is correctly rounded; one ulp up when it rounded down)."""
    from fractions import Fraction

    r = math.sqrt(m)
    return r if Fraction(r) ** 2 >= m else math.nextafter(r, math.inf)
