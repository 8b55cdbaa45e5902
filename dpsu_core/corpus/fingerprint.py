"""Corpora known by what the release sees, not by their bytes: a keyed sketch of each user's token set.

A file given as public data (GW-KT's public corpus, the app's exploration corpus) or a file uploaded again must
be recognised as the private corpus when it holds the same people's text, however the bytes were changed. The
mechanisms see each user's distinct tokens after dpsu's own reading, cleaning and tokenizing (the built
``Corpus``), so edits the tokenizer ignores (markup, punctuation, quotes, soft hyphens and zero-width spaces,
case, word order, posts cut or merged, rows shuffled, users renamed) leave that data unchanged; this module
compares corpora on it.

Per user (``fingerprint``, numba kernels over the CSR arrays):
  * the user's unigram items (``Corpus.ngram_len == 1``: n-grams depend on word order and on ``max_n``), each
    item's string hashed once per distinct item with the keyed SipHash-2-4 of ``overlap.hash_normalised``
    (NFC, lower case, white space collapsed), under a key derived from the caller's secret;
  * a MinHash signature of that set: ``BANDS`` x ``ROWS`` minima (32 bits each) of independent mixes of the
    token hashes (two minima per 64-bit mix), and one 64-bit *band key* per band (its ``ROWS`` minima hashed
    with the band's number). (One-permutation hashing, one mix per token, was tried: two to three times
    faster, but a user with a few tokens fills few of the 32 bins, so its bands copy each other and two
    people with similar short sets share band keys more often; a corpus's own users then collide.)
    Two users share a band key with probability J^ROWS (J: the Jaccard similarity of their token sets), so an
    edited copy of a user (J near 1) shares most keys. Two different people who both use common words (J of
    0.2-0.5) share one now and then, and over a million users some pair does; so a shared band key is only a
    candidate, and the two users are the same person's data when at least ``SIMILAR`` of their
    BANDS x ROWS minima agree (each agrees with probability J: an estimate of J from 32 draws). A user with
    fewer than ``MIN_TOKENS`` distinct tokens does not count (a set of three common words is not a person).
The fingerprint keeps a bottom-k sample of all the corpus's band keys (the ``KEYS`` smallest: the keys are
pseudo-random, so these are a uniform sample of (user, band) pairs, and the same key is sampled in both corpora
alike), each with the low 8 bits of its user's BANDS x ROWS minima; plus a bottom-k sample of its distinct token
hashes. Its size is fixed (about 700 kB) whatever the number of users.

Matching (``match``): below the smaller of the two samples' thresholds each sample is complete, so a sampled key
of A is in B's sample exactly when it is among B's keys. For a (user, band) pair of A drawn this way, found in
B at user v and similar to v (above), m = the number of bands where the user's and v's keys agree; the share of A's users with at least
one key in B is BANDS x the mean over sampled pairs of [found] / m (each found user is counted once in
expectation, through any of its m shared bands). The same computation with A and B exchanged gives the other
share, so the shares are symmetric: ``match(a, b).known_found == match(b, a).candidate_found``.

The decision: the candidate IS the known corpus when at least ``SAME_KNOWN`` of the known corpus's users or
``SAME_CANDIDATE`` of the candidate's users are found in the other (a copy padded with other people's posts
still holds the known corpus's users; a sample of it still consists of them); ``WARN_SHARE`` or more either way
is said with the figure; less is nothing (different people of the same language and kind).

``users_hash``: a salted hash of a corpus's distinct user ids, for the store to keep beside the fingerprint (raw
ids are never kept): the loader keeps only an unkeyed digest of the id set (``Corpus.users_digest``), and the
store keys it with its own secret (``salted_users_hash``) when the corpus is first charged or registered.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .intern import set_digest, string_buffers
from .model import Corpus
from .overlap import Fingerprint, Key, check_public, compare, hash_normalised

BANDS = 8  # band keys per user
ROWS = 4  # MinHash minima per band key (the chance two users share a band: J^ROWS)
MIN_TOKENS = 4  # a user with fewer distinct tokens does not count
SIMILAR = 0.8  # two users sharing a band key are the same person's data when this share of their minima agree
KEYS = 16384  # band keys sampled per corpus (bottom-k)
TOKENS = 4096  # distinct token hashes sampled per corpus (bottom-k)

SAME_KNOWN = 0.50  # the same corpus: at least this share of the known corpus's users found in the candidate
SAME_CANDIDATE = 0.20  # ... or at least this share of the candidate's users found in the known corpus
WARN_SHARE = 0.01  # below those, a share from this up is said (a copy of some of its users)

_MAGIC = b"DPSUFP\x00\x01"
_HEAD = struct.Struct("<8s8sHHHHqqqQQII")  # magic, key id, bands, rows, min tokens, 0, users, counted, tokens,
# key threshold, token threshold, sampled keys, sampled tokens
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def _sip_key(secret: bytes) -> Key:
    """The SipHash key of the token hashes, derived from the caller's secret (the store's, or a session's)."""
    d = hashlib.blake2b(secret, digest_size=16, person=b"dpsu-fp-tokens").digest()
    k = np.frombuffer(d, dtype="<u8")
    return int(k[0]), int(k[1])


def _key_id(secret: bytes) -> bytes:
    """8 bytes that tell whether two fingerprints were made under the same secret (and nothing of it)."""
    return hashlib.blake2b(secret, digest_size=8, person=b"dpsu-fp-keyid").digest()


def secret_of(key: Key) -> bytes:
    """A session's SipHash key (``overlap.new_key``) as the secret ``fingerprint`` takes."""
    return np.array(key, dtype="<u8").tobytes()


@dataclass(frozen=True, eq=False)
class CorpusFingerprint:
    """A corpus's users' token sets under one secret, as bottom-k samples (see the module docstring). Compare
    with ``match``; store with ``to_bytes`` / ``from_bytes``."""

    key_id: bytes = field(repr=False)
    users: int  # users with at least MIN_TOKENS distinct tokens (the ones that count)
    all_users: int  # every user of the corpus
    tokens: int  # distinct tokens (unigram items after hashing)
    key_tau: int  # the sampled keys are all the corpus's band keys <= this
    keys: np.ndarray = field(repr=False)  # uint64, sorted, distinct
    sigs: np.ndarray = field(repr=False)  # uint8 (len(keys), BANDS * ROWS): each key's user's minima, low 8 bits
    token_tau: int
    token_keys: np.ndarray = field(repr=False)  # uint64, sorted, distinct
    bands: int = BANDS
    rows: int = ROWS
    min_tokens: int = MIN_TOKENS

    def to_bytes(self) -> bytes:
        head = _HEAD.pack(
            _MAGIC,
            self.key_id,
            self.bands,
            self.rows,
            self.min_tokens,
            0,
            self.users,
            self.all_users,
            self.tokens,
            self.key_tau,
            self.token_tau,
            self.keys.shape[0],
            self.token_keys.shape[0],
        )
        return b"".join(
            [
                head,
                self.keys.astype("<u8").tobytes(),
                self.sigs.astype(np.uint8).tobytes(),
                self.token_keys.astype("<u8").tobytes(),
            ]
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> CorpusFingerprint:
        if len(data) < _HEAD.size or data[:8] != _MAGIC:
            raise InputError("not a dpsu corpus fingerprint (wrong header): it was not made by this version")
        magic, kid, bands, rows, min_tok, _, users, all_users, tokens, ktau, ttau, nk, nt = _HEAD.unpack_from(data)
        want = _HEAD.size + nk * 8 + nk * bands * rows + nt * 8
        if len(data) != want:
            raise InputError(f"a corpus fingerprint of {len(data):,} bytes, expected {want:,}: it is truncated")
        at = _HEAD.size
        keys = np.frombuffer(data, "<u8", nk, at).astype(np.uint64)
        at += nk * 8
        sigs = np.frombuffer(data, np.uint8, nk * bands * rows, at).copy().reshape(nk, bands * rows)
        at += nk * bands * rows
        token_keys = np.frombuffer(data, "<u8", nt, at).astype(np.uint64)
        return cls(kid, users, all_users, tokens, ktau, keys, sigs, ttau, token_keys, bands, rows, min_tok)


# ---- building -------------------------------------------------------------------------------------------
def fingerprint(corpus: Corpus, key: bytes) -> CorpusFingerprint:
    """The fingerprint of a built corpus under the secret ``key`` (bytes: the store's secret; a session key
    through ``secret_of``). One pass over the CSR arrays in a compiled kernel; each distinct item hashed once."""
    uni = np.flatnonzero(corpus.ngram_len == 1)
    is_tok = np.zeros(corpus.n_items, np.bool_)
    item_hash = np.zeros(corpus.n_items, np.uint64)
    if uni.size:
        h, ok = hash_normalised(pa.array(corpus.vocab[uni], pa.large_string()), _sip_key(key))
        item_hash[uni] = h
        is_tok[uni] = ok
    users, keys, sigs, tau = _sample_band_keys(corpus.indptr, corpus.items, item_hash, is_tok, MIN_TOKENS, KEYS)
    tok = np.unique(_token_keys(item_hash[is_tok]))
    token_tau = int(tok[TOKENS - 1]) if tok.shape[0] >= TOKENS else int(_ALL)
    return CorpusFingerprint(
        key_id=_key_id(key),
        users=int(users),
        all_users=corpus.n_users,
        tokens=int(tok.shape[0]),
        key_tau=int(tau),
        keys=keys,
        sigs=sigs,
        token_tau=token_tau,
        token_keys=tok[:TOKENS],
    )


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True, inline="always")
def _mix(z):  # pragma: no cover - compiled
    """splitmix64's finaliser: a bijection of uint64 that spreads every input bit over the output."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def _token_keys(h):  # pragma: no cover - compiled
    """The tokens' sampling coordinates (their keyed hashes mixed once more: independent of the MinHash)."""
    out = np.empty(h.shape[0], np.uint64)
    for i in range(h.shape[0]):
        out[i] = _mix(h[i] ^ np.uint64(0x5851F42D4C957F2D))
    return out


@numba.njit(cache=True, nogil=True)
def _user_band_keys(indptr, items, item_hash, is_tok, u, mins, out):  # pragma: no cover - compiled
    """User ``u``'s band keys into ``out`` (BANDS,); returns its number of token entries. ``mins``: scratch of
    2 * (BANDS * ROWS // 2) uint64 minima."""
    n_min = mins.shape[0]
    for j in range(n_min):
        mins[j] = _LOW
    count = 0
    for e in range(indptr[u], indptr[u + 1]):
        it = items[e]
        if not is_tok[it]:
            continue
        count += 1
        h = item_hash[it]
        for j in range(n_min // 2):
            m = _mix(h + np.uint64(j + 1) * _GOLDEN)
            lo = m & _LOW
            hi = m >> np.uint64(32)
            if lo < mins[2 * j]:
                mins[2 * j] = lo
            if hi < mins[2 * j + 1]:
                mins[2 * j + 1] = hi
    rows = n_min // out.shape[0]
    for b in range(out.shape[0]):
        k = _mix(np.uint64(b + 1) * _GOLDEN)
        for r in range(0, rows, 2):
            k = _mix(k ^ (mins[b * rows + r] | (mins[b * rows + r + 1] << np.uint64(32))))
        out[b] = k
    return count


@numba.njit(cache=True, nogil=True)
def _compact(buf_k, buf_s, fill, k):  # pragma: no cover - compiled
    """Sort the buffer's first ``fill`` keys, drop repeats, keep the ``k`` smallest at its start: (kept, tau)."""
    order = np.argsort(buf_k[:fill])
    keys = buf_k[:fill][order]
    sigs = buf_s[:fill][order]
    n = 0
    for i in range(fill):
        if n > 0 and keys[i] == buf_k[n - 1]:
            continue
        buf_k[n] = keys[i]
        buf_s[n] = sigs[i]
        n += 1
        if n == k:
            break
    tau = buf_k[k - 1] if n == k else _ALL
    return n, tau


@numba.njit(cache=True, nogil=True)
def _sample_band_keys(indptr, items, item_hash, is_tok, min_tokens, k):  # pragma: no cover - compiled
    """One pass over the users: (users counted, the bottom-``k`` distinct band keys, their users' 16-bit key
    tails, the threshold: every band key <= it is in the sample)."""
    n_users = indptr.shape[0] - 1
    cap = 4 * k
    buf_k = np.empty(cap, np.uint64)
    buf_s = np.empty((cap, BANDS * ROWS), np.uint8)
    mins = np.empty(BANDS * ROWS, np.uint64)
    band = np.empty(BANDS, np.uint64)
    tau = _ALL
    fill = 0
    counted = 0
    for u in range(n_users):
        if indptr[u + 1] - indptr[u] < min_tokens:
            continue
        if _user_band_keys(indptr, items, item_hash, is_tok, u, mins, band) < min_tokens:
            continue
        counted += 1
        for b in range(BANDS):
            if band[b] > tau:
                continue
            if fill == cap:
                fill, tau = _compact(buf_k, buf_s, fill, k)
                if band[b] > tau:
                    continue
            buf_k[fill] = band[b]
            for j in range(BANDS * ROWS):
                buf_s[fill, j] = np.uint8(mins[j] & np.uint64(0xFF))
            fill += 1
    fill, tau = _compact(buf_k, buf_s, fill, k)
    return counted, buf_k[:fill].copy(), buf_s[:fill].copy(), tau


# ---- matching ---------------------------------------------------------------------------------------------
def _found_share(a: CorpusFingerprint, b: CorpusFingerprint) -> float:
    """The estimated share of ``a``'s users found in ``b`` (see the module docstring)."""
    tau = np.uint64(min(a.key_tau, b.key_tau))
    sel = a.keys <= tau
    if not sel.any() or b.keys.shape[0] == 0:
        return 0.0
    keys, sigs = a.keys[sel], a.sigs[sel]
    at = np.minimum(np.searchsorted(b.keys, keys), b.keys.shape[0] - 1)
    hit = b.keys[at] == keys
    agree = sigs[hit] == b.sigs[at[hit]]  # (hits, BANDS * ROWS): which minima the two users share
    similar = agree.sum(axis=1) >= SIMILAR * agree.shape[1]
    bands = agree.reshape(agree.shape[0], a.bands, a.rows).all(axis=2).sum(axis=1)  # >= 1: the key's own band
    return float(min(1.0, a.bands * float(np.sum(similar / np.maximum(bands, 1))) / keys.shape[0]))


def _token_share(a: CorpusFingerprint, b: CorpusFingerprint) -> float:
    """The estimated share of ``a``'s distinct tokens that are ``b``'s too."""
    tau = np.uint64(min(a.token_tau, b.token_tau))
    mine = a.token_keys[a.token_keys <= tau]
    if mine.shape[0] == 0:
        return 0.0
    return float(np.isin(mine, b.token_keys, assume_unique=True).sum() / mine.shape[0])


def _pct(share: float) -> str:
    pct = 100 * share
    return f"{pct:.0f}%" if pct >= 10 or pct == 0 else f"{pct:.1f}%"


@dataclass(frozen=True)
class Match:
    """How much of a known corpus a candidate corpus holds, by their users' token sets (estimates from the two
    fingerprints' samples: within a few points)."""

    known_users: int  # users of the known corpus that count (at least MIN_TOKENS distinct tokens)
    candidate_users: int
    known_found: float  # share of the known corpus's users found in the candidate
    candidate_found: float  # share of the candidate's users found in the known corpus
    known_tokens: float  # share of the known corpus's distinct tokens in the candidate (common words included)
    candidate_tokens: float

    @property
    def same(self) -> bool:
        """The candidate is the known corpus (or a copy, sample or re-formatting of it)."""
        return self.known_found >= SAME_KNOWN or self.candidate_found >= SAME_CANDIDATE

    refused = same  # as a public or exploration corpus

    @property
    def partial(self) -> bool:
        """Not the same corpus, but holding some of its users: said with the figure."""
        return not self.same and max(self.known_found, self.candidate_found) >= WARN_SHARE

    def figures(self) -> str:
        """'98% of its users' words are in this file; they are 40% of this file's users'."""
        return (
            f"{_pct(self.known_found)} of its users' words are in this file (they make "
            f"{_pct(self.candidate_found)} of this file's users)"
        )

    def says(self, name: str) -> str:
        """ "this is corpus 'support-tickets' (98% of its users' words)"."""
        return f"this is corpus {name!r} ({_pct(max(self.known_found, self.candidate_found))} of its users' words)"

    def refusal(self, use: str, known: str = "the private corpus") -> str:
        """The one-line refusal of a candidate that is the known corpus (``use``: "GW-KT's public corpus", ...)."""
        return (
            f"this file is {known}, by its users' words after tokenizing: {self.figures()} (refused from "
            f"{_pct(SAME_KNOWN)} of its users or {_pct(SAME_CANDIDATE)} of the file's); {use} must be PUBLIC data, "
            "never the private file nor a copy, sample or re-formatting of it: give a public file"
        )

    def warning(self, use: str, known: str = "the private corpus") -> str:
        """The warning of an accepted candidate that holds some of the known corpus's users."""
        return (
            f"some of {known}'s users are in this file, by their words after tokenizing: {self.figures()}; below "
            f"the refusal limits ({_pct(SAME_KNOWN)} of its users, {_pct(SAME_CANDIDATE)} of the file's), so it "
            f"is used as {use}; check that it is public data"
        )


def match(candidate: CorpusFingerprint, known: CorpusFingerprint) -> Match:
    """How much of ``known`` the ``candidate`` holds (both made under the same secret)."""
    if candidate.key_id != known.key_id:
        raise ValueError("fingerprints made under different secrets cannot be compared")
    if (candidate.bands, candidate.rows, candidate.min_tokens) != (known.bands, known.rows, known.min_tokens):
        raise ValueError("fingerprints made with different settings cannot be compared")
    return Match(
        known_users=known.users,
        candidate_users=candidate.users,
        known_found=_found_share(known, candidate),
        candidate_found=_found_share(candidate, known),
        known_tokens=_token_share(known, candidate),
        candidate_tokens=_token_share(candidate, known),
    )


def check_known(candidate: CorpusFingerprint, known: CorpusFingerprint | None, use: str) -> Match | None:
    """``match``, raising an InputError with the one-line refusal when the candidate is the known (private)
    corpus. None: nothing to compare with (the bundled demo); else the match (``Match.partial``: warn)."""
    if known is None:
        return None
    found = match(candidate, known)
    if found.refused:
        raise InputError(found.refusal(use))
    return found


# ---- the public-data check: this rule, and the posts' hashes as a second one ------------------------------
@dataclass(frozen=True, eq=False)
class Content:
    """What the public-data checks compare of a loaded file: its users' token sets (``users``, this module's
    rule) and its posts' keyed hashes (``posts``: ``overlap``'s rule, made in the load's own read and kept as a
    second check: the same posts handed to other users change every user's set but not the posts)."""

    users: CorpusFingerprint
    posts: Fingerprint | None = None


def content(corpus: Corpus, posts: Fingerprint | None, key: Key) -> Content:
    """The ``Content`` of a loaded corpus (``posts``: its ``overlap.Fingerprinter``'s, under the same ``key``)."""
    return Content(fingerprint(corpus, secret_of(key)), posts)


def check_content(candidate: Content, known: Content | None, use: str) -> str:
    """Whether ``candidate`` (a file given as PUBLIC data for ``use``) may be used beside the private corpus
    ``known``: an InputError with the one-line refusal when either rule says it is the private data, else the
    warning of a smaller overlap ("": nothing to say; also when there is no private file, the bundled demo)."""
    if known is None:
        return ""
    users = match(candidate.users, known.users)
    if users.refused:
        raise InputError(users.refusal(use))
    posts = None
    if candidate.posts is not None and known.posts is not None:
        posts = check_public(candidate.posts, known.posts, use)
    notes = [users.warning(use)] if users.partial else []
    if posts is not None and posts.any:
        notes.append(posts.warning(use))
    return "; and ".join(notes)


def is_known(candidate: Content, known: Content) -> bool:
    """Whether ``check_content`` refuses ``candidate`` beside ``known`` (a public file that is the private one)."""
    if match(candidate.users, known.users).refused:
        return True
    return candidate.posts is not None and known.posts is not None and compare(candidate.posts, known.posts).refused


# ---- the user-id set --------------------------------------------------------------------------------------
def users_hash(user_ids: Iterable[str] | pa.Array | pa.ChunkedArray, salt: bytes) -> str:
    """A salted hash (BLAKE2b, hex) of the distinct user ids: the same set of ids in any order, with repeats, gives
    the same hash; the ids cannot be read back from it, nor tested without the salt. Equal to
    ``salted_users_hash(corpus.users_digest, salt)`` of a corpus loaded with these ids."""
    ids = user_ids if isinstance(user_ids, (pa.Array, pa.ChunkedArray)) else pa.array(list(user_ids), pa.string())
    ids = pc.unique(pc.cast(ids, pa.large_string()).drop_null())
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    data, offsets = string_buffers(ids)
    return salted_users_hash(set_digest(data, offsets), salt)


def salted_users_hash(digest: bytes, salt: bytes) -> str:
    """The store's salted hash of a user-id set from its unkeyed ``intern.set_digest`` (``Corpus.users_digest``,
    computed at load: the salt is the store's, unknown then): keyed BLAKE2b (hex); "" when there is no digest (a
    corpus without user ids: each row its own user, or built by hand)."""
    if not digest:
        return ""
    key = salt if len(salt) <= 64 else hashlib.blake2b(salt).digest()
    return hashlib.blake2b(digest, key=key, digest_size=32, person=b"dpsu-users").hexdigest()
