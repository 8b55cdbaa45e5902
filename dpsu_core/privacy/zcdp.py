"""Zero-concentrated DP (Bun & Steinke 2016) and its approximate form, as PCR uses them (docs/algorithms.md §6).

A delta-approximate rho-zCDP mechanism is (rho + 2 sqrt(rho ln(1/delta')), delta + delta')-DP for every
delta' > 0 (Rogers 2024, Lemma 2 / Theorem 5). dpsu takes (epsilon, delta) from the user everywhere, so
a zCDP mechanism gets its budget from ``approx_zcdp_budget``: delta is split between the approximate-zCDP
delta (what PCR's Gumbel steps spend, delta_* each) and the conversion's delta', and rho is the largest
value whose conversion at delta' is exactly epsilon.

Closed forms (L = ln(1/delta')):
    epsilon(rho)  = rho + 2 sqrt(rho L)
    rho(epsilon)  = (sqrt(L + epsilon) - sqrt(L))^2 = epsilon^2 / (sqrt(L + epsilon) + sqrt(L))^2
    delta'(rho, epsilon) = exp(-(epsilon - rho)^2 / (4 rho))   for epsilon > rho

Every conversion is rounded toward safety and checked in exact arithmetic (mpmath, 60 digits): epsilon,
delta' and zCDP costs are rounded up, the zCDP budget rho from epsilon is rounded down, and the split
delta_zcdp + delta_conversion <= delta holds exactly (``fractions.Fraction``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction

from ..errors import ParameterError
from .gaussian import MP_DIGITS, lower_until, raise_until
from .validate import check_delta, check_epsilon, check_fraction, check_positive


def _exact_epsilon(rho: float, delta_prime: float):
    """rho + 2 sqrt(rho ln(1/delta')) at 60 digits (an mpf), for the exact values of the floats."""
    import mpmath as mp

    with mp.workdps(MP_DIGITS):
        r = mp.mpf(rho)
        return +(r + 2 * mp.sqrt(r * -mp.log(mp.mpf(delta_prime))))


def _at_least(value_fn):
    """A predicate x -> (x >= the exact value ``value_fn()``), evaluated once at 60 digits."""
    import mpmath as mp

    with mp.workdps(MP_DIGITS):
        exact = value_fn(mp)
    return lambda x: mp.mpf(x) >= exact


def check_rho(rho: float, name: str = "rho (zCDP)") -> float:
    """A zCDP parameter: a finite number > 0."""
    return check_positive(rho, name, "typical values are 0.01 to 1")


def zcdp_to_dp_epsilon(rho: float, delta_prime: float) -> float:
    """epsilon = rho + 2 sqrt(rho ln(1/delta')): the DP epsilon of a rho-zCDP mechanism at delta'."""
    r, d = check_rho(rho), check_delta(delta_prime)
    exact = _exact_epsilon(r, d)
    return raise_until(r + 2.0 * math.sqrt(r * -math.log(d)), lambda x: x >= exact)


def dp_epsilon_to_zcdp_rho(epsilon: float, delta_prime: float) -> float:
    """The largest rho with rho + 2 sqrt(rho ln(1/delta')) <= epsilon (the inverse of ``zcdp_to_dp_epsilon``).

    Solving x^2 + 2 sqrt(L) x - epsilon = 0 for x = sqrt(rho) gives x = sqrt(L + eps) - sqrt(L); it is
    evaluated as eps / (sqrt(L + eps) + sqrt(L)) to avoid cancellation when L >> eps.
    """
    e, d = check_epsilon(epsilon), check_delta(delta_prime)
    big_l = -math.log(d)
    x = e / (math.sqrt(big_l + e) + math.sqrt(big_l))
    return lower_until(x * x, lambda r: _exact_epsilon(r, d) <= e)


def zcdp_delta_prime(rho: float, epsilon: float) -> float:
    """The smallest delta' at which rho-zCDP gives epsilon-DP by the conversion above: exp(-(eps - rho)^2 / (4 rho)).

    Needs epsilon > rho (at epsilon <= rho the conversion gives no finite guarantee).
    """
    r, e = check_rho(rho), check_epsilon(epsilon)
    if e <= r:
        raise ParameterError(
            f"epsilon ({e:g}) must exceed rho ({r:g}) for the zCDP-to-DP conversion; raise epsilon or lower rho"
        )
    ok = _at_least(lambda mp: mp.exp(-((mp.mpf(e) - mp.mpf(r)) ** 2) / (4 * mp.mpf(r))))
    return raise_until(math.exp(-((e - r) ** 2) / (4.0 * r)), ok)


def pure_dp_to_zcdp(epsilon: float) -> float:
    """An epsilon-DP mechanism is (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    e = check_epsilon(epsilon)
    return raise_until(e * e / 2.0, lambda x: Fraction(x) >= Fraction(e) ** 2 / 2)


def gaussian_zcdp(sigma: float, sensitivity: float = 1.0) -> float:
    """The Gaussian mechanism with l2-sensitivity Delta and noise N(0, sigma^2) is Delta^2 / (2 sigma^2)-zCDP."""
    s = check_positive(sigma, "sigma")
    d = check_positive(sensitivity, "sensitivity")
    return raise_until(d * d / (2.0 * s * s), lambda x: Fraction(x) >= Fraction(d) ** 2 / (2 * Fraction(s) ** 2))


@dataclass(frozen=True)
class ApproxZcdpBudget:
    """An (epsilon, delta)-DP target expressed as delta_zcdp-approximate rho-zCDP plus a conversion delta'.

    delta_zcdp + delta_conversion == delta, and zcdp_to_dp_epsilon(rho, delta_conversion) == epsilon.
    Public: it depends on the parameters only.
    """

    epsilon: float
    delta: float
    rho: float
    delta_zcdp: float
    delta_conversion: float
    conversion_share: float

    def as_dict(self) -> dict:
        return asdict(self)


def approx_zcdp_budget(epsilon: float, delta: float, conversion_share: float = 0.5) -> ApproxZcdpBudget:
    """Split delta: ``conversion_share * delta`` is the conversion's delta', the rest the approximate-zCDP delta.

    The PCR paper states its guarantee as (rho + 2 sqrt(rho ln(1/delta')), delta + delta')-DP (Theorem 6)
    without fixing how a user-given delta should be shared; dpsu splits it in two equal halves by default.
    """
    e, d = check_epsilon(epsilon), check_delta(delta)
    share = check_fraction(conversion_share, "conversion_share")
    delta_conv = share * d
    delta_z = lower_until(d - delta_conv, lambda z: Fraction(z) + Fraction(delta_conv) <= Fraction(d))
    rho = dp_epsilon_to_zcdp_rho(e, delta_conv)
    return ApproxZcdpBudget(
        epsilon=e, delta=d, rho=rho, delta_zcdp=delta_z, delta_conversion=delta_conv, conversion_share=share
    )
