"""Which script each post and each token is written in: compiled scans over the UTF-8 bytes of an Arrow
string array (``segment`` decides from them which posts and words go to which word segmenter)."""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

from .intern import string_buffers

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
# Bits of a post's mask beside the scripts': the post holds a run of two or more characters of Chinese or
# Japanese (Han, kana) or of Thai, which a word segmenter cuts (a run of one character is one word anyway).
RUN_CJK, RUN_THAI = 16, 17


@numba.njit(cache=True, nogil=True, inline="always")
def script_of(cp):  # pragma: no cover - compiled
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
def decode_at(data, i):  # pragma: no cover - compiled
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
        prev = -1
        while i < end:
            if data[i] < 0x80:
                i += 1
                prev = -1
                continue
            cp, nb = decode_at(data, i)
            i += nb
            s = script_of(cp)
            if s == HAN or s == KANA or s == THAI or s == LAO or s == KHMER or s == MYANMAR or s == HANGUL:
                mask |= np.int64(1) << s
                if (s == HAN or s == KANA) and (prev == HAN or prev == KANA):
                    mask |= np.int64(1) << RUN_CJK
                elif s == THAI and prev == THAI:
                    mask |= np.int64(1) << RUN_THAI
            prev = s
        out[j] = mask


@numba.njit(cache=True, nogil=True)
def _first_scripts(data, offsets, out):  # pragma: no cover - compiled
    """out[j] = script of token j: its first letter's (kana beats Han: a Japanese word; Hangul beats any: a
    Korean word with its particle, 'bts의'), else DIGITS or OTHER."""
    for j in range(offsets.shape[0] - 1):
        i, end = offsets[j], offsets[j + 1]
        found = -1
        while i < end:
            cp, nb = decode_at(data, i)
            i += nb
            s = script_of(cp)
            if s == HANGUL:
                found = HANGUL
                break
            if s == KANA and (found < 0 or found == HAN):
                found = KANA
            elif s >= 0 and s != DIGITS and found < 0:
                found = s
            elif s == DIGITS and found < 0:
                found = -2
        out[j] = found if found >= 0 else (DIGITS if found == -2 else OTHER)


def post_scripts(texts: pa.Array) -> np.ndarray:
    """int64 per post: bit s set when the post holds a letter of script s (Han, kana, Thai, Lao, Khmer, Burmese, Hangul),
    bits RUN_CJK and RUN_THAI when it holds a run of two or more characters of those (see ``_post_scripts``)."""
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


@numba.njit(cache=True, nogil=True)
def tokens_per_script(codes, scripts, n_scripts):  # pragma: no cover - compiled
    # one pass, no copy (np.bincount would first copy the int32 ids to int64: a 330 MB array at 1M users)
    out = np.zeros(n_scripts, dtype=np.int64)
    for c in codes:
        out[scripts[c]] += 1
    return out
