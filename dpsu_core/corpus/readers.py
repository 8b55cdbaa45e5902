"""Readers: a file (path, bytes or upload) -> a column of user ids and a column of post texts.

Steps: get the bytes (unpacking a single-member .zip or a .gz), detect the format,
decode (UTF-8, UTF-8 with BOM, UTF-16 with BOM; rows that are not UTF-8 as cp1252, counted:
``decode.decode_rows``), decide whether there is a header row and pick the user and text columns
(``columns``: given by name or position, or guessed from known names only),
and parse with Arrow's multithreaded CSV/JSON/Parquet readers. Nothing here
tokenizes; ``load.load_corpus`` glues readers, tokenizer and ``build_corpus``.

Formats (``FORMATS``):
  csv, tsv     delimited text with or without a header row.
  jsonl        one JSON object per line (a .json file holding one array of objects also works).
  parquet      any Parquet file.
  text         one post per line, each line its own user; or ``user<TAB>text`` lines.
  sequences    pre-tokenized: one user per line, space-separated tokens; lines
               starting with % and blank lines are not users, and when a
               "% Sequences" line exists everything above it is a header
               (the MSNBC layout). Tokens are taken as given.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import (
    ColumnError,
    EmptyCorpusError,
    EncodingError,
    InputError,
    ParameterError,
    ResourceLimitError,
    short_name,
    shorten_list,
)
from ..wording import opt
from .columns import (  # noqa: F401  (the names and guess_columns re-exported)
    TEXT_COLUMN_NAMES,
    USER_COLUMN_NAMES,
    ColumnChoice,
    HeaderDecision,
    choose_columns,
    detect_header,
    guess_columns,
    label,
)
from .csvscan import UnterminatedQuote, scan_csv
from .decode import Decoded, decode_rows
from .limits import DEFAULT_LIMITS, HEAD_BYTES, ReadLimits, check_json_depth, read_capped, read_regular_file

FORMATS: tuple[str, ...] = ("auto", "csv", "tsv", "jsonl", "parquet", "txt", "sequences")
# Names also accepted for a format (mapped to the reader's own name; plain text is read as "text").
_FORMAT_NAMES = {"txt": "text", "text": "text"}

_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".txt": "text",
    ".text": "text",
    ".seq": "sequences",
}
_SNIFF = 65536
# Arrow parses a delimited file in blocks of this many bytes (more when a row is longer: a block must
# hold a whole row); a block is also the unit the loader tokenizes and frees.
_BLOCK_BYTES = 32 << 20
# an eighth of the file, within these bounds: on a small file the first block, parsed while the tokenizer
# threads wait, stays short (8 MB blocks: 16% faster end to end at 200k users, 9% slower at 1M, measured)
_MIN_BLOCK_BYTES = 8 << 20
_MAX_BLOCK_BYTES = 2**31 - 1  # Arrow's block size is a 32-bit number
_SEQ_MARKER = re.compile(r"^%\s*sequences\b", re.IGNORECASE)


@dataclass
class RawFile:
    """The bytes of the data file (after unpacking) and what we know about it."""

    data: bytes
    name: str
    notes: list[str] = field(default_factory=list)


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


# ---- public helpers ----------------------------------------------------------


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
        return list(_parquet_schema(raw).names)
    if fmt in ("text", "sequences"):
        return []
    data, _, _ = to_utf8(raw)
    if fmt == "jsonl":
        check_json_depth(data, raw.name or "the file", limits)
        return json_keys(data)
    delimiter = _delimiter(fmt, data)
    rows = first_rows(data, delimiter)
    first = rows[0] if rows else []
    if not header_decision(rows, has_header).has_header:
        return [str(i) for i in range(len(first))]
    return first


# ---- source -> bytes ---------------------------------------------------------


def read_source(source, limits: ReadLimits = DEFAULT_LIMITS) -> RawFile:
    """Bytes of ``source`` (path, bytes, binary file-like with optional ``.name``, or a RawFile already read),
    unpacked if zipped/gzipped, within ``limits`` (see ``limits.py``: regular files only, size checked
    first, decompression capped)."""
    if isinstance(source, RawFile):
        return source
    if isinstance(source, (str, PurePath)):
        path = Path(source)
        data, name = read_regular_file(path, limits, lambda head: check_head(head, path.name)), path.name
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), ""
    elif hasattr(source, "read"):
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except (OSError, ValueError):
                pass
        name = PurePath(str(getattr(source, "name", "") or "")).name
        data = source.read(HEAD_BYTES)
        if isinstance(data, str):
            raise InputError("the file object was opened in text mode; open it in binary mode ('rb') or pass its path")
        check_head(bytes(data), name)  # before the rest is read
        data = bytes(data) + source.read(limits.max_file_bytes + 1 - len(data))
    else:
        raise InputError(
            f"cannot read a corpus from a {type(source).__name__}; give a file path, bytes, or a binary file object"
        )
    if len(data) > limits.max_file_bytes:
        raise ResourceLimitError(
            f"{short_name(name or 'the file')} is larger than the {limits.max_file_bytes >> 20:,} MB limit on input "
            "files; split it, or raise the limit"
        )
    raw = RawFile(data=data, name=name)
    if data[:4] == b"PK\x03\x04" or name.lower().endswith(".zip"):
        raw = _unzip(raw, limits)
    elif data[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, limits)
    if not raw.data or raw.data.isspace():
        raise EmptyCorpusError(f"{raw.name or 'the file'} is empty; upload a file with one post (or sequence) per row")
    return raw


def _gunzip(raw: RawFile, limits: ReadLimits) -> RawFile:
    name = raw.name
    label = short_name(name) if name else "the gzip data"
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw.data)) as gz:
            inner = read_capped(gz, limits.unpack_limit(len(raw.data)), label)
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(
            f"{name or 'the file'} looks gzip-compressed but cannot be unpacked ({_short(e)}); upload it uncompressed"
        ) from None
    inner_name = name[:-3] if name.lower().endswith(".gz") else name
    return RawFile(inner, inner_name, [f"unpacked gzip file {name or '(bytes)'}"])


def _unzip(raw: RawFile, limits: ReadLimits) -> RawFile:
    label = f"the zip archive {short_name(raw.name)}" if raw.name else "the zip archive"
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw.data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError):
        raise InputError(
            f"{short_name(raw.name) if raw.name else 'the file'} is not a valid zip archive; re-create it or upload "
            "the data file itself"
        ) from None
    members = [
        m
        for m in infos
        if not m.is_dir() and not m.filename.startswith("__MACOSX/") and not PurePath(m.filename).name.startswith("._")
    ]
    if len(members) != 1:
        listed = shorten_list(m.filename for m in members)
        raise InputError(
            f"{label} must hold exactly one data file, found {len(members)} ({listed}); "
            "zip a single file or upload the data file itself"
        )
    member = members[0]
    what = f"{short_name(member.filename)} in {label}"
    if member.flag_bits & 0x1:
        raise InputError(f"{what} is encrypted; unzip it with its password and upload the data file itself")
    cap = limits.unpack_limit(len(raw.data))
    if member.file_size > cap:
        raise ResourceLimitError(
            f"{what} claims {member.file_size >> 20:,} MB unpacked, more than the {cap >> 20:,} MB allowed for an "
            "archive of its size (a zip bomb?); upload it uncompressed, or raise the limit (CLI: --max-unpacked-mb)"
        )
    try:
        with zf.open(member) as fh:
            data = read_capped(fh, cap, what)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError, NotImplementedError, ValueError) as e:
        # BadZipFile: a bad CRC (found at the end of the member); RuntimeError: encrypted; NotImplementedError:
        # a compression method Python cannot unpack
        raise InputError(
            f"{what} cannot be unpacked ({_short(e)}); re-create the archive or upload the file itself"
        ) from None
    return RawFile(data, PurePath(member.filename).name, [f"read {member.filename!r} from zip archive {raw.name!r}"])


# ---- format detection --------------------------------------------------------


def detect_format(raw: RawFile, format: str = "auto") -> tuple[str, str | None]:
    """The format to read ``raw`` as, and a note when it was detected rather than given."""
    if format not in FORMATS and format not in _FORMAT_NAMES:
        raise ParameterError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    if format != "auto":
        return _FORMAT_NAMES.get(format, format), None
    if raw.data[:4] == b"PAR1":
        return "parquet", None
    ext = PurePath(raw.name).suffix.lower()
    fmt = _EXTENSIONS.get(ext)
    if fmt in ("csv", "tsv", "jsonl", "parquet", "sequences"):
        return fmt, None
    head = _head_text(raw.data)  # .txt or an unknown extension: look at the content
    if _looks_like_sequences(head):
        return "sequences", "format detected from content: pre-tokenized sequences (lines of space-separated ids)"
    if fmt == "text":
        return "text", None
    stripped = head.lstrip()
    if stripped.startswith(("{", "[")):
        return "jsonl", "format detected from content: JSON lines"
    first_line = stripped.split("\n", 1)[0]
    if "\t" in first_line:
        return "tsv", "format detected from content: tab-separated"
    if "," in first_line or ";" in first_line:
        return "csv", "format detected from content: comma-separated"
    return "text", "format detected from content: plain text, one post per line"


def _head_text(data: bytes) -> str:
    head = data[:_SNIFF]
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return head.decode("utf-16", errors="ignore")
    return head.decode("utf-8", errors="ignore").lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _looks_like_sequences(head: str) -> bool:
    lines = head.split("\n")[:-1] or head.split("\n")
    marker = next((i for i, ln in enumerate(lines) if _SEQ_MARKER.match(ln)), None)
    if marker is not None:
        return True
    body = [ln for ln in lines if ln.strip() and not ln.startswith("%")]
    return bool(body) and all(re.fullmatch(r"[\d\s]+", ln) for ln in body[:1000])


# ---- decoding ----------------------------------------------------------------


def to_utf8(raw: RawFile) -> tuple[bytes, str, bool]:
    """UTF-8 bytes of a text file (BOM removed), the source encoding, and whether a fallback was used."""
    d = decode(raw)
    return d.data, d.encoding, d.fallback_rows > 0


def decode(raw: RawFile) -> Decoded:
    """UTF-8 bytes of a text file (BOM removed); rows that are not UTF-8 decoded one by one (counted)."""
    data = raw.data
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        try:
            return Decoded(data.decode("utf-16").encode("utf-8"), "utf-16", 0)
        except UnicodeDecodeError:
            raise EncodingError(
                f"{raw.name or 'the file'} starts with a UTF-16 mark but is not valid UTF-16; re-save it as UTF-8"
            ) from None
    _check_not_binary(raw)
    if data[:3] == codecs.BOM_UTF8:
        data = data[3:]
        encoding = "utf-8-sig"
    else:
        encoding = "utf-8"
    cr_only = b"\n" not in data and b"\r" in data
    if cr_only:  # old Mac OS line endings: Arrow's and csv's readers would see one row
        data = data.replace(b"\r", b"\n")
    if data.isascii() or _valid_utf8(data):
        return Decoded(data, encoding, 0, cr_only)
    return replace(decode_rows(data), cr_only=cr_only)


def _strings(values: list[str], type_: pa.DataType) -> pa.Array:
    """A string array built from its buffers: pa.array and Python scalars in compute calls import pandas (0.15 s
    of a release's start-up)."""
    data = [v.encode("utf-8") for v in values]
    large = pa.types.is_large_string(type_) or pa.types.is_large_binary(type_)
    offsets = np.zeros(len(data) + 1, dtype=np.int64 if large else np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return pa.Array.from_buffers(type_, len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


def _valid_utf8(data: bytes) -> bool:
    """UTF-8 validity checked by Arrow in place (no decoded copy of the file)."""
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    arr = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


_NOT_TEXT_MAGIC = (b"PK", b"\x1f\x8b", b"PAR1", codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)  # zip, gzip, Parquet, UTF-16
_NOT_TEXT_SUFFIXES = (".zip", ".gz", ".parquet")


def check_head(head: bytes, name: str = "") -> None:
    """The first bytes of a file, checked before the rest is read: unless they start an archive, a Parquet or a
    UTF-16 file, binary first bytes (NUL or control bytes) refuse the file at once, so a huge binary file (a 10 GB
    sparse file of zeros) is never read whole to be refused."""
    if head.startswith(_NOT_TEXT_MAGIC) or name.lower().endswith(_NOT_TEXT_SUFFIXES):
        return
    _check_not_binary(RawFile(data=head, name=name))


def _check_not_binary(raw: RawFile) -> None:
    sample = np.frombuffer(raw.data[:_SNIFF], dtype=np.uint8)
    if sample.size == 0:
        return
    control = (sample < 32) & ~np.isin(sample, (9, 10, 12, 13))
    if control.mean() > 0.01 or b"\x00" in raw.data:  # NUL anywhere (memchr over the whole file)
        raise EncodingError(
            f"{raw.name or 'the file'} looks binary (it holds NUL or control bytes), not text; "
            "upload a CSV, TSV, JSON Lines, plain-text or Parquet file (a .zip with one such file also works)"
        )


# ---- readers -----------------------------------------------------------------


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
        table = _read_parquet(raw, user_col, text_col, row_is_user, limits)
    else:
        decoded = decode(raw)
        data = decoded.data
        notes += decoded.notes
        if fmt in ("csv", "tsv"):
            table = _read_delimited(raw, data, fmt, user_col, text_col, has_header, row_is_user)
            if not stream:
                table.materialize()
        elif fmt == "jsonl":
            check_json_depth(data, raw.name or "the file", limits)
            table = _read_jsonl(raw, data, user_col, text_col, row_is_user)
        elif fmt == "text":
            table = _read_text(data, user_col, text_col)
        else:
            table = _read_sequences(data, user_col, text_col)
        table.encoding, table.encoding_fallback = decoded.encoding, decoded.fallback_rows > 0
        table.encoding_fallback_rows = decoded.fallback_rows
    table.notes = notes + table.notes
    return table


def _delimiter(fmt: str, data: bytes) -> str:
    if fmt == "tsv":
        return "\t"
    first = data[:_SNIFF].split(b"\n", 1)[0]
    if b"," not in first and b";" in first:
        return ";"
    return ","


def first_rows(data: bytes, delimiter: str, n: int = 50) -> list[list[str]]:
    """The first ``n`` rows of a delimited file as parsed by the csv module (from the first 64 KiB)."""
    head = data[:_SNIFF].decode("utf-8", errors="ignore")
    if len(data) > _SNIFF:
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
            f"{lay.name} cannot be parsed as {fmt.upper()} ({_short(e)}); check its quoting and delimiter, "
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


def _read_delimited(raw: RawFile, data: bytes, fmt: str, user_col, text_col, has_header, row_is_user=False) -> Table:
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


# ---- every column, for the column facts -------------------------------------------------------

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
        columns, table, complete = _parquet_sheet(raw, limits, max_bytes)
        return Sheet(fmt, columns, table, complete, None, notes)
    decoded = decode(raw)
    if decoded.note:
        notes.append(decoded.note)
    if fmt in ("csv", "tsv"):
        lay = _delimited_layout(raw, decoded.data, fmt, has_header)
        bad_rows, batches, size = [0], [], 0
        every = dict.fromkeys(range(len(lay.columns)), pa.string())
        stream = _delimited_batches(lay, decoded.data, fmt, every, bad_rows, threads=True)
        repeated = 0
        for batch in stream:
            again = (
                repeated_header_rows(dict(enumerate(batch.columns)), lay.columns) if lay.decision.has_header else None
            )
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
    if fmt == "jsonl":
        check_json_depth(decoded.data, raw.name or "the file", limits)
        tab = json_table(raw, decoded.data)
        columns = [str(c) for c in tab.column_names]
        return Sheet(fmt, columns, _as_text_table(tab), True, None, notes)
    if fmt == "text":
        lines = _lines(decoded.data)
        return Sheet(fmt, [], pa.table({"line": lines.filter(pc.invert(_blank(lines)))}), True, None, notes)
    seqs = _read_sequences(decoded.data, None, None)
    assert seqs.texts is not None
    return Sheet(fmt, [], pa.table({"line": seqs.texts}), True, None, notes + seqs.notes)


def _parquet_sheet(raw: RawFile, limits: ReadLimits, max_bytes: int) -> tuple[list[str], pa.Table, bool]:
    import pyarrow.parquet as pq

    columns = [str(c) for c in _parquet_schema(raw).names]
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
    tables = [_as_text_table(b) for b in batches]
    if not tables:
        return columns, pa.table({f"c{i}": pa.array([], pa.string()) for i in range(len(columns))}), complete
    return columns, pa.concat_tables(tables), complete


def _as_text_table(tab: pa.Table) -> pa.Table:
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


def _short(e: Exception) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return msg[:200]


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


def _table_from_columns(tab: pa.Table, fmt: str, user_col, text_col, row_is_user: bool) -> Table:
    columns = [str(c) for c in tab.column_names]
    c = choose_columns(columns, user_col, text_col, True, row_is_user=row_is_user)
    return _table_of_choice(tab, columns, c, fmt)


def _table_of_choice(tab: pa.Table, columns: list[str], c: ColumnChoice, fmt: str, at: dict[int, int] | None = None):
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


def _parquet_schema(raw: RawFile):
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(pa.BufferReader(raw.data))
    except (pa.ArrowException, OSError) as e:
        raise _bad_parquet(raw, e) from None


def _bad_parquet(raw: RawFile, e: Exception) -> InputError:
    return InputError(
        f"{raw.name or 'the file'} is not a valid Parquet file ({_short(e)}); re-export it, or save it as CSV"
    )


def _read_parquet(
    raw: RawFile, user_col, text_col, row_is_user: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> Table:
    """Read the chosen columns only, batch by batch, refusing once the decoded data passes the unpack limit
    (a Parquet file's pages are compressed and dictionary-encoded: a small file may decode huge)."""
    import pyarrow.parquet as pq

    columns = [str(c) for c in _parquet_schema(raw).names]
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
    return _table_of_choice(tab, columns, c, "parquet", at)


def json_keys(data: bytes) -> list[str]:
    """The keys of the JSON objects in the first lines of ``data`` (or of its first array of objects)."""
    data = repair_surrogates(data)[0]
    head = data[:_SNIFF].decode("utf-8", errors="ignore").lstrip()
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


def _read_jsonl(raw: RawFile, data: bytes, user_col, text_col, row_is_user: bool = False) -> Table:
    data, repaired, first_line = repair_surrogates(data)
    table = _table_from_columns(json_table(raw, data), "jsonl", user_col, text_col, row_is_user)
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


def _read_text(data: bytes, user_col, text_col) -> Table:
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


def _read_sequences(data: bytes, user_col, text_col) -> Table:
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
