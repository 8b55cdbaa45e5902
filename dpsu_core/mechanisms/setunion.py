"""Gopi et al. 2020: Count, Weighted and Policy set union, Laplace and Gaussian.

Each class keeps its calibration (noise scale, rho, Gamma) beside its update rule.
Count and Weighted are order-independent: one DPSU step each (``dpsu_step``, a single numba pass
that samples and adds). The two policy updates are sequential numba kernels over users in a uniformly
random order, sampling each row inline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numba
import numpy as np

from ..corpus.model import Corpus
from ..privacy.cost import LaplaceCost, ZcdpCost, gaussian_cost
from ..privacy.norms import add_down, descent_budget
from ..privacy.thresholds import (
    count_l2_sensitivity,
    cutoff,
    gaussian_scale,
    laplace_scale,
    rho_count_gaussian,
    rho_count_laplace,
    rho_weighted_gaussian,
    rho_weighted_laplace,
)
from .base import Diagnostics, Mechanism, ReleaseParts, noisy_threshold, progress_step
from .calibration import Calibration, Details, optional
from .dpsu_step import COUNT, WEIGHTED_GAUSSIAN, WEIGHTED_LAPLACE, weighted_histogram
from .sampling import OrderedRows, SamplingPlan, kept_positions, sampling_plan
from .seam import EngineCorpus
from .traits import Stages, one_stage, scale_quantity


@dataclass(frozen=True, kw_only=True)
class SetUnionDetails(Details):
    """The calibration details of Gopi et al.'s six: the sensitivity the noise is calibrated to (l1 for Laplace,
    l2 for Gaussian; the other is left unset)."""

    l1_sensitivity: float | None = optional()
    l2_sensitivity: float | None = optional()


# --------------------------------------------------------------------------- update rules
@numba.njit(cache=True, nogil=True)
def l1_step(h, items, sel, n, gamma, gaps, budget):
    """One user's l1-descent: the items below Gamma rise together with total l1 budget 1;
    an item stops at Gamma and the rest keep rising (sort the gaps, spend them in order)."""
    m = 0
    for j in range(n):
        g = gamma - h[items[sel[j]]]
        if g > 0.0:
            gaps[m] = g
            m += 1
    if m == 0:
        return
    g_sorted = gaps[:m]
    g_sorted.sort()
    raised = 0.0  # how far every still-rising item has risen
    k = m
    for j in range(m):
        step = g_sorted[j] - raised
        if step * k <= budget:
            budget -= step * k
            raised = g_sorted[j]
            k -= 1
        else:
            raised += budget / k
            break
    for j in range(n):
        u = items[sel[j]]
        if h[u] < gamma:
            v = add_down(h[u], raised)  # rises by at most ``raised``, whatever the size of h[u]
            h[u] = gamma if v > gamma else v


@numba.njit(cache=True, nogil=True)
def l2_step(h, items, sel, n, gamma, budget):
    """One user's l2-descent: g = Gamma - H on the user's items (never negative); Z = ||g||_2 / budget;
    if Z <= 1 every item goes to Gamma, else H += g / Z, added rounding down (``privacy.norms.add_down``)
    so no weight rises by more than its step for any Gamma. Shared by Policy Gaussian and Policy DP-SIPS."""
    z2 = 0.0
    for j in range(n):
        g = gamma - h[items[sel[j]]]
        if g > 0.0:
            z2 += g * g
    if z2 == 0.0:
        return
    z = math.sqrt(z2) / budget
    for j in range(n):
        u = items[sel[j]]
        g = gamma - h[u]
        if g > 0.0:
            if z <= 1.0:
                h[u] = gamma
            else:
                v = add_down(h[u], g / z)
                h[u] = gamma if v > gamma else v


@numba.njit(cache=True, nogil=True)
def _policy_pass(indptr, items, order, uniforms, max_items, longest, n_items, gamma, l1, budget):
    """Steps 2-3 fused: visit users in ``order``, sample each row inline (``kept_positions``, i.e.
    ``sample_in_place`` with the same uniforms as ``order_and_sample``) and apply the l1- or l2-descent
    step. No gathered copy."""
    h = np.zeros(n_items, dtype=np.float64)
    sel = np.empty(longest, dtype=np.int64)
    gaps = np.empty(longest, dtype=np.float64)
    ui = 0
    for r in range(order.shape[0]):
        n, ui = kept_positions(indptr, order[r], uniforms, ui, max_items, sel)
        if l1:
            l1_step(h, items, sel, n, gamma, gaps, budget)
        else:
            l2_step(h, items, sel, n, gamma, budget)
    return h


def _rows_pass(rows: OrderedRows, n_items: int, gamma: float, l1: bool) -> np.ndarray:
    n = rows.n_rows
    longest = int(np.diff(rows.indptr).max()) if n else 1
    return _policy_pass(
        rows.indptr,
        rows.items,
        np.arange(n, dtype=np.int64),
        np.zeros(0),
        0,
        max(longest, 1),
        n_items,
        float(gamma),
        l1,
        descent_budget(longest),
    )


def l1_descent_update(rows: OrderedRows, n_items: int, gamma: float) -> np.ndarray:
    """Policy Laplace update over users already ordered and sampled."""
    return _rows_pass(rows, n_items, gamma, True)


def l2_descent_update(rows: OrderedRows, n_items: int, gamma: float) -> np.ndarray:
    """Policy Gaussian update over users already ordered and sampled."""
    return _rows_pass(rows, n_items, gamma, False)


def policy_update(corpus: Corpus, plan: SamplingPlan, gamma: float, l1: bool) -> np.ndarray:
    """The same update straight from the corpus and a sampling plan (identical result, no copy)."""
    return _policy_pass(
        corpus.indptr,
        corpus.items,
        plan.order,
        plan.uniforms,
        plan.max_items,
        plan.longest,
        corpus.n_items,
        float(gamma),
        l1,
        descent_budget(plan.longest),
    )


# --------------------------------------------------------------------------- mechanisms
class _SetUnion(Mechanism):
    """Shared release path: order & sample, update, noisy threshold over items with weight > 0.

    Traits shared by the six: one noise (its scale displayed as is); a Gaussian one is a Gaussian mechanism
    at the calibration's l2-sensitivity plus the threshold's delta/2 (docs/algorithms.md §2, §8), a Laplace one
    is not zCDP-accounted."""

    param_names: ClassVar[tuple[str, ...]] = ("max_items",)
    shuffle: bool  # whether the users are visited in a uniformly random order
    #: the preview's rule: how one kept holder raises the item's weight (``_preview_weight``)
    preview_rule: ClassVar[str]

    @classmethod
    def privacy_cost(cls, cal: Calibration) -> ZcdpCost | None:
        if cal.noise != "gaussian":
            return None
        l2 = SetUnionDetails.of(cal).l2_sensitivity
        if l2 is None:  # pragma: no cover - programming error: every Gaussian one sets it
            raise ValueError(f"{cal.mechanism}: a Gaussian calibration without its l2-sensitivity")
        return gaussian_cost(cal.scale, cal.delta / 2.0, float(l2))

    @classmethod
    def laplace_cost(cls, cal: Calibration) -> LaplaceCost | None:
        """Laplace noise of scale Delta_1 / epsilon (rounded up) on the common items, the whole delta on the
        threshold event (docs/algorithms.md §2)."""
        return LaplaceCost(cal.epsilon, cal.delta) if cal.noise == "laplace" else None

    @classmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        return scale_quantity(cal)

    @classmethod
    def _preview_weight(cls, m_kept: int) -> float:
        raise NotImplementedError

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages | None:
        return one_stage(cal, cls._preview_weight(m_kept), cls.preview_rule, capped=cal.gamma is not None)

    def _histogram(self, corpus: EngineCorpus, rng: np.random.Generator, cal: Calibration) -> np.ndarray:
        raise NotImplementedError

    def _release(self, corpus: EngineCorpus, rng, cal, progress):
        progress_step(progress, 0.05, "sampling Δ0 items per user and building the weighted histogram")
        h = self._histogram(corpus, rng, cal)
        progress_step(progress, 0.9, "adding noise and thresholding")
        return ReleaseParts(noisy_threshold(h, rng, cal.noise, cal.scale, cal.rho), Diagnostics(weights=h))


class _OrderFree(_SetUnion):
    """Count and Weighted: one DPSU step (``dpsu_step``) with update power 0, 1 or 1/2. The update is a sum,
    invariant to the user order, so the users are not shuffled (a random-access pass over the whole CSR)."""

    shuffle = False
    order_free = True  # its only pass over the users is ``weighted_histogram``
    power: ClassVar[float]

    @classmethod
    def _preview_weight(cls, m_kept: int) -> float:
        if cls.power == COUNT:
            return 1.0
        return 1.0 / math.sqrt(m_kept) if cls.power == WEIGHTED_GAUSSIAN else 1.0 / m_kept

    def _histogram(self, corpus, rng, cal):
        return weighted_histogram(corpus, rng, self.params["max_items"], self.power)


class _CountPolicy(_OrderFree):
    power = COUNT
    preview_rule = "+1 per kept holder"


class _WeightedPolicy(_OrderFree):
    power: ClassVar[float]  # 1 for Laplace (l1 norm 1 per user), 1/2 for Gaussian (l2 norm 1 per user)


class _DescentPolicy(_SetUnion):
    param_names = ("max_items", "alpha")
    shuffle = True  # the descent updates depend on the user order
    order_free = False  # sequential: each user's step depends on the users before
    l1: ClassVar[bool]

    @classmethod
    def _preview_weight(cls, m_kept: int) -> float:
        # the descent when the holder's other items sit at the same weight: every item rises equally
        return 1.0 / m_kept if cls.l1 else 1.0 / math.sqrt(m_kept)

    def _histogram(self, corpus, rng, cal):
        plan = sampling_plan(corpus, rng, self.params["max_items"], shuffle=self.shuffle)
        return policy_update(corpus, plan, cal.gamma, l1=self.l1)


class CountLaplace(_CountPolicy):
    name, label, family = "count-laplace", "Count Laplace", "laplace"
    summary = "+1 per kept item; Laplace noise Δ0/ε (l1-sensitivity Δ0)."

    def calibrate(self):
        m = self.params["max_items"]
        scale = laplace_scale(self.epsilon, m)
        return self._calibration(
            "laplace", scale, rho_count_laplace(self.epsilon, self.delta, m), details=SetUnionDetails(l1_sensitivity=m)
        )


class CountGaussian(_CountPolicy):
    name, label, family = "count-gaussian", "Count Gaussian", "gaussian"
    summary = "+1 per kept item; Gaussian noise √Δ0·σ (l2-sensitivity √Δ0)."

    def calibrate(self):
        m = self.params["max_items"]
        return self._calibration(
            "gaussian",
            gaussian_scale(self.epsilon, self.delta, count_l2_sensitivity(m)),
            rho_count_gaussian(self.epsilon, self.delta, m),
            details=SetUnionDetails(l2_sensitivity=count_l2_sensitivity(m)),
        )


class WeightedLaplace(_WeightedPolicy):
    name, label, family = "weighted-laplace", "Weighted Laplace", "laplace"
    summary = "+1/|W| per kept item; Laplace noise 1/ε."
    power = WEIGHTED_LAPLACE
    preview_rule = "+1/m per kept holder"

    def calibrate(self):
        return self._calibration(
            "laplace",
            laplace_scale(self.epsilon),
            rho_weighted_laplace(self.epsilon, self.delta, self.params["max_items"]),
            details=SetUnionDetails(l1_sensitivity=1.0),
        )


class WeightedGaussian(_WeightedPolicy):
    name, label, family = "weighted-gaussian", "Weighted Gaussian", "gaussian"
    summary = "+1/√|W| per kept item; Gaussian noise σ (analytic, δ/2)."
    power = WEIGHTED_GAUSSIAN
    preview_rule = "+1/√m per kept holder"

    def calibrate(self):
        return self._calibration(
            "gaussian",
            gaussian_scale(self.epsilon, self.delta),
            rho_weighted_gaussian(self.epsilon, self.delta, self.params["max_items"]),
            details=SetUnionDetails(l2_sensitivity=1.0),
        )


class PolicyLaplace(_DescentPolicy):
    name, label, family = "policy-laplace", "Policy Laplace", "laplace"
    summary = "l1-descent toward Γ = ρ + α/ε; Laplace noise 1/ε."
    l1 = True
    preview_rule = "+1/m per kept holder, up to Γ, the holder's other items sitting at the same weight as this one"

    def calibrate(self):
        scale = laplace_scale(self.epsilon)
        rho = rho_weighted_laplace(self.epsilon, self.delta, self.params["max_items"])
        return self._calibration(
            "laplace", scale, rho, cutoff(rho, self.params["alpha"], scale), details=SetUnionDetails(l1_sensitivity=1.0)
        )


class PolicyGaussian(_DescentPolicy):
    name, label, family = "policy-gaussian", "Policy Gaussian", "gaussian"
    summary = "l2-descent toward Γ = ρ + ασ; Gaussian noise σ (analytic, δ/2)."
    l1 = False
    preview_rule = "+1/√m per kept holder, up to Γ, the holder's other items sitting at the same weight as this one"

    def calibrate(self):
        scale = gaussian_scale(self.epsilon, self.delta)
        rho = rho_weighted_gaussian(self.epsilon, self.delta, self.params["max_items"])
        return self._calibration(
            "gaussian",
            scale,
            rho,
            cutoff(rho, self.params["alpha"], scale),
            details=SetUnionDetails(l2_sensitivity=1.0),
        )
