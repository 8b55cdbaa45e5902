"""Bad input on the Spark path refused as the local engine refuses it, on the driver, before any JVM starts
(``engines.spark_inputs``, ``spark_session.check_master``); and the awkward but valid inputs (a .csv.gz, a
folder with nested parts, malformed rows, Latin-1 text, dotted or backticked column names) read by Spark as
the local engine reads them."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dpsu_core.corpus.limits import ReadLimits
from dpsu_core.engines.spark_inputs import check_paths, resolve_input
from dpsu_core.engines.spark_session import SparkError, check_master
from dpsu_core.errors import InputError, OutputError, ResourceLimitError

from .conftest import corpus_rows, write_csv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def folder(tmp_path):
    """A folder of parts as a Hadoop job leaves it: parts, a nested folder, _SUCCESS and a checksum."""
    d = tmp_path / "in"
    (d / "day2").mkdir(parents=True)
    write_csv(d / "part-0.csv", corpus_rows(20, seed=1))
    write_csv(d / "day2" / "part-1.csv", corpus_rows(20, seed=2))
    (d / "_SUCCESS").write_bytes(b"")
    (d / ".part-0.csv.crc").write_bytes(b"\x00\x01")
    return d


def test_a_folder_reads_every_part_and_names_the_files_it_does_not_read(folder):
    inp = resolve_input(str(folder))
    assert [p.name for p in inp.parts] == ["part-0.csv", "part-1.csv"]
    assert inp.format == "csv" and inp.folder == folder
    notes = " | ".join(inp.notes)
    assert "read 2 files" in notes and "(1 in nested folders)" in notes
    assert "'_SUCCESS'" in notes and "'.part-0.csv.crc'" in notes and "not read" in notes


@pytest.mark.parametrize("name", ["_x.csv", ".x.csv", "day2/_late.csv"])
def test_a_data_file_spark_would_skip_is_refused_by_name(folder, name):
    shutil.copy(folder / "part-0.csv", folder / name)
    with pytest.raises(InputError, match=r"Spark skips files whose names start with '_' or '\.'") as err:
        resolve_input(str(folder))
    assert Path(name).name in str(err.value)


def test_a_zip_part_and_mixed_formats_are_refused(folder):
    (folder / "more.jsonl").write_text('{"user": "a", "text": "b"}\n')
    with pytest.raises(InputError, match="mixes formats"):
        resolve_input(str(folder))
    assert resolve_input(str(folder / "*.csv")).format == "csv"  # a glob picks one
    (folder / "old.zip").write_bytes(b"PK")
    with pytest.raises(InputError, match="zip archive, which Spark cannot read"):
        resolve_input(str(folder))


def test_outputs_and_public_corpus_checked_against_every_part(folder, tmp_path):
    inp = resolve_input(str(folder))
    for out in (folder / "day2" / "part-1.csv", folder / "new.csv", folder / "day2" / "report.json"):
        with pytest.raises(OutputError, match="input"):
            check_paths(inp, {"-o": None, "--report": str(out)}, None)
    check_paths(inp, {"-o": str(tmp_path / "released.csv")}, None)
    glob = resolve_input(str(tmp_path / "in" / "*.csv"))
    with pytest.raises(OutputError, match="matches the input pattern"):
        check_paths(glob, {"--export-tokenizer": str(folder / "tok.csv")}, None)
    with pytest.raises(InputError, match="is a part of the input"):
        check_paths(inp, {}, str(folder / "part-0.csv"))
    copy = shutil.copy(folder / "day2" / "part-1.csv", tmp_path / "public.csv")
    with pytest.raises(InputError, match="same data as 'part-1.csv'"):
        check_paths(inp, {}, str(copy))


def test_read_limits_apply_to_every_part(folder, tmp_path):
    with pytest.raises(ResourceLimitError, match="--max-file-mb"):
        resolve_input(str(folder), limits=ReadLimits(max_file_bytes=1000))
    bomb = tmp_path / "bomb.csv.gz"
    with gzip.open(bomb, "wb") as g:
        g.write(b"user,text\n" + b"a,b\n" * (8 << 20))
    with pytest.raises(ResourceLimitError, match="unpacks to more than.*--max-unpacked-mb"):
        resolve_input(str(bomb), limits=ReadLimits(unpack_floor_bytes=1 << 20, unpack_max_bytes=1 << 20))


def test_quotes_encodings_and_columns_checked_per_part(folder):
    bad = folder / "day2" / "part-2.csv"
    bad.write_text('user,text\nu1,"never closed\nu2,fine\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"part-2.csv': line 2: the quoted field that opens on line 2 is never"):
        resolve_input(str(folder))
    bad.write_bytes("user,text\nu1,caf\u00e9\nu2,na\u00efve\n".encode() + b"u3,caf\xe9\n")
    with pytest.raises(InputError, match="1 rows are not valid UTF-8 among rows that are"):
        resolve_input(str(folder))
    bad.write_text("user,text,extra\nu1,a,b\n", encoding="utf-8")
    with pytest.raises(InputError, match="has 3 columns, 'part-0.csv' 2"):
        resolve_input(str(folder))
    bad.write_bytes(b"user,text\nu1,caf\xe9\n")
    inp = resolve_input(str(folder))
    assert [(g.encoding, len(g.paths)) for g in inp.groups] == [
        ("UTF-8", 2),
        ("ISO-8859-1", 1),
    ]  # cp1252 without its 0x80-0x9F bytes is Latin-1
    assert any("is not valid UTF-8" in n for n in inp.notes)


@pytest.mark.parametrize(
    "master, message",
    [
        ("local[100000]", "asks for 100,000 local threads"),
        ("local[0]", "asks for 0 local threads"),
        ("local[two]", "is malformed"),
        ("htp:/x", "is not a master URL Spark knows"),
        ("spark://127.0.0.1", "is malformed"),
        ("spark://127.0.0.1:1", "cannot reach the Spark master"),
    ],
)
def test_bad_masters_are_refused_at_once(master, message):
    """Refused before any JVM or session starts (the condition, not a wall-clock limit, on a busy machine)."""
    from pyspark import SparkContext

    gateway, context = SparkContext._gateway, SparkContext._active_spark_context
    with pytest.raises(SparkError, match=message):
        check_master(master)
    assert SparkContext._gateway is gateway and SparkContext._active_spark_context is context


def test_cli_refuses_bad_spark_input_in_one_line_before_spark_starts(folder, tmp_path):
    """Each refused before a JVM starts: one line, exit 2, in the time a Python start takes."""
    shutil.copy(folder / "part-0.csv", folder / "_hidden.csv")
    base = [
        sys.executable,
        "-m",
        "dpsu_core.interfaces.cli",
        "release",
        "-m",
        "weighted-gaussian",
        "-e",
        "1",
        "-d",
        "1e-6",
    ]
    cases = [
        ([str(folder), "-o", str(tmp_path / "x.csv"), "--engine", "spark"], "_hidden.csv"),
        ([str(folder / "part-0.csv"), "-o", str(folder / "part-0.csv"), "--engine", "spark"], "input"),
        (
            [
                str(folder / "part-0.csv"),
                "-o",
                str(tmp_path / "x.csv"),
                "--engine",
                "spark",
                "--spark-master",
                "local[100000]",
            ],
            "local threads",
        ),  # fmt: skip
    ]
    for argv, needle in cases:
        t = time.monotonic()
        proc = subprocess.run(base + argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and needle in lines[0], proc.stderr
        assert time.monotonic() - t < 60  # no JVM: a second on a quiet machine (these hung past 120 s before)
    assert (folder / "part-0.csv").stat().st_size > 0


# --------------------------------------------------------------------------- read by Spark as locally
def _same(spark_corpus, local) -> None:
    got = spark_corpus.to_corpus()
    assert (got.n_users, got.vocab.tolist()) == (local.n_users, local.vocab.tolist())
    np.testing.assert_array_equal(got.indptr, local.indptr)
    np.testing.assert_array_equal(got.items, local.items)
    np.testing.assert_array_equal(got.counts, local.counts)


def test_awkward_valid_inputs_read_as_the_local_engine_reads_them(spark, tmp_path):
    from dpsu_core.corpus import load_corpus
    from dpsu_core.engines.spark import load_spark_corpus

    rows = corpus_rows(40, seed=3)
    plain = write_csv(tmp_path / "plain.csv", rows)
    text = Path(plain).read_text(encoding="utf-8").splitlines()
    cases = {}
    gz = tmp_path / "posts.csv.gz"
    gz.write_bytes(gzip.compress(Path(plain).read_bytes()))
    cases["gz"] = (gz, {})
    malformed = tmp_path / "malformed.csv"
    malformed.write_text("\n".join(text[:5] + ["u9,too,many,fields", "lonely"] + text[5:]) + "\n", encoding="utf-8")
    cases["malformed"] = (malformed, {})
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"user,text\n" + b"".join(b"u%d,caf\xe9 na\xefve w%d\n" % (i % 9, i % 4) for i in range(60)))
    cases["latin-1"] = (latin, {})
    dotted = tmp_path / "dotted.csv"
    dotted.write_text("\n".join(["a.b,te`xt", *text[1:]]) + "\n", encoding="utf-8")
    cases["dotted"] = (dotted, {"user_col": "a.b", "text_col": "te`xt"})
    for what, (path, kw) in cases.items():
        local = load_corpus(path, max_n=2, **kw)
        sc = load_spark_corpus(str(path), spark=spark, max_n=2, **kw)
        _same(sc, local)
        spark_notes = [n for n in sc.source.notes if "malformed" in n or "UTF-8" in n]
        local_notes = [n for n in local.source.notes if "malformed" in n or "UTF-8" in n]
        assert len(spark_notes) == len(local_notes), (what, spark_notes, local_notes)
        assert sc.source.rows_read == local.source.rows_read, what
    assert any("2 malformed rows" in n for n in load_spark_corpus(str(malformed), spark=spark).source.notes)


def test_a_folder_with_nested_parts_reads_every_user(spark, folder, tmp_path):
    from dpsu_core.corpus import load_corpus
    from dpsu_core.engines.spark import load_spark_corpus

    whole = write_csv(tmp_path / "whole.csv", corpus_rows(20, seed=1) + corpus_rows(20, seed=2))
    local = load_corpus(whole)
    sc = load_spark_corpus(str(folder), spark=spark)
    assert (sc.n_users, sc.nnz, sorted(sc.vocabulary.vocab)) == (local.n_users, local.nnz, sorted(local.vocab))
    assert sc.source.rows_read == local.source.rows_read


def test_a_sequential_mechanism_is_refused_when_the_rows_exceed_the_driver():
    from dpsu_core.engines.spark_release import _spark_bytes, check_driver_memory, driver_rows_bytes

    check_driver_memory("GW", 1000, 10_000, driver_rows_bytes(1000, 10_000))  # fits exactly: no error
    with pytest.raises(InputError, match="GW visits the users one by one on the driver") as err:
        check_driver_memory("GW", 10**7, 10**9, 8 << 30)
    assert "runs on the executors: " in str(err.value) and "weighted-gaussian" in str(err.value)
    assert "policy-gaussian" not in str(err.value)
    assert (_spark_bytes("1g"), _spark_bytes("512m"), _spark_bytes("0")) == (1 << 30, 512 << 20, 0)


def test_a_table_of_the_catalog_is_read_by_spark(spark, csv_path, local_corpus3):
    from dpsu_core.engines.spark import load_spark_corpus
    from dpsu_core.engines.spark_inputs import table_input

    spark.read.csv(csv_path, header=True, multiLine=True, escape='"').createOrReplaceTempView("dpsu_posts")
    sc = load_spark_corpus(table_input("dpsu_posts"), spark=spark, max_n=3)
    assert (sc.n_users, sc.nnz) == (local_corpus3.n_users, local_corpus3.nnz)
    assert sorted(sc.vocabulary.vocab) == sorted(local_corpus3.vocab)
    assert "read from the table 'dpsu_posts'" in " ".join(sc.source.notes)
    with pytest.raises(InputError, match="Spark cannot read the table"):
        load_spark_corpus(table_input("no_such_table"), spark=spark)


def test_the_daemon_loads_the_cached_kernels_without_running_anything():
    """What ``spark_daemon`` does before it forks workers: imports and cached kernels loaded, no thread started
    (numba's parallel layer and Arrow's pools are not fork-safe)."""
    warm = "from dpsu_core.engines.spark_env import warm; warm()"  # fills numba's cache, as a first run does
    subprocess.run([sys.executable, "-c", warm], cwd=ROOT, check=True, timeout=600)
    probe = (
        "import importlib, threading; from dpsu_core.engines import spark_daemon as d; "
        "[importlib.import_module(m) for m in d.EXECUTOR_MODULES]; "
        "print(d.load_cached_kernels(), threading.active_count())"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True, capture_output=True, text=True)
    loaded, threads = map(int, out.stdout.split())
    assert loaded >= 10 and threads == 1


def test_the_daemon_puts_a_pip_pysparks_zips_after_the_installed_package(tmp_path):
    """``prefer_installed_pyspark``: the zips Spark puts first on the path, when they are a pip-installed
    pyspark's own, go last (its modules then load with their bytecode); a Spark distribution's zips stay."""
    from dpsu_core.engines.spark_daemon import prefer_installed_pyspark

    site = tmp_path / "site"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    own = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]
    dist = str(tmp_path / "spark-4.0" / "python" / "lib" / "pyspark.zip")  # no package beside it
    path = [*own, dist, "/app", str(site)]
    assert prefer_installed_pyspark(path) == [dist, "/app", str(site), *own]
    assert prefer_installed_pyspark([dist, "/app"]) == [dist, "/app"]
    assert prefer_installed_pyspark([*own, "/app"]) == [*own, "/app"]  # that pyspark is not on the path


def _pyspark_file(batches):
    import pyarrow as pa
    import pyspark

    for _ in batches:
        yield pa.RecordBatch.from_pydict({"f": [pyspark.__file__]})


def test_the_executors_import_pyspark_with_its_bytecode(spark):
    """On a local master the daemon's workers import the installed pyspark, not Spark's zip of it (which
    Python compiles from source in every daemon and worker)."""
    import pyspark

    files = {r.f for r in spark.range(0, 2, 1, 2).mapInArrow(_pyspark_file, "f string").collect()}
    assert files == {pyspark.__file__}
    assert ".zip" not in pyspark.__file__
