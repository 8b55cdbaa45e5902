"""UTF-8 with a per-row fallback: one bad byte must not turn a whole file into Latin-1 mojibake.

The file is decoded as UTF-8 in one C pass (``surrogateescape`` keeps each invalid byte as a lone
surrogate); only the rows (lines) holding an invalid byte are decoded again as Windows-1252 (cp1252),
or Latin-1 where a byte is undefined in cp1252. Python touches the bad rows only.

``decode(raw)`` is the readers' one decoding of a text file: UTF-16 with a byte-order mark converted, a UTF-8 one
removed, lines ending in CR alone read as line breaks, binary content refused.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from ..errors import EncodingError
from .sources import RawFile, check_not_binary

_BAD = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True)
class Decoded:
    data: bytes  # UTF-8
    encoding: str  # "utf-8"; "cp1252"/"latin-1" when no row with non-ASCII bytes was UTF-8
    fallback_rows: int  # rows decoded with the fallback
    cr_only: bool = False  # the lines ended in CR alone (old Mac OS) and were read as line breaks

    @property
    def notes(self) -> list[str]:
        out = [self.note] if self.note else []
        if self.cr_only:
            out.append("the lines end in CR alone (old Mac OS line endings): each CR was read as a line break")
        return out

    @property
    def note(self) -> str | None:
        if not self.fallback_rows:
            return None
        if self.encoding != "utf-8":
            return (
                f"the file is not valid UTF-8: its {self.fallback_rows:,} rows with non-ASCII characters were decoded as "
                f"{self.encoding}; if characters look wrong, re-save the file as UTF-8"
            )
        rows = "1 row was" if self.fallback_rows == 1 else f"{self.fallback_rows:,} rows were"
        return (
            f"{rows} not valid UTF-8 and decoded as cp1252 (Windows-1252) one row at a time; all other rows "
            "are UTF-8. If characters look wrong in those rows, re-save the file as UTF-8"
        )


def _legacy(raw: bytes) -> tuple[str, str]:
    try:
        return raw.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def decode_rows(data: bytes) -> Decoded:
    """``data`` (not valid UTF-8 as a whole) as UTF-8, decoding each row with an invalid byte as cp1252."""
    text = data.decode("utf-8", "surrogateescape")
    pieces: list[str] = []
    pos = 0
    bad_rows = 0
    used = set()
    while True:
        m = _BAD.search(text, pos)
        if m is None:
            break
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end
        pieces.append(text[pos:start])
        row, enc = _legacy(text[start:end].encode("utf-8", "surrogateescape"))
        used.add(enc)
        pieces.append(row)
        bad_rows += 1
        pos = end
    pieces.append(text[pos:])
    out = "".join(pieces).encode("utf-8")
    encoding = "utf-8"
    if bad_rows and bad_rows == _rows_with_non_ascii(data):
        encoding = "latin-1" if used == {"latin-1"} else "cp1252"
    return Decoded(out, encoding, bad_rows)


def _rows_with_non_ascii(data: bytes) -> int:
    arr = np.frombuffer(data, dtype=np.uint8)
    high = np.flatnonzero(arr >= 0x80)
    if high.size == 0:
        return 0
    newlines = np.flatnonzero(arr == 0x0A)
    return int(np.unique(np.searchsorted(newlines, high)).size)


def to_utf8(raw: RawFile) -> tuple[bytes, str, bool]:
    """UTF-8 bytes of a text file (BOM removed), the source encoding, and whether a fallback was used."""
    d = decode(raw)
    return d.data, d.encoding, d.fallback_rows > 0


def decode(raw: RawFile) -> Decoded:
    """UTF-8 bytes of a text file (BOM removed); rows that are not UTF-8 decoded one by one (counted)."""
    data = raw.data
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        try:
            return Decoded(data.decode("utf-16").encode("utf-8"), "utf-16", 0)
        except UnicodeDecodeError:
            raise EncodingError(
                f"{raw.name or 'the file'} starts with a UTF-16 mark but is not valid UTF-16; re-save it as UTF-8"
            ) from None
    check_not_binary(raw)
    if data[:3] == codecs.BOM_UTF8:
        data = data[3:]
        encoding = "utf-8-sig"
    else:
        encoding = "utf-8"
    cr_only = b"\n" not in data and b"\r" in data
    if cr_only:  # old Mac OS line endings: Arrow's and csv's readers would see one row
        data = data.replace(b"\r", b"\n")
    if data.isascii() or _valid_utf8(data):
        return Decoded(data, encoding, 0, cr_only)
    return replace(decode_rows(data), cr_only=cr_only)


def _valid_utf8(data: bytes) -> bool:
    """UTF-8 validity checked by Arrow in place (no decoded copy of the file)."""
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    arr = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True
