"""Characters as a reader sees them, character n-grams, and the compiled pass that replaces tokens by pieces.

Work is linear in the length of a word: ``clusters`` records where each character starts (no string grown one
character at a time) and a character holds at most ``MAX_CLUSTER_CHARS`` code points (a letter with a longer
tail of combining marks or Khmer/Burmese subscripts is cut there; the cuts are counted for the notes).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numba
import numpy as np

from .tokens import Tokenized

# A character is a base with its combining marks (and in Khmer and Burmese the subscript letter after a
# coeng/virama); real text needs a handful (Khmer: consonant, coeng, consonant, coeng, consonant, vowel,
# sign), so 16 code points is well past any written language and bounds the work on a hostile tail of marks.
MAX_CLUSTER_CHARS = 16
_JOINERS = frozenset("\u17d2\u1039")  # Khmer coeng, Burmese virama: the next letter is written below, one cluster
_marks: frozenset[str] | None = None


def _mark_set() -> frozenset[str]:
    """Every combining mark (Unicode category M) below U+20000 (none lie above but plane 14's variation
    selectors, which the tokenizer drops): built once, about 20 ms."""
    global _marks
    if _marks is None:
        _marks = frozenset(ch for ch in map(chr, range(0x20000)) if unicodedata.category(ch)[0] == "M")
    return _marks


def cluster_starts(word: str, cap: int = MAX_CLUSTER_CHARS) -> tuple[list[int], int]:
    """Where each character of ``word`` starts (see ``clusters``), and how many clusters the cap cut."""
    if word.isascii():  # no marks, no joiners
        return list(range(len(word))), 0
    marks = _mark_set()
    starts: list[int] = []
    cut = 0
    joined = False  # the previous code point is a coeng/virama
    last = 0
    for i, ch in enumerate(word):
        if starts and (joined or ch in marks):
            if i - last < cap:
                joined = ch in _JOINERS
                continue
            cut += 1
        starts.append(i)
        last = i
        joined = ch in _JOINERS
    return starts, cut


def clusters(word: str, cap: int = MAX_CLUSTER_CHARS) -> list[str]:
    """``word`` cut into characters as a reader sees them: a letter with its combining marks (and, in Khmer
    and Burmese, with the subscript letter after a coeng/virama), at most ``cap`` code points each."""
    starts, _ = cluster_starts(word, cap)
    ends = starts[1:] + [len(word)]
    return [word[a:b] for a, b in zip(starts, ends)]


def char_ngrams(word: str, n: int, cap: int = MAX_CLUSTER_CHARS) -> list[str]:
    """The n-grams of ``word``'s characters (``clusters``) in order; a word of at most n characters stays whole."""
    return char_ngrams_counted(word, n, cap)[0]


def char_ngrams_counted(word: str, n: int, cap: int = MAX_CLUSTER_CHARS) -> tuple[list[str], int]:
    """``char_ngrams`` and the number of clusters the cap cut."""
    starts, cut = cluster_starts(word, cap)
    if len(starts) <= n:
        return [word], cut
    bounds = starts + [len(word)]
    return [word[bounds[i] : bounds[i + n]] for i in range(len(starts) - n + 1)], cut


def replace_tokens(tok: Tokenized, pieces: Sequence[Sequence[str]]) -> Tokenized:
    """Every token replaced by the pieces of its unigram (``pieces[u]`` for unigram u: itself, its words, its
    n-grams; none drops it): Python once per distinct token, a compiled pass over the token ids."""
    import pandas as pd

    lens = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
    piece_ptr = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(lens, out=piece_ptr[1:])
    flat = np.asarray([s for p in pieces for s in p], dtype=object)
    ids, uniq = pd.factorize(flat)
    new_ptr = np.zeros_like(tok.post_ptr)
    out = _expand(tok.codes, tok.post_ptr, piece_ptr, ids.astype(np.int32), new_ptr)
    return Tokenized(codes=out, post_ptr=new_ptr, unigrams=np.asarray(uniq, dtype=object))


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
