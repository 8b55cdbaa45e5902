"""Every parameter check, in one place (diffprivlib style): mechanisms, privacy math, metrics, charts,
compare and the parameter registry all validate through these functions, so a bad value gets the same
clear message wherever it enters. Each raises ``ParameterError`` naming the parameter, the bad value and,
where useful, how to fix it."""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import ParameterError


def is_finite_real(value: Any) -> bool:
    """A real number (int, float, numpy scalar; never a bool) that is finite as a float (an int too large for a
    float, such as 10**400, is not)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def check_path(value: Any, name: str) -> Path:
    """A file path (text or ``os.PathLike``, not empty) called ``name``, as a ``Path``."""
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise ParameterError(f"{name} must be a file path (text or a pathlib.Path), got {value!r:.60}")
    return Path(value)


def show_small(value: Fraction | float, digits: int = 3) -> str:
    """A value >= 0 for a message, in ``g`` style with ``digits`` significant digits, also below the float range:
    an exact share (``Fraction``) that a float would hold as a subnormal or round to 0 is written out from its
    exact value ("5e-365"), never as "0"."""
    q = Fraction(value)
    if q <= 0 or q >= Fraction(sys.float_info.min):
        return f"{float(q):.{digits}g}"
    e = len(str(q.numerator)) - len(str(q.denominator))  # 10^(e-1) < q < 10^(e+1)
    if q < Fraction(10) ** e:
        e -= 1
    mantissa = f"{float(q / Fraction(10) ** e):.{digits}g}"
    if mantissa == "10":  # rounded up to the next power of ten
        mantissa, e = "1", e + 1
    return f"{mantissa}e{e:+03d}"


def _msg(text: str, hint: str) -> str:
    return f"{text}; {hint}" if hint else text


def check_number(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    hint: str = "",
) -> float:
    """A finite real number, optionally within [low, high] (``open_low`` / ``open_high`` exclude the ends)."""
    if not is_finite_real(value):
        raise ParameterError(_msg(f"{name} must be a finite number, got {value!r}", hint))
    v = float(value)
    if low is not None and (v <= low if open_low else v < low):
        raise ParameterError(_msg(f"{name} must be {'>' if open_low else '>='} {low:g}, got {value!r}", hint))
    if high is not None and (v >= high if open_high else v > high):
        raise ParameterError(_msg(f"{name} must be {'<' if open_high else '<='} {high:g}, got {value!r}", hint))
    return v


def check_positive(value: Any, name: str, hint: str = "") -> float:
    """A finite number > 0 (noise scales, zCDP rho, Gumbel epsilons)."""
    return check_number(value, name, low=0.0, open_low=True, hint=hint)


def check_positive_int(value: Any, name: str, hint: str = "", *, maximum: int | None = None) -> int:
    """A positive integer (an integral float such as 5.0 is accepted) called ``name``, at most ``maximum``."""
    ok = not isinstance(value, bool) and (
        isinstance(value, numbers.Integral) or (is_finite_real(value) and float(value).is_integer())
    )
    v = int(value) if ok else 0
    if v < 1 or (maximum is not None and v > maximum):
        what = "a positive integer" if maximum is None else f"an integer between 1 and {maximum}"
        raise ParameterError(_msg(f"{name} must be {what}, got {value!r}", hint))
    return v


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


#: epsilon's documented upper bound: every calibration (PCR's filter included) stays finite up to it
EPSILON_MAX = 1e300
#: epsilon's documented lower bound: below it the noise scales and thresholds (Laplace scale Delta0/epsilon,
#: a round's Gamma_i at the smallest round ratio) leave the range where the calibrations stay finite and the
#: descent updates are proven (privacy.norms.check_descent_range); nothing is released near it anyway
EPSILON_MIN = 1e-12


def check_epsilon(epsilon: float) -> float:
    """epsilon: a finite number in (0, EPSILON_MAX] (the privacy math's domain; a release's own epsilon is
    also held to EPSILON_MIN by ``check_budget``)."""
    if not is_finite_real(epsilon) or epsilon <= 0:
        raise ParameterError(f"epsilon must be a finite number > 0, got {epsilon!r}; typical values are 0.1 to 10")
    if float(epsilon) > EPSILON_MAX:
        raise ParameterError(
            f"epsilon must be at most {EPSILON_MAX:g}, got {epsilon!r}; typical values are 0.1 to 10 "
            "(beyond about 20 the guarantee says next to nothing)"
        )
    return float(epsilon)


#: delta's documented lower bound: a release's delta and its shares (delta/2, DPNE's levels) keep every
#: threshold's 1 - (1 - delta)^(1/t), t <= Delta0 <= 10^6, a normal float (> 2.2e-308), where its rounding is
#: relative and the margins of privacy.thresholds hold (``thresholds._one_minus_root`` asserts it)
DELTA_MIN = 1e-300


def check_delta(delta: float) -> float:
    """delta: a finite number in (0, 1) (the privacy math's domain; a release's own delta is also held to
    DELTA_MIN by ``check_budget``)."""
    if not is_finite_real(delta) or not 0.0 < float(delta) < 1.0:
        raise ParameterError(
            f"delta must lie strictly between 0 and 1, got {delta!r}; choose it well below 1/(number of users), e.g. 1e-6"
        )
    return float(delta)


def check_budget(epsilon: float, delta: float) -> tuple[float, float]:
    """A release's (epsilon, delta) inside the documented ranges [EPSILON_MIN, EPSILON_MAX] and [DELTA_MIN, 1)."""
    e, d = check_epsilon(epsilon), check_delta(delta)
    if e < EPSILON_MIN:
        raise ParameterError(
            f"epsilon must be at least {EPSILON_MIN:g}, got {epsilon!r}; typical values are 0.1 to 10 "
            "(below about 0.01 next to nothing is released)"
        )
    if d < DELTA_MIN:
        raise ParameterError(f"delta must be at least {DELTA_MIN:g}, got {delta!r}; e.g. 1e-6")
    return e, d


def check_max_items(max_items: int, name: str = "max_items (Delta0)") -> int:
    return check_positive_int(max_items, name, "e.g. 100")


def check_alpha(alpha: float) -> float:
    return check_number(alpha, "alpha", low=0.0, hint="values 3 to 5 work best")


def check_fraction(value: float, name: str, *, open_low: bool = True, open_high: bool = True) -> float:
    """A number in (0, 1); ``open_low=False`` / ``open_high=False`` admit 0 / 1."""
    if not is_finite_real(value):
        raise ParameterError(f"{name} must be a number between 0 and 1, got {value!r}")
    v = float(value)
    if not ((v > 0 if open_low else v >= 0) and (v < 1 if open_high else v <= 1)):
        raise ParameterError(
            f"{name} must lie in {'(0' if open_low else '[0'}, {'1)' if open_high else '1]'}, got {value!r}"
        )
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
