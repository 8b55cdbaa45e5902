"""Carvalho et al. 2022 (AAAI): greedy set union with item frequency, GW and GW-KT.

GW skips the Delta0 sampling (every user keeps all items) and updates the weighted
histogram with GU (Algorithm 2): each user, in a uniformly random order, goes through
their items in descending frequency, skips items already at the cutoff Gamma, and gives
each item ``Gamma - H[u]`` until the budget of 1 runs out (the last item gets what is
left). Laplace noise 1/epsilon, Gamma >= 1, and threshold
rho = ln((e^eps + N - 1) / (2 delta)) / eps with N a public bound on the number of users
(``max_users``). The paper's rho = 1 - ln(2 delta)/eps is the N = 1 case; its proof misses that
other users' leftover budget can spill onto items nobody touched without u (see ``rho_greedy``).
GW-KT orders by a PUBLIC frequency instead (``dpsu_core.publicfreq``).

Visiting order within a user (what the sensitivity proof needs to be identical for a
user in both neighbouring corpora): primary key = the user's own count C_i[u] (GW) or the
public frequency of u (GW-KT), descending; ties broken by a keyed hash
``mix64(string_hash(u) XOR secret)``, with a fresh 64-bit ``secret`` drawn from the
release rng. ``string_hash`` is a fixed hash of the item's *string* (pandas'
``hash_array``), not of its vocabulary id: ids are assigned while reading the whole file,
so adding another user may renumber them, whereas the string is the user's own data. The
order therefore depends on nothing but the user's items, their counts (or the public
list) and the secret; in particular not on other users, and not on H (H only decides
which items are skipped, exactly as in Algorithm 2).

Weight 0 means "never touched": only items that actually received budget have H > 0,
and ``noisy_threshold`` noises only those (spec section 7).
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import numba
import numpy as np
from pandas.util import hash_array

from ..corpus.model import Corpus
from ..errors import ParameterError
from ..privacy.thresholds import laplace_scale, rho_greedy
from .base import Calibration, Diagnostics, Mechanism, ReleaseParts, noisy_threshold
from .registry import register
from .sampling import OrderedRows, sampling_plan

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
    """The per-release tie-breaking key: 64 uniform bits from the release's Generator."""
    return np.uint64(rng.integers(0, 2**64, dtype=np.uint64))


# --------------------------------------------------------------------------- GU kernel
# A user's visiting order is the ascending order of key = (primary << 32) | (tie >> 32), where
# tie = mix64(item_key XOR secret); equal keys (same primary and same top 32 bits of the tie:
# astronomically rare) are ordered by the full 64-bit tie, so the order never falls back on row
# positions, i.e. on vocabulary ids. ``_before`` is that total order.
_LAZY_STEPS = 4  # selection steps before sorting the rest of a row (most users stop after 1-2 items)


@numba.njit(cache=True, nogil=True, inline="always")
def _before(ka, kb, ua, ub, item_key, secret):
    if ka != kb:
        return ka < kb
    return _mix64(item_key[ua] ^ secret) < _mix64(item_key[ub] ^ secret)


@numba.njit(cache=True, nogil=True)
def _row_keys(s, e, items, primary, item_key, secret, h, gamma, keys, pos):
    """Keys of the entries s..e-1 of one user with H < Gamma (Algorithm 2's set S); returns their number."""
    n = 0
    for j in range(s, e):
        u = items[j]
        if h[u] < gamma:
            tie = _mix64(item_key[u] ^ secret)
            keys[n] = (np.uint64(primary[j]) << _U32) | (tie >> _U32)
            pos[n] = j
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _select_first(a, n, keys, pos, items, item_key, secret):
    """Move the first (in visiting order) of keys[a:n] to position a (one selection-sort step)."""
    best = a
    for k in range(a + 1, n):
        if _before(keys[k], keys[best], items[pos[k]], items[pos[best]], item_key, secret):
            best = k
    if best != a:
        kt = keys[a]
        keys[a] = keys[best]
        keys[best] = kt
        pt = pos[a]
        pos[a] = pos[best]
        pos[best] = pt


@numba.njit(cache=True, nogil=True)
def _sort_tail(a, n, keys, pos, items, item_key, secret):
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
        while m > a and keys[m - 1] == kk and _before(kk, keys[m - 1], items[p], items[pos[m - 1]], item_key, secret):
            keys[m] = keys[m - 1]
            pos[m] = pos[m - 1]
            m -= 1
        keys[m] = kk
        pos[m] = p


@numba.njit(cache=True, nogil=True)
def _greedy(indptr, items, order, primary, item_key, secret, n_items, gamma):
    """GU (Carvalho et al., Algorithm 2) for every user, visiting users in ``order`` (rows of the CSR).

    Items are taken lazily in visiting order: a few selection steps, then (for the rare user whose
    budget outlasts them) a sort of the rest. The result is identical to sorting every row in full.
    """
    h = np.zeros(n_items, dtype=np.float64)
    n_rows = indptr.shape[0] - 1
    longest = 0
    for r in range(n_rows):
        if indptr[r + 1] - indptr[r] > longest:
            longest = indptr[r + 1] - indptr[r]
    keys = np.empty(longest, dtype=np.uint64)
    pos = np.empty(longest, dtype=np.int64)
    for i in range(order.shape[0]):
        r = order[i]
        n = _row_keys(indptr[r], indptr[r + 1], items, primary, item_key, secret, h, gamma, keys, pos)
        budget = 1.0
        for k in range(n):
            if k < _LAZY_STEPS:
                _select_first(k, n, keys, pos, items, item_key, secret)
            elif k == _LAZY_STEPS:
                _sort_tail(k, n, keys, pos, items, item_key, secret)
            u = items[pos[k]]
            cost = gamma - h[u]
            if cost <= budget:  # reach Gamma exactly and go on with what is left
                h[u] = gamma
                budget -= cost
                if budget <= 0.0:
                    break
            else:  # not enough to reach Gamma: spend it all on this item
                h[u] += budget
                break
    return h


@numba.njit(cache=True, nogil=True)
def _one_row_order(items, primary, item_key, secret, h, gamma, lazy):
    n0 = items.shape[0]
    keys = np.empty(max(n0, 1), dtype=np.uint64)
    pos = np.empty(max(n0, 1), dtype=np.int64)
    n = _row_keys(0, n0, items, primary, item_key, secret, h, gamma, keys, pos)
    for k in range(min(lazy, n)):
        _select_first(k, n, keys, pos, items, item_key, secret)
    if lazy < n:
        _sort_tail(lazy, n, keys, pos, items, item_key, secret)
    return pos[:n].copy()


def greedy_update(
    rows: OrderedRows, n_items: int, gamma: float, primary: np.ndarray, item_key: np.ndarray, secret: int | np.uint64
) -> np.ndarray:
    """H after GU over ``rows`` (already in processing order).

    ``primary``: uint32 per CSR entry, smaller = visited first (``count_priority(rows.counts)`` for GW,
    ``frequency_rank(public)[rows.items]`` for GW-KT); ``item_key``: uint64 per item (``item_hash_keys``).
    """
    return _greedy(
        rows.indptr,
        rows.items,
        np.arange(rows.n_rows, dtype=np.int64),
        np.asarray(primary, dtype=np.uint32),
        np.asarray(item_key, dtype=np.uint64),
        np.uint64(secret),
        int(n_items),
        float(gamma),
    )


def user_visit_order(
    items: np.ndarray,
    primary: np.ndarray,
    item_key: np.ndarray,
    secret: int | np.uint64,
    h: np.ndarray,
    gamma: float,
    *,
    lazy: int = _LAZY_STEPS,
) -> np.ndarray:
    """The item ids one user would visit, in order, given the current histogram ``h``.

    Same helpers as the kernel (``lazy`` selection steps, then a sort of the rest); any ``lazy`` gives
    the same order, which the tests check.
    """
    items = np.asarray(items, dtype=np.int32)
    pos = _one_row_order(
        items,
        np.asarray(primary, dtype=np.uint32),
        np.asarray(item_key, dtype=np.uint64),
        np.uint64(secret),
        np.asarray(h, dtype=np.float64),
        float(gamma),
        int(lazy),
    )
    return items[pos]


# --------------------------------------------------------------------------- mechanisms
class _Greedy(Mechanism):
    family = "laplace"
    param_names = ("alpha", "max_users")

    def __init__(self, *, epsilon: float, delta: float, **params: Any) -> None:
        super().__init__(epsilon=epsilon, delta=delta, **params)
        self.calibrate()  # fail early when Gamma < 1

    def _details(self) -> dict[str, Any]:
        return {
            "l1_sensitivity": 1.0,
            "sampling": "none (every user keeps all items)",
            "threshold": "rho = ln((e^eps + N - 1)/(2 delta))/eps, N = max_users (corrects Carvalho et al.'s "
            "rho = 1 - ln(2 delta)/eps, whose proof misses spill-over to other users' items)",
        }

    def calibrate(self) -> Calibration:
        scale = laplace_scale(self.epsilon)
        rho = rho_greedy(self.epsilon, self.delta, self.params["max_users"])
        gamma = rho + self.params["alpha"] * scale
        if gamma < 1.0:
            need = (1.0 - rho) / scale
            raise ParameterError(
                f"{self.label} needs the cutoff Gamma = rho + alpha/epsilon >= 1, got {gamma:.4g} "
                f"(rho = {rho:.4g}); raise alpha to at least {need:.4g} or choose delta below 0.5"
            )
        return self._calibration("laplace", scale, rho, gamma, **self._details())

    def _primary(self, corpus: Corpus, rows: OrderedRows | Corpus) -> np.ndarray:
        """uint32 per CSR entry of ``rows`` (an OrderedRows or the corpus itself): smaller = visited first."""
        raise NotImplementedError

    def _release(self, corpus, rng, cal, progress):
        if corpus.n_users > self.params["max_users"]:
            raise ParameterError(
                f"{self.label} was calibrated for at most max_users = {self.params['max_users']:,} users but the "
                f"corpus has more; raise max_users (--max-users) to a public upper bound on the number of users"
            )
        if progress:
            progress(0.05, "ordering users (no sampling: every user keeps all items)")
        # The kernel walks the corpus rows in a uniform random order directly (no reordered copy).
        order = sampling_plan(corpus, rng, None).order
        secret = draw_secret(rng)
        primary = np.asarray(self._primary(corpus, corpus), dtype=np.uint32)
        if progress:
            progress(0.4, "greedy updates of the weighted histogram")
        h = _greedy(
            corpus.indptr,
            corpus.items,
            order,
            primary,
            _corpus_keys(corpus),
            np.uint64(secret),
            int(corpus.n_items),
            float(cal.gamma),
        )
        if progress:
            progress(0.9, "adding noise and thresholding")
        return ReleaseParts(noisy_threshold(h, rng, cal.noise, cal.scale, cal.rho), Diagnostics(weights=h))


@register
class Gw(_Greedy):
    name, label = "gw", "GW"
    summary = "Greedy updates by each user's own word counts, no Δ0 sampling; Laplace noise 1/ε, ρ = 1 − ln(2δ)/ε."

    def _primary(self, corpus, rows):
        return count_priority(rows.counts)


@register
class GwKt(_Greedy):
    name, label = "gw-kt", "GW-KT"
    summary = (
        "GW ordered by a public word frequency (wordfreq or a public corpus you supply) instead of "
        "each user's counts; Laplace noise 1/ε."
    )

    def __init__(
        self, *, epsilon: float, delta: float, public_source: Any = None, lang: str = "en", **params: Any
    ) -> None:
        from ..publicfreq import check_public_source

        self.public_source = check_public_source(public_source, lang)
        self.lang = lang
        self._ranks: weakref.WeakKeyDictionary[Corpus, np.ndarray] = weakref.WeakKeyDictionary()
        super().__init__(epsilon=epsilon, delta=delta, **params)

    def _details(self) -> dict[str, Any]:
        from ..publicfreq import describe_source

        d = super()._details()
        d["public_frequencies"] = describe_source(self.public_source, self.lang)
        return d

    def _primary(self, corpus, rows):
        from ..publicfreq import public_frequencies

        rank = self._ranks.get(corpus)
        if rank is None:  # public frequencies of this vocabulary: fixed per (source, corpus), so cached
            rank = frequency_rank(public_frequencies(corpus.vocab, self.public_source, self.lang))
            self._ranks[corpus] = rank
        return rank[rows.items]

    def __repr__(self) -> str:
        src = self.public_source
        shown = Path(src).name if isinstance(src, (str, Path)) else type(src).__name__
        return f"GwKt(epsilon={self.epsilon}, delta={self.delta}, {self.params}, public_source={shown})"
