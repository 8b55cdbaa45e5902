"""The Spark engine against a real standalone cluster (a master and two workers on 127.0.0.1, started by the
fixture with pyspark's own ``bin/spark-class``): dpsu_core shipped to the executors, releases identical to
the local engine's, the CLI from its console script, and executors that cannot run dpsu named in one line.

Each Spark run is a child process: a process holds one SparkContext, and the other tests' is ``local[2]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .cluster import standalone_cluster
from .conftest import PARALLEL, parallel_mechanism

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as url:
        yield url


def child_env(**extra: str) -> dict[str, str]:
    """This checkout on the import path, and the executors' Python as given (a cluster's own Python)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def bare_python(folder: Path) -> Path:
    """A virtual environment of this Python without any package: an executor that lacks dpsu's dependencies."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


def test_parallel_releases_on_the_cluster_identical_to_local(cluster, csv_path, local_corpus3, tmp_path):
    max_items = int(np.diff(local_corpus3.indptr).max()) + 1
    out = tmp_path / "cluster.json"
    cmd = [sys.executable, "-m", "tests.spark.cluster_run", cluster, csv_path, str(max_items), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, env=child_env(PYSPARK_PYTHON=sys.executable), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got["master"] == cluster
    assert (got["n_users"], got["n_items"]) == (local_corpus3.n_users, local_corpus3.n_items)
    for name in PARALLEL:
        want = parallel_mechanism(name, max_items).release(local_corpus3, seed=11)
        assert got[name]["items"] == want.items.tolist(), name
        np.testing.assert_allclose(got[name]["h"], want.diagnostics.weights, rtol=1e-12, atol=1e-12)


def _release_argv(csv_path: str, out: Path) -> list[str]:
    return ["release", csv_path, "-m", "weighted-gaussian", "-e", "4", "-d", "1e-4", "--max-items", "500"] + [
        "--seed",
        "9",
        "-o",
        str(out),
    ]


def test_cli_console_script_against_the_cluster(cluster, csv_path, tmp_path):
    """``dpsu release ... --engine spark --spark-master spark://...`` as installed, matching the local engine."""
    script = Path(sys.executable).parent / "dpsu"
    cli = [str(script)] if script.exists() else [sys.executable, "-m", "dpsu_core.interfaces.cli"]
    env = child_env(PYSPARK_PYTHON=sys.executable)
    local = subprocess.run(cli + _release_argv(csv_path, tmp_path / "local.csv"), env=env, capture_output=True)
    assert local.returncode == 0, local.stderr
    argv = _release_argv(csv_path, tmp_path / "cluster.csv") + ["--engine", "spark", "--spark-master", cluster]
    proc = subprocess.run(cli + argv, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Spark executors" in proc.stderr
    assert (tmp_path / "cluster.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()


def test_executors_without_dpsu_dependencies_get_one_line(cluster, csv_path, tmp_path):
    bare = bare_python(tmp_path / "bare")
    argv = _release_argv(csv_path, tmp_path / "x.csv") + ["--engine", "spark", "--spark-master", cluster]
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv],
        env=child_env(PYSPARK_PYTHON=str(bare)),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert lines[0].startswith("dpsu: error: the Spark executors cannot run dpsu (ModuleNotFoundError: No module named")
    assert "PYSPARK_PYTHON" in lines[0] and not (tmp_path / "x.csv").exists()
