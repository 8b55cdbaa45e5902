"""limits.py and its use in read_source: only regular files, size checked before reading, decompression capped,
JSON depth checked before any parser sees the file."""

from __future__ import annotations

import gzip
import io
import os
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpsu_core.corpus import ReadLimits, load_corpus
from dpsu_core.corpus.limits import MiB, check_json_depth, read_capped
from dpsu_core.corpus.readers import peek_columns, read_source, read_table
from dpsu_core.errors import MAX_MESSAGE_CHARS, InputError, ParameterError, ResourceLimitError

CSV = b"author,body\n" + b"".join(f"u{i},alpha beta gamma {i % 5}\n".encode() for i in range(200))
SMALL = ReadLimits(unpack_floor_bytes=1 * MiB, unpack_max_bytes=64 * MiB)


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_unpack_limit_rule():
    lim = ReadLimits()
    assert lim.unpack_limit(1000) == 16 * MiB  # small files: the floor
    assert lim.unpack_limit(10 * MiB) == 200 * MiB  # 20x
    assert lim.unpack_limit(1 << 40) == 4 << 30  # at most 4 GiB
    for bad in (0, -1, float("nan"), True, "1"):
        with pytest.raises(ParameterError):
            ReadLimits(unpack_ratio=bad)


def test_read_capped_stops_at_the_cap():
    src = io.BytesIO(b"x" * (3 * MiB))
    assert read_capped(io.BytesIO(b"abc"), 3, "t") == b"abc"  # exactly the cap is fine
    with pytest.raises(ResourceLimitError, match="more than 1 MB"):
        read_capped(src, 1 * MiB, "t")
    assert src.tell() <= 1 * MiB + 1  # it stopped reading right after the cap, not at the end


def test_zip_bomb_refused_within_the_cap():
    payload = b"u1,alpha beta\n" * (3 * MiB // 14)  # ~3 MB that compresses to a few KB
    bomb = _zip({"posts.csv": payload})
    assert len(bomb) * 20 < 1 * MiB < len(payload)
    with pytest.raises(ResourceLimitError, match="zip bomb"):
        read_source(bomb, SMALL)
    big = ReadLimits(unpack_floor_bytes=8 * MiB)
    assert read_source(bomb, big).data == payload  # under a higher limit the same archive reads


def test_zip_declared_size_checked_before_unpacking():
    payload = b"\x00" * (2 * MiB)
    bomb = _zip({"zeros.csv": payload})
    with pytest.raises(ResourceLimitError, match="claims 2 MB"):
        read_source(bomb, SMALL)


def test_gzip_bomb_refused_and_good_gzip_read():
    payload = b"u1,alpha beta\n" * (3 * MiB // 14)
    with pytest.raises(ResourceLimitError, match="more than 1 MB"):
        read_source(gzip.compress(payload), SMALL)
    raw = read_source(io.BytesIO(gzip.compress(CSV)), SMALL)
    assert raw.data == CSV


def test_bad_crc_and_encrypted_zip_are_typed_errors():
    stored = io.BytesIO()
    with zipfile.ZipFile(stored, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("posts.csv", CSV)
    data = bytearray(stored.getvalue())
    data[data.find(b"alpha")] = ord("A")
    with pytest.raises(InputError, match="Bad CRC"):
        read_source(bytes(data))
    enc = bytearray(_zip({"posts.csv": CSV}))
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        enc[enc.find(sig) + off] |= 1
    with pytest.raises(InputError, match="encrypted"):
        read_source(bytes(enc))


def test_many_members_message_is_short():
    archive = _zip({f"member_{i:05d}.csv": b"a" for i in range(2000)})
    with pytest.raises(InputError) as info:
        read_source(archive)
    msg = str(info.value)
    assert len(msg) <= MAX_MESSAGE_CHARS and "found 2000" in msg and "… and 1992 more" in msg


def test_special_files_and_size_checked_before_reading(tmp_path):
    with pytest.raises(InputError, match="not a regular file"):
        read_source("/dev/zero")
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        read_source(fifo)  # returns at once: opening a FIFO would block
    big = tmp_path / "big.csv"
    big.write_bytes(CSV)
    with pytest.raises(ResourceLimitError, match="limit on input files"):
        read_source(big, ReadLimits(max_file_bytes=100))
    with pytest.raises(ResourceLimitError, match="limit on input files"):
        read_source(io.BytesIO(CSV), ReadLimits(max_file_bytes=100))
    assert read_source(big, ReadLimits(max_file_bytes=len(CSV))).data == CSV


def test_json_depth_checked_before_parsing():
    deep = b'{"user": "a", "text": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    good = b'{"user": "a", "text": "x"}\n' * 3
    with pytest.raises(ResourceLimitError, match="line 4 nests"):
        read_table(good + deep)  # Arrow's reader would crash the process on this line
    with pytest.raises(ResourceLimitError, match="line 1 nests"):
        peek_columns(io.BytesIO(b"[" * 50_000 + b"]" * 50_000), format="jsonl")
    # brackets inside strings (with escaped quotes) do not count
    tricky = b'{"user": "a", "text": "[[[[ \\" {{{{ ' + b"[" * 500 + b'"}\n'
    check_json_depth(tricky, "t", ReadLimits(max_json_depth=3))
    with pytest.raises(ResourceLimitError):
        check_json_depth(b'{"a": [[[1]]]}', "t", ReadLimits(max_json_depth=3))


def test_parquet_decoded_size_capped():
    n = 200_000
    table = pa.table({"author": [f"u{i % 50}" for i in range(n)], "body": ["alpha beta gamma " * 10] * n})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    data = buf.getvalue()
    assert len(data) * 20 < 1 * MiB  # tiny on disk, ~34 MB decoded
    with pytest.raises(ResourceLimitError, match="decodes to more than"):
        read_table(data, limits=SMALL)
    tab = read_table(data, limits=ReadLimits(unpack_floor_bytes=128 * MiB))
    assert tab.n_rows == n and tab.user_column == "author"


def test_parquet_reads_only_the_chosen_columns():
    cols = {f"c{i}": ["x", "y"] * 50 for i in range(300)}
    cols["author"] = [f"u{i}" for i in range(100)]
    cols["body"] = ["alpha beta"] * 100
    buf = io.BytesIO()
    pq.write_table(pa.table(cols), buf)
    tab = read_table(buf.getvalue(), user_col="author", text_col="body")
    assert tab.users.to_pylist()[:2] == ["u0", "u1"] and tab.texts.to_pylist()[0] == "alpha beta"
    tab2 = read_table(buf.getvalue(), user_col=300, text_col="301")  # positions count every column
    assert tab2.users.to_pylist() == tab.users.to_pylist()


def test_load_corpus_passes_limits(tmp_path):
    path = tmp_path / "p.csv.gz"
    path.write_bytes(gzip.compress(CSV + CSV.split(b"\n", 1)[1] * 49))
    assert load_corpus(path).n_users == 200
    with pytest.raises(ResourceLimitError):
        load_corpus(path, limits=ReadLimits(unpack_floor_bytes=1000, unpack_max_bytes=1000))
