"""Which format a corpus file is read as: given, or detected from its first bytes and its name."""

from __future__ import annotations

import codecs
import re
from pathlib import PurePath

from ..errors import ParameterError
from .sources import SNIFF, RawFile

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
_SEQ_MARKER = re.compile(r"^%\s*sequences\b", re.IGNORECASE)


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
    head = data[:SNIFF]
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
