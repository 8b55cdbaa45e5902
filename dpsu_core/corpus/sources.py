"""A corpus file's bytes: read from a path, bytes or a binary file object within the read limits, a single-member
.zip or a .gz unpacked (``limits``: size checked first, decompression capped), and binary files refused from their
first bytes."""

from __future__ import annotations

import codecs
import gzip
import io
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import numpy as np

from ..errors import (
    EmptyCorpusError,
    EncodingError,
    InputError,
    ResourceLimitError,
    first_line,
    short_name,
    shorten_list,
)
from .limits import DEFAULT_LIMITS, HEAD_BYTES, ReadLimits, read_capped, read_regular_file

SNIFF = 65536  # the first bytes the readers look at: format, delimiter, header, binary content


@dataclass
class RawFile:
    """The bytes of the data file (after unpacking) and what we know about it."""

    data: bytes
    name: str
    notes: list[str] = field(default_factory=list)


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
            f"{name or 'the file'} looks gzip-compressed but cannot be unpacked ({first_line(e)}); upload it uncompressed"
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
            f"{what} cannot be unpacked ({first_line(e)}); re-create the archive or upload the file itself"
        ) from None
    return RawFile(data, PurePath(member.filename).name, [f"read {member.filename!r} from zip archive {raw.name!r}"])


_NOT_TEXT_MAGIC = (b"PK", b"\x1f\x8b", b"PAR1", codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)  # zip, gzip, Parquet, UTF-16
_NOT_TEXT_SUFFIXES = (".zip", ".gz", ".parquet")


def check_head(head: bytes, name: str = "") -> None:
    """The first bytes of a file, checked before the rest is read: unless they start an archive, a Parquet or a
    UTF-16 file, binary first bytes (NUL or control bytes) refuse the file at once, so a huge binary file (a 10 GB
    sparse file of zeros) is never read whole to be refused."""
    if head.startswith(_NOT_TEXT_MAGIC) or name.lower().endswith(_NOT_TEXT_SUFFIXES):
        return
    check_not_binary(RawFile(data=head, name=name))


def check_not_binary(raw: RawFile) -> None:
    sample = np.frombuffer(raw.data[:SNIFF], dtype=np.uint8)
    if sample.size == 0:
        return
    control = (sample < 32) & ~np.isin(sample, (9, 10, 12, 13))
    if control.mean() > 0.01 or b"\x00" in raw.data:  # NUL anywhere (memchr over the whole file)
        raise EncodingError(
            f"{raw.name or 'the file'} looks binary (it holds NUL or control bytes), not text; "
            "upload a CSV, TSV, JSON Lines, plain-text or Parquet file (a .zip with one such file also works)"
        )
