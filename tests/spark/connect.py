"""A Spark Connect server on 127.0.0.1 for the tests, started with the pyspark package's own
``sbin/start-connect-server.sh --wait`` (in the foreground, in its own process group) and stopped by that
process id's group. Its master is ``local[2]`` and its Python workers run this interpreter with no import path
of ours: dpsu_core reaches them only as the client's session artifact (``addArtifacts``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from .cluster import HOST, SPARK_HOME, free_port


def _listening(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), timeout=1).close()
        return True
    except OSError:
        return False


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # the group this fixture started (the script and its JVM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@contextmanager
def connect_server(workdir: Path, timeout: float = 240.0):
    """Yield ``sc://127.0.0.1:PORT`` once the server listens."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_") and k != "PYTHONPATH"}
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP=HOST,
        SPARK_PUBLIC_DNS=HOST,
        SPARK_LOG_DIR=str(workdir),
        SPARK_PID_DIR=str(workdir),
        PYSPARK_PYTHON=sys.executable,
    )
    conf = {
        "spark.connect.grpc.binding.address": HOST,
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
        "spark.ui.enabled": "false",
    }
    args = [str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--wait", "--master", "local[2]"]
    for k, v in conf.items():
        args += ["--conf", f"{k}={v}"]
    log = workdir / "connect.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            args, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    try:
        deadline = time.monotonic() + timeout
        while not _listening(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the Spark Connect server did not come up:\n{log.read_text(errors='replace')[-3000:]}"
                )
            time.sleep(1.0)
        yield f"sc://{HOST}:{port}"
    finally:
        _stop(proc)
