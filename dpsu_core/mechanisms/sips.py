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
from collections.abc import Callable
from typing import Any

import numpy as np

from ..privacy.cost import ZcdpCost, gaussian_costs_sum
from ..privacy.gaussian import round_down_shares, round_up_composition
from ..privacy.thresholds import gaussian_scale, rho_weighted_gaussian_sigma
from ..privacy.validate import check_fraction, check_positive_int
from ..privacy.zcdp import gaussian_zcdp
from .base import Calibration, Diagnostics, Mechanism, ReleaseParts, progress_step
from .dpsu_step import weighted_gaussian_step
from .seam import EngineCorpus
from .traits import Stage, Stages, scale_quantity


def round_fractions(rounds: int, ratio: float) -> np.ndarray:
    """f_i proportional to r^(I-i), i = 1..I, summing to 1 (the last round gets the largest share)."""
    rounds = check_positive_int(rounds, "rounds I", "e.g. 3")
    r = check_fraction(ratio, "ratio r", open_high=False)
    w = np.power(r, np.arange(rounds - 1, -1, -1, dtype=np.float64))
    return w / w.sum()


def round_calibration(epsilon: float, delta: float, max_items: int, rounds: int, ratio: float) -> dict[str, Any]:
    """Per-round sigma_i, T_i, rho_i, delta_i of DP-SIPS (public: parameters only)."""
    sigma = gaussian_scale(epsilon, delta)  # (epsilon, delta/2) at l2-sensitivity 1, i.e. mu = 1/sigma
    rho_z = 1.0 / (2.0 * sigma * sigma)
    delta_thr = delta / 2.0
    f = round_fractions(rounds, ratio)
    # rounded to the private side, checked in exact arithmetic: sum_i 1/sigma_i^2 <= 1/sigma^2 (sigma_i up) and
    # sum_i delta_i <= delta_thr (delta_i down), whatever the float rounding of the shares f_i
    sig = round_up_composition(sigma / np.sqrt(f), sigma)
    delta_i = round_down_shares(delta_thr, f)
    thr = [rho_weighted_gaussian_sigma(float(s), max_items, delta_threshold=float(d)) for s, d in zip(sig, delta_i)]
    return {
        "sigma": sigma,
        "mu_gdp": 1.0 / sigma,
        "rho_zcdp": rho_z,
        "delta_thresholds": delta_thr,
        "delta_conversion": delta - delta_thr,
        "fraction_i": f.tolist(),
        "sigma_i": sig.tolist(),
        "threshold_i": thr,
        "rho_zcdp_i": (f * rho_z).tolist(),
        "delta_i": delta_i.tolist(),
    }


def rounds_cost(details: dict[str, Any]) -> ZcdpCost:
    """The ledger's cost of rounds composed as DP-SIPS composes them: round i is a Gaussian mechanism of noise
    sigma_i (rho_i = 1/(2 sigma_i^2)) plus its threshold event (delta_i); the rounds' rho add (still exactly
    Gaussian DP), and the threshold events add to at most delta_thresholds."""
    return gaussian_costs_sum([gaussian_zcdp(float(s)) for s in details["sigma_i"]], float(details["delta_thresholds"]))


def round_stages(details: dict[str, Any], m_kept: int) -> tuple[Stage, ...]:
    """The utility preview's stages of rounds (a calibration's details, or ``round_calibration``'s): +1/sqrt(m)
    per kept holder, up to round i's Gamma_i where the rounds have one (Policy DP-SIPS), released if any
    round's noisy weight passes T_i."""
    w = 1.0 / math.sqrt(m_kept)
    caps = details.get("gamma_i") or [None] * len(details["sigma_i"])
    return tuple(
        Stage("gaussian", float(sig), float(thr), w, None if cap is None else float(cap), round=True)
        for sig, thr, cap in zip(details["sigma_i"], details["threshold_i"], caps)
    )


class DpSips(Mechanism):
    name, label, family = "dp-sips", "DP-SIPS (iterated weighted Gaussian)", "gaussian"
    param_names = ("max_items", "rounds", "ratio")
    summary = (
        "I rounds of weighted-Gaussian DPSU over all users at once, each without the items already released; "
        "round i gets the share r^(I-i) of the zCDP budget (Swanberg et al. 2023). Parallel: no user order."
    )
    order_free = True  # every round is one ``weighted_gaussian_step`` over all users

    @classmethod
    def privacy_cost(cls, cal: Calibration) -> ZcdpCost:
        """Its own composition: round i is a Gaussian mechanism of noise sigma_i (rho_i = 1/(2 sigma_i^2)) plus its
        threshold event (delta_i); the rounds' rho add, and the threshold events add to at most delta_thresholds."""
        return rounds_cost(cal.details)

    @classmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        return scale_quantity(cal)

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        rounds = round_stages(cal.details, m_kept)
        return Stages(
            rounds,
            f"+1/√m per kept holder in each of {len(rounds)} rounds (each round samples afresh; the holder's other "
            "items assumed not yet released), released if any round passes its threshold",
        )

    def calibrate(self) -> Calibration:
        p = self.params
        rc = round_calibration(self.epsilon, self.delta, p["max_items"], p["rounds"], p["ratio"])
        sigma = rc.pop("sigma")
        return self._calibration(
            "gaussian",
            sigma,
            rc["threshold_i"][0],
            l2_sensitivity=1.0,
            **rc,
            composition=(
                "rounds compose adaptively: the Gaussian parts are mu-GDP with mu^2 = sum_i 1/sigma_i^2 = "
                "1/sigma^2 = 2 rho_zcdp, (epsilon, delta/2)-DP; the threshold events add sum_i delta_i = delta/2"
            ),
            threshold_note="rho shown is round 1's threshold T_1; round i uses threshold_i[i]",
            rounds_note="round i: remove released items, sample <= Delta0 per user, +1/sqrt(|kept|), "
            "release H_i + N(0, sigma_i^2) > T_i",
        )

    def _release(self, corpus: EngineCorpus, rng: np.random.Generator, cal: Calibration, progress) -> ReleaseParts:
        d, m = cal.details, int(self.params["max_items"])

        def one_round(i: int, remaining: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
            sigma_i, t_i = float(d["sigma_i"][i]), float(d["threshold_i"][i])
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
    first_h: np.ndarray | None = None
    for i in range(rounds):
        progress_step(progress, i / rounds, f"round {i + 1} of {rounds}: {what} over all users")
        ids, h, public = one_round(i, remaining)
        remaining[ids] = False  # released items never re-enter a later round
        released.append(ids)
        if first_h is None:
            first_h = h
        per_round.append(dict(round=i + 1, **public, candidates=int(np.count_nonzero(h)), released=ids.size))
    progress_step(progress, 1.0, "done")
    note = (
        "NOT private: 'weights' is round 1's histogram H_1 and 'candidates' counts items with H_i > 0, both "
        "computed from the raw data (the released count per round is part of the private output)"
    )
    return ReleaseParts(
        np.concatenate(released).astype(np.int64),
        Diagnostics(weights=first_h, extra={"rounds": per_round, "note": note}),
    )
