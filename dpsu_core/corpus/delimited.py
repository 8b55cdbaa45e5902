"""CSV and TSV files: the delimiter, the header decision and the quoting check from the first bytes, then Arrow's
streaming parse (the one parse of a delimited file: the loader and the column facts both read through here)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, first_line, short_name
from .columns import HeaderDecision, choose_columns, detect_header, label
from .csvscan import UnterminatedQuote, scan_csv
from .sources import SNIFF, RawFile
from .table import Sheet, Table

# Arrow parses a delimited file in blocks of this many bytes (more when a row is longer: a block must
# hold a whole row); a block is also the unit the loader tokenizes and frees.
_BLOCK_BYTES = 32 << 20
# an eighth of the file, within these bounds: on a small file the first block, parsed while the tokenizer
# threads wait, stays short (8 MB blocks: 16% faster end to end at 200k users, 9% slower at 1M, measured)
_MIN_BLOCK_BYTES = 8 << 20
_MAX_BLOCK_BYTES = 2**31 - 1  # Arrow's block size is a 32-bit number


def _delimiter(fmt: str, data: bytes) -> str:
    if fmt == "tsv":
        return "\t"
    first = data[:SNIFF].split(b"\n", 1)[0]
    if b"," not in first and b";" in first:
        return ";"
    return ","


def first_rows(data: bytes, delimiter: str, n: int = 50) -> list[list[str]]:
    """The first ``n`` rows of a delimited file as parsed by the csv module (from the first 64 KiB)."""
    head = data[:SNIFF].decode("utf-8", errors="ignore")
    if len(data) > SNIFF:
        head = head[: head.rfind("\n") + 1] or head
    rows: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO(head), delimiter=delimiter):
            if row:
                rows.append([c.strip() for c in row])
            if len(rows) >= n:
                break
    except csv.Error:
        if not rows:
            rows = [[c.strip() for c in head.split("\n", 1)[0].split(delimiter)]]
    return rows


def delimited_head(
    data: bytes, fmt: str, has_header: bool | None
) -> tuple[str, list[list[str]], HeaderDecision, list[str]]:
    """(delimiter, first rows, header decision, notes) of a CSV/TSV from its first bytes: the one delimiter and
    header detection of every engine (the Spark engine hands it the first bytes of its input)."""
    delimiter = _delimiter(fmt, data)
    notes = [] if delimiter != ";" else ["fields separated by ';' (detected from the first line)"]
    rows = first_rows(data, delimiter)
    decision = header_decision(rows, has_header)
    return delimiter, rows, decision, notes + [decision.reason]


def header_decision(rows: list[list[str]], has_header: bool | None) -> HeaderDecision:
    """As given, or detected from the first rows (``columns.detect_header``)."""
    if has_header is not None:
        given = "the first row is a header (as chosen)" if has_header else "no header row (as chosen)"
        return HeaderDecision(bool(has_header), given, detected=False)
    return detect_header(rows)


@dataclass
class _Delimited:
    """How a delimited file is laid out: its delimiter, header decision, columns and the Arrow block size."""

    name: str
    delimiter: str
    decision: HeaderDecision
    columns: list[str]  # names (header) or positions "0", "1", ...
    first: list[str]  # the first row as parsed
    multiline: bool  # some quoted field spans lines
    block: int
    notes: list[str]


def _delimited_layout(raw: RawFile, data: bytes, fmt: str, has_header) -> _Delimited:
    """The delimiter, the header decision and the quoting check (``csvscan``: an unterminated quote is an error
    naming its line, where Arrow alone would swallow the following rows into one field)."""
    name = raw.name or "the file"
    delimiter, rows, decision, notes = delimited_head(data, fmt, has_header)
    first = rows[0] if rows else []
    columns = first if decision.has_header else [str(i) for i in range(len(first))]
    try:
        shape = scan_csv(data, delimiter)
    except UnterminatedQuote as e:
        raise InputError(
            f'{name}: line {e.line}: {e}; close that quote (a quote inside a quoted field is written twice: "")'
        ) from None
    if shape.stray_quotes:
        notes.append(
            f"{shape.stray_quotes} quoted fields hold a quote that is not doubled (first on line "
            f'{shape.first_stray_line}); their text was read as far as the quoting allows: write "" for a quote '
            "inside a quoted field"
        )
    if shape.longest_span > 100:
        notes.append(
            f"a quoted field opening on line {shape.longest_span_line} spans {shape.longest_span} lines; "
            "if that is not one long post, a quote there is misplaced"
        )
    block = max(min(_BLOCK_BYTES, max(_MIN_BLOCK_BYTES, len(data) // 8)), 2 * shape.longest_row)  # a whole row
    if block > _MAX_BLOCK_BYTES:
        raise InputError(
            f"{name} has a row of {shape.longest_row >> 20:,} MB; rows up to 2 GB can be read: split that row "
            "or check its quoting"
        )
    return _Delimited(name, delimiter, decision, columns, first, shape.multiline_fields > 0, block, notes)


def _delimited_batches(
    lay: _Delimited, data: bytes, fmt: str, types: dict[int, pa.DataType], bad_rows: list[int], threads: bool = False
) -> Iterator[pa.RecordBatch]:
    """Arrow's batches of the columns in ``types`` (position -> type), named ``c<position>``; each row with the
    wrong number of fields is skipped and counted in ``bad_rows[0]``. The one parse of a delimited file: the
    loader and the preview's column facts both read through here."""
    import pyarrow.csv as pacsv

    def skip(row) -> str:
        bad_rows[0] += 1
        return "skip"

    internal = [f"c{i}" for i in range(len(lay.columns))]
    try:
        reader = pacsv.open_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(
                column_names=internal,
                skip_rows=1 if lay.decision.has_header else 0,
                block_size=lay.block,
                use_threads=threads,  # the loader's tokenizer threads work beside the parse: one thread there
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=lay.delimiter, newlines_in_values=lay.multiline, invalid_row_handler=skip
            ),
            convert_options=pacsv.ConvertOptions(
                include_columns=[internal[i] for i in types],
                column_types={internal[i]: t for i, t in types.items()},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        yield from reader
    except pa.ArrowException as e:
        raise InputError(
            f"{lay.name} cannot be parsed as {fmt.upper()} ({first_line(e)}); check its quoting and delimiter, "
            "or choose another format"
        ) from None


def malformed_note(bad_rows: int) -> str:
    return f"{bad_rows:,} malformed rows (wrong number of fields) were skipped"


def repeated_header_rows(columns: dict[int, pa.Array], names: list[str]) -> pa.Array | None:
    """Which rows repeat the header (every given column equal to its name; the first column's may start with a
    byte-order mark): files joined together, each with its header. None when no row does. The columns are
    compared in the order given (give the short ones first: the comparison stops at the first with no match)."""
    mask = None
    for i, arr in columns.items():
        # the second file's BOM is at the start of its header line (before a quote: kept as text)
        names_i = [names[i], "\ufeff" + names[i], f'\ufeff"{names[i]}"'] if i == 0 else [names[i]]
        same = pc.is_in(arr, value_set=_strings(names_i, arr.type))  # a null row: False (no null in the set)
        mask = same if mask is None else pc.and_(mask, same)
        if not pc.any(mask).as_py():
            return None
    return mask


def repeated_header_note(n: int, names: list[str]) -> str:
    rows = "1 row repeating the header (" if n == 1 else f"{n:,} rows repeating the header ("
    return (
        f"{rows}{', '.join(short_name(x) for x in names)}) {'was' if n == 1 else 'were'} dropped, not read as "
        "posts: files joined together, each with its header?"
    )


def read_delimited(raw: RawFile, data: bytes, fmt: str, user_col, text_col, has_header, row_is_user=False) -> Table:
    """A streamed Table of the user and text columns (text as large_string: a column may pass 2 GiB)."""
    lay = _delimited_layout(raw, data, fmt, has_header)
    header = lay.decision.has_header
    choice = choose_columns(lay.columns, user_col, text_col, header, row_is_user=row_is_user, first_row=lay.first)
    u, t = choice.user, choice.text
    types = {i: pa.large_string() if i == t else pa.string() for i in (u, t) if i is not None}
    table = Table(
        texts=None,
        users=None,
        format=fmt,
        header=lay.decision.reason,
        user_column=label(lay.columns, u) if u is not None else None,
        text_column=label(lay.columns, t),
        columns_guessed=choice.guessed,
        notes=lay.notes + list(choice.notes),
    )

    def batches() -> Iterator[tuple[pa.Array | None, pa.Array]]:
        bad_rows, repeated = [0], 0
        for batch in _delimited_batches(lay, data, fmt, types, bad_rows):
            texts = batch.column(f"c{t}")
            if u is None:
                yield None, texts
                continue
            users = batch.column(f"c{u}")
            # a repeated header row is dropped, not read as a post by a user named like the column (with a user
            # column only: in a text-only file a one-word post may well equal the column's name)
            again = repeated_header_rows({u: users, t: texts}, lay.columns) if header else None
            if again is not None:
                keep = pc.invert(again)
                repeated += len(texts) - pc.sum(keep).as_py()
                users, texts = users.filter(keep), texts.filter(keep)
            yield users, texts
        if bad_rows[0]:
            table.notes.append(malformed_note(bad_rows[0]))
        if repeated:
            table.notes.append(repeated_header_note(repeated, [lay.columns[i] for i in (u, t) if i is not None]))

    table.stream = batches
    return table


def delimited_columns(data: bytes, fmt: str, has_header: bool | None) -> list[str]:
    """The column names of a CSV/TSV (positions "0", "1", ... without a header row), for the column pickers."""
    rows = first_rows(data, _delimiter(fmt, data))
    first = rows[0] if rows else []
    if not header_decision(rows, has_header).has_header:
        return [str(i) for i in range(len(first))]
    return first


def delimited_sheet(
    raw: RawFile, data: bytes, fmt: str, has_header: bool | None, max_bytes: int, notes: list[str]
) -> Sheet:
    """Every column of a CSV/TSV as text, up to ``max_bytes`` of parsed text (``Sheet``)."""
    lay = _delimited_layout(raw, data, fmt, has_header)
    bad_rows, batches, size = [0], [], 0
    every = dict.fromkeys(range(len(lay.columns)), pa.string())
    stream = _delimited_batches(lay, data, fmt, every, bad_rows, threads=True)
    repeated = 0
    for batch in stream:
        again = repeated_header_rows(dict(enumerate(batch.columns)), lay.columns) if lay.decision.has_header else None
        if again is not None:
            repeated += pc.sum(again).as_py()
            batch = batch.filter(pc.invert(again))
        batches.append(batch)
        size += batch.nbytes
        if size > max_bytes:
            break
    complete = next(stream, None) is None  # nothing left past the cap
    names = [f"c{i}" for i in range(len(lay.columns))]
    schema = pa.schema([(n, pa.string()) for n in names])
    notes += [n for n in lay.notes if n != lay.decision.reason]  # the decision is a field of its own
    notes += [malformed_note(bad_rows[0])] if bad_rows[0] else []
    notes += [repeated_header_note(repeated, lay.columns)] if repeated else []
    return Sheet(fmt, lay.columns, pa.Table.from_batches(batches, schema=schema), complete, lay.decision, notes)


def _strings(values: list[str], type_: pa.DataType) -> pa.Array:
    """A string array built from its buffers: pa.array and Python scalars in compute calls import pandas (0.15 s
    of a release's start-up)."""
    data = [v.encode("utf-8") for v in values]
    large = pa.types.is_large_string(type_) or pa.types.is_large_binary(type_)
    offsets = np.zeros(len(data) + 1, dtype=np.int64 if large else np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return pa.Array.from_buffers(type_, len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])
