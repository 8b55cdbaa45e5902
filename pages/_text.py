"""The app's words and fixed choices: defaults, grids, the teaching seed and page prose. No Streamlit, no logic."""

from __future__ import annotations

TEACHING_SEED = 20240601  # fixed seed of teaching mode: the class sees the same results, NOT for real releases
DEFAULT_EPSILON = 3.0
DEFAULT_DELTA = 1e-6
DEFAULT_MECHANISM = "policy-gaussian"
BUDGET_PARAMS = ("max_items", "alpha")  # shown in the sidebar; every other parameter on the Release page
COMPARE_DEFAULT = ["weighted-laplace", "weighted-gaussian", "policy-laplace", "policy-gaussian", "gw"]

# grids of the Thresholds and Coverage pages
EPSILON_GRID = [0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
MAX_ITEMS_GRID = [1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 1000]
K_GRID = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]

SD_UNDEFINED = "–"  # shown for the sd of a single run (a sample standard deviation needs two)

TEACHING_NOTE = (
    f"Teaching mode: the random seed is fixed ({TEACHING_SEED}) so everyone sees the same results. "
    "Releases made this way are NOT private in practice and not for real use."
)

THRESHOLDS_EXPLANATION = """
**Why the frequency-greedy (GW) threshold is the lowest, as published.** A threshold ρ must stop items that
only one of two neighbouring corpora can release. Weighted and Policy mechanisms must guard against a user who
spreads weight over any number t ≤ Δ0 of new items (the max over t in the formula), so ρ grows with Δ0. In GW
each user gives the full gap up to Γ ≥ 1 to one item at a time, so the added user can start at most one new
item: Carvalho et al. take the t = 1 case, ρ = 1 − ln(2δ)/ε, which does not depend on Δ0 at all
(the "GW as published" line).

**Why dpsu's GW threshold is higher.** That argument forgets the other users. Once the added user fills items
that later users also hold, those users skip them and spend their leftover budget on their own items that had
weight 0 without the added user: up to one new item per user, their weights adding up to at most 1. With N a
public upper bound on the number of users, ρ = ln((e^ε + N − 1)/(2δ))/ε covers every such case (the published
value is N = 1). It still does not grow with Δ0, only with ln N.

**Why Count thresholds explode with Δ0.** Count adds +1 to every kept item, so one user can move up to Δ0
weights by 1 each: the l1-sensitivity is Δ0 (Laplace scale Δ0/ε) and the l2-sensitivity √Δ0. Both the noise and
ρ scale with Δ0 (or √Δ0), so with Δ0 = 100 an item needs hundreds of users before it can be released.
"""
