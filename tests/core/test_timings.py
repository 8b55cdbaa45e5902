"""``dpsu release --timings`` (or DPSU_TIMINGS=1): one stderr line naming every phase; nothing without it."""

from __future__ import annotations

import re

import pytest

from dpsu_core import timings
from dpsu_core.interfaces.cli import main

PHASES = ("start-up", "read", "tokenize", "checks", "build", "calibrate", "release", "write")


def _corpus(path):
    rows = ["user,text"] + [f"u{u},word{u % 7} word{u % 5} shared text" for u in range(300)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _release(tmp_path, capsys, *extra):
    argv = ["release", str(_corpus(tmp_path / "c.csv")), "-m", "policy-gaussian", "-e", "3", "-d", "1e-6"]
    argv.append("--spend-again")  # the test releases the same request again and again: each one spends
    code = main([*argv, "-o", str(tmp_path / "o.csv"), *extra])
    err = capsys.readouterr().err
    assert code == 0, err
    return [line for line in err.splitlines() if line.startswith("timings (s):")]


def test_timings_flag_prints_every_phase_once(tmp_path, capsys):
    (line,) = _release(tmp_path, capsys, "--timings")
    figures = dict(re.findall(r"([a-z-]+) (\d+\.\d+)", line))
    assert set(PHASES) <= set(figures)
    total = float(line.rsplit("total ", 1)[1])
    assert sum(float(figures[p]) for p in PHASES) <= total + 0.05  # /proc times are in 10 ms ticks


def test_no_timings_without_the_flag_or_the_variable(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DPSU_TIMINGS", raising=False)
    assert _release(tmp_path, capsys) == []
    monkeypatch.setenv("DPSU_TIMINGS", "1")
    assert len(_release(tmp_path, capsys)) == 1
    monkeypatch.setenv("DPSU_TIMINGS", "0")
    assert _release(tmp_path, capsys) == []


def test_phase_adds_up_only_when_on():
    timings.start(False)
    with timings.phase("x"):
        pass
    assert timings.spent() == {}
    timings.start(True)
    with timings.phase("x"):
        pass
    with timings.phase("x"):
        pass
    assert set(timings.spent()) == {"start-up", "x"} and timings.spent()["x"] >= 0
    timings.start(False)


@pytest.mark.xfail(
    strict=True,
    reason="since the durable ledger, a release's charge and kept output load pandas and scipy.special (about "
    "0.35 s of start-up); not yet traced to the import that pulls them in",
)
def test_release_loads_neither_pandas_nor_scipy_special(tmp_path):
    """What a release imports is part of its start-up time: pandas (0.15 s; pyarrow's to_numpy, pa.array and
    Python scalars in compute calls load it) and scipy.special (0.2 s) are not needed for a CSV release with
    a kept calibration. Run in a child process, so the test's own imports do not count."""
    import json
    import os
    import subprocess
    import sys

    corpus = _corpus(tmp_path / "c.csv")
    code = (
        "import json, sys\n"
        "from dpsu_core.interfaces.cli import main\n"
        f"argv = ['release', {str(corpus)!r}, '-m', 'policy-gaussian', '-e', '3', '-d', '1e-6', '-o', "
        f"{str(tmp_path / 'o.csv')!r}, '--spend-again']\n"
        "codes = [main(argv) for _ in range(int(sys.argv[1]))]\n"
        "print(json.dumps([codes, sorted(m for m in ('pandas', 'scipy.special') if m in sys.modules)]))\n"
    )
    env = {**os.environ, "DPSU_CACHE_DIR": str(tmp_path / "cache")}
    # the first process keeps the calibration on disk (the second release in it reads it back)
    fresh = subprocess.run([sys.executable, "-c", code, "2"], env=env, capture_output=True, text=True, check=True)
    assert json.loads(fresh.stdout.splitlines()[-1])[0] == [0, 0]
    # the next process starts with the calibration kept on disk and a ledger of its own (composing earlier spends
    # is the ledger's work, not the release's): the release's own path, nothing else
    env_again = {**env, "DPSU_LEDGER": str(tmp_path / "again.sqlite")}
    again = subprocess.run([sys.executable, "-c", code, "1"], env=env_again, capture_output=True, text=True, check=True)
    assert json.loads(again.stdout.splitlines()[-1]) == [[0], []], again.stderr[-2000:]
    # and the check can fail: the same process asked for a two-word corpus (n-grams build with pandas) has it
    two = code.replace("'-o'", "'--max-n', '2', '-o'")
    env_two = {**env, "DPSU_LEDGER": str(tmp_path / "two.sqlite")}
    bigrams = subprocess.run([sys.executable, "-c", two, "1"], env=env_two, capture_output=True, text=True, check=True)
    assert "pandas" in json.loads(bigrams.stdout.splitlines()[-1])[1]
