"""Readers: a file (path, bytes or upload) -> a column of user ids and a column of post texts.

Steps: get the bytes (unpacking a single-member .zip or a .gz: ``sources``), detect the format (``formats``),
decode (UTF-8, UTF-8 with BOM, UTF-16 with BOM; rows that are not UTF-8 as cp1252, counted:
``decode``), decide whether there is a header row and pick the user and text columns
(``columns``: given by name or position, or guessed from known names only),
and parse with Arrow's multithreaded CSV/JSON/Parquet readers (one module per format below). Nothing here
tokenizes; ``load.load_corpus`` glues readers, tokenizer and ``build_corpus``. This module dispatches to the
format's reader and re-exports the readers' public names.

Formats (``FORMATS``):
  csv, tsv     delimited text with or without a header row (``delimited``).
  jsonl        one JSON object per line (a .json file holding one array of objects also works) (``jsonl``).
  parquet      any Parquet file (``parquet``).
  text         one post per line, each line its own user; or ``user<TAB>text`` lines (``plaintext``).
  sequences    pre-tokenized: one user per line, space-separated tokens; lines
               starting with % and blank lines are not users, and when a
               "% Sequences" line exists everything above it is a header
               (the MSNBC layout). Tokens are taken as given (``plaintext``).
"""

from __future__ import annotations

from .columns import (
    TEXT_COLUMN_NAMES,
    USER_COLUMN_NAMES,
    ColumnChoice,
    HeaderDecision,
    choose_columns,
    detect_header,
    guess_columns,
    label,
)
from .decode import decode, to_utf8
from .delimited import (
    delimited_columns,
    delimited_head,
    delimited_sheet,
    first_rows,
    header_decision,
    malformed_note,
    read_delimited,
    repeated_header_note,
    repeated_header_rows,
)
from .formats import FORMATS, detect_format
from .jsonl import json_keys, json_table, jsonl_sheet, read_jsonl, repair_surrogates
from .limits import DEFAULT_LIMITS, ReadLimits, check_json_depth
from .parquet import parquet_schema, parquet_sheet, read_parquet
from .plaintext import lines_sheet, read_sequences, read_text
from .sources import RawFile, check_head, read_source
from .table import SHEET_BYTES, Sheet, Table

__all__ = [
    "FORMATS",
    "SHEET_BYTES",
    "TEXT_COLUMN_NAMES",
    "USER_COLUMN_NAMES",
    "ColumnChoice",
    "HeaderDecision",
    "RawFile",
    "Sheet",
    "Table",
    "check_head",
    "choose_columns",
    "decode",
    "delimited_head",
    "detect_format",
    "detect_header",
    "first_rows",
    "guess_columns",
    "header_decision",
    "json_keys",
    "json_table",
    "label",
    "malformed_note",
    "peek_columns",
    "read_sheet",
    "read_source",
    "read_table",
    "repair_surrogates",
    "repeated_header_note",
    "repeated_header_rows",
    "to_utf8",
]


def peek_columns(
    source, format: str = "auto", has_header: bool | None = None, limits: ReadLimits = DEFAULT_LIMITS
) -> list[str]:
    """Column names of a tabular file, for pre-filling column pickers.

    Header-less files (``has_header=False``) give positions "0", "1", ...;
    plain-text and sequence files have no columns and give [].
    """
    raw = read_source(source, limits)
    fmt, _ = detect_format(raw, format)
    if fmt == "parquet":
        return list(parquet_schema(raw).names)
    if fmt in ("text", "sequences"):
        return []
    data, _, _ = to_utf8(raw)
    if fmt == "jsonl":
        check_json_depth(data, raw.name or "the file", limits)
        return json_keys(data)
    return delimited_columns(data, fmt, has_header)


def read_table(
    source,
    *,
    format: str = "auto",
    user_col=None,
    text_col=None,
    has_header: bool | None = None,
    row_is_user: bool = False,
    limits: ReadLimits = DEFAULT_LIMITS,
    stream: bool = False,
) -> Table:
    """Read ``source`` into a Table of (user, text) rows (``users`` None when each row is its own user), within
    ``limits`` (file size, decompressed size, JSON depth); with ``stream`` a delimited file comes as batches
    (``Table.batches``)."""
    raw = read_source(source, limits)
    fmt, note = detect_format(raw, format)
    notes = list(raw.notes) + ([note] if note else [])
    if fmt == "parquet":
        table = read_parquet(raw, user_col, text_col, row_is_user, limits)
    else:
        decoded = decode(raw)
        data = decoded.data
        notes += decoded.notes
        if fmt in ("csv", "tsv"):
            table = read_delimited(raw, data, fmt, user_col, text_col, has_header, row_is_user)
            if not stream:
                table.materialize()
        elif fmt == "jsonl":
            check_json_depth(data, raw.name or "the file", limits)
            table = read_jsonl(raw, data, user_col, text_col, row_is_user)
        elif fmt == "text":
            table = read_text(data, user_col, text_col)
        else:
            table = read_sequences(data, user_col, text_col)
        table.encoding, table.encoding_fallback = decoded.encoding, decoded.fallback_rows > 0
        table.encoding_fallback_rows = decoded.fallback_rows
    table.notes = notes + table.notes
    return table


def read_sheet(
    source,
    *,
    format: str = "auto",
    has_header: bool | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
    max_bytes: int = SHEET_BYTES,
) -> Sheet:
    """Every column of a CSV, TSV, JSON Lines or Parquet file as text (``Sheet``); a text or sequence file gives
    no columns and its lines as read by the loader."""
    raw = read_source(source, limits)
    fmt, note = detect_format(raw, format)
    notes = list(raw.notes) + ([note] if note else [])
    if fmt == "parquet":
        columns, table, complete = parquet_sheet(raw, limits, max_bytes)
        return Sheet(fmt, columns, table, complete, None, notes)
    decoded = decode(raw)
    if decoded.note:
        notes.append(decoded.note)
    if fmt in ("csv", "tsv"):
        return delimited_sheet(raw, decoded.data, fmt, has_header, max_bytes, notes)
    if fmt == "jsonl":
        return jsonl_sheet(raw, decoded.data, limits, notes)
    return lines_sheet(fmt, decoded.data, notes)
