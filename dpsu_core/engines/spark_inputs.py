"""What the Spark engine will read, settled on the driver before Spark starts: the input's parts and the
checks the local reader makes, so bad input is refused in a second with the local engine's messages.

The input is a file, a folder (every data file under it, nested folders included) or a glob, on this
machine; or a path on the cluster's storage (``hdfs://``, ``s3a://``, ...), which only Spark lists; or a
table (``--spark-table``). For local parts, before any JVM starts:

* every part is named to Spark explicitly, so nested folders are read; a data file Spark would skip by its
  name (``_x.csv``, ``.x.csv``: Hadoop's hidden files) is refused, naming it; other files (``_SUCCESS``,
  ``notes.txt``, checksums) are listed in a note as not read. A ``.zip`` part is refused (Spark cannot read
  it); a ``.gz`` part is read by Spark and unpacked here once, within the read limits (a gzip bomb is refused
  as the local reader refuses it);
* ``--max-file-mb`` applies to each part; a part with no bytes (Spark writes one for an empty partition) is
  skipped and counted in a note; every other part must have the first part's columns (``corpus.parts``: the
  same number for CSV/TSV, the same names and types for Parquet, nested keys for JSON Lines), or the input is
  refused naming the two parts; CSV/TSV parts are scanned as the local reader scans them: an
  unterminated quote is an error naming its line, undoubled quotes a note; a part that is not UTF-8 is read as
  cp1252/Latin-1 when none of its rows is UTF-8 (the local reader's note), and refused when it mixes the two
  (Spark decodes one encoding per file);
* ``check_paths``: no output (``-o``, ``--report``, ``--export-tokenizer``) may be a part, lie inside the
  input folder or match the input glob, and the public corpus may not be one of the parts.

No pyspark here: everything runs before the session starts.
"""

from __future__ import annotations

import codecs
import fnmatch
import functools
import gzip
import mmap
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from ..corpus.limits import DEFAULT_LIMITS, HEAD_BYTES, ReadLimits, read_capped
from ..corpus.parts import PartColumns, check_same_columns, json_columns, parquet_columns, skip_empty
from ..errors import InputError, OutputError, short_name, short_path, shorten_list
from ..outputs.writer import output_files
from ..wording import opt

#: Formats the Spark engine reads.
SPARK_FORMATS = ("auto", "csv", "tsv", "parquet", "jsonl")
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}
_CHUNK = 8 << 20
_GLOB = set("*?[")


@dataclass(frozen=True)
class Group:
    """Parts Spark reads in one go: the same encoding and line layout."""

    paths: tuple[str, ...]
    encoding: str = "UTF-8"  # Java's name
    multiline: bool = False  # some quoted field spans lines: each file read in one piece


@dataclass(frozen=True)
class SparkInput:
    """The input as Spark will read it (``resolve_input``)."""

    given: str  # as the user wrote it
    format: str  # csv, tsv, parquet, jsonl, or "table"
    groups: tuple[Group, ...] = ()
    parts: tuple[Path, ...] = ()  # the local parts (empty: remote storage or a table)
    folder: Path | None = None  # the input folder: no output may go inside
    pattern: str | None = None  # the input glob: no output may match it
    head: bytes | None = None  # a CSV/TSV input's first bytes, unpacked (None: Spark reads them)
    notes: tuple[str, ...] = field(default=())

    @property
    def table(self) -> str | None:
        return self.given if self.format == "table" else None

    @property
    def name(self) -> str:
        return PurePath(self.given.rstrip("/")).name or self.given


def is_remote(path: str) -> bool:
    """A path on storage only Spark reaches (a URI with a scheme other than file:)."""
    scheme = path.split("://", 1)[0] if "://" in path else ""
    return bool(scheme) and scheme.lower() != "file"


def _local(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def format_of(name: str) -> str | None:
    p = PurePath(name.rstrip("/"))
    suffix = p.suffix.lower()
    if suffix == ".gz":
        suffix = PurePath(p.stem).suffix.lower()
    return EXTENSIONS.get(suffix)


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def check_format(format: str) -> None:
    if format not in SPARK_FORMATS:
        raise InputError(
            f"the Spark engine reads {', '.join(SPARK_FORMATS[1:])}; choose one of them as {opt('format')}"
        )


def table_input(name: str) -> SparkInput:
    if not name.strip():
        raise InputError("--spark-table needs a table name, e.g. --spark-table db.posts")
    return SparkInput(name, "table", notes=(f"read from the table {name!r} of Spark's catalog",))


def resolve_input(path: str, format: str = "auto", limits: ReadLimits = DEFAULT_LIMITS) -> SparkInput:
    """The parts of ``path`` and their checks (see the module's docstring); raises a one-line ``InputError``."""
    check_format(format)
    if is_remote(path):
        fmt = format if format != "auto" else format_of(path)
        if fmt is None:
            raise InputError(
                f"cannot tell the format of {path!r} from its name; give {opt('format')} ({', '.join(SPARK_FORMATS[1:])})"
            )
        note = (
            f"{path} is listed and read by Spark on the cluster's storage: the size limits and the quoting and "
            "encoding checks apply to local files only, and Spark skips files whose names start with '_' or '.'"
        )
        return SparkInput(path, fmt, (Group((path,), multiline=fmt in ("csv", "tsv")),), notes=(note,))
    local = _local(path)
    folder, pattern = None, None
    if os.path.isdir(local):
        folder = Path(local)
        found = list(_walk(folder))
    elif os.path.exists(local):
        found = [Path(local)]
    elif _GLOB & set(local):
        import glob

        pattern = os.path.abspath(local)
        found = sorted(
            {f for m in glob.glob(local, recursive=True) for f in (_walk(Path(m)) if os.path.isdir(m) else [Path(m)])}
        )
        if not found:
            raise InputError(f"no file matches {short_name(path)}; check the pattern")
    else:
        raise InputError(f"file not found: {short_name(path)}; check the path")
    explicit = folder is None and pattern is None
    data, skipped = _classify(found, format, explicit, folder)
    if not data:
        where = short_name(path)
        raise InputError(
            f"no data file under {where} (looked for {', '.join(sorted(EXTENSIONS))}, also gzipped)"
            + (f"; found only {shorten_list((f.name for f in skipped), quote=True)}" if skipped else "")
            + f"; give {opt('format')} for files without an extension"
        )
    fmt = format if format != "auto" else _one_format(data)
    for f in data:
        _check_regular(f, limits)
    keep, skipped_note = skip_empty([_rel(f, folder) for f in data], [_size(f) for f in data], short_name(path))
    data = [data[i] for i in keep]
    notes: list[str] = []
    if folder is not None or pattern is not None:
        nested = sum(1 for f in data if folder is not None and f.parent != folder)
        notes.append(
            f"read {len(data):,} file{'s' if len(data) != 1 else ''} of {short_name(path)}"
            + (f" ({nested:,} in nested folders)" if nested else "")
        )
    if skipped:
        notes.append(f"not read (not {fmt} data): {shorten_list((_rel(f, folder) for f in skipped), quote=True)}")
    if skipped_note:
        notes.append(skipped_note)
    if fmt in ("csv", "tsv"):
        groups, head, more = _delimited(data, fmt, limits)
        notes += more
    else:
        check_same_columns(fmt, [_columns(f, fmt, limits) for f in data])
        groups, head = (Group(tuple(str(f) for f in data)),), None
    return SparkInput(path, fmt, groups, tuple(data), folder, pattern, head, tuple(notes))


def _size(f: Path) -> int:
    """The part's size in bytes; for a .gz part, 1 when it unpacks to anything (its first byte), else 0."""
    if not f.name.lower().endswith(".gz"):
        return f.stat().st_size
    try:
        with gzip.open(f, "rb") as gz:
            return len(gz.read(1))
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(
            f"{short_name(f.name)} looks gzip-compressed but cannot be unpacked ({e}); give it uncompressed"
        ) from None


def _columns(f: Path, fmt: str, limits: ReadLimits) -> PartColumns:
    """A Parquet or JSON Lines part's columns (``corpus.parts``): the footer's schema, or the first lines' keys. A .gz
    part is unpacked once here, within the limits (a gzip bomb is refused as the local reader refuses it)."""
    import pyarrow as pa

    gz = f.name.lower().endswith(".gz")
    if fmt == "parquet":
        return parquet_columns(f.name, pa.BufferReader(_gunzip(f, limits)) if gz else str(f))
    if gz:
        head = _gunzip(f, limits)[:HEAD_BYTES]
    else:
        with open(f, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    return json_columns(f.name, head)


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            yield Path(root) / name


def _rel(f: Path, folder: Path | None) -> str:
    return str(f.relative_to(folder)) if folder is not None else f.name


def _classify(found: list[Path], format: str, explicit: bool, folder: Path | None) -> tuple[list[Path], list[Path]]:
    """(data parts, files not read). A data file Spark would skip by name, or a .zip, is an error."""
    data: list[Path] = []
    skipped: list[Path] = []
    for f in found:
        fmt = format_of(f.name)
        is_data = fmt is not None and (format == "auto" or fmt == format)
        if format != "auto" and fmt is None and not _hidden(f.name) and "." not in f.name:
            is_data = True  # Hadoop's part files have no extension: the format given says what they are
        if explicit and format != "auto":
            is_data = True
        if f.suffix.lower() == ".zip":
            raise InputError(
                f"{short_name(f.name)} is a .zip archive, which Spark cannot read; unzip it (gzip is read), "
                "or use the local engine"
            )
        if is_data and _hidden(f.name):
            raise InputError(
                f"{short_name(_rel(f, folder))}: Spark skips files whose names start with '_' or '.' (Hadoop's hidden "
                "files), so its users would be left out; rename it, or move it out of the input"
            )
        if explicit and fmt is None and format == "auto":
            raise InputError(
                f"cannot tell the format of {short_name(f.name)} from its name; give {opt('format')} "
                f"({', '.join(SPARK_FORMATS[1:])})"
            )
        (data if is_data else skipped).append(f)
    return data, skipped


def _one_format(data: list[Path]) -> str:
    fmts = {format_of(f.name) for f in data}
    if len(fmts) > 1:
        raise InputError(
            f"the input mixes formats ({', '.join(sorted(str(f) for f in fmts))}); read one format at a time: "
            f"give a glob such as 'folder/*.csv', or {opt('format')}"
        )
    return fmts.pop() or "csv"


def _check_regular(f: Path, limits: ReadLimits) -> None:
    from ..corpus.limits import check_regular

    check_regular(os.stat(f), str(f), limits, size_name=f.name)


def _gunzip(f: Path, limits: ReadLimits) -> bytes:
    try:
        with gzip.open(f, "rb") as gz:
            return read_capped(gz, limits.unpack_limit(f.stat().st_size), short_name(f.name))
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(
            f"{short_name(f.name)} looks gzip-compressed but cannot be unpacked ({e}); give it uncompressed"
        ) from None


def _delimited(data: list[Path], fmt: str, limits: ReadLimits) -> tuple[tuple[Group, ...], bytes, list[str]]:
    """Scan each CSV/TSV part as the local reader does; group the parts by encoding and layout."""
    from ..corpus.csvscan import UnterminatedQuote, scan_csv, scan_csv_windows
    from ..corpus.readers import delimited_head

    notes: list[str] = []
    head0: bytes | None = None
    delimiter = ","
    first_cols: PartColumns | None = None
    groups: dict[tuple[str, bool], list[str]] = {}
    stray = 0
    for f in data:
        with _bytes(f, limits) as buf:
            head = bytes(buf[:HEAD_BYTES])
            if head0 is None:
                head0 = head
                delimiter = delimited_head(head, fmt, None)[0]
            encoding = _encoding(f, buf)
            try:
                if isinstance(buf, mmap.mmap):  # window by window, each dropped once scanned
                    shape = scan_csv_windows(buf, delimiter, done=functools.partial(_drop_pages, buf))
                else:
                    shape = scan_csv(buf, delimiter)
                err = None
            except UnterminatedQuote as e:
                err = e
        if err is not None:
            raise InputError(
                f"{short_name(f.name)}: line {err.line}: {err}; close that quote (a quote inside a quoted field is "
                'written twice: "")'
            )
        stray += shape.stray_quotes
        cols = PartColumns(f.name, tuple(_first_row(head, delimiter, encoding)))
        if first_cols is None:
            first_cols = cols
        check_same_columns(fmt, [first_cols, cols])
        if encoding != "UTF-8":
            notes.append(
                f"{short_name(f.name)} is not valid UTF-8: none of its rows with non-ASCII characters is, so it was "
                f"decoded as {_ENC_NAMES[encoding]}; if characters look wrong, re-save the file as UTF-8"
            )
        groups.setdefault((encoding, shape.multiline_fields > 0 or encoding != "UTF-8"), []).append(str(f))
    if stray:
        notes.append(
            f"{stray} quoted fields hold a quote that is not doubled; their text was read as far as the quoting "
            'allows: write "" for a quote inside a quoted field'
        )
    out = tuple(Group(tuple(paths), enc, multi) for (enc, multi), paths in groups.items())
    return out, _utf8_head(head0 or b"", out[0].encoding if out else "UTF-8"), notes


_ENC_NAMES = {"windows-1252": "cp1252 (Windows-1252)", "ISO-8859-1": "Latin-1"}


class _bytes:
    """A part's bytes: the file mapped (uncompressed), or unpacked within the limits (.gz)."""

    def __init__(self, f: Path, limits: ReadLimits) -> None:
        self.f, self.limits = f, limits
        self._fh = self._map = None

    def __enter__(self):
        if self.f.name.lower().endswith(".gz"):
            return _gunzip(self.f, self.limits)
        if self.f.stat().st_size == 0:
            return b""
        self._fh = open(self.f, "rb")  # noqa: SIM115 - closed in __exit__
        self._map = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
        return self._map

    def __exit__(self, *exc) -> None:
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a view of it still alive (an exception's frame): closed when collected
                pass
        if self._fh is not None:
            self._fh.close()


def _drop_pages(buf, start: int, end: int) -> None:
    """Drop the pages of a mapped part between ``start`` and ``end`` from this process (read again from the file
    if touched again): scanning a 2 GB part then never holds it all in the driver's memory."""
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        a = start - start % mmap.PAGESIZE
        b = min(end, len(buf))
        if b > a:
            buf.madvise(mmap.MADV_DONTNEED, a, b - a)


def _encoding(f: Path, buf) -> str:
    """Java's name of the part's encoding: UTF-8, or the local reader's fallback when no row with non-ASCII
    characters is UTF-8; a part that mixes the two is refused (Spark decodes one encoding per file)."""
    dec = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(buf)
    try:
        for a in range(0, len(view), _CHUNK):
            dec.decode(view[a : a + _CHUNK], final=a + _CHUNK >= len(view))
            _drop_pages(buf, a, a + _CHUNK)
        return "UTF-8"
    except UnicodeDecodeError:
        pass
    finally:
        view.release()
    from ..corpus.decode import decode_rows

    d = decode_rows(bytes(buf))
    if d.encoding == "utf-8":
        raise InputError(
            f"{short_name(f.name)}: {d.fallback_rows:,} rows are not valid UTF-8 among rows that are; Spark decodes "
            "one encoding per file: re-save it as UTF-8, or use the local engine (it decodes such rows one by one)"
        )
    if d.encoding == "latin-1" or not re.search(rb"[\x80-\x9f]", buf):
        return "ISO-8859-1"  # cp1252 and Latin-1 agree outside 0x80-0x9F, and Spark reads Latin-1 by default
    return "windows-1252"


def _utf8_head(head: bytes, encoding: str) -> bytes:
    if encoding == "UTF-8":
        return head
    return head.decode("latin-1" if encoding == "ISO-8859-1" else "cp1252", "replace").encode("utf-8")


def _first_row(head: bytes, delimiter: str, encoding: str) -> list[str]:
    from ..corpus.readers import first_rows

    rows = first_rows(_utf8_head(head, encoding), delimiter, 1)
    return rows[0] if rows else []


# --------------------------------------------------------------------------- output paths
def check_paths(inp: SparkInput, outputs: dict[str, Any], public: str | None) -> None:
    """Refuse an output (each file of it: ``outputs.output_files``) that is one of the input's parts, lies inside
    the input folder or matches the input glob, and a public corpus that is (or holds the same data as) one of the
    parts."""
    from ..corpus.load import same_content

    for label, out in output_files(outputs):
        _not_in_input(inp, label, out, "writing it there would change what Spark reads")
    if public is None or not inp.parts:
        return
    _not_in_input(inp, "--public-corpus", Path(public), "it would be the private input itself")
    if Path(public).is_file():
        for part in inp.parts:
            if same_content(public, part):
                raise InputError(
                    f"--public-corpus holds the same data as {short_name(part.name)}, a part of the private input; "
                    "GW-KT's frequencies must come from PUBLIC data: give a public corpus, or drop the flag"
                )


def _not_in_input(inp: SparkInput, label: str, path: Path, why: str) -> None:
    target = path.resolve()
    err = OutputError if label != "--public-corpus" else InputError
    for part in inp.parts:
        if part.resolve() == target:
            raise err(f"{label} {short_path(path)} is a part of the input: {why}; choose another path")
    if inp.folder is not None and inp.folder.resolve() in target.parents:
        raise err(f"{label} {short_path(path)} is inside the input folder: {why}; choose a path outside it")
    if inp.pattern is not None and fnmatch.fnmatch(str(target), os.path.abspath(inp.pattern)):
        raise err(f"{label} {short_path(path)} matches the input pattern: {why}; choose another path")
