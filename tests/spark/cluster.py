"""A Spark standalone cluster on 127.0.0.1 for the tests: a master and two workers (1 core, 1 GB each) started
with the pyspark package's own ``bin/spark-class``, and stopped by process id.

Every port (the master's, the web UIs', the workers') is a free port on 127.0.0.1 and SPARK_LOCAL_IP makes
every daemon bind there; nothing listens on another address.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    # no PYSPARK_* and no PYTHONPATH: the executors find dpsu only where the driver ships it
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_") and k != "PYTHONPATH"}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP=HOST, SPARK_PUBLIC_DNS=HOST, SPARK_NO_DAEMONIZE="1")
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            env=_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{ui_port}/json/", timeout=5) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()  # this process id only (spark-class execs the JVM in place)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


@contextmanager
def standalone_cluster(workdir: Path, workers: int = 2, timeout: float = 180.0, memory: str = "1g"):
    """Yield the master URL ``spark://127.0.0.1:PORT`` once ``workers`` workers (1 core and ``memory`` each)
    are registered."""
    port, ui = free_port(), free_port()
    master_args = ["org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(port)]
    procs = [_start(master_args + ["--webui-port", str(ui)], workdir / "master.log")]
    try:
        for i in range(workers):
            wdir = workdir / f"worker{i}"
            wdir.mkdir(parents=True, exist_ok=True)
            args = ["org.apache.spark.deploy.worker.Worker", f"spark://{HOST}:{port}", "--host", HOST]
            args += ["--port", str(free_port()), "--webui-port", str(free_port())]
            args += ["--cores", "1", "--memory", memory, "--work-dir", str(wdir)]
            procs.append(_start(args, workdir / f"worker{i}.log"))
        deadline = time.monotonic() + timeout
        while _alive_workers(ui) < workers:
            dead = [p.args for p in procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = "\n".join(f.read_text(errors="replace")[-2000:] for f in sorted(workdir.glob("*.log")))
                raise RuntimeError(f"the standalone cluster did not come up ({dead or 'timeout'}):\n{logs}")
            time.sleep(1.0)
        yield f"spark://{HOST}:{port}"
    finally:
        _stop(procs)
