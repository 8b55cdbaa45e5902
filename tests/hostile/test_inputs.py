"""Inputs that used to slip through: a huge sparse file is refused from its first bytes, files joined together
keep their repeated header out of the data, and absurd numbers in the limits are range errors."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpsu_core import load_corpus
from dpsu_core.corpus.limits import ReadLimits
from dpsu_core.corpus.readers import read_sheet
from dpsu_core.errors import EncodingError, ParameterError
from tests.hostile.generate import csv_bytes

REPO = Path(__file__).resolve().parents[2]
GiB = 1 << 30

_MEASURE = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a regression fails with MemoryError, not 10 GB used
from dpsu_core.corpus.readers import read_source
from dpsu_core.errors import DpsuError
try:
    read_source(sys.argv[1])
    outcome = "read"
except DpsuError as exc:
    outcome = str(exc)
io = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
# VmHWM: this program's own peak (ru_maxrss survives exec, so it would count a large parent's pages at the fork)
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print(json.dumps({"outcome": outcome, "rchar": int(io["rchar"]), "peak_kb": int(status["VmHWM"].split()[0])}))
"""


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux's /proc/self/io to count bytes read")
@pytest.mark.parametrize("name", ["sparse.csv", "sparse.txt", "sparse"])
def test_ten_gigabyte_sparse_file_is_refused_from_its_first_bytes(tmp_path, name):
    """10 GB of zeros (a sparse file: no disk used) is refused as binary after its first 64 KB: the process reads a
    few MB in all (its own modules included) and its peak memory stays far below the file's size."""
    path = tmp_path / name
    with open(path, "wb") as fh:
        fh.truncate(10 * GiB)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert "looks binary" in got["outcome"], got
    assert got["rchar"] < 256 << 20, got  # bytes read by the whole process: modules, and 64 KB of the file
    assert got["peak_kb"] * 1024 < 1 * GiB, got


def test_head_check_leaves_archives_parquet_and_utf16_to_their_readers(tmp_path):
    """Binary first bytes are fine where the format starts with them: a zip, gzip, Parquet or UTF-16 file."""
    rows = [(f"u{i}", "alpha beta gamma") for i in range(40)]
    text = csv_bytes(rows)
    path = tmp_path / "posts.csv"
    path.write_bytes(codecs.BOM_UTF16_LE + text.decode().encode("utf-16-le"))
    assert load_corpus(path).n_users == 40
    path.write_bytes(b"\x00" * 10 + text)  # NUL in the first bytes of a text file
    with pytest.raises(EncodingError, match="looks binary"):
        load_corpus(path)
    with open(path, "rb") as fh, pytest.raises(EncodingError, match="looks binary"):  # a file object too
        load_corpus(fh)


def _joined(tmp_path: Path, *parts: bytes, name: str = "joined.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(parts))
    return path


def _users(first: int, n: int) -> list[tuple[str, str]]:
    return [(f"u{i:04d}", f"alpha beta gamma word{i % 5}") for i in range(first, first + n)]


@pytest.mark.parametrize("bom", [codecs.BOM_UTF8, b""], ids=["bom", "no_bom"])
def test_two_csvs_joined_keep_their_second_header_out(tmp_path, bom):
    """Two CSVs of 100 users each, concatenated (the second with a byte-order mark before its repeated header):
    200 users, not 201 with a phantom user 'author' who wrote 'body'; the dropped row is said in the notes."""
    path = _joined(tmp_path, csv_bytes(_users(0, 100)), bom + csv_bytes(_users(100, 100)))
    corpus = load_corpus(path)
    assert corpus.n_users == 200 and corpus.n_posts == 200
    assert "body" not in set(corpus.vocab.tolist())  # the phantom post
    notes = [n for n in corpus.source.notes if "repeating the header" in n]
    assert notes == ["1 row repeating the header ('author', 'body') was dropped, not read as posts: files joined "
                     "together, each with its header?"]  # fmt: skip


def test_three_files_joined_quoted_headers_and_tsv(tmp_path):
    quoted = b'"author","body"\n' + csv_bytes(_users(0, 30), header=None)
    path = _joined(tmp_path, quoted, codecs.BOM_UTF8 + quoted.replace(b"u00", b"v00"), quoted.replace(b"u00", b"w00"))
    corpus = load_corpus(path)
    assert corpus.n_users == 90
    assert any(n.startswith("2 rows repeating the header") for n in corpus.source.notes), corpus.source.notes
    tsv = csv_bytes(_users(0, 20), delimiter="\t")
    corpus = load_corpus(_joined(tmp_path, tsv, tsv.replace(b"u00", b"x00"), name="joined.tsv"))
    assert corpus.n_users == 40


def test_a_real_row_like_the_header_in_one_column_only_is_kept(tmp_path):
    """Only a row equal to the header in every column read is dropped: a user named 'author' with posts stays."""
    rows = [*_users(0, 30), ("author", "alpha beta"), ("u9999", "body")]
    corpus = load_corpus(_joined(tmp_path, csv_bytes(rows)))
    assert corpus.n_users == 32 and corpus.n_posts == 32 and "body" in set(corpus.vocab.tolist())
    assert not any("repeating the header" in n for n in corpus.source.notes)


def test_the_column_view_drops_repeated_headers_too(tmp_path):
    path = _joined(tmp_path, csv_bytes(_users(0, 10)), codecs.BOM_UTF8 + csv_bytes(_users(10, 10)))
    sheet = read_sheet(path)
    assert sheet.table.num_rows == 20
    assert "author" not in sheet.table.column(0).to_pylist()
    assert any("repeating the header" in n for n in sheet.notes)


@pytest.mark.parametrize(
    "field", ["max_file_bytes", "unpack_ratio", "unpack_floor_bytes", "unpack_max_bytes", "max_json_depth"]
)
@pytest.mark.parametrize("value", [10**300, 1e300, float("inf"), float("nan"), 0, -1, "5", True, None])
def test_read_limits_out_of_range_are_range_errors(field, value):
    with pytest.raises(ParameterError, match=f"read limit {field} must be a positive number up to"):
        ReadLimits(**{field: value})
