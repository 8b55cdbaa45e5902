"""Whether noisy counts are worth their share of the budget: advice from the parameters only (no data read).

A released word's noisy count changes a subword tokenizer's training text only from ``MORE_THAN_ONCE_AT`` sigma
up (``tokenizer_export.training_frequencies``: below it the word trains once, as without counts). With each
user's vector bounded to l2 norm C, a user holding m released words, each used once, adds min(1, C / sqrt(m)) to
each of them; so a word's count reaches that level only when about

    users_for_signal = ceil(MORE_THAN_ONCE_AT * sigma / min(1, C / sqrt(m)))

users hold it. Beside it: the users the set release needs for a 50% chance of releasing a word at its part of
the budget and at the whole budget (``utility.utility_preview``, the same m), since the counts' share costs the
release the words in between. Both figures scale as about 1 / epsilon, so their ratio hardly moves with epsilon:
what decides whether counts pay is whether the tokenizer's vocabulary is too small to keep every released word
whole (then the counts choose which words stay whole); when it holds them all, every word keeps its own token
whatever its count, and the counts only cost released words. At a low epsilon the release is small, so that is
the common case (the tokenizer benchmark, ``python -m benchmarks.run tokenizer``, shows it on the demo corpus).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import ParameterError
from ..mechanisms.item_counts import CountsCalibration
from ..outputs.tokenizer_export import MORE_THAN_ONCE_AT
from ..privacy.validate import check_max_items
from .utility import has_preview, utility_preview


@dataclass(frozen=True)
class CountsAdvice:
    sigma: float  # the noise's standard deviation per count
    signal: float  # MORE_THAN_ONCE_AT * sigma: the count from which a word trains more than once
    items_per_user: int  # m, the assumption (the utility preview's)
    per_user: float  # what one user adds to each of their m words: min(1, C / sqrt(m))
    users_for_signal: int  # users a word needs for its expected count to reach ``signal``
    users_released: int | None  # users for a 50% chance of release at the set release's part (None: no preview)
    users_released_whole: int | None  # the same at the whole budget (the release without counts)
    text: str


def users_for_signal(sigma: float, clip: float, items_per_user: int) -> tuple[float, int]:
    """(what one user adds to each of their words, how many such users a word needs for its count to reach
    ``MORE_THAN_ONCE_AT`` sigma)."""
    per_user = min(1.0, clip / math.sqrt(items_per_user))
    return per_user, max(1, math.ceil(MORE_THAN_ONCE_AT * sigma / per_user))


def _users_50(cal: Any, m: int) -> int | None:
    if cal is None or not has_preview(cal.mechanism):
        return None
    return utility_preview(cal, m).users_needed[0.5]


def counts_advice(
    cc: CountsCalibration, items_per_user: int, set_cal: Any = None, whole_cal: Any = None
) -> CountsAdvice:
    """The advice for counts ``cc``, assuming each user holds ``items_per_user`` words; ``set_cal`` is the set
    release's calibration at its part of the budget and ``whole_cal`` at the whole budget (either may be None, or
    a mechanism with no utility preview: then the comparison is left out)."""
    if not isinstance(cc, CountsCalibration):
        raise ParameterError(f"expected the counts' calibration, got {type(cc).__name__}")
    m = check_max_items(items_per_user, "items per user")
    per_user, k = users_for_signal(cc.sigma, cc.clip, m)
    signal = MORE_THAN_ONCE_AT * cc.sigma
    rest, whole = _users_50(set_cal, m), _users_50(whole_cal, m)
    text = (
        f"Noise per count: σ = {cc.sigma:.4g} (each user's counts bounded to l2 norm {cc.clip:g}). A subword "
        f"tokenizer weighs a word's count above once only from {MORE_THAN_ONCE_AT:g} σ = {signal:.4g}: with each user "
        f"holding {m:,} word{'s' if m != 1 else ''} (each used once, adding {per_user:.3g} to each), that takes about "
        f"{k:,} users of the word."
    )
    if rest is not None:
        text += f" The set release needs about {rest:,} users for a 50% chance of releasing a word"
        if whole is not None and whole != rest:
            text += f" ({whole:,} at the whole budget: the counts' share costs the words in between)"
        text += (
            f", so the counts rank only the words used by {k / rest:.2g}× as many users; the rest train once, as "
            "without counts."
        )
    text += (
        " Counts pay when the tokenizer's vocabulary is too small to keep every released word whole (they choose "
        "which words stay whole); when it holds them all, they only cost released words, as at a low ε, where "
        "the release is small."
    )
    return CountsAdvice(cc.sigma, signal, m, per_user, k, rest, whole, text)
