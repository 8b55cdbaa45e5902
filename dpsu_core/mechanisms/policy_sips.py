"""Policy DP-SIPS: DP-SIPS's rounds with a Policy Gaussian pass inside each round (docs/policy_sips.md).

Round i = 1..I: every item released in an earlier round is removed from every user's set; the users are
visited in a fresh uniformly random order; each keeps at most Delta0 of its remaining items (a fresh
uniform sample) and applies the l2-descent update of Policy Gaussian (Gopi et al. 2020, Algorithm 6)
toward the round's cutoff Gamma_i = T_i + alpha sigma_i; the items with H_i + N(0, sigma_i^2) > T_i are
released. DP-SIPS (Swanberg, Desfontaines & Haney 2023; ``sips``) runs the same rounds with the weighted
Gaussian update; Policy Gaussian is the case I = 1.

Calibration (public, ``policy_rounds``, built by ``sips.build_rounds`` as DP-SIPS's).
delta = delta_noise + delta_thr (``privacy.tuning``: the two halves by default, or with ``delta_split="tuned"``
the split that maximises the utility preview's chance of release of an item held by ``tune_users`` users:
``choose_split``).
sigma is the analytic-Gaussian noise for (epsilon, delta_noise) at l2-sensitivity 1, i.e. mu = 1/sigma in
Gaussian DP. Round i gets the share f_i = r^(I-i) / sum_j r^(I-j): sigma_i >= sigma / sqrt(f_i) with
sum_i 1/sigma_i^2 <= 1/sigma^2, and delta_i <= f_i delta_thr with sum_i delta_i <= delta_thr (both sums
checked in exact rational arithmetic, every rounding toward safety);
T_i = max_{t <= Delta0} [1/sqrt(t) + sigma_i Phi^-1((1 - delta_i)^(1/t))] and Gamma_i = T_i + alpha sigma_i.

Why it is private (neighbours D and D' = D + u; the full argument is docs/policy_sips.md).
1. One round, given the earlier rounds' outputs (public). The removed items, the order and the samples
   of the users of D are coupled between D and D' (u is inserted somewhere in the order). Gopi et al.'s
   Theorem 1.1 with their Lemma 5.2 (the l2-descent step is l2-contractive: each user moves H an l2
   distance <= 1 toward (Gamma_i, ..., Gamma_i) and two histograms never move apart): on the items of
   supp(H_i(D)), ||H_i(D') - H_i(D)||_2 <= 1 (the property test checks it on random coupled neighbours).
   The items with H_i(D) = 0 < H_i(D') are u's alone (only a holder's step touches an item); they all
   start at gap Gamma_i, so u's step gives each of its t such items at most 1/sqrt(t), and one of them
   crosses T_i with probability <= 1 - Phi((T_i - 1/sqrt(t)) / sigma_i)^t <= delta_i by the choice of T_i
   (Gopi et al., proof of Theorem 5.1). Restricted to supp(H_i(D)) the round is a Gaussian mechanism of
   l2-sensitivity 1 with noise sigma_i: (1/sigma_i)-GDP.
2. Rounds compose adaptively: the restricted rounds are mu-GDP with mu^2 = sum_i 1/sigma_i^2 <= 1/sigma^2,
   which is (epsilon, delta_noise)-DP by the choice of sigma; the event that some round releases one of u's
   lone items has probability <= sum_i delta_i <= delta_thr, and Gopi et al.'s Lemma 2.1 adds it in both
   directions: (epsilon, delta_noise + delta_thr) <= (epsilon, delta). This is DP-SIPS's argument with Policy
   Gaussian's contractivity in place of the weighted update's sensitivity; it never uses
   delta_noise = delta_thr, which is why the split may be chosen.

Default shares r = 0.02 (``round_ratio``): the early rounds are cheap passes that release the most common
items, so in the last round (about 98% of mu^2) users with more than Delta0 items sample among the rest.

The pass is a sequential numba kernel over the CSR (the l2-descent depends on the order): it filters each
user's row by the still-unreleased items, samples and updates in one pass, with no per-user Python.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numba
import numpy as np

from ..corpus.model import Corpus
from ..errors import ParameterError
from ..privacy.gaussian import analytic_gaussian_sigma, raise_until
from ..privacy.norms import descent_budget
from ..privacy.tuning import TUNED, DeltaSplit, best_split, split_delta
from .base import ReleaseParts, noisy_threshold
from .calibration import Calibration
from .sampling import OrderedRows, select_kept
from .seam import EngineCorpus, rows_here
from .setunion import l2_step
from .sips import LAST_ROUND_NOTE, Rounds, RoundsDetails, RoundsMechanism, build_rounds, round_stages, run_rounds
from .traits import Stages, highest_chance, stages_release_probability, users_for_chance


# --------------------------------------------------------------------------- calibration
def policy_rounds(epsilon: float, split: DeltaSplit, max_items: int, alpha: float, rounds: int, ratio: float) -> Rounds:
    """Per-round sigma_i, delta_i, T_i and Gamma_i for this delta split and the shares f_i ~ ratio^(I-i)
    (public: parameters only; ``sips.build_rounds``). With one round it is Policy Gaussian at this split."""
    sigma = analytic_gaussian_sigma(epsilon, split.delta_noise)  # mu = 1/sigma at l2-sensitivity 1
    total = split.delta_threshold + split.delta_noise
    return build_rounds(
        sigma, split.delta_threshold, max_items, rounds, ratio, alpha, delta=total, ratio_name="round_ratio"
    )


def release_chance(
    epsilon: float, split: DeltaSplit, max_items: int, alpha: float, rounds: int, ratio: float, users: int
) -> float:
    """The utility preview's P(release) of an item held by ``users`` users, each with Delta0 items (all kept),
    at this split: computed from the calibration alone."""
    return stages_release_probability(
        round_stages(policy_rounds(epsilon, split, max_items, alpha, rounds, ratio), max_items), users, 1.0
    )


def margin_users(epsilon: float, delta: float, max_items: int, alpha: float, rounds: int, ratio: float) -> int:
    """The item at the margin under the halves: the smallest k with half the highest chance of release."""
    stages = round_stages(policy_rounds(epsilon, split_delta(delta, 0.5), max_items, alpha, rounds, ratio), max_items)
    k = users_for_chance(stages, 1.0, 0.5 * highest_chance(stages, 1.0))
    if k is None:  # at a tiny epsilon the chance of release underflows: nothing to tune the split for
        raise ParameterError(
            "no item reaches half its highest chance of release at these parameters, so there is nothing to tune "
            "the delta split for; raise epsilon, or use delta_split 'half'"
        )
    return k


@dataclass(frozen=True)
class SplitChoice:
    """The split a calibration uses and, when tuned, what it was tuned for (all public)."""

    split: DeltaSplit
    users: int = 0  # the k the split was chosen for (0: not tuned)
    chance: float = math.nan  # P(release | k) at the chosen split
    half_chance: float = math.nan  # P(release | k) at the halves


@functools.lru_cache(maxsize=64)  # a pure function of public parameters; the grid search takes tens of ms
def choose_split(
    epsilon: float,
    delta: float,
    max_items: int,
    alpha: float,
    rounds: int,
    ratio: float,
    how: str,
    users: int = 0,
) -> SplitChoice:
    """The delta split: two halves (``how="half"``) or, with ``how="tuned"``, the share of ``privacy.tuning``'s
    grid that maximises the utility preview's chance of release of an item held by ``users`` users, each with
    Delta0 items (``users`` = 0: ``margin_users``). Public: a function of the parameters only (no corpus)."""
    half = split_delta(delta, 0.5)
    if how != TUNED:
        return SplitChoice(half)
    k = int(users) or margin_users(epsilon, delta, max_items, alpha, rounds, ratio)

    def minus_chance(split: DeltaSplit) -> float:
        return -release_chance(epsilon, split, max_items, alpha, rounds, ratio, k)

    best, value = best_split(delta, minus_chance)
    return SplitChoice(best, k, -value, -minus_chance(half))


# --------------------------------------------------------------------------- the pass
@numba.njit(cache=True, nogil=True)
def _policy_round(indptr, items, order, keep, max_items, longest, n_items, gamma, budget, rng):
    """One round over users in ``order``: each row filtered to the items where ``keep`` is True, sampled down
    to max_items when longer (``sample_in_place``, uniforms from ``rng``; max_items = 0 keeps all), then the
    l2-descent step toward ``gamma``. Returns the round's histogram H_i."""
    h = np.zeros(n_items, dtype=np.float64)
    sel = np.empty(longest, dtype=np.int64)
    u = np.empty(max(min(max_items, longest), 1), dtype=np.float64)
    for r in range(order.shape[0]):
        n = select_kept(indptr, items, order[r], keep, max_items, sel, u, rng)
        if n > 0:
            l2_step(h, items, sel, n, gamma, budget)
    return h


def policy_round_histogram(
    corpus: Corpus, rng: np.random.Generator, max_items: int, gamma: float, keep: np.ndarray
) -> np.ndarray:
    """H_i of one round: users in a fresh uniform order, rows filtered by ``keep``, <= Delta0 kept, l2-descent."""
    longest = max(int(corpus.row_lengths.max()) if corpus.n_users else 1, 1)
    return _policy_round(
        corpus.indptr,
        corpus.items,
        rng.permutation(corpus.n_users).astype(np.int64),
        np.asarray(keep, dtype=np.bool_),
        int(max_items),
        longest,
        corpus.n_items,
        float(gamma),
        descent_budget(min(int(max_items), longest)),
        rng,
    )


def policy_round_update(rows: OrderedRows, n_items: int, gamma: float, keep: np.ndarray) -> np.ndarray:
    """The same kernel over rows already ordered and sampled (the coupling of the sensitivity tests)."""
    n = rows.n_rows
    longest = max(int(np.diff(rows.indptr).max()) if n else 1, 1)
    return _policy_round(
        rows.indptr,
        rows.items,
        np.arange(n, dtype=np.int64),
        np.asarray(keep, dtype=np.bool_),
        0,
        longest,
        int(n_items),
        float(gamma),
        descent_budget(longest),
        np.random.default_rng(0),  # unused: max_items = 0 samples nothing
    )


ALPHA_NOTE = (
    "α is not chosen for you: in this model the chance of release only grows with α (T_i does not depend on α, and "
    "Γ_i = T_i + ασ_i only lifts the cap), so the parameters alone cannot choose it; what a larger α costs, the budget "
    "common items absorb before they reach Γ_i, depends on the corpus (α 5 released more than α 3 on synthetic-200k)."
)


def tuning_note(d: RoundsDetails) -> str:
    """The preview's sentence on the delta split (and alpha) of a Policy DP-SIPS calibration."""
    if not d.tuned_for_users:
        return f"δ split: the halves (delta_split 'tuned' would choose it for a named number of users). {ALPHA_NOTE}"
    p, p0 = float(d.release_chance or 0.0), float(d.release_chance_half or 0.0)
    return (
        f"δ split chosen from the parameters alone: noise share {d.noise_share:g}, the share that maximises "
        f"the chance of release of an item held by {int(d.tuned_for_users):,} users with Δ0 items each: "
        f"{p:.3g} against {p0:.3g} with the halves ({p - p0:+.3g}). {ALPHA_NOTE}"
    )


def round_cutoffs(d: RoundsDetails) -> tuple[float, ...]:
    """Gamma_i of a Policy DP-SIPS calibration (every one has them)."""
    if d.gamma_i is None:  # pragma: no cover - programming error: only Policy DP-SIPS calls it
        raise ValueError("these rounds have no cutoffs Gamma_i")
    return d.gamma_i


# --------------------------------------------------------------------------- the mechanism
class PolicySips(RoundsMechanism):
    name, label = "policy-sips", "Policy DP-SIPS (iterated policy Gaussian)"
    param_names = ("max_items", "alpha", "rounds", "round_ratio", "delta_split", "tune_users")
    summary = (
        "I rounds of Policy Gaussian (l2-descent toward Γ_i = T_i + ασ_i), each over the items not yet released; "
        "round i gets the share r^(I-i) of the Gaussian budget, composed as in DP-SIPS. Sequential: one user order "
        "per round."
    )
    order_free = False  # each round visits the users in one random order (the l2-descent is sequential)

    @classmethod
    def calibration_notes(cls, cal: Calibration) -> list[tuple[str, str]]:
        return [("delta split", tuning_note(RoundsDetails.of(cal)))]

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        d = RoundsDetails.of(cal)
        rounds = round_stages(d, m_kept)
        return Stages(
            rounds,
            f"+1/√m per kept holder in each of {len(rounds)} rounds, up to that round's Γ_i (each round samples "
            "afresh; the holder's other items assumed not yet released), released if any round passes its threshold",
            note=tuning_note(d),
        )

    def calibrate(self) -> Calibration:
        p = self.params
        args = (p["max_items"], p["alpha"], p["rounds"], p["round_ratio"])
        choice = choose_split(self.epsilon, self.delta, *args, p["delta_split"], p["tune_users"])
        split = choice.split
        r = policy_rounds(self.epsilon, split, *args)
        sigma = r.sigma
        tuned = choice.users > 0
        details = RoundsDetails(
            mu_gdp=1.0 / sigma,
            noise_share=split.noise_share,
            delta_noise=split.delta_noise,
            delta_thresholds=split.delta_threshold,
            fraction_i=r.fraction_i,
            sigma_i=r.sigma_i,
            delta_i=r.delta_i,
            threshold_i=r.threshold_i,
            gamma_i=r.gamma_i,
            tuned_for_users=choice.users if tuned else None,
            release_chance=choice.chance if tuned else None,
            release_chance_half=choice.half_chance if tuned else None,
            # the ledger's cost: the Gaussian rounds compose to mu-GDP with mu^2 = 1/sigma^2 = 2 rho_zcdp;
            # the threshold events spend delta_thresholds
            rho_zcdp=raise_until(0.5 / (sigma * sigma), lambda x: Fraction(x) >= 1 / (2 * Fraction(sigma) ** 2)),
            delta_zcdp=split.delta_threshold,
            composition=(
                "rounds compose adaptively: the Gaussian parts are mu-GDP with mu^2 = sum_i 1/sigma_i^2 <= "
                "1/sigma^2, (epsilon, delta_noise)-DP; the threshold events add sum_i delta_i <= delta_thresholds"
            ),
            threshold_note=LAST_ROUND_NOTE,
        )
        return self._calibration("gaussian", sigma, r.threshold_i[-1], round_cutoffs(details)[-1], details=details)

    def _release(self, corpus: EngineCorpus, rng: np.random.Generator, cal: Calibration, progress) -> ReleaseParts:
        d, m = RoundsDetails.of(cal), int(self.params["max_items"])
        rows = rows_here(corpus, self.label)  # sequential: each round visits the users one by one
        gammas = round_cutoffs(d)

        def one_round(i: int, remaining: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
            sigma_i, t_i, g_i = d.sigma_i[i], d.threshold_i[i], gammas[i]
            h = policy_round_histogram(rows, rng, m, g_i, remaining)
            ids = noisy_threshold(h, rng, "gaussian", sigma_i, t_i)
            return ids, h, dict(sigma=sigma_i, threshold=t_i, gamma=g_i)

        return run_rounds(corpus.n_items, int(self.params["rounds"]), progress, "Policy Gaussian pass", one_round)
