"""The tightest composition the ledger computes: dp-accounting's privacy-loss-distribution (PLD) accountant.

A session's releases split into three kinds of part (``ledger.total`` sorts them by what each mechanism declares):
  * Gaussian parts: the rho part of every Gaussian-family release is exactly a Gaussian mechanism; together they
    are one Gaussian mechanism of sensitivity mu = sqrt(sum mu_i^2) and noise 1 (Gaussian DP composes exactly),
    plus threshold events of total probability ``sum delta_i``;
  * Laplace parts: an epsilon_i-DP Laplace mechanism each (``privacy.cost.LaplaceCost``), plus threshold events;
  * everything else (PCR) through its own stated (epsilon, delta)-DP bound: dp-accounting's PLD of a generic
    (epsilon, delta)-DP mechanism, which dominates every mechanism with that guarantee.
A Laplace part is a Laplace mechanism on a histogram at l1-distance <= Delta_1 (noise Delta_1 / epsilon per item);
dp-accounting models the scalar shift Delta_1, which dominates every split of the shift over several items (the
product of Laplace shifts a + b is closer than the single shift a + b; tests check it on a grid).
Each release is, on both neighbours alike, its continuous part except on its threshold event (probability <=
delta_i), the structure under which approximate zCDP composes (Bun & Steinke 2016, Def. 8.1): the continuous
parts compose by their PLD and the threshold events are outside it: they add to delta. So the composition is (epsilon, delta)-DP with
delta = delta_PLD(epsilon) + sum of the threshold deltas, and epsilon is read off the composed PLD at the delta the
threshold events leave (``remaining_delta``, in exact rational arithmetic, rounded down).

dp-accounting discretises each privacy loss on a grid; with ``pessimistic_estimate`` (its default, kept here)
every loss is rounded up and truncated tail mass goes to the infinite loss, so the epsilon it returns is an upper
bound on the exact one: safe, larger by at most about (number of releases) x the grid step. The step is
``VALUE_INTERVAL`` or ``GRID_FRACTION`` of the smallest part (the smallest epsilon or Gaussian mu), whichever is
finer (a refined step spans the composed losses in at most ``FINE_POINTS`` steps), so small epsilons are not
swamped by the grid (dp-accounting's fixed 1e-3 put 1,000 releases at epsilon 1e-12 1,000-fold over basic
composition); and it is never finer than the span over ``GRID_POINTS`` (thousands of releases get a coarser grid,
so one sidebar redraw stays well under a second). Where that grid is still coarse next to the smallest part, the
figure can exceed basic composition: ``ledger.total`` then leaves it out and says why. Below ``SMALLEST_PART``
(epsilon 1e-6) the PLD is not computed at all: its float arithmetic (1 - e^-loss at losses near 1e-12) loses
the digits a bound needs (at epsilon 1e-12 it returned figures both above and below the exact composition).

Where the figure is not representable in floats it is left out with the reason (``pld_epsilon``'s note), never an
OverflowError: dp-accounting computes exp(epsilon) of an (epsilon, delta) part and expm1 of the grid step, both
past the float range once they exceed ``EXP_LIMIT`` (e^709.78 is the largest float): PCR above epsilon ~ 709.8,
a Laplace part above it, or a span of epsilons above ~ 7.1e8 (its step over ``GRID_POINTS``). The other bounds
(basic, zCDP, Gaussian DP) stay.

dp-accounting is imported on first use (about a second), never when the CLI starts; results are cached by their
public parameters (a sidebar redrawn without a new release does not recompute).
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from functools import lru_cache

VALUE_INTERVAL = 1e-3  # dp-accounting's value_discretization_interval (its default 1e-4 costs 10x the time)
GRID_FRACTION = 1e-2  # the step is at most this fraction of the smallest part (epsilon or mu)
FINE_POINTS = 2e4  # a step refined below VALUE_INTERVAL spans the composed losses in at most about this many steps
SMALLEST_PART = 1e-6  # below this epsilon (or mu) dp-accounting's floats lose the digits its bound needs
GRID_POINTS = 1e6  # at most about this many grid steps over the composed losses' span (a coarser grid: still safe)
EXP_LIMIT = math.log(sys.float_info.max)  # 709.78: dp-accounting takes exp of a part's epsilon and expm1 of the step


def sum_up(values: list[tuple[float, int]]) -> float:
    """sum of ``value * count``, exactly (``Fraction``), rounded up to a float (a delta spent: never understated);
    inf past the largest float (thousands of releases at epsilon 1e300: an upper bound, never an OverflowError)."""
    exact = sum((Fraction(v) * k for v, k in values), Fraction(0))
    if exact > Fraction(sys.float_info.max):
        return math.inf
    out = float(exact)
    return math.nextafter(out, math.inf) if Fraction(out) < exact else out


def remaining_delta(total: list[tuple[float, int]], used: list[tuple[float, int]]) -> float:
    """sum(total) - sum(used), exactly, rounded down to a float (the delta left for a conversion: never overstated);
    0 when nothing is left."""
    exact = sum((Fraction(v) * k for v, k in total), Fraction(0)) - sum((Fraction(v) * k for v, k in used), Fraction(0))
    if exact <= 0:
        return 0.0
    out = float(exact)
    return math.nextafter(out, 0.0) if Fraction(out) > exact else out


def pld_epsilon(
    gaussian_mu: float | None,
    laplace: tuple[tuple[float, int], ...],
    generic: tuple[tuple[float, float, int], ...],
    delta: float,
) -> tuple[float | None, str | None]:
    """(epsilon, None): the epsilon at which the composition of a mu-GDP Gaussian mechanism (``gaussian_mu``, None:
    none), the ``(epsilon_i, k_i)`` Laplace mechanisms (k_i releases of an epsilon_i-DP Laplace mechanism) and the
    ``(epsilon_j, delta_j, k_j)`` generic mechanisms is (epsilon, ``delta``)-DP by dp-accounting's PLD (pessimistic
    estimate); (None, why) where it cannot be computed in floats (``EXP_LIMIT``); (None, None) when no finite
    epsilon reaches ``delta``."""
    key = (
        gaussian_mu,
        tuple(sorted(laplace)),
        tuple(sorted(generic)),
        float(delta),
    )
    return _pld_epsilon(*key)


def grid_step(
    gaussian_mu: float | None, laplace: tuple[tuple[float, int], ...], generic: tuple[tuple[float, float, int], ...]
) -> float:
    """The discretisation step: ``VALUE_INTERVAL`` or ``GRID_FRACTION`` of the smallest part, whichever is finer,
    but at least the composed losses' span over ``GRID_POINTS``."""
    mu = gaussian_mu or 0.0
    span = mu * mu / 2.0 + 10.0 * mu + sum(e * k for e, k in laplace) + sum(e * k for e, _, k in generic)
    parts = [e for e, _ in laplace] + [e for e, _, _ in generic] + ([mu] if mu > 0 else [])
    fine = min([VALUE_INTERVAL] + [GRID_FRACTION * p for p in parts])
    if fine < VALUE_INTERVAL:  # refined for small parts: bounded in steps, so one redraw stays quick
        fine = min(VALUE_INTERVAL, max(fine, span / FINE_POINTS))
    return max(fine, span / GRID_POINTS)


def unrepresentable(
    gaussian_mu: float | None, laplace: tuple[tuple[float, int], ...], generic: tuple[tuple[float, float, int], ...]
) -> str | None:
    """Why dp-accounting's PLD of these parts cannot be computed in floats, or None when it can."""
    big = max([e for e, _ in laplace] + [e for e, _, _ in generic] + [0.0])
    if big > EXP_LIMIT:
        return (
            f"a release at ε = {big:.4g} is past what it computes in floats (exp(ε) overflows above ε ≈ 709.8); "
            "the other bounds hold"
        )
    mu = gaussian_mu or 0.0
    small = min([e for e, _ in laplace] + [e for e, _, _ in generic] + ([mu] if mu > 0 else []))
    if small < SMALLEST_PART:
        return (
            f"a part at ε (or μ) = {small:.3g} is below {SMALLEST_PART:g}, where its float arithmetic (1 - e^-ε) "
            "loses the digits the bound needs; the other bounds hold"
        )
    if not math.isfinite(mu * mu) or mu * mu / 2.0 > 1e300:
        return f"the Gaussian parts' μ = {mu:.4g} is past what it computes in floats; the other bounds hold"
    step = grid_step(gaussian_mu, laplace, generic)
    if not math.isfinite(step) or step > EXP_LIMIT:
        return (
            f"the releases' ε's span too wide a range for its grid (a step of {step:.3g} > {EXP_LIMIT:.1f} overflows "
            "exp in floats); the other bounds hold"
        )
    return None


@lru_cache(maxsize=256)
def _pld_epsilon(
    gaussian_mu: float | None,
    laplace: tuple[tuple[float, int], ...],
    generic: tuple[tuple[float, float, int], ...],
    delta: float,
) -> tuple[float | None, str | None]:
    if delta <= 0 or (gaussian_mu is None and not laplace and not generic):
        return None, None
    why = unrepresentable(gaussian_mu, laplace, generic)
    if why is not None:
        return None, why
    try:
        eps_out = _compose(gaussian_mu, laplace, generic, delta, grid_step(gaussian_mu, laplace, generic))
    except Exception as e:  # noqa: BLE001 - a float limit not foreseen above: the optional bound is left out
        return None, f"its computation failed in floats ({type(e).__name__}); the other bounds hold"
    if math.isnan(eps_out):
        return None, "its computation lost its precision in floats (not a number); the other bounds hold"
    if not math.isfinite(eps_out):
        return None, None
    return max(eps_out, 0.0), None


def _compose(
    gaussian_mu: float | None,
    laplace: tuple[tuple[float, int], ...],
    generic: tuple[tuple[float, float, int], ...],
    delta: float,
    step: float,
) -> float:
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    parts = []
    if gaussian_mu is not None:
        # noise 1 at sensitivity mu: mu itself was rounded up, so the pair dominates the exact one
        parts.append(pld.from_gaussian_mechanism(1.0, sensitivity=gaussian_mu, value_discretization_interval=step))
    for eps, k in laplace:
        one = pld.from_laplace_mechanism(1.0, sensitivity=eps, value_discretization_interval=step)
        parts.append(one.self_compose(k) if k > 1 else one)
    for eps, d, k in generic:
        one = pld.from_privacy_parameters(DifferentialPrivacyParameters(eps, d), value_discretization_interval=step)
        parts.append(one.self_compose(k) if k > 1 else one)
    composed = parts[0]
    for p in parts[1:]:
        composed = composed.compose(p)
    return float(composed.get_epsilon_for_delta(delta))
