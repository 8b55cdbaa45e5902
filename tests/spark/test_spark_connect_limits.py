"""Every network step of Spark Connect has a time limit (``spark_session.connect_timeout``: 30 s, or
``DPSU_SPARK_CONNECT_TIMEOUT``): against a listener on 127.0.0.1 that accepts the connection and never answers
(``check_remote``'s TCP test passes; the session's start then waited on gRPC with no limit, still running after
120 s), the CLI exits 2 with one line within the limit plus the start and exit of a Python process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dpsu_core.engines.spark_session import CONNECT_TIMEOUT_ENV, DEFAULT_CONNECT_TIMEOUT

from .conftest import corpus_rows, write_csv

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("grpc", reason="Spark Connect needs pyspark's connect extra (pip install 'dpsu[spark]')")
#: a Python start (pyspark's connect client imported) and its exit, beside the limit itself: a generous bound on a
#: shared machine; the hang this guards against never ended
OVERHEAD = 45.0


@pytest.fixture()
def silent_server():
    """``sc://127.0.0.1:PORT`` of a listener that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)  # kept open, never answered
            except TimeoutError:
                continue
            except OSError:
                return

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"sc://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    t.join(5)
    for conn in held:
        conn.close()
    server.close()


def _release(remote: str, tmp_path: Path, limit: str | None) -> tuple[subprocess.CompletedProcess, float]:
    src = write_csv(tmp_path / "posts.csv", corpus_rows(20, seed=3))
    env = {k: v for k, v in os.environ.items() if k != CONNECT_TIMEOUT_ENV}
    if limit is not None:
        env[CONNECT_TIMEOUT_ENV] = limit
    argv = [
        sys.executable,
        "-m",
        "dpsu_core.interfaces.cli",
        "release",
        src,
        "-m",
        "weighted-gaussian",
        "-e",
        "1",
        "-d",
        "1e-6",
    ]
    argv += ["-o", str(tmp_path / "out.csv"), "--engine", "spark", "--spark-remote", remote]
    t = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return done, time.monotonic() - t


@pytest.mark.parametrize("limit", ["5", None])
def test_a_server_that_never_answers_is_refused_in_one_line_within_the_limit(silent_server, tmp_path, limit):
    done, took = _release(silent_server, tmp_path, limit)
    seconds = float(limit) if limit is not None else DEFAULT_CONNECT_TIMEOUT
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert f"accepted the connection but gave no answer within {seconds:g} s" in lines[0]
    assert CONNECT_TIMEOUT_ENV in lines[0]  # says how to allow more time
    assert seconds <= took < seconds + OVERHEAD, took
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("limit", ["0", "-3", "soon", "nan", "1e9"])
def test_a_bad_limit_is_refused_in_one_line_at_once(silent_server, tmp_path, limit):
    done, took = _release(silent_server, tmp_path, limit)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and f"{CONNECT_TIMEOUT_ENV}=" in lines[0], done.stderr[-3000:]
    assert "is not a number of seconds" in lines[0]
    assert took < OVERHEAD  # no wait on the server
