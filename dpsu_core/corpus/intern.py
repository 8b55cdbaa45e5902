"""Interning byte strings to dense int32 ids: an open-addressing hash table in numba.

The tokenizer calls ``find`` (and ``insert`` when the token is new) for every token it cuts,
inside its own compiled loop, so a token never exists as a separate string: its bytes go from the
post into a small scratch buffer and come out as an id. User ids are interned the same way
(``Interner.add_strings``). Ids are given in order of first sight: id k is the k-th distinct string.

State (numpy arrays, grown by doubling by ``Interner.reserve`` between runs of the compiled loops):
  slots    int64 (size, 2), size a power of two; a slot is [key, (id + 1) << 32 | length], all 0 when
           free. The key of a string of at most 8 bytes is its bytes (so a lookup reads one slot and
           nothing else); of a longer string, its FNV-1a hash (then the bytes are compared in the arena).
  offsets  int64: string k is arena[offsets[k]:offsets[k+1]]
  arena    uint8: the bytes of every distinct string, back to back
  n        the number of strings
"""

from __future__ import annotations

import hashlib

import numba
import numpy as np
import pyarrow as pa

_FNV_OFFSET = np.int64(-3750763034362895579)  # 14695981039346656037 as a signed 64-bit value
_FNV_PRIME = np.int64(1099511628211)
_MIX = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, Fibonacci hashing


@numba.njit(cache=True, nogil=True, inline="always")
def key_of(buf, start, end):  # pragma: no cover - compiled
    """The key of buf[start:end]: its bytes packed little-endian when at most 8, else its FNV-1a hash."""
    k = np.int64(0)
    if end - start <= 8:
        for i in range(end - 1, start - 1, -1):
            k = (k << 8) | np.int64(buf[i])
        return k
    k = _FNV_OFFSET
    for i in range(start, end):
        k = (k ^ np.int64(buf[i])) * _FNV_PRIME  # wraps modulo 2**64
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def _home(key, length, mask):  # pragma: no cover - compiled
    h = (key ^ length) * _MIX
    return (h ^ (h >> 32)) & mask


@numba.njit(cache=True, nogil=True, inline="always")
def find(buf, start, end, key, slots, offsets, arena):  # pragma: no cover - compiled
    """(slot, id) of the string buf[start:end] with key ``key``; id -1 when absent (the slot is then free)."""
    mask = slots.shape[0] - 1
    length = end - start
    s = _home(key, length, mask)
    while True:
        meta = slots[s, 1]
        if meta == 0:
            return s, -1
        if slots[s, 0] == key and (meta & 0xFFFFFFFF) == length:
            k = (meta >> 32) - 1
            if length <= 8:
                return s, k
            a = offsets[k]
            same = True
            for i in range(length):
                if arena[a + i] != buf[start + i]:
                    same = False
                    break
            if same:
                return s, k
        s = (s + 1) & mask


@numba.njit(cache=True, nogil=True)
def _rehash(slots, size):  # pragma: no cover - compiled
    mask = size - 1
    new = np.zeros((size, 2), dtype=np.int64)
    for s in range(slots.shape[0]):
        meta = slots[s, 1]
        if meta != 0:
            t = _home(slots[s, 0], meta & 0xFFFFFFFF, mask)
            while new[t, 1] != 0:
                t = (t + 1) & mask
            new[t, 0] = slots[s, 0]
            new[t, 1] = meta
    return new


@numba.njit(cache=True, nogil=True, inline="always")
def has_room(slots, offsets, arena, n, new_strings, new_bytes):  # pragma: no cover - compiled
    """Whether ``insert`` can add ``new_strings`` strings of ``new_bytes`` bytes in all without growing."""
    return (
        2 * (n + new_strings) <= slots.shape[0]
        and n + new_strings + 1 <= offsets.shape[0]
        and offsets[n] + new_bytes <= arena.shape[0]
    )


@numba.njit(cache=True, nogil=True, inline="always")
def insert(buf, start, end, key, s, slots, offsets, arena, n):  # pragma: no cover - compiled
    """Add buf[start:end] (key ``key``, free slot ``s`` from ``find``) as id ``n``; the caller checked
    ``has_room`` (the arrays never grow in the compiled loops: growing is ``Interner.reserve``'s job,
    and a loop that may swap its arrays runs several times slower). Returns the new id."""
    length = end - start
    a = offsets[n]
    for i in range(length):
        arena[a + i] = buf[start + i]
    offsets[n + 1] = a + length
    slots[s, 0] = key
    slots[s, 1] = ((np.int64(n) + 1) << 32) | length
    return n


@numba.njit(cache=True, nogil=True)
def _add_all(data, starts, ends, j, slots, offsets, arena, n, ids):  # pragma: no cover - compiled
    """Intern strings j, j+1, ... until one might not fit; returns (next j, n)."""
    while j < starts.shape[0]:
        a, e = starts[j], ends[j]
        if not has_room(slots, offsets, arena, n, 1, e - a):
            break
        key = key_of(data, a, e)
        s, k = find(data, a, e, key, slots, offsets, arena)
        if k < 0:
            k = insert(data, a, e, key, s, slots, offsets, arena, n)
            n += 1
        ids[j] = k
        j += 1
    return j, n


PYLIST_MAX = 1_000_000  # Interner.objects: a larger table goes through Arrow's to_numpy


def string_buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(data bytes, int64 offsets) of a string/large_string array, zero-copy where possible (nulls read as "")."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    bufs = values.buffers()
    if bufs[1] is None:  # an empty array may come without buffers
        return np.zeros(0, np.uint8), np.zeros(len(values) + 1, np.int64)
    offsets = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32)
    offsets = offsets[values.offset : values.offset + len(values) + 1]
    if not large:
        offsets = offsets.astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offsets


@numba.njit(cache=True, nogil=True)
def _keys(data, offsets, n):  # pragma: no cover - compiled
    keys = np.empty(n, dtype=np.int64)
    for k in range(n):
        keys[k] = key_of(data, offsets[k], offsets[k + 1])
    return keys


@numba.njit(cache=True, nogil=True, inline="always")
def _less(data, s1, e1, s2, e2):  # pragma: no cover - compiled
    """Whether data[s1:e1] sorts before data[s2:e2] (by length, then bytes): the tie-break of equal keys."""
    if e1 - s1 != e2 - s2:
        return e1 - s1 < e2 - s2
    for i in range(e1 - s1):
        if data[s1 + i] != data[s2 + i]:
            return data[s1 + i] < data[s2 + i]
    return False


@numba.njit(cache=True, nogil=True)
def _canonical(keys, starts, ends, data):  # pragma: no cover - compiled
    """The strings data[starts[a]:ends[a]], already sorted by their ``keys``: runs of equal keys settled by their
    bytes (``starts`` and ``ends`` reordered in place), then the strings back to back in that order."""
    n = keys.shape[0]
    i = 0
    while i < n:
        j = i + 1
        while j < n and keys[j] == keys[i]:
            j += 1
        for a in range(i + 1, j):  # insertion sort of a (nearly always 1-long) run
            s, e = starts[a], ends[a]
            b = a - 1
            while b >= i and _less(data, s, e, starts[b], ends[b]):
                starts[b + 1], ends[b + 1] = starts[b], ends[b]
                b -= 1
            starts[b + 1], ends[b + 1] = s, e
        i = j
    total = 0
    for a in range(n):
        total += ends[a] - starts[a]
    out = np.empty(total, dtype=np.uint8)
    p = 0
    for a in range(n):
        for i in range(starts[a], ends[a]):
            out[p] = data[i]
            p += 1
    return out


def set_digest(data: np.ndarray, offsets: np.ndarray) -> bytes:
    """An unkeyed 32-byte BLAKE2b digest of a set of DISTINCT strings (``data[offsets[k]:offsets[k+1]]``), the
    same in any order: the strings are put in a canonical order (by their ``key_of``, ties by length and bytes;
    numpy and a compiled loop, no Python per string) and hashed with their lengths. A stand-in for the set that
    holds none of its strings, to be keyed later (``fingerprint.salted_users_hash``)."""
    n = offsets.shape[0] - 1
    keys = _keys(data, offsets, n)
    order = np.argsort(keys, kind="stable")
    starts, ends = offsets[:-1][order], offsets[1:][order]
    joined = _canonical(keys[order], starts, ends, data)
    h = hashlib.blake2b(digest_size=32, person=b"dpsu-id-set")
    h.update(np.int64(n).tobytes())
    h.update((ends - starts).astype("<i8").tobytes())
    h.update(joined.tobytes())
    return h.digest()


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    b = np.empty(max(2 * a.shape[0], need), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


class Interner:
    """A growing table of distinct byte strings with dense ids (first sight = 0, 1, 2, ...)."""

    def __init__(self, capacity: int = 1 << 12) -> None:
        size = 1 << max(4, int(capacity - 1).bit_length())
        self.slots = np.zeros((2 * size, 2), dtype=np.int64)
        self.offsets = np.zeros(size + 1, dtype=np.int64)
        self.arena = np.empty(16 * size, dtype=np.uint8)
        self.n = 0

    def __len__(self) -> int:
        return self.n

    @property
    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.slots, self.offsets, self.arena

    def reserve(self, new_strings: int, new_bytes: int) -> None:
        """Grow the arrays (doubling) so that ``new_strings`` more strings of ``new_bytes`` bytes fit."""
        need = self.n + new_strings
        size = self.slots.shape[0]
        while 2 * need > size:
            size *= 2
        if size > self.slots.shape[0]:
            self.slots = _rehash(self.slots, size)
        if need + 1 > self.offsets.shape[0]:
            self.offsets = _grown(self.offsets, need + 1)
        end = int(self.offsets[self.n])
        if end + new_bytes > self.arena.shape[0]:
            self.arena = _grown(self.arena, end + new_bytes)

    def add_strings(self, values: pa.Array) -> np.ndarray:
        """int32 id of every element of a string array (nulls as the empty string)."""
        data, offsets = string_buffers(values)
        return self._add(data, offsets[:-1], offsets[1:])

    def merge(self, other: Interner) -> np.ndarray:
        """Add ``other``'s strings (in its id order); returns int32 ``remap`` with other id k -> id here."""
        return self._add(other.arena, other.offsets[: other.n], other.offsets[1 : other.n + 1])

    def _add(self, data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        ids = np.empty(starts.shape[0], dtype=np.int32)
        j = 0
        while j < starts.shape[0]:
            j, self.n = _add_all(data, starts, ends, j, *self.tables, self.n, ids)
            if j < starts.shape[0]:
                self.reserve(max(1, self.n), max(int(ends[j] - starts[j]), int(self.offsets[self.n])))
        return ids

    def digest(self) -> bytes:
        """``set_digest`` of the distinct strings."""
        return set_digest(self.arena, self.offsets[: self.n + 1])

    def objects(self, arr: pa.Array | None = None) -> np.ndarray:
        """The distinct strings as a numpy object array of str (id order); ``arr``: ``strings()`` when the caller
        already built it.

        Up to ``PYLIST_MAX`` strings through a Python list: Arrow's ``to_numpy`` first imports pandas (pyarrow's
        pandas shim), a fixed 0.1-0.2 s that a small vocabulary does not repay; past it ``to_numpy``'s faster
        conversion does."""
        if arr is None:
            arr = self.strings()
        if len(arr) > PYLIST_MAX:
            return arr.to_numpy(zero_copy_only=False).astype(object, copy=False)
        out = np.empty(len(arr), dtype=object)
        out[:] = arr.to_pylist()
        return out

    def strings(self) -> pa.Array:
        """The distinct strings as an Arrow array (id order); large_string past 2 GiB of bytes."""
        n, end = self.n, int(self.offsets[self.n])
        data = pa.py_buffer(self.arena[:end].copy())
        if end < 2**31:
            return pa.StringArray.from_buffers(n, pa.py_buffer(self.offsets[: n + 1].astype(np.int32)), data)
        return pa.LargeStringArray.from_buffers(n, pa.py_buffer(self.offsets[: n + 1].copy()), data)
