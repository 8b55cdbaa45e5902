"""Per-code-point tables the tokenizer's kernel reads: character classes and lower case.

``char_classes()`` is the class of every code point (space, word, symbol, apostrophe), defined by
Python's ``unicodedata`` in ``build_char_classes``. Building it walks 128k code points in Python
(about 0.4 s), so the table ships precomputed in ``_char_table.py`` as runs of equal classes, for
the Unicode version it was built with; on another Python whose Unicode version differs it is
rebuilt at first use. Regenerate the shipped file after changing the rule::

    python -m dpsu_core.corpus.charclass

``lower_table()`` maps every code point to its lower case exactly as Arrow's ``utf8_lower`` does
(one code point to one code point), so the kernel can fold case while it tokenizes instead of making
a lower-cased copy of the text. Reading it from Arrow (``build_lower_table``) lower-cases all 1.1M code
points, a tenth of a small release's time, so the code points it changes ship in ``_char_table.py`` too,
for the pyarrow version they were read from; under another pyarrow the table is read from Arrow at
first use.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import numpy as np

# Character classes, indexed by code point. IGNORED characters (format characters, category Cf, and
# variation selectors) are skipped: never part of a token, never a token, and no break inside a word
# (as in Unicode's word segmentation, where Format and Extend characters do not break a word).
# Control characters (Cc) separate like spaces. So the soft hyphen (U+00AD), the word joiner (U+2060), a byte
# order mark inside the text (U+FEFF) and the zero width space (U+200B) vanish from a word: "co\u00adop" and
# "co\u200bop" are "coop". The zero width space alone is a word break where a word break can hide in it: next to a
# letter of a script written without spaces between words (``UNSPACED``: Thai, Lao, Khmer, Burmese, Chinese,
# Japanese), where it is the optional break its writers put between words (the tokenizer's kernel decides,
# ``tokenize._zwsp_breaks``; the exported tokenizer with the same rule as a regex). ZWJ and ZWNJ (U+200D,
# U+200C) are ignored too, never a break: inside an emoji sequence or a Persian or Indic word they join.
SPACE, WORD, SYMBOL, APOS, IGNORED = 0, 1, 2, 3, 4
ZWSP = 0x200B
# Code point ranges (inclusive) of the scripts written without spaces between words, in which a zero width space
# next to a letter is a word break (the ranges of ``scripts.script_of``'s THAI, LAO, MYANMAR, KHMER, KANA, HAN).
UNSPACED: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x3005, 0x3007),  # ideographic iteration mark, closing mark, number zero
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA9E0, 0xA9FF),  # Myanmar extended B
    (0xAA60, 0xAA7F),  # Myanmar extended A
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth katakana
    (0x20000, 0x3FFFF),  # CJK extensions B-H
)
_VARIATION_SELECTORS = ((0x180B, 0x1810), (0xFE00, 0xFE10), (0xE0100, 0xE01F0))
N_CODE_POINTS = 0x110000
_TABLE_FILE = Path(__file__).with_name("_char_table.py")

_classes: np.ndarray | None = None
_lower: np.ndarray | None = None


def build_char_classes() -> np.ndarray:
    """uint8 class of every code point: word (letters, digits, marks), space, apostrophe, ignored, other symbol."""
    every = "".join(map(chr, range(N_CODE_POINTS)))
    cls = np.full(N_CODE_POINTS, SYMBOL, dtype=np.uint8)
    for m in re.finditer(r"[^\W_]+", every):  # str.isalnum(): letters and numbers
        cls[m.start() : m.end()] = WORD
    for cp in range(0x20000):  # marks, format and control characters (all below U+20000 but plane 14's)
        if cls[cp] == SYMBOL:
            cat = unicodedata.category(every[cp])
            if cat[0] == "M":
                cls[cp] = WORD
            elif cat == "Cf":
                cls[cp] = IGNORED
            elif cat == "Cc":
                cls[cp] = SPACE
    cls[0xE0000:0xE0080] = IGNORED  # plane 14 tag characters (Cf)
    for lo, hi in _VARIATION_SELECTORS:
        cls[lo:hi] = IGNORED
    for m in re.finditer(r"\s+", every):
        cls[m.start() : m.end()] = SPACE
    cls[[ord("'"), 0x2019, 0x02BC]] = APOS
    return cls


def char_classes() -> np.ndarray:
    """The class table: the shipped one when it matches this Python's Unicode version, else built here."""
    global _classes
    if _classes is None:
        from . import _char_table as shipped

        if shipped.UNICODE_VERSION == unicodedata.unidata_version:
            _classes = expand_runs(shipped.STARTS, shipped.CLASSES)
        else:  # pragma: no cover - depends on the Python running the tests
            _classes = build_char_classes()
    return _classes


def expand_runs(starts, classes: bytes) -> np.ndarray:
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.diff(np.append(starts, N_CODE_POINTS))
    return np.repeat(np.frombuffer(classes, dtype=np.uint8), lengths)


def table_source(cls: np.ndarray, lower: np.ndarray) -> str:
    """The text of ``_char_table.py`` for the class table ``cls`` and the lower-case table ``lower``."""
    import pyarrow as pa

    starts = np.flatnonzero(np.concatenate([[True], cls[1:] != cls[:-1]]))
    rows = [", ".join(map(str, starts[i : i + 16].tolist())) for i in range(0, starts.shape[0], 16)]
    body = "".join(f"    {r},\n" for r in rows)
    changed = np.flatnonzero(lower != np.arange(N_CODE_POINTS))
    return (
        '"""Generated by ``python -m dpsu_core.corpus.charclass`` (the tokenizer\'s character classes as runs, and '
        'the code points Arrow lower-cases): do not edit."""\n\n'
        f'UNICODE_VERSION = "{unicodedata.unidata_version}"\n'
        f"STARTS = (\n{body})\n"
        f'CLASSES = bytes.fromhex("{cls[starts].tobytes().hex()}")\n'
        f'LOWER_PYARROW = "{pa.__version__}"\n'
        f'LOWER_FROM = bytes.fromhex("{changed.astype("<u4").tobytes().hex()}")\n'
        f'LOWER_TO = bytes.fromhex("{lower[changed].astype("<u4").tobytes().hex()}")\n'
    )


def lower_table() -> np.ndarray:
    """int32 lower case of every code point, as Arrow's ``utf8_lower`` maps it (surrogates map to themselves):
    the shipped one when it was read from this pyarrow version, else ``build_lower_table()``."""
    global _lower
    if _lower is None:
        import pyarrow as pa

        from . import _char_table as shipped

        if shipped.LOWER_PYARROW == pa.__version__:
            table = np.arange(N_CODE_POINTS, dtype=np.int32)
            changed = np.frombuffer(shipped.LOWER_FROM, dtype="<u4")
            table[changed] = np.frombuffer(shipped.LOWER_TO, dtype="<u4").astype(np.int32)
            _lower = table
        else:  # pragma: no cover - depends on the pyarrow installed
            _lower = build_lower_table()
    return _lower


def build_lower_table() -> np.ndarray:
    """``lower_table()`` read from Arrow: every code point lower-cased by ``utf8_lower``.

    Raises RuntimeError if Arrow maps some code point to more than one, which a per-code-point table
    cannot express (the tokenizer then lower-cases with Arrow instead).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    cps = np.arange(N_CODE_POINTS, dtype=np.uint32)
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]
    utf8 = cps.tobytes().decode("utf-32-le").encode("utf-8")
    width = 1 + (cps >= 0x80).astype(np.int32) + (cps >= 0x800) + (cps >= 0x10000)
    offsets = np.zeros(cps.shape[0] + 1, dtype=np.int32)
    np.cumsum(width, out=offsets[1:])
    chars = pa.StringArray.from_buffers(cps.shape[0], pa.py_buffer(offsets), pa.py_buffer(utf8))
    lowered = pc.utf8_lower(chars)
    if not (pc.utf8_length(lowered).to_numpy() == 1).all():
        raise RuntimeError("Arrow's utf8_lower maps a code point to several; no per-code-point table")
    lo = np.frombuffer(lowered.buffers()[1], dtype=np.int32)[: cps.shape[0] + 1]
    data = lowered.buffers()[2].to_pybytes()[lo[0] : lo[-1]]
    table = np.arange(N_CODE_POINTS, dtype=np.int32)
    table[cps] = np.frombuffer(data.decode("utf-8").encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
    return table


if __name__ == "__main__":  # pragma: no cover - regenerates the shipped table
    _TABLE_FILE.write_text(table_source(build_char_classes(), build_lower_table()))
    print(f"wrote {_TABLE_FILE}")
