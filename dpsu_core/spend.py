"""The spend gate: what an action on the private corpus will cost, and whether it needs an explicit yes.

Every action that releases on the private corpus (a release, a comparison, histogram fills, neighbouring-corpora
runs) is planned here first: ``plan_spend`` states its cost (how many releases; epsilon and delta by basic
composition; the tight total of the session after it) and says whether it may run:
  * on an exploration corpus nothing is spent and nothing is asked;
  * a fixed-seed (teaching) action is refused on an uploaded private corpus (its noise could be recomputed from
    the seed); on the bundled public demo it runs, and the totals then say there is no guarantee;
  * on the private corpus the action's own button is the yes while the session's total stays within the
    sidebar's epsilon; past it (or once the totals promise no guarantee) it needs an explicit yes naming the new
    total, keyed to this action and this cost (``SpendPlan.key``), so a yes never carries over to another action
    or to the same action at another cost.
The ledger entry is made when the action is attempted, before any mechanism runs (a failure part-way still
spent). Public: nothing here looks at data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from .ledger import LedgerEntry, LedgerTotal, total
from .mechanisms import Calibration

TEACHING_REFUSED = (
    "Teaching mode (fixed seed) runs on exploration corpora only: its noise can be recomputed from the seed, so a "
    "seeded release on your private data would leave it with no guarantee. Explore on the demo or a simulated "
    "corpus (Corpus page), or turn teaching mode off in the sidebar."
)


@dataclass(frozen=True)
class SpendPlan:
    """One action's cost on one corpus, and what the session's total becomes if it runs."""

    action: str  # what the user is about to do, e.g. "Compare: 2 mechanisms × 3 runs"
    corpus_name: str
    on_private: bool
    entries: tuple[LedgerEntry, ...]  # what will be recorded (the corpus's id filled in)
    cost: LedgerTotal  # this action alone
    after: LedgerTotal  # the session's total on the corpus after it
    limit_epsilon: float  # the sidebar's epsilon: the budget meant for this corpus
    refusal: str | None = None

    @property
    def allowed(self) -> bool:
        return self.refusal is None

    @property
    def needs_yes(self) -> bool:
        """Whether the action needs an explicit yes beyond its button: on the private corpus, when the session's
        total would pass the sidebar's epsilon or promise no guarantee."""
        if not self.on_private or not self.allowed or self.cost.releases == 0:
            return False
        return not self.after.guaranteed or self.after.epsilon > self.limit_epsilon

    @property
    def key(self) -> str:
        """The identity of this action at this cost: a yes is valid for it only."""
        h = hashlib.blake2b(digest_size=6)
        h.update(repr((self.action, self.corpus_name, self.cost.releases, self.cost.basic_epsilon)).encode())
        h.update(repr((self.cost.basic_delta, self.after.releases, self.after.epsilon, self.limit_epsilon)).encode())
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
        return s + "."

    def question(self, quote: Callable[[str], str] = str) -> str:
        """The explicit yes, naming the new total."""
        a, name = self.after, quote(self.corpus_name)
        if not a.guaranteed:
            return f"Yes, release anyway: {name} will have no DP guarantee (fixed-seed releases)"
        return (
            f"Yes, spend it: the session's total on {name} becomes ε = {a.epsilon:.4g}, "
            f"δ = {a.basic_delta:.2g} ({a.method}), above the sidebar's ε = {self.limit_epsilon:g}"
        )


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
) -> SpendPlan:
    """Plan ``action``: ``planned`` (calibration, number of releases) pairs on the corpus whose ledger entries so
    far are ``spent``. ``public_demo``: the private slot holds the bundled public demo (teaching may run there)."""
    entries = tuple(
        LedgerEntry.from_calibration(cal, corpus_id=corpus_id, source=source or action, releases=k, teaching=teaching)
        for cal, k in planned
    )
    cost = total(list(entries))
    after = total(list(spent) + list(entries)) if on_private else total(list(spent))
    refusal = TEACHING_REFUSED if (teaching and on_private and not public_demo) else None
    return SpendPlan(action, corpus_name, on_private, entries, cost, after, float(limit_epsilon), refusal)
