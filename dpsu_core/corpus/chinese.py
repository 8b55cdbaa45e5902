"""Chinese posts segmented over their UTF-8 bytes (``segment.segment_posts``'s path for a segmenter whose runs are
independent of each other: rjieba, ``Segmenter.lines``).

A compiled scan copies every run of Han of the chosen posts into one buffer, one run per line (a run longer than
``limit`` characters in pieces of ``limit``, one per line, as ``segment.pieces`` cuts it); the segmenter cuts the
lines, one call per ``CHUNK_BYTES`` of them (jieba cuts each block of Han on its own, and a line break is a word of
its own, so each line gets the words it would get alone, whatever the lines beside it); a compiled merge writes
every post back with each of its runs replaced by its words between spaces, checking byte for byte that the words
spell the run (any other outcome: None, and the caller takes the path of one call per run). No Python work per
post, per run or per word: what is left in Python is the segmenter's own lists of words and their joins. Each
post's words are still a function of its own text alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
import pyarrow as pa

from .intern import string_buffers
from .scripts import HAN, KANA, decode_at, script_of

CHUNK_BYTES = 32 * 1024  # gathered runs per segmenter call (``_cut_lines``)


@numba.njit(cache=True, nogil=True)
def _gather(data, offsets, rows, limit, out):  # pragma: no cover - compiled
    """The runs of Han and kana of posts ``rows`` into ``out``, each piece of at most ``limit`` characters followed
    by a line break. Returns (bytes written, runs longer than ``limit``)."""
    w = 0
    long_runs = 0
    for r in rows:
        i, end = offsets[r], offsets[r + 1]
        chars = 0  # characters of the current piece; 0: outside a run
        split = False
        while i < end:
            if data[i] < 0x80:
                if chars:
                    out[w] = 10
                    w += 1
                    chars = 0
                    split = False
                i += 1
                continue
            cp, nb = decode_at(data, i)
            s = script_of(cp)
            if s == HAN or s == KANA:
                if chars == limit:  # a new piece of a long run
                    out[w] = 10
                    w += 1
                    chars = 0
                    if not split:
                        long_runs += 1
                        split = True
                for k in range(nb):
                    out[w + k] = data[i + k]
                w += nb
                chars += 1
            elif chars:
                out[w] = 10
                w += 1
                chars = 0
                split = False
            i += nb
        if chars:
            out[w] = 10
            w += 1
    return w, long_runs


@numba.njit(cache=True, nogil=True)
def _merge(data, offsets, rows, limit, seg, out, out_offsets):  # pragma: no cover - compiled
    """Every post into ``out`` (its offsets into ``out_offsets``), the runs of posts ``rows`` (ascending) replaced by
    a space, their words from ``seg`` (the segmenter's words of the gathered lines, separated by spaces, each line
    ending in a line break, which becomes a space) and a space. Returns the bytes written, or -1 when the words do
    not spell the runs or ``seg`` holds more or fewer lines than the runs' pieces."""
    p = 0  # position in seg
    q = 0  # next of rows
    w = 0
    n = offsets.shape[0] - 1
    for j in range(n):
        out_offsets[j] = w
        i, end = offsets[j], offsets[j + 1]
        chosen = q < rows.shape[0] and rows[q] == j
        if chosen:
            q += 1
        while i < end:
            b = data[i]
            if not chosen or b < 0x80:
                out[w] = b
                w += 1
                i += 1
                continue
            cp, nb = decode_at(data, i)
            s = script_of(cp)
            if s != HAN and s != KANA:
                for k in range(nb):
                    out[w + k] = data[i + k]
                w += nb
                i += nb
                continue
            # a run from i: its end and its number of characters
            stop = i
            chars = 0
            while stop < end and data[stop] >= 0x80:
                cp2, nb2 = decode_at(data, stop)
                s2 = script_of(cp2)
                if s2 != HAN and s2 != KANA:
                    break
                stop += nb2
                chars += 1
            lines = (chars + limit - 1) // limit
            out[w] = 32
            w += 1
            k = i
            seen = 0
            while seen < lines:
                if p >= seg.shape[0]:
                    return -1
                x = seg[p]
                p += 1
                if x == 10 or x == 32:
                    if x == 10:
                        seen += 1
                    out[w] = 32
                    w += 1
                elif k < stop and data[k] == x:
                    out[w] = x
                    w += 1
                    k += 1
                else:
                    return -1
            if k != stop:
                return -1
            out[w] = 32
            w += 1
            i = stop
    out_offsets[n] = w
    if p != seg.shape[0]:
        return -1
    return w


def _cut_lines(buf: np.ndarray, lines: Callable[[str], str]) -> np.ndarray:
    """``lines`` over the gathered runs ``buf`` (UTF-8, one run per line), in pieces of about ``CHUNK_BYTES`` that
    end at a line break (the runs are independent: the same words as one call), as UTF-8 bytes.

    One call over a whole batch builds the segmenter's list of words (a Python string per word and per line) all at
    once: on the benchmark's 7 MB of Chinese, 60,000 page faults (0.1 s of system time) and 120 MB more peak
    memory than pieces of this size, which reuse the same memory (measured side by side; the words are the same)."""
    ends = np.flatnonzero(buf == 10) + 1  # the end of each line
    marks = np.searchsorted(ends, np.arange(CHUNK_BYTES, buf.shape[0], CHUNK_BYTES))
    bounds = np.unique(np.concatenate([[0], ends[marks[marks < ends.shape[0]]], [buf.shape[0]]]))
    view = buf.data  # a memoryview: each piece decoded without a copy of its bytes
    parts = [lines(str(view[a:b], "utf-8")).encode("utf-8") for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    return np.frombuffer(b" ".join(parts), dtype=np.uint8)  # as one call joins the words of its lines


def segment_rows(
    texts: pa.Array, rows: np.ndarray, lines: Callable[[str], str], limit: int
) -> tuple[pa.Array, int] | None:
    """``texts`` with the runs of Han (and kana) of the posts at ``rows`` (ascending) cut into words by ``lines``
    (many runs, one per line -> their words separated by spaces, the line breaks kept), and the number of runs cut
    in pieces of ``limit`` characters; None when the segmenter's words do not spell the runs (the caller then
    segments run by run)."""
    data, offsets = string_buffers(texts)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    chosen = int((offsets[rows + 1] - offsets[rows]).sum())
    gathered = np.empty(2 * chosen + 16, dtype=np.uint8)  # at most one line break per character (3 bytes or more)
    used, long_runs = _gather(data, offsets, rows, limit, gathered)
    seg = _cut_lines(gathered[:used], lines)
    total = int(offsets[-1] - offsets[0])
    out = np.empty(total + seg.shape[0] + 2 * used + 16, dtype=np.uint8)  # a run gains two spaces at most
    out_offsets = np.empty(len(texts) + 1, dtype=np.int64)
    size = _merge(data, offsets, rows, limit, seg, out, out_offsets)
    if size < 0:
        return None
    large = size >= 2**31 - 1
    kind = pa.large_string() if large else pa.string()
    offs = out_offsets if large else out_offsets.astype(np.int32)
    new = pa.Array.from_buffers(kind, len(texts), [None, pa.py_buffer(offs), pa.py_buffer(out[:size])])
    return (new if large or texts.type == kind else new.cast(texts.type)), int(long_runs)
