"""SIGINT and SIGTERM, and a closed standard output (issue 38, items 7 and 11): one line on stderr, exit 130 / 143,
nothing of the run written; while the outputs are written a signal is set aside, and a run that finished reports
success. The real CLI in its own process (signals and closed streams are the process's own), real signals."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpsu_core.interfaces import signals
from tests.hostile.generate import GOOD_CSV, MECH

REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    """This process's environment at the call (the test's own DPSU_LEDGER: never the user's store)."""
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_a_signal_stops_the_run_unless_held_then_the_run_has_finished():
    """The policy in this process, with real signals sent to it."""
    before = {s: signal.getsignal(s) for s in signals.SIGNALS}
    with signals.policy():
        for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            with pytest.raises(KeyboardInterrupt) as caught:
                os.kill(os.getpid(), sig)
                time.sleep(1)  # the handler runs at once; the sleep is never reached in full
            assert signals.exit_code(caught.value) == code
        with signals.held():
            os.kill(os.getpid(), signal.SIGTERM)  # set aside: the outputs are being written
        os.kill(os.getpid(), signal.SIGINT)  # the run has finished: nothing happens
    assert {s: signal.getsignal(s) for s in signals.SIGNALS} == before
    with signals.policy(), pytest.raises(KeyboardInterrupt), signals.held():
        raise KeyboardInterrupt  # an error inside: the run has not finished
    assert signals.exit_code(KeyboardInterrupt()) == 130


def _big_corpus(path: Path, rows: int = 200_000) -> None:
    rnd = random.Random(7)
    words = [f"w{i}" for i in range(3000)]
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["user", "text"])
        for i in range(rows):
            w.writerow([f"u{i % 40_000}", " ".join(rnd.choices(words, k=8))])


@pytest.mark.parametrize(
    ("sig", "code", "says"), [(signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_during_a_release_is_one_line_and_nothing_written(tmp_path, sig, code, says):
    """The signal comes once the run has said what the counts will cost, before the corpus (200,000 rows) is
    read: the run stops, says so in one line, and writes nothing."""
    src = tmp_path / "big.csv"
    _big_corpus(src)
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    argv = [
        sys.executable,
        "-m",
        "dpsu_core.interfaces.cli",
        "release",
        str(src),
        *MECH,
        "-o",
        str(out),
        "--report",
        str(rep),
    ]
    proc = subprocess.Popen(
        [*argv, "--with-counts", "--export-tokenizer", str(tmp_path / "tok")],
        env=_env(),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert first.startswith("before the run: noisy counts"), first
    proc.send_signal(sig)
    rest = proc.stderr.read()
    assert proc.wait(timeout=300) == code, rest
    lines = rest.strip().splitlines()
    assert lines[-1].startswith(f"dpsu: error: {says}") and "Traceback" not in rest, rest
    assert sorted(os.listdir(tmp_path)) == ["big.csv"]  # no output, no temporary file, no tokenizer folder


def test_a_closed_standard_output_is_no_error(tmp_path):
    """Started with its standard output closed: the run writes its files, prints nothing, and exits 0."""
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    argv = ["release", str(src), *MECH, "-o", str(out), "--report", str(rep)]
    closed = ["bash", "-c", 'exec 1>&-; exec "$@"', "x", sys.executable, "-m", "dpsu_core.interfaces.cli"]
    proc = subprocess.run([*closed, *argv], env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "error" not in proc.stderr, proc.stderr
    assert next(csv.reader(out.open(encoding="utf-8"))) == ["item", "n"]
    assert json.loads(rep.read_text())["mechanism"] == "policy-gaussian"
    proc = subprocess.run([*closed, "release", str(src), *MECH, "-o", ""], env=_env(), capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == ["dpsu: error: -o is empty; give a path"]


def test_a_reader_gone_from_standard_output_does_not_fail_a_finished_run(tmp_path):
    """``dpsu release ... | head -0``: the outputs are written, the reader of stdout has gone; exit 0, the rest of
    the lines on stderr, no error (it used to say 'Broken pipe; check the path' and exit 2)."""
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    out = tmp_path / "o.csv"
    argv = [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", str(src), *MECH, "-o", str(out)]
    proc = subprocess.Popen(argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader goes away before the run prints anything
    err = proc.communicate(timeout=300)[1]
    assert proc.returncode == 0 and "error" not in err and "Traceback" not in err, err
    assert "privacy spent by this run" in err
    assert next(csv.reader(out.open(encoding="utf-8"))) == ["item", "n"]


def test_an_error_a_library_raised_around_the_signal_is_the_signal():
    """numba's dispatcher, interrupted while it loads a cached kernel, returns a SystemError caused by our
    ``Stopped``: the run was stopped by the signal (exit 143), not by a bug (exit 3)."""
    try:
        try:
            raise signals.Stopped(signal.SIGTERM)
        except KeyboardInterrupt as stop:
            raise SystemError("CPUDispatcher returned a result with an exception set") from stop
    except SystemError as exc:
        wrapped = exc
    found = signals.stopped_by(wrapped)
    assert found is not None and signals.exit_code(found) == 143
    assert signals.stopped_by(SystemError("a bug")) is None
