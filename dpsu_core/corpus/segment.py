"""Word segmentation by script: the ``auto`` and ``char-ngrams`` tokenizers.

``auto`` (the default) lets the ``fast`` tokenizer's kernel cut every post, after this module has put
spaces between the words of the runs of text written without spaces:

  Chinese   (Han without kana in the post)  jieba (its default dictionary, ``jieba.lcut``, HMM on)
  Japanese  (Han or kana, kana in the post) SudachiPy with sudachidict_core, split mode C (the longest
                                            units: compounds and names stay whole)
  Thai                                      PyThaiNLP's dictionary segmenter ``newmm``
  Khmer, Lao, Burmese (no segmenter here), and any script whose segmenter is not installed:
                                            character n-grams of each word (``--char-ngrams N``, default 2)

A compiled scan (``_post_scripts``) finds the posts that hold such a run; every other post (English,
Korean, Russian, ...) goes to the fast kernel untouched, so ``auto`` gives exactly ``fast``'s tokens on
them. Case folding, symbols, numbers, URLs and the other cleaning steps are the kernel's and
``tokenize.preprocess``'s, as for ``fast``: the segmenters only decide where words end. The segmenters are
imported when their script is first found; for a large share of such text (at least ``PROCESS_MIN_BYTES``)
the posts are segmented in two worker processes, batch by batch (the segmenters are Python and hold the GIL).
The workers are forked (they inherit the segmenters already loaded, and a spawned worker would re-run the
caller's main script, which a script without a ``__main__`` guard cannot survive); they get plain strings.

``char-ngrams`` is script-agnostic: every word of the fast tokenizer becomes its character n-grams (words of
at most N characters stay whole).

Segmentation is a function of one post's own text, so the sensitivity arguments are unchanged.
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numba
import numpy as np
import pyarrow as pa

from .intern import string_buffers
from .tokenize import Tokenized

if TYPE_CHECKING:
    from .tokenize import TokenStream

# Script codes of the compiled scan (bit s of a post's mask: the post holds a letter of script s).
LATIN, HAN, KANA, THAI, LAO, KHMER, MYANMAR, HANGUL, CYRILLIC, GREEK, ARABIC, HEBREW, INDIC, DIGITS, OTHER = range(15)
SCRIPT_NAMES = (
    "Latin",
    "Han (Chinese characters)",
    "Japanese kana",
    "Thai",
    "Lao",
    "Khmer",
    "Burmese",
    "Hangul",
    "Cyrillic",
    "Greek",
    "Arabic",
    "Hebrew",
    "Indic",
    "digits",
    "other",
)
_NEEDS_SEGMENTER = (1 << HAN) | (1 << KANA) | (1 << THAI)
_NGRAM_SCRIPTS = (LAO, KHMER, MYANMAR)  # no word segmenter here: character n-grams

DEFAULT_CHAR_NGRAMS = 2
PROCESS_MIN_BYTES = 1_000_000  # at least this much text to segment: two worker processes
_CHUNK_BYTES = 256_000  # posts per task of the worker processes (about)
_SUDACHI_MAX_CHARS = 4000  # SudachiPy refuses inputs over 49,149 bytes: longer runs go in pieces

_CJK = (
    "\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_THAI_RUN = re.compile("[\u0e00-\u0e7f]+")
_PIECE_END = re.compile("[。！？!?\n]")

# which segmenter each language uses, as the notes name it
SEGMENTERS = {
    "Chinese": ("jieba", "jieba"),
    "Japanese": ("SudachiPy (sudachidict_core, split mode C)", "sudachipy"),
    "Thai": ("PyThaiNLP newmm", "pythainlp"),
}


@numba.njit(cache=True, nogil=True, inline="always")
def _script(cp):  # pragma: no cover - compiled
    """Script code of code point ``cp`` (-1: not a letter or digit of a script we tell apart)."""
    if cp < 0x80:
        if 48 <= cp <= 57:
            return DIGITS
        if 65 <= cp <= 90 or 97 <= cp <= 122:
            return LATIN
        return -1
    if 0xC0 <= cp <= 0x24F or 0x1E00 <= cp <= 0x1EFF:
        return LATIN
    if 0x370 <= cp <= 0x3FF:
        return GREEK
    if 0x400 <= cp <= 0x52F:
        return CYRILLIC
    if 0x590 <= cp <= 0x5FF:
        return HEBREW
    if 0x600 <= cp <= 0x6FF or 0x750 <= cp <= 0x77F:
        return ARABIC
    if 0x900 <= cp <= 0xDFF:
        return INDIC
    if 0xE00 <= cp <= 0xE7F:
        return THAI
    if 0xE80 <= cp <= 0xEFF:
        return LAO
    if 0x1000 <= cp <= 0x109F or 0xA9E0 <= cp <= 0xA9FF or 0xAA60 <= cp <= 0xAA7F:
        return MYANMAR
    if 0x1780 <= cp <= 0x17FF or 0x19E0 <= cp <= 0x19FF:
        return KHMER
    if 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F or 0xAC00 <= cp <= 0xD7AF:
        return HANGUL
    if 0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0xFF66 <= cp <= 0xFF9F:
        return KANA
    if 0x3005 <= cp <= 0x3007 or 0x3400 <= cp <= 0x4DBF or 0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF:
        return HAN
    if 0x20000 <= cp <= 0x3FFFF:
        return HAN
    return OTHER


@numba.njit(cache=True, nogil=True, inline="always")
def _decode(data, i):  # pragma: no cover - compiled
    b = data[i]
    if b < 0x80:
        return np.int64(b), 1
    if b < 0xE0:
        return (np.int64(b & 0x1F) << 6) | np.int64(data[i + 1] & 0x3F), 2
    if b < 0xF0:
        return (np.int64(b & 0x0F) << 12) | (np.int64(data[i + 1] & 0x3F) << 6) | np.int64(data[i + 2] & 0x3F), 3
    cp = (
        (np.int64(b & 0x07) << 18)
        | (np.int64(data[i + 1] & 0x3F) << 12)
        | (np.int64(data[i + 2] & 0x3F) << 6)
        | np.int64(data[i + 3] & 0x3F)
    )
    return cp, 4


@numba.njit(cache=True, nogil=True)
def _post_scripts(data, offsets, out):  # pragma: no cover - compiled
    """out[j] = bit mask of the scripts of post j's letters, for the scripts that need a segmenter or
    n-grams (the others only matter per token: ``_first_scripts``). ASCII bytes are skipped at once."""
    for j in range(offsets.shape[0] - 1):
        i, end = offsets[j], offsets[j + 1]
        mask = np.int64(0)
        while i < end:
            if data[i] < 0x80:
                i += 1
                continue
            cp, nb = _decode(data, i)
            i += nb
            s = _script(cp)
            if s == HAN or s == KANA or s == THAI or s == LAO or s == KHMER or s == MYANMAR:
                mask |= np.int64(1) << s
        out[j] = mask


@numba.njit(cache=True, nogil=True)
def _first_scripts(data, offsets, out):  # pragma: no cover - compiled
    """out[j] = script of token j: its first letter's (kana beats Han: a Japanese word), else DIGITS or OTHER."""
    for j in range(offsets.shape[0] - 1):
        i, end = offsets[j], offsets[j + 1]
        found = -1
        while i < end:
            cp, nb = _decode(data, i)
            i += nb
            s = _script(cp)
            if s == KANA:
                found = KANA
                break
            if s >= 0 and s != DIGITS and found < 0:
                found = s
                if s != HAN:
                    break
            if s == DIGITS and found < 0:
                found = -2
        out[j] = found if found >= 0 else (DIGITS if found == -2 else OTHER)


def post_scripts(texts: pa.Array) -> np.ndarray:
    """int64 per post: bit s set when the post holds a letter of script s (Han, kana, Thai, Lao, Khmer, Burmese)."""
    data, offsets = string_buffers(texts)
    out = np.zeros(len(texts), dtype=np.int64)
    _post_scripts(data, offsets, out)
    return out


def token_scripts(tokens: pa.Array) -> np.ndarray:
    """int8 script code of each token (see ``_first_scripts``)."""
    data, offsets = string_buffers(tokens)
    out = np.zeros(len(tokens), dtype=np.int8)
    _first_scripts(data, offsets, out)
    return out


# ---- the segmenters (imported on first use, one instance per process) ----------------------------
_segmenters: dict[str, Callable[[str], list[str]] | None] = {}
_seg_lock = threading.Lock()


def _after_fork() -> None:  # a worker process forked while another thread held the lock must not wait for it
    global _seg_lock
    _seg_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _load(language: str) -> Callable[[str], list[str]] | None:
    """The word segmenter of ``language`` ("Chinese", "Japanese", "Thai"), or None when not installed."""
    with _seg_lock:
        if language not in _segmenters:
            try:
                _segmenters[language] = _make(language)
            except ImportError:
                _segmenters[language] = None
        return _segmenters[language]


def _make(language: str) -> Callable[[str], list[str]]:
    if language == "Chinese":
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)  # no "Building prefix dict" lines on stderr
        jieba.initialize()
        return lambda run: jieba.lcut(run, HMM=True)
    if language == "Japanese":
        from sudachipy import Dictionary, SplitMode

        dictionary = Dictionary(dict="core")
        local = threading.local()  # a SudachiPy tokenizer must not be used by two threads at once

        def sudachi(run: str) -> list[str]:
            tok = getattr(local, "tok", None)
            if tok is None:
                tok = local.tok = dictionary.tokenizer(mode=SplitMode.C, fields=set())  # surfaces only
            return [m.surface() for piece in _pieces(run) for m in tok.tokenize(piece)]

        return sudachi
    from pythainlp.tokenize import word_tokenize

    return lambda run: word_tokenize(run, engine="newmm", keep_whitespace=False)


def _pieces(run: str) -> list[str]:
    """``run`` cut after sentence ends into pieces of at most ``_SUDACHI_MAX_CHARS`` characters."""
    out = []
    while len(run) > _SUDACHI_MAX_CHARS:
        head = run[:_SUDACHI_MAX_CHARS]
        ends = [m.end() for m in _PIECE_END.finditer(head)]
        cut = ends[-1] if ends else _SUDACHI_MAX_CHARS
        out.append(run[:cut])
        run = run[cut:]
    out.append(run)
    return out


def available(language: str) -> bool:
    return _load(language) is not None


def _spaced(run_re: re.Pattern, seg: Callable[[str], list[str]], text: str) -> str:
    return run_re.sub(lambda m: " " + " ".join(seg(m.group())) + " ", text)


def segment_texts(texts: list[str], masks: list[int]) -> tuple[list[str], set[str]]:
    """Each post with its words separated by spaces, and the languages segmented. A post with kana is
    Japanese (its Han and kana runs go to SudachiPy), one with Han and no kana Chinese (jieba); Thai runs go
    to newmm. Languages whose segmenter is not installed are left as they are (n-grams later)."""
    out, used = [], set()
    for text, mask in zip(texts, masks):
        if mask & ((1 << HAN) | (1 << KANA)):
            language = "Japanese" if mask & (1 << KANA) else "Chinese"
            seg = _load(language)
            if seg is not None:
                text = _spaced(_CJK_RUN, seg, text)
                used.add(language)
        if mask & (1 << THAI):
            seg = _load("Thai")
            if seg is not None:
                text = _spaced(_THAI_RUN, seg, text)
                used.add("Thai")
        out.append(text)
    return out, used


def _segment_arrow(texts: pa.Array, masks: np.ndarray) -> tuple[pa.Array, set[str]]:
    """One Arrow batch of posts and their script masks -> the segmented batch (in this process)."""
    out, used = segment_texts(texts.to_pylist(), masks.tolist())
    return pa.array(out, type=pa.string()), used


def tokenization_text(tokenizer: str, n: int = DEFAULT_CHAR_NGRAMS) -> str:
    """How ``tokenizer`` cuts words, as a method (nothing about the data): the release report's line."""
    if tokenizer == "auto":
        named = "; ".join(f"{language}: {name}" for language, (name, _) in SEGMENTERS.items())
        return (
            f"auto: words segmented by script ({named}; Khmer, Lao, Burmese and scripts whose segmenter is not "
            f"installed: character {n}-grams; other scripts: the fast tokenizer)"
        )
    if tokenizer == "char-ngrams":
        return f"char-ngrams: each word of the fast tokenizer cut into its character {n}-grams"
    return tokenizer


@dataclass
class Detection:
    """What ``auto`` found and did, for the notes (raw data: NOT private)."""

    segmented: set[str] = field(default_factory=set)  # languages a word segmenter ran on
    missing: set[str] = field(default_factory=set)  # languages found whose segmenter is not installed
    ngram_scripts: set[str] = field(default_factory=set)  # scripts split into character n-grams
    script_tokens: dict[str, int] = field(default_factory=dict)  # tokens per script

    def notes(self, n: int) -> list[str]:
        out = []
        total = sum(self.script_tokens.values())
        if total:
            shares = sorted(self.script_tokens.items(), key=lambda kv: -kv[1])
            out.append(
                "scripts detected (share of tokens): "
                + ", ".join(f"{name} {count / total:.1%}" for name, count in shares if count)
            )
        for language in sorted(self.segmented):
            out.append(f"{language} text segmented into words with {SEGMENTERS[language][0]}")
        for language in sorted(self.missing):
            name, module = SEGMENTERS[language]
            out.append(
                f"{language} text found but its segmenter ({module}) is not installed: its words are character "
                f"{n}-grams instead; install it with pip install 'dpsu[languages]'"
            )
        for script in sorted(self.ngram_scripts):
            out.append(f"{script} text has no word segmenter here: its words are character {n}-grams")
        return out


def segment_posts(
    texts: pa.Array, detection: Detection, pool: Callable[[], Executor] | None = None
) -> tuple[pa.Array, np.ndarray]:
    """``texts`` with spaces between the words of their Chinese, Japanese and Thai runs, and each post's
    script mask. Posts without such runs are not touched (not even copied when there are none)."""
    masks = post_scripts(texts)
    rows = np.flatnonzero(masks & _NEEDS_SEGMENTER)
    if rows.size == 0:
        return texts, masks
    for bit, language in ((HAN, "Chinese"), (KANA, "Japanese"), (THAI, "Thai")):
        present = masks[rows] & (1 << bit)
        if bit == HAN:  # Han with kana in the same post is Japanese
            present = present & ~(masks[rows] & (1 << KANA))
        if present.any() and not available(language):
            detection.missing.add(language)
    sub = texts.take(pa.array(rows))
    _, offs = string_buffers(sub)
    size = int(offs[-1] - offs[0])
    if pool is not None and size >= PROCESS_MIN_BYTES:
        cuts = np.searchsorted(offs, offs[0] + np.arange(_CHUNK_BYTES, size, _CHUNK_BYTES))
        bounds = np.unique(np.concatenate([[0], cuts, [len(sub)]]))
        executor = pool()
        # the tasks carry Python strings: a pickled Arrow slice would carry its whole parent buffer, and the
        # forked workers then never touch Arrow or numba (whose locks another thread may hold at the fork)
        futures = [
            executor.submit(segment_texts, sub.slice(int(a), int(b - a)).to_pylist(), masks[rows[a:b]].tolist())
            for a, b in zip(bounds[:-1], bounds[1:])
            if b > a
        ]
        parts = [f.result() for f in futures]
        done = pa.array([t for p, _ in parts for t in p], type=pa.string())
        for _, used in parts:
            detection.segmented |= used
    else:
        done, used = _segment_arrow(sub, masks[rows])
        detection.segmented |= used
    return _put_rows(texts, rows, done), masks


def _put_rows(texts: pa.Array, rows: np.ndarray, new: pa.Array) -> pa.Array:
    """``texts`` with the posts at ``rows`` replaced by ``new``."""
    order = np.arange(len(texts), dtype=np.int64)
    order[rows] = len(texts) + np.arange(rows.size)
    both = pa.concat_arrays([texts.cast(pa.large_string()), new.cast(pa.large_string())])
    return both.take(pa.array(order)).cast(texts.type)


# ---- character n-grams, per distinct token -----------------------------------------------------------
_JOINERS = ("\u17d2", "\u1039")  # Khmer coeng, Burmese virama: the next letter is written below, one cluster


def clusters(word: str) -> list[str]:
    """``word`` cut into characters as a reader sees them: a letter with its combining marks (and, in Khmer
    and Burmese, with the subscript letter after a coeng/virama)."""
    out: list[str] = []
    for ch in word:
        if out and (unicodedata.category(ch)[0] == "M" or out[-1].endswith(_JOINERS)):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def char_ngrams(word: str, n: int) -> list[str]:
    """The n-grams of ``word``'s characters (``clusters``) in order; a word of at most n characters stays whole."""
    chars = clusters(word)
    if len(chars) <= n:
        return [word]
    return ["".join(chars[i : i + n]) for i in range(len(chars) - n + 1)]


def expand_ngrams(
    codes: np.ndarray, post_ptr: np.ndarray, unigrams: np.ndarray, which: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replace every token whose unigram has ``which`` True by its character n-grams: Python once per
    distinct token, a compiled pass over the token ids. Returns (codes, post_ptr, unigrams)."""
    import pandas as pd

    pieces = [char_ngrams(w, n) if flag else [w] for w, flag in zip(unigrams.tolist(), which.tolist())]
    lens = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
    piece_ptr = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(lens, out=piece_ptr[1:])
    flat = np.asarray([s for p in pieces for s in p], dtype=object)
    ids, uniq = pd.factorize(flat)
    new_ptr = np.zeros_like(post_ptr)
    out = _expand(codes, post_ptr, piece_ptr, ids.astype(np.int32), new_ptr)
    return out, new_ptr, np.asarray(uniq, dtype=object)


@numba.njit(cache=True, nogil=True)
def _expand(codes, post_ptr, piece_ptr, piece_ids, new_ptr):  # pragma: no cover - compiled
    total = 0
    for p in range(codes.shape[0]):
        total += piece_ptr[codes[p] + 1] - piece_ptr[codes[p]]
    out = np.empty(total, dtype=np.int32)
    o = 0
    for j in range(post_ptr.shape[0] - 1):
        new_ptr[j] = o
        for p in range(post_ptr[j], post_ptr[j + 1]):
            c = codes[p]
            for q in range(piece_ptr[c], piece_ptr[c + 1]):
                out[o] = piece_ids[q]
                o += 1
    new_ptr[post_ptr.shape[0] - 1] = o
    return out


def ngram_mask(scripts: np.ndarray, detection: Detection) -> np.ndarray:
    """Which tokens ``auto`` turns into character n-grams (``scripts``: each token's script, ``token_scripts``):
    Lao, Khmer and Burmese words, and the words of a language whose segmenter is not installed. Records the
    scripts in ``detection``."""
    codes = list(_NGRAM_SCRIPTS)
    if "Chinese" in detection.missing or "Japanese" in detection.missing:
        codes += [HAN, KANA]
    if "Thai" in detection.missing:
        codes.append(THAI)
    which = np.isin(scripts, codes)
    for s in _NGRAM_SCRIPTS:
        if (scripts == s).any():
            detection.ngram_scripts.add(SCRIPT_NAMES[s])
    return which


def count_scripts(codes: np.ndarray, scripts: np.ndarray, detection: Detection) -> None:
    """Tokens per script (``scripts``: each token's script, by its first letter) into ``detection.script_tokens``."""
    if len(scripts) == 0:
        return
    per_script = _tokens_per_script(codes, scripts, len(SCRIPT_NAMES))
    detection.script_tokens = {SCRIPT_NAMES[s]: int(c) for s, c in enumerate(per_script) if c}


@numba.njit(cache=True, nogil=True)
def _tokens_per_script(codes, scripts, n_scripts):  # pragma: no cover - compiled
    # one pass, no copy (np.bincount would first copy the int32 ids to int64: a 330 MB array at 1M users)
    out = np.zeros(n_scripts, dtype=np.int64)
    for c in codes:
        out[scripts[c]] += 1
    return out


def finish(tok: Tokenized, stream: TokenStream, strings: pa.Array | None = None) -> Tokenized:
    """The fast kernel's tokens of an ``auto`` or ``char-ngrams`` stream, with the words that become
    character n-grams replaced by them; for ``auto`` the tokens per script go into ``stream.detection``.
    ``strings``: ``tok.unigrams`` as an Arrow array when the caller has one (building it from Python strings
    would import pandas through pyarrow's shim, a fixed cost the release path avoids)."""
    n = stream.char_ngrams
    scripts: np.ndarray | None = None
    if stream.detection is None:  # char-ngrams: every word
        which = np.ones(len(tok.unigrams), dtype=np.bool_)
    else:
        scripts = token_scripts(strings if strings is not None else pa.array(tok.unigrams, type=pa.string()))
        which = ngram_mask(scripts, stream.detection)
    if which.any():
        codes, post_ptr, unigrams = expand_ngrams(tok.codes, tok.post_ptr, tok.unigrams, which, n)
        tok = Tokenized(codes=codes, post_ptr=post_ptr, unigrams=unigrams)
        scripts = None  # the tokens changed
    if stream.detection is not None:
        if scripts is None:
            scripts = token_scripts(pa.array(tok.unigrams, type=pa.string()))
        count_scripts(tok.codes, scripts, stream.detection)
    return tok
