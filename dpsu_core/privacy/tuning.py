"""Data-independent tuning of the delta split between the Gaussian noise and the threshold (issue 17, point 6a).

Every Gaussian set-union mechanism spends its delta in two places: ``delta_noise`` on the Gaussian
mechanism over the items other users also hold (sigma is the analytic-Gaussian noise for
(epsilon, delta_noise) at l2-sensitivity 1, Balle & Wang 2018) and ``delta_threshold`` on the event that
one of the added user's own items crosses the threshold rho (Gopi et al. 2020, Theorem 5.1 and its
Gaussian form). dpsu has always split delta in two halves; this module chooses the split instead.

Why any split is valid. The proof of each mechanism (docs/policy_sips.md; docs/algorithms.md §2 and §7) bounds
the privacy loss by (epsilon, delta_noise) from the Gaussian part plus delta_threshold from the threshold
event, and adds the two: it never uses delta_noise = delta_threshold. So for every pair with
delta_noise + delta_threshold <= delta, where sigma is calibrated for delta_noise and rho for
delta_threshold, the release is (epsilon, delta)-DP. ``split_delta`` rounds delta_threshold down until
the sum is <= delta in exact rational arithmetic.

Why the choice costs no privacy. ``best_split`` is a function of the public parameters only (epsilon,
delta, Delta0, alpha, the mechanism's rounds, and the number of users k the analyst names): it evaluates an
objective computed from the calibration alone over a fixed grid of shares and keeps the best. No data is read,
so the chosen calibration is as public as the default one, and the guarantee of the chosen split is the one above.

The objective (``mechanisms.policy_sips.choose_split``). The utility preview's chance of release of an item held
by k users, each holding Delta0 items (``mechanisms.traits.stages_release_probability``): the split moves sigma (through
delta_noise) and the thresholds (through delta_threshold) in opposite directions, and the chance at k weighs
both. k = 0 names the item at the margin (half the highest chance under the halves). At the standard setting
(epsilon 3, delta e^-10, Delta0 100) the margin is k = 69 and the best share 0.6, which lifts the chance from 0.5228
to 0.5261: the surface is flat, and the released count moves by less than its run-to-run spread
(``benchmarks/bench_setunion.py``, ``bench_frontier_demo.py``). An earlier proxy, the smallest threshold rho, picks
the same share there; minimising the cutoff Gamma picked 0.7 and released about 1% fewer items.

alpha is not chosen here: in the same single-item model the chance only grows with alpha (the thresholds do not
depend on it; Gamma = rho + alpha sigma only lifts the cap), so the parameters alone cannot choose it
(docs/algorithms.md §7).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .gaussian import lower_until
from .validate import check_delta, check_fraction

#: the noise shares ``best_split`` tries: 0.05 to 0.95 in steps of 0.05 (0.5, the default split, included)
SHARES: tuple[float, ...] = tuple(round(0.05 * k, 2) for k in range(1, 20))
#: the parameter values of the ``delta_split`` choice
HALF, TUNED = "half", "tuned"


@dataclass(frozen=True)
class DeltaSplit:
    """delta = delta_noise (Gaussian mechanism) + delta_threshold (threshold event), exactly or less."""

    noise_share: float
    delta_noise: float
    delta_threshold: float


def split_delta(delta: float, noise_share: float = 0.5) -> DeltaSplit:
    """delta_noise = noise_share * delta; delta_threshold = the rest, rounded down so that
    delta_noise + delta_threshold <= delta holds exactly (``fractions.Fraction``)."""
    d = check_delta(delta)
    s = check_fraction(noise_share, "noise_share")
    noise = d * s
    thr = lower_until(d - noise, lambda x: Fraction(x) + Fraction(noise) <= Fraction(d))
    return DeltaSplit(s, noise, thr)


def best_split(
    delta: float, proxy: Callable[[DeltaSplit], float], shares: Sequence[float] = SHARES
) -> tuple[DeltaSplit, float]:
    """The split of ``delta`` over ``shares`` with the smallest ``proxy`` (the first on ties), and that value
    (to maximise an objective, hand it the objective's negative).

    ``proxy`` must be a function of public parameters only (it is handed the split and nothing else)."""
    best: tuple[DeltaSplit, float] | None = None
    for s in shares:
        split = split_delta(delta, s)
        value = float(proxy(split))
        if best is None or value < best[1]:
            best = (split, value)
    assert best is not None, "shares is empty"
    return best
