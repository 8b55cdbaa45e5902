"""A packed environment shipped to a cluster whose executors have a bare Python (``dpsu spark-env`` then
``--spark-archive``): a standalone cluster on 127.0.0.1 (``cluster.standalone_cluster``), executors whose
PYSPARK_PYTHON is a fresh virtual environment without numpy, pyarrow or numba.

The packed environment is a real one: a virtual environment made here (``python -m venv``; this machine's
Python is not one), dpsu installed in it as a regular package with the packages the executors import, packed
by ``dpsu spark-env --prefix`` (venv-pack, the numba cache compiled in it first)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from .cluster import standalone_cluster
from .test_spark_cluster import _release_argv, bare_python, child_env

ROOT = Path(__file__).resolve().parents[2]
EXECUTOR_PACKAGES = ["numpy", "pyarrow", "numba", "scipy", "pandas", "pyyaml", "charset-normalizer"]
pytest.importorskip("venv_pack", reason="dpsu spark-env needs venv-pack (pip install 'dpsu[spark]')")


@pytest.fixture(scope="module")
def packed(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("env")
    env = folder / "exec"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + EXECUTOR_PACKAGES, check=True, capture_output=True)
    subprocess.run(pip + ["--no-deps", str(ROOT)], check=True, capture_output=True)
    out = folder / "dpsu-env.tar.gz"
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "spark-env", str(out), "--prefix", str(env)],
        cwd=ROOT, env=child_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"-> {out}" in proc.stdout
    with tarfile.open(out) as tar:
        names = tar.getnames()
    assert "bin/python" in names and any(n.endswith(".nbi") and "/dpsu_core/" in n for n in names)  # kernels
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as url:
        yield url


def test_a_bare_executor_releases_through_the_archive_identically(packed, cluster, csv_path, tmp_path):
    bare = bare_python(tmp_path / "bare")
    cli = [sys.executable, "-m", "dpsu_core.interfaces.cli"]
    env = child_env(PYSPARK_PYTHON=str(bare))
    local = subprocess.run(
        cli + _release_argv(csv_path, tmp_path / "local.csv"), cwd=ROOT, env=env, capture_output=True
    )
    assert local.returncode == 0, local.stderr
    argv = _release_argv(csv_path, tmp_path / "cluster.csv") + ["--engine", "spark", "--spark-master", cluster]
    proc = subprocess.run(
        cli + argv + ["--spark-archive", str(packed)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "cluster.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
    without = subprocess.run(cli + argv, cwd=ROOT, env=env, capture_output=True, text=True)  # the bare Python alone
    lines = without.stderr.strip().splitlines()
    assert without.returncode == 2 and len(lines) == 1, without.stderr[-3000:]
    assert "cannot run dpsu (ModuleNotFoundError" in lines[0] and "--spark-archive" in lines[0]


def test_spark_env_refuses_what_it_cannot_pack(tmp_path):
    cli = [sys.executable, "-m", "dpsu_core.interfaces.cli", "spark-env"]
    (tmp_path / "plain").mkdir()
    cases = [
        (
            [str(tmp_path / "env.tar.gz"), "--prefix", str(tmp_path / "plain")],
            "neither a virtual environment nor a conda",
        ),
        (
            [str(tmp_path / "plain" / "env.tar.gz"), "--prefix", str(tmp_path / "plain")],
            "inside the environment it packs",
        ),
        ([str(tmp_path / "env.zip")], "is a .tar.gz file"),
    ]
    for argv, needle in cases:
        proc = subprocess.run(cli + argv, cwd=ROOT, env=child_env(), capture_output=True, text=True)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and needle in lines[0], proc.stderr
