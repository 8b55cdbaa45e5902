"""Private Count Release (Rogers 2024) and the bounded-counts ("Plume"-style) baseline it is compared with.

Both release items together with noisy distinct-user counts (kind = "count").

PCR (docs/algorithms.md §6; the paper's Algorithms 1 and 2)
    Counts are distinct-user counts: a user adds at most 1 to an item (l_inf = 1) and may touch any number
    of items (l0 unbounded); nothing is bounded or sampled. A privacy filter runs Unknown Domain Gumbel
    top-1 from top-(kbar+1) repeatedly: with beta = 1/eps_i and T = 1 + beta ln(kbar/delta_*), the step is
    delta_*-approximate (eps_i^2/8)-zCDP. On bottom eps_i grows by sqrt(2); on a hit the item's count is
    released with N(0, s^2), s = max((r/1.5)(1 + ln(kbar/delta_*)/eps_i), 2/eps_i), costing 1/(2 s^2) <=
    eps_i^2/8, and the item leaves the candidates. The loop runs while rho_spent + eps_i^2/4 <= rho_z and
    delta_spent + delta_* <= delta_z, so it never overspends (Whitehouse et al. filter, the paper's Thm 5).
    The user's (epsilon, delta) becomes (rho_z, delta_z) through ``privacy.zcdp.approx_zcdp_budget``:
    delta_z = delta/2 for the Gumbel steps, delta' = delta/2 for the conversion, rho_z the largest rho with
    rho + 2 sqrt(rho ln(1/delta')) = epsilon.
    delta_*: the paper's default 1e-11 lets delta stop the filter after delta_z/1e-11 steps (5 steps at
    delta = 1e-10). By default dpsu derives it from delta alone: delta_* = delta_z / PCR_STEP_CAP, the most steps
    any release can need (10^7 released items plus the bottoms eps_i can take before the zCDP budget ends it), so
    rho, not delta, decides when the filter stops, and the count noise std does not grow with epsilon
    (docs/algorithms.md §6); ``--delta-star`` overrides.
    The calibration names the Gumbel scale 1/eps_* and the count noise std s separately.

Bounded counts (the paper's "Plume" baseline, section 1)
    Bound each user to Delta0 items (uniform sample), discover the domain D with weighted-Gaussian DPSU,
    restrict the original data to D, bound again to Delta0, and add Gaussian noise to the distinct-user
    counts (l2-sensitivity sqrt(Delta0)). Budget: half to each stage, as in the paper's experiments
    (alpha = 0.5): selection at (eps/2, delta/2), counts at (eps/2, delta/2); basic composition gives
    (eps, delta). Optionally keep only noisy counts above T = (2 + r) s / r.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction

import numba
import numpy as np

from ..errors import ParameterError
from ..privacy.cost import ZcdpCost, gaussian_costs_sum
from ..privacy.gaussian import analytic_gaussian_sigma, lower_until
from ..privacy.thresholds import count_l2_sensitivity, gaussian_scale, rho_weighted_gaussian
from ..privacy.validate import check_fraction, check_max_items
from ..privacy.zcdp import approx_zcdp_budget, check_rho, gaussian_zcdp
from .base import Diagnostics, Mechanism, ReleaseParts, guarantee_sentence, progress_step
from .calibration import Calibration, Details
from .dpsu_step import COUNT, weighted_gaussian_step, weighted_histogram
from .traits import Stage, Stages

RHO_LOOP_MARGIN = 1.0 - 2.0**-30

# The paper's constant: s is chosen so that c + 1.5 s <= (1 + r) c for counts c near the threshold.
PCR_SIGMA_CONSTANT = 1.5


# --------------------------------------------------------------------------- formulas
def log_kbar_over_delta_star(kbar: int, delta_star: float) -> float:
    """ln(kbar/delta_*), in logs: kbar/delta_* itself overflows for a subnormal delta_*."""
    return math.log(kbar) - math.log(delta_star)


def gumbel_threshold(eps_i: float, kbar: int, delta_star: float) -> float:
    """T = 1 + (1/eps_i) ln(kbar/delta_*): Unknown Domain Gumbel's threshold (Rogers 2024, Theorem 4)."""
    return 1.0 + log_kbar_over_delta_star(kbar, delta_star) / eps_i


def gumbel_step_rho(eps_i: float) -> float:
    """zCDP cost of one top-1 Unknown Domain Gumbel step with beta = 1/eps_i: eps_i^2 / 8."""
    return eps_i * eps_i / 8.0


def pcr_count_sigma(eps_i: float, kbar: int, delta_star: float, rel_error: float) -> float:
    """s = max((r/1.5)(1 + ln(kbar/delta_*)/eps_i), 2/eps_i): the paper's equation (2), kept >= 2/eps_i
    so that the Gaussian step costs at most eps_i^2/8."""
    s = (rel_error / PCR_SIGMA_CONSTANT) * (1.0 + log_kbar_over_delta_star(kbar, delta_star) / eps_i)
    return max(s, 2.0 / eps_i)


#: The most Gumbel steps any release can need: every hit releases a distinct item and leaves the candidates
#: (PCR_MAX_HITS of them), and a bottom multiplies eps_i by sqrt(2), so between eps_* >= 1e-9 (its lower bound)
#: and the loop's end (eps_i^2/4 > rho_z, rho_z < epsilon <= 1e300) there are fewer than 1,100 bottoms.
PCR_MAX_HITS = 10_000_000
PCR_MAX_BOTTOMS = 1_100
PCR_STEP_CAP = PCR_MAX_HITS + PCR_MAX_BOTTOMS


def max_gumbel_steps(rho_z: float, eps_star: float) -> int:
    """The largest number of Gumbel steps the zCDP budget rho_z allows, at most ``PCR_STEP_CAP``: every step costs
    at least eps_*^2/8 (eps_i only grows) and one more step needs eps_i^2/4 of room, so after k steps
    k eps_*^2/8 + eps_*^2/4 <= rho_z, i.e. at most floor(8 rho_z/eps_*^2) - 1 steps. Compared in logs: the ratio
    overflows a float at large epsilon and small eps_*."""
    log_ratio = math.log(8.0) + math.log(rho_z) - 2.0 * math.log(eps_star)
    if log_ratio >= math.log(PCR_STEP_CAP + 1.0):
        return PCR_STEP_CAP
    return max(1, min(PCR_STEP_CAP, math.floor(math.exp(log_ratio) * (1.0 + 1e-12)) - 1))


def steps_delta_allows(delta_z: float, delta_star: float) -> int:
    """floor(delta_z / delta_*), the Gumbel steps the delta budget allows, at most ``PCR_STEP_CAP`` (in logs: the
    quotient overflows for a tiny given delta_*)."""
    if math.log(delta_z) - math.log(delta_star) >= math.log(PCR_STEP_CAP + 1.0):
        return PCR_STEP_CAP
    return min(PCR_STEP_CAP, int(math.floor(delta_z / delta_star)))


def default_delta_star(delta_z: float) -> float:
    """delta_* = delta_z / PCR_STEP_CAP, rounded down so that PCR_STEP_CAP * delta_* <= delta_z holds exactly.

    A function of delta alone: the count noise std s and the Gumbel threshold grow with ln(1/delta_*), so a delta_*
    that shrank as epsilon grows (delta_z over the steps rho_z allows, the earlier rule) made both grow with epsilon,
    and overflow at epsilon near 1e300. With the cap, delta never stops the filter before a corpus's last item (at
    most PCR_MAX_HITS hits plus the bottoms), rho does; s does not depend on epsilon at all."""
    dz = check_fraction(delta_z, "delta_z (the Gumbel steps' delta)")
    d = lower_until(dz / PCR_STEP_CAP, lambda x: Fraction(x) * PCR_STEP_CAP <= Fraction(dz))
    if d < sys.float_info.min:  # subnormal: ln(1/delta_*) loses precision, and delta is far below any use
        raise ParameterError(
            f"delta = {2 * dz:.3g} is too small for PCR's derived delta_star (delta/2 over {PCR_STEP_CAP:,} Gumbel "
            f"steps is below {sys.float_info.min:.3g}); raise delta or give --delta-star"
        )
    return d


def relative_error_threshold(sigma: float, rel_error: float) -> float:
    """T = (2 + r) s / r: noisy counts above it have relative error below r with high probability."""
    return (2.0 + rel_error) * sigma / rel_error


# --------------------------------------------------------------------------- the filter loop
@dataclass(frozen=True)
class PcrLedger:
    """The filter's own record, one row per Gumbel step. ``position`` is -1 for bottom, else the released
    candidate's index into the counts given to ``private_count_release``; ``sigma`` and ``noisy`` are NaN
    for bottom. Spends are in zCDP units (rho) and delta. Contains candidate indices: NOT for export."""

    eps: np.ndarray
    threshold: np.ndarray  # T = 1 + ln(kbar/delta_*)/eps_i, before adding c_(kbar+1) and the Gumbel noise
    position: np.ndarray
    sigma: np.ndarray
    noisy: np.ndarray
    rho_spent: float
    delta_spent: float
    stop_reason: str  # "budget" or "no candidates left"

    @property
    def n_steps(self) -> int:
        return int(self.eps.shape[0])

    @property
    def n_bottom(self) -> int:
        return int(np.count_nonzero(self.position < 0))


@numba.njit(cache=True, nogil=True)
def _pcr_loop(sorted_c, kbar, rho, delta, eps_star, delta_star, rel_error, rng):
    """Algorithm 2 over candidates sorted by descending count (positions 0..n-1). The window holds the
    positions of the kbar largest remaining counts; position ``nxt`` is the (kbar+1)-th (count 0 past the end)."""
    n = sorted_c.shape[0]
    m = min(kbar, n)
    win = np.arange(m)
    nxt = m
    log_term = math.log(kbar) - math.log(delta_star)  # in logs: kbar / delta_star may overflow
    eps = eps_star
    rho_spent = 0.0
    delta_spent = 0.0
    cap = 64
    r_eps = np.empty(cap)
    r_thr = np.empty(cap)
    r_pos = np.empty(cap, dtype=np.int64)
    r_sig = np.empty(cap)
    r_noisy = np.empty(cap)
    k = 0
    exhausted = False
    while rho_spent + eps * eps / 4.0 <= rho and delta_spent + delta_star <= delta:
        if m == 0:
            # every further step would return bottom with certainty: the output is already final
            exhausted = True
            break
        if k == cap:
            cap *= 2
            r_eps = _grow(r_eps, cap)
            r_thr = _grow(r_thr, cap)
            r_pos = _grow_int(r_pos, cap)
            r_sig = _grow(r_sig, cap)
            r_noisy = _grow(r_noisy, cap)
        beta = 1.0 / eps
        thr = 1.0 + beta * log_term
        c_next = sorted_c[nxt] if nxt < n else 0.0
        # Gumbel(beta) = -beta ln(E), E ~ Exp(1)
        t_noisy = thr + c_next - beta * math.log(rng.standard_exponential())
        best = -np.inf
        bj = -1
        for j in range(m):
            v = sorted_c[win[j]] - beta * math.log(rng.standard_exponential())
            if v > best:
                best = v
                bj = j
        rho_spent += eps * eps / 8.0
        delta_spent += delta_star
        r_eps[k] = eps
        r_thr[k] = thr
        if best > t_noisy:
            s = (rel_error / 1.5) * (1.0 + log_term / eps)
            if s < 2.0 / eps:
                s = 2.0 / eps
            p = win[bj]
            r_pos[k] = p
            r_sig[k] = s
            r_noisy[k] = sorted_c[p] + rng.normal(0.0, s)
            rho_spent += 1.0 / (2.0 * s * s)
            if nxt < n:
                win[bj] = nxt
                nxt += 1
            else:
                win[bj] = win[m - 1]
                m -= 1
        else:
            r_pos[k] = -1
            r_sig[k] = np.nan
            r_noisy[k] = np.nan
            eps *= math.sqrt(2.0)
        k += 1
    return r_eps[:k], r_thr[:k], r_pos[:k], r_sig[:k], r_noisy[:k], rho_spent, delta_spent, exhausted


@numba.njit(cache=True, nogil=True)
def _grow(a, cap):
    b = np.empty(cap, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@numba.njit(cache=True, nogil=True)
def _grow_int(a, cap):
    b = np.empty(cap, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@dataclass(frozen=True)
class PcrResult:
    positions: np.ndarray  # released indices into the counts given (int64), in release order
    noisy_counts: np.ndarray  # unrounded count + N(0, s^2)
    sigma: np.ndarray  # s of each released count
    ledger: PcrLedger


def private_count_release(
    counts: np.ndarray,
    rng: np.random.Generator,
    *,
    rho: float,
    delta: float,
    eps_star: float,
    delta_star: float,
    kbar: int,
    rel_error: float,
) -> PcrResult:
    """Run PCR's filter over a histogram of distinct-user counts (l_inf = 1). ``rho``/``delta``: the
    approximate-zCDP budget (rho_z, delta_z). Items with count 0 are never candidates.

    Ties in the ranking are broken by i.i.d. uniform keys, i.e. by a uniformly random total order that
    does not depend on the data.
    """
    rho = check_rho(rho, "rho (the zCDP budget)")
    delta = check_fraction(delta, "delta (the approximate-zCDP budget)", open_high=False)
    eps_star = check_rho(eps_star, "eps_star")
    delta_star = check_fraction(delta_star, "delta_star")
    kbar = check_max_items(kbar, "kbar")
    rel_error = check_fraction(rel_error, "rel_error")
    c = np.asarray(counts)
    if c.ndim != 1 or (c.size and (not np.all(np.isfinite(c)) or c.min() < 0)):
        raise ParameterError("counts must be a 1-D array of non-negative numbers; pass corpus.user_counts")
    cand = np.flatnonzero(c > 0)
    keys = rng.random(cand.size)
    order = cand[np.lexsort((keys, -c[cand]))]
    sorted_c = c[order].astype(np.float64)
    # The loop adds the steps' costs in floats: its rho budget is taken 2^-30 (relative) below rho_z, which
    # covers the rounding of up to ~10^6 additions, so the exact spend never exceeds rho_z.
    eps_, thr, pos, sig, noisy, rho_spent, delta_spent, exhausted = _pcr_loop(
        sorted_c,
        int(kbar),
        float(rho) * RHO_LOOP_MARGIN,
        float(delta),
        float(eps_star),
        float(delta_star),
        float(rel_error),
        rng,
    )
    ledger_pos = np.where(pos >= 0, order[np.maximum(pos, 0)] if order.size else -1, -1).astype(np.int64)
    ledger = PcrLedger(
        eps=eps_,
        threshold=thr,
        position=ledger_pos,
        sigma=sig,
        noisy=noisy,
        rho_spent=float(rho_spent),
        delta_spent=float(delta_spent),
        stop_reason="no candidates left" if exhausted else "budget",
    )
    hit = ledger_pos >= 0
    return PcrResult(positions=ledger_pos[hit], noisy_counts=noisy[hit], sigma=sig[hit], ledger=ledger)


def round_counts(noisy: np.ndarray) -> np.ndarray:
    """Post-processing of noisy counts: round to integers and clip at 0 (a distinct-user count is never negative)."""
    return np.maximum(np.rint(np.asarray(noisy, dtype=np.float64)), 0.0).astype(np.int64)


# --------------------------------------------------------------------------- mechanisms
@dataclass(frozen=True, kw_only=True)
class PcrDetails(Details):
    """PCR's calibration details: its approximate-zCDP budget, the Gumbel steps' delta_* and scale, the first
    step's threshold and count noise (the export's keys are these field names)."""

    accounting: str
    rho_zcdp: float
    delta_zcdp: float
    delta_conversion: float
    delta_total: float
    delta_split: str
    epsilon_from_rho: float
    delta_star: float
    delta_star_rule: str
    max_gumbel_steps: int
    gumbel_scale: float
    count_noise_std_first: float
    gumbel_step_rho: str
    gaussian_step_rho: str
    first_threshold: float
    sensitivity: str


@dataclass(frozen=True, kw_only=True)
class BoundedCountsDetails(Details):
    """Bounded counts' calibration details: the budget split between partition selection and the counts, each
    part's noise, and the optional relative-error threshold on the counts (None: off)."""

    budget_split: str
    selection: str
    selection_epsilon: float
    selection_delta: float
    selection_sigma: float
    selection_rho: float
    count_epsilon: float
    count_delta: float
    count_sigma: float
    count_l2_sensitivity: float
    count_zcdp_rho: float
    count_threshold: float | None


class _CountMechanism(Mechanism):
    """Count mechanisms release (item, noisy count, std): ``_release`` fills ``noisy_counts`` and ``count_std``."""

    kind = "count"
    output_noun = "set of released items with their noisy counts"


class PrivateCountRelease(_CountMechanism):
    name, label, family = "pcr", "PCR (Private Count Release)", "gumbel"
    summary = (
        "Unknown Domain Gumbel top-1 inside a zCDP privacy filter, then a Gaussian count per item; "
        "no bound on items per user."
    )
    param_names = ("kbar", "rel_error", "eps_star", "delta_star")
    order_free = False  # the privacy filter is one sequential loop on the driver
    no_preview_reason = (
        "PCR ranks items against each other, so an item's chance depends on the other items' counts, "
        "not on the parameters alone"
    )

    @classmethod
    def privacy_cost(cls, cal: Calibration) -> ZcdpCost:
        """delta_zcdp-approximate rho_zcdp-zCDP by construction (its filter never spends more); the Gumbel steps
        are not Gaussian mechanisms, so no Gaussian-DP part."""
        d = PcrDetails.of(cal)
        return ZcdpCost(float(d.rho_zcdp), float(d.delta_zcdp), None)

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> None:
        return None

    @classmethod
    def calibration_notes(cls, cal: Calibration) -> list[tuple[str, str]]:
        """The delta_* the filter uses, and whether it was derived or given."""
        d = PcrDetails.of(cal)
        return [("delta_star used", f"{d.delta_star:.6g} ({d.delta_star_rule})")]

    @classmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        d = PcrDetails.of(cal)
        return [
            ("Gumbel scale (1/ε*)", float(d.gumbel_scale)),
            ("Count noise std (1st step)", float(d.count_noise_std_first)),
        ]

    def calibrate(self) -> Calibration:
        p = self.params
        budget = approx_zcdp_budget(self.epsilon, self.delta)
        eps_star, kbar, r = p["eps_star"], p["kbar"], p["rel_error"]
        derived = p["delta_star"] == 0.0
        delta_star = default_delta_star(budget.delta_zcdp) if derived else p["delta_star"]
        if eps_star * eps_star / 4.0 > budget.rho:
            raise ParameterError(
                f"eps_star = {eps_star:g} is too large for epsilon = {self.epsilon:g}: one step costs up to "
                f"eps_star^2/4 = {eps_star**2 / 4:.3g} zCDP but the whole budget is rho = {budget.rho:.3g}; "
                f"lower eps_star below {2 * math.sqrt(budget.rho):.3g} or raise epsilon"
            )
        if delta_star > budget.delta_zcdp:
            raise ParameterError(
                f"delta_star = {delta_star:g} exceeds the Gumbel steps' delta budget delta/2 = {budget.delta_zcdp:.3g}; "
                f"lower delta_star (e.g. 1e-11) or raise delta"
            )
        t1 = gumbel_threshold(eps_star, kbar, delta_star)
        s1 = pcr_count_sigma(eps_star, kbar, delta_star, r)
        details = PcrDetails(
            accounting="approximate zCDP with a privacy filter (Rogers 2024, Theorems 4-6)",
            rho_zcdp=budget.rho,
            delta_zcdp=budget.delta_zcdp,
            delta_conversion=budget.delta_conversion,
            delta_total=budget.delta_zcdp + budget.delta_conversion,
            delta_split=(
                "delta/2 is the approximate-zCDP delta spent by the Gumbel steps (delta_* each); "
                "delta/2 is the delta' of the conversion rho + 2 sqrt(rho ln(1/delta'))"
            ),
            epsilon_from_rho=budget.rho + 2.0 * math.sqrt(budget.rho * math.log(1.0 / budget.delta_conversion)),
            delta_star=delta_star,
            delta_star_rule=(
                f"derived: delta_zcdp / {PCR_STEP_CAP:,} (the most Gumbel steps a release can need)"
                if derived
                else "given"
            ),
            max_gumbel_steps=min(
                steps_delta_allows(budget.delta_zcdp, delta_star), max_gumbel_steps(budget.rho, eps_star)
            ),
            gumbel_scale=1.0 / eps_star,
            count_noise_std_first=s1,
            gumbel_step_rho="eps_i^2/8 per step; delta_* per step",
            gaussian_step_rho="1/(2 s^2) <= eps_i^2/8 per released count",
            first_threshold=t1,
            sensitivity="l_inf = 1 (distinct-user counts), l0 unbounded",
        )
        guarantee = (
            guarantee_sentence(self.epsilon, self.delta, self.output_noun)
            + f" Internally it is {budget.delta_zcdp:.3g}-approximate {budget.rho:.4g}-zCDP "
            f"(converted at delta' = {budget.delta_conversion:.3g})."
        )
        return self._calibration("gumbel+gaussian", 1.0 / eps_star, guarantee=guarantee, details=details)

    def _release(self, corpus, rng, cal, progress):
        p, d = self.params, PcrDetails.of(cal)
        progress_step(progress, 0.05, "ranking distinct-user counts")
        progress_step(progress, 0.2, "running the Gumbel privacy filter")
        res = private_count_release(
            corpus.user_counts,
            rng,
            rho=d.rho_zcdp,
            delta=d.delta_zcdp,
            eps_star=p["eps_star"],
            delta_star=d.delta_star,
            kbar=p["kbar"],
            rel_error=p["rel_error"],
        )
        lg = res.ledger
        diag = Diagnostics(
            weights=None,
            extra={
                "note": "NOT private: the filter's step record holds candidate item ids ranked by true counts",
                "ledger": lg,
                "steps": lg.n_steps,
                "bottom_steps": lg.n_bottom,
                "rho_spent": lg.rho_spent,
                "delta_spent": lg.delta_spent,
                "stop_reason": lg.stop_reason,
            },
        )
        progress_step(progress, 1.0, "done")
        return ReleaseParts(res.positions, diag, noisy_counts=round_counts(res.noisy_counts), count_std=res.sigma)


class BoundedCounts(_CountMechanism):
    name, label, family = "bounded-counts", "Bounded counts (Plume-style baseline)", "gaussian"
    summary = (
        "Δ0-bounded contributions, weighted-Gaussian partition selection, Gaussian counts "
        "(l2-sensitivity √Δ0); optional relative-error threshold."
    )
    param_names = ("max_items", "rel_error", "use_threshold")
    selection_share = 0.5  # the paper's alpha: share of (epsilon, delta) spent on partition selection
    # both passes are weighted histograms, but the count pass is not wired to the Spark engine: runs on the driver
    order_free = False

    @classmethod
    def privacy_cost(cls, cal: Calibration) -> ZcdpCost:
        """Gaussian partition selection (its threshold event: half of the selection's delta) composed with the
        Gaussian counts (l2-sensitivity sqrt(Delta0), no delta): both Gaussian mechanisms."""
        d = BoundedCountsDetails.of(cal)
        sel = gaussian_zcdp(float(d.selection_sigma))
        return gaussian_costs_sum([sel, float(d.count_zcdp_rho)], float(d.selection_delta) / 2.0)

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        d = BoundedCountsDetails.of(cal)
        stages = [Stage("gaussian", float(d.selection_sigma), float(d.selection_rho), 1.0 / math.sqrt(m_kept))]
        if d.count_threshold is not None:
            stages.append(Stage("gaussian", float(d.count_sigma), float(d.count_threshold), 1.0))
        return Stages(tuple(stages), "selection +1/√m per kept holder, then the noisy count (+1 per holder) past T")

    @classmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        return [
            ("Selection noise std (σ)", float(cal.scale)),
            ("Count noise std", BoundedCountsDetails.of(cal).count_sigma),
        ]

    def calibrate(self) -> Calibration:
        p = self.params
        m = p["max_items"]
        e_sel = self.epsilon * self.selection_share
        d_sel = self.delta * self.selection_share
        e_cnt, d_cnt = self.epsilon - e_sel, self.delta - d_sel
        sigma_sel = gaussian_scale(e_sel, d_sel)
        rho_sel = rho_weighted_gaussian(e_sel, d_sel, m)
        sigma_cnt = analytic_gaussian_sigma(e_cnt, d_cnt, count_l2_sensitivity(m))
        thr = relative_error_threshold(sigma_cnt, p["rel_error"]) if p["use_threshold"] == "yes" else None
        details = BoundedCountsDetails(
            budget_split=(
                f"partition selection: (epsilon, delta) x {self.selection_share:g} = ({e_sel:g}, {d_sel:.3g}); "
                f"counts: ({e_cnt:g}, {d_cnt:.3g}); basic composition"
            ),
            selection="weighted-Gaussian DPSU over Δ0-bounded users (l2-sensitivity 1)",
            selection_epsilon=e_sel,
            selection_delta=d_sel,
            selection_sigma=sigma_sel,
            selection_rho=rho_sel,
            count_epsilon=e_cnt,
            count_delta=d_cnt,
            count_sigma=sigma_cnt,
            count_l2_sensitivity=count_l2_sensitivity(m),
            count_zcdp_rho=gaussian_zcdp(sigma_cnt, count_l2_sensitivity(m)),
            count_threshold=thr,
        )
        return self._calibration("gaussian", sigma_sel, rho_sel, details=details)

    def _release(self, corpus, rng, cal, progress):
        m = self.params["max_items"]
        d = BoundedCountsDetails.of(cal)
        progress_step(progress, 0.05, "ordering users and sampling Δ0 items each")
        selected, h = weighted_gaussian_step(corpus, rng, m, d.selection_sigma, d.selection_rho)
        progress_step(progress, 0.6, "bounding contributions inside the selected domain and adding Gaussian noise")
        keep = np.zeros(corpus.n_items, dtype=bool)
        keep[selected] = True
        bounded_all = weighted_histogram(corpus, rng, m, COUNT, keep).astype(np.int64)  # 0 outside the domain
        noisy = bounded_all[selected] + rng.normal(0.0, d.count_sigma, size=selected.size)
        out = noisy > d.count_threshold if d.count_threshold is not None else np.ones(selected.size, bool)
        ids = selected[out]
        diag = Diagnostics(
            weights=h,
            extra={
                "note": "NOT private: weights H and the bounded counts (indexed by item id) come from raw data",
                "selected": int(selected.size),
                "bounded_counts": bounded_all,
            },
        )
        progress_step(progress, 1.0, "done")
        return ReleaseParts(
            ids, diag, noisy_counts=round_counts(noisy[out]), count_std=np.full(ids.size, d.count_sigma)
        )
