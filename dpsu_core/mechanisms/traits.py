"""Typed values the mechanism classes declare about themselves (``Mechanism`` traits), read by other modules.

* ``Stage`` / ``Stages``: the noisy thresholds an item must pass, for the utility preview (``utility``).
* ``scale_quantity``: the one noise quantity of a single-noise mechanism, for display.

Nothing here looks at data: every value is a function of a public ``Calibration``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Calibration


@dataclass(frozen=True)
class Stage:
    """One noisy threshold the item must pass: weight per kept holder ``w``, capped at ``cap``."""

    noise: str  # "laplace" or "gaussian"
    scale: float
    threshold: float
    w: float
    cap: float | None = None
    round: bool = False  # one of several rounds (DP-SIPS): the item is released if ANY round releases it


@dataclass(frozen=True)
class Stages:
    """A mechanism's release rule for one item, as the utility preview models it: ``stages`` (all must pass, or
    for rounds any one) and ``rule``, how the item's weight grows, in words."""

    stages: tuple[Stage, ...]
    rule: str


def threshold_rate(cal: Calibration) -> float:
    """The calibration's threshold rho (every threshold mechanism has one)."""
    if cal.rho is None:  # pragma: no cover - programming error: only threshold mechanisms call it
        raise ValueError(f"{cal.mechanism} has no threshold")
    return float(cal.rho)


def one_stage(cal: Calibration, w: float, rule: str, *, capped: bool = False) -> Stages:
    """A single noisy threshold: the calibration's noise, scale and rho; the weight per holder ``w``, up to Gamma
    when ``capped``."""
    return Stages((Stage(cal.noise, cal.scale, threshold_rate(cal), w, cal.gamma if capped else None),), rule)


def scale_quantity(cal: Calibration) -> list[tuple[str, float]]:
    """The noise of a single-noise mechanism under its own name: Laplace scale or Gaussian standard deviation."""
    return [("Noise scale (λ)" if cal.noise == "laplace" else "Noise std (σ)", float(cal.scale))]
