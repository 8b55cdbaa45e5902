"""The one data model of dpsu: a user x item CSR matrix plus its vocabulary.

Everything downstream of ingestion (mechanisms, metrics, charts, exports) works on
these integer arrays; strings come back only at the edges via ``Corpus.vocab``.

Row i of the CSR (``items[indptr[i]:indptr[i+1]]``) holds user i's *distinct* items
(words or n-grams, sorted by id) and ``counts`` how often each occurs in that
user's text. The user order here is the order of first appearance in the file; it
carries no privacy meaning: mechanisms shuffle users themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePath

import numpy as np

from ..errors import InputError, short_name
from .columns import ColumnFacts, SanityWarning


class CorpusRowError(InputError):
    """A hand-built Corpus breaks the CSR contract (a repeated item in a row, an id out of range, ...)."""


def _first_repeated_row(indptr: np.ndarray, items: np.ndarray, n_items: int) -> int:
    """Index of the first row holding an item twice, or -1 (numba kernel; for rows not in sorted order)."""
    from ._row_checks import first_repeated_row

    return int(first_repeated_row(indptr, items, n_items))


def validate_csr(indptr: np.ndarray, items: np.ndarray, counts: np.ndarray, n_items: int) -> None:
    """Check the CSR contract of ``Corpus``; raise ``CorpusRowError`` naming the first problem and the fix.

    Every row's items must be distinct: the weighted policies give each user weight 1/|W| or 1/sqrt(|W|)
    per item, so a repeated item would break the l1/l2 norm bound of 1 that the noise is calibrated for.
    """
    from ._row_checks import csr_summary  # one compiled pass for every check below

    n_users = indptr.shape[0] - 1
    if indptr.ndim != 1 or n_users < 0 or indptr[0] != 0 or indptr[-1] != items.shape[0]:
        raise CorpusRowError(
            f"Corpus.indptr must start at 0 and end at len(items) = {items.shape[0]}; build the corpus with "
            f"dpsu_core.corpus.build_corpus or corpus_from_token_lists"
        )
    if n_users and np.any(np.diff(indptr) < 0):
        raise CorpusRowError("Corpus.indptr must be non-decreasing (row i is items[indptr[i]:indptr[i+1]])")
    if counts.shape != items.shape:
        raise CorpusRowError(f"Corpus.counts must have one entry per item entry ({items.shape[0]}), got {counts.shape}")
    if items.shape[0] == 0:
        return
    if items.dtype.kind not in "iu" or counts.dtype.kind not in "iu":
        raise CorpusRowError(
            f"Corpus.items and Corpus.counts must be integer arrays, got {items.dtype} and {counts.dtype}"
        )
    lo, hi, c_lo, increasing = csr_summary(indptr, items, counts)
    if lo < 0 or hi >= n_items:
        raise CorpusRowError(f"Corpus.items must be vocabulary ids in [0, {n_items}); got values from {lo} to {hi}")
    if c_lo < 1:
        raise CorpusRowError("Corpus.counts must be >= 1 (how often the user used the item)")
    if increasing:  # every row strictly increasing: its items are distinct
        return
    row = _first_repeated_row(indptr, items, n_items)
    if row >= 0:
        raise CorpusRowError(
            f"user row {row} of the corpus holds the same item more than once; each row must list a user's "
            f"DISTINCT items (merge repeats and add their occurrence counts into Corpus.counts)"
        )


_BUILD_HINT = "build the corpus with load_corpus, build_corpus or corpus_from_token_lists"
# field -> (dtype kinds allowed, number of dimensions, what it holds)
_FIELDS: dict[str, tuple[str, int, str]] = {
    "indptr": ("iu", 1, "integer row offsets, one more than the users"),
    "items": ("iu", 1, "integer vocabulary ids"),
    "counts": ("iu", 1, "integer occurrence counts >= 1"),
    "vocab": ("OUT", 1, "the item strings"),
    "ngram_len": ("iu", 1, "each item's n-gram length"),
    "gram_tokens": ("iu", 2, "each item's unigram ids, -1 padded: shape (items, longest n)"),
}


def check_fields(corpus: Corpus) -> None:
    """The types and shapes of a ``Corpus``'s fields (O(1): no pass over the data; ``validate_csr`` checks the
    values): a hand-built corpus with a list, float ids or a mis-shaped array is a ``CorpusRowError`` naming the
    field, never an error from deep inside a compiled kernel."""
    for name, (kinds, ndim, holds) in _FIELDS.items():
        value = getattr(corpus, name)
        if not isinstance(value, np.ndarray):
            raise CorpusRowError(
                f"Corpus.{name} must be a numpy array ({holds}), got {type(value).__name__}; {_BUILD_HINT}"
            )
        if value.ndim != ndim:
            raise CorpusRowError(
                f"Corpus.{name} must have {ndim} dimension{'s' if ndim > 1 else ''} ({holds}), got shape "
                f"{value.shape}; {_BUILD_HINT}"
            )
        if value.dtype.kind not in kinds and not (name in ("items", "counts") and value.size == 0):
            raise CorpusRowError(f"Corpus.{name} must hold {holds}, got dtype {value.dtype}; {_BUILD_HINT}")
    n_items = corpus.vocab.shape[0]
    if corpus.ngram_len.shape[0] != n_items:
        raise CorpusRowError(
            f"Corpus.ngram_len must have one entry per vocabulary item ({n_items}), got {corpus.ngram_len.shape[0]}"
        )
    if corpus.gram_tokens.shape[0] != n_items or corpus.gram_tokens.shape[1] < 1:
        raise CorpusRowError(
            f"Corpus.gram_tokens must have shape ({n_items}, longest n) (one row per vocabulary item), got "
            f"{corpus.gram_tokens.shape}; {_BUILD_HINT}"
        )
    for name in ("n_posts", "n_tokens"):
        value = getattr(corpus, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise CorpusRowError(f"Corpus.{name} must be a whole number >= 0, got {value!r}")
    if not isinstance(corpus.source, SourceInfo):
        raise CorpusRowError(f"Corpus.source must be a SourceInfo, got {type(corpus.source).__name__}")


def check_release_call(corpus: object, rng: object = None) -> None:
    """The arguments of ``Mechanism.release`` at the public boundary: a ``Corpus`` (not a path, not a table) and
    ``rng`` a numpy ``Generator`` or None. A ``ParameterError`` naming the fix, never a kernel's traceback."""
    from ..errors import ParameterError

    # a Corpus, or an engine's rows standing in for one (they carry the same n_users and vocabulary)
    if not isinstance(corpus, Corpus) and not (hasattr(corpus, "n_users") and hasattr(corpus, "vocab")):
        if isinstance(corpus, (str, PurePath)):
            raise ParameterError(
                f"release takes a Corpus, got the path {short_name(corpus)}: load it first, release(load_corpus(path))"
            )
        raise ParameterError(
            f"release takes a Corpus (from load_corpus), got {type(corpus).__name__}; load the data first"
        )
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ParameterError(
            f"rng must be a numpy Generator (np.random.default_rng()), got {type(rng).__name__} {short_repr(rng)}; "
            "leave it out for noise seeded by the operating system, or give seed=... for a teaching release"
        )


def short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


@dataclass(frozen=True)
class SourceInfo:
    """What the reader did with the file (all of it is about the file, none of it private-safe data)."""

    name: str = ""
    format: str = ""
    encoding: str = "utf-8"
    encoding_fallback: bool = False
    user_column: str | None = None
    text_column: str | None = None
    columns_guessed: bool = False
    rows_read: int = 0
    rows_dropped_no_user: int = 0
    rows_dropped_no_text: int = 0
    rows_dropped_removed: int = 0
    tokenizer: str = "auto"
    char_ngrams: int = 2  # N of the character n-grams (char-ngrams, and auto's scripts without a segmenter)
    tokenization: str = ""  # how words were cut, as a method (no data in it): the release report's line
    # reading options (name, value) a redo must set to do what this load did whatever is installed where it runs
    # (``segment.Detection.pinned``: e.g. korean="eojeol" when Korean was kept as written for want of its segmenter)
    pinned: tuple[tuple[str, str], ...] = ()
    detected: tuple[str, ...] = ()  # scripts found and their share of tokens, segmenters run (raw data)
    notes: tuple[str, ...] = ()
    header: str | None = None  # how the header question was settled
    encoding_fallback_rows: int = 0  # rows that were not UTF-8 (decoded as cp1252)
    row_is_user: bool = False  # each row is its own user (no user column)
    user_pattern: str | None = None  # the user is the first group of this regex in the user column
    column_facts: tuple[ColumnFacts, ...] = ()  # the chosen columns, raw
    warnings: tuple[SanityWarning, ...] = ()  # likely mistakes in the choice of columns, with their fix

    @property
    def privacy_unit(self) -> str:
        """Who one "user" of the guarantee is, in words (recorded in the release report)."""
        if self.row_is_user:
            return "each row is its own user"
        if self.user_column is None:
            return "each line is its own user" if self.format in ("text", "sequences") else "each row is its own user"
        if self.user_pattern:
            return f"the user is the first group of the pattern {self.user_pattern!r} in column {self.user_column!r}"
        return f"the user is the value of column {self.user_column!r}"


@dataclass(frozen=True)
class CorpusStats:
    """Summary statistics. Computed from the raw data: NOT differentially private."""

    users: int
    posts: int
    tokens: int
    vocabulary: int
    vocabulary_by_length: dict[int, int]
    items_per_user_min: int
    items_per_user_p25: float
    items_per_user_median: float
    items_per_user_p75: float
    items_per_user_p95: float
    items_per_user_max: int
    items_per_user_mean: float
    users_per_item_median: float
    users_per_item_max: int
    items_used_by_one_user: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True, eq=False)
class Corpus:
    indptr: np.ndarray  # int64, shape (n_users + 1,)
    items: np.ndarray  # int32, shape (nnz,), sorted within each row
    counts: np.ndarray  # int32, shape (nnz,), >= 1
    vocab: np.ndarray  # object (str), shape (n_items,)
    ngram_len: np.ndarray  # int8, shape (n_items,)
    gram_tokens: np.ndarray  # int32, shape (n_items, max_n): unigram ids of each item, -1 padded
    n_posts: int = 0
    n_tokens: int = 0
    source: SourceInfo = field(default_factory=SourceInfo)
    # an unkeyed 32-byte digest of the file's distinct user ids (``intern.set_digest``, set by ``load_corpus``; b""
    # without user ids): the store keys it with its secret at the first charge (``fingerprint.salted_users_hash``).
    # Never exported, reported or compared; the ids themselves are not kept.
    users_digest: bytes = field(default=b"", repr=False, compare=False)

    def __post_init__(self) -> None:
        check_fields(self)
        validate_csr(self.indptr, self.items, self.counts, int(self.vocab.shape[0]))

    # ---- sizes ---------------------------------------------------------------
    @property
    def n_users(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_items(self) -> int:
        return int(self.vocab.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.items.shape[0])

    @property
    def max_n(self) -> int:
        return int(self.gram_tokens.shape[1]) if self.gram_tokens.ndim == 2 else 1

    @cached_property
    def row_lengths(self) -> np.ndarray:
        """Distinct items per user (int64)."""
        return np.diff(self.indptr)

    @cached_property
    def user_counts(self) -> np.ndarray:
        """Distinct users per item (int64). Raw-data diagnostic: NOT private."""
        return np.bincount(self.items, minlength=self.n_items).astype(np.int64)

    @cached_property
    def unigram_of_token(self) -> np.ndarray:
        """For every unigram id u (an item of length 1), ``gram_tokens[u, 0] == u``; ids of the length-1 items."""
        return np.flatnonzero(self.ngram_len == 1)

    # ---- views ---------------------------------------------------------------
    def item_strings(self, ids: np.ndarray) -> np.ndarray:
        return self.vocab[np.asarray(ids, dtype=np.int64)]

    def lengths_mask(self, lengths) -> np.ndarray:
        """Boolean mask over the vocabulary: items whose n-gram length is in ``lengths``."""
        return np.isin(self.ngram_len, np.asarray(list(lengths), dtype=self.ngram_len.dtype))

    def restrict_to(self, keep_items: np.ndarray) -> Corpus:
        """The same users and vocabulary, with each row filtered to items where ``keep_items`` is True.

        Item ids are unchanged, so results map back to ``vocab`` directly. Users left empty stay as empty rows.
        """
        keep_items = np.asarray(keep_items, dtype=bool)
        entry_keep = keep_items[self.items]
        # kept entries before each row boundary: the new row pointer directly (empty rows included)
        indptr = np.zeros(self.n_users + 1, dtype=np.int64)
        kept_before = np.concatenate([[0], np.cumsum(entry_keep, dtype=np.int64)])
        indptr[:] = kept_before[self.indptr]
        return self._with_entries(indptr, entry_keep)

    def without_user(self, row: int) -> Corpus:
        """The neighbouring corpus without user ``row`` (same vocabulary and metadata)."""
        entry_keep = np.ones(self.nnz, dtype=bool)
        entry_keep[self.indptr[row] : self.indptr[row + 1]] = False
        indptr = np.zeros(self.n_users, dtype=np.int64)
        np.cumsum(np.delete(np.diff(self.indptr), row), out=indptr[1:])
        return self._with_entries(indptr, entry_keep)

    def _with_entries(self, indptr: np.ndarray, entry_keep: np.ndarray) -> Corpus:
        """A corpus over the same vocabulary holding the entries where ``entry_keep`` is True, rows by ``indptr``."""
        return Corpus(
            indptr=indptr,
            items=self.items[entry_keep],
            counts=self.counts[entry_keep],
            vocab=self.vocab,
            ngram_len=self.ngram_len,
            gram_tokens=self.gram_tokens,
            n_posts=self.n_posts,
            n_tokens=self.n_tokens,
            source=self.source,
        )

    def stats(self) -> CorpusStats:
        """Corpus statistics. Computed from the raw data: NOT differentially private."""
        rl = self.row_lengths
        uc = self.user_counts
        by_len = {int(k): int(v) for k, v in zip(*np.unique(self.ngram_len, return_counts=True))}
        pct = np.percentile(rl, [25, 50, 75, 95]) if rl.size else np.zeros(4)
        return CorpusStats(
            users=self.n_users,
            posts=int(self.n_posts),
            tokens=int(self.n_tokens),
            vocabulary=self.n_items,
            vocabulary_by_length=by_len,
            items_per_user_min=int(rl.min()) if rl.size else 0,
            items_per_user_p25=float(pct[0]),
            items_per_user_median=float(pct[1]),
            items_per_user_p75=float(pct[2]),
            items_per_user_p95=float(pct[3]),
            items_per_user_max=int(rl.max()) if rl.size else 0,
            items_per_user_mean=float(rl.mean()) if rl.size else 0.0,
            users_per_item_median=float(np.median(uc)) if uc.size else 0.0,
            users_per_item_max=int(uc.max()) if uc.size else 0,
            items_used_by_one_user=int(np.count_nonzero(uc == 1)),
        )

    def __repr__(self) -> str:  # never print data
        return f"Corpus(users={self.n_users}, items={self.n_items}, nnz={self.nnz}, max_n={self.max_n})"
