"""A look at a file before loading it: the first rows as parsed, the header decision, the columns a
choice would use, per-column facts and the checks on that choice, all from the first rows (at most
``SAMPLE_ROWS``). Everything here is raw data: NOT private, never exported.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

import pyarrow as pa

from ..errors import ColumnError, ParameterError
from .columns import (
    ColumnFacts,
    SanityWarning,
    apply_user_pattern,
    check_user_pattern,
    choose_columns,
    column_facts,
    column_warnings,
    guess_columns,
    label,
)
from .readers import _delimiter, decode, detect_format, first_rows, header_decision, read_source

SAMPLE_ROWS = 5000  # rows read for the facts and checks of the preview
SAMPLE_BYTES = 4 << 20
SHOWN_ROWS = 20


@dataclass(frozen=True)
class Preview:
    format: str
    columns: list[str]  # names (header) or positions "0", "1", ... (no header); [] for text/sequences
    rows: list[list[str]]  # the sample, as parsed (header excluded)
    complete: bool  # the sample is the whole file
    has_header: bool | None = None  # delimited files only
    header_reason: str = ""
    header_detected: bool = True
    user_col: int | None = None  # the choice as resolved (a position in ``columns``), or None
    text_col: int | None = None
    guess_user: int | None = None  # the columns known names point to (never an unnamed one), or None
    guess_text: int | None = None
    guessed: bool = False
    choice_error: str = ""  # why no choice could be made (the caller asks the user)
    facts: list[ColumnFacts] = field(default_factory=list)  # every column
    warnings: list[SanityWarning] = field(default_factory=list)  # checks of the chosen columns
    notes: list[str] = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        """Unique display names of the columns: the name, else the position."""
        if not self.has_header and self.has_header is not None:
            return [f"column {i}" for i in range(len(self.columns))]
        names = [label(self.columns, i) for i in range(len(self.columns))]
        return [f"{n} (column {i})" if names.count(n) > 1 else n for i, n in enumerate(names)]

    @property
    def sample_note(self) -> str:
        return "" if self.complete else f"in the first {len(self.rows):,} rows"


def _cut(data: bytes) -> tuple[bytes, bool]:
    if len(data) <= SAMPLE_BYTES:
        return data, True
    head = data[:SAMPLE_BYTES]
    return head[: head.rfind(b"\n") + 1] or head, False


def _delimited_rows(text: str, delimiter: str) -> list[list[str]]:
    rows: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO(text), delimiter=delimiter):
            if row:
                rows.append(row)
            if len(rows) > SAMPLE_ROWS:
                break
    except csv.Error:
        pass  # an unterminated quote in the sample: show what parsed
    return rows


def preview(
    source,
    *,
    format: str = "auto",
    has_header: bool | None = None,
    user_col=None,
    text_col=None,
    row_is_user: bool = False,
    user_pattern: str | None = None,
) -> Preview:
    """The preview of ``source`` with the given (or guessed) columns; a failed choice is reported, not raised."""
    raw = read_source(source)
    fmt, note = detect_format(raw, format)
    notes = list(raw.notes) + ([note] if note else [])
    decision = None
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(pa.BufferReader(raw.data))
        batch = next(pf.iter_batches(batch_size=SAMPLE_ROWS + 1), None)
        columns = [str(c) for c in pf.schema_arrow.names]
        rows = [[_cell(v) for v in r.values()] for r in (batch.to_pylist() if batch is not None else [])]
        complete = pf.metadata.num_rows <= SAMPLE_ROWS
    elif fmt in ("text", "sequences"):
        d = decode(raw)
        sample, complete = _cut(d.data)
        lines = [ln for ln in sample.decode("utf-8").splitlines() if ln.strip()][: SAMPLE_ROWS + 1]
        return Preview(
            fmt, [], [[ln] for ln in lines[:SAMPLE_ROWS]], complete and len(lines) <= SAMPLE_ROWS, notes=notes
        )
    else:
        d = decode(raw)
        if d.note:
            notes.append(d.note)
        sample, complete = _cut(d.data)
        if fmt == "jsonl":
            records = [json.loads(ln) for ln in sample.decode("utf-8").splitlines()[: SAMPLE_ROWS + 1] if ln.strip()]
            records = [r for r in records if isinstance(r, dict)]
            keys: dict[str, None] = {}
            for r in records:
                keys.update(dict.fromkeys(map(str, r)))
            columns = list(keys)
            rows = [[_cell(r.get(k)) for k in columns] for r in records]
        else:
            delimiter = _delimiter(fmt, d.data)
            decision = header_decision(first_rows(d.data, delimiter), has_header)
            parsed = _delimited_rows(sample.decode("utf-8", errors="replace"), delimiter)
            width = max((len(r) for r in parsed[:50]), default=0)
            first = parsed[0] if parsed else []
            columns = [c.strip() for c in first] if decision.has_header else [str(i) for i in range(width)]
            rows = parsed[1:] if decision.has_header else parsed
            rows = [(r + [""] * len(columns))[: len(columns)] for r in rows]
    if len(rows) > SAMPLE_ROWS:
        rows, complete = rows[:SAMPLE_ROWS], False
    header = decision.has_header if decision is not None else True
    first_row = None if header else (rows[0] if rows else None)
    arrays = [pa.array([r[j] if j < len(r) else None for r in rows], type=pa.string()) for j in range(len(columns))]
    facts = [column_facts(arrays[j], label(columns, j)) for j in range(len(columns))]
    gu, gt = guess_columns(columns) if header else (None, None)
    out = dict(
        guess_user=columns.index(gu) if gu is not None else None,
        guess_text=columns.index(gt) if gt is not None else None,
        format=fmt,
        columns=columns,
        rows=rows,
        complete=complete,
        facts=facts,
        notes=notes,
        has_header=decision.has_header if decision else None,
        header_reason=decision.reason if decision else "",
        header_detected=decision.detected if decision else True,
    )
    try:
        c = choose_columns(columns, user_col, text_col, header, row_is_user=row_is_user, first_row=first_row)
    except ColumnError as e:
        return Preview(**out, choice_error=str(e))
    sample_note = "" if complete else f"in the first {len(rows):,} rows"
    users = arrays[c.user] if c.user is not None else None
    if users is not None and user_pattern:
        try:
            check_user_pattern(user_pattern)
        except ParameterError as e:
            return Preview(**out, user_col=c.user, text_col=c.text, choice_error=str(e))
        users, _ = apply_user_pattern(users, user_pattern)
    _, warns = column_warnings(
        users,
        arrays[c.text],
        label(columns, c.user) if c.user is not None else None,
        label(columns, c.text),
        sample_note=sample_note,
    )
    return Preview(
        **out,
        user_col=c.user,
        text_col=c.text,
        guessed=c.guessed,
        warnings=warns,
    )


def _cell(v) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v) if isinstance(v, (dict, list)) else str(v)
