"""A Spark release that finished reports success (issue 38, item 12): a SIGINT or SIGTERM that arrives after every
output was written and every line printed, while Spark shuts down in the interpreter's exit hooks, ends the process
with the run's own status, 0, and says nothing more (``dpsu_core.interfaces.signals``)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from .test_spark_cluster import _release_argv, child_env

# the signal is sent from an exit hook registered before the command runs: it comes after main returned, while the
# hooks run (Spark's own stop among them)
_RUNNER = """
import atexit, os, signal, sys
from dpsu_core.interfaces import cli
atexit.register(os.kill, os.getpid(), getattr(signal, sys.argv[1]))
sys.argv = ["dpsu", *sys.argv[2:]]
code = cli.main()
print("dpsu returned", code, file=sys.stderr, flush=True)
sys.exit(code)
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_while_spark_shuts_down_keeps_the_success(csv_path, tmp_path, sig):
    out, rep = tmp_path / "spark.csv", tmp_path / "r.json"
    argv = [*_release_argv(csv_path, out), "--report", str(rep), "--engine", "spark", "--spark-master", "local[2]"]
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, sig, *argv], env=child_env(), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert "dpsu returned 0" in proc.stderr and "dpsu: error" not in proc.stderr
    assert "Traceback" not in proc.stderr.rpartition("dpsu returned 0")[2], proc.stderr[-3000:]
    rows = [r for r in csv.reader(out.open(encoding="utf-8")) if not r[0].startswith("#")]  # the seed's comment
    assert (
        rows[0] == ["item", "n"] and len(rows) > 1 and json.loads(rep.read_text())["mechanism"] == "weighted-gaussian"
    )
