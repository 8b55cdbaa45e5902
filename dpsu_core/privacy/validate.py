"""One place that validates privacy parameters (diffprivlib style)."""

from __future__ import annotations

import math
import numbers

from ..errors import ParameterError


def check_epsilon(epsilon: float) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise ParameterError(f"epsilon must be a number, got {epsilon!r}; use e.g. --epsilon 1.0")
    e = float(epsilon)
    if not math.isfinite(e) or e <= 0:
        raise ParameterError(f"epsilon must be a finite number > 0, got {epsilon!r}; typical values are 0.1 to 10")
    return e


def check_delta(delta: float) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise ParameterError(f"delta must be a number, got {delta!r}; use e.g. --delta 1e-6")
    d = float(delta)
    if not (0.0 < d < 1.0) or not math.isfinite(d):
        raise ParameterError(
            f"delta must lie strictly between 0 and 1, got {delta!r}; choose it well below 1/(number of users), e.g. 1e-6"
        )
    return d


def check_max_items(max_items: int, name: str = "max_items (Delta0)") -> int:
    if isinstance(max_items, bool):
        raise ParameterError(f"{name} must be a positive integer, got {max_items!r}; e.g. 100")
    if isinstance(max_items, numbers.Integral):
        v = int(max_items)
    elif isinstance(max_items, numbers.Real) and float(max_items).is_integer():
        v = int(max_items)
    else:
        raise ParameterError(f"{name} must be a positive integer, got {max_items!r}; e.g. 100")
    if v < 1:
        raise ParameterError(f"{name} must be a positive integer, got {max_items!r}; e.g. 100")
    return v


def check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not math.isfinite(float(alpha)) or alpha < 0:
        raise ParameterError(f"alpha must be a finite number >= 0, got {alpha!r}; values 3 to 5 work best")
    return float(alpha)


def check_positive_int(value: int, name: str, hint: str = "") -> int:
    """A positive integer called ``name``; ``hint`` is appended to the error message."""
    try:
        return check_max_items(value, name)
    except ParameterError as exc:
        if not hint:
            raise
        raise ParameterError(f"{exc}; {hint}") from None


def check_fraction(value: float, name: str, *, open_low: bool = True, open_high: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ParameterError(f"{name} must be a number between 0 and 1, got {value!r}")
    v = float(value)
    low_ok = v > 0 if open_low else v >= 0
    high_ok = v < 1 if open_high else v <= 1
    if not (low_ok and high_ok):
        lo = "(0" if open_low else "[0"
        hi = "1)" if open_high else "1]"
        raise ParameterError(f"{name} must lie in {lo}, {hi}, got {value!r}")
    return v


def check_seed(seed) -> int | None:
    """A random seed: None (the OS seeds the generator) or an integer 0 <= seed < 2**128 (teaching only)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < 2**128:
        raise ParameterError(
            f"seed must be a whole number from 0 to 2^128 - 1, got {seed!r}; leave it out for a real release"
        )
    return int(seed)
