"""Noisy counts for an already released item set, in the same run: a Gaussian sum over bounded user vectors.

What it releases. Once a set-union (or n-gram) mechanism has released the item set S (private: its own
(epsilon, delta)), each user u's occurrence counts of the items of S form a vector v_u (C_i[x] for x in S, 0
elsewhere). The vector is scaled to l2 norm at most ``clip`` (C): w_u = v_u * min(1, C / ||v_u||_2). The release
is sum_u w_u + N(0, sigma^2 I) on S, rounded to two decimals and clipped at 0 (post-processing). With the default
C = 1 every user with any released item contributes a unit vector: a user's share of each word, so the counts say
how the population uses the words (what a tokenizer trains on), and no user weighs more than any other.

Why it is private (user level, add/remove one user). S is the output of the first mechanism: public to this
step, so the step is a mechanism of its own, chosen adaptively (adaptive composition). On S the neighbouring sums
differ by exactly one user's w_u, whose l2 norm is <= C: the Gaussian mechanism with l2-sensitivity C. sigma is
the analytic Gaussian mechanism's (Balle & Wang 2018; ``privacy.gaussian.analytic_gaussian_sigma``, checked in
exact arithmetic) at the counts' share of the budget; as zCDP it costs C^2 / (2 sigma^2) with no delta of its own
(``privacy.cost.gaussian_cost``): exactly a Gaussian mechanism, so the ledger composes it by zCDP and Gaussian DP
beside the release. Items of S that the corpus never held (DPNE's spurious n-grams) get noise alone.

Budget. The user's (epsilon, delta) is split by basic composition: the set release runs at (1 - s) (epsilon, delta),
the counts at s (epsilon, delta) with s = ``share`` (``split_budget``; the parts add up to at most the whole in
exact arithmetic). The two are recorded in the ledger as two entries (``spend.counts_entry``); their basic total is the
(epsilon, delta) the user gave, and the ledger's zCDP / Gaussian-DP totals may be tighter.

Defaults. The bound C = 1 maximises every item's signal-to-noise ratio at once: item x's sum is
sum_u c_ux min(1, C / ||v_u||) and the noise's sigma is C sigma_1, so its ratio is sum_u c_ux min(1/C, 1/||v_u||)
/ sigma_1, non-increasing in C; every user holding a released item has ||v_u|| >= 1 (whole counts), so any C <= 1
gives the same ratio (all users scaled to norm C) and C > 1 lowers it for every item whose users include one with
||v_u|| < C. The share s trades the set release's threshold (its (epsilon, delta) shrink by (1 - s), so fewer
items come out) against the counts' sigma (proportional to 1 / s). What a tokenizer needs from the counts is the
order of the head words (hundreds of users each, so a sum of hundreds of unit-vector parts), which stands far
above sigma even at s = 0.1 (sigma = 13 at epsilon = 3, delta = 1e-5), while each further share of the budget
costs released items. Measured on the tokenizer benchmark's first half only (its users split again; the held-out
half never looked at: ``python -m benchmarks.run tokenizer_tuning``), BPE's tokens per word, medians over 5
independent draws on the demo corpus (3 on synthetic-200k) at a vocabulary that binds: s = 0.05 was 0.2% and 0.5%
ahead of s = 0.1 at epsilon 1 and 3 and 0.8% behind at 8, s = 0.2 behind s = 0.1 by 1.7%, 0.6% and 0.2%, and by
0.5% at epsilon 3 on synthetic-200k: all inside the draws' ranges, so s = 0.1 stays (``benchmarks/RESULTS.md``,
tokenizer_tuning).

The norm is computed never below the true one (exact squares, summed rounding up) and the floating-point scale
factor is rounded down (``_SCALE_MARGIN``), so a clipped vector's exact norm never exceeds C by a rounding error;
each user's scaled counts are rounded down to whole units of C * 2^-20 and summed in integers, so the sums are
exact and neighbouring sums differ by at most 2^20 units in l2 exactly; the noise is added in units (sigma / unit,
rounded up) and the result times the unit is post-processing (``_clipped_units``, ``noisy_counts``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numba
import numpy as np

from ..errors import ParameterError
from ..params import OPTIONS
from ..privacy.cost import ZcdpCost, gaussian_cost
from ..privacy.gaussian import analytic_gaussian_sigma, lower_until
from ..privacy.norms import add_up
from ..privacy.validate import (
    DELTA_MIN,
    EPSILON_MIN,
    check_delta,
    check_epsilon,
    check_fraction,
    check_number,
)

#: the counts' share of (epsilon, delta) and the l2 bound of one user's vector of counts, their defaults (see
#: "Defaults" above) and ranges: declared once in ``params.OPTIONS`` (the CLI's flags and the app's widgets read them)
SHARE, CLIP = OPTIONS["counts_share"], OPTIONS["counts_clip"]
DEFAULT_SHARE, DEFAULT_CLIP = float(SHARE.default), float(CLIP.default)
CLIP_MIN, CLIP_MAX = float(CLIP.minimum or 0.0), float(CLIP.maximum or 0.0)
NAME, LABEL = "item-counts", "Item counts (Gaussian, l2-bounded users)"
DETAILS_KEY = "item_counts"  # the field of the calibration details (and key of their export) holding this step
_SCALE_MARGIN = 1.0 - 2.0**-40  # the clip factor rounded down: ||w_u|| <= C despite float rounding
#: the sums are exact integers in units of C * 2^-COUNT_GRID_BITS: a user adds at most 2^20 units to an item, so an
#: item's total saturates (at 2^53 units, exact as a float) only past 2^33 = 8.6e9 users
COUNT_GRID_BITS = 20
_COUNT_CAP = np.int64(2**53)
COUNT_DECIMALS = 2


@dataclass(frozen=True)
class CountsCalibration:
    """The count release's public calibration: its share of the budget, (epsilon, delta), the l2 bound and sigma."""

    share: float
    epsilon: float
    delta: float
    clip: float
    sigma: float
    total_epsilon: float  # the (epsilon, delta) the user gave: the set release's and this one's by basic composition
    total_delta: float

    @property
    def cost(self) -> ZcdpCost:
        """A Gaussian mechanism, l2-sensitivity C, no event outside it: 0-approximate C^2/(2 sigma^2)-zCDP."""
        return gaussian_cost(self.sigma, 0.0, self.clip)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mechanism": NAME,
            "share": self.share,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "l2_clip": self.clip,
            "sigma": self.sigma,
            "zcdp_rho": self.cost.rho,
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "what": (
                "each user's occurrence counts of the released items, scaled to l2 norm <= clip, summed, plus "
                "N(0, sigma^2); rounded to 2 decimals and clipped at 0"
            ),
            "composition": (
                f"set release at (1 - {self.share:g}) x (epsilon, delta), counts at {self.share:g} x (epsilon, delta): "
                f"({self.total_epsilon:g}, {self.total_delta:.3g}) by basic composition"
            ),
        }


def check_share(share: Any) -> float:
    """The share in (0, 1): ``SHARE``'s open range, as ``check_fraction`` words it."""
    return check_fraction(share, f"the counts' share of the budget ({SHARE.cli})")


def check_clip(clip: Any) -> float:
    return check_number(
        clip, f"the counts' l2 bound per user ({CLIP.cli})", low=CLIP_MIN, high=CLIP_MAX, hint="1 is typical"
    )


def split_budget(epsilon: float, delta: float, share: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """((epsilon, delta) of the set release, (epsilon, delta) of the counts): the counts get ``share`` of each, the
    set release the rest, lowered by ulps until each pair adds up to at most the given value in exact arithmetic."""
    e, d, s = check_epsilon(epsilon), check_delta(delta), check_share(share)
    e_cnt, d_cnt = e * s, d * s

    def rest(total: float, part: float) -> float:
        return lower_until(total - part, lambda x: Fraction(x) + Fraction(part) <= Fraction(total))

    parts = (rest(e, e_cnt), rest(d, d_cnt)), (e_cnt, d_cnt)
    low_e, low_d = min(parts[0][0], e_cnt), min(parts[0][1], d_cnt)
    if low_e < EPSILON_MIN or low_d < DELTA_MIN:  # the one refusal, naming the split (not a part's own figure)
        k = min(s, 1 - s)
        raise_ = [
            f"{n} ({v:g}) to at least {m / k:.3g}"
            for n, v, m, lo in (
                ("epsilon", e, EPSILON_MIN, low_e < EPSILON_MIN),
                ("delta", d, DELTA_MIN, low_d < DELTA_MIN),
            )
            if lo
        ]
        what = " and ".join(raise_)
        raise ParameterError(
            f"with noisy counts at a share of {s:g}, a part of the budget falls below the smallest allowed "
            f"(epsilon {EPSILON_MIN:g}, delta {DELTA_MIN:g}): raise {what}, or release without counts"
        )
    return parts


def calibrate_counts(
    epsilon: float, delta: float, share: float = DEFAULT_SHARE, clip: float = DEFAULT_CLIP
) -> CountsCalibration:
    """The counts' calibration for a release at (epsilon, delta) in all (public: parameters only)."""
    c = check_clip(clip)
    _, (e_cnt, d_cnt) = split_budget(epsilon, delta, share)
    sigma = analytic_gaussian_sigma(e_cnt, d_cnt, c)
    return CountsCalibration(float(share), e_cnt, d_cnt, c, sigma, float(epsilon), float(delta))


def counts_of(cal: Any) -> CountsCalibration | None:
    """The counts' calibration recorded in a release's calibration (``with_counts``), or None."""
    d = cal.details.item_counts
    if d is None:
        return None
    return CountsCalibration(
        float(d["share"]),
        float(d["epsilon"]),
        float(d["delta"]),
        float(d["l2_clip"]),
        float(d["sigma"]),
        float(d["total_epsilon"]),
        float(d["total_delta"]),
    )


def check_countable(mechanism_cls: Any) -> None:
    """Counts go with a set-union or n-gram release; the count mechanisms release their own."""
    if getattr(mechanism_cls, "kind", None) == "count":
        raise ParameterError(
            f"{mechanism_cls.name} already releases noisy counts; --with-counts is for the set-union and n-gram "
            "mechanisms: drop it"
        )


@numba.njit(cache=True, nogil=True, inline="always")
def _square_up(c):  # pragma: no cover - compiled
    """c^2 for a whole count 0 <= c < 2^31, as a float never below it: exact in int64, rounded up when converted."""
    s = np.int64(c) * np.int64(c)
    f = float(s)
    if np.int64(f) < s:  # f <= 2^62 < 2^63: the conversion back is exact
        return np.nextafter(f, np.inf)
    return f


@numba.njit(cache=True, nogil=True, inline="always")
def _root_up(sq):  # pragma: no cover - compiled
    """sqrt(sq), never below the exact root: raised one ulp unless it is a whole number whose square is sq exactly
    (the common norms 1, 2, 3, 5, ...: no rounding to pay for)."""
    r = math.sqrt(sq)
    if r == math.floor(r) and r < 67108864.0 and r * r == sq:  # r < 2^26: r * r is exact
        return r
    return np.nextafter(r, np.inf)


@numba.njit(cache=True, nogil=True)
def _clipped_units(indptr, items, counts, position, clip, margin, scale, cap, out):  # pragma: no cover - compiled
    """out[position[x]] += floor(C_u[x] / max(clip, ||C_u restricted to released x||_2) * scale) for every user u:
    each user's vector scaled to l2 norm <= clip, in whole units of clip / scale, summed exactly (int64, saturating
    at ``cap``).

    The norm is never below the true one: each square is exact in int64 and rounded up to a float, the squares
    are added rounding up (``norms.add_up``) and the root is rounded up (``_root_up``). The factor
    fl(fl(1 / max(clip, norm)) * margin) and each product by a count are three relative roundings of at most
    2^-53 each, which ``margin`` = 1 - 2^-40 covers; the product by ``scale`` (a power of two) and the floor are
    exact. So every user's vector of units has exact l2 norm <= scale, and the sums are exact."""
    n_users = indptr.shape[0] - 1
    for u in range(n_users):
        a, b = indptr[u], indptr[u + 1]
        sq = 0.0
        for j in range(a, b):
            if position[items[j]] >= 0:
                sq = add_up(sq, _square_up(counts[j]))
        if sq == 0.0:
            continue
        norm = _root_up(sq)
        g = (1.0 / (norm if norm > clip else clip)) * margin
        for j in range(a, b):
            p = position[items[j]]
            if p >= 0:
                t = out[p] + np.int64(math.floor(float(counts[j]) * g * scale))
                out[p] = t if t < cap else cap


def clipped_units(corpus: Any, item_ids: np.ndarray, clip: float, bits: int = COUNT_GRID_BITS) -> np.ndarray:
    """sum_u w_u over the released items (``item_ids`` into the corpus vocabulary, -1 for items it never held), in
    whole units of clip * 2^-bits (int64, exact; ``bits`` other than ``COUNT_GRID_BITS``: tests, a finer grid).
    NOT private: the true sums, before noise. One compiled pass over the CSR."""
    ids = np.asarray(item_ids, dtype=np.int64)
    position = np.full(corpus.n_items, -1, dtype=np.int64)
    held = np.flatnonzero(ids >= 0)
    position[ids[held]] = held
    out = np.zeros(ids.shape[0], dtype=np.int64)
    scale = float(2 ** int(bits))
    _clipped_units(
        corpus.indptr, corpus.items, corpus.counts, position, float(clip), _SCALE_MARGIN, scale, _COUNT_CAP, out
    )
    return out


def unit_of(clip: float) -> float:
    """What one unit of ``clipped_units`` is worth: clip * 2^-COUNT_GRID_BITS (exact: a power of two)."""
    return math.ldexp(float(clip), -COUNT_GRID_BITS)


def clipped_sums(corpus: Any, item_ids: np.ndarray, clip: float) -> np.ndarray:
    """The clipped sums as counts (``clipped_units`` times the unit; diagnostics: the release adds its noise to the
    exact units, ``noisy_counts``)."""
    return clipped_units(corpus, item_ids, clip).astype(np.float64) * unit_of(clip)


def noisy_counts(corpus: Any, item_ids: np.ndarray, cc: CountsCalibration, rng: np.random.Generator) -> np.ndarray:
    """The released counts: the exact clipped sums in units (l2-sensitivity 2^COUNT_GRID_BITS units, exactly) plus
    N(0, sigma_units^2) each, sigma_units = sigma / unit rounded up (sigma is for sensitivity clip: the same ratio);
    then times the unit, rounded and clipped at 0 (post-processing)."""
    units = clipped_units(corpus, item_ids, cc.clip).astype(np.float64)  # <= 2^53: exact
    unit = unit_of(cc.clip)
    sigma_units = math.nextafter(cc.sigma / unit, math.inf)
    noisy = (units + rng.normal(0.0, sigma_units, size=units.shape[0])) * unit
    return np.maximum(np.round(noisy, COUNT_DECIMALS), 0.0)


def with_counts(release: Any, corpus: Any, cc: CountsCalibration, rng: np.random.Generator) -> Any:
    """The release with its noisy counts (and their std) filled in, its calibration recording this step
    (``DETAILS_KEY``) and its guarantee sentence covering both parts. The set release is unchanged."""
    import dataclasses

    from .base import guarantee_sentence

    if release.noisy_counts is not None:
        raise ParameterError(f"the {release.calibration.label} release already has noisy counts; drop --with-counts")
    counts = noisy_counts(corpus, release.item_ids, cc, rng)
    cal = release.calibration
    guarantee = (
        guarantee_sentence(cc.total_epsilon, cc.total_delta, "set of released items with its noisy counts")
        + f" The items were released at ({cal.epsilon:g}, {cal.delta:.3g}), their counts at ({cc.epsilon:g}, "
        f"{cc.delta:.3g}) (Gaussian, sigma = {cc.sigma:.4g} per item, each user's counts bounded to l2 norm "
        f"{cc.clip:g}): basic composition."
    )
    cal = dataclasses.replace(
        cal, guarantee=guarantee, details=dataclasses.replace(cal.details, item_counts=cc.as_dict())
    )
    return dataclasses.replace(
        release, calibration=cal, noisy_counts=counts, count_std=np.full(counts.shape[0], cc.sigma)
    )


def mechanism_with_counts(
    name: str, *, epsilon: float, delta: float, share: float = DEFAULT_SHARE, clip: float = DEFAULT_CLIP, **params: Any
) -> tuple[Any, CountsCalibration]:
    """(the mechanism ``name`` set up at the set release's part of (epsilon, delta), the counts' calibration)."""
    from .registry import mechanism_class

    cls = mechanism_class(name)
    check_countable(cls)
    cc = calibrate_counts(epsilon, delta, share, clip)
    (e_set, d_set), _ = split_budget(epsilon, delta, share)
    return cls(epsilon=e_set, delta=d_set, **params), cc


def release_with_counts(
    mechanism: Any, cc: CountsCalibration, corpus: Any, *, seed: int | None = None, progress: Any = None
) -> Any:
    """The set release, then its counts, from one Generator (seeded by the OS unless ``seed``: teaching only)."""
    from .base import make_rng

    rng = make_rng(seed)
    release = mechanism.release(corpus, seed=seed, rng=rng, progress=progress)
    return with_counts(release, corpus, cc, rng)


def counts_flags(cc: CountsCalibration) -> list[str]:
    """The CLI flags that redo this count release (defaults left out): ``command.release_argv``."""
    flags = ["--with-counts"]
    if cc.share != DEFAULT_SHARE:
        flags += [SHARE.cli, repr(cc.share)]
    if cc.clip != DEFAULT_CLIP:
        flags += [CLIP.cli, repr(cc.clip)]
    return flags


def cost_line(cc: CountsCalibration) -> str:
    """The counts' cost in one line, stated before they run (CLI stderr, the app's spend gate)."""
    return (
        f"noisy counts: {cc.share:g} of the budget, epsilon = {cc.epsilon:.4g}, delta = {cc.delta:.3g} "
        f"(Gaussian sigma = {cc.sigma:.4g}, each user's counts bounded to l2 norm {cc.clip:g}, zCDP rho = "
        f"{cc.cost.rho:.4g}); the items get the rest: together ({cc.total_epsilon:g}, {cc.total_delta:.3g})"
    )
