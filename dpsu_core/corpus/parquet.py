"""Parquet files: the chosen columns read batch by batch within the unpack limit, or every column as text."""

from __future__ import annotations

import pyarrow as pa

from ..errors import InputError, ResourceLimitError, first_line, short_name
from .columns import choose_columns
from .limits import DEFAULT_LIMITS, ReadLimits
from .sources import RawFile
from .table import Table, as_text_table, table_of_choice


def parquet_schema(raw: RawFile):
    """The Arrow schema of a Parquet file (its footer only); a file that is not Parquet refused in one line."""
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(pa.BufferReader(raw.data))
    except (pa.ArrowException, OSError) as e:
        raise _bad_parquet(raw, e) from None


def _bad_parquet(raw: RawFile, e: Exception) -> InputError:
    return InputError(
        f"{raw.name or 'the file'} is not a valid Parquet file ({first_line(e)}); re-export it, or save it as CSV"
    )


def read_parquet(
    raw: RawFile, user_col, text_col, row_is_user: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> Table:
    """Read the chosen columns only, batch by batch, refusing once the decoded data passes the unpack limit
    (a Parquet file's pages are compressed and dictionary-encoded: a small file may decode huge)."""
    import pyarrow.parquet as pq

    columns = [str(c) for c in parquet_schema(raw).names]
    c = choose_columns(columns, user_col, text_col, True, row_is_user=row_is_user)  # fail early, before any data
    picked = [i for i in (c.user, c.text) if i is not None]
    cap = limits.unpack_limit(len(raw.data))
    try:
        pf = pq.ParquetFile(pa.BufferReader(raw.data))
        unique = len(set(columns)) == len(columns)
        wanted = [columns[i] for i in picked] if unique else None  # duplicate names: read all, pick by position
        batches, size = [], 0
        for batch in pf.iter_batches(columns=wanted):
            size += batch.nbytes
            if size > cap:
                raise ResourceLimitError(
                    f"{short_name(raw.name or 'the Parquet file')} decodes to more than {cap >> 20:,} MB, the limit "
                    "for a file of its size; save it with fewer rows, or raise the limit (CLI: --max-unpacked-mb)"
                )
            batches.append(batch)
        schema = pf.schema_arrow
        if wanted is not None:
            schema = pa.schema([schema.field(n) for n in wanted])
        tab = pa.Table.from_batches(batches, schema=schema)
    except (pa.ArrowException, OSError) as e:
        raise _bad_parquet(raw, e) from None
    at = {i: k for k, i in enumerate(picked)} if wanted is not None else None
    return table_of_choice(tab, columns, c, "parquet", at)


def parquet_sheet(raw: RawFile, limits: ReadLimits, max_bytes: int) -> tuple[list[str], pa.Table, bool]:
    """(columns, every column as text, whether the whole file was read): up to ``max_bytes`` of decoded data and
    the unpack limit, for the column facts."""
    import pyarrow.parquet as pq

    columns = [str(c) for c in parquet_schema(raw).names]
    batches, size = [], 0
    try:
        stream = pq.ParquetFile(pa.BufferReader(raw.data)).iter_batches()
        for batch in stream:
            batches.append(pa.Table.from_batches([batch]))
            size += batch.nbytes
            if size > min(max_bytes, limits.unpack_limit(len(raw.data))):
                break
        complete = next(stream, None) is None  # nothing left past the cap
    except (pa.ArrowException, OSError) as e:
        raise _bad_parquet(raw, e) from None
    tables = [as_text_table(b) for b in batches]
    if not tables:
        return columns, pa.table({f"c{i}": pa.array([], pa.string()) for i in range(len(columns))}), complete
    return columns, pa.concat_tables(tables), complete
