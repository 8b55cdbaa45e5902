"""A privacy ledger: every release made on a corpus, and what the releases together have spent.

Each release of a mechanism at (epsilon, delta) on a corpus spends (epsilon, delta) of that corpus's users'
privacy; k releases spend, by basic composition, (sum epsilon, sum delta) (Dwork & Roth, Thm 3.16).

Where every entry is zCDP-accountable, a tighter total comes from zCDP composition (Bun & Steinke 2016). Each
mechanism class declares its own cost (``Mechanism.privacy_cost``, docs/algorithms.md §8); in short:
  * Gaussian-family set union / n-gram mechanisms (Weighted, Policy and Count Gaussian, DPNE and the DPSU
    baselines): the released set is a Gaussian mechanism on the items both neighbours can hold (l2-sensitivity
    ``l2``, noise ``sigma``: rho = l2^2 / (2 sigma^2)-zCDP) plus the event that an item only the extra user holds
    crosses the threshold, of probability <= delta/2 (the threshold's half of delta, docs/algorithms.md §2). That
    is delta/2-approximate rho-zCDP.
  * DP-SIPS: the same per round (rho_i, delta_i); the rounds' rho and delta_i add (docs/algorithms.md §7).
  * The bounded-counts baseline: its partition selection as above at its own (epsilon, delta) share, plus a
    Gaussian count mechanism (rho = Delta0 / (2 sigma_count^2), no delta).
  * PCR: delta_zcdp-approximate rho_zcdp-zCDP by construction (Rogers 2024; its budget is an upper bound on what
    its privacy filter spends).
  * Laplace-family mechanisms (Count, Weighted, Policy Laplace, GW, GW-KT): an epsilon-DP Laplace mechanism on the
    common items plus the threshold event, of probability <= delta (``Mechanism.laplace_cost``).
The totals (``total``): basic composition always; zCDP composition of the zCDP-accounted entries and Gaussian-DP
composition of the Gaussian parts, each with basic composition of the other entries; and dp-accounting's
privacy-loss-distribution accountant over everything (``privacy.pld``: Gaussian parts, Laplace parts, PCR through
its own stated bound, threshold deltas added). All hold at the same delta, the entries' deltas added exactly
(``fractions.Fraction``) and rounded up, so the epsilons compare directly; the headline is the smallest.

Nothing here looks at data: an entry is the public calibration of a release plus where and when it ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from ..mechanisms.base import Calibration
from ..mechanisms.registry import mechanism_class
from ..privacy.cost import LaplaceCost, ZcdpCost
from ..privacy.gaussian import gaussian_delta, gaussian_delta_exact, raise_until
from ..privacy.pld import pld_epsilon, remaining_delta, sum_up
from ..privacy.validate import check_delta, check_epsilon, check_positive, check_positive_int
from ..privacy.zcdp import zcdp_to_dp_epsilon

__all__ = ["Ledger", "LedgerEntry", "LedgerTotal", "ZcdpCost", "cost_of", "ledger_summary", "total", "zcdp_cost"]


def zcdp_cost(cal: Calibration) -> ZcdpCost | None:
    """The zCDP cost of one release with this calibration, as its mechanism declares it
    (``Mechanism.privacy_cost``), or None if it is not zCDP-accounted (Laplace family, GW)."""
    return mechanism_class(cal.mechanism).privacy_cost(cal)


@dataclass(frozen=True)
class LedgerEntry:
    """``releases`` runs of one configuration on one corpus (each spends (epsilon, delta))."""

    mechanism: str
    label: str
    epsilon: float
    delta: float
    noise: str
    corpus_id: str | int | None
    source: str  # the page or command that ran it
    releases: int = 1
    time_utc: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"))
    zcdp: ZcdpCost | None = None
    teaching: bool = False
    laplace: LaplaceCost | None = None

    @classmethod
    def from_calibration(
        cls, cal: Calibration, *, corpus_id: str | int | None, source: str, releases: int = 1, teaching: bool = False
    ) -> LedgerEntry:
        releases = check_positive_int(releases, "releases")
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
            laplace=mechanism_class(cal.mechanism).laplace_cost(cal),
        )


BASIC, ZCDP, GDP = "basic composition", "zCDP composition", "Gaussian-DP composition"
ZCDP_BASIC = "zCDP composition + basic composition of the rest"
GDP_BASIC = "Gaussian-DP composition + basic composition of the rest"
PLD = "privacy-loss distribution (dp-accounting)"
NO_GUARANTEE = "no DP guarantee on this corpus"
TIE = 1e-9  # bounds within this relative distance of the smallest count as equal (the simplest method is named)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon at which a mu-GDP mechanism is (epsilon, delta)-DP (Dong, Roth & Su 2019, Cor. 2.13):
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), the analytic-Gaussian curve at sensitivity mu
    and noise 1. Bisection in floats, then raised until the 60-digit evaluation is <= delta (rounded up: safe)."""
    mu, delta = check_positive(mu, "mu (Gaussian DP)"), check_delta(delta)
    if gaussian_delta(1.0, 0.0, mu) <= delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu / 2.0 + mu * math.sqrt(2.0 * -math.log(delta)))
    while gaussian_delta(1.0, hi, mu) > delta:  # pragma: no cover - the bound above already holds
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if gaussian_delta(1.0, mid, mu) <= delta else (mid, hi)
    return raise_until(hi, lambda e: gaussian_delta_exact(1.0, e, mu) <= delta)


@dataclass(frozen=True)
class LedgerTotal:
    """What a set of entries spent together, by every composition that applies; all hold at ``basic_delta``.

    ``zcdp_epsilon``: zCDP composition of the zCDP-accounted entries plus basic composition of the others (None
    when no entry is zCDP-accounted; ``zcdp_mixed`` says whether basic composition took part). ``gdp_epsilon``:
    Gaussian DP of the entries whose zCDP part is a composition of Gaussian mechanisms plus basic composition of
    the others (``gdp_mixed`` likewise). ``pld_epsilon``: dp-accounting's privacy-loss-distribution accountant
    over every entry (``privacy.pld``). ``seeded`` counts releases made with a fixed seed (teaching mode): their
    noise can be recomputed from the seed, so a total holding one promises no guarantee at all. A total whose
    deltas add up to 1 or more (``delta_exceeded``) promises none either: (epsilon, delta)-DP with delta >= 1
    holds for every mechanism, however much it reveals."""

    releases: int
    basic_epsilon: float
    basic_delta: float
    zcdp_epsilon: float | None = None
    zcdp_rho: float | None = None
    gdp_epsilon: float | None = None
    gdp_mu: float | None = None
    seeded: int = 0
    pld_epsilon: float | None = None
    zcdp_mixed: bool = False
    gdp_mixed: bool = False
    pld_note: str | None = None  # why the PLD figure is left out, where it is (not representable, or not tighter)

    @property
    def bounds(self) -> dict[str, float]:
        """Every valid epsilon bound at ``basic_delta``, by how it was obtained."""
        out = {BASIC: self.basic_epsilon}
        if self.zcdp_epsilon is not None:
            out[ZCDP_BASIC if self.zcdp_mixed else ZCDP] = self.zcdp_epsilon
        if self.gdp_epsilon is not None:
            out[GDP_BASIC if self.gdp_mixed else GDP] = self.gdp_epsilon
        if self.pld_epsilon is not None:
            out[PLD] = self.pld_epsilon
        return out

    @property
    def delta_exceeded(self) -> bool:
        """Whether the deltas add up to 1 or more: past delta = 1 there is no guarantee (spend gates treat it as
        over any budget)."""
        return self.basic_delta >= 1.0

    @property
    def guaranteed(self) -> bool:
        """False once a fixed-seed (teaching) release is among the entries, or once the deltas reach 1."""
        return self.seeded == 0 and not self.delta_exceeded

    @property
    def method(self) -> str:
        """How the headline was obtained: the composition giving the smallest epsilon (the simplest of those within
        a relative 1e-9 of it: one release's own ε, by basic composition, rather than a PLD figure 1e-13 below)."""
        b = self.bounds
        least = min(b.values())
        return next(k for k, v in b.items() if v <= least + abs(least) * TIE)

    @property
    def epsilon(self) -> float:
        """The headline: the smallest valid epsilon bound (at ``basic_delta``)."""
        return self.bounds[self.method]

    def headline(self) -> str:
        """The figure every page quotes: "ε = 4.29, δ = 2e-06" or that there is no guarantee."""
        if self.delta_exceeded:
            return f"{NO_GUARANTEE} (δ = {self.basic_delta:.3g} ≥ 1)"
        if not self.guaranteed:
            return NO_GUARANTEE
        return f"ε = {self.epsilon:.4g}, δ = {self.basic_delta:.2g}"

    def detail(self) -> str:
        """How the headline was obtained, with the other bounds beside it."""
        if self.releases == 0:
            return "nothing spent yet"
        if self.delta_exceeded:
            return (
                f"the {self.releases} releases' deltas add up to {self.basic_delta:.3g} by basic composition: a δ "
                "of 1 or more bounds nothing, so the session promises no differential privacy on this corpus"
            )
        if not self.guaranteed:
            return (
                f"{self.seeded} of the {self.releases} releases used a fixed seed (teaching mode): their noise can be "
                "recomputed from the seed, so the session promises no differential privacy on this corpus"
            )
        others = ", ".join(f"{k}: ε = {v:.4g}" for k, v in self.bounds.items() if k != self.method)
        out = f"by {self.method} (the smallest valid bound)" + (f"; {others}" if others else "")
        return out + (f"; {PLD} left out: {self.pld_note}" if self.pld_note else "")

    def sentence(self) -> str:
        if self.releases == 0:
            return "nothing spent yet"
        n = f"{self.releases} release{'s' if self.releases != 1 else ''}"
        if not self.guaranteed:
            return f"{n}: {NO_GUARANTEE} ({self.detail()})"
        return f"{n}: {self.headline()} {self.detail()}"


def _sum_eps(parts: list[tuple[float, int]]) -> float:
    """A sum of epsilons (times their counts), exactly, rounded up."""
    return sum_up(parts)


def total(entries: list[LedgerEntry]) -> LedgerTotal:
    """Every composition that applies to the entries, all at the basic total's delta (the entries' deltas added
    exactly, ``fractions.Fraction``, and rounded up):
      * basic: the epsilons add;
      * zCDP (+ basic): the zCDP-accounted entries' rho add and their approximate deltas add; the delta the whole
        total leaves (after those and the other entries' deltas, exactly, rounded down) converts the rho; the other
        entries' epsilons add to it;
      * Gaussian DP (+ basic): the entries whose rho part is a composition of Gaussian mechanisms (mu^2 adds,
        exactly) read epsilon off the analytic-Gaussian curve at the delta left after their threshold deltas and
        the other entries' deltas; the other entries' epsilons add to it;
      * PLD: dp-accounting's privacy-loss-distribution accountant over the Gaussian parts, the Laplace parts and
        every other entry through its own (epsilon, delta) bound, at the delta the threshold events leave
        (``privacy.pld``).
    The headline (``LedgerTotal.epsilon``) is the smallest."""
    n = sum(e.releases for e in entries)
    if n == 0:
        return LedgerTotal(0, 0.0, 0.0)
    all_deltas = [(e.delta, e.releases) for e in entries]
    eps = _sum_eps([(e.epsilon, e.releases) for e in entries])
    delta = sum_up(all_deltas)
    seeded = sum(e.releases for e in entries if e.teaching)
    if delta >= 1.0:  # no guarantee (``LedgerTotal.delta_exceeded``): no conversion at a delta of 1 or more
        return LedgerTotal(n, eps, delta, seeded=seeded)

    # zCDP on the zCDP-accounted entries, basic on the others
    z_eps = rho = None
    zs = [e for e in entries if e.zcdp is not None]
    rest = [e for e in entries if e.zcdp is None]
    if zs:
        conv = remaining_delta(all_deltas, [(e.zcdp.delta, e.releases) for e in zs if e.zcdp] + _deltas(rest))
        if conv > 0:
            rho = sum_up([(e.zcdp.rho, e.releases) for e in zs if e.zcdp])
            z_eps = _sum_eps([(zcdp_to_dp_epsilon(rho, conv), 1)] + _epsilons(rest))

    # Gaussian DP on the Gaussian parts, basic on the others
    g_eps = g_mu = None
    gs = [e for e in entries if _is_gaussian(e)]
    not_g = [e for e in entries if not _is_gaussian(e)]
    if gs:
        g_mu = _gaussian_mu(gs)
        conv = remaining_delta(all_deltas, _threshold_deltas(gs) + _deltas(not_g))
        if conv > 0:
            g_eps = _sum_eps([(gdp_epsilon(g_mu, conv), 1)] + _epsilons(not_g))

    lap = [e for e in entries if e.laplace is not None]
    generic = [e for e in entries if not _is_gaussian(e) and e.laplace is None]
    # the privacy-loss distribution of everything: only where it can beat the others (Gaussian DP is exact on
    # Gaussian parts alone; one release's own (ε, δ) is its basic total), so a Gaussian-only session never loads
    # dp-accounting
    p_eps = p_note = None
    rem = remaining_delta(all_deltas, _threshold_deltas(gs) + [(e.laplace.delta, e.releases) for e in lap if e.laplace])
    if rem > 0 and (lap or generic) and n > 1:
        p_eps, p_note = pld_epsilon(
            g_mu,
            tuple(_merged([(e.laplace.epsilon, e.releases) for e in lap if e.laplace])),
            tuple((e.epsilon, e.delta, k) for (e, k) in _merged_entries(generic)),
            rem,
        )
        if p_eps is not None and p_eps > eps:  # valid but loose: its grid is coarse next to the smallest ε
            p_eps, p_note = None, f"its figure (ε = {p_eps:.4g}) is above basic composition's, its grid too coarse"
    return LedgerTotal(
        n,
        eps,
        delta,
        z_eps,
        rho,
        g_eps,
        g_mu,
        seeded,
        p_eps,
        zcdp_mixed=bool(rest),
        gdp_mixed=bool(not_g),
        pld_note=p_note,
    )


def within(entries: list[LedgerEntry], epsilon_cap: float, delta_cap: float) -> bool:
    """Whether the entries' total (``total(entries).epsilon``, at their deltas added exactly) stays within the caps.
    The basic total first: it bounds every other composition from above and costs a sum, so the tight total (a
    privacy-loss distribution, seconds on a long ledger) is composed only when the basic one passes the cap."""
    if sum_up([(e.delta, e.releases) for e in entries]) > delta_cap:
        return False
    if _sum_eps([(e.epsilon, e.releases) for e in entries]) <= epsilon_cap:
        return True
    return total(entries).epsilon <= epsilon_cap


def _is_gaussian(e: LedgerEntry) -> bool:
    """Whether the entry's continuous part is exactly a composition of Gaussian mechanisms (mu^2 known)."""
    return e.zcdp is not None and e.zcdp.gaussian_mu_sq is not None


def _deltas(entries: list[LedgerEntry]) -> list[tuple[float, int]]:
    return [(e.delta, e.releases) for e in entries]


def _epsilons(entries: list[LedgerEntry]) -> list[tuple[float, int]]:
    return [(e.epsilon, e.releases) for e in entries]


def _threshold_deltas(gaussian: list[LedgerEntry]) -> list[tuple[float, int]]:
    return [(e.zcdp.delta, e.releases) for e in gaussian if e.zcdp is not None]


def _gaussian_mu(gaussian: list[LedgerEntry]) -> float:
    """mu = sqrt(sum of mu_i^2 x releases), the sum exact and the root rounded up (a larger mu is safe)."""
    mu_sq = sum_up([(e.zcdp.gaussian_mu_sq or 0.0, e.releases) for e in gaussian if e.zcdp is not None])
    mu = math.sqrt(mu_sq)
    return mu if Fraction(mu) ** 2 >= Fraction(mu_sq) else math.nextafter(mu, math.inf)


def _merged(parts: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """(value, count) pairs with equal values merged (one self-composition per configuration)."""
    out: dict[float, int] = {}
    for v, k in parts:
        out[v] = out.get(v, 0) + k
    return sorted(out.items())


def _merged_entries(entries: list[LedgerEntry]) -> list[tuple[LedgerEntry, int]]:
    out: dict[tuple[float, float], tuple[LedgerEntry, int]] = {}
    for e in entries:
        key = (e.epsilon, e.delta)
        out[key] = (e, out[key][1] + e.releases) if key in out else (e, e.releases)
    return list(out.values())


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
        corpus_id: str | int | None,
        source: str,
        releases: int = 1,
        teaching: bool = False,
    ) -> LedgerEntry:
        entry = LedgerEntry.from_calibration(
            cal, corpus_id=corpus_id, source=source, releases=releases, teaching=teaching
        )
        self.entries.append(entry)
        return entry

    def add(self, entries: tuple[LedgerEntry, ...] | list[LedgerEntry]) -> None:
        """Enter planned entries (``spend.SpendPlan.entries``) as they are attempted."""
        self.entries.extend(entries)

    def for_corpus(self, corpus_id: str | int | None) -> list[LedgerEntry]:
        return [e for e in self.entries if e.corpus_id == corpus_id]

    def total(self, corpus_id: str | int | None) -> LedgerTotal:
        return total(self.for_corpus(corpus_id))

    def frame(self, corpus_id: str | int | None, *, compact: bool = False):
        """The corpus's entries as a table (public: parameters, times and pages only); ``compact``: mechanism,
        releases, ε and δ only (the sidebar)."""
        import pandas as pd

        if compact:
            return pd.DataFrame(
                [
                    {"mechanism": e.label, "×": e.releases, "ε": e.epsilon, "δ": e.delta}
                    for e in self.for_corpus(corpus_id)
                ]
            )

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
                "fixed seed (teaching)": e.teaching,
            }
            for e in self.for_corpus(corpus_id)
        ]
        return pd.DataFrame(rows)


def spent_line(cal: Calibration) -> str:
    """One line for the CLI's stderr: what a single release spent (its own epsilon and delta, the basic total
    of one entry: no composition is computed, so the line costs no numerical search)."""
    e = LedgerEntry.from_calibration(cal, corpus_id=None, source="preview", releases=1)
    z = e.zcdp
    extra = f" (as zCDP: rho = {z.rho:.4g}, approximate delta = {z.delta:.3g})" if z is not None else ""
    return (
        f"privacy spent by this run: epsilon = {e.epsilon:g}, delta = {e.delta:.3g} on this corpus's "
        f"users{extra}; every further release of the same data spends again"
    )


def ledger_summary(t: LedgerTotal) -> dict[str, Any]:
    """A ledger total for the release report (public: counts of releases and their budgets only). ``epsilon`` is
    the headline (the smallest valid bound, None without a guarantee), ``method`` how it was obtained."""
    return {
        "releases": t.releases,
        "epsilon": t.epsilon if t.guaranteed and t.releases else None,
        "delta": t.basic_delta,
        "method": (t.method if t.guaranteed else NO_GUARANTEE) if t.releases else None,
        "basic_epsilon": t.basic_epsilon,
        "basic_delta": t.basic_delta,
        "zcdp_epsilon": t.zcdp_epsilon,
        "gdp_epsilon": t.gdp_epsilon,
        "pld_epsilon": t.pld_epsilon,
        "seeded_releases": t.seeded,
        "summary": t.sentence(),
    }
