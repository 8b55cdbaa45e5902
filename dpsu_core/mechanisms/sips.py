"""DP-SIPS (Swanberg, Desfontaines & Haney 2023): iterated weighted-Gaussian rounds (docs/algorithms.md §7).

Round i = 1..I runs ONE weighted-Gaussian DPSU step (``dpsu_step.weighted_gaussian_step``) over every
user at once: every item released in an earlier round is removed from every user's set, each user keeps
at most Delta0 of what remains (a fresh uniform sample), adds 1/sqrt(|kept|) to each, and the items with
H_i + N(0, sigma_i^2) above T_i are released. No loop over users in a data-dependent order: each round is
a map (sample, weight) and a group-by (sum per item), so it parallelises as it stands.

Budget (docs/algorithms.md §7). sigma is the analytic-Gaussian noise for (epsilon, delta/2) at l2-sensitivity 1:
the Gaussian-DP curve at mu = 1/sigma, i.e. rho_z = mu^2 / 2 = 1/(2 sigma^2) with delta' = delta/2 for the
conversion. Round i gets the share f_i = r^(I-i) / sum_j r^(I-j) (the last round the most):
rho_i = f_i rho_z, sigma_i = 1/sqrt(2 rho_i) = sigma / sqrt(f_i), delta_i = f_i delta_thr with
delta_thr = delta/2, and T_i = max_{t <= Delta0} [1/sqrt(t) + sigma_i Phi^-1((1 - delta_i)^(1/t))].
In floats sigma_i is rounded up and delta_i down until sum_i 1/sigma_i^2 <= 1/sigma^2 and sum_i delta_i <= delta_thr
hold exactly (``fractions.Fraction``), so the rounds never spend more than their shares.

Why it is private. Round i depends on the corpus only through the public outputs of rounds < i (which
items to remove) and its own pass. For neighbours D, D+u it is Gopi et al.'s weighted-Gaussian DPSU:
on the items some other user also keeps, H_i moves by at most 1 in l2 (u's weights have l2 norm 1), a
Gaussian mechanism costing rho_i = 1/(2 sigma_i^2); an item only u holds crosses T_i with probability
<= delta_i (the threshold's defining event). Adaptive composition: the Gaussian parts are mu-GDP with
mu^2 = sum_i 1/sigma_i^2 = 1/sigma^2 (= 2 rho_z), which is (epsilon, delta/2)-DP by the choice of sigma,
and the threshold events add sum_i delta_i = delta/2. Total (epsilon, delta).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..privacy.cost import ZcdpCost, gaussian_costs_sum
from ..privacy.gaussian import round_down_shares, share_sigmas
from ..privacy.norms import check_descent_range
from ..privacy.thresholds import cutoff, gaussian_scale, rho_weighted_gaussian_sigma
from ..privacy.validate import check_fraction, check_positive_int, show_small
from ..privacy.zcdp import gaussian_zcdp
from .base import Diagnostics, Mechanism, ReleaseParts, progress_step
from .calibration import Calibration, Details, optional
from .dpsu_step import weighted_gaussian_step
from .seam import EngineCorpus
from .traits import CalibrationView, RoundRow, Stage, Stages, rounds_view, scale_quantity


def round_fractions(rounds: int, ratio: float) -> np.ndarray:
    """f_i proportional to r^(I-i), i = 1..I, summing to 1 (the last round gets the largest share)."""
    rounds = check_positive_int(rounds, "rounds I", "e.g. 3")
    r = check_fraction(ratio, "ratio r", open_high=False)
    w = np.power(r, np.arange(rounds - 1, -1, -1, dtype=np.float64))
    return w / w.sum()


def check_round_deltas(
    delta_i: list[float], delta: float, rounds: int, ratio: float, max_items: int, first: Fraction | None = None
) -> None:
    """Every round's threshold delta_i large enough that its threshold's tail probability delta_i / t (t <= Delta0)
    stays a normal float (``thresholds._one_minus_root`` asserts it too); otherwise one line naming what to change.
    ``first``: round 1's share in exact arithmetic, shown in the message (a float share may have underflowed)."""
    if min(delta_i) < 2.0 * sys.float_info.min * max_items:
        share = show_small(min(delta_i) if first is None else first)
        raise ParameterError(
            f"delta ({delta:.3g}) is too small to share over {rounds} rounds at round ratio {ratio:g} with Delta0 = "
            f"{max_items:,}: round 1's share of it ({share}) leaves the float range; use fewer rounds, a "
            "larger ratio or a larger delta"
        )


@dataclass(frozen=True)
class Rounds:
    """The per-round calibration of DP-SIPS and Policy DP-SIPS (public: parameters only): the shares f_i, noise
    sigma_i, threshold deltas delta_i, thresholds T_i and, with a cutoff (Policy DP-SIPS), Gamma_i."""

    sigma: float
    fraction_i: tuple[float, ...]
    sigma_i: tuple[float, ...]
    delta_i: tuple[float, ...]
    threshold_i: tuple[float, ...]
    gamma_i: tuple[float, ...] | None = None


def build_rounds(
    sigma: float,
    delta_thresholds: float,
    max_items: int,
    rounds: int,
    ratio: float,
    alpha: float | None = None,
    *,
    delta: float,
    ratio_name: str = "ratio",
) -> Rounds:
    """The rounds of a Gaussian budget ``sigma`` (mu = 1/sigma at l2-sensitivity 1) and a threshold budget
    ``delta_thresholds`` shared as f_i ~ ratio^(I-i): sigma_i >= sigma / sqrt(f_i) with sum_i 1/sigma_i^2 <=
    1/sigma^2 and delta_i <= f_i delta_thresholds with sum_i delta_i <= delta_thresholds, both checked in exact
    arithmetic (``privacy.gaussian``'s safe rounding); T_i = max_{t <= Delta0} [1/sqrt(t) + sigma_i
    Phi^-1((1 - delta_i)^(1/t))] (round i's threshold event has probability <= delta_i, docs/algorithms.md §2);
    with ``alpha``, Gamma_i = T_i + alpha sigma_i. ``delta`` and ``ratio_name`` only word the error."""
    f = round_fractions(rounds, ratio)
    sig = share_sigmas(sigma, f)
    dlt = round_down_shares(delta_thresholds, f)
    check_round_deltas(
        dlt.tolist(), delta, rounds, ratio, max_items, Fraction(delta_thresholds) * Fraction(float(f[0]))
    )
    thr = tuple(rho_weighted_gaussian_sigma(float(s), max_items, delta_threshold=float(d)) for s, d in zip(sig, dlt))
    gam = None if alpha is None else tuple(cutoff(t, alpha, float(s)) for t, s in zip(thr, sig))
    for g in gam or ():  # every round's cutoff where the l2-descent is proven
        check_descent_range(max_items, g, f"epsilon or {ratio_name}, or use fewer rounds")
    return Rounds(sigma, tuple(f.tolist()), tuple(sig.tolist()), tuple(dlt.tolist()), thr, gam)


#: what a rounds calibration's rho and Gamma are: the last round's, as every view shows them (``traits.rounds_view``)
LAST_ROUND_NOTE = (
    "rho (and Gamma where the rounds have cutoffs) are the last round's T_I (Gamma_I), the headline the app and the "
    "report show; round i uses threshold_i[i] (gamma_i[i]), and the report lists every round under rounds"
)


@dataclass(frozen=True, kw_only=True)
class RoundsDetails(Details):
    """The calibration details of the rounds mechanisms (DP-SIPS; Policy DP-SIPS adds the delta split, the cutoffs
    Gamma_i and, when tuned, what the split was tuned for). The export's keys are these field names."""

    l2_sensitivity: float = 1.0
    mu_gdp: float
    rho_zcdp: float
    noise_share: float | None = optional()  # Policy DP-SIPS: the delta split
    delta_noise: float | None = optional()
    delta_thresholds: float
    delta_conversion: float | None = optional()  # DP-SIPS: delta - delta_thresholds
    fraction_i: tuple[float, ...]
    sigma_i: tuple[float, ...]
    threshold_i: tuple[float, ...]
    rho_zcdp_i: tuple[float, ...] | None = optional()  # DP-SIPS
    delta_i: tuple[float, ...]
    gamma_i: tuple[float, ...] | None = optional()  # Policy DP-SIPS: the rounds' cutoffs
    tuned_for_users: int | None = optional()  # Policy DP-SIPS with delta_split "tuned"
    release_chance: float | None = optional()
    release_chance_half: float | None = optional()
    delta_zcdp: float | None = optional()  # Policy DP-SIPS: the ledger's delta (= delta_thresholds)
    composition: str
    threshold_note: str
    rounds_note: str | None = optional()

    def round_rows(self) -> tuple[RoundRow, ...]:
        """The rounds for display (``traits.rounds_view``)."""
        gam: Sequence[float | None] = self.gamma_i if self.gamma_i is not None else [None] * len(self.sigma_i)
        return tuple(
            RoundRow(i + 1, s, t, g, d, f)
            for i, (s, t, g, d, f) in enumerate(zip(self.sigma_i, self.threshold_i, gam, self.delta_i, self.fraction_i))
        )


def rounds_cost(d: RoundsDetails) -> ZcdpCost:
    """The ledger's cost of rounds composed as DP-SIPS composes them: round i is a Gaussian mechanism of noise
    sigma_i (rho_i = 1/(2 sigma_i^2)) plus its threshold event (delta_i); the rounds' rho add (still exactly
    Gaussian DP), and the threshold events add to at most delta_thresholds."""
    return gaussian_costs_sum([gaussian_zcdp(float(s)) for s in d.sigma_i], float(d.delta_thresholds))


def round_stages(r: Rounds | RoundsDetails, m_kept: int) -> tuple[Stage, ...]:
    """The utility preview's stages of rounds (a calibration's details, or ``build_rounds``'): +1/sqrt(m) per kept
    holder, up to round i's Gamma_i where the rounds have one (Policy DP-SIPS), released if any round's noisy
    weight passes T_i."""
    w = 1.0 / math.sqrt(m_kept)
    caps: Sequence[float | None] = r.gamma_i if r.gamma_i is not None else [None] * len(r.sigma_i)
    return tuple(
        Stage("gaussian", float(sig), float(thr), w, None if cap is None else float(cap), round=True)
        for sig, thr, cap in zip(r.sigma_i, r.threshold_i, caps)
    )


class RoundsMechanism(Mechanism):
    """What DP-SIPS and Policy DP-SIPS share as traits: the rounds' composition for the ledger, one noise scale,
    and the calibration shown as a table of rounds with the last round's figures as the headline."""

    family = "gaussian"

    @classmethod
    def privacy_cost(cls, cal: Calibration) -> ZcdpCost:
        """Round i is a Gaussian mechanism of noise sigma_i (rho_i = 1/(2 sigma_i^2)) plus its threshold event
        (delta_i); the rounds' rho add, and the threshold events add to at most delta_thresholds."""
        return rounds_cost(RoundsDetails.of(cal))

    @classmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        return scale_quantity(cal)

    @classmethod
    def calibration_view(cls, cal: Calibration) -> CalibrationView:
        return rounds_view(RoundsDetails.of(cal).round_rows())


class DpSips(RoundsMechanism):
    name, label = "dp-sips", "DP-SIPS (iterated weighted Gaussian)"
    param_names = ("max_items", "rounds", "ratio")
    summary = (
        "I rounds of weighted-Gaussian DPSU over all users at once, each without the items already released; "
        "round i gets the share r^(I-i) of the zCDP budget (Swanberg et al. 2023). Parallel: no user order."
    )
    order_free = True  # every round is one ``weighted_gaussian_step`` over all users

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        rounds = round_stages(RoundsDetails.of(cal), m_kept)
        return Stages(
            rounds,
            f"+1/√m per kept holder in each of {len(rounds)} rounds (each round samples afresh; the holder's other "
            "items assumed not yet released), released if any round passes its threshold",
        )

    def calibrate(self) -> Calibration:
        p = self.params
        sigma = gaussian_scale(self.epsilon, self.delta)  # (epsilon, delta/2) at l2-sensitivity 1, i.e. mu = 1/sigma
        rho_z = 1.0 / (2.0 * sigma * sigma)
        delta_thr = self.delta / 2.0
        r = build_rounds(sigma, delta_thr, p["max_items"], p["rounds"], p["ratio"], delta=self.delta)
        details = RoundsDetails(
            mu_gdp=1.0 / sigma,
            rho_zcdp=rho_z,
            delta_thresholds=delta_thr,
            delta_conversion=self.delta - delta_thr,
            fraction_i=r.fraction_i,
            sigma_i=r.sigma_i,
            threshold_i=r.threshold_i,
            rho_zcdp_i=tuple(f * rho_z for f in r.fraction_i),
            delta_i=r.delta_i,
            composition=(
                "rounds compose adaptively: the Gaussian parts are mu-GDP with mu^2 = sum_i 1/sigma_i^2 = "
                "1/sigma^2 = 2 rho_zcdp, (epsilon, delta/2)-DP; the threshold events add sum_i delta_i = delta/2"
            ),
            threshold_note=LAST_ROUND_NOTE,
            rounds_note="round i: remove released items, sample <= Delta0 per user, +1/sqrt(|kept|), "
            "release H_i + N(0, sigma_i^2) > T_i",
        )
        return self._calibration("gaussian", sigma, r.threshold_i[-1], details=details)

    def _release(self, corpus: EngineCorpus, rng: np.random.Generator, cal: Calibration, progress) -> ReleaseParts:
        d, m = RoundsDetails.of(cal), int(self.params["max_items"])

        def one_round(i: int, remaining: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
            sigma_i, t_i = d.sigma_i[i], d.threshold_i[i]
            ids, h = weighted_gaussian_step(corpus, rng, m, sigma_i, t_i, remaining)
            return ids, h, dict(sigma=sigma_i, threshold=t_i)

        return run_rounds(corpus.n_items, int(self.params["rounds"]), progress, "weighted-Gaussian step", one_round)


RoundStep = Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray, dict[str, Any]]]


def run_rounds(n_items: int, rounds: int, progress, what: str, one_round: RoundStep) -> ReleaseParts:
    """The round loop of DP-SIPS and Policy DP-SIPS: round i = 0..rounds-1 runs ``one_round(i, remaining)`` ->
    (released ids, the round's histogram H_i, its public parameters) over the items not yet released; released
    items never re-enter a later round. The release is the union of the rounds' releases."""
    remaining = np.ones(n_items, dtype=bool)
    released: list[np.ndarray] = []
    per_round: list[dict[str, Any]] = []
    histograms: list[np.ndarray] = []
    for i in range(rounds):
        progress_step(progress, i / rounds, f"round {i + 1} of {rounds}: {what} over all users")
        ids, h, public = one_round(i, remaining)
        remaining[ids] = False  # released items never re-enter a later round
        released.append(ids)
        histograms.append(h)
        per_round.append(dict(round=i + 1, **public, candidates=int(np.count_nonzero(h)), released=ids.size))
    progress_step(progress, 1.0, "done")
    note = (
        "NOT private: 'weights' is round 1's histogram H_1, 'round_weights' every round's H_i (items released in "
        "an earlier round at 0) and 'candidates' counts items with H_i > 0, all computed from the raw data (the "
        "released count per round is part of the private output)"
    )
    return ReleaseParts(
        np.concatenate(released).astype(np.int64),
        Diagnostics(
            weights=histograms[0] if histograms else None,
            extra={"rounds": per_round, "round_weights": histograms, "note": note},
        ),
    )
