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

dp-accounting discretises each privacy loss on a grid of ``VALUE_INTERVAL``; with ``pessimistic_estimate`` (its
default, kept here) every loss is rounded up and truncated tail mass goes to the infinite loss, so the epsilon it
returns is an upper bound on the exact one: safe, larger by at most about (number of parts) x the grid step. A
ledger of thousands of releases gets a coarser grid (``GRID_POINTS`` steps over its span), so one sidebar redraw
stays well under a second.

dp-accounting is imported on first use (about a second), never when the CLI starts; results are cached by their
public parameters (a sidebar redrawn without a new release does not recompute).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

VALUE_INTERVAL = 1e-3  # dp-accounting's value_discretization_interval (its default 1e-4 costs 10x the time)
GRID_POINTS = 1e6  # at most about this many grid steps over the composed losses' span (a coarser grid: still safe)


def sum_up(values: list[tuple[float, int]]) -> float:
    """sum of ``value * count``, exactly (``Fraction``), rounded up to a float (a delta spent: never understated)."""
    exact = sum((Fraction(v) * k for v, k in values), Fraction(0))
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
) -> float | None:
    """The epsilon at which the composition of a mu-GDP Gaussian mechanism (``gaussian_mu``, None: none), the
    ``(epsilon_i, k_i)`` Laplace mechanisms (k_i releases of an epsilon_i-DP Laplace mechanism) and the
    ``(epsilon_j, delta_j, k_j)`` generic mechanisms is (epsilon, ``delta``)-DP by dp-accounting's PLD (pessimistic
    estimate), or None when no finite epsilon reaches ``delta``."""
    key = (
        gaussian_mu,
        tuple(sorted(laplace)),
        tuple(sorted(generic)),
        float(delta),
    )
    return _pld_epsilon(*key)


@lru_cache(maxsize=256)
def _pld_epsilon(
    gaussian_mu: float | None,
    laplace: tuple[tuple[float, int], ...],
    generic: tuple[tuple[float, float, int], ...],
    delta: float,
) -> float | None:
    if delta <= 0 or (gaussian_mu is None and not laplace and not generic):
        return None
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    # the grid: VALUE_INTERVAL, coarser when the losses span more than GRID_POINTS of it (thousands of releases)
    mu = gaussian_mu or 0.0
    span = mu * mu / 2.0 + 10.0 * mu + sum(e * k for e, k in laplace) + sum(e * k for e, _, k in generic)
    step = max(VALUE_INTERVAL, span / GRID_POINTS)
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
    eps_out = float(composed.get_epsilon_for_delta(delta))
    if not math.isfinite(eps_out):
        return None
    return max(eps_out, 0.0)
