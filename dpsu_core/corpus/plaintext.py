"""Plain-text files (one post per line, or ``user<TAB>text`` lines) and pre-tokenized sequence files."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ColumnError
from ..wording import opt
from .table import Sheet, Table


def _lines(data: bytes) -> pa.Array:
    text = data.decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return pa.array(lines, type=pa.string())


def _no_columns(fmt: str, user_col, text_col) -> None:
    if user_col is not None or text_col is not None:
        raise ColumnError(
            f"{fmt} files have no columns, so {opt('user_col')} and {opt('text_col')} cannot be used; "
            f"drop them, or choose {opt('format')} csv or tsv"
        )


def read_text(data: bytes, user_col, text_col) -> Table:
    _no_columns("plain-text", user_col, text_col)
    lines = _lines(data)
    nonblank = pc.invert(_blank(lines))
    lines = lines.filter(nonblank)
    sample = lines.slice(0, 1000)
    tabbed = len(sample) > 0 and bool(pc.all(pc.match_substring(sample, "\t")).as_py())
    if tabbed:
        parts = pc.extract_regex(lines, pattern=r"(?s)^(?P<user>[^\t]*)\t(?P<text>.*)$")
        notes = ["plain text read as 'user<TAB>text' lines (every line has a tab)"]
        no_tab = int(parts.null_count)
        if no_tab:
            notes.append(f"{no_tab} lines without a tab have no user id and were dropped")
        return Table(
            texts=pc.struct_field(parts, "text"),
            users=pc.struct_field(parts, "user"),
            format="text",
            user_column="user (before the tab)",
            text_column="text (after the tab)",
            notes=notes,
        )
    return Table(
        texts=lines,
        users=None,
        format="text",
        notes=[
            "plain text without user ids: each line is one post and its own user; "
            "write 'user<TAB>text' lines to group posts by user"
        ],
    )


def _blank(values: pa.Array) -> pa.Array:
    return pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0), True)


def read_sequences(data: bytes, user_col, text_col) -> Table:
    _no_columns("sequence", user_col, text_col)
    lines = _lines(data)
    notes = ["pre-tokenized sequences: one user per line, tokens taken as given (no text preprocessing)"]
    marker = pc.match_substring_regex(lines, pattern=r"(?i)^%\s*sequences\b")
    hits = np.flatnonzero(marker.to_numpy(zero_copy_only=False))
    if hits.size:
        start = int(hits[0]) + 1
        notes.append(f"{start} header lines up to the '% Sequences' line skipped")
        lines = lines.slice(start)
    keep = pc.and_(pc.invert(_blank(lines)), pc.invert(pc.starts_with(lines, "%")))
    lines = lines.filter(keep)
    return Table(texts=lines, users=None, format="sequences", pretokenized=True, notes=notes)


def lines_sheet(fmt: str, data: bytes, notes: list[str]) -> Sheet:
    """A text or sequence file for the column facts: no columns, its lines as the loader reads them."""
    if fmt == "text":
        lines = _lines(data)
        return Sheet(fmt, [], pa.table({"line": lines.filter(pc.invert(_blank(lines)))}), True, None, notes)
    seqs = read_sequences(data, None, None)
    assert seqs.texts is not None
    return Sheet(fmt, [], pa.table({"line": seqs.texts}), True, None, notes + seqs.notes)
