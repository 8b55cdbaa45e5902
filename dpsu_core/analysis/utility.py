"""Utility preview from public numbers: how many users an item needs before it is likely to be released.

Computed from the calibration alone (noise, threshold, cutoff) and one public assumption the analyst types:
``items_per_user`` m, the number of distinct items each user holding the item has. Nothing is read from data.

The model (exact under its assumptions, which ``Preview.assumptions`` states in words):
  * k users hold the item; each holds m distinct items (m <= Delta0: all kept; m > Delta0: each keeps
    Delta0 of them uniformly, so the item is kept by j ~ Binomial(k, Delta0/m) of them).
  * Per kept holder, the item's weight rises by w: Count 1; Weighted and Policy Laplace 1/min(m, Delta0);
    Weighted and Policy Gaussian, DPNE (1-grams) and the DPSU baselines 1/sqrt(min(m, Delta0)). For the
    policy mechanisms this is their update rule when the holder's other items sit at the same weight (the
    l1 / l2 descent then raises every item equally); the weight stops at Gamma.
    GW / GW-KT: the item comes first in every holder's order (their most frequent item, or the most common
    public word) and gets a full unit of budget from each, up to Gamma: the best case for that item.
  * The item is released if weight + noise passes the threshold (every stage, for mechanisms with several).
So P(release | k) = sum_j Binomial(j; k, q) * prod_stages P(min(j w, Gamma) + Z > threshold).
Each mechanism class declares its own stages and rule (``Mechanism.preview_stages``); one that cannot be
previewed from its parameters (PCR: it ranks items against each other) says why (``no_preview_reason``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..mechanisms.base import Calibration
from ..mechanisms.registry import mechanism_class
from ..mechanisms.traits import Stage, highest_chance, stages_release_probability, users_for_chance
from ..privacy.validate import check_max_items

__all__ = [
    "Preview",
    "Stage",
    "has_preview",
    "highest_chance",
    "release_probability",
    "stages_release_probability",
    "users_for_chance",
    "utility_preview",
]

TARGETS = (0.5, 0.9)


@dataclass(frozen=True)
class Preview:
    mechanism: str
    items_per_user: int
    keep_probability: float  # q = min(1, Delta0 / m)
    stages: tuple[Stage, ...]
    users_needed: dict[float, int | None]  # target probability -> smallest k (None: never reached)
    ceiling: float  # the release probability as k grows without bound
    assumptions: str

    def curve(self, k_max: int | None = None, points: int = 200):
        """(users, release probability) for plotting, from 1 to a bit beyond the 90% point."""
        import pandas as pd

        top = k_max or int(1.5 * max([v for v in self.users_needed.values() if v] or [10])) + 2
        ks = np.unique(np.linspace(1, top, min(points, top)).round().astype(np.int64))
        return pd.DataFrame({"users": ks, "probability": [release_probability(self, int(k)) for k in ks]})


def release_probability(preview: Preview, k: int) -> float:
    """P(the item is released | k users hold it) under the preview's assumptions."""
    return stages_release_probability(preview.stages, k, preview.keep_probability)


def has_preview(mechanism: str) -> bool:
    """Is there a preview for this mechanism? (Every one that declares no ``no_preview_reason``: all but PCR.)"""
    return mechanism_class(mechanism).no_preview_reason is None


def utility_preview(cal: Calibration, items_per_user: int | None = None) -> Preview:
    """Users an item needs for a 50% and a 90% chance of release, from the calibration and ``items_per_user``."""
    cls = mechanism_class(cal.mechanism)
    delta0 = cls.preview_max_items(cal)
    m = check_max_items(items_per_user if items_per_user is not None else max(delta0, 1), "items per user")
    kept = min(m, delta0) if delta0 else m
    q = 1.0 if cls.preview_first_in_order or not delta0 or m <= delta0 else delta0 / m
    declared = cls.preview_stages(cal, kept)
    if declared is None:
        raise ParameterError(f"no utility preview for {cal.label}: {cls.no_preview_reason or 'not modelled'}")
    stages, rule = declared.stages, declared.rule
    cap_note = (
        " The weight stops at the cutoff Γ, so the chance of release never exceeds "
        f"{highest_chance(stages, q):.4g} however many users hold the item."
        if any(s.cap is not None for s in stages)
        else ""
    )
    sampling = (
        f"Each holder has m = {m} distinct items and keeps Δ0 = {delta0} of them at random, so keeps this one "
        f"with probability {q:.3g}."
        if q < 1.0
        else f"Each holder has m = {m} distinct item{'s' if m != 1 else ''} (all kept)."
    )
    text = (
        f"Assumptions: {sampling} The item's weight grows by {rule}"
        + ". Noise and threshold: "
        + "; ".join(f"{st.noise} with scale {st.scale:.4g}, threshold {st.threshold:.4g}" for st in stages)
        + "."
        + cap_note
        + (f" {declared.note}" if declared.note else "")
        + " Computed from the parameters only (no data): it describes the mechanism, not your corpus."
    )
    prev = Preview(
        mechanism=cal.mechanism,
        items_per_user=m,
        keep_probability=q,
        stages=stages,
        users_needed={},
        ceiling=highest_chance(stages, q),
        assumptions=text,
    )
    needed = {t: users_for_chance(stages, q, t) for t in TARGETS}
    return Preview(**{**prev.__dict__, "users_needed": needed})
