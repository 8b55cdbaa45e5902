"""The CLI with ``--engine spark`` run as cron, pipx or an IDE run it: the interpreter by its path, the
virtual environment not activated (PATH holds another ``python3``, one without any package), and a failure
inside Spark reported in one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .test_spark_cluster import _release_argv, bare_python, child_env

BASE_PATH = "/usr/bin:/bin"


def test_cli_runs_without_the_environment_activated(csv_path, tmp_path):
    """The Python workers run the driver's interpreter, not the ``python3`` first on PATH."""
    bare = bare_python(tmp_path / "other")
    env = child_env(PATH=f"{bare.parent}:{BASE_PATH}")
    cli = [sys.executable, "-m", "dpsu_core.interfaces.cli"]
    local = subprocess.run(cli + _release_argv(csv_path, tmp_path / "local.csv"), env=env, capture_output=True)
    assert local.returncode == 0, local.stderr
    argv = _release_argv(csv_path, tmp_path / "spark.csv") + ["--engine", "spark", "--spark-master", "local[2]"]
    proc = subprocess.run(cli + argv + ["--timings"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
    phases = next(ln for ln in proc.stderr.splitlines() if ln.startswith("timings (s): "))
    for name in ("spark JVM and session", "spark read shuffle", "spark tokenize build items", "spark release"):
        assert f"{name} " in phases, phases
    assert "executors' imports (task s)" in phases and "executors' numba compile (task s)" in phases


def test_a_failure_inside_spark_is_one_line(spark):
    """A Python exception on an executor reaches the caller as its last line, not as a Java stack."""
    from dpsu_core.engines.spark_session import SparkError, spark_errors

    def fails(batches):
        for batch in batches:
            raise ValueError("bad cell in this batch")
            yield batch

    @spark_errors
    def job():
        return spark.range(3).mapInArrow(fails, "id long").collect()

    with pytest.raises(SparkError) as err:
        job()
    msg = str(err.value)
    assert msg.startswith("Spark failed: ValueError: bad cell in this batch"), msg
    assert "\n" not in msg and "org.apache" not in msg and "Traceback" not in msg and "Spark's log: " in msg


def test_the_first_run_leaves_a_class_archive_the_next_run_maps(csv_path, tmp_path):
    """Class data sharing (``engines.spark_jvm``): the first cold run writes the JVM's class archive into the
    user's cache under a temporary name and renames it when the JVM has exited; the next run starts from it
    and releases the same bytes."""
    cache = tmp_path / "cache"
    env = child_env(XDG_CACHE_HOME=str(cache))
    cli = [sys.executable, "-m", "dpsu_core.interfaces.cli"]
    outs = []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.csv"
        argv = _release_argv(csv_path, out) + ["--engine", "spark", "--spark-master", "local[2]"]
        proc = subprocess.run(cli + argv, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        files = sorted(p.name for p in (cache / "dpsu" / "spark-cds").iterdir())
        assert len(files) == 1 and files[0].endswith(".jsa"), files  # no temporary archive left behind
        assert (cache / "dpsu" / "spark-cds" / files[0]).stat().st_size > 10_000_000
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
