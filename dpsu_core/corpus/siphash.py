"""SipHash-2-4's rounds (Aumasson and Bernstein 2012), compiled: the one copy that the Spark engine's keyed
sampling (``engines.keyed``) and the public-corpus content check (``overlap``) both build their hashes from."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def rotl(x, b):  # pragma: no cover - compiled
    """x rotated left by b bits (uint64)."""
    return (x << np.uint64(b)) | (x >> np.uint64(64 - b))


@numba.njit(cache=True, nogil=True, inline="always")
def sip_rounds(v0, v1, v2, v3, n):  # pragma: no cover - compiled
    """``n`` SipRounds of the state (v0, v1, v2, v3)."""
    for _ in range(n):
        v0 += v1
        v1 = rotl(v1, 13)
        v1 ^= v0
        v0 = rotl(v0, 32)
        v2 += v3
        v3 = rotl(v3, 16)
        v3 ^= v2
        v0 += v3
        v3 = rotl(v3, 21)
        v3 ^= v0
        v2 += v1
        v1 = rotl(v1, 17)
        v1 ^= v2
        v2 = rotl(v2, 32)
    return v0, v1, v2, v3
