"""Guidance on delta for a corpus of n users: delta is the probability that the epsilon guarantee fails,
so it must stay well below 1/n (at delta >= 1/n a mechanism could publish one user's data outright).

Used by the CLI (a ``warning:`` line on stderr) and the app (the sidebar and the Release page).
n is the raw number of users: the guidance is for the analyst, not part of any release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Guidance:
    level: str  # "ok", "warning" or "error"
    message: str
    suggested: float


def suggested_delta(n_users: int) -> float:
    """A power of ten at or below 1/(100 n): well below the 1/n at which one user could be exposed."""
    n = max(int(n_users), 1)
    return float(10.0 ** math.floor(math.log10(1.0 / (100.0 * n))))


def delta_guidance(delta: float, n_users: int) -> Guidance:
    """Is delta well below 1/n? "error" at delta >= 1/n, "warning" above 1/(10 n), "ok" below."""
    n = max(int(n_users), 1)
    sug = suggested_delta(n)
    if delta >= 1.0 / n:
        return Guidance(
            "error",
            f"δ = {delta:.2g} is at least 1/(number of users) = {1.0 / n:.2g}: a mechanism "
            f"with this δ could publish one user's data outright. Use δ ≤ {sug:.0e}.",
            sug,
        )
    if delta > 0.1 / n:
        return Guidance(
            "warning", f"δ = {delta:.2g} is not well below 1/(number of users) = {1.0 / n:.2g}. Use δ ≤ {sug:.0e}.", sug
        )
    return Guidance("ok", f"δ = {delta:.2g} is well below 1/(number of users) = {1.0 / n:.2g}.", sug)
