"""Text preprocessing and tokenization, vectorised over whole columns of posts.

Everything here works on a pyarrow string array (one element per post): case
folding and URL removal with Arrow's compute kernels (C++), splitting with one
numba kernel over the UTF-8 bytes, and Arrow's hash for the vocabulary, so the
``fast`` tokenizer does no Python work per post or per token. The two halves of a
large column are processed in two threads (all three release the GIL). The result
is the flat form ``build_corpus`` takes: token codes, post offsets, unigram table.

Tokenizers:
  auto      (default) fast, after the runs of Chinese, Japanese and Thai text got spaces between their
            words; then Korean words are cut into morphemes, Khmer and Lao words by their segmenters and
            Burmese words into character n-grams (``segment``).
  char-ngrams  fast, then every word becomes its character n-grams (``segment``).
  fast      words are maximal runs of letters, digits and combining marks, with
            apostrophes kept only inside a word ("don't" stays whole,
            "'quoted'" becomes "quoted"); with ``strip_symbols`` off every
            other non-space character becomes a token of its own.
  treebank  nltk's TreebankWordTokenizer (the papers' choice; needs no data
            files), applied per sentence (split after . ! ? followed by space,
            since punkt's sentence splitter needs data files); with
            ``strip_symbols`` on its tokens then go through the same word rule
            as ``fast`` (so "n't" stays, "'s" becomes "s", punctuation goes).
  (internal) whitespace: tokens are the whitespace-separated chunks, untouched;
            used for pre-tokenized sequences.
"""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ParameterError
from .charclass import UNSPACED, ZWSP, char_classes, lower_table
from .intern import Interner, find, has_room, insert, key_of, string_buffers
from .scripts import decode_at
from .tokens import Tokenized

TOKENIZERS: tuple[str, ...] = ("auto", "fast", "treebank", "char-ngrams")  # auto, char-ngrams: segment.py
_ALL_TOKENIZERS = TOKENIZERS + ("whitespace",)

REMOVED_MARKERS: tuple[str, ...] = ("[removed]", "[deleted]")

# RE2 syntax (Arrow).
_URL = r"(?i)(?:\b[a-z][a-z0-9+.\-]*://|\bwww\.)\S+"
URL_PATTERN = _URL  # public: the exported tokenizer removes links with the same pattern (tokenizer_export)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

# Below this many bytes of text one thread does all the work.
_PARALLEL_MIN_BYTES = 2_000_000


_KOREAN_DEFAULT = ("korean", "morphemes")  # not named in ``describe``: the report's tokenization line says it


@dataclass(frozen=True)
class Preprocessing:
    """Text clean-up before tokenizing; the defaults follow the papers.

    lowercase      fold case (``str.lower`` rules of Unicode).
    strip_urls     remove http(s)://..., other scheme://... and www.... links.
    drop_removed   drop posts that are exactly "[removed]" or "[deleted]" (Reddit's placeholders).
    strip_symbols  keep only letters, digits and apostrophes inside words.
    """

    lowercase: bool = True
    strip_urls: bool = True
    drop_removed: bool = True
    strip_symbols: bool = True
    strip_html: bool = True  # tags removed, entities decoded (``clean.strip_html``)
    email_headers: bool = True  # drop the header block of posts that are RFC 822 messages
    drop_digits: bool = False  # drop tokens made only of digits
    stop_words: str | None = None  # drop the stop words of this language (``clean.stop_words``)
    korean: str = "morphemes"  # auto: Korean words cut into morphemes (kiwipiepy), or "eojeol": kept as written

    def describe(self) -> str:
        on = [k if v is True else f"{k} ({v})" for k, v in self.__dict__.items() if v and (k, v) != _KOREAN_DEFAULT]
        return ", ".join(on) if on else "none"


def check_tokenizer(tokenizer: str) -> str:
    if tokenizer not in TOKENIZERS:
        raise ParameterError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
    return tokenizer


def removed_mask(texts: pa.Array) -> np.ndarray:
    """True where a post is exactly a removal placeholder (surrounding whitespace ignored)."""
    trimmed = pc.utf8_trim_whitespace(texts)
    return pc.fill_null(pc.is_in(trimmed, value_set=pa.array(REMOVED_MARKERS)), False).to_numpy(zero_copy_only=False)


def blank_mask(values: pa.Array) -> np.ndarray:
    """True where a value is null or only whitespace."""
    empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0)
    return pc.fill_null(empty, True).to_numpy(zero_copy_only=False)


def blank_and_removed(values: pa.Array, *, removed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``blank_mask(values)`` and (with ``removed``) ``removed_mask(values)``, without copying the column:
    one compiled pass finds the few rows that could be either (only white space before a '[', a non-ASCII
    character, or the end) and the exact Arrow checks run on those rows alone."""
    data, offsets = string_buffers(values)
    maybe_blank = np.zeros(len(values), dtype=np.bool_)
    maybe_removed = np.zeros(len(values), dtype=np.bool_)
    _blank_or_removed_rows(data, offsets, maybe_blank, maybe_removed)
    if values.null_count:
        maybe_blank |= values.is_null().to_numpy(zero_copy_only=False)
    blank = _exact_on(values, maybe_blank, blank_mask)
    gone = _exact_on(values, maybe_removed, removed_mask) & ~blank if removed else np.zeros(len(values), np.bool_)
    return blank, gone


def _exact_on(values: pa.Array, rows: np.ndarray, check) -> np.ndarray:
    out = np.zeros(len(values), dtype=np.bool_)
    idx = np.flatnonzero(rows)
    if idx.size:
        out[idx] = check(values.take(pa.array(idx)))
    return out


@numba.njit(cache=True, nogil=True)
def _blank_or_removed_rows(data, offsets, maybe_blank, maybe_removed):  # pragma: no cover - compiled
    for j in range(offsets.shape[0] - 1):
        i, end = offsets[j], offsets[j + 1]
        while i < end and (data[i] == 32 or 9 <= data[i] <= 13):
            i += 1
        if i == end or data[i] >= 0x80:  # empty, or a character that may be Unicode white space
            maybe_blank[j] = True
            maybe_removed[j] = True
        elif data[i] == 91:  # '['
            maybe_removed[j] = True


def preprocess(texts: pa.Array, prep: Preprocessing) -> pa.Array:
    """Text clean-up before cutting tokens: e-mail headers, HTML, URLs, column-wise (row filtering is
    the caller's job). Each step runs only on the posts it can change (a header block needs a line break,
    HTML a '<' or '&', a link "://" or "www."), found for all three steps in one compiled pass over the
    bytes (``row_flags``), so the regular expressions do not read the whole text; the posts a step rewrote
    are scanned again before the next step. Case folding is not done here: the fast tokenizer folds
    case inside its kernel (``charclass.lower_table``), the treebank path with Arrow."""
    from . import clean

    steps = []
    if prep.email_headers:
        steps.append((_FLAG_LINE_BREAK, lambda t: clean.drop_email_headers(t)[0]))
    if prep.strip_html:
        steps.append((_FLAG_HTML, clean.strip_html))
    if prep.strip_urls:
        steps.append((_FLAG_URL, lambda t: pc.replace_substring_regex(t, pattern=_URL, replacement=" ")))
    if not steps:
        return texts
    flags = row_flags(texts)
    rewritten = np.zeros(0, dtype=np.int64)  # rows an earlier step rewrote: their flags are stale
    for flag, fn in steps:
        if rewritten.size:
            flags[:, rewritten] = row_flags(texts.take(pa.array(rewritten)))
        mask = flags[flag]
        if mask.any():
            texts = _on_rows(texts, mask, fn)
            rewritten = np.union1d(rewritten, np.flatnonzero(mask))
    return texts


_FLAG_LINE_BREAK, _FLAG_HTML, _FLAG_URL = 0, 1, 2


def row_flags(texts: pa.Array) -> np.ndarray:
    """bool (3, n): per post, whether it holds a line break, whether it holds '<' or '&', and whether it
    holds "://" or "www." (any case; a superset of the posts ``_URL`` matches): one compiled pass."""
    data, offsets = string_buffers(texts)
    flags = np.zeros((3, len(texts)), dtype=np.bool_)
    _row_flags(data, offsets, flags)
    return flags


@numba.njit(cache=True, nogil=True)
def _row_flags(data, offsets, flags):  # pragma: no cover - compiled
    kind = np.zeros(256, dtype=np.uint8)  # 1 line break, 2 '<' or '&', 3 ':', 4 'w' or 'W'
    kind[10] = 1
    kind[60] = 2
    kind[38] = 2
    kind[58] = 3
    kind[119] = 4
    kind[87] = 4
    for j in range(offsets.shape[0] - 1):
        end = offsets[j + 1]
        nl = html = url = False
        for i in range(offsets[j], end):
            k = kind[data[i]]
            if k == 0:
                continue
            if k == 1:
                nl = True
            elif k == 2:
                html = True
            elif not url and i + 2 < end:
                if k == 3:
                    url = data[i + 1] == 47 and data[i + 2] == 47  # "://"
                elif (data[i + 1] | 32) == 119 and (data[i + 2] | 32) == 119:  # "www."
                    url = i + 3 < end and data[i + 3] == 46
            if nl and html and url:
                break
        flags[0, j] = nl
        flags[1, j] = html
        flags[2, j] = url


def _on_rows(texts: pa.Array, mask: np.ndarray, fn) -> pa.Array:
    """``fn`` (a row-wise column function) applied only to the rows where ``mask`` is True."""
    if not mask.any():
        return texts
    sel = pa.array(mask)
    return pc.replace_with_mask(texts, sel, pc.cast(fn(texts.filter(sel)), texts.type))


def rows_with_bytes(texts: pa.Array, chars: bytes) -> np.ndarray:
    """True for every post holding at least one of the (ASCII) bytes ``chars``."""
    data, offsets = string_buffers(texts)
    wanted = np.zeros(256, dtype=np.bool_)
    wanted[np.frombuffer(chars, dtype=np.uint8)] = True
    mask = np.zeros(len(texts), dtype=np.bool_)
    _rows_with(data, offsets, wanted, mask)
    return mask


@numba.njit(cache=True, nogil=True)
def _rows_with(data, offsets, wanted, mask):  # pragma: no cover - compiled
    for j in range(offsets.shape[0] - 1):
        for i in range(offsets[j], offsets[j + 1]):
            if wanted[data[i]]:
                mask[j] = True
                break


def _may_hold_url(texts: pa.Array) -> np.ndarray:
    """True for every post holding "://" or "www." (any case): a superset of the posts ``_URL`` matches,
    found in one compiled pass over the bytes, so the regex (a few hundred MB/s) only runs on those."""
    data, offsets = string_buffers(texts)
    mask = np.zeros(len(texts), dtype=np.bool_)
    _url_rows(data, offsets, mask)
    return mask


@numba.njit(cache=True, nogil=True)
def _url_rows(data, offsets, mask):  # pragma: no cover - compiled
    for j in range(offsets.shape[0] - 1):
        for i in range(offsets[j], offsets[j + 1] - 2):
            b = data[i]
            if b == 58 and data[i + 1] == 47 and data[i + 2] == 47:  # "://"
                mask[j] = True
                break
            if (b | 32) == 119 and (data[i + 1] | 32) == 119 and (data[i + 2] | 32) == 119:  # "www"
                if i + 3 < offsets[j + 1] and data[i + 3] == 46:
                    mask[j] = True
                    break


def tokenize(
    texts: pa.Array,
    *,
    tokenizer: str = "auto",
    prep: Preprocessing = Preprocessing(),
    workers: int | None = None,
    char_ngrams: int = 2,
) -> Tokenized:
    """Preprocess and tokenize every post of ``texts`` (non-null strings); see ``TokenStream`` for many batches.

    ``tokenizer="whitespace"`` takes tokens as given and ignores ``prep``.
    Posts may end up with no tokens; they keep their (empty) slot in ``post_ptr``.
    """
    with TokenStream(tokenizer, prep, workers=workers, char_ngrams=char_ngrams) as stream:
        stream.submit(texts)
        return stream.finish()


class TokenStream:
    """Tokenizes posts batch by batch into one flat array of token ids.

    ``submit(texts)`` hands a batch to the worker threads and returns at once (so the caller can read
    the next batch meanwhile; it waits for the previous batch first); ``finish()`` returns the
    ``Tokenized`` of all batches in order. The text of a batch is not kept: only its int32 token
    ids (written straight from the kernel, no token strings in between) and per-post counts.

    Each worker interns its tokens in its own table (no locks); ``finish`` merges the tables and numbers the
    tokens in order of first sight in the posts (each part's new ids, part by part in read order), whatever
    the number of workers.
    Use as a context manager (the threads stop on exit).
    """

    def __init__(
        self,
        tokenizer: str = "auto",
        prep: Preprocessing = Preprocessing(),
        *,
        workers: int | None = None,
        char_ngrams: int = 2,
    ) -> None:
        if tokenizer not in _ALL_TOKENIZERS:
            check_tokenizer(tokenizer)
        self.tokenizer, self.prep, self.char_ngrams = tokenizer, prep, char_ngrams
        self.segmented = tokenizer in ("auto", "char-ngrams")  # the fast kernel plus segment.py
        self.detection = _segment().Detection() if self.segmented else None
        if self.segmented:  # a segmenter installed since the last load (the app still running) is used now
            _segment().segmenters.look_again()
        self._processes: Executor | None = None  # segment.py's worker processes, made on first need
        self._processes_lock = threading.Lock()
        self._n_workers = max(1, workers if workers is not None else min(2, os.cpu_count() or 1))
        self._lower = _NO_LOWER
        self._arrow_lower = False
        if (tokenizer == "fast" or self.segmented) and prep.lowercase:
            try:
                self._lower = lower_table()
            except RuntimeError:  # pragma: no cover - an Arrow whose lower case is not one code point to one
                self._arrow_lower = True
        self._vocabs = [Interner(1 << 14) for _ in range(self._n_workers)]
        self._codes: list[tuple[int, np.ndarray]] = []  # (worker, its token ids) per part, in order
        self._new_ids: list[tuple[int, int, int]] = []  # (worker, ids first seen by it in the part: lo, hi)
        self._per_post: list[np.ndarray] = []
        self._pool = ThreadPoolExecutor(max_workers=self._n_workers)
        self._pending: list[Future] = []

    def __enter__(self) -> TokenStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pending = []
        if self._processes is not None:
            self._processes.shutdown(wait=True, cancel_futures=True)
            self._processes = None

    def _process_pool(self) -> Executor:
        with self._processes_lock:
            if self._processes is None:
                import multiprocessing

                # forked: see segment.py (the workers get plain strings and never touch Arrow or numba)
                self._processes = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
            return self._processes

    def submit(self, texts: pa.Array) -> None:
        """Queue one batch of posts (non-null strings); blocks only until the previous batch is done."""
        self._collect()
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if not pa.types.is_string(texts.type) and not pa.types.is_large_string(texts.type):
            texts = pc.cast(texts, pa.string())
        parts = _split_balanced(texts, self._n_workers) if self.tokenizer != "treebank" else [texts]
        self._pending = [self._pool.submit(self._work, w, part) for w, part in enumerate(parts)]

    def finish(self) -> Tokenized:
        """All batches' tokens: ids merged into one vocabulary (worker 0's table)."""
        self._collect()
        vocab = self._vocabs[0]
        remaps = {w: vocab.merge(v) for w, v in enumerate(self._vocabs) if w > 0 and len(v)}
        order = _first_sight_order(self._new_ids, remaps, vocab.n)
        if order is not None:  # ids in order of first sight: folded into the remaps the parts go through anyway
            rank = np.empty(order.shape[0], dtype=np.int32)
            rank[order] = np.arange(order.shape[0], dtype=np.int32)
            remaps = {w: rank[r] for w, r in remaps.items()}
            remaps[0] = rank
        self._new_ids = []
        codes = np.empty(sum(part.shape[0] for _, part in self._codes), dtype=np.int32)
        # every part is copied (worker 0's, when its ids are already in order of first sight) or remapped into
        # place by the worker threads, each thread taking every n-th part and dropping it once placed: the ids
        # are held about once, not twice
        jobs: list[list[tuple[np.ndarray, np.ndarray | None, int]]] = [[] for _ in range(self._n_workers)]
        pos = 0
        for i, (w, part) in enumerate(self._codes):
            jobs[i % self._n_workers].append((part, remaps.get(w), pos))
            pos += part.shape[0]
        self._codes = []
        for done in [self._pool.submit(_place_parts, job, codes) for job in jobs]:
            done.result()
        per_post = np.concatenate(self._per_post) if self._per_post else np.zeros(0, np.int64)
        post_ptr = np.zeros(per_post.shape[0] + 1, dtype=np.int64)
        np.cumsum(per_post, out=post_ptr[1:])
        strings = vocab.strings()  # built once: the object array below and the script scan both read it
        if order is not None:
            strings = strings.take(pa.array(order))
        tok = Tokenized(codes=codes, post_ptr=post_ptr, unigrams=vocab.objects(strings))
        if self.detection is None:
            return tok
        auto = self.tokenizer == "auto"
        return _segment().finish(
            tok, self.char_ngrams, self.detection, auto=auto, korean=self.prep.korean, strings=strings
        )

    def _collect(self) -> None:
        pending, self._pending = self._pending, []
        for w, f in enumerate(pending):
            codes, per_post, new_ids = f.result()
            self._codes.append((w, codes))
            self._new_ids.append((w, *new_ids))
            self._per_post.append(per_post)

    def _work(self, w: int, texts: pa.Array) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
        """Worker ``w``: one slice of posts -> (its token ids in ``self._vocabs[w]``, tokens per post, the ids
        this slice added to that table: (lo, hi))."""
        fold = False
        if self.tokenizer == "whitespace":
            mode = _MODE_WHITESPACE
        else:
            texts = preprocess(texts, self.prep)
            if self.tokenizer == "treebank":
                if self.prep.lowercase:
                    texts = pc.utf8_lower(texts)
                texts = _treebank_join(texts)  # tokens separated by single spaces
                mode = _MODE_WORDS if self.prep.strip_symbols else _MODE_WHITESPACE
            else:
                if self.tokenizer == "auto" and self.detection is not None:  # spaces between unspaced words
                    texts = _segment().segment_posts(
                        texts, self.detection, self._process_pool, korean=self.prep.korean
                    )[0]
                if self._arrow_lower:  # pragma: no cover - see __init__
                    texts = pc.utf8_lower(texts)
                fold = self._lower is not _NO_LOWER
                mode = _MODE_WORDS if self.prep.strip_symbols else _MODE_WORDS_SYMBOLS
        data, offsets = string_buffers(texts)
        n_posts = len(texts)
        n_bytes = int(offsets[-1] - offsets[0]) if n_posts else 0
        longest = int(np.max(np.diff(offsets))) if n_posts else 0
        # at most one token per byte, and with words (modes 0, 2) at most one per two bytes plus one per post
        bound = n_bytes + 1 if mode == _MODE_WORDS_SYMBOLS else (n_bytes + n_posts) // 2 + 1
        codes = np.empty(bound, dtype=np.int32)
        per_post = np.empty(n_posts, dtype=np.int64)
        vocab = self._vocabs[w]
        first_new = vocab.n
        # a token's bytes after case folding: at most 3/2 of its source bytes (2-byte letters with 3-byte lower case)
        scratch = np.empty(2 * longest + 8, dtype=np.uint8)
        tok_end = np.empty(longest + 2, dtype=np.int64)
        table = char_classes()
        j = t = 0
        while True:
            j, t, vocab.n = _tokenize_posts(
                data,
                offsets,
                j,
                t,
                table,
                self._lower,
                fold,
                mode,
                scratch,
                tok_end,
                codes,
                per_post,
                *vocab.tables,
                vocab.n,
            )
            if j == n_posts:
                return codes[:t], per_post, (first_new, vocab.n)  # a view: pages past t were never touched
            size = int(offsets[j + 1] - offsets[j])
            vocab.reserve(max(size + 1, len(vocab)), max(2 * size + 8, int(vocab.offsets[vocab.n])))


# ---- internals ---------------------------------------------------------------
def _segment():
    from . import segment  # numba kernels compiled on first use: only for auto and char-ngrams

    return segment


def _first_sight_order(new_ids: list[tuple[int, int, int]], remaps: dict[int, np.ndarray], n: int) -> np.ndarray | None:
    """The merged table's ids in order of first sight in the posts, or None when that is already id order.

    A worker's table gives ids in its own order of first sight, so the ids a part added (``lo``..``hi``, in
    order) hold, in their order, every id first seen anywhere in that part; taken part by part in read order
    and mapped into the merged table, an id's first place in that sequence is its first sight overall."""
    if all(w == 0 for w, _, _ in new_ids):
        return None  # one table: its ids are already in order of first sight
    seq = np.concatenate(
        [np.arange(lo, hi, dtype=np.int32) if w == 0 else remaps[w][lo:hi] for w, lo, hi in new_ids if hi > lo]
    )
    ids, first = np.unique(seq, return_index=True)
    assert ids.shape[0] == n, "every id is new to some part"
    order = ids[np.argsort(first, kind="stable")]
    return None if bool((order == np.arange(n)).all()) else order


def _split_balanced(texts: pa.Array, n: int) -> list[pa.Array]:
    """Split into at most ``n`` contiguous slices of about equal byte size."""
    n_rows = len(texts)
    if n <= 1 or n_rows < 2:
        return [texts]
    if _byte_size(texts) < _PARALLEL_MIN_BYTES:
        return [texts]
    _, offsets = string_buffers(texts)
    cuts = np.searchsorted(offsets, offsets[0] + (offsets[-1] - offsets[0]) * np.arange(1, n) / n)
    bounds = np.unique(np.concatenate([[0], np.minimum(cuts, n_rows), [n_rows]]))
    return [texts.slice(int(a), int(b - a)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _byte_size(texts: pa.Array) -> int:
    if len(texts) == 0:
        return 0
    if isinstance(texts, pa.ChunkedArray):
        return sum(_byte_size(c) for c in texts.chunks)
    if not pa.types.is_string(texts.type) and not pa.types.is_large_string(texts.type):
        return int(pc.sum(pc.binary_length(pc.cast(texts, pa.string()))).as_py() or 0)
    _, offsets = string_buffers(texts)
    return int(offsets[-1] - offsets[0])


def _treebank_join(texts: pa.Array) -> pa.Array:
    """Each post -> its treebank tokens joined by single spaces (Python per post: the slow path)."""
    from nltk.tokenize import TreebankWordTokenizer

    tb = TreebankWordTokenizer()
    out = [
        " ".join(tok for sent in _SENTENCE_END.split(t) for tok in tb.tokenize(sent)) if t else ""
        for t in texts.to_pylist()
    ]
    return pa.array(out, type=pa.string())


def _place_parts(jobs: list[tuple[np.ndarray, np.ndarray | None, int]], codes: np.ndarray) -> None:
    """Write each (part, remap or None, position) into ``codes``, last first, dropping each part once placed."""
    while jobs:
        part, remap, pos = jobs.pop()
        out = codes[pos : pos + part.shape[0]]
        if remap is None:
            _copy_into(part, out)
        else:
            _remap_into(part, remap, out)
        del part, out


@numba.njit(cache=True, nogil=True)
def _remap_into(part, remap, out):  # pragma: no cover - compiled
    for i in range(part.shape[0]):
        out[i] = remap[part[i]]


@numba.njit(cache=True, nogil=True)
def _copy_into(part, out):  # pragma: no cover - compiled
    for i in range(part.shape[0]):
        out[i] = part[i]


# ---- the scanning kernel -------------------------------------------------------
_MODE_WORDS, _MODE_WORDS_SYMBOLS, _MODE_WHITESPACE = 0, 1, 2
_NO_LOWER = np.zeros(1, dtype=np.int32)


@numba.njit(cache=True, nogil=True, inline="always")
def _put(out, pos, cp):  # pragma: no cover - compiled
    """Write code point ``cp`` as UTF-8 at ``out[pos]``; returns the position after it."""
    if cp < 0x80:
        out[pos] = cp
        return pos + 1
    if cp < 0x800:
        out[pos] = 0xC0 | (cp >> 6)
        out[pos + 1] = 0x80 | (cp & 0x3F)
        return pos + 2
    if cp < 0x10000:
        out[pos] = 0xE0 | (cp >> 12)
        out[pos + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[pos + 2] = 0x80 | (cp & 0x3F)
        return pos + 3
    out[pos] = 0xF0 | (cp >> 18)
    out[pos + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[pos + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[pos + 3] = 0x80 | (cp & 0x3F)
    return pos + 4


@numba.njit(cache=True, nogil=True, inline="always")
def _unspaced(cp):  # pragma: no cover - compiled
    """Whether ``cp`` is a letter of a script written without spaces between words (``charclass.UNSPACED``)."""
    if cp < 0x0E00:
        return False
    for lo, hi in UNSPACED:
        if lo <= cp <= hi:
            return True
    return False


@numba.njit(cache=True, nogil=True, inline="always")
def _zwsp_breaks(before, data, i, end):  # pragma: no cover - compiled
    """Whether a zero width space between code point ``before`` and the text at ``data[i:end]`` is a word break:
    next to a letter of a script written without spaces (Thai, Chinese, ...), else it is ignored like a soft
    hyphen (see ``charclass``)."""
    if _unspaced(before):
        return True
    if i < end:
        after, _ = decode_at(data, i)
        return _unspaced(after)
    return False


@numba.njit(cache=True, nogil=True, inline="always")
def _close_word(out, tok_end, pos, m, pending, mode):  # pragma: no cover - compiled
    """End the current word at ``pos``; with symbols kept (mode 1) its ``pending`` trailing apostrophes
    follow as tokens of their own. Returns the new (pos, m)."""
    tok_end[m] = pos
    m += 1
    if mode == 1:
        for _ in range(pending):
            out[pos] = 39
            pos += 1
            tok_end[m] = pos
            m += 1
    return pos, m


@numba.njit(cache=True, nogil=True)
def _tokenize_posts(
    data, offsets, j, t, table, lower, fold, mode, scratch, tok_end, codes, per_post, slots, voff, arena, n
):  # pragma: no cover - compiled
    """Tokenize posts of UTF-8 ``data`` (post j = data[offsets[j]:offsets[j+1]]) and intern the tokens.

    mode 0: words = runs of word characters joined by inner apostrophes (apostrophes
    at a word's edge are dropped; typographic ones written as '); mode 1: the same,
    and every other non-space character (edge apostrophes included) is a token of its
    own; mode 2: tokens are the runs of non-space characters, unchanged.
    With ``fold`` every code point is first mapped through ``lower``. A post's tokens are cut into
    ``scratch`` (ending at ``tok_end``), then looked up in the intern table (slots ... n) and their ids
    written to ``codes``; ``per_post[j]`` is post j's number of tokens.
    Starts at post ``j`` with ``t`` tokens written; stops before a post whose new tokens might not fit
    in the intern table (the caller grows it and calls again). Returns (next post, tokens written, n).
    """
    while j < offsets.shape[0] - 1:
        i = offsets[j]
        end = offsets[j + 1]
        if not has_room(slots, voff, arena, n, end - i + 1, 2 * (end - i) + 8):
            break
        pos = 0  # bytes of this post's tokens in scratch
        m = 0  # tokens of this post
        in_tok = False
        pending = 0  # apostrophes seen after a word character, not yet written
        last = np.int64(-1)  # the code point before this one, as written (for a zero width space)
        while i < end:
            b = data[i]
            if b < 0x80:
                cp = np.int64(b)
                nb = 1
            elif b < 0xE0:
                cp = (np.int64(b & 0x1F) << 6) | np.int64(data[i + 1] & 0x3F)
                nb = 2
            elif b < 0xF0:
                cp = (np.int64(b & 0x0F) << 12) | (np.int64(data[i + 1] & 0x3F) << 6) | np.int64(data[i + 2] & 0x3F)
                nb = 3
            else:
                cp = (
                    (np.int64(b & 0x07) << 18)
                    | (np.int64(data[i + 1] & 0x3F) << 12)
                    | (np.int64(data[i + 2] & 0x3F) << 6)
                    | np.int64(data[i + 3] & 0x3F)
                )
                nb = 4
            i += nb
            before = last
            last = cp
            if fold:
                cp = np.int64(lower[cp])
            c = table[cp]
            if c == 4:  # ignored: format character or variation selector
                if cp != ZWSP or not _zwsp_breaks(before, data, i, end):
                    continue
                c = 0  # a zero width space next to Thai, Chinese, ...: a word break
            if mode == 2:
                if c == 0:
                    if in_tok:
                        in_tok = False
                        tok_end[m] = pos
                        m += 1
                else:
                    in_tok = True
                    pos = _put(scratch, pos, cp)
            elif c == 1:
                if in_tok:
                    for _k in range(pending):
                        scratch[pos] = 39
                        pos += 1
                in_tok = True
                pending = 0
                pos = _put(scratch, pos, cp)
            elif c == 3 and in_tok:
                pending += 1
            else:
                if in_tok:  # close the word; its trailing apostrophes are edge apostrophes
                    in_tok = False
                    pos, m = _close_word(scratch, tok_end, pos, m, pending, mode)
                    pending = 0
                if mode == 1 and c != 0:  # a symbol (or an apostrophe outside a word) on its own
                    if c == 3:
                        scratch[pos] = 39
                        pos += 1
                    else:
                        pos = _put(scratch, pos, cp)
                    tok_end[m] = pos
                    m += 1
        if in_tok:
            if mode == 2:
                tok_end[m] = pos
                m += 1
            else:
                pos, m = _close_word(scratch, tok_end, pos, m, pending, mode)
        a = 0
        for q in range(m):
            e = tok_end[q]
            key = key_of(scratch, a, e)
            s, k = find(scratch, a, e, key, slots, voff, arena)
            if k < 0:  # a new token
                k = insert(scratch, a, e, key, s, slots, voff, arena, n)
                n += 1
            codes[t] = k
            a = e
            t += 1
        per_post[j] = m
        j += 1
    return j, t, n
