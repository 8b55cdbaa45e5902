"""Text preprocessing and tokenization, vectorised over whole columns of posts.

Everything here works on a pyarrow string array (one element per post): case
folding and URL removal with Arrow's compute kernels (C++), splitting with one
numba kernel over the UTF-8 bytes, and Arrow's hash for the vocabulary, so the
``fast`` tokenizer does no Python work per post or per token. The two halves of a
large column are processed in two threads (all three release the GIL). The result
is the flat form ``build_corpus`` takes: token codes, post offsets, unigram table.

Tokenizers:
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ParameterError

TOKENIZERS: tuple[str, ...] = ("fast", "treebank")
_ALL_TOKENIZERS = TOKENIZERS + ("whitespace",)

REMOVED_MARKERS: tuple[str, ...] = ("[removed]", "[deleted]")

# RE2 syntax (Arrow).
_URL = r"(?i)(?:\b[a-z][a-z0-9+.\-]*://|\bwww\.)\S+"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

# Below this many bytes of text one thread does all the work.
_PARALLEL_MIN_BYTES = 2_000_000


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

    def describe(self) -> str:
        on = [k if v is True else f"{k} ({v})" for k, v in self.__dict__.items() if v]
        return ", ".join(on) if on else "none"


@dataclass(frozen=True)
class Tokenized:
    """Flat tokenized posts: post j is ``codes[post_ptr[j]:post_ptr[j+1]]``, ids into ``unigrams``."""

    codes: np.ndarray  # int32
    post_ptr: np.ndarray  # int64, n_posts + 1
    unigrams: np.ndarray  # object array of str

    @property
    def n_tokens(self) -> int:
        return int(self.codes.shape[0])


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


def preprocess(texts: pa.Array, prep: Preprocessing) -> pa.Array:
    """E-mail headers, HTML, URLs, case: column-wise (row filtering is the caller's job)."""
    from . import clean

    if prep.email_headers:
        texts, _ = clean.drop_email_headers(texts)
    if prep.strip_html:
        texts = clean.strip_html(texts)
    if prep.strip_urls:
        texts = pc.replace_substring_regex(texts, pattern=_URL, replacement=" ")
    if prep.lowercase:
        texts = pc.utf8_lower(texts)
    return texts


def tokenize(
    texts: pa.Array,
    *,
    tokenizer: str = "fast",
    prep: Preprocessing = Preprocessing(),
    workers: int | None = None,
) -> Tokenized:
    """Preprocess and tokenize every post of ``texts`` (non-null strings).

    ``tokenizer="whitespace"`` takes tokens as given and ignores ``prep``.
    Posts may end up with no tokens; they keep their (empty) slot in ``post_ptr``.
    """
    if tokenizer not in _ALL_TOKENIZERS:
        check_tokenizer(tokenizer)
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not pa.types.is_string(texts.type) and not pa.types.is_large_string(texts.type):
        texts = pc.cast(texts, pa.string())
    n_workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    parts = _split_balanced(texts, n_workers) if tokenizer != "treebank" else [texts]
    if len(parts) == 1:
        results = [_tokenize_part(parts[0], tokenizer, prep)]
    else:
        with ThreadPoolExecutor(max_workers=len(parts)) as pool:
            results = list(pool.map(lambda a: _tokenize_part(a, tokenizer, prep), parts))
    return _merge(results)


# ---- internals ---------------------------------------------------------------


def _split_balanced(texts: pa.Array, n: int) -> list[pa.Array]:
    """Split into at most ``n`` contiguous slices of about equal byte size."""
    n_rows = len(texts)
    if n <= 1 or n_rows < 2:
        return [texts]
    if _byte_size(texts) < _PARALLEL_MIN_BYTES:
        return [texts]
    lengths = pc.binary_length(texts).to_numpy(zero_copy_only=False)
    cum = np.cumsum(np.nan_to_num(lengths.astype(np.float64)))
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, n) / n)
    bounds = np.unique(np.concatenate([[0], cuts, [n_rows]]))
    return [texts.slice(int(a), int(b - a)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _byte_size(texts: pa.Array) -> int:
    return int(pc.sum(pc.binary_length(texts)).as_py() or 0)


def _treebank_join(texts: pa.Array) -> pa.Array:
    """Each post -> its treebank tokens joined by single spaces (Python per post: the slow path)."""
    from nltk.tokenize import TreebankWordTokenizer

    tb = TreebankWordTokenizer()
    out = [
        " ".join(tok for sent in _SENTENCE_END.split(t) for tok in tb.tokenize(sent)) if t else ""
        for t in texts.to_pylist()
    ]
    return pa.array(out, type=pa.string())


def _tokenize_part(texts: pa.Array, tokenizer: str, prep: Preprocessing) -> tuple[pa.DictionaryArray, np.ndarray]:
    """One slice of posts -> (dictionary-encoded tokens, tokens per post)."""
    if tokenizer == "whitespace":
        mode = _MODE_WHITESPACE
    else:
        texts = preprocess(texts, prep)
        if tokenizer == "treebank":
            texts = _treebank_join(texts)  # tokens separated by single spaces
            mode = _MODE_WORDS if prep.strip_symbols else _MODE_WHITESPACE
        else:
            mode = _MODE_WORDS if prep.strip_symbols else _MODE_WORDS_SYMBOLS
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if pa.types.is_large_string(texts.type):
        offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)
    else:
        offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32).astype(np.int64)
    offsets = offsets[texts.offset : texts.offset + len(texts) + 1]
    data_buf = texts.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    table = char_classes()
    n_tok, n_bytes = _scan(
        data, offsets, table, mode, np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(len(texts), np.int64), False
    )
    out = np.empty(n_bytes, dtype=np.uint8)
    large = n_bytes >= 2**31 - 1  # more than 2 GB of tokens in one slice: 64-bit offsets
    tok_off = np.empty(n_tok + 1, dtype=np.int64 if large else np.int32)
    per_post = np.zeros(len(texts), dtype=np.int64)
    _scan(data, offsets, table, mode, out, tok_off, per_post, True)
    kind = pa.LargeStringArray if large else pa.StringArray
    tokens = kind.from_buffers(n_tok, pa.py_buffer(tok_off), pa.py_buffer(out))
    return tokens.dictionary_encode(), per_post


# ---- the scanning kernel -------------------------------------------------------
# Character classes, indexed by code point. IGNORED characters (format characters, category Cf, and
# variation selectors) are skipped: never part of a token, never a token, and no break inside a word
# (as in Unicode's word segmentation, where Format and Extend characters do not break a word).
# Control characters (Cc) separate like spaces.
_SPACE, _WORD, _SYMBOL_CH, _APOS, _IGNORED = 0, 1, 2, 3, 4
_MODE_WORDS, _MODE_WORDS_SYMBOLS, _MODE_WHITESPACE = 0, 1, 2
_VARIATION_SELECTORS = ((0x180B, 0x1810), (0xFE00, 0xFE10), (0xE0100, 0xE01F0))
_classes: np.ndarray | None = None


def char_classes() -> np.ndarray:
    """uint8 class of every code point: word (letters, digits, marks), space, apostrophe, ignored, other symbol."""
    global _classes
    if _classes is None:
        import unicodedata

        every = "".join(map(chr, range(0x110000)))
        cls = np.full(0x110000, _SYMBOL_CH, dtype=np.uint8)
        for m in re.finditer(r"[^\W_]+", every):  # str.isalnum(): letters and numbers
            cls[m.start() : m.end()] = _WORD
        for cp in range(0x20000):  # marks, format and control characters (all below U+20000 but plane 14's)
            if cls[cp] == _SYMBOL_CH:
                cat = unicodedata.category(every[cp])
                if cat[0] == "M":
                    cls[cp] = _WORD
                elif cat == "Cf":
                    cls[cp] = _IGNORED
                elif cat == "Cc":
                    cls[cp] = _SPACE
        cls[0xE0000:0xE0080] = _IGNORED  # plane 14 tag characters (Cf)
        for lo, hi in _VARIATION_SELECTORS:
            cls[lo:hi] = _IGNORED
        for m in re.finditer(r"\s+", every):
            cls[m.start() : m.end()] = _SPACE
        cls[0x200B] = _SPACE  # zero width space (Cf) is a word break
        cls[[ord("'"), 0x2019, 0x02BC]] = _APOS
        _classes = cls
    return _classes


@numba.njit(cache=True, nogil=True, inline="always")
def _close_word(out, tok_off, pos, n_tok, pending, mode, write):
    """End the current word at ``pos``; with symbols kept (mode 1) its ``pending`` trailing apostrophes
    follow as tokens of their own. Returns the new (pos, n_tok)."""
    n_tok += 1
    if write:
        tok_off[n_tok] = pos
    if mode == 1:
        for _ in range(pending):
            if write:
                out[pos] = 39
            pos += 1
            n_tok += 1
            if write:
                tok_off[n_tok] = pos
    return pos, n_tok


@numba.njit(cache=True, nogil=True)
def _scan(data, offsets, table, mode, out, tok_off, per_post, write):  # pragma: no cover - compiled
    """Tokenize posts of UTF-8 ``data`` (post j = data[offsets[j]:offsets[j+1]]).

    mode 0: words = runs of word characters joined by inner apostrophes (apostrophes
    at a word's edge are dropped; typographic ones written as '); mode 1: the same,
    and every other non-space character (edge apostrophes included) is a token of its
    own; mode 2: tokens are the runs of non-space characters, bytes unchanged.
    Pass 1 (write=False) counts tokens and bytes; pass 2 fills ``out``, ``tok_off``, ``per_post``.
    """
    n_tok = 0
    pos = 0
    if write:
        tok_off[0] = 0
    for j in range(offsets.shape[0] - 1):
        i = offsets[j]
        end = offsets[j + 1]
        in_tok = False
        pending = 0  # apostrophes seen after a word character, not yet written
        start_tok = n_tok
        while i < end:
            b = data[i]
            if b < 0x80:
                cp = np.int64(b)
                n = 1
            elif b < 0xE0:
                cp = (np.int64(b & 0x1F) << 6) | np.int64(data[i + 1] & 0x3F)
                n = 2
            elif b < 0xF0:
                cp = (np.int64(b & 0x0F) << 12) | (np.int64(data[i + 1] & 0x3F) << 6) | np.int64(data[i + 2] & 0x3F)
                n = 3
            else:
                cp = (
                    (np.int64(b & 0x07) << 18)
                    | (np.int64(data[i + 1] & 0x3F) << 12)
                    | (np.int64(data[i + 2] & 0x3F) << 6)
                    | np.int64(data[i + 3] & 0x3F)
                )
                n = 4
            c = table[cp]
            if c == 4:  # ignored: format character or variation selector
                i += n
                continue
            if mode == 2:
                if c == 0:
                    if in_tok:
                        in_tok = False
                        n_tok += 1
                        if write:
                            tok_off[n_tok] = pos
                else:
                    in_tok = True
                    for k in range(n):
                        if write:
                            out[pos] = data[i + k]
                        pos += 1
            elif c == 1:
                if in_tok:
                    for _k in range(pending):
                        if write:
                            out[pos] = 39
                        pos += 1
                in_tok = True
                pending = 0
                for k in range(n):
                    if write:
                        out[pos] = data[i + k]
                    pos += 1
            elif c == 3 and in_tok:
                pending += 1
            else:
                if in_tok:  # close the word; its trailing apostrophes are edge apostrophes
                    in_tok = False
                    pos, n_tok = _close_word(out, tok_off, pos, n_tok, pending, mode, write)
                    pending = 0
                if mode == 1 and c != 0:  # a symbol (or an apostrophe outside a word) on its own
                    if c == 3:
                        if write:
                            out[pos] = 39
                        pos += 1
                    else:
                        for k in range(n):
                            if write:
                                out[pos] = data[i + k]
                            pos += 1
                    n_tok += 1
                    if write:
                        tok_off[n_tok] = pos
            i += n
        if in_tok:
            pos, n_tok = _close_word(out, tok_off, pos, n_tok, pending, mode, write)
        if write:
            per_post[j] = n_tok - start_tok
    return n_tok, pos


def _merge(results: list[tuple[pa.DictionaryArray, np.ndarray]]) -> Tokenized:
    per_post = np.concatenate([r[1] for r in results])
    post_ptr = np.zeros(per_post.shape[0] + 1, dtype=np.int64)
    np.cumsum(per_post, out=post_ptr[1:])
    if len(results) == 1:
        chunks = [results[0][0]]
    else:
        chunks = pa.chunked_array([r[0] for r in results]).unify_dictionaries().chunks
    if chunks:
        dictionary = chunks[0].dictionary
        codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks]).astype(np.int32, copy=False)
    else:  # pragma: no cover - there is always at least one part
        dictionary, codes = pa.array([], pa.string()), np.zeros(0, np.int32)
    unigrams = np.asarray(dictionary.to_pylist(), dtype=object)
    return Tokenized(codes=codes, post_ptr=post_ptr, unigrams=unigrams)
