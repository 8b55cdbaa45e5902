"""A privacy ledger: every release made on a corpus, and what the releases together have spent.

Each release of a mechanism at (epsilon, delta) on a corpus spends (epsilon, delta) of that corpus's users'
privacy; k releases spend, by basic composition, (sum epsilon, sum delta) (Dwork & Roth, Thm 3.16).

Where every entry is zCDP-accountable, a tighter total comes from zCDP composition (Bun & Steinke 2016):
  * Gaussian-family set union / n-gram mechanisms (Weighted, Policy and Count Gaussian, DPNE and the DPSU
    baselines): the released set is a Gaussian mechanism on the items both neighbours can hold (l2-sensitivity
    ``l2``, noise ``sigma``: rho = l2^2 / (2 sigma^2)-zCDP) plus the event that an item only the extra user holds
    crosses the threshold, of probability <= delta/2 (the threshold's half of delta, spec section 2). That is
    delta/2-approximate rho-zCDP, the same decomposition as spec section 8 (DP-SIPS).
  * The bounded-counts baseline: its partition selection as above at its own (epsilon, delta) share, plus a
    Gaussian count mechanism (rho = Delta0 / (2 sigma_count^2), no delta).
  * PCR: delta_zcdp-approximate rho_zcdp-zCDP by construction (Rogers 2024; its budget is an upper bound on what
    its privacy filter spends).
Approximate zCDP composes by adding rho and the approximate delta; the sum converts back to DP with
``privacy.zcdp.zcdp_to_dp_epsilon`` at delta' = (sum of the entries' delta) - (sum of their approximate deltas), so
the zCDP total has the same delta as the basic total and the two epsilons compare directly.
Laplace-family mechanisms (and GW / GW-KT) are not zCDP-accounted here: a ledger holding one gets the basic
total only.

Nothing here looks at data: an entry is the public calibration of a release plus where and when it ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .errors import ParameterError
from .mechanisms.base import Calibration
from .privacy.validate import check_delta, check_epsilon
from .privacy.zcdp import gaussian_zcdp, zcdp_to_dp_epsilon


@dataclass(frozen=True)
class ZcdpCost:
    """A release as delta-approximate rho-zCDP (public: a function of the calibration)."""

    rho: float
    delta: float  # the approximate-zCDP delta (the part of the entry's delta not needed for a conversion)


def zcdp_cost(cal: Calibration) -> ZcdpCost | None:
    """The zCDP cost of one release with this calibration, or None if it is not zCDP-accounted (Laplace family)."""
    d = cal.details or {}
    if "rho_zcdp" in d and "delta_zcdp" in d:  # natively approximate zCDP (PCR, DP-SIPS)
        return ZcdpCost(float(d["rho_zcdp"]), float(d["delta_zcdp"]))
    if "count_zcdp_rho" in d and "selection_sigma" in d:  # bounded counts: Gaussian selection + Gaussian counts
        return ZcdpCost(
            gaussian_zcdp(float(d["selection_sigma"])) + float(d["count_zcdp_rho"]),
            float(d["selection_delta"]) / 2.0,
        )
    if cal.noise == "gaussian":
        return ZcdpCost(gaussian_zcdp(cal.scale, float(d.get("l2_sensitivity", 1.0))), cal.delta / 2.0)
    return None


@dataclass(frozen=True)
class LedgerEntry:
    """``releases`` runs of one configuration on one corpus (each spends (epsilon, delta))."""

    mechanism: str
    label: str
    epsilon: float
    delta: float
    noise: str
    corpus_id: Any
    source: str  # the page or command that ran it
    releases: int = 1
    time_utc: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"))
    zcdp: ZcdpCost | None = None
    teaching: bool = False

    @classmethod
    def from_calibration(
        cls, cal: Calibration, *, corpus_id: Any, source: str, releases: int = 1, teaching: bool = False
    ) -> LedgerEntry:
        if isinstance(releases, bool) or not isinstance(releases, int) or releases < 1:
            raise ParameterError(f"releases must be a positive integer, got {releases!r}")
        return cls(
            mechanism=cal.mechanism,
            label=cal.label,
            epsilon=check_epsilon(cal.epsilon),
            delta=check_delta(cal.delta),
            noise=cal.noise,
            corpus_id=corpus_id,
            source=source,
            releases=releases,
            zcdp=zcdp_cost(cal),
            teaching=teaching,
        )


@dataclass(frozen=True)
class LedgerTotal:
    """What a set of entries spent together. ``zcdp_epsilon`` is None unless every entry is zCDP-accounted."""

    releases: int
    basic_epsilon: float
    basic_delta: float
    zcdp_epsilon: float | None = None
    zcdp_rho: float | None = None

    @property
    def tightest_epsilon(self) -> float:
        """The smaller of the two epsilons (both hold at ``basic_delta``)."""
        if self.zcdp_epsilon is None:
            return self.basic_epsilon
        return min(self.basic_epsilon, self.zcdp_epsilon)

    def sentence(self) -> str:
        if self.releases == 0:
            return "nothing spent yet"
        s = (
            f"{self.releases} release{'s' if self.releases != 1 else ''}: "
            f"ε = {self.basic_epsilon:.4g}, δ = {self.basic_delta:.2g} by basic composition"
        )
        if self.zcdp_epsilon is not None:
            s += f"; ε = {self.zcdp_epsilon:.4g} at the same δ by zCDP composition"
        return s


def total(entries: list[LedgerEntry]) -> LedgerTotal:
    """Basic composition of the entries, and zCDP composition where every entry is zCDP-accounted."""
    n = sum(e.releases for e in entries)
    if n == 0:
        return LedgerTotal(0, 0.0, 0.0)
    eps = math.fsum(e.epsilon * e.releases for e in entries)
    delta = math.fsum(e.delta * e.releases for e in entries)
    if any(e.zcdp is None for e in entries):
        return LedgerTotal(n, eps, delta)
    rho = math.fsum(e.zcdp.rho * e.releases for e in entries if e.zcdp is not None)
    delta_approx = math.fsum(e.zcdp.delta * e.releases for e in entries if e.zcdp is not None)
    delta_conv = delta - delta_approx
    if delta_conv <= 0:  # pragma: no cover - every cost keeps a positive share of delta for the conversion
        return LedgerTotal(n, eps, delta)
    return LedgerTotal(n, eps, delta, zcdp_to_dp_epsilon(rho, delta_conv), rho)


def cost_of(cal: Calibration, releases: int) -> LedgerTotal:
    """What ``releases`` runs with this calibration would spend (shown before a comparison runs)."""
    return total([LedgerEntry.from_calibration(cal, corpus_id=None, source="preview", releases=releases)])


class Ledger:
    """The entries of one session, in order. Totals are per corpus (the privacy of different corpora's users
    does not compose)."""

    def __init__(self) -> None:
        self.entries: list[LedgerEntry] = []

    def record(
        self,
        cal: Calibration,
        *,
        corpus_id: Any,
        source: str,
        releases: int = 1,
        teaching: bool = False,
    ) -> LedgerEntry:
        entry = LedgerEntry.from_calibration(
            cal, corpus_id=corpus_id, source=source, releases=releases, teaching=teaching
        )
        self.entries.append(entry)
        return entry

    def for_corpus(self, corpus_id: Any) -> list[LedgerEntry]:
        return [e for e in self.entries if e.corpus_id == corpus_id]

    def total(self, corpus_id: Any) -> LedgerTotal:
        return total(self.for_corpus(corpus_id))

    def frame(self, corpus_id: Any):
        """The corpus's entries as a table (public: parameters, times and pages only)."""
        import pandas as pd

        rows = [
            {
                "time (UTC)": e.time_utc,
                "page": e.source,
                "mechanism": e.label,
                "releases": e.releases,
                "ε each": e.epsilon,
                "δ each": e.delta,
                "noise": e.noise,
                "zCDP ρ each": None if e.zcdp is None else e.zcdp.rho,
                "teaching seed": e.teaching,
            }
            for e in self.for_corpus(corpus_id)
        ]
        return pd.DataFrame(rows)


def spent_line(cal: Calibration) -> str:
    """One line for the CLI's stderr: what a single release spent."""
    t = cost_of(cal, 1)
    z = zcdp_cost(cal)
    extra = f" (as zCDP: rho = {z.rho:.4g}, approximate delta = {z.delta:.3g})" if z is not None else ""
    return (
        f"privacy spent by this run: epsilon = {t.basic_epsilon:g}, delta = {t.basic_delta:.3g} on this corpus's "
        f"users{extra}; every further release of the same data spends again"
    )


def ledger_summary(t: LedgerTotal) -> dict[str, Any]:
    """A ledger total for the release report (public: counts of releases and their budgets only)."""
    return {
        "releases": t.releases,
        "basic_epsilon": t.basic_epsilon,
        "basic_delta": t.basic_delta,
        "zcdp_epsilon": t.zcdp_epsilon,
        "summary": t.sentence(),
    }
