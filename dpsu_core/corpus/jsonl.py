"""JSON Lines files (a .json file holding one array of objects too): keys, the one Arrow parse and the repair of
lone surrogate escapes."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa

from ..errors import InputError
from .limits import ReadLimits, check_json_depth
from .sources import SNIFF, RawFile
from .table import Sheet, Table, as_text_table, table_from_columns


def json_keys(data: bytes) -> list[str]:
    """The keys of the JSON objects in the first lines of ``data`` (or of its first array of objects)."""
    data = repair_surrogates(data)[0]
    head = data[:SNIFF].decode("utf-8", errors="ignore").lstrip()
    if head.startswith("["):
        records = _json_array(data, "the file")
        keys: dict[str, None] = {}
        for r in records[:100]:
            keys.update(dict.fromkeys(map(str, r)))
        return list(keys)
    keys = {}
    for _i, line in enumerate(head.split("\n")[:100]):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            break  # a truncated last line of the sample
        if isinstance(obj, dict):
            keys.update(dict.fromkeys(map(str, obj)))
    return list(keys)


def _json_array(data: bytes, name: str) -> list[dict]:
    try:
        records = json.loads(data)
    except json.JSONDecodeError as e:
        raise InputError(f"{name} is not valid JSON ({e}); give one JSON object per line (JSON Lines)") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise InputError(
            f"{name} must hold JSON objects (one per line, or one array of objects); found other JSON values"
        )
    return records


def read_jsonl(raw: RawFile, data: bytes, user_col, text_col, row_is_user: bool = False) -> Table:
    data, repaired, first_line = repair_surrogates(data)
    table = table_from_columns(json_table(raw, data), "jsonl", user_col, text_col, row_is_user)
    if repaired:
        lines = "1 line holds" if repaired == 1 else f"{repaired:,} lines hold"
        table.notes.append(
            f"{lines} a lone surrogate escape (like \\ud800: half of a UTF-16 pair, which UTF-8 cannot hold), "
            f"first on line {first_line}; each was replaced with U+FFFD (the replacement character)"
        )
    return table


# a \uXXXX escape of a surrogate, after an even number of backslashes (an odd one would escape the backslash)
_SURROGATE_ESCAPE = re.compile(
    rb"(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
)


def repair_surrogates(data: bytes) -> tuple[bytes, int, int]:
    """JSON text with every lone surrogate escape (a high one not followed by a low one, or a low one alone)
    replaced by \\ufffd; pairs are kept. Returns (data, lines changed, first such line or 0). The regular
    expression runs only on files holding "\\ud" or "\\uD" at all."""
    if b"\\ud" not in data and b"\\uD" not in data:
        return data, 0, 0
    where: list[int] = []

    def fix(m: re.Match) -> bytes:
        if len(m.group(2)) == 12:  # a valid pair
            return m.group(0)
        where.append(m.start(2))
        return m.group(1) + b"\\ufffd"

    out = _SURROGATE_ESCAPE.sub(fix, data)
    if not where:
        return data, 0, 0
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    lines = np.searchsorted(ends, np.asarray(where)) + 1
    return out, int(np.unique(lines).size), int(lines[0])


def json_table(raw: RawFile, data: bytes) -> pa.Table:
    """Every field of a JSON Lines file (or of one JSON array of objects) as Arrow columns; the one parse of a
    JSON file: the loader and the preview's column facts both read through here."""
    import pyarrow.json as pajson

    name = raw.name or "the file"
    data = repair_surrogates(data)[0]  # a no-op on a file without a lone surrogate escape
    if data.lstrip()[:1] == b"[":
        tab = _records_table(_json_array(data, name))
    else:
        try:
            tab = pajson.read_json(pa.BufferReader(data), read_options=pajson.ReadOptions(block_size=8 << 20))
        except pa.ArrowException as e:
            _raise_bad_json_line(data, name, e)
            # every line is a JSON object but Arrow could not unify the types: read in Python
            tab = _records_table([json.loads(ln) for ln in data.decode("utf-8").splitlines() if ln.strip()])
    if tab.num_columns == 0:
        raise InputError(f'{name} holds no JSON fields; each line must be an object like {{"user": ..., "text": ...}}')
    return tab


def _raise_bad_json_line(data: bytes, name: str, err: Exception) -> None:
    """Raise InputError naming the first line that is not a JSON object (error path only)."""
    for i, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(
                f"{name}: line {i} is not valid JSON ({e.msg}); each line of a JSON Lines file must be one complete JSON object"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"{name}: line {i} is a JSON {type(obj).__name__}, not an object; each line must be one JSON object"
            )


def _records_table(records: list[dict]) -> pa.Table:
    keys: dict[str, None] = {}
    for r in records:
        keys.update(dict.fromkeys(map(str, r)))

    def as_text(v):
        if v is None or isinstance(v, str):
            return v
        return json.dumps(v) if isinstance(v, (dict, list)) else str(v)

    return pa.table({k: pa.array([as_text(r.get(k)) for r in records], type=pa.string()) for k in keys})


def jsonl_sheet(raw: RawFile, data: bytes, limits: ReadLimits, notes: list[str]) -> Sheet:
    """Every field of a JSON Lines file as text, for the column facts."""
    check_json_depth(data, raw.name or "the file", limits)
    tab = json_table(raw, data)
    columns = [str(c) for c in tab.column_names]
    return Sheet("jsonl", columns, as_text_table(tab), True, None, notes)
