"""A look at a file before loading it: its first rows, the header decision, the columns a choice would use,
per-column facts and the checks on that choice.

Everything comes from the readers that load the file (``readers.read_sheet``: Arrow's CSV, JSON and Parquet
readers, the same header decision, the same rows skipped as malformed), over the whole file: the facts are the
file's, not a sample's. Past ``readers.SHEET_BYTES`` of parsed text they cover the first rows only and
say how many. Everything here is raw data: NOT private, never exported.
"""

from __future__ import annotations

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
from .readers import SHEET_BYTES, Sheet, read_sheet

SHOWN_ROWS = 20


@dataclass(frozen=True)
class Preview:
    format: str
    columns: list[str]  # names (header) or positions "0", "1", ... (no header); [] for text/sequences
    rows: list[list[str]]  # the first ``SHOWN_ROWS`` rows, as parsed (header excluded)
    n_rows: int  # the rows the facts and checks cover
    complete: bool  # they are every row of the file
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
    def coverage(self) -> str:
        """The rows the facts cover, in words."""
        if self.complete:
            return f"all {self.n_rows:,} rows of the file"
        return f"the first {self.n_rows:,} rows of the file (it is longer)"


@dataclass(frozen=True)
class Survey:
    """A file read once for its previews: every column and the facts of each (choice-independent)."""

    sheet: Sheet
    facts: list[ColumnFacts]


def survey(source, *, format: str = "auto", has_header: bool | None = None, max_bytes: int = SHEET_BYTES) -> Survey:
    """Read ``source`` (a path, bytes or an unpacked ``RawFile``) once: every column, and the facts of each."""
    sheet = read_sheet(source, format=format, has_header=has_header, max_bytes=max_bytes)
    facts = [column_facts(sheet.table.column(j), label(sheet.columns, j)) for j in range(len(sheet.columns))]
    return Survey(sheet, facts)


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
    """The preview of ``source`` (a file, or a ``Survey`` of it) with the given (or guessed) columns; a failed
    choice is reported, not raised."""
    sv = source if isinstance(source, Survey) else survey(source, format=format, has_header=has_header)
    sheet = sv.sheet
    columns = sheet.columns
    head = sheet.table.slice(0, SHOWN_ROWS)
    rows = [["" if v is None else v for v in r.values()] for r in head.to_pylist()]
    decision = sheet.decision
    out = dict(
        format=sheet.format,
        columns=columns,
        rows=rows,
        n_rows=sheet.table.num_rows,
        complete=sheet.complete,
        facts=sv.facts,
        notes=sheet.notes,
        has_header=decision.has_header if decision else None,
        header_reason=decision.reason if decision else "",
        header_detected=decision.detected if decision else True,
    )
    if not columns:
        return Preview(**out)
    header = decision.has_header if decision is not None else True
    first_row = None if header else (rows[0] if rows else None)
    gu, gt = guess_columns(columns) if header else (None, None)
    out.update(
        guess_user=columns.index(gu) if gu is not None else None,
        guess_text=columns.index(gt) if gt is not None else None,
    )
    try:
        c = choose_columns(columns, user_col, text_col, header, row_is_user=row_is_user, first_row=first_row)
    except ColumnError as e:
        return Preview(**out, choice_error=str(e))
    users: pa.Array | None = sheet.table.column(c.user).combine_chunks() if c.user is not None else None
    if users is not None and user_pattern:
        try:
            check_user_pattern(user_pattern)
        except ParameterError as e:
            return Preview(**out, user_col=c.user, text_col=c.text, choice_error=str(e))
        users, _ = apply_user_pattern(users, user_pattern)
    _, warns = column_warnings(
        users,
        sheet.table.column(c.text),
        label(columns, c.user) if c.user is not None else None,
        label(columns, c.text),
        sample_note="" if sheet.complete else f"in the first {sheet.table.num_rows:,} rows",
    )
    return Preview(**out, user_col=c.user, text_col=c.text, guessed=c.guessed, warnings=warns)
