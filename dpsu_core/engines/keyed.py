"""Per-user sampling by keyed hashing, for engines that cannot ship uniforms to every user.

The local engine samples each over-long row with uniforms drawn in processing order
(``mechanisms.sampling``). A distributed engine cannot: its users live on many machines.
Here each (user, item) pair gets a pseudo-random 64-bit key from a secret 128-bit salt drawn
per release (``secrets``); a user keeps the ``max_items`` items with the smallest keys. For a
fresh secret salt the keys of one user's items are independent uniform draws, so the kept set
is a uniform ``max_items``-subset chosen independently of every other user (steps 1-2 of the
common frame, Gopi et al. Algorithms 1-2); the user index only separates the users' streams.
Count/Weighted/DP-SIPS/DPNE updates are sums over users, so no user order is needed.

Pure numpy/numba (no pyspark): the Spark engine calls it inside its Arrow-batch functions and the
tests call it on a local Corpus to check that both engines see the same kept sets.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import numba
import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@numba.njit(cache=True, nogil=True, inline="always")
def _mix(z):
    """SplitMix64's finaliser: a bijection of uint64 with full avalanche."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def keyed_sample(indptr, items, users, salt0, salt1, max_items, keep):  # pragma: no cover - compiled
    """Rows ``items[indptr[r]:indptr[r+1]]`` of users ``users[r]``: mark in ``keep`` (bool, per entry) the
    entries kept -- all of a row of at most ``max_items`` items (``max_items <= 0``: every row whole),
    else the ``max_items`` with the smallest keys mix(mix(salt0 ^ user) ^ salt1 ^ item)."""
    n_rows = indptr.shape[0] - 1
    longest = 0
    for r in range(n_rows):
        if indptr[r + 1] - indptr[r] > longest:
            longest = indptr[r + 1] - indptr[r]
    keys = np.empty(longest, dtype=np.uint64)
    s0 = np.uint64(salt0)
    s1 = np.uint64(salt1)
    for r in range(n_rows):
        a = indptr[r]
        n = indptr[r + 1] - a
        if max_items <= 0 or n <= max_items:
            for j in range(n):
                keep[a + j] = True
            continue
        ukey = _mix(s0 ^ np.uint64(users[r]))
        for j in range(n):
            keys[j] = _mix(ukey ^ s1 ^ np.uint64(items[a + j]))
            keep[a + j] = False
        order = np.argsort(keys[:n])
        for j in range(max_items):
            keep[a + order[j]] = True
    return keep


def sample_rows(
    indptr: np.ndarray, items: np.ndarray, users: np.ndarray, salt: tuple[int, int], max_items: int
) -> tuple[np.ndarray, np.ndarray]:
    """The kept entries as a CSR (indptr, items) in the same row order."""
    keep = np.zeros(items.shape[0], dtype=np.bool_)
    keyed_sample(
        np.asarray(indptr, dtype=np.int64),
        np.asarray(items, dtype=np.int64),
        np.asarray(users, dtype=np.int64),
        np.uint64(salt[0]),
        np.uint64(salt[1]),
        int(max_items),
        keep,
    )
    kept_before = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    return kept_before[np.asarray(indptr, dtype=np.int64)], np.asarray(items)[keep]


@dataclass
class SaltSource:
    """Fresh 128-bit sampling salts: from ``secrets`` (the OS), or from a seed only when the caller fixes one
    (teaching and tests; such a release is flagged as not for real use)."""

    seed: int | None = None

    def __post_init__(self) -> None:
        self._rng = None if self.seed is None else np.random.default_rng([int(self.seed), 0x5A17])

    def next(self) -> tuple[int, int]:
        if self._rng is None:
            return secrets.randbits(64), secrets.randbits(64)
        a, b = self._rng.integers(0, 2**63, size=2, dtype=np.int64)
        return int(a), int(b)
