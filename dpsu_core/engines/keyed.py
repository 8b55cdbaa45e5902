"""Per-user sampling by a keyed cryptographic hash, for engines that cannot ship uniforms to every user.

The local engine samples each over-long row with uniforms drawn in processing order
(``mechanisms.sampling``). A distributed engine cannot: its users live on many machines, in no fixed
order. Here each (user, item) pair gets the 64-bit key

    SipHash-2-4_salt( blake2b64(user id string) || blake2b64(item string) )

where ``salt`` is a secret 128-bit SipHash key drawn per release (and per DPSU round) from ``secrets``,
and a user keeps the ``max_items`` items with the smallest keys.

Assumptions (the privacy argument rests on them): SipHash-2-4 is a pseudo-random function under a secret
key, so for a fresh salt the keys of all distinct (user, item) pairs are indistinguishable from independent
uniform draws; and the 64-bit BLAKE2b digests of the corpus's distinct user ids, and of its distinct item
strings, do not collide (probability below n^2 / 2^65 for n strings). Then the kept set is a uniform
``max_items``-subset of the user's items, chosen independently of every other user (steps 1-2 of the common
frame, Gopi et al. Algorithms 1-2), and a user's sample depends on nothing but that user's own data and the
salt: adding or removing a user changes nobody else's sample. Count/Weighted/DP-SIPS/DPNE updates are sums
over users, so no user order is needed. The salt never leaves the driver's process except inside the
sampling function shipped to the executors, and is never written out.

Pure numpy/numba (no pyspark): the Spark engine calls it inside its Arrow-batch functions and the tests
call it on a local Corpus to check that both engines see the same kept sets.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

import numba
import numpy as np

from ..corpus.siphash import sip_rounds

_C0 = np.uint64(0x736F6D6570736575)
_C1 = np.uint64(0x646F72616E646F6D)
_C2 = np.uint64(0x6C7967656E657261)
_C3 = np.uint64(0x7465646279746573)
_LEN16 = np.uint64(16 << 56)  # SipHash's last block for a 16-byte message: its length in the top byte


@numba.njit(cache=True, nogil=True)
def siphash16(k0, k1, m0, m1):  # pragma: no cover - compiled
    """SipHash-2-4 with key (k0, k1) of the 16-byte message m0 || m1 (two little-endian 64-bit words)."""
    v0, v1, v2, v3 = k0 ^ _C0, k1 ^ _C1, k0 ^ _C2, k1 ^ _C3
    v3 ^= m0
    v0, v1, v2, v3 = sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= m0
    v3 ^= m1
    v0, v1, v2, v3 = sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= m1
    v3 ^= _LEN16
    v0, v1, v2, v3 = sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= _LEN16
    v2 ^= np.uint64(0xFF)
    v0, v1, v2, v3 = sip_rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def string_keys(strings: Iterable[str]) -> np.ndarray:
    """The 64-bit BLAKE2b digest of each string's UTF-8 bytes (uint64, little-endian): the hash's inputs."""
    return np.array(
        [int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little") for s in strings],
        dtype=np.uint64,
    )


@numba.njit(cache=True, nogil=True)
def keyed_sample(indptr, items, user_keys, item_keys, salt0, salt1, max_items, keep):  # pragma: no cover - compiled
    """Rows ``items[indptr[r]:indptr[r+1]]`` of the users with keys ``user_keys[r]``: mark in ``keep`` (bool,
    per entry) the entries kept -- all of a row of at most ``max_items`` items (``max_items <= 0``: every row
    whole), else the ``max_items`` with the smallest siphash16(salt, user_keys[r], item_keys[item])."""
    n_rows = indptr.shape[0] - 1
    longest = 0
    for r in range(n_rows):
        if indptr[r + 1] - indptr[r] > longest:
            longest = indptr[r + 1] - indptr[r]
    keys = np.empty(longest, dtype=np.uint64)
    for r in range(n_rows):
        a = indptr[r]
        n = indptr[r + 1] - a
        if max_items <= 0 or n <= max_items:
            for j in range(n):
                keep[a + j] = True
            continue
        for j in range(n):
            keys[j] = siphash16(salt0, salt1, user_keys[r], item_keys[items[a + j]])
            keep[a + j] = False
        order = np.argsort(keys[:n])
        for j in range(max_items):
            keep[a + order[j]] = True
    return keep


def sample_rows(
    indptr: np.ndarray,
    items: np.ndarray,
    user_keys: np.ndarray,
    item_keys: np.ndarray,
    salt: tuple[int, int],
    max_items: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The kept entries as a CSR (indptr, items) in the same row order. ``user_keys``: per row, the
    ``string_keys`` of its user id; ``item_keys``: per item id, the ``string_keys`` of its string."""
    keep = np.zeros(items.shape[0], dtype=np.bool_)
    keyed_sample(
        np.asarray(indptr, dtype=np.int64),
        np.asarray(items, dtype=np.int64),
        np.asarray(user_keys, dtype=np.uint64),
        np.asarray(item_keys, dtype=np.uint64),
        np.uint64(salt[0]),
        np.uint64(salt[1]),
        int(max_items),
        keep,
    )
    kept_before = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    return kept_before[np.asarray(indptr, dtype=np.int64)], np.asarray(items)[keep]


@dataclass
class SaltSource:
    """Fresh 128-bit SipHash keys: from ``secrets`` (the OS), or from a seed only when the caller fixes one
    (teaching and tests; such a release is flagged as not for real use)."""

    seed: int | None = None

    def __post_init__(self) -> None:
        self._rng = None if self.seed is None else np.random.default_rng([int(self.seed), 0x5A17])

    def next(self) -> tuple[int, int]:
        if self._rng is None:
            return secrets.randbits(64), secrets.randbits(64)
        a, b = self._rng.integers(0, 2**63, size=2, dtype=np.int64)
        return int(a), int(b)
