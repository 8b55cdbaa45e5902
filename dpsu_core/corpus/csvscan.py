"""One compiled pass over a delimited file's bytes before Arrow parses it: quoting and row sizes.

Arrow's CSV parser is lenient: a field whose opening quote is never closed swallows every following
line until the next quote character (or the end of the file) without a word. ``scan_csv`` follows the
RFC 4180 quoting rules (a quote opens a field only at its start; inside, ``""`` is a literal quote; a
closing quote is followed by the delimiter, a line break or the end) and finds:

- an unterminated quote: a quoted field still open at the end of the file, or one that spans lines and
  is then "closed" by a quote followed by other text: the signature of a missing closing quote. Both are
  errors naming the line where the field opened.
- quotes that are not doubled inside a quoted field on one line (``"say "hi" now"``): Arrow reads the
  row with the text garbled; counted, for a note.
- the longest row in bytes (so Arrow's block size can hold it) and whether any quoted field spans lines
  (only then does Arrow need its slower newlines-in-values mode).

Lines are counted from 1 at the start of the file (the header, if any, is line 1), as an editor shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

_OK, _OPEN_AT_END, _CLOSED_BADLY = 0, 1, 2


@dataclass(frozen=True)
class CsvShape:
    longest_row: int  # bytes, line break included
    multiline_fields: int  # quoted fields spanning more than one line
    longest_span: int  # lines spanned by the longest multi-line field
    longest_span_line: int  # the line where it opened
    stray_quotes: int  # quoted fields with an undoubled quote inside, within one line
    first_stray_line: int


class UnterminatedQuote(ValueError):
    """A quoted field that is never properly closed. ``line``: where it opened (1-based)."""

    def __init__(self, line: int, closed_line: int | None) -> None:
        self.line, self.closed_line = line, closed_line
        if closed_line is None:
            where = "its closing quote is missing (the field runs to the end of the file)"
        else:
            where = (
                f"it runs on to line {closed_line}, where a quote followed by more text ends it "
                "(a missing closing quote)"
            )
        super().__init__(f"the quoted field that opens on line {line} is never closed: {where}")


def scan_csv(data, delimiter: str, quote: str = '"') -> CsvShape:
    """Check the quoting of delimited ``data`` (bytes-like); raises ``UnterminatedQuote``."""
    buf = np.frombuffer(data, dtype=np.uint8)
    out = np.zeros(8, dtype=np.int64)
    _scan(buf, ord(delimiter), ord(quote), out)
    status = int(out[0])
    if status == _OPEN_AT_END:
        raise UnterminatedQuote(int(out[1]), None)
    if status == _CLOSED_BADLY:
        raise UnterminatedQuote(int(out[1]), int(out[2]))
    return CsvShape(
        longest_row=int(out[3]),
        multiline_fields=int(out[4]),
        longest_span=int(out[5]),
        longest_span_line=int(out[6]),
        stray_quotes=int(out[7]) >> 32,
        first_stray_line=int(out[7]) & 0xFFFFFFFF,
    )


@numba.njit(cache=True, nogil=True)
def _scan(data, delim, quote, out):  # pragma: no cover - compiled
    """States: 0 at a field's start, 1 in an unquoted field, 2 in a quoted field, 3 just after a quote in a
    quoted field. ``out``: status, open line, closing line, longest row, multi-line fields, longest span,
    its line, (stray quotes << 32 | first stray line). Ordinary bytes are skipped by tight inner loops
    (one table look-up each)."""
    special = np.zeros(256, dtype=np.uint8)  # 1 delimiter, 2 quote, 3 line break
    special[delim] = 1
    special[quote] = 2
    special[10] = 3
    special[13] = 3
    n = data.shape[0]
    line = 1
    state = 0
    row_start = 0
    longest = 0
    open_line = 0
    multiline = 0
    span = 0
    span_line = 0
    stray = 0
    first_stray = 0
    i = 0
    while i < n:
        if state == 2:  # inside quotes: only a quote or a line break matters
            while i < n:
                b = data[i]
                if special[b] >= 2:
                    if b == quote:
                        break
                    if b == 10 or i + 1 == n or data[i + 1] != 10:  # "\r\n" counts once, at its "\n"
                        line += 1
                i += 1
            if i == n:
                break
            state = 3
            i += 1
            continue
        if state == 1:  # unquoted: skip to the next delimiter or line break
            while i < n and special[data[i]] != 1 and special[data[i]] != 3:
                i += 1
            if i == n:
                break
        b = data[i]
        if b == 13 and i + 1 < n and data[i + 1] == 10:  # "\r\n": the "\n" ends the line
            i += 1
            continue
        kind = special[b]
        if state == 3:
            if b == quote:  # a doubled quote: a literal one
                state = 2
                i += 1
                continue
            if kind == 1 or kind == 3:
                if line > open_line:
                    multiline += 1
                    if line - open_line + 1 > span:
                        span = line - open_line + 1
                        span_line = open_line
            else:
                if line > open_line:  # closed on a later line by a quote followed by text
                    out[0] = 2
                    out[1] = open_line
                    out[2] = line
                    return
                stray += 1
                if first_stray == 0:
                    first_stray = line
                state = 1  # Arrow reads on as an unquoted field
                i += 1
                continue
        if kind == 3:
            if i + 1 - row_start > longest:
                longest = i + 1 - row_start
            row_start = i + 1
            line += 1
            state = 0
        elif kind == 1:
            state = 0
        elif state != 1 and kind == 2:  # a quote at a field's start opens a quoted field
            state = 2
            open_line = line
        else:
            state = 1
        i += 1
    if state == 2:
        out[0] = 1
        out[1] = open_line
        return
    if state == 3 and line > open_line:
        multiline += 1
        if line - open_line + 1 > span:
            span = line - open_line + 1
            span_line = open_line
    if n - row_start > longest:
        longest = n - row_start
    out[0] = 0
    out[3] = longest
    out[4] = multiline
    out[5] = span
    out[6] = span_line
    out[7] = (np.int64(stray) << 32) | first_stray
