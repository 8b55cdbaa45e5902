"""Readers: sources, zip/gzip, format detection, encodings, columns (dpsu_core.corpus.readers)."""

from __future__ import annotations

import gzip
import io
import json
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpsu_core.corpus import FORMATS, guess_columns, peek_columns
from dpsu_core.corpus.readers import detect_format, read_source, read_table
from dpsu_core.errors import ColumnError, EmptyCorpusError, EncodingError, InputError, ParameterError

CSV = 'author,body,score\nalice,Hello world,1\nbob,"Multi\nline, quoted",2\n'


class Upload(io.BytesIO):
    """Like Streamlit's UploadedFile: a binary buffer with a .name."""

    def __init__(self, data: bytes, name: str):
        super().__init__(data)
        self.name = name


# ---- guess_columns / peek_columns --------------------------------------------


@pytest.mark.parametrize(
    "columns, expected",
    [
        (["author", "body", "score"], ("author", "body")),
        (["id", "User_Id", "Clean_Text", "text"], ("User_Id", "text")),  # text outranks clean_text
        (["username", "message"], ("username", "message")),
        (["name", "content", "user"], ("user", "content")),  # user outranks name
        (["a", "b"], (None, None)),
        ([], (None, None)),
    ],
)
def test_guess_columns(columns, expected):
    assert guess_columns(columns) == expected


def test_peek_columns_for_every_tabular_format(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text(CSV)
    assert peek_columns(p) == ["author", "body", "score"]
    assert peek_columns(p, has_header=False) == ["0", "1", "2"]
    assert peek_columns(b"who\tsaid\nal\thi\n", format="tsv") == ["who", "said"]
    jl = b'{"user": "a", "text": "x"}\n{"user": "b", "text": "y", "extra": 1}\n'
    assert peek_columns(Upload(jl, "d.jsonl")) == ["user", "text", "extra"]
    pqp = tmp_path / "x.parquet"
    pq.write_table(pa.table({"u": ["a"], "t": ["b"]}), pqp)
    assert peek_columns(pqp) == ["u", "t"]
    assert peek_columns(b"just a line\nanother\n", format="text") == []


def test_peek_columns_reads_an_upload_twice():
    up = Upload(CSV.encode(), "posts.csv")
    assert peek_columns(up) == ["author", "body", "score"]
    assert peek_columns(up) == ["author", "body", "score"]  # rewinds the buffer


# ---- sources -----------------------------------------------------------------


def test_sources_path_bytes_and_upload_agree(tmp_path):
    p = tmp_path / "posts.csv"
    p.write_bytes(CSV.encode())
    for src in (p, str(p), CSV.encode(), Upload(CSV.encode(), "posts.csv")):
        t = read_table(src)
        assert t.texts.to_pylist() == ["Hello world", "Multi\nline, quoted"]
        assert t.users.to_pylist() == ["alice", "bob"]


def test_missing_file_and_wrong_source_type(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_source(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="folder"):
        read_source(tmp_path)
    with pytest.raises(InputError, match="file path, bytes"):
        read_source(12345)
    with pytest.raises(InputError, match="binary mode"):
        read_source(io.StringIO("a,b"))


@pytest.mark.parametrize("data", [b"", b"   \n\r\n  "])
def test_empty_file(data):
    with pytest.raises(EmptyCorpusError, match="empty"):
        read_source(Upload(data, "x.csv"))


def zipped(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


def test_zip_single_member_ignores_macosx():
    data = zipped({"posts.csv": CSV.encode(), "__MACOSX/._posts.csv": b"\x00\x05junk", "__MACOSX/": b""})
    raw = read_source(Upload(data, "posts.zip"))
    assert raw.name == "posts.csv" and raw.data == CSV.encode()
    assert "zip" in raw.notes[0]
    assert read_table(data).format == "csv"


def test_zip_with_several_members_or_bad_zip():
    with pytest.raises(InputError, match="exactly one data file.*a.csv, b.csv"):
        read_source(zipped({"a.csv": b"x", "b.csv": b"y"}))
    with pytest.raises(InputError, match="not a valid zip"):
        read_source(Upload(b"PK\x03\x04garbage", "x.zip"))


def test_gzip_is_unpacked():
    raw = read_source(Upload(gzip.compress(CSV.encode()), "posts.csv.gz"))
    assert raw.name == "posts.csv" and raw.data == CSV.encode()


# ---- format detection --------------------------------------------------------


@pytest.mark.parametrize(
    "name, data, fmt",
    [
        ("a.csv", b"x", "csv"),
        ("a.TSV", b"x", "tsv"),
        ("a.jsonl", b"x", "jsonl"),
        ("a.ndjson", b"x", "jsonl"),
        ("a.parquet", b"x", "parquet"),
        ("a.seq", b"x", "sequences"),
        ("a.txt", b"hello there\nsecond post\n", "text"),
        ("a.txt", b"% comment\n1 2 3\n4 5\n", "sequences"),
        ("", b"PAR1....", "parquet"),
        ("", b'{"a": 1}\n', "jsonl"),
        ("", b"user\ttext\nu\thi\n", "tsv"),
        ("", b"user,text\nu,hi\n", "csv"),
        ("", b"one post per line\nanother one\n", "text"),
        ("", b"1 2 3\n4 5\n", "sequences"),
    ],
)
def test_detect_format(name, data, fmt):
    from dpsu_core.corpus.readers import RawFile

    assert detect_format(RawFile(data, name))[0] == fmt


def test_explicit_and_unknown_format():
    from dpsu_core.corpus.readers import RawFile

    assert detect_format(RawFile(b"a,b", "x.csv"), "text") == ("text", None)
    with pytest.raises(ParameterError, match="unknown format 'xml'"):
        detect_format(RawFile(b"a", "x"), "xml")
    assert FORMATS[0] == "auto" and "sequences" in FORMATS


# ---- encodings ---------------------------------------------------------------


def test_utf8_bom_is_removed():
    t = read_table(b"\xef\xbb\xbfuser,text\nal,caf\xc3\xa9\n")
    assert t.user_column == "user"  # not "\ufeffuser"
    assert t.texts.to_pylist() == ["café"]
    assert (t.encoding, t.encoding_fallback) == ("utf-8-sig", False)


def test_utf16_with_bom():
    t = read_table("user,text\nal,café\n".encode("utf-16"))
    assert t.texts.to_pylist() == ["café"] and t.encoding == "utf-16"


def test_cp1252_fallback_is_reported():
    data = "user,text\nal,\u201csmart quotes\u201d and caf\u00e9 \u20ac\n".encode("cp1252")
    t = read_table(data)
    assert t.texts.to_pylist() == ["\u201csmart quotes\u201d and caf\u00e9 \u20ac"]
    assert (t.encoding, t.encoding_fallback) == ("cp1252", True)
    assert any("not valid UTF-8" in n and "cp1252" in n for n in t.notes)


def test_latin1_fallback_when_cp1252_fails():
    data = b"user,text\nal,caf\xe9 \x81\n"  # 0x81 is undefined in cp1252
    t = read_table(data)
    assert (t.encoding, t.encoding_fallback) == ("latin-1", True)
    assert t.texts.to_pylist() == ["café \x81"]


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 20,
        b"user,text\x00\x00\x00\n\x00a\x00b",
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 50,
        b"user,text\n" + b"a,plain text\n" * 10000 + b"b,\x00\x01\x02\n",
    ],
)
def test_binary_file_is_an_encoding_error(data):
    with pytest.raises(EncodingError, match="binary"):
        read_table(Upload(data, "x.csv"))


# ---- columns -----------------------------------------------------------------


def test_columns_guessed_are_reported():
    t = read_table(CSV.encode())
    assert (t.user_column, t.text_column, t.columns_guessed) == ("author", "body", True)
    assert any("guessed" in n for n in t.notes)


def test_columns_by_name_case_insensitive_and_by_position():
    t = read_table(CSV.encode(), user_col="AUTHOR", text_col=1)
    assert (t.user_column, t.text_column, t.columns_guessed) == ("author", "body", False)
    t = read_table(CSV.encode(), user_col="score", text_col="1")
    assert t.users.to_pylist() == ["1", "2"]


def test_unknown_column_lists_available():
    with pytest.raises(ColumnError, match=r"no text column named 'txt'(?=.*'author')(?=.*'body')(?=.*'score')"):
        read_table(CSV.encode(), text_col="txt")
    with pytest.raises(ColumnError, match="out of range.*3 columns"):
        read_table(CSV.encode(), user_col=0, text_col=7)
    with pytest.raises(ColumnError, match="same column"):
        read_table(CSV.encode(), user_col="body", text_col=1)


def test_unguessable_columns():
    with pytest.raises(ColumnError, match="user ids.*choose ⟦user_col⟧.*'who'"):
        read_table(b"who,text\na,b\n")
    with pytest.raises(ColumnError, match="texts.*choose ⟦text_col⟧.*'what'"):
        read_table(b"user,what\na,b\n")


def test_ambiguous_columns():
    with pytest.raises(ColumnError, match="ambiguous|several columns"):
        read_table(b"user,text,Text\na,b,c\n", user_col="user", text_col="TEXT")
    with pytest.raises(ColumnError, match="several columns"):
        read_table(b"user,User,text\na,b,c\n")


def test_headerless_file_with_positional_columns():
    data = b"alice,hello there\nbob,good morning\n"
    t = read_table(data, user_col=0, text_col="1")
    assert t.users.to_pylist() == ["alice", "bob"]
    assert (t.user_column, t.text_column) == ("0", "1")
    assert any("no header row" in n for n in t.notes)
    # a header row of known names is still recognised
    t = read_table(b"user,text\nalice,hello\n", user_col=0, text_col=1)
    assert t.users.to_pylist() == ["alice"]
    # explicit has_header wins
    t = read_table(b"user,text\nalice,hello\n", user_col=0, text_col=1, has_header=False)
    assert t.users.to_pylist() == ["user", "alice"]
    with pytest.raises(ColumnError, match="no header row.*by position"):
        read_table(data, has_header=False)
    with pytest.raises(ColumnError, match="by position"):
        read_table(data, user_col="user", text_col=1, has_header=False)


def test_semicolon_csv_and_ragged_rows():
    t = read_table(b"user;text\na;hello, world\nb;x\n")
    assert t.texts.to_pylist() == ["hello, world", "x"]
    t = read_table(b"user,text\na,hello\nb,x,extra\nc,ok\n")
    assert t.users.to_pylist() == ["a", "c"]
    assert any("1 malformed rows" in n for n in t.notes)


# ---- JSON Lines / Parquet ----------------------------------------------------


def test_jsonl_with_numbers_and_mixed_types():
    lines = [{"user_id": 7, "text": "a b"}, {"user_id": "x", "text": "c"}, {"user_id": 8, "text": None}]
    t = read_table(Upload("\n".join(json.dumps(r) for r in lines).encode(), "d.jsonl"))
    assert t.users.to_pylist() == ["7", "x", "8"]
    assert t.texts.to_pylist() == ["a b", "c", None]


def test_json_array_file():
    t = read_table(Upload(json.dumps([{"user": "a", "body": "x"}, {"user": "b", "body": "y"}]).encode(), "d.json"))
    assert t.texts.to_pylist() == ["x", "y"]


@pytest.mark.parametrize(
    "data, match",
    [
        (b'{"user": "a", "text": "x"}\n{"user": "b", "text": \n', "line 2 is not valid JSON"),
        (b'{"user": "a", "text": "x"}\n[1, 2]\n', "line 2 is a JSON list"),
        (b'[{"user": "a"}, 3]', "JSON objects"),
        (b'[{"user": "a"', "not valid JSON"),
    ],
)
def test_malformed_json(data, match):
    with pytest.raises(InputError, match=match):
        read_table(Upload(data, "d.jsonl"))


def test_parquet_columns_cast_to_text(tmp_path):
    p = tmp_path / "d.parquet"
    pq.write_table(pa.table({"uid": pa.array([1, 2], pa.int64()), "message": ["hi there", "yo"]}), p)
    t = read_table(p, user_col="uid")
    assert t.users.to_pylist() == ["1", "2"] and t.text_column == "message" and t.columns_guessed


def test_malformed_parquet():
    with pytest.raises(InputError, match="not a valid Parquet"):
        read_table(Upload(b"PAR1 this is not parquet PAR1", "x.parquet"))


def test_parquet_nested_column_is_a_column_error(tmp_path):
    p = tmp_path / "d.parquet"
    pq.write_table(pa.table({"user": ["a"], "text": pa.array([{"x": 1}])}), p)
    with pytest.raises(ColumnError, match="not text"):
        read_table(p)


# ---- text and sequences ------------------------------------------------------


def test_text_one_post_per_line():
    t = read_table(Upload(b"first post\r\n\r\nsecond post\n", "x.txt"))
    assert t.users is None and t.texts.to_pylist() == ["first post", "second post"]
    assert any("its own user" in n for n in t.notes)


def test_text_user_tab_text():
    t = read_table(Upload(b"alice\thello there\nbob\tworld\talso text\nalice\tagain\n", "x.txt"))
    assert t.users.to_pylist() == ["alice", "bob", "alice"]
    assert t.texts.to_pylist() == ["hello there", "world\talso text", "again"]


def test_text_and_sequences_reject_columns():
    with pytest.raises(ColumnError, match="no columns"):
        read_table(Upload(b"a post\n", "x.txt"), user_col=0)


def test_sequences_skip_comments_blank_lines_and_header():
    data = b"% header\r\n\r\ncat dog\r\n% Sequences:\r\n\r\n1 1 \r\n2\r\n% note\r\n3 2 2 \r\n"
    t = read_table(Upload(data, "x.seq"))
    assert t.pretokenized and t.users is None
    assert t.texts.to_pylist() == ["1 1 ", "2", "3 2 2 "]
    t = read_table(Upload(b"% c\n\n5 6\n7\n", "y.seq"))
    assert t.texts.to_pylist() == ["5 6", "7"]
