"""What a reader hands on: ``Table`` (the user and text columns, whole or streamed) and ``Sheet`` (every column as
text, for the column facts), and the Arrow column conversions the readers share."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ColumnError
from .columns import ColumnChoice, HeaderDecision, choose_columns


@dataclass
class Table:
    """What a reader hands to the tokenizer: one row per post.

    Either whole columns (``texts``, ``users``), or, from ``read_table(stream=True)`` on a delimited
    file, a ``stream`` of (users, texts) batches parsed one at a time (``texts``/``users`` are then
    None until ``materialize``): the loader tokenizes a batch and drops its text while Arrow parses the
    next. ``batches()`` reads either form the same way.
    """

    texts: pa.Array | None  # string or large_string; may hold nulls (dropped later, counted)
    users: pa.Array | None  # string; None: every row is its own user
    format: str
    encoding: str = "utf-8"
    encoding_fallback: bool = False
    encoding_fallback_rows: int = 0
    header: str | None = None  # how the header question was settled (delimited files)
    user_column: str | None = None
    text_column: str | None = None
    columns_guessed: bool = False
    pretokenized: bool = False
    notes: list[str] = field(default_factory=list)
    stream: Callable[[], Iterator[tuple[pa.Array, pa.Array]]] | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        if self.texts is None:
            raise ValueError("a streamed table has no row count before it is read; use batches() or materialize()")
        return len(self.texts)

    def batches(self) -> Iterator[tuple[pa.Array | None, pa.Array]]:
        """(users, texts) pairs in file order: one pair, or one per parsed block of a streamed file."""
        if self.stream is None:
            assert self.texts is not None
            yield self.users, self.texts
        else:
            yield from self.stream()

    def materialize(self) -> Table:
        """This table with whole columns (a streamed one is read to the end here)."""
        if self.stream is None:
            return self
        users, texts = [], []
        for u, t in self.stream():
            users.append(u)
            texts.append(t)
        self.users = pa.concat_arrays(users) if users else pa.array([], pa.string())
        self.texts = pa.concat_arrays(texts) if texts else pa.array([], pa.large_string())
        self.stream = None
        return self


SHEET_BYTES = 256 << 20  # the column facts read the whole file up to this much parsed text, then say how far


@dataclass
class Sheet:
    """Every column of a tabular file as text, parsed by the same readers as the load (raw data: NOT private).

    ``table`` holds the rows covered: the whole file (``complete``) or its first rows up to ``SHEET_BYTES``.
    """

    format: str
    columns: list[str]  # names (header) or positions "0", "1", ...
    table: pa.Table  # one string column per entry of ``columns``
    complete: bool
    decision: HeaderDecision | None  # delimited files only
    notes: list[str]


def as_text_table(tab: pa.Table) -> pa.Table:
    """Every column as text, named by position (names may repeat): numbers and strings cast, nested values as
    JSON."""
    return pa.table({f"c{i}": _as_text(tab.column(i)) for i in range(tab.num_columns)})


def _flat(col) -> pa.Array:
    """One plain (not chunked, not dictionary-encoded) array of ``col``."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return col.dictionary_decode() if pa.types.is_dictionary(col.type) else col


def _as_text(col) -> pa.Array:
    col = _flat(col)
    if pa.types.is_string(col.type):
        return col
    try:
        return pc.cast(col, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # nested values: as JSON, like the JSON reader does
        return pa.array([None if v is None else json.dumps(v, default=str) for v in col.to_pylist()], type=pa.string())


def _as_string(col, name: str, role: str) -> pa.Array:
    col = _flat(col)
    if pa.types.is_string(col.type):
        return col
    try:
        return pc.cast(col, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ColumnError(
            f"the {role} column {name!r} holds {col.type} values, not text; choose a column of strings or numbers"
        ) from None


def table_from_columns(tab: pa.Table, fmt: str, user_col, text_col, row_is_user: bool) -> Table:
    columns = [str(c) for c in tab.column_names]
    c = choose_columns(columns, user_col, text_col, True, row_is_user=row_is_user)
    return table_of_choice(tab, columns, c, fmt)


def table_of_choice(tab: pa.Table, columns: list[str], c: ColumnChoice, fmt: str, at: dict[int, int] | None = None):
    """The Table of the chosen columns; ``at`` maps a position in ``columns`` to its column in ``tab`` (default:
    the same position)."""
    at = at if at is not None else {i: i for i in range(len(columns))}
    return Table(
        texts=_as_string(tab.column(at[c.text]), columns[c.text], "text"),
        users=_as_string(tab.column(at[c.user]), columns[c.user], "user") if c.user is not None else None,
        format=fmt,
        user_column=columns[c.user] if c.user is not None else None,
        text_column=columns[c.text],
        columns_guessed=c.guessed,
        notes=list(c.notes),
    )
