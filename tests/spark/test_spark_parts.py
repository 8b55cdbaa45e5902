"""The parts of a Spark input under one schema check (``corpus.parts`` through ``engines.spark_inputs``): Parquet
parts whose columns or types differ are refused in one line before the JVM starts (they were read with the first
part's schema, the second part's rows dropped without a word, or failed as "An error occurred while calling
o154.getResult"); a part with no bytes beside others, as Spark writes them, is skipped and counted, and the
rest read as the local engine reads them."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .conftest import corpus_rows, write_csv

ROOT = Path(__file__).resolve().parents[2]
WORDS = [f"word{i}" for i in range(40)]


def _cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", *args, "-m", "weighted-gaussian", "-e", "10"]
    argv += ["-d", "1e-6", "-o", str(tmp_path / "out.csv"), "--engine", "spark", "--spark-master", "local[2]"]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)


def _parquet_folder(tmp_path: Path, second: dict) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    users = [f"a{i}" for i in range(150)]
    pq.write_table(pa.table({"user": users, "text": [" ".join(WORDS[:20])] * 150}), d / "part-0.parquet")
    pq.write_table(pa.table(second), d / "part-1.parquet")
    return d


@pytest.mark.parametrize(
    "second, needle",
    [
        (
            {"author": [f"b{i}" for i in range(150)], "body": [" ".join(WORDS[20:])] * 150},
            "'part-1.parquet' has the columns 'author', 'body' where 'part-0.parquet' has 'user', 'text'",
        ),
        (
            {"user": list(range(150)), "text": [" ".join(WORDS[20:])] * 150},
            "the column 'user' is int64 in 'part-1.parquet' but string in 'part-0.parquet'",
        ),
    ],
)
def test_cli_refuses_parquet_parts_that_differ_in_one_line_before_spark_starts(tmp_path, second, needle):
    folder = _parquet_folder(tmp_path, second)
    t = time.monotonic()
    done = _cli([str(folder)], tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and needle in lines[0], done.stderr[-2000:]
    assert time.monotonic() - t < 60  # no JVM started
    assert not (tmp_path / "out.csv").exists()


def test_parquet_parts_with_one_schema_are_all_read(spark, tmp_path):
    """The control: the same two parts with the same columns give every user of both."""
    from dpsu_core.engines.spark import load_spark_corpus

    folder = _parquet_folder(tmp_path, {"user": [f"b{i}" for i in range(150)], "text": [" ".join(WORDS[20:])] * 150})
    sc = load_spark_corpus(str(folder), spark=spark)
    assert sc.n_users == 300 and sorted(sc.vocabulary.vocab) == sorted(WORDS)


def test_an_empty_part_is_skipped_and_counted_and_the_rest_read_as_locally(spark, tmp_path):
    from dpsu_core.corpus import load_corpus
    from dpsu_core.engines.spark import load_spark_corpus

    folder = tmp_path / "in"
    folder.mkdir()
    write_csv(folder / "part-0.csv", corpus_rows(30, seed=4))
    (folder / "part-1.csv").write_bytes(b"")  # an empty partition, as Spark writes it
    local = load_corpus(str(folder / "part-0.csv"))
    sc = load_spark_corpus(str(folder), spark=spark)
    assert (sc.n_users, sc.nnz, sorted(sc.vocabulary.vocab)) == (local.n_users, local.nnz, sorted(local.vocab))
    assert any("skipped 1 empty part" in n and "'part-1.csv'" in n for n in sc.source.notes), sc.source.notes


def test_cli_releases_a_folder_with_an_empty_part_and_says_so(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    write_csv(folder / "part-0.csv", corpus_rows(60, seed=5))
    (folder / "part-1.csv").write_bytes(b"")
    done = _cli([str(folder)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "skipped 1 empty part" in done.stderr
    assert "has 0 columns" not in done.stderr
    assert (tmp_path / "out.csv").exists()


def test_cli_refuses_json_lines_parts_with_other_keys_before_spark_starts(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "part-0.jsonl").write_text(
        "".join(f'{{"user": "a{i}", "text": "{" ".join(WORDS[:20])}"}}\n' for i in range(150)), encoding="utf-8"
    )
    (folder / "part-1.jsonl").write_text(
        "".join(f'{{"author": "b{i}", "body": "{" ".join(WORDS[20:])}"}}\n' for i in range(150)), encoding="utf-8"
    )
    done = _cli([str(folder)], tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert "'part-1.jsonl' has the keys 'author', 'body' where 'part-0.jsonl' has 'user', 'text'" in lines[0]
