"""Shared test helpers for the mechanism tests.

Public API (import as ``from tests.helpers import ...`` or ``from helpers import ...``):

``lone_user_corpus(n_unique=5, *, n_users=100, n_common=20, words_per_user=5, lone_common=0,
                   unique_counts=None, seed=0) -> (Corpus, unique_ids)``
    ``n_users`` users over ``n_common`` common words, plus ONE extra user (the last row) who holds
    ``n_unique`` words nobody else has and the first ``lone_common`` common words. ``unique_counts``
    (a sequence of n_unique ints >= 1, default all 1) is how often each unique word occurs in the lone
    user's text (for frequency-ordered policies such as GW). ``unique_ids``: vocab ids of the unique words.

``lone_user_release_rate(mechanism_factory, n_runs, *, confidence=0.999, seed=0, **corpus_kw) -> RateEstimate``
    Monte Carlo of the privacy regression "a lone user's items are released with probability
    <= delta": runs the mechanism's real ``release`` ``n_runs`` times on ``lone_user_corpus(**corpus_kw)``
    (one numpy Generator seeded with ``seed`` drives all runs) and counts the runs in which ANY
    unique word was released. ``mechanism_factory`` is a zero-argument callable returning a
    ``Mechanism`` (or a ``Mechanism`` instance). In D without the lone user those words cannot be
    released at all, so (epsilon, delta)-DP forces P[hit] <= delta. Assert ``est.lower <= delta``.

``RateEstimate``: ``hits``, ``n_runs``, ``rate``, ``lower`` / ``upper`` = one-sided exact
    Clopper-Pearson bounds at ``confidence`` (scipy ``binomtest(...).proportion_ci(method="exact")``),
    and ``contains(p)`` (True if p lies in [lower, upper]).

``exceed_probability(noise, scale, rho, weights) -> float``
    Exact P[at least one item with these weights passes the noisy threshold]: 1 - prod(1 - P[w + Z > rho]),
    Z ~ Laplace(scale) or N(0, scale^2). Lets a Monte Carlo test also check its own power
    (the estimate must contain the exact value, so a harness that never releases fails).

``neighbouring_rows(rows, extra, position, counts=None, extra_counts=None) -> (OrderedRows, OrderedRows)``
    The coupling of the sensitivity proofs: D's rows in processing order, and D+u with the extra
    user's row inserted at ``position`` (shared users keep their order and their sampled items).

``rows_strategy(...)`` / ``extra_row_strategy(...)``: hypothesis strategies of small row lists over a
    small item universe (many repeats, so weights reach a small Gamma often).

``descent_steps(h0, gamma) -> {1: h after the l1-descent step, 2: h after the l2-descent step}``: one user holding
    every item of ``h0`` takes one step of each descent (the kernels themselves, budget ``descent_budget(n)``).

``run_displayed(command, cwd, env, timeout) -> CompletedProcess``: a ``dpsu ...`` command as the Export page shows
    it (lines continued with `` \\``) run by ``sh`` as a user pasting it would, ``dpsu`` being this checkout's
    ``python -m dpsu_core.interfaces.cli``.

``coupled_neighbours()``: a hypothesis strategy of (n_items, Delta0, D's rows, the extra user's row, its
    position, gamma) for the sensitivity property tests.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st
from scipy import stats

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.corpus.model import Corpus
from dpsu_core.mechanisms.base import Mechanism
from dpsu_core.mechanisms.sampling import OrderedRows, rows_from_lists

UNIQUE_PREFIX = "zzlone"


# --------------------------------------------------------------------------- lone-user Monte Carlo
def lone_user_corpus(
    n_unique: int = 5,
    *,
    n_users: int = 100,
    n_common: int = 20,
    words_per_user: int = 5,
    lone_common: int = 0,
    unique_counts=None,
    seed: int = 0,
) -> tuple[Corpus, np.ndarray]:
    """Common users over shared words plus one lone user holding ``n_unique`` words nobody else has."""
    rng = np.random.default_rng(seed)
    common = [f"common{j}" for j in range(n_common)]
    users = []
    for _ in range(n_users):
        k = min(words_per_user, n_common)
        users.append([common[j] for j in rng.choice(n_common, size=k, replace=False)])
    lone: list[str] = []
    reps = [1] * n_unique if unique_counts is None else [int(c) for c in unique_counts]
    assert len(reps) == n_unique and min(reps, default=1) >= 1
    for j in range(n_unique):
        lone += [f"{UNIQUE_PREFIX}{j}"] * reps[j]
    lone += common[:lone_common]
    users.append(lone)
    corpus = corpus_from_token_lists(users, posts_per_user=False)
    vocab = corpus.vocab.astype(str)
    unique_ids = np.flatnonzero(np.char.startswith(vocab, UNIQUE_PREFIX)).astype(np.int64)
    assert unique_ids.size == n_unique
    return corpus, unique_ids


@dataclass(frozen=True)
class RateEstimate:
    hits: int
    n_runs: int
    confidence: float
    lower: float  # one-sided lower Clopper-Pearson bound
    upper: float  # one-sided upper Clopper-Pearson bound

    @property
    def rate(self) -> float:
        return self.hits / self.n_runs

    def contains(self, p: float) -> bool:
        return self.lower <= p <= self.upper


def zipf_corpus(n_users: int = 400, n_words: int = 60, seed: int = 0) -> Corpus:
    """``n_users`` users, each holding 1 to 14 distinct words of ``n_words`` drawn with Zipf weights 1/rank (one
    post per user): a small corpus where the rounds of DP-SIPS-like mechanisms release something."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, n_words + 1)
    p /= p.sum()
    users = [
        [f"w{j}" for j in rng.choice(n_words, size=rng.integers(1, 15), replace=False, p=p)] for _ in range(n_users)
    ]
    return corpus_from_token_lists(users, posts_per_user=False)


def rate_estimate(hits: int, n_runs: int, confidence: float = 0.999) -> RateEstimate:
    lo = stats.binomtest(hits, n_runs, alternative="greater").proportion_ci(confidence, method="exact").low
    hi = stats.binomtest(hits, n_runs, alternative="less").proportion_ci(confidence, method="exact").high
    return RateEstimate(int(hits), int(n_runs), confidence, float(lo), float(hi))


def lone_user_release_rate(
    mechanism_factory: Callable[[], Mechanism] | Mechanism,
    n_runs: int,
    *,
    confidence: float = 0.999,
    seed: int = 0,
    **corpus_kw,
) -> RateEstimate:
    """Fraction of ``n_runs`` real releases in which any of the lone user's unique words is released."""
    mech = mechanism_factory if isinstance(mechanism_factory, Mechanism) else mechanism_factory()
    corpus, unique_ids = lone_user_corpus(**corpus_kw)
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_runs):  # loop over runs (not users/items): each run is the real vectorised release
        rel = mech.release(corpus, rng=rng)
        hits += bool(np.isin(rel.item_ids, unique_ids).any())
    return rate_estimate(hits, n_runs, confidence)


def exceed_probability(noise: str, scale: float, rho: float, weights) -> float:
    """P[some item passes]: 1 - prod_u (1 - P[w_u + Z > rho]) for independent noise Z."""
    x = (rho - np.asarray(weights, dtype=np.float64)) / scale
    if noise == "laplace":
        tail = np.where(x >= 0, 0.5 * np.exp(-np.abs(x)), 1.0 - 0.5 * np.exp(-np.abs(x)))
    elif noise == "gaussian":
        tail = stats.norm.sf(x)
    else:
        raise ValueError(noise)
    return float(-np.expm1(np.sum(np.log1p(-tail))))


# --------------------------------------------------------------------------- coupling for sensitivity
def neighbouring_rows(
    rows: list[list[int]],
    extra: list[int],
    position: int,
    counts: list[list[int]] | None = None,
    extra_counts: list[int] | None = None,
) -> tuple[OrderedRows, OrderedRows]:
    """(rows of D, rows of D + u): u inserted at ``position``, everyone else unchanged and in the same order."""
    position = max(0, min(position, len(rows)))
    rows_u = rows[:position] + [extra] + rows[position:]
    if counts is None:
        return rows_from_lists(rows), rows_from_lists(rows_u)
    ec = extra_counts if extra_counts is not None else [1] * len(extra)
    counts_u = counts[:position] + [ec] + counts[position:]
    return rows_from_lists(rows, counts), rows_from_lists(rows_u, counts_u)


def extra_row_strategy(n_items: int, max_items: int):
    """One user's row: distinct item ids in [0, n_items), at most ``max_items`` of them (possibly empty)."""
    return st.lists(st.integers(0, n_items - 1), unique=True, max_size=max_items)


def rows_strategy(n_items: int, max_items: int, max_users: int = 25):
    """A list of user rows (as kept after sampling) over a small universe, so items repeat a lot."""
    return st.lists(extra_row_strategy(n_items, max_items), max_size=max_users)


GAMMAS = st.sampled_from([0.05, 0.2, 0.5, 1 / 3, 0.75, 1.0, 1.7, 4.0])


@st.composite
def coupled_neighbours(draw):
    """(n_items, m, rows, extra, pos, gamma): a small item universe, D's rows of at most m = Delta0 items, the
    extra user's row, where it is inserted, and a cutoff Gamma (``neighbouring_rows`` builds the pair)."""
    n_items = draw(st.integers(1, 8))
    m = draw(st.integers(1, 6))
    rows = draw(rows_strategy(n_items, m, max_users=25))
    extra = draw(extra_row_strategy(n_items, m))
    pos = draw(st.integers(0, len(rows)))
    gamma = draw(GAMMAS)
    return n_items, m, rows, extra, pos, gamma


# --------------------------------------------------------------------------- one descent step
def descent_steps(h0: np.ndarray, gamma: float) -> dict[int, np.ndarray]:
    """H after one user holding every item of ``h0`` takes an l1-descent (key 1) and an l2-descent (key 2) step."""
    from dpsu_core.mechanisms.setunion import l1_step, l2_step
    from dpsu_core.privacy.norms import descent_budget

    n = h0.shape[0]
    items, sel = np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int64)
    h1, h2 = h0.copy(), h0.copy()
    l1_step(h1, items, sel, n, gamma, np.empty(n), descent_budget(n))
    l2_step(h2, items, sel, n, gamma, descent_budget(n))
    return {1: h1, 2: h2}


# --------------------------------------------------------------------------- an exported command, run by a shell
def run_displayed(command: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    """Run a displayed ``dpsu ...`` command through ``sh`` (its line continuations and quoting as a shell reads
    them), with ``dpsu`` this checkout's CLI."""
    assert command.startswith("dpsu "), command[:40]
    script = f'dpsu() {{ exec {shlex.quote(sys.executable)} -m dpsu_core.interfaces.cli "$@"; }}\n{command}\n'
    # the test's own durable ledger and default cap (tests/conftest.py), never the user's per-user store
    ledger = {k: os.environ[k] for k in ("DPSU_LEDGER", "DPSU_DEFAULT_CAP") if k in os.environ}
    env = {**ledger, **env}
    return subprocess.run(["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
