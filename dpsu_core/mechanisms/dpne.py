"""DPNE: differentially private n-gram extraction (Kim et al., NeurIPS 2021), and the three
DPSU baselines the paper compares it with (DPSU-all, DPSU-even, DPSU-single).

DPNE (Algorithm 1 with the scalable spurious draw of Section 2 / Appendix A), levels k = 1..T:

* level 1: DPSU with the weighted Gaussian policy (Gopi et al.), noise sigma_1 and threshold
  rho_1 = max_{t <= Delta_1} [1/sqrt(t) + sigma_1 Phi^-1((1 - delta/2)^(1/t))];
* level k >= 2: the valid k-grams V_k (``ngram_domain``) built from the *released* S_(k-1), S_1;
  each user's k-grams are filtered to V_k, capped at Delta_k by a uniform sample, and add
  1/sqrt(|U_i|) each to H_k; every valid k-gram u is released iff H_k[u] + N(0, sigma_k^2) > rho_k with
  rho_k = sigma_k Phi^-1(1 - eta min(1, |S_(k-1)| / |V_k|)).
  For the valid k-grams of weight 0 this is done in one step: B ~ Binomial(|V_k| - |supp H_k|,
  1 - Phi(rho_k / sigma_k)) of them, drawn uniformly without replacement from V_k minus supp(H_k).
  That draw is part of the privacy proof (every element of the public domain V_k gets its chance),
  not an optional utility knob.

Privacy (Kim et al., Theorem 2.1): level 1 is a Gaussian mechanism (l2-sensitivity 1, sigma_1)
composed with a (0, delta/2) event fixed by rho_1; each level k >= 2 is a Gaussian mechanism with
l2-sensitivity 1 and noise sigma_k over the public domain V_k (rho_k is post-processing). Gaussian
mechanisms compose to one with 1/sigma^2 = sum_k 1/sigma_k^2 (Dong, Roth, Su), and sigma is the
analytic-Gaussian sigma for (epsilon, delta/2). Hence (epsilon, delta)-DP overall.

Released n-grams are kept per level as int32 token-id rows, because spurious n-grams may be
strings the corpus never contained; those are released with item id -1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import ParameterError
from ..privacy.cost import ZcdpCost, gaussian_cost
from ..privacy.gaussian import lower_until, round_up_composition
from ..privacy.normal import ndtri
from ..privacy.thresholds import gaussian_scale, rho_weighted_gaussian_sigma
from ..privacy.validate import check_choice, check_positive, check_positive_int
from ..wording import opt
from .base import Diagnostics, Mechanism, ReleaseParts, progress_step
from .calibration import Calibration, Details, optional
from .dpsu_step import weighted_gaussian_step
from .ngram_domain import match_rows, valid_domain
from .seam import EngineCorpus
from .traits import Stage, Stages, one_stage, scale_quantity

#: Above this expected number of spurious draws at one level, eta is too large for the corpus.
MAX_SPURIOUS = 5_000_000

NOT_PRIVATE = (
    "NOT differentially private: per-level histogram supports and draw counts are computed "
    "from the raw data (|V_k|, rho_k and the released sizes are functions of the release only)."
)


@dataclass(frozen=True, kw_only=True)
class LevelsDetails(Details):
    """The calibration details of the n-gram mechanisms (DPNE's levels and the DPSU baselines); each sets its own
    fields. ``rho_k``: DPNE's rule for the levels k >= 2 (set at run time), DPSU-even's per-length thresholds."""

    sigma_k: tuple[float, ...] | None = optional()  # DPNE, DPSU-even: sigma of level / length k
    rho_1: float | None = optional()  # DPNE: level 1's threshold
    rho_k: tuple[float, ...] | str | None = optional()
    max_items_per_level: tuple[int, ...] | None = optional()  # DPNE
    max_items_all: int | None = optional()  # DPSU-all: T * Delta0 per user over all lengths
    threshold_delta_per_length: float | None = optional()  # DPSU-even
    l2_sensitivity: float | None = optional()
    composition: str | None = optional()  # DPNE
    spurious: str | None = optional()  # DPNE

    def level_sigmas(self) -> tuple[float, ...]:
        """sigma_k of every level / length (DPNE, DPSU-even)."""
        if self.sigma_k is None:  # pragma: no cover - programming error
            raise ValueError("this calibration has no per-level sigma_k")
        return self.sigma_k

    def length_thresholds(self) -> tuple[float, ...]:
        """DPSU-even's rho_k of every length."""
        if not isinstance(self.rho_k, tuple):  # pragma: no cover - programming error
            raise ValueError("this calibration has no per-length thresholds rho_k")
        return self.rho_k

    def all_lengths_cap(self) -> int:
        """DPSU-all's per-user cap T * Delta0."""
        if self.max_items_all is None:  # pragma: no cover - programming error
            raise ValueError("this calibration has no all-lengths cap")
        return self.max_items_all

    def level_one_threshold(self) -> float:
        """DPNE's rho_1."""
        if self.rho_1 is None:  # pragma: no cover - programming error
            raise ValueError("this calibration has no level-1 threshold")
        return self.rho_1


# --------------------------------------------------------------------------- budget and thresholds
#: the schedule ratio that released the most n-grams on MSNBC (benchmarks/bench_msnbc.py; docs/algorithms.md §5)
BEST_SCHEDULE_RATIO = 0.8
SCHEDULES = ("equal", "geometric")


def noise_schedule(
    sigma: float, levels: int, schedule: str = "equal", ratio: float = BEST_SCHEDULE_RATIO
) -> np.ndarray:
    """sigma_1..sigma_T with sum_k 1/sigma_k^2 = 1/sigma^2 exactly (the levels compose as Gaussian mechanisms).

    "equal": sigma_k = sqrt(T) sigma (Kim et al.).  "geometric": sigma_k = c sigma_(k-1) with c = ``ratio``,
    so sigma_1 = sigma sqrt(sum_{j<T} c^(-2j)); c < 1 spends more of the budget on the longer n-grams.
    """
    levels = check_positive_int(levels, "the number of n-gram lengths T", "give T >= 1, e.g. --max-n 3")
    if check_choice(schedule, "schedule", SCHEDULES) == "equal":
        sig = np.full(levels, math.sqrt(levels) * sigma, dtype=np.float64)
    else:
        c = check_positive(ratio, "schedule_ratio c", f"e.g. --schedule-ratio {BEST_SCHEDULE_RATIO}")
        powers = np.power(c, np.arange(levels, dtype=np.float64))  # c^(k-1)
        sig = sigma * math.sqrt(float(np.sum(powers**-2.0))) * powers
    return round_up_composition(sig, sigma)


def level_threshold(sigma_k: float, eta: float, n_prev: int, n_valid: int) -> float:
    """rho_k = sigma_k Phi^-1(1 - eta min(1, |S_(k-1)| / |V_k|)) for a level k >= 2 (spurious control only)."""
    if n_valid <= 0:
        return math.inf
    q = eta * min(1.0, n_prev / n_valid)
    return float(-sigma_k * ndtri(q))  # Phi^-1(1 - q) = -Phi^-1(q), accurate for tiny q


def _check_levels(corpus: EngineCorpus, T: int, what: str) -> None:
    if corpus.max_n < T:
        raise ParameterError(
            f"{what} needs n-grams up to length {T} but the corpus was loaded with n-grams up to length "
            f"{corpus.max_n}; load it again with {opt('max_n')} at least {T}, or lower the mechanism's n-gram "
            f"length to {corpus.max_n}"
        )


def _level_ids(corpus: EngineCorpus, k: int) -> np.ndarray:
    return np.flatnonzero(corpus.ngram_len == k)


def _gram_strings(corpus: EngineCorpus, grams: np.ndarray) -> np.ndarray:
    """'a b c' strings of token-id rows, from the unigram vocabulary (token id -> its length-1 item)."""
    uni = _level_ids(corpus, 1)
    tok_to_item = np.full(int(corpus.gram_tokens[uni, 0].max()) + 1 if uni.size else 1, -1, dtype=np.int64)
    tok_to_item[corpus.gram_tokens[uni, 0]] = uni
    words = corpus.vocab[tok_to_item[grams]]
    out = words[:, 0].astype(object)
    for j in range(1, grams.shape[1]):
        out = out + " " + words[:, j]
    return np.asarray(out, dtype=object)


class _NgramMechanism(Mechanism):
    """DPNE and the DPSU baselines: weighted-Gaussian DPSU steps only (order-free), whose Gaussian parts compose
    to one Gaussian mechanism of noise ``cal.scale`` at l2-sensitivity 1, plus threshold events of total
    probability delta/2 (docs/algorithms.md §5)."""

    family = "gaussian"
    kind = "ngram"
    output_noun = "set of released n-grams (all lengths together)"
    order_free = True  # every pass over the users is ``weighted_gaussian_step``

    @classmethod
    def privacy_cost(cls, cal: Calibration) -> ZcdpCost:
        return gaussian_cost(cal.scale, cal.delta / 2.0)

    @classmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        return scale_quantity(cal)

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        return one_stage(cal, 1.0 / math.sqrt(m_kept), "+1/√m per kept holder")


def _level_one_stages(sigma_1: float, rho_1: float, m_kept: int) -> Stages:
    """The preview of a level-wise mechanism: its 1-grams' weighted-Gaussian step (level 1) alone."""
    return Stages(
        (Stage("gaussian", sigma_1, rho_1, 1.0 / math.sqrt(m_kept)),),
        "+1/√m per kept holder; 1-grams (level 1) only",
    )


# --------------------------------------------------------------------------- DPNE
class DPNE(_NgramMechanism):
    name, label = "dpne", "DPNE (n-gram extraction)"
    param_names = ("max_items", "max_n", "eta", "pruning", "schedule", "schedule_ratio")
    summary = (
        "Level-wise n-grams: weighted-Gaussian DPSU for 1-grams, then k-grams pruned to those whose "
        "sub-grams were released; Gaussian budget split over the levels (Kim et al. 2021)."
    )

    def calibrate(self) -> Calibration:
        p = self.params
        T, m = int(p["max_n"]), int(p["max_items"])
        sigma = gaussian_scale(self.epsilon, self.delta)
        sig = noise_schedule(sigma, T, p["schedule"], p["schedule_ratio"])
        rho1 = rho_weighted_gaussian_sigma(float(sig[0]), m, delta_threshold=self.delta / 2.0)
        details = LevelsDetails(
            sigma_k=tuple(float(s) for s in sig),
            rho_1=rho1,
            rho_k="for k >= 2: rho_k = sigma_k * Phi^-1(1 - eta * min(1, |S_(k-1)| / |V_k|)), set at run time "
            "from the released S_(k-1) and V_k (post-processing; controls spurious n-grams, not privacy)",
            max_items_per_level=(m,) * T,
            composition="sum_k 1/sigma_k^2 = 1/sigma^2, sigma from (epsilon, delta/2); delta/2 to rho_1",
            spurious="valid k-grams of weight 0: Binomial(|V_k| - |supp H_k|, 1 - Phi(rho_k/sigma_k)) drawn "
            "uniformly from V_k minus supp(H_k)",
        )
        return self._calibration("gaussian", sigma, rho1, details=details)

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        d = LevelsDetails.of(cal)
        return _level_one_stages(d.level_sigmas()[0], d.level_one_threshold(), m_kept)

    def _release(self, corpus: EngineCorpus, rng: np.random.Generator, cal: Calibration, progress) -> ReleaseParts:
        p = self.params
        T, m, eta, pruning = int(p["max_n"]), int(p["max_items"]), float(p["eta"]), p["pruning"]
        _check_levels(corpus, T, "DPNE")
        d = LevelsDetails.of(cal)
        sig = np.asarray(d.level_sigmas(), dtype=np.float64)
        h_all = np.zeros(corpus.n_items, dtype=np.float64)
        levels: list[dict] = []
        released_ids: list[np.ndarray] = []
        extra_items: list[np.ndarray] = []
        extra_len: list[np.ndarray] = []

        # ---- level 1: weighted-Gaussian DPSU on the unigrams
        progress_step(progress, 0.02, "level 1: DPSU on 1-grams")
        ids1 = _level_ids(corpus, 1)
        keep = np.zeros(corpus.n_items, dtype=bool)
        keep[ids1] = True
        rho1 = d.level_one_threshold()
        rel, h = weighted_gaussian_step(corpus, rng, m, float(sig[0]), rho1, keep)
        h_all += h
        s1 = corpus.gram_tokens[rel, :1].astype(np.int32)
        s_prev = s1
        released_ids.append(rel)
        levels.append(
            dict(
                n=1,
                sigma=float(sig[0]),
                rho=rho1,
                valid=None,
                candidates=int(np.count_nonzero(h)),
                released_from_histogram=int(rel.size),
                spurious_drawn=0,
                released=int(rel.size),
            )
        )

        # ---- levels k >= 2
        for k in range(2, T + 1):
            progress_step(progress, 0.02 + 0.96 * (k - 1) / T, f"level {k}: valid {k}-grams")
            sigma_k = float(sig[k - 1])
            dom = valid_domain(s_prev, s1[:, 0], pruning)
            n_valid = dom.size
            rho_k = level_threshold(sigma_k, eta, int(s_prev.shape[0]), n_valid)
            info = dict(
                n=k,
                sigma=sigma_k,
                rho=rho_k,
                valid=n_valid,
                candidates=0,
                released_from_histogram=0,
                spurious_drawn=0,
                released=0,
            )
            levels.append(info)
            if n_valid == 0:
                s_prev = np.zeros((0, k), dtype=np.int32)
                continue
            from scipy.special import ndtr  # loads on first use (start-up time)

            q = float(ndtr(-rho_k / sigma_k))  # 1 - Phi(rho_k / sigma_k)
            if n_valid * q > MAX_SPURIOUS:
                raise ParameterError(
                    f"eta={eta:g} is too large for this corpus: level {k} would draw about {n_valid * q:,.0f} "
                    f"spurious {k}-grams out of {n_valid:,} valid ones; lower eta (e.g. 0.01) or max_n. "
                    f"This run has been discarded, but levels 1..{k - 1} were already computed from the data: "
                    f"a new run is a new release and spends its own (epsilon, delta) again, on top of this one"
                )
            ids_k = _level_ids(corpus, k)
            grams_k = corpus.gram_tokens[ids_k, :k]
            vidx = dom.index_of(grams_k)
            keep = np.zeros(corpus.n_items, dtype=bool)
            keep[ids_k[vidx >= 0]] = True
            rel, h = weighted_gaussian_step(corpus, rng, m, sigma_k, rho_k, keep)
            h_all += h
            # spurious draw over the valid k-grams of weight 0
            item_vidx = np.full(corpus.n_items, -1, dtype=np.int64)
            item_vidx[ids_k] = vidx
            supp = np.flatnonzero(h > 0)
            n_zero = n_valid - int(supp.size)
            b = int(rng.binomial(n_zero, q)) if n_zero > 0 else 0
            spur = dom.decode(dom.sample_distinct_excluding(rng, b, item_vidx[supp]))
            # spurious k-grams that the vocabulary has keep their id; the others are new strings (id -1)
            pos = match_rows(grams_k, spur)
            in_vocab = pos >= 0
            released_ids.append(rel)
            released_ids.append(ids_k[pos[in_vocab]])
            if np.any(~in_vocab):
                extra_items.append(_gram_strings(corpus, spur[~in_vocab]))
                extra_len.append(np.full(int(np.count_nonzero(~in_vocab)), k, dtype=np.int16))
            s_prev = np.concatenate([corpus.gram_tokens[rel, :k].astype(np.int32), spur], axis=0)
            info.update(
                candidates=int(supp.size),
                released_from_histogram=int(rel.size),
                spurious_drawn=b,
                released=int(s_prev.shape[0]),
            )

        progress_step(progress, 1.0, "done")
        ids = np.concatenate(released_ids).astype(np.int64)
        ex_items = np.concatenate(extra_items) if extra_items else None
        ex_len = np.concatenate(extra_len) if extra_len else None
        diag = Diagnostics(weights=h_all, extra={"levels": levels, "note": NOT_PRIVATE})
        return ReleaseParts(ids, diag, extra_items=ex_items, extra_len=ex_len)


# --------------------------------------------------------------------------- DPSU baselines
class DPSUAll(_NgramMechanism):
    """All lengths 1..T as one item universe; each user keeps at most T * Delta0 n-grams (Kim et al., Sec. 3)."""

    name, label = "dpsu-all", "DPSU-all (all lengths as one universe)"
    param_names = ("max_items", "max_n")
    summary = "Weighted-Gaussian DPSU over all n-grams of length 1..T together, T·Δ0 per user."

    def calibrate(self) -> Calibration:
        T, m = int(self.params["max_n"]), int(self.params["max_items"])
        sigma = gaussian_scale(self.epsilon, self.delta)
        return self._calibration(
            "gaussian",
            sigma,
            rho_weighted_gaussian_sigma(sigma, T * m, delta_threshold=self.delta / 2.0),
            details=LevelsDetails(max_items_all=T * m, l2_sensitivity=1.0),
        )

    @classmethod
    def preview_max_items(cls, cal: Calibration) -> int:
        return LevelsDetails.of(cal).all_lengths_cap()  # all lengths as one universe: T * Delta0 per user

    def _release(self, corpus, rng, cal, progress):
        T = int(self.params["max_n"])
        _check_levels(corpus, T, "DPSU-all")
        keep = corpus.lengths_mask(range(1, T + 1))
        ids, h = weighted_gaussian_step(corpus, rng, LevelsDetails.of(cal).all_lengths_cap(), cal.scale, cal.rho, keep)
        return ReleaseParts(ids, Diagnostics(weights=h, extra={"note": NOT_PRIVATE}))


class DPSUEven(_NgramMechanism):
    """The Gaussian budget split equally over the T lengths, one independent DPSU per length.

    Privacy: Gopi et al. prove weighted-Gaussian DPSU private by splitting it into a Gaussian mechanism
    with l2-sensitivity 1 (the items both neighbours can hold) and a (0, delta')-event (an item only the
    extra user holds crossing rho), with rho = max_t [1/sqrt(t) + sigma Phi^-1((1 - delta')^(1/t))];
    Kim et al. (Thm 2.1 proof) use the same decomposition. Here length k runs such a DPSU with
    sigma_k = sqrt(T) sigma and delta' = delta/(2T). The T Gaussian parts compose to one Gaussian
    mechanism with 1/sigma^2 = sum_k 1/sigma_k^2 (Dong, Roth, Su), (epsilon, delta/2)-DP for sigma from
    (epsilon, delta/2); the T threshold events add up to (0, T * delta/(2T)) = (0, delta/2) by simple
    composition. Total: (epsilon, delta). (The paper split epsilon by advanced composition; the
    Gaussian composition used here is exact and never worse.)
    """

    name, label = "dpsu-even", "DPSU-even (budget split over lengths)"
    param_names = ("max_items", "max_n")
    summary = "One weighted-Gaussian DPSU per length k = 1..T, each with σ_k = √T·σ and δ/T of the threshold δ."

    def calibrate(self) -> Calibration:
        T, m = int(self.params["max_n"]), int(self.params["max_items"])
        sigma = gaussian_scale(self.epsilon, self.delta)
        sig = noise_schedule(sigma, T, "equal")
        rho_k = rho_weighted_gaussian_sigma(float(sig[0]), m, delta_threshold=per_length_delta(self.delta, T))
        return self._calibration(
            "gaussian",
            sigma,
            rho_k,
            details=LevelsDetails(
                sigma_k=tuple(float(s) for s in sig),
                rho_k=(rho_k,) * T,
                threshold_delta_per_length=per_length_delta(self.delta, T),
                l2_sensitivity=1.0,
            ),
        )

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        d = LevelsDetails.of(cal)
        return _level_one_stages(d.level_sigmas()[0], d.length_thresholds()[0], m_kept)

    def _release(self, corpus, rng, cal, progress):
        T, m = int(self.params["max_n"]), int(self.params["max_items"])
        _check_levels(corpus, T, "DPSU-even")
        d = LevelsDetails.of(cal)
        sig, rho = d.level_sigmas(), d.length_thresholds()
        out, h_all = [], np.zeros(corpus.n_items, dtype=np.float64)
        for k in range(1, T + 1):
            progress_step(progress, (k - 1) / T, f"length {k}")
            ids, h = weighted_gaussian_step(corpus, rng, m, sig[k - 1], rho[k - 1], corpus.ngram_len == k)
            out.append(ids)
            h_all += h
        return ReleaseParts(np.concatenate(out), Diagnostics(weights=h_all, extra={"note": NOT_PRIVATE}))


def per_length_delta(delta: float, lengths: int) -> float:
    """Each length's threshold delta, delta / (2T), rounded down so that the T of them add up to at most delta/2
    in exact arithmetic (the float quotient can be 1 ulp over)."""
    return lower_until(delta / (2 * lengths), lambda d: Fraction(d) * (2 * lengths) <= Fraction(delta))


class DPSUSingle(_NgramMechanism):
    name, label = "dpsu-single", "DPSU-single (one length only)"
    param_names = ("max_items", "only_n")
    summary = "Weighted-Gaussian DPSU spending the whole budget on n-grams of one length."

    def calibrate(self) -> Calibration:
        m = int(self.params["max_items"])
        sigma = gaussian_scale(self.epsilon, self.delta)
        return self._calibration(
            "gaussian",
            sigma,
            rho_weighted_gaussian_sigma(sigma, m, delta_threshold=self.delta / 2.0),
            details=LevelsDetails(l2_sensitivity=1.0),
        )

    def _release(self, corpus, rng, cal, progress):
        n, m = int(self.params["only_n"]), int(self.params["max_items"])
        _check_levels(corpus, n, "DPSU-single")
        ids, h = weighted_gaussian_step(corpus, rng, m, cal.scale, cal.rho, corpus.ngram_len == n)
        return ReleaseParts(ids, Diagnostics(weights=h, extra={"note": NOT_PRIVATE}))
