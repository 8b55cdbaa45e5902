"""What one release costs in the units the ledger composes: approximate zCDP (Bun & Steinke 2016), or a Laplace
mechanism plus a threshold event (the Laplace family, for the privacy-loss-distribution composition).

Each mechanism class declares its own cost (``Mechanism.privacy_cost``); the ledger only adds them up.
A cost is a function of the public calibration, never of data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .zcdp import gaussian_zcdp


@dataclass(frozen=True)
class ZcdpCost:
    """A release as delta-approximate rho-zCDP.

    ``rho``: the zCDP cost of the release's continuous part (rounded up). ``delta``: the approximate-zCDP delta,
    the part of the release's delta spent on events outside the zCDP part (a threshold crossed by an item only
    the extra user holds, or PCR's Gumbel steps); the rest of the release's delta is left for the conversion to
    (epsilon, delta)-DP. ``gaussian_mu_sq``: mu^2 of the Gaussian-DP part when the rho part is exactly a
    composition of Gaussian mechanisms (mu^2 = sum Delta^2 / sigma^2 = 2 rho); None when it is not (PCR)."""

    rho: float
    delta: float
    gaussian_mu_sq: float | None = None


def gaussian_cost(sigma: float, threshold_delta: float, sensitivity: float = 1.0) -> ZcdpCost:
    """A Gaussian mechanism with noise ``sigma`` at l2-sensitivity ``sensitivity`` plus a threshold event of
    probability <= ``threshold_delta``: rho = Delta^2 / (2 sigma^2), exactly mu^2 / 2 of Gaussian DP."""
    rho = gaussian_zcdp(sigma, sensitivity)
    return ZcdpCost(rho, threshold_delta, 2.0 * rho)


def gaussian_costs_sum(rhos: list[float], threshold_delta: float) -> ZcdpCost:
    """Several Gaussian mechanisms composed (their rho add, still exactly Gaussian DP) plus threshold events of
    total probability <= ``threshold_delta``."""
    rho = math.fsum(rhos)
    if len(rhos) > 1:  # fsum rounds to nearest: one ulp up keeps the sum >= the exact one
        rho = math.nextafter(rho, math.inf)
    return ZcdpCost(rho, threshold_delta, 2.0 * rho)


@dataclass(frozen=True)
class LaplaceCost:
    """A release as a Laplace mechanism plus an event of probability <= ``delta``: on the items both neighbours can
    hold, Laplace noise of scale >= Delta_1 / ``epsilon`` on a histogram at l1-distance <= Delta_1 (an
    ``epsilon``-DP Laplace mechanism: its privacy loss is dp-accounting's ``LaplacePrivacyLoss`` at parameter 1 and
    sensitivity ``epsilon``); ``delta`` bounds the chance that an item only the extra user holds crosses the
    threshold (docs/algorithms.md §2, §3a)."""

    epsilon: float
    delta: float
