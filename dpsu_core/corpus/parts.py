"""One schema check for the parts of a multi-part input (a folder or glob of files read as one corpus): every part
must hold the columns the first one holds, so that no part's rows are read as empty and dropped without a word.

What "the same columns" means follows what each format says about its columns:

  csv, tsv   the same number of columns (the columns are taken by position: a header-less part has no names);
  parquet    the same column names, each of the same type (the schema is in each file's footer; a reader that
             takes one part's schema cannot read another part's column of another type);
  jsonl      one part's keys contain the other's (keys seen in each part's first lines: a writer that leaves
             out null fields writes fewer keys in some parts, never other ones).

A part with no bytes at all (a writer such as Spark writes one for an empty partition) holds no rows and no
columns: it is skipped and counted (``skip_empty``), never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import EmptyCorpusError, InputError, first_line, short_name, shorten_list


@dataclass(frozen=True)
class PartColumns:
    """A part's columns as its format states them: names (positions for header-less text) and, where the format
    stores them, each column's type."""

    name: str
    columns: tuple[str, ...]
    types: tuple[str, ...] | None = None


def skip_empty(names: Sequence[str], sizes: Sequence[int], what: str) -> tuple[list[int], str | None]:
    """(the indices of the parts that hold bytes, a note counting the skipped ones or None). Refuses an input whose
    every part is empty (``what``: the input as the user named it)."""
    keep = [i for i, n in enumerate(sizes) if n > 0]
    if not keep:
        if len(names) == 1:
            raise EmptyCorpusError(f"{short_name(names[0])} is empty; give a file with one post per row")
        raise EmptyCorpusError(f"the {len(names):,} parts of {what} are all empty; give an input that holds posts")
    skipped = len(names) - len(keep)
    if not skipped:
        return keep, None
    empty = [names[i] for i in range(len(names)) if sizes[i] == 0]
    note = (
        f"skipped {skipped:,} empty part{'s' if skipped != 1 else ''} of {what} (no bytes: "
        f"{shorten_list(empty, quote=True)})"
    )
    return keep, note


def check_same_columns(fmt: str, parts: Sequence[PartColumns]) -> None:
    """Refuse, in one line naming two parts and their columns (or types), parts whose columns differ (the rule of
    ``fmt``: see the module's docstring)."""
    if len(parts) < 2:
        return
    first = parts[0]
    for part in parts[1:]:
        why = _differs(fmt, first, part)
        if why is not None:
            raise InputError(
                f"{why}; every part of the input needs the same columns: read the parts separately, or rewrite "
                "them with one schema"
            )


def _cols(p: PartColumns) -> str:
    return shorten_list(p.columns, quote=True) if p.columns else "no columns"


def _differs(fmt: str, a: PartColumns, b: PartColumns) -> str | None:
    if fmt in ("csv", "tsv"):
        if len(a.columns) != len(b.columns):
            return f"{short_name(b.name)} has {len(b.columns)} columns, {short_name(a.name)} {len(a.columns)}"
        return None
    if fmt == "jsonl":
        sa, sb = set(a.columns), set(b.columns)
        if sa <= sb or sb <= sa:
            return None
        return f"{short_name(b.name)} has the keys {_cols(b)} where {short_name(a.name)} has {_cols(a)}"
    if set(a.columns) != set(b.columns):
        return f"{short_name(b.name)} has the columns {_cols(b)} where {short_name(a.name)} has {_cols(a)}"
    if a.types is not None and b.types is not None:
        ta, tb = dict(zip(a.columns, a.types)), dict(zip(b.columns, b.types))
        for col in a.columns:
            if ta[col] != tb[col]:
                return (
                    f"the column {short_name(col)} is {tb[col]} in {short_name(b.name)} but {ta[col]} in "
                    f"{short_name(a.name)}"
                )
    return None


def parquet_columns(name: str, source) -> PartColumns:
    """A Parquet part's columns and their types, from its footer alone (``source``: a path or an Arrow buffer
    reader). Large and dictionary-encoded variants of a type count as the type (the values read are the same)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(source)
    except (pa.ArrowException, OSError) as e:
        raise InputError(
            f"{short_name(name)} is not a valid Parquet file ({first_line(e, 120)}); "
            "re-export it, or move it out of the input"
        ) from None
    return PartColumns(name, tuple(schema.names), tuple(_type_name(f.type) for f in schema))


def _type_name(t) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_large_string(t) or (hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t)):
        return "string"
    if pa.types.is_large_binary(t):
        return "binary"
    if pa.types.is_large_list(t):
        return f"list<{_type_name(t.value_type)}>"
    return str(t)


def json_columns(name: str, head: bytes) -> PartColumns:
    """A JSON Lines part's keys, seen in its first bytes (``head``)."""
    from .readers import json_keys

    if head.lstrip()[:1] == b"[":  # one array of objects (not JSON Lines): its keys are not in a short head
        return PartColumns(name, ())
    return PartColumns(name, tuple(json_keys(head)))
