"""Carvalho et al. 2022 (AAAI): greedy set union with item frequency, GW and GW-KT, in the capped form.

The capped form (docs/algorithms.md §4) is the only form dpsu offers:

1. Each user's visiting order: descending own count C_i[u] (GW) or descending public frequency (GW-KT),
   ties by a keyed hash of the item *string* with a per-release secret.
2. S_i = the user's first Delta0 items in that order (``max_items``). The greedy update GU (Algorithm 2)
   runs on S_i only: skip items already at the cutoff Gamma, give each item ``Gamma - H[u]`` until the
   budget runs out (the last item gets what is left).
3. Candidates K = the union of all S_i, weight 0 included: every candidate gets Laplace(1/eps) noise and
   is released if H[u] + noise > rho. Nothing outside K is ever released.
4. rho = ln((e^eps + Delta0 - 1) / (2 delta)) / eps (``privacy.thresholds.rho_greedy``), Gamma >= 1.
   Between neighbours D and D+u: on K(D) the l1 distance of H stays <= 1 (cascades of other users'
   leftover budget land on items of their own S_v, already candidates), and the new candidates
   S_u minus K(D) are touched by u alone, at most Delta0 of them with total weight <= 1. No bound on the
   number of users is needed. Carvalho et al.'s published rho = 1 - ln(2 delta)/eps is NOT proven
   (its Lemma 2 misses the cascades; ``rho_greedy_published``) and is shown for reference only.

Visiting order (identical for a user in both neighbouring corpora, as the proof needs): primary key
``PRIMARY_MAX - C_i[u]`` (GW) or the dense public-frequency rank of u (GW-KT), computed inside the kernel;
ties broken by ``mix64(string_hash(u) XOR secret)``, with a fresh 64-bit ``secret`` per release.
``string_hash`` is a fixed hash of the item's *string* (pandas' ``hash_array``), not of its vocabulary
id: ids are assigned while reading the whole file, so adding another user may renumber them, whereas
the string is the user's own data. S_i therefore depends on nothing but the user's items, their counts
(or the public list) and the secret; H only decides which items of S_i are skipped.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numba
import numpy as np

from ..corpus.model import Corpus
from ..errors import ParameterError
from ..privacy.cost import LaplaceCost
from ..privacy.norms import add_down, descent_budget
from ..privacy.thresholds import cutoff, laplace_scale, rho_greedy, rho_greedy_published
from .base import Diagnostics, Mechanism, ReleaseParts
from .calibration import Calibration, Details, optional
from .sampling import OrderedRows, sampling_plan
from .traits import Stages, one_stage, scale_quantity

_U30 = np.uint64(30)
_U27 = np.uint64(27)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_PRIMARY_MAX = 2**31 - 1  # primary keys are < 2^31 so that (primary << 32) | tie32 fits in a uint64


# --------------------------------------------------------------------------- keys
@numba.njit(cache=True, nogil=True, inline="always")
def _mix64(z):
    """splitmix64's finaliser: a bijective 64-bit mix (Steele, Lea & Flood 2014)."""
    z = (z ^ (z >> _U30)) * _M1
    z = (z ^ (z >> _U27)) * _M2
    return z ^ (z >> _U31)


def item_hash_keys(vocab: np.ndarray) -> np.ndarray:
    """A fixed 64-bit hash of each item string (uint64, aligned with ``vocab``); keyed per release later."""
    from pandas.util import hash_array  # loads on first use (start-up time)

    return hash_array(np.asarray(vocab, dtype=object), categorize=False)


_KEY_CACHE: weakref.WeakKeyDictionary[Corpus, np.ndarray] = weakref.WeakKeyDictionary()


def _corpus_keys(corpus: Corpus) -> np.ndarray:
    keys = _KEY_CACHE.get(corpus)
    if keys is None:
        keys = item_hash_keys(corpus.vocab)
        _KEY_CACHE[corpus] = keys
    return keys


def count_priority(counts: np.ndarray) -> np.ndarray:
    """Primary visiting key from a user's own counts C_i[u] (per CSR entry): smaller = visited first."""
    c = np.clip(np.asarray(counts, dtype=np.int64), 1, _PRIMARY_MAX)
    return (_PRIMARY_MAX - c).astype(np.uint32)


def frequency_rank(freq: np.ndarray) -> np.ndarray:
    """Per-item primary key from a public frequency: dense rank, most frequent = 0 (uint32).

    A dense rank is order-isomorphic to the frequencies (equal frequencies share a rank), so
    comparing two items' ranks is the same as comparing their public frequencies: the rank
    of an item does not depend on which other items the vocabulary holds.
    """
    f = np.asarray(freq, dtype=np.float64)
    if f.size == 0:
        return np.zeros(0, dtype=np.uint32)
    _, inv = np.unique(-f, return_inverse=True)
    return inv.astype(np.uint32).reshape(-1)


def draw_secret(rng: np.random.Generator) -> np.uint64:
    """The per-release tie-breaking key: 64 uniform bits from the release's Generator, which is seeded by
    the OS for every real release (a fixed seed only in teaching mode, flagged as such)."""
    return np.uint64(rng.integers(0, 2**64, dtype=np.uint64))


# --------------------------------------------------------------------------- GU kernel, capped form
# A user's visiting order is the ascending order of key = (primary << 32) | (tie >> 32), where
# tie[u] = mix64(item_key[u] XOR secret) is computed once per release for every item (``keyed_ties``);
# equal keys (same primary and same top 32 bits of the tie:
# astronomically rare) are ordered by the full 64-bit tie, so the order never falls back on row
# positions, i.e. on vocabulary ids. ``_before`` is that total order.
_LAZY_STEPS = 4  # selection steps before sorting the rest (most users stop after 1-2 items)


@numba.njit(cache=True, nogil=True)
def keyed_ties(item_key, secret):
    """tie[u] = mix64(item_key[u] XOR secret): the per-release keyed hash of every item string."""
    out = np.empty(item_key.shape[0], dtype=np.uint64)
    for u in range(item_key.shape[0]):
        out[u] = _mix64(item_key[u] ^ secret)
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _before(ka, kb, ua, ub, tie):
    if ka != kb:
        return ka < kb
    return tie[ua] < tie[ub]


@numba.njit(cache=True, nogil=True, inline="always")
def _entry_key(j, items, counts, rank, by_count, tie):
    """Visiting key of CSR entry j: primary (own count for GW, public rank for GW-KT) then keyed tie."""
    u = items[j]
    if by_count:
        c = counts[j]
        if c < 1:
            c = 1
        if c > _PRIMARY_MAX:
            c = _PRIMARY_MAX
        primary = np.uint64(_PRIMARY_MAX - c)
    else:
        primary = np.uint64(rank[u])
    return (primary << _U32) | (tie[u] >> _U32)


@numba.njit(cache=True, nogil=True)
def _kth_smallest(buf, n, k):
    """The k-th smallest (0-based) of buf[:n], reordering buf: quickselect with a branchless Lomuto
    partition (the keys are keyed hashes, so comparisons are unpredictable and branches would miss)."""
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        p = buf[mid]
        buf[mid] = buf[hi]
        buf[hi] = p
        store = lo
        for i in range(lo, hi):
            x = buf[i]
            buf[i] = buf[store]
            buf[store] = x
            store += x < p
        buf[hi] = buf[store]
        buf[store] = p
        if k == store:
            return p
        if k < store:
            hi = store - 1
        else:
            lo = store + 1
    return buf[lo]


@numba.njit(cache=True, nogil=True)
def _select_prefix(n, m, keys, pos, items, tie, kbuf, pbuf):
    """Move the m first of keys[:n] / pos[:n] in visiting order to the front (in row order, not sorted).

    The m-th smallest 64-bit key kv splits them; entries whose key equals kv (same primary and same top
    32 tie bits: astronomically rare) are decided by the full tie, so the selection is exact.
    ``kbuf`` / ``pbuf`` are scratch buffers at least n long."""
    for k in range(n):
        kbuf[k] = keys[k]
    kv = _kth_smallest(kbuf, n, m - 1)
    w = 0
    for k in range(n):  # branchless compaction of the entries below kv
        kk = keys[k]
        kbuf[w] = kk
        pbuf[w] = pos[k]
        w += kk < kv
    e = w
    for k in range(n):  # the entries equal to kv (usually exactly one)
        if keys[k] == kv:
            kbuf[e] = kv
            pbuf[e] = pos[k]
            e += 1
    for i in range(w + 1, e):  # order the equal ones by the full tie (insertion sort; rare)
        pp = pbuf[i]
        t = tie[items[pp]]
        j = i
        while j > w and tie[items[pbuf[j - 1]]] > t:
            pbuf[j] = pbuf[j - 1]
            j -= 1
        pbuf[j] = pp
    for k in range(m):
        keys[k] = kbuf[k]
        pos[k] = pbuf[k]


@numba.njit(cache=True, nogil=True)
def _select_first(a, n, keys, pos, items, tie):
    """Move the first (in visiting order) of keys[a:n] to position a (one selection-sort step)."""
    best = a
    for k in range(a + 1, n):
        if _before(keys[k], keys[best], items[pos[k]], items[pos[best]], tie):
            best = k
    if best != a:
        kt = keys[a]
        keys[a] = keys[best]
        keys[best] = kt
        pt = pos[a]
        pos[a] = pos[best]
        pos[best] = pt


@numba.njit(cache=True, nogil=True)
def _sort_tail(a, n, keys, pos, items, tie):
    """Sort keys[a:n] (and pos with them) into visiting order."""
    order = np.argsort(keys[a:n])
    kt = keys[a:n].copy()
    pt = pos[a:n].copy()
    for k in range(n - a):
        keys[a + k] = kt[order[k]]
        pos[a + k] = pt[order[k]]
    for i in range(a + 1, n):  # insertion pass: only moves entries whose 64-bit keys are equal
        kk = keys[i]
        p = pos[i]
        m = i
        while m > a and keys[m - 1] == kk and _before(kk, keys[m - 1], items[p], items[pos[m - 1]], tie):
            keys[m] = keys[m - 1]
            pos[m] = pos[m - 1]
            m -= 1
        keys[m] = kk
        pos[m] = p


@numba.njit(cache=True, nogil=True)
def _user_candidates(s, e, items, counts, rank, by_count, tie, max_items, keys, pos, kbuf, pbuf):
    """S_i of the user whose entries are s..e-1: the first ``max_items`` in visiting order, left in
    keys[:m] / pos[:m] (not yet in order; kbuf / pbuf are scratch); returns m. Depends on the user's own data and the secret only."""
    n = e - s
    for k in range(n):
        keys[k] = _entry_key(s + k, items, counts, rank, by_count, tie)
        pos[k] = s + k
    if n > max_items:
        _select_prefix(n, max_items, keys, pos, items, tie, kbuf, pbuf)
        return max_items
    return n


@numba.njit(cache=True, nogil=True)
def _greedy_capped(indptr, items, counts, rank, by_count, order, tie, n_items, gamma, max_items, budget0):
    """GU (Carvalho et al., Algorithm 2) on each user's S_i, users visited in ``order`` (rows of the CSR).

    Returns (H, candidate mask K = union of the S_i). Within S_i the items below Gamma are taken lazily in
    visiting order: a few selection steps, then (for the rare user whose budget outlasts them) a sort of
    the rest; the result is identical to sorting S_i in full.
    """
    h = np.zeros(n_items, dtype=np.float64)
    cand = np.zeros(n_items, dtype=np.bool_)
    longest = 1
    for r in range(indptr.shape[0] - 1):
        if indptr[r + 1] - indptr[r] > longest:
            longest = indptr[r + 1] - indptr[r]
    keys = np.empty(longest, dtype=np.uint64)
    pos = np.empty(longest, dtype=np.int64)
    kbuf = np.empty(longest, dtype=np.uint64)
    pbuf = np.empty(longest, dtype=np.int64)
    for i in range(order.shape[0]):
        r = order[i]
        s = indptr[r]
        e = indptr[r + 1]
        n = 0  # the entries of S_i below Gamma (Algorithm 2's set S), with their keys
        if e - s <= max_items:  # S_i is the whole row: keys only for the items below Gamma
            for j in range(s, e):
                u = items[j]
                cand[u] = True
                if h[u] < gamma:
                    keys[n] = _entry_key(j, items, counts, rank, by_count, tie)
                    pos[n] = j
                    n += 1
        else:
            m = _user_candidates(s, e, items, counts, rank, by_count, tie, max_items, keys, pos, kbuf, pbuf)
            for k in range(m):  # keep those below Gamma, in place
                u = items[pos[k]]
                cand[u] = True
                if h[u] < gamma:
                    keys[n] = keys[k]
                    pos[n] = pos[k]
                    n += 1
        budget = budget0
        for k in range(n):
            if k < _LAZY_STEPS:
                _select_first(k, n, keys, pos, items, tie)
            elif k == _LAZY_STEPS:
                _sort_tail(k, n, keys, pos, items, tie)
            u = items[pos[k]]
            cost = gamma - h[u]
            if cost <= budget:  # reach Gamma exactly and go on with what is left
                h[u] = gamma
                budget -= cost
                if budget <= 0.0:
                    break
            else:  # not enough to reach Gamma: spend it all on this item (rounding down: rises <= budget)
                h[u] = add_down(h[u], budget)
                break
    return h, cand


@numba.njit(cache=True, nogil=True)
def _one_user_order(items, counts, rank, by_count, tie, max_items, lazy):
    """Row positions of S_i in visiting order (the kernel's own helpers; ``lazy`` selection steps first)."""
    n0 = items.shape[0]
    keys = np.empty(max(n0, 1), dtype=np.uint64)
    pos = np.empty(max(n0, 1), dtype=np.int64)
    kbuf = np.empty(max(n0, 1), dtype=np.uint64)
    pbuf = np.empty(max(n0, 1), dtype=np.int64)
    m = _user_candidates(0, n0, items, counts, rank, by_count, tie, max_items, keys, pos, kbuf, pbuf)
    for k in range(min(lazy, m)):
        _select_first(k, m, keys, pos, items, tie)
    if lazy < m:
        _sort_tail(lazy, m, keys, pos, items, tie)
    return pos[:m].copy()


def _order_inputs(counts=None, rank=None) -> tuple[np.ndarray, np.ndarray, bool]:
    """(counts, rank, by_count) for the kernels: GW passes per-entry counts, GW-KT a per-item rank."""
    if (counts is None) == (rank is None):
        raise ValueError("give exactly one of counts (GW) or rank (GW-KT)")
    if rank is None:
        return np.asarray(counts, dtype=np.int32), np.zeros(0, dtype=np.uint32), True
    return np.zeros(0, dtype=np.int32), np.asarray(rank, dtype=np.uint32), False


def greedy_update(
    rows: OrderedRows,
    n_items: int,
    gamma: float,
    item_key: np.ndarray,
    secret: int | np.uint64,
    *,
    max_items: int,
    counts: np.ndarray | None = None,
    rank: np.ndarray | None = None,
    budget: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(H, candidate mask) after capped GU over ``rows`` (already in processing order).

    Ordering: ``counts`` = the users' own counts per CSR entry (GW: ``rows.counts``) or ``rank`` = a public
    rank per item (GW-KT: ``frequency_rank``); ``item_key``: uint64 per item (``item_hash_keys``).
    ``budget`` defaults to ``descent_budget(max_items)`` (1 minus the rounding allowance).
    """
    c, rk, by_count = _order_inputs(counts, rank)
    b = descent_budget(max_items) if budget is None else float(budget)
    return _greedy_capped(
        rows.indptr,
        rows.items,
        c,
        rk,
        by_count,
        np.arange(rows.n_rows, dtype=np.int64),
        keyed_ties(np.asarray(item_key, dtype=np.uint64), np.uint64(secret)),
        int(n_items),
        float(gamma),
        int(max_items),
        b,
    )


def user_visit_order(
    items: np.ndarray,
    item_key: np.ndarray,
    secret: int | np.uint64,
    *,
    max_items: int,
    counts: np.ndarray | None = None,
    rank: np.ndarray | None = None,
    lazy: int = _LAZY_STEPS,
) -> np.ndarray:
    """S_i of one user, in visiting order (item ids), with the kernel's own helpers. Any ``lazy`` gives the
    same order, which the tests check. ``counts`` aligned with ``items`` (GW) or ``rank`` per item (GW-KT)."""
    items = np.asarray(items, dtype=np.int32)
    c, rk, by_count = _order_inputs(counts, rank)
    tie = keyed_ties(np.asarray(item_key, dtype=np.uint64), np.uint64(secret))
    pos = _one_user_order(items, c, rk, by_count, tie, int(max_items), int(lazy))
    return items[pos]


def noisy_candidates(h: np.ndarray, cand: np.ndarray, rng: np.random.Generator, scale: float, rho: float) -> np.ndarray:
    """Step 3 of the capped form: EVERY candidate (weight 0 included) gets Laplace noise; keep those above rho."""
    ids = np.flatnonzero(cand)
    z = rng.laplace(0.0, scale, size=ids.size)
    return ids[h[ids] + z > rho].astype(np.int64)


# --------------------------------------------------------------------------- GW-KT ranks, cached per corpus
_RANK_CACHE: weakref.WeakKeyDictionary[Corpus, dict] = weakref.WeakKeyDictionary()


def _source_key(source: Any, lang: str) -> tuple:
    if source is None:
        return ("wordfreq", lang)
    if isinstance(source, Corpus):
        return ("corpus", id(source))
    p = Path(source).resolve()
    return ("file", str(p), p.stat().st_mtime_ns)


def public_rank(corpus: Corpus, source: Any, lang: str) -> np.ndarray:
    """Dense public-frequency rank of every item of ``corpus`` (uint32), cached per (corpus, source): a
    function of the item strings and the public source only, so an app re-run reuses it."""
    from ..publicfreq import public_frequencies

    per_corpus = _RANK_CACHE.setdefault(corpus, {})
    key = _source_key(source, lang)
    hit = per_corpus.get(key)
    if hit is not None and (hit[0] is None or hit[0]() is source):
        return hit[1]
    rank = frequency_rank(public_frequencies(corpus.vocab, source, lang))
    per_corpus[key] = (weakref.ref(source) if isinstance(source, Corpus) else None, rank)
    return rank


# --------------------------------------------------------------------------- mechanisms
@dataclass(frozen=True, kw_only=True)
class GreedyDetails(Details):
    """GW's and GW-KT's calibration details (GW-KT adds where its public frequencies come from)."""

    l1_sensitivity: float
    sampling: str
    candidates: str
    threshold: str
    published_rho_unproven: float
    public_frequencies: str | None = optional()  # GW-KT


class _Greedy(Mechanism):
    family = "laplace"
    param_names = ("max_items", "alpha")
    order_free = False  # each user's greedy update depends on the users before
    preview_first_in_order = True  # the previewed item is first in every holder's order: never sampled out

    @classmethod
    def privacy_cost(cls, cal: Calibration) -> None:
        return None  # Laplace noise: not zCDP-accounted (``laplace_cost`` gives its exact privacy loss)

    @classmethod
    def laplace_cost(cls, cal: Calibration) -> LaplaceCost:
        """Laplace(1/epsilon) on the candidates K(D), where the histograms stay at l1-distance <= 1; the whole delta
        bounds the chance that one of the new candidates S_u minus K(D) crosses rho (docs/algorithms.md §3a)."""
        return LaplaceCost(cal.epsilon, cal.delta)

    @classmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        return scale_quantity(cal)

    @classmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages:
        return one_stage(
            cal,
            1.0,
            "a full unit per holder up to Γ (the item first in each holder's order: the best case)",
            capped=True,
        )

    def __init__(self, *, epsilon: float, delta: float, **params: Any) -> None:
        super().__init__(epsilon=epsilon, delta=delta, **params)
        self.calibrate()  # fail early when Gamma < 1

    def _details(self) -> GreedyDetails:
        m = self.params["max_items"]
        return GreedyDetails(
            l1_sensitivity=1.0,
            sampling=f"none: each user's greedy update runs on its first Δ0 = {m} items in its own order",
            candidates="every item in some user's first Δ0 (weight 0 included) gets Laplace noise",
            threshold="rho = ln((e^eps + Δ0 - 1)/(2 delta))/eps (capped form, docs/algorithms.md §4)",
            published_rho_unproven=rho_greedy_published(self.epsilon, self.delta),
        )

    def calibrate(self) -> Calibration:
        scale = laplace_scale(self.epsilon)
        rho = rho_greedy(self.epsilon, self.delta, self.params["max_items"])
        gamma = cutoff(rho, self.params["alpha"], scale)
        if gamma < 1.0:
            need = (1.0 - rho) / scale
            raise ParameterError(
                f"{self.label} needs the cutoff Gamma = rho + alpha/epsilon >= 1, got {gamma:.4g} "
                f"(rho = {rho:.4g}); raise alpha to at least {need:.4g} or choose delta below 0.5"
            )
        return self._calibration("laplace", scale, rho, gamma, details=self._details())

    def _order_arrays(self, corpus: Corpus) -> dict[str, np.ndarray]:
        """``counts=`` (GW) or ``rank=`` (GW-KT) for the kernel."""
        raise NotImplementedError

    def _release(self, corpus, rng, cal, progress):
        m = self.params["max_items"]
        if progress:
            progress(0.05, f"ordering users (each user's greedy update runs on its first Δ0 = {m} items)")
        # The kernel walks the corpus rows in a uniform random order directly (no reordered copy).
        order = sampling_plan(corpus, rng, None).order
        secret = draw_secret(rng)
        c, rk, by_count = _order_inputs(**self._order_arrays(corpus))
        if progress:
            progress(0.4, "greedy updates of the weighted histogram")
        h, cand = _greedy_capped(
            corpus.indptr,
            corpus.items,
            c,
            rk,
            by_count,
            order,
            keyed_ties(_corpus_keys(corpus), np.uint64(secret)),
            int(corpus.n_items),
            float(cal.gamma),
            int(m),
            descent_budget(m),
        )
        if progress:
            progress(0.9, "adding noise to every candidate and thresholding")
        ids = noisy_candidates(h, cand, rng, cal.scale, cal.rho)
        extra = {
            "note": "NOT private: candidates and weights come from raw data",
            "candidates": int(cand.sum()),
            "candidate_mask": cand,
        }
        return ReleaseParts(ids, Diagnostics(weights=h, extra=extra))


class Gw(_Greedy):
    name, label = "gw", "GW"
    summary = (
        "Greedy updates by each user's own word counts on the user's first Δ0 items; every such item is a "
        "noised candidate; Laplace noise 1/ε, ρ = ln((e^ε + Δ0 − 1)/(2δ))/ε (published ρ = 1 − ln(2δ)/ε: "
        "unproven, reference only)."
    )

    def _order_arrays(self, corpus):
        return {"counts": corpus.counts}


class GwKt(_Greedy):
    name, label = "gw-kt", "GW-KT"
    takes_public_corpus = True  # ``public_source``: wordfreq by default, or a public corpus the analyst supplies
    summary = (
        "GW ordered by a public word frequency (wordfreq or a public corpus you supply) instead of "
        "each user's counts, on the user's first Δ0 items; Laplace noise 1/ε, ρ = ln((e^ε + Δ0 − 1)/(2δ))/ε "
        "(published ρ = 1 − ln(2δ)/ε: unproven, reference only)."
    )

    def __init__(
        self, *, epsilon: float, delta: float, public_source: Any = None, lang: str = "en", **params: Any
    ) -> None:
        from ..publicfreq import check_public_source

        self.public_source = check_public_source(public_source, lang)
        self.lang = lang
        super().__init__(epsilon=epsilon, delta=delta, **params)

    def _details(self) -> GreedyDetails:
        from ..publicfreq import describe_source

        return replace(super()._details(), public_frequencies=describe_source(self.public_source, self.lang))

    def _order_arrays(self, corpus):
        return {"rank": public_rank(corpus, self.public_source, self.lang)}

    def __repr__(self) -> str:
        src = self.public_source
        shown = Path(src).name if isinstance(src, (str, Path)) else type(src).__name__
        return f"GwKt(epsilon={self.epsilon}, delta={self.delta}, {self.params}, public_source={shown})"
