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

from collections.abc import Callable
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


PARALLEL_MIN_BYTES = 16 << 20  # below this one thread scans the whole file


def scan_csv(data, delimiter: str, quote: str = '"') -> CsvShape:
    """Check the quoting of delimited ``data`` (bytes-like); raises ``UnterminatedQuote``.

    A large file is scanned as two halves in two threads, split just after a line break: the second half
    is scanned as if a row started there, which holds when the first half ends outside quotes (then the
    figures combine, line numbers shifted by the first half's lines); when the split falls inside a
    quoted field one thread scans the whole file again, so the result is always the single pass's."""
    buf = np.frombuffer(data, dtype=np.uint8)
    d, q = ord(delimiter), ord(quote)
    cut = _split_point(data) if buf.shape[0] >= PARALLEL_MIN_BYTES and isinstance(data, (bytes, bytearray)) else -1
    if cut > 0:
        from concurrent.futures import ThreadPoolExecutor

        outs = [np.zeros(_OUT, dtype=np.int64) for _ in range(2)]
        with ThreadPoolExecutor(max_workers=2) as pool:
            for f in [pool.submit(_scan, part, d, q, out) for part, out in zip((buf[:cut], buf[cut:]), outs)]:
                f.result()
        out = _combined(*outs) if outs[0][0] != _OPEN_AT_END else None  # a quoted field spans the cut
        if out is not None:
            return _shape(out)
    out = np.zeros(_OUT, dtype=np.int64)
    _scan(buf, d, q, out)
    return _shape(out)


def scan_csv_windows(
    data, delimiter: str, quote: str = '"', window: int = 64 << 20, done: Callable[[int, int], None] | None = None
) -> CsvShape:
    """``scan_csv`` over ``data`` (a mapped file) one window of about ``window`` bytes at a time, each cut just
    after a line break, calling ``done(start, end)`` after each (the caller drops those pages: a mapped 2 GB file
    then never counts whole in the process's memory). A window that starts inside a quoted field (a field spanning
    the cut) makes it scan the whole of ``data`` in one pass, so the result is always the single pass's."""
    buf = np.frombuffer(data, dtype=np.uint8)
    d, q = ord(delimiter), ord(quote)
    n = buf.shape[0]
    acc: np.ndarray | None = None
    start = 0
    while start < n:
        end = n
        if n - start > window:
            nl = data.find(b"\n", start + window)
            end = n if nl < 0 else nl + 1
        out = np.zeros(_OUT, dtype=np.int64)
        _scan(buf[start:end], d, q, out)
        if done is not None:
            done(start, end)
        if acc is not None and acc[0] == _OPEN_AT_END:  # the previous window ended inside a quoted field
            return scan_csv(data, delimiter, quote)
        acc = out if acc is None else _combined(acc, out)
        if acc[0] == _CLOSED_BADLY:
            break
        start = end
    return _shape(acc if acc is not None else np.zeros(_OUT, dtype=np.int64))


_OUT = 9  # status, open line, closing line, longest row, multi-line fields, longest span, its line, stray, lines


def _split_point(data) -> int:
    """Just after the first line break at or past the middle of ``data``; -1 when there is none."""
    nl = data.find(b"\n", len(data) // 2)
    return nl + 1 if 0 <= nl < len(data) - 1 else -1


def _combined(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The single pass's ``out`` from the two halves' (the first ended outside quotes, at a row's start)."""
    if a[0] != _OK:  # the first error in the file is in the first half
        return a
    shift = a[8] - 1  # lines of the first half: the second half's line 1 is the file's line a[8]
    out = b.copy()
    if b[0] != _OK:
        out[1] = b[1] + shift
        out[2] = b[2] + shift if b[0] == _CLOSED_BADLY else b[2]
        return out
    out[3] = max(a[3], b[3])
    out[4] = a[4] + b[4]
    if b[5] > a[5]:
        out[6] = b[6] + shift
    else:
        out[5], out[6] = a[5], a[6]
    stray_a, first_a = a[7] >> 32, a[7] & 0xFFFFFFFF
    stray_b, first_b = b[7] >> 32, b[7] & 0xFFFFFFFF
    first = first_a if stray_a else (first_b + shift if stray_b else 0)
    out[7] = ((stray_a + stray_b) << 32) | first
    out[8] = b[8] + shift
    return out


def _shape(out: np.ndarray) -> CsvShape:
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
    its line, (stray quotes << 32 | first stray line), the line at the end. Ordinary bytes are skipped by tight inner loops
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
    out[8] = line
