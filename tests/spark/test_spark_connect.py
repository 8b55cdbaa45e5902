"""The Spark engine through Spark Connect (``--spark-remote sc://HOST:PORT``): DataFrame and Arrow operations
only, dpsu_core shipped as a session artifact, against a server started on 127.0.0.1 from the pyspark
package's own script (``connect.connect_server``); releases identical to the local engine's.

Each run is a child process: a process holds one SparkSession kind, and the other tests' is classic."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from .connect import connect_server
from .test_spark_cluster import _release_argv, child_env

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("grpc", reason="Spark Connect needs pyspark's connect extra (pip install 'dpsu[spark]')")


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    with connect_server(tmp_path_factory.mktemp("connect")) as url:
        yield url


def test_release_through_spark_connect_identical_to_local(remote, csv_path, tmp_path):
    cli = [sys.executable, "-m", "dpsu_core.interfaces.cli"]
    env = child_env()
    local = subprocess.run(
        cli + _release_argv(csv_path, tmp_path / "local.csv"), cwd=ROOT, env=env, capture_output=True
    )
    assert local.returncode == 0, local.stderr
    for mech in ("weighted-gaussian", "policy-gaussian"):  # parallel on the executors; sequential on the driver
        argv = _release_argv(csv_path, tmp_path / f"{mech}.csv") + ["--engine", "spark", "--spark-remote", remote]
        argv[argv.index("weighted-gaussian")] = mech
        proc = subprocess.run(cli + argv, cwd=ROOT, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert f"read and tokenized with Spark (Spark Connect {remote})" in proc.stderr
        if mech == "weighted-gaussian":
            assert (tmp_path / f"{mech}.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
        else:
            want = subprocess.run(
                cli + [a if a != "weighted-gaussian" else mech for a in _release_argv(csv_path, tmp_path / "pl.csv")],
                cwd=ROOT, env=env, capture_output=True,
            )  # fmt: skip
            assert want.returncode == 0
            assert (tmp_path / f"{mech}.csv").read_bytes() == (tmp_path / "pl.csv").read_bytes()


def test_an_unreachable_or_malformed_remote_is_one_line_at_once(csv_path, tmp_path):
    from .cluster import free_port

    for url, needle in (
        (f"sc://127.0.0.1:{free_port()}", "cannot reach the Spark Connect server"),
        ("sc:/x", "malformed"),
    ):
        t = time.monotonic()
        argv = _release_argv(csv_path, tmp_path / "x.csv") + ["--engine", "spark", "--spark-remote", url]
        proc = subprocess.run(
            [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv], cwd=ROOT, capture_output=True, text=True
        )
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and needle in lines[0], proc.stderr
        assert time.monotonic() - t < 60  # no JVM, no session: refused before either
