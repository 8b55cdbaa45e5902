"""Resource limits of reading a corpus, checked before the work they bound.

- Only regular files are read: a device (``/dev/zero``), a FIFO or a socket is refused, since it
  may never end; a file's size is checked (``max_file_bytes``) before a byte is read.
- Decompression (a .gz, a .zip member) streams in chunks and stops once the output passes
  ``unpack_limit(compressed size)``: by default 20 times the compressed size, at least 16 MiB and
  at most 4 GiB. A zip bomb therefore costs at most that much memory, never what it claims to hold.
  The same bound applies to what a Parquet file's metadata says its pages hold uncompressed.
- JSON is checked for its nesting depth (``max_json_depth``) with one pass over the bytes before a
  parser sees it: Python's json module raises RecursionError and Arrow's reader crashes the process
  on a line nested a few thousand levels deep.

``ReadLimits`` holds the values; ``load_corpus(limits=...)``, the CLI's ``--max-unpacked-mb`` and
``--max-file-mb`` set them.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from ..errors import InputError, ParameterError, ResourceLimitError, short_name

MiB = 1 << 20
GiB = 1 << 30
_CHUNK = 4 * MiB


TiB = 1 << 40
# the largest value of each read limit (no file this machine can hold passes them: past them a typo, not a file)
LIMIT_MAX: dict[str, int] = {
    "max_file_bytes": TiB,
    "unpack_ratio": 1_000_000,
    "unpack_floor_bytes": TiB,
    "unpack_max_bytes": TiB,
    "max_json_depth": 1_000_000,
}


def _shown(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 30 else f"a {type(v).__name__} of {len(text)} digits"


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on what reading one corpus may cost. Every field is a positive number.

    max_file_bytes       largest input file read (default 16 GiB).
    unpack_ratio         a compressed file may unpack to at most this many times its size (default 20) ...
    unpack_floor_bytes   ... but small files always to at least this much (default 16 MiB) ...
    unpack_max_bytes     ... and no file to more than this (default 4 GiB).
    max_json_depth       deepest nesting of arrays/objects in a JSON file (default 100; a record needs 2).
    """

    max_file_bytes: int = 16 * GiB
    unpack_ratio: float = 20.0
    unpack_floor_bytes: int = 16 * MiB
    unpack_max_bytes: int = 4 * GiB
    max_json_depth: int = 100

    def __post_init__(self) -> None:
        for name, most in LIMIT_MAX.items():
            v = getattr(self, name)
            ok = not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))
            if not ok or not 0 < v <= most:  # NaN fails this too; a huge int is compared exactly, never cast
                raise ParameterError(f"read limit {name} must be a positive number up to {most:,}, got {_shown(v)}")

    def unpack_limit(self, compressed_bytes: int) -> int:
        """Most bytes a compressed input of ``compressed_bytes`` may unpack to."""
        return int(min(max(self.unpack_ratio * compressed_bytes, self.unpack_floor_bytes), self.unpack_max_bytes))


DEFAULT_LIMITS = ReadLimits()


def mb_text(n: float) -> str:
    return f"{n / MiB:,.0f} MB" if n >= MiB else f"{n:,.0f} bytes"


HEAD_BYTES = 65536  # the first bytes of a file, checked before the rest is read


def check_regular(st: os.stat_result, path: object, limits: ReadLimits, size_name: object | None = None) -> None:
    """A regular file (not a FIFO or a device: it may never end) within the size limit, from its ``stat``;
    ``size_name``: how the size message names it (default: ``path``)."""
    if not stat.S_ISREG(st.st_mode):
        kind = "FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "device or socket"
        raise InputError(
            f"{short_name(path)} is a {kind}, not a regular file: it may never end; save the data to a file first"
        )
    if st.st_size > limits.max_file_bytes:
        raise ResourceLimitError(
            f"{short_name(path if size_name is None else size_name)} is {mb_text(st.st_size)}, above the "
            f"{mb_text(limits.max_file_bytes)} limit on input files; split it, or raise the limit (CLI: --max-file-mb)"
        )


def read_regular_file(path: Path, limits: ReadLimits, check_head: Callable[[bytes], None] | None = None) -> bytes:
    """The bytes of the regular file ``path``, after checking its type and size (nothing read before) and, with
    ``check_head``, its first ``HEAD_BYTES`` (it raises to refuse the file: a 10 GB sparse file of zeros is
    refused as binary after 64 KB, not read whole)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"file not found: {short_name(path)}; check the path") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{short_name(path)} is a folder, not a file; give the path of one data file")
    check_regular(st, path, limits)
    with open(path, "rb") as fh:
        if check_head is not None:
            check_head(fh.read(HEAD_BYTES))
            fh.seek(0)  # read again with the rest: one buffer, no copy of a large file
        data = fh.read(st.st_size + 1)  # one byte more: a file that grew while we read is noticed
    if len(data) > limits.max_file_bytes:
        raise ResourceLimitError(
            f"{short_name(path)} grew past the {mb_text(limits.max_file_bytes)} limit on input files while being read"
        )
    return data


def read_capped(stream, cap: int, what: str) -> bytes:
    """Everything ``stream.read`` gives, in chunks, refusing (ResourceLimitError) once it passes ``cap`` bytes."""
    buf = io.BytesIO()  # getvalue() hands over its buffer without a second copy
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, cap + 1 - size))
        if not chunk:
            return buf.getvalue()
        buf.write(chunk)
        size += len(chunk)
        if size > cap:
            raise ResourceLimitError(
                f"{what} unpacks to more than {mb_text(cap)} (the limit for a file of its size; a zip bomb?); "
                "upload it uncompressed, or raise the limit (CLI: --max-unpacked-mb)"
            )


@numba.njit(cache=True, nogil=True)
def _json_depth_kernel(data, limit):  # pragma: no cover  (compiled)
    """(first 1-based line whose nesting passes ``limit`` or -1, deepest nesting seen); strings are skipped."""
    depth = 0
    deepest = 0
    line = 1
    in_string = False
    escaped = False
    for i in range(data.shape[0]):
        c = data[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == 92:  # backslash
                escaped = True
            elif c == 34:  # quote
                in_string = False
            elif c == 10:
                line += 1
            continue
        if c == 34:
            in_string = True
        elif c == 91 or c == 123:  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
            if depth > limit:
                return line, deepest
        elif c == 93 or c == 125:  # ] }
            depth -= 1
        elif c == 10:
            line += 1
            if depth < 0:
                depth = 0
    return -1, deepest


def check_json_depth(data: bytes, name: str, limits: ReadLimits) -> None:
    """Refuse JSON nested deeper than ``limits.max_json_depth`` (one pass over the bytes, no copy)."""
    line, _ = _json_depth_kernel(np.frombuffer(data, dtype=np.uint8), int(limits.max_json_depth))
    if line >= 0:
        raise ResourceLimitError(
            f"{name}: line {line} nests arrays/objects more than {limits.max_json_depth} levels deep; "
            'a corpus record needs one object like {"user": ..., "text": ...}'
        )


# ---- memory budget of a load (the app warns before a load that would pass it) -------------------------
# Peak memory of load_corpus, as a multiple of the unpacked file size: measured 13x on a 26 MB CSV at
# max_n = 1 (fixed costs weigh more on small files) and 8.6x on a 1 GB CSV before the streaming reader;
# each longer n-gram adds about the unigram layer again. A deliberately high estimate: it only decides a warning.
LOAD_PEAK_FACTOR = 10.0
LOAD_PEAK_FACTOR_PER_EXTRA_N = 4.0
DEFAULT_SESSION_BUDGET_MB = 2048
SESSION_BUDGET_ENV = "DPSU_SESSION_MEMORY_MB"


def estimate_load_bytes(unpacked_bytes: int, max_n: int = 1) -> int:
    """A high estimate of the peak memory of loading a file of ``unpacked_bytes`` with n-grams up to ``max_n``."""
    factor = LOAD_PEAK_FACTOR + LOAD_PEAK_FACTOR_PER_EXTRA_N * max(int(max_n) - 1, 0)
    return int(unpacked_bytes * factor)


def session_budget_bytes(environ: dict[str, str] | None = None) -> int:
    """The per-session memory budget: ``DPSU_SESSION_MEMORY_MB`` (MB) or 2048 MB. A bad value is an error."""
    env = os.environ if environ is None else environ
    text = env.get(SESSION_BUDGET_ENV, "").strip()
    if not text:
        return DEFAULT_SESSION_BUDGET_MB * MiB
    try:
        mb = float(text)
    except ValueError:
        mb = float("nan")
    if not np.isfinite(mb) or mb <= 0:
        raise ParameterError(f"{SESSION_BUDGET_ENV} must be a positive number of MB, got {text!r}")
    return int(mb * MiB)


def budget_warning(unpacked_bytes: int, max_n: int, budget_bytes: int) -> str | None:
    """A warning when loading would likely pass the session's memory budget, else None."""
    need = estimate_load_bytes(unpacked_bytes, max_n)
    if need <= budget_bytes:
        return None
    return (
        f"Loading this file ({unpacked_bytes / MiB:,.0f} MB unpacked) with n-grams up to {max_n} may need about "
        f"{need / GiB:,.1f} GB of memory at peak, more than this session's budget of {budget_bytes / GiB:,.1f} GB "
        f"(set by {SESSION_BUDGET_ENV}). The server is shared: use a smaller sample or a shorter longest n-gram, "
        "or run the command line tool on the full file."
    )
