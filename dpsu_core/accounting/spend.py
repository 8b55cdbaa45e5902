"""The spend gate: what an action on the private corpus will cost, and whether it needs an explicit yes.

Every action that releases on the private corpus (a release, a comparison, histogram fills, neighbouring-corpora
runs) is planned here first: ``plan_spend`` states its cost (how many releases; epsilon and delta by basic
composition; the tight total of the session after it) and says whether it may run:
  * on an exploration corpus nothing is spent and nothing is asked;
  * a fixed-seed (teaching) action is refused on an uploaded private corpus (its noise could be recomputed from
    the seed); on the bundled public demo it runs, and the totals then say there is no guarantee;
  * on the private corpus the action's own button is the yes while the session's total stays within the session
    budget (epsilon, delta) the user set, apart from each release's own (epsilon, delta); an action that would
    take the total past it is blocked (``SpendPlan.over_budget``) until the user confirms a new session budget
    that covers it (``SpendPlan.covering_budget``);
  * an action that would take the session's deltas to 1 or more is refused (``delta_refusal``): past delta = 1
    there is no guarantee, so it is over any budget (``SpendPlan.over_budget``) and no new budget covers it;
  * once the totals promise no guarantee every action needs an explicit yes, keyed to this action and this cost
    (``SpendPlan.key``), so a yes never carries over to another action or to the same action at another cost;
    except on the bundled public demo, whose fixed-seed (teaching) releases are not private and need no yes: there
    is nothing private to spend (``PUBLIC_DEMO_SPENT``).
The ledger entry is made when the action is attempted, before any mechanism runs (a failure part-way still
spent). Public: nothing here looks at data.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..mechanisms import Calibration
from ..mechanisms.item_counts import LABEL, NAME, CountsCalibration
from .ledger import LedgerEntry, LedgerTotal, total

TEACHING_REFUSED = (
    "Teaching mode (fixed seed) runs on exploration corpora only: its noise can be recomputed from the seed, so a "
    "seeded release on your private data would leave it with no guarantee. Explore on the demo or a simulated "
    "corpus (Corpus page), or turn teaching mode off in the sidebar."
)

# What the totals say for the bundled public demo once a fixed-seed release made them promise no guarantee.
PUBLIC_DEMO_SPENT = "public demo: nothing private to spend"


def spent_figure(t: LedgerTotal, public_demo: bool) -> str:
    """The sidebar's "ε spent" figure: the smallest valid bound, that there is no guarantee, or on the public demo
    after fixed-seed releases that nothing private was spent."""
    if t.guaranteed:
        return f"{t.epsilon:.4g}"
    return PUBLIC_DEMO_SPENT if public_demo else "no DP guarantee"


@dataclass(frozen=True)
class SpendPlan:
    """One action's cost on one corpus, and what the session's total becomes if it runs."""

    action: str  # what the user is about to do, e.g. "Compare: 2 mechanisms × 3 runs"
    corpus_name: str
    on_private: bool
    entries: tuple[LedgerEntry, ...]  # what will be recorded (the corpus's id filled in)
    cost: LedgerTotal  # this action alone
    after: LedgerTotal  # the session's total on the corpus after it
    limit_epsilon: float  # the session budget's epsilon: what the user allows the corpus's total to reach
    refusal: str | None = None
    limit_delta: float = 1.0  # the session budget's delta
    # the corpus's cap in the durable store (set by its data custodian, or the analyst's own smaller cap): no
    # confirmation in the app raises it (``over_cap``)
    cap_epsilon: float = math.inf
    cap_delta: float = 1.0
    cap_owner: str = ""  # who set the cap, for the refusal ("the data custodian", "your own cap")
    before: LedgerTotal = dataclasses.field(default_factory=lambda: LedgerTotal(0, 0.0, 0.0))  # the total so far
    public_demo: bool = False  # the private slot holds the bundled public demo: fixed-seed releases need no yes

    @property
    def allowed(self) -> bool:
        return self.refusal is None

    @property
    def needs_yes(self) -> bool:
        """Whether the action needs an explicit yes beyond its button: on the private corpus, when the session's
        total would promise no guarantee; never on the public demo (its releases are not private)."""
        if not self.on_private or self.public_demo or not self.allowed or self.cost.releases == 0:
            return False
        return not self.after.guaranteed

    @property
    def over_cap(self) -> bool:
        """Whether the corpus's total after the action would pass the corpus's cap in the durable store (or promise
        no guarantee there): the action is refused, and no session budget can lift it."""
        if not self.on_private or not self.allowed or self.cost.releases == 0 or math.isinf(self.cap_epsilon):
            return False
        a = self.after
        return not a.guaranteed or a.epsilon > self.cap_epsilon or a.basic_delta > self.cap_delta

    def over_cap_text(self, quote: Callable[[str], str] = str) -> str:
        """Why the action is refused by the corpus's cap, with what is left."""
        a, spent = self.after, self.before
        left_e = max(self.cap_epsilon - (spent.epsilon if spent.releases and spent.guaranteed else 0.0), 0.0)
        left_d = max(self.cap_delta - spent.basic_delta, 0.0)
        total = a.headline() + (f" ({a.method})" if a.guaranteed else "")
        return (
            f"Refused: the total on {quote(self.corpus_name)} would become {total}, past its cap ε = "
            f"{self.cap_epsilon:g}, δ = {self.cap_delta:.2g}{f' ({self.cap_owner})' if self.cap_owner else ''}. "
            f"Left: ε = {left_e:.4g}, δ = {left_d:.2g}. Re-use an earlier release (Export) at no cost, choose a "
            "smaller ε, or ask the data custodian to raise the cap."
        )

    @property
    def over_budget(self) -> bool:
        """Whether the session's total after the action would pass the session budget (its epsilon or its delta):
        the action is blocked until a new budget covering it is confirmed."""
        if not self.on_private or self.cost.releases == 0:
            return False
        if self.after.delta_exceeded:  # past delta = 1 no budget covers it (``plan_spend`` refuses it)
            return True
        if not self.allowed or not self.after.guaranteed:
            return False
        return self.after.epsilon > self.limit_epsilon or self.after.basic_delta > self.limit_delta

    @property
    def covering_budget(self) -> tuple[float, float]:
        """The smallest round session budget covering the total after the action: epsilon rounded up to 3
        significant digits, delta to 2 (never below the current budget, never above the corpus's cap)."""
        return (
            min(max(self.limit_epsilon, round_up(self.after.epsilon, 3)), self.cap_epsilon),
            min(max(self.limit_delta, round_up(self.after.basic_delta, 2)), self.cap_delta),
        )

    def over_budget_text(self, quote: Callable[[str], str] = str) -> str:
        """Why the action is blocked, naming the new total and the budget it passes."""
        a = self.after
        return (
            f"Blocked: the session's total on {quote(self.corpus_name)} would become ε = {a.epsilon:.4g}, "
            f"δ = {a.basic_delta:.2g} ({a.method}), past the session budget ε = {self.limit_epsilon:g}, "
            f"δ = {self.limit_delta:.2g}. To run it, confirm a new session budget (here or in the sidebar)."
        )

    @property
    def key(self) -> str:
        """The identity of this action at this cost: a yes is valid for it only."""
        h = hashlib.blake2b(digest_size=6)
        h.update(repr((self.action, self.corpus_name, self.cost.releases, self.cost.basic_epsilon)).encode())
        h.update(repr((self.cost.basic_delta, self.after.releases, self.after.epsilon, self.limit_epsilon)).encode())
        h.update(repr(self.limit_delta).encode())
        return h.hexdigest()

    def cost_text(self, quote: Callable[[str], str] = str) -> str:
        """What the action costs, in one sentence (``quote`` shows the corpus name, e.g. escaped for Markdown)."""
        name = quote(self.corpus_name)
        n = self.cost.releases
        if not self.on_private:
            return (
                f"{self.action}: {n} release{'s' if n != 1 else ''} on {name}, not your private corpus: "
                "nothing is spent."
            )
        if self.public_demo and not self.after.guaranteed:
            return (
                f"{self.action}: {n} release{'s' if n != 1 else ''} on {name}, the bundled public demo: "
                f"{PUBLIC_DEMO_SPENT} (fixed-seed teaching releases promise no DP guarantee, and public data needs "
                "none)."
            )
        c = self.cost
        s = (
            f"{self.action}: {n} release{'s' if n != 1 else ''} on {name}, "
            f"ε = {c.basic_epsilon:.4g}, δ = {c.basic_delta:.2g} by basic composition"
        )
        if c.guaranteed and c.method != "basic composition":
            s += f" (ε = {c.epsilon:.4g} by {c.method})"
        a = self.after
        s += f". The session's total on this corpus becomes {a.headline()}"
        if a.guaranteed:
            s += f" ({a.method})"
        return s + f"; the session budget is ε = {self.limit_epsilon:g}, δ = {self.limit_delta:.2g}."

    def question(self, quote: Callable[[str], str] = str) -> str:
        """The explicit yes (no guarantee left), naming what it means."""
        return f"Yes, release anyway: {quote(self.corpus_name)} will have no DP guarantee (fixed-seed releases)"


def plan_spend(
    action: str,
    planned: list[tuple[Calibration, int]],
    spent: list[LedgerEntry],
    *,
    corpus_id: str,
    corpus_name: str,
    limit_epsilon: float,
    on_private: bool,
    teaching: bool,
    public_demo: bool = False,
    source: str = "",
    limit_delta: float = 1.0,
    cap: tuple[float, float, str] | None = None,
) -> SpendPlan:
    """Plan ``action``: ``planned`` (calibration, number of releases) pairs on the corpus whose ledger entries so
    far are ``spent``, against the session budget (``limit_epsilon``, ``limit_delta``). ``public_demo``: the
    private slot holds the bundled public demo (teaching may run there)."""
    entries = tuple(
        LedgerEntry.from_calibration(cal, corpus_id=corpus_id, source=source or action, releases=k, teaching=teaching)
        for cal, k in planned
    )
    cost = total(list(entries))
    after = total(list(spent) + list(entries)) if on_private else total(list(spent))
    refusal = TEACHING_REFUSED if (teaching and on_private and not public_demo) else None
    if refusal is None and on_private and entries and after.delta_exceeded:
        refusal = delta_refusal(corpus_name, after)
    cap_e, cap_d, owner = (math.inf, 1.0, "") if cap is None else (float(cap[0]), float(cap[1]), cap[2])
    return SpendPlan(
        action,
        corpus_name,
        on_private,
        entries,
        cost,
        after,
        float(limit_epsilon),
        refusal,
        float(limit_delta),
        cap_e,
        cap_d,
        owner,
        total(list(spent)),
        public_demo=public_demo and on_private,
    )


def delta_refusal(corpus_name: str, after: LedgerTotal) -> str:
    """Why an action that takes the session's delta to 1 or more is refused: no budget covers it."""
    return (
        f"Refused: the session's deltas on {corpus_name} would add up to δ = {after.basic_delta:.3g}; past δ = 1 "
        "there is no differential privacy guarantee at all, so no session budget covers it. Release with a smaller "
        "δ or fewer releases."
    )


def round_up(x: float, digits: int) -> float:
    """``x`` rounded up to ``digits`` significant digits (a budget shown in round figures, never below ``x``): the
    nearest such figure if its float is not below ``x``, else the next one up."""
    if x <= 0:
        return 0.0
    out = float(f"{x:.{digits}g}")
    while out < x:
        step = 10.0 ** (math.floor(math.log10(out)) - digits + 1)
        out = float(f"{out + step:.{digits}g}")
    return out


# ---- the count step of a release with noisy counts (``mechanisms.item_counts``) ------------------------------
def counts_entry(cc: CountsCalibration, *, corpus_id: Any, source: str, teaching: bool = False) -> LedgerEntry:
    """The ledger entry of the count step (the set release has its own, from its calibration)."""
    return LedgerEntry(
        mechanism=NAME,
        label=LABEL,
        epsilon=cc.epsilon,
        delta=cc.delta,
        noise="gaussian",
        corpus_id=corpus_id,
        source=source,
        zcdp=cc.cost,
        teaching=teaching,
    )


def plan_with_counts(plan: SpendPlan, cc: CountsCalibration, spent: list[LedgerEntry]) -> SpendPlan:
    """A spend gate's plan (``spend.plan_spend`` of the set release, at its share of the budget) with the count step
    added: its ledger entry, the action named with the counts' share, the cost and the session's total after it
    recomputed (``ledger.total``). ``spent``: the corpus's ledger entries so far, as given to ``plan_spend``."""
    first = plan.entries[0] if plan.entries else None
    entry = counts_entry(
        cc,
        corpus_id=first.corpus_id if first is not None else None,
        source=first.source if first is not None else plan.action,
        teaching=bool(first is not None and first.teaching),
    )
    entries = (*plan.entries, entry)
    after = total([*spent, *entries]) if plan.on_private else plan.after
    refusal = plan.refusal
    if refusal is None and plan.on_private and after.delta_exceeded:
        refusal = delta_refusal(plan.corpus_name, after)
    return dataclasses.replace(
        plan,
        action=f"{plan.action} with noisy counts ({cc.share:g} of the budget: ε = {cc.epsilon:.4g}, σ = {cc.sigma:.4g})",
        entries=entries,
        cost=total(list(entries)),
        after=after,
        refusal=refusal,
    )
