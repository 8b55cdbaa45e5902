"""Typed values the mechanism classes declare about themselves (``Mechanism`` traits), read by other modules.

* ``Stage`` / ``Stages``: the noisy thresholds an item must pass, for the utility preview (``utility``), and the
  preview's probability math over them (``stages_release_probability``, ``highest_chance``,
  ``users_for_chance``), here beside the stages so a mechanism can use it in its own calibration (Policy
  DP-SIPS's tuned delta split) without importing the preview module.
* ``CalibrationView`` / ``RoundRow``: how a calibration is displayed (``Mechanism.calibration_view``).
* ``scale_quantity``: the one noise quantity of a single-noise mechanism, for display.

Nothing here looks at data: every value is a function of a public ``Calibration``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .calibration import Calibration

MAX_USERS_SEARCHED = 10_000_000


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
    for rounds any one), ``rule``, how the item's weight grows, in words, and an optional ``note`` the preview
    adds (e.g. which delta split the calibration chose and why)."""

    stages: tuple[Stage, ...]
    rule: str
    note: str = ""


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


# --------------------------------------------------------------------------- how a calibration is displayed
@dataclass(frozen=True)
class RoundRow:
    """One round of a rounds mechanism (DP-SIPS, Policy DP-SIPS), for display: its noise sigma_i, threshold T_i,
    cutoff Gamma_i (None without one), threshold delta_i and share f_i of the Gaussian budget."""

    round: int
    sigma: float
    threshold: float
    gamma: float | None
    delta: float
    share: float


@dataclass(frozen=True)
class CalibrationView:
    """How a calibration is shown. ``headline``: (label, value) figures that mean the same across mechanisms —
    the noise on the threshold most items cross, that threshold and its cutoff (None: the mechanism has none);
    ``threshold`` / ``cutoff``: those two as numbers; ``note``: what the headline is (for rounds: the last
    round); ``rounds``: the per-round table (empty for a single-threshold mechanism)."""

    headline: tuple[tuple[str, float | None], ...]
    threshold: float | None
    cutoff: float | None
    note: str = ""
    rounds: tuple[RoundRow, ...] = ()

    def round_records(self) -> list[dict[str, float | int | None]]:
        """The rounds as table rows (column headers in symbols)."""
        return [
            {"round": r.round, "σᵢ": r.sigma, "Tᵢ": r.threshold, "Γᵢ": r.gamma, "δᵢ": r.delta, "share": r.share}
            for r in self.rounds
        ]


def single_view(quantities: list[tuple[str, float]], cal: Calibration) -> CalibrationView:
    """One noise (``quantities``, the mechanism's ``noise_quantities``), one threshold rho, one cutoff Gamma."""
    headline = (*quantities, ("Threshold ρ", cal.rho), ("Cutoff Γ", cal.gamma))
    return CalibrationView(headline, cal.rho, cal.gamma)


def rounds_view(rounds: tuple[RoundRow, ...]) -> CalibrationView:
    """Rounds: the table, and the last round's sigma_I, T_I and Gamma_I as the headline (the last round has the
    largest share of the budget and the lowest threshold: the one most released items cross)."""
    last = rounds[-1]
    n = len(rounds)
    headline = (
        (f"Noise std σ{_sub(n)} (last round)", last.sigma),
        (f"Threshold T{_sub(n)} (last round)", last.threshold),
        (f"Cutoff Γ{_sub(n)} (last round)", last.gamma),
    )
    note = (
        f"{n} rounds; the headline figures are the last round's (round {n} of {n}: the largest share of the budget "
        "and the lowest threshold, the one most released items cross). Every round's figures are in the table."
    )
    return CalibrationView(headline, last.threshold, last.gamma, note, rounds)


def _sub(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


# --------------------------------------------------------------------------- the utility preview's probability math
def _tail(noise: str, x: np.ndarray) -> np.ndarray:
    """P[Z > x] for unit-scale noise."""
    if noise == "laplace":
        return np.where(x >= 0, 0.5 * np.exp(-np.abs(x)), 1.0 - 0.5 * np.exp(-np.abs(x)))
    from scipy import stats  # loads on first use (start-up time)

    return stats.norm.sf(x)


def _pass_given_kept(stages: tuple[Stage, ...], j: np.ndarray) -> np.ndarray:
    p = np.ones(j.shape[0], dtype=np.float64)
    for s in stages:
        h = j * s.w
        if s.cap is not None:
            h = np.minimum(h, s.cap)
        p *= _tail(s.noise, (s.threshold - h) / s.scale)
    return p


def _expected_pass(stages: tuple[Stage, ...], k: int, q: float) -> float:
    """E over the kept holders j ~ Binomial(k, q) of P(every stage passes | j)."""
    if q >= 1.0:
        return float(_pass_given_kept(stages, np.array([float(k)]))[0])
    from scipy import stats

    j = np.arange(k + 1, dtype=np.float64)
    return float(np.dot(stats.binom.pmf(j, k, q), _pass_given_kept(stages, j)))


def stages_release_probability(stages: tuple[Stage, ...], k: int, q: float) -> float:
    """P(released | k holders, each keeping the item with probability q) for these stages. Rounds (DP-SIPS)
    sample afresh and draw fresh noise: the item is released unless every round misses it."""
    if k <= 0:
        return 0.0
    rounds = [s for s in stages if s.round]
    if rounds:
        miss = 1.0
        for s in rounds:
            miss *= 1.0 - _expected_pass((s,), k, q)
        return 1.0 - miss
    return _expected_pass(stages, k, q)


def highest_chance(stages: tuple[Stage, ...], q: float) -> float:
    """The chance of release as the number of holders grows without bound (below 1 when Gamma caps the weight)."""
    if q <= 0:
        return 0.0
    big = np.array([1e18])
    if any(s.round for s in stages):
        return 1.0 - float(np.prod([1.0 - _pass_given_kept((s,), big)[0] for s in stages]))
    return float(_pass_given_kept(stages, big)[0])


def users_for_chance(stages: tuple[Stage, ...], q: float, target: float) -> int | None:
    """Smallest k with P(k) >= target (P is non-decreasing in k): doubling, then bisection; None if never."""
    if highest_chance(stages, q) < target:
        return None
    hi = 1
    while stages_release_probability(stages, hi, q) < target:
        hi *= 2
        if hi > MAX_USERS_SEARCHED:
            return None
    lo = hi // 2  # P(lo) < target (or lo == 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if stages_release_probability(stages, mid, q) >= target:
            hi = mid
        else:
            lo = mid
    return hi
