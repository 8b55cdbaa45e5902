"""One schema check for every part of a multi-part input (``corpus.parts``, applied by ``engines.spark_inputs``
before any JVM starts): Parquet parts with other columns, or a column of another type, are refused in one line
naming the two parts; JSON Lines parts whose keys are not nested likewise; CSV parts with another number of
columns as before; a part with no bytes beside others is skipped and counted, not refused. Real files, no Spark."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpsu_core.corpus.parts import PartColumns, check_same_columns
from dpsu_core.engines.spark_inputs import resolve_input
from dpsu_core.errors import EmptyCorpusError, InputError


def _parquet(path, **columns) -> None:
    pq.write_table(pa.table(columns), path)


def _users(prefix: str, n: int = 150) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def test_parquet_parts_with_other_columns_are_refused_naming_both(tmp_path):
    _parquet(tmp_path / "part-0.parquet", user=_users("a"), text=["alpha beta"] * 150)
    _parquet(tmp_path / "part-1.parquet", author=_users("b"), body=["gamma delta"] * 150)
    with pytest.raises(InputError) as err:
        resolve_input(str(tmp_path))
    message = str(err.value)
    assert "\n" not in message
    assert "'part-1.parquet' has the columns 'author', 'body' where 'part-0.parquet' has 'user', 'text'" in message


def test_parquet_parts_whose_user_column_differs_in_type_are_refused(tmp_path):
    _parquet(tmp_path / "part-0.parquet", user=_users("a"), text=["alpha beta"] * 150)
    _parquet(tmp_path / "part-1.parquet", user=list(range(150)), text=["gamma delta"] * 150)
    with pytest.raises(InputError, match="the column 'user' is int64 in 'part-1.parquet' but string in 'part-0"):
        resolve_input(str(tmp_path))


def test_parquet_parts_that_store_the_same_values_differently_are_read_together(tmp_path):
    """A large or dictionary-encoded string column holds the same values as a string one: not a difference."""
    _parquet(tmp_path / "part-0.parquet", user=_users("a"), text=["alpha beta"] * 150)
    _parquet(
        tmp_path / "part-1.parquet",
        text=pa.array(["gamma"] * 150).dictionary_encode(),  # another order, too
        user=pa.array(_users("b"), pa.large_string()),
    )
    inp = resolve_input(str(tmp_path))
    assert [p.name for p in inp.parts] == ["part-0.parquet", "part-1.parquet"]


def test_json_lines_parts_need_nested_keys(tmp_path):
    (tmp_path / "part-0.jsonl").write_text('{"user": "a", "text": "x", "score": 1}\n', encoding="utf-8")
    (tmp_path / "part-1.jsonl").write_text('{"user": "b", "text": "y"}\n', encoding="utf-8")  # nulls left out
    assert len(resolve_input(str(tmp_path)).parts) == 2
    (tmp_path / "part-1.jsonl").write_text('{"author": "b", "body": "y"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="'part-1.jsonl' has the keys 'author', 'body' where 'part-0.jsonl' has"):
        resolve_input(str(tmp_path))


def test_csv_parts_with_another_number_of_columns_are_still_refused(tmp_path):
    (tmp_path / "part-0.csv").write_text("user,text\nu1,a\n", encoding="utf-8")
    (tmp_path / "part-1.csv").write_text("user,text,extra\nu2,b,c\n", encoding="utf-8")
    with pytest.raises(InputError, match="'part-1.csv' has 3 columns, 'part-0.csv' 2"):
        resolve_input(str(tmp_path))


@pytest.mark.parametrize("name", ["part-1.csv", "part-1.csv.gz"])
def test_an_empty_part_beside_others_is_skipped_and_counted(tmp_path, name):
    (tmp_path / "part-0.csv").write_text("user,text\nu1,alpha\nu2,beta\n", encoding="utf-8")
    empty = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(empty, "wb"):
            pass  # a valid gzip stream of no bytes
    else:
        empty.write_bytes(b"")
    inp = resolve_input(str(tmp_path))
    assert [p.name for p in inp.parts] == ["part-0.csv"]
    assert [g.paths for g in inp.groups] == [(str(tmp_path / "part-0.csv"),)]
    notes = " | ".join(inp.notes)
    assert "read 1 file of" in notes and "skipped 1 empty part of" in notes and f"'{name}'" in notes


def test_empty_parquet_and_json_parts_are_skipped_too(tmp_path):
    _parquet(tmp_path / "part-0.parquet", user=_users("a"), text=["alpha"] * 150)
    (tmp_path / "part-1.parquet").write_bytes(b"")
    (tmp_path / "part-2.parquet").write_bytes(b"")
    inp = resolve_input(str(tmp_path))
    assert [p.name for p in inp.parts] == ["part-0.parquet"]
    assert any("skipped 2 empty parts" in n for n in inp.notes)


def test_an_input_of_empty_parts_only_is_refused(tmp_path):
    (tmp_path / "part-0.csv").write_bytes(b"")
    (tmp_path / "part-1.csv").write_bytes(b"")
    with pytest.raises(EmptyCorpusError, match="the 2 parts of .* are all empty"):
        resolve_input(str(tmp_path))
    with pytest.raises(EmptyCorpusError, match="'part-0.csv' is empty"):
        resolve_input(str(tmp_path / "part-0.csv"))


def test_a_broken_parquet_part_is_named(tmp_path):
    _parquet(tmp_path / "part-0.parquet", user=_users("a"), text=["alpha"] * 150)
    (tmp_path / "part-1.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="'part-1.parquet' is not a valid Parquet file"):
        resolve_input(str(tmp_path))


def test_the_rule_compares_every_part_with_the_first():
    a = PartColumns("a", ("user", "text"), ("string", "string"))
    check_same_columns("parquet", [a, PartColumns("b", ("text", "user"), ("string", "string"))])
    with pytest.raises(InputError, match="'c' has the columns"):
        check_same_columns("parquet", [a, a, PartColumns("c", ("user",), ("string",))])
