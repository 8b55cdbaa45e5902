"""The real CLI on real files against every hostile input of ``generate.CASES``: exit 0 with a release,
or exit 2 with one short line on stderr; never a traceback, never a crash, never a changed input file,
never a half-written or stray output file.

Cases marked ``isolate`` (bombs, deep JSON, devices, FIFOs, one good file and one clobbering attempt) run
as ``python -m dpsu_core.interfaces.cli`` in their own processes, a few at a time, so that a crash or a hang shows;
the others call ``cli.main(argv)`` in this process, which is the same code minus the ~1 s start-up.
The cases run once; then one test per case checks its result.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import os
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpsu_core.errors import MAX_MESSAGE_CHARS
from dpsu_core.interfaces import cli
from tests.hostile.generate import CASES

REPO = Path(__file__).resolve().parents[2]
WORKERS = 3
TIMEOUT_S = 180
MAX_ERROR_LINE = len("dpsu: error: ") + MAX_MESSAGE_CHARS


@dataclass
class Outcome:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    before: dict[str, str]  # regular files in the case folder -> sha256, before the run
    after: dict[str, str]


def _snapshot(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink() or not stat.S_ISREG(os.lstat(p).st_mode):
            continue
        out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _ledger(folder: Path) -> str:
    """A durable ledger of the case's own, beside its folder (not in it: the folder's files are compared): many
    cases hold the same words in another encoding or layout, which the ledger rightly knows as the same corpus
    and would refuse to release identically twice."""
    return str(folder.parent / f"{folder.name}.ledger.sqlite")


def _run_in_process(folder: Path, argv: list[str]) -> Outcome:
    """In this process, one case at a time (the main thread's): DPSU_LEDGER is set for the call only."""
    before = _snapshot(folder)
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        mp.setenv("DPSU_LEDGER", _ledger(folder))
        code = cli.main(argv)
    return Outcome(argv, code, out.getvalue(), err.getvalue(), before, _snapshot(folder))


def _run(folder: Path, argv: list[str]) -> Outcome:
    before = _snapshot(folder)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["DPSU_LEDGER"] = _ledger(folder)
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    return Outcome(
        argv,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
        before,
        _snapshot(folder),
    )


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    root = tmp_path_factory.mktemp("hostile")
    jobs = {}
    for i, case in enumerate(CASES):
        folder = root / f"case{i:03d}"
        folder.mkdir()
        jobs[case.name] = (case, folder, case.make(folder))
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {name: pool.submit(_run, f, argv) for name, (case, f, argv) in jobs.items() if case.isolate}
        results = {name: _run_in_process(f, argv) for name, (case, f, argv) in jobs.items() if not case.isolate}
        results.update({name: fut.result() for name, fut in futures.items()})
    return results


def test_isolated_cases_cover_the_dangerous_ones():
    isolated = {c.name for c in CASES if c.isolate}
    assert {"deep_200k.jsonl", "zip_bomb_zeros.zip", "gzip_bomb.csv.gz", "fifo.csv", "dev_zero"} <= isolated
    assert any(c.expect == "release" for c in CASES if c.isolate)  # the subprocess path is seen succeeding too


def test_at_least_sixty_hostile_files():
    files = [c for c in CASES if not c.name.startswith(("out_", "report_", "seed_", "max_", "calibrate_"))]
    assert len(files) >= 60
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name.encode("unicode_escape").decode()[:60] for c in CASES])
def test_hostile_input(case, outcomes):
    out = outcomes[case.name]
    where = (
        f"dpsu {' '.join(out.argv)}\nexit {out.returncode}\nstdout: {out.stdout[-500:]}\nstderr: {out.stderr[-1500:]}"
    )
    assert "Traceback" not in out.stderr + out.stdout, where
    assert out.returncode in (0, 2), where
    # every input file is byte for byte what it was
    changed = {k for k in out.before if out.after.get(k) != out.before[k]}
    assert not changed, f"input files changed: {changed}\n{where}"
    new = set(out.after) - set(out.before)
    assert not any(n.endswith(".tmp") or "/." in "/" + n for n in new), f"stray temporary files {new}\n{where}"
    if out.returncode == 2:
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("dpsu: error: "), where
        assert len(lines[0]) <= MAX_ERROR_LINE, where
        assert not new, f"a failed run left files behind: {new}\n{where}"
        assert case.expect in ("error", "either"), f"expected a release\n{where}"
    else:
        assert case.expect in ("release", "either"), f"expected an error\n{where}"
        assert "released" in out.stdout, where
        assert not any(ln.startswith("dpsu: error") for ln in out.stderr.splitlines()), where  # notes only
        if out.argv[0] == "release":
            csv_out = Path(out.argv[out.argv.index("-o") + 1])
            with open(csv_out, newline="", encoding="utf-8") as fh:
                rows = list(csv.reader(fh))
            assert rows and rows[0][:2] == ["item", "n"], where
            for row in rows[1:]:  # formula-like items are neutralised in the export
                assert not row[0].startswith(("=", "+", "-", "@")), where
