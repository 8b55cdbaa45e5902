"""Whether a file given as PUBLIC data holds the private corpus's posts: a check of content, not of bytes.

Where both files are loaded into corpora (the CLI's local engine, the app), the first rule is the users' token
sets (``fingerprint``: edits the tokenizer ignores, users renamed, padding); this one is kept beside it as a
second check (the same posts handed to other users), and is the Spark engine's check, made in its own pass.

A release on an exploration corpus spends nothing, and GW-KT's proof needs public frequencies that do not depend
on the private users; a "public" file that is the private file with its line endings changed, its rows shuffled,
one row added or written as JSON Lines would pass a byte comparison and release private data unrecorded. So each
file is read as the loader reads it (its own format, header and columns: ``readers.read_table``) and reduced to
a ``Fingerprint``: the keyed hashes of its distinct normalised posts and of its distinct (user, post) pairs.

Normalisation: Unicode NFC, lower case (Arrow's Unicode lower-casing, plus casefold's ß -> ss and ς -> σ), every
run of white space (Unicode's included) one space, trimmed. A post that is empty after it counts nowhere.
Rows that are pure ASCII (NFC and case folding are then ASCII lower-casing) are normalised inside the hashing
kernel as it reads the bytes, without building new strings; the others go through Arrow first
(``utf8_normalize``, ``utf8_lower``, ``replace_substring_regex``) and then through the same kernel.

Hash: SipHash-2-4 (Aumasson and Bernstein 2012), a pseudo-random function under a 128-bit key drawn from the OS
(``new_key``) for each app session or command run and never written anywhere. A keyed PRF rather than a fast
unkeyed hash (xxhash, Arrow's internal hashing): nobody without the key can craft a file whose posts collide
with, or avoid, the private corpus's hashes, and the hashes held in memory say nothing about the posts without
it. Arrow exposes no keyed string hash, so the kernel is numba over the Arrow string buffers (one pass, no
Python per row). 64-bit hashes: over 10M posts per file the expected number of chance collisions is below 1e-5.

Where the private file is hashed: in the read that loads it (``load_corpus(on_batch=Fingerprinter.add)``), or,
for the Spark engine, in the executors' first pass over its rows (``row_hits``: each row's hits on the public
file's hashes, shipped with the pass; the distinct hits counted, ``found_in_pass``). Either way no read of its own.

The decision (``compare``): a file is refused when at least ``REFUSE_SHARE`` of its distinct posts are the
private corpus's, or when more than ``REFUSE_PAIRS`` of its (user, post) pairs are the private corpus's (the
same user's same post: the same person's data); any smaller overlap is accepted with a warning giving the
figure. Pairs are compared only when both files have a user column.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .columns import apply_user_pattern
from .intern import string_buffers
from .limits import DEFAULT_LIMITS, ReadLimits
from .readers import read_table
from .siphash import sip_rounds

REFUSE_SHARE = 0.20  # refused: at least this share of the file's distinct posts are in the private corpus
REFUSE_PAIRS = 10  # refused: more than this many of its (user, post) pairs are the private corpus's

Key = tuple[int, int]  # SipHash's 128-bit key as two 64-bit words


def new_key() -> Key:
    """A fresh SipHash key from the OS (one per app session or command run; never exported)."""
    k = np.frombuffer(os.urandom(16), dtype="<u8")
    return int(k[0]), int(k[1])


@dataclass(frozen=True)
class Fingerprint:
    """A file's content under one key: its distinct normalised posts and (user, post) pairs, as sorted keyed
    hashes (8 bytes each). Only comparable with a fingerprint made under the same key."""

    posts: np.ndarray = field(repr=False)  # uint64, sorted, distinct
    pairs: np.ndarray | None = field(repr=False)  # uint64, sorted, distinct; None: no user column
    rows: int  # posts hashed (rows with a user and a non-empty post)
    key: Key = field(repr=False, compare=False)

    @property
    def n_posts(self) -> int:
        return int(self.posts.shape[0])


@dataclass(frozen=True)
class Overlap:
    """How much of a candidate public file is the private corpus's."""

    posts: int  # the file's distinct posts
    shared_posts: int  # of them, in the private corpus
    pairs: int | None  # the file's distinct (user, post) pairs (None: a file without users)
    shared_pairs: int  # of them, the private corpus's

    @property
    def share(self) -> float:
        return self.shared_posts / self.posts if self.posts else 0.0

    @property
    def refused(self) -> bool:
        return (self.posts > 0 and self.share >= REFUSE_SHARE) or self.shared_pairs > REFUSE_PAIRS

    @property
    def any(self) -> bool:
        return self.shared_posts > 0 or self.shared_pairs > 0

    def figures(self) -> str:
        """'12.0% of its distinct posts (120 of 1,000) and 3 (user, post) pairs'."""
        pct = 100 * self.share
        text = f"{pct:.1f}%" if pct >= 0.1 or pct == 0 else f"{pct:.2g}%"
        out = f"{text} of its distinct posts ({self.shared_posts:,} of {self.posts:,})"
        if self.pairs is not None:
            out += f" and {self.shared_pairs:,} of its (user, post) pairs"
        return out

    def refusal(self, use: str) -> str:
        """The one-line refusal (``use``: "the exploration corpus", "GW-KT's public corpus", ...)."""
        return (
            f"{self.figures()} are also in the private corpus (refused from {100 * REFUSE_SHARE:.0f}% of the posts "
            f"or more than {REFUSE_PAIRS} pairs); {use} must be PUBLIC data, never the private file nor a copy, "
            "sample or re-formatting of it: give a public file"
        )

    def warning(self, use: str) -> str:
        """The warning of an accepted file that shares some posts."""
        return (
            f"{self.figures()} are also in the private corpus: below the refusal limits "
            f"({100 * REFUSE_SHARE:.0f}% of the posts, {REFUSE_PAIRS} pairs), so it is used as {use}; check that "
            "it is public data"
        )


def compare(candidate: Fingerprint, private: Fingerprint) -> Overlap:
    """How much of ``candidate`` (a file given as public) is ``private``'s content."""
    if candidate.key != private.key:
        raise ValueError("fingerprints made under different keys cannot be compared")
    shared = int(_count_common(candidate.posts, private.posts))
    pairs, shared_pairs = None, 0
    if candidate.pairs is not None:
        pairs = int(candidate.pairs.shape[0])
        if private.pairs is not None:
            shared_pairs = int(_count_common(candidate.pairs, private.pairs))
    return Overlap(candidate.n_posts, shared, pairs, shared_pairs)


def check_public(candidate: Fingerprint, private: Fingerprint | None, use: str) -> Overlap | None:
    """``compare``, raising an InputError with the one-line refusal when the candidate is refused. None: no
    private file to compare with (the bundled demo); else the overlap (``Overlap.any``: warn with its figure)."""
    if private is None:
        return None
    found = compare(candidate, private)
    if found.refused:
        raise InputError(found.refusal(use))
    return found


class PassHits:
    """Which of ``candidate``'s distinct posts and (user, post) pairs the private rows of one pass hit (the
    Spark engine's first pass over a partition): ``add`` each batch as read, then ``packed``, one bitmap (a bit
    per post, then per pair). ``found_in_pass`` ORs the passes' bitmaps into the ``Overlap``."""

    def __init__(self, candidate: Fingerprint) -> None:
        self.candidate = candidate
        self.bits = np.zeros(_n_bits(candidate), np.bool_)

    def add(self, users: pa.Array | None, texts: pa.Array, skip: np.ndarray | None = None) -> None:
        post_at, pair_at = row_hits(self.candidate, users, texts, skip)
        self.bits[post_at[post_at >= 0]] = True
        self.bits[self.candidate.n_posts + pair_at[pair_at >= 0]] = True

    def packed(self) -> bytes:
        return np.packbits(self.bits).tobytes()


def _n_bits(candidate: Fingerprint) -> int:
    return candidate.n_posts + (0 if candidate.pairs is None else int(candidate.pairs.shape[0]))


def found_in_pass(candidate: Fingerprint, packed: Iterable[bytes], private_has_users: bool) -> Overlap:
    """The ``Overlap`` of ``candidate`` from the bitmaps of the passes that read the private rows elsewhere
    (``PassHits.packed``): the same figure as ``compare`` with the private file's fingerprint (pairs compared
    only when both files have users)."""
    n = _n_bits(candidate)
    bits = np.zeros(n, np.bool_)
    for b in packed:
        bits |= np.unpackbits(np.frombuffer(b, np.uint8), count=n).astype(np.bool_)
    shared_posts = int(bits[: candidate.n_posts].sum())
    shared_pairs = int(bits[candidate.n_posts :].sum()) if private_has_users else 0
    pairs = None if candidate.pairs is None else int(candidate.pairs.shape[0])
    return Overlap(candidate.n_posts, shared_posts, pairs, shared_pairs)


def row_hits(
    candidate: Fingerprint, users: pa.Array | None, texts: pa.Array, skip: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For each private row (users after the user pattern; None: no user column): the position of its normalised
    post among ``candidate``'s distinct posts and of its (user, post) pair among the candidate's pairs, -1 where
    it is not there (or the row is empty, or ``skip``: a row the reader drops). Users and pairs are hashed only
    for the rows whose post is the candidate's (every pair of the candidate holds one of its posts)."""
    key = candidate.key
    post_h, ok = hash_normalised(texts, key)
    if skip is not None:
        ok &= ~skip
    post_at = _positions(candidate.posts, post_h, ok)
    pair_at = np.full(len(texts), -1, np.int32)
    hit = np.flatnonzero(post_at >= 0)
    if users is None or hit.size == 0:
        return post_at, pair_at
    user_h, user_ok = hash_normalised(users.take(pa.array(hit)), key)
    post_at[hit[~user_ok]] = -1  # as ``Fingerprinter.add``: a row without a user counts nowhere
    if candidate.pairs is not None:
        pair_h = _pair_hashes(user_h, post_h[hit], np.uint64(key[0]), np.uint64(key[1]))
        pair_at[hit] = _positions(candidate.pairs, pair_h, user_ok)
    return post_at, pair_at


def _positions(sorted_distinct: np.ndarray, values: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """int32 position of each value in ``sorted_distinct``; -1 where it is absent or not ``ok``."""
    if sorted_distinct.shape[0] == 0:
        return np.full(values.shape[0], -1, np.int32)
    at = np.minimum(np.searchsorted(sorted_distinct, values), sorted_distinct.shape[0] - 1)
    return np.where(ok & (sorted_distinct[at] == values), at, -1).astype(np.int32)


# ---- reading a file into its fingerprint ---------------------------------------------------------------
def fingerprint(
    source: Any,
    key: Key,
    *,
    format: str = "auto",
    user_col: str | int | None = None,
    text_col: str | int | None = None,
    has_header: bool | None = None,
    row_is_user: bool = False,
    user_pattern: str | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> Fingerprint:
    """The fingerprint of a file (a path, bytes, a ``RawFile``; or a directory: every part file in it, as the
    Spark engine reads a folder) read with these reading choices (those of ``LoadOptions``)."""
    parts = _parts(source)
    acc = Fingerprinter(key)
    for part in parts:
        table = read_table(
            part,
            format=format,
            user_col=user_col,
            text_col=text_col,
            has_header=has_header,
            row_is_user=row_is_user,
            limits=limits,
            stream=True,
        )
        for users, texts in table.batches():
            if user_pattern and users is not None:
                users, _ = apply_user_pattern(users, user_pattern)
            acc.add(users, texts)
        table.stream = table.texts = table.users = None
    return acc.finish()


def fingerprint_options(source: Any, key: Key, options: Any, limits: ReadLimits = DEFAULT_LIMITS) -> Fingerprint:
    """``fingerprint`` with the reading choices of a ``LoadOptions``."""
    return fingerprint(
        source,
        key,
        format=options.format,
        user_col=options.user_col,
        text_col=options.text_col,
        has_header=options.has_header,
        row_is_user=options.row_is_user,
        user_pattern=options.user_pattern,
        limits=limits,
    )


def _parts(source: Any) -> list[Any]:
    """A directory's data files (as Spark reads a folder: hidden and ``_`` files such as _SUCCESS left out),
    in name order; any other source as itself."""
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        parts = sorted(
            p
            for p in Path(source).rglob("*")
            if p.is_file() and not any(s.startswith((".", "_")) for s in p.relative_to(source).parts)
        )
        if not parts:
            raise InputError(f"the folder {Path(source).name!r} holds no data files; give a folder of part files")
        return list(parts)
    return [source]


class Fingerprinter:
    """A fingerprint built batch by batch: ``add`` each (users, texts) batch as read (users after the user
    pattern; None: each row its own user), then ``finish``. ``load_corpus(on_batch=...)`` feeds one while it
    loads, so a loaded file needs no second read."""

    def __init__(self, key: Key) -> None:
        self.key = key
        self.posts: list[np.ndarray] = []
        self.pairs: list[np.ndarray] = []
        self.has_users = True
        self.rows = 0

    def add(self, users: pa.Array | None, texts: pa.Array) -> None:
        """Hash one batch."""
        post_h, post_ok = hash_normalised(texts, self.key)
        if users is None:
            self.has_users = False
            self.posts.append(post_h[post_ok])
            self.rows += int(post_ok.sum())
            return
        user_h, user_ok = hash_normalised(users, self.key)
        ok = post_ok & user_ok
        self.posts.append(post_h[ok])
        self.pairs.append(_pair_hashes(user_h[ok], post_h[ok], np.uint64(self.key[0]), np.uint64(self.key[1])))
        self.rows += int(ok.sum())

    def finish(self) -> Fingerprint:
        posts = _distinct(self.posts)
        pairs = _distinct(self.pairs) if self.has_users else None
        self.posts, self.pairs = [], []
        return Fingerprint(posts, pairs, self.rows, self.key)


def _distinct(parts: list[np.ndarray]) -> np.ndarray:
    """The sorted distinct values of these arrays (a sort and a mask: np.unique is many times slower here)."""
    if not parts:
        return np.zeros(0, np.uint64)
    v = np.concatenate(parts)
    v.sort()
    if v.shape[0] < 2:
        return v
    keep = np.empty(v.shape[0], np.bool_)
    keep[0] = True
    np.not_equal(v[1:], v[:-1], out=keep[1:])
    return v[keep]


# ---- normalising and hashing -----------------------------------------------------------------------------
_SPACE = r"[\s\v\p{Z}\x{85}\x{feff}\x{200b}]+"  # RE2: \s is ASCII only; \p{Z} the Unicode separators


def normalise_unicode(texts: pa.Array) -> pa.Array:
    """NFC, lower case (with casefold's ß -> ss, ς -> σ), Unicode white space as single spaces (the kernel trims
    and collapses the ASCII spaces left): the Arrow half of the normalisation, for rows that are not ASCII."""
    t = pc.utf8_normalize(texts, "NFC")
    t = pc.utf8_lower(t)
    t = pc.replace_substring(t, "ß", "ss")
    t = pc.replace_substring(t, "ς", "σ")
    return pc.replace_substring_regex(t, _SPACE, " ")


def hash_normalised(values: pa.Array, key: Key) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 keyed hash of each value after normalisation, whether it is non-empty and not null)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    out = np.zeros(n, np.uint64)
    ok = np.zeros(n, np.bool_)
    if n == 0:
        return out, ok
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    data, offsets = string_buffers(values)
    wide = np.zeros(n, np.bool_)
    words, starts, lengths = _normalise_ascii(data, offsets, wide)
    _sip_words(words, starts, lengths, k0, k1, out)
    ok[:] = lengths > 0
    rows = np.flatnonzero(wide)
    if rows.size:  # rows with non-ASCII characters: Arrow's NFC and lower case first, then the same kernels
        d2, o2 = string_buffers(normalise_unicode(values.take(pa.array(rows))))
        w2, s2, l2 = _normalise_ascii(d2, o2, np.zeros(rows.size, np.bool_))
        h2 = np.zeros(rows.size, np.uint64)
        _sip_words(w2, s2, l2, k0, k1, h2)
        out[rows], ok[rows] = h2, l2 > 0
    if values.null_count:
        ok &= values.is_valid().to_numpy(zero_copy_only=False)
    return out, ok


def siphash(data: bytes, key: Key) -> int:
    """SipHash-2-4 of ``data`` as given (no normalisation): the kernels' primitive, for tests against the
    paper's test vector."""
    n = len(data)
    words = np.zeros(n // 8 + 1, np.uint64)
    words.view(np.uint8)[:n] = np.frombuffer(data, np.uint8) if n else np.zeros(0, np.uint8)
    out = np.zeros(1, np.uint64)
    _sip_words(words, np.zeros(1, np.int64), np.array([n], np.int64), np.uint64(key[0]), np.uint64(key[1]), out)
    return int(out[0])


_NORMAL = np.arange(256, dtype=np.uint8)  # ASCII white space -> space, upper case -> lower case, the rest as is
_NORMAL[65:91] += 32
_NORMAL[9:14] = 32


@numba.njit(cache=True, nogil=True)
def _normalise_ascii(data, offsets, wide):  # pragma: no cover - compiled
    """Each row with ASCII white space runs as one space, trimmed, ASCII letters lower-cased (bytes below 0x80
    are never part of a multi-byte UTF-8 character, so this is safe on any UTF-8), written from an 8-byte aligned
    start and zero-padded: (the rows as little-endian uint64 words, each row's first word, its length in bytes).
    ``wide``: the row has a byte >= 0x80 (Unicode normalisation needed first). Branch-free per byte: every byte is
    written, and the write position moves on unless it is a space after a space (or at the start)."""
    n = offsets.shape[0] - 1
    buf = np.zeros(offsets[n] - offsets[0] + 8 * n + 16, np.uint8)  # every row's bytes, padding and a spare word
    starts = np.empty(n, np.int64)
    lengths = np.empty(n, np.int64)
    table = _NORMAL
    w = 0
    for j in range(n):
        starts[j] = w >> 3
        begin = w
        prev = 32  # as if a space came before: leading white space is dropped
        high = 0
        for i in range(offsets[j], offsets[j + 1]):
            b = data[i]
            c = table[b]
            buf[w] = c
            w += (c != 32) | (prev != 32)
            prev = c
            high |= b
        if w > begin and buf[w - 1] == 32:  # one trailing space left: trimmed
            w -= 1
        end = (w + 8) & ~7  # the next row starts on a fresh word (at least one zero word-tail after this row)
        for k in range(w, end + 1):
            buf[k] = 0  # the bytes written past the row's end (skipped spaces)
        wide[j] = high >= 0x80
        lengths[j] = w - begin
        w = end
    return buf[: w + 8].view(np.uint64), starts, lengths


@numba.njit(cache=True, inline="always")
def _compress(v0, v1, v2, v3, m):  # pragma: no cover - compiled
    v3 ^= m
    v0, v1, v2, v3 = sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= m
    return v0, v1, v2, v3


@numba.njit(cache=True, inline="always")
def _finish(v0, v1, v2, v3, m, length):  # pragma: no cover - compiled
    b = ((np.uint64(length) & np.uint64(0xFF)) << np.uint64(56)) | m
    v0, v1, v2, v3 = _compress(v0, v1, v2, v3, b)
    v2 ^= np.uint64(0xFF)
    v0, v1, v2, v3 = sip_rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


@numba.njit(cache=True, nogil=True)
def _sip_words(words, starts, lengths, k0, k1, out):  # pragma: no cover - compiled
    """SipHash-2-4 of each row: ``lengths[j]`` bytes from word ``starts[j]``, zero-padded to whole words (the
    last block is the tail's word with the length in its top byte, as the algorithm specifies)."""
    c0 = k0 ^ np.uint64(0x736F6D6570736575)
    c1 = k1 ^ np.uint64(0x646F72616E646F6D)
    c2 = k0 ^ np.uint64(0x6C7967656E657261)
    c3 = k1 ^ np.uint64(0x7465646279746573)
    for j in range(starts.shape[0]):
        v0, v1, v2, v3 = c0, c1, c2, c3
        s = starts[j]
        full = lengths[j] // 8
        for w in range(full):
            v0, v1, v2, v3 = _compress(v0, v1, v2, v3, words[s + w])
        tail = words[s + full] if lengths[j] % 8 else np.uint64(0)
        out[j] = _finish(v0, v1, v2, v3, tail, lengths[j])


@numba.njit(cache=True, nogil=True)
def _pair_hashes(user_h, post_h, k0, k1):  # pragma: no cover - compiled
    """SipHash-2-4 of the 16 bytes (user hash, post hash) of each row: the (user, post) pair's hash."""
    out = np.empty(user_h.shape[0], np.uint64)
    c0 = k0 ^ np.uint64(0x736F6D6570736575)
    c1 = k1 ^ np.uint64(0x646F72616E646F6D)
    c2 = k0 ^ np.uint64(0x6C7967656E657261)
    c3 = k1 ^ np.uint64(0x7465646279746573)
    for j in range(user_h.shape[0]):
        v0, v1, v2, v3 = _compress(c0, c1, c2, c3, user_h[j])
        v0, v1, v2, v3 = _compress(v0, v1, v2, v3, post_h[j])
        out[j] = _finish(v0, v1, v2, v3, np.uint64(0), 16)
    return out


@numba.njit(cache=True, nogil=True)
def _count_common(a, b):  # pragma: no cover - compiled
    """How many values two sorted arrays of distinct values share (one merge pass)."""
    i = j = n = 0
    while i < a.shape[0] and j < b.shape[0]:
        if a[i] == b[j]:
            n += 1
            i += 1
            j += 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return n
