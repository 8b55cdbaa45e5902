"""The app's words and fixed choices: defaults, grids, the teaching seed and page prose. No Streamlit, no logic."""

from __future__ import annotations

from dpsu_core.params import OPTIONS
from dpsu_core.reading import HEADER_APP, READING_OPTIONS

TEACHING_SEED = 20240601  # fixed seed of teaching mode: the class sees the same results, NOT for real releases
# the sidebar's starting (ε, δ) and the session budget a new session starts with (the user sets their own in the
# sidebar): declared with their ranges in dpsu_core.params.OPTIONS
DEFAULT_EPSILON, DEFAULT_DELTA = float(OPTIONS["epsilon"].default), float(OPTIONS["delta"].default)
DEFAULT_SESSION_EPSILON = float(OPTIONS["total_epsilon"].default)
DEFAULT_SESSION_DELTA = float(OPTIONS["total_delta"].default)
DEFAULT_MECHANISM = "policy-gaussian"
BUDGET_PARAMS = ("max_items", "alpha")  # shown in the sidebar; every other parameter on the Release page
COMPARE_DEFAULT = ["weighted-laplace", "weighted-gaussian", "policy-laplace", "policy-gaussian", "gw"]

# grids of the Thresholds and Coverage pages
EPSILON_GRID = [0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
MAX_ITEMS_GRID = [1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 1000]
K_GRID = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]

# How core messages name the Corpus page's options (``dpsu_core.wording.speak``): its own widgets.
APP_OPTIONS = {
    **{o.field: o.app for o in READING_OPTIONS},  # the reading options, declared in dpsu_core.reading
    **HEADER_APP,
    "max_n": "'Longest n-gram'",
    "strict": "the command line's --strict",
}

SD_UNDEFINED = "–"  # shown for the sd of a single run (a sample standard deviation needs two)

TEACHING_NOTE = (
    f"Teaching mode: the random seed is fixed ({TEACHING_SEED}) so everyone sees the same results. "
    "Releases made this way are NOT private in practice and not for real use."
)

THRESHOLDS_EXPLANATION = """
**GW as published, and why dpsu does not use it.** A threshold ρ must stop items that only one of two
neighbouring corpora can release. In GW each user gives the full gap up to Γ ≥ 1 to one item at a time, so the
added user can start at most one new item: Carvalho et al. take that case, ρ = 1 − ln(2δ)/ε, flat in Δ0 (the
"GW as published (unproven reference)" line). The argument forgets the other users: once the added user fills
items that later users also hold, those users spend their leftover budget on their own items that had weight 0
without the added user, so items nobody could release before become releasable. The published ρ is not proven.

**dpsu's GW threshold (the capped form).** Each user's greedy update runs on its first Δ0 items only (in its own
order), and every item in some user's first Δ0 is a candidate that gets noise, weight 0 included. Other users'
spill-over then lands on items that were candidates already, and the only new candidates are the added user's
own first Δ0 items, carrying total weight ≤ 1: ρ = ln((e^ε + Δ0 − 1)/(2δ))/ε. It grows with ln Δ0, needs no
bound on the number of users, and at Δ0 = 1 equals the published value.

**Why Count thresholds explode with Δ0.** Count adds +1 to every kept item, so one user can move up to Δ0
weights by 1 each: the l1-sensitivity is Δ0 (Laplace scale Δ0/ε) and the l2-sensitivity √Δ0. Both the noise and
ρ scale with Δ0 (or √Δ0), so with Δ0 = 100 an item needs hundreds of users before it can be released.
"""
