"""Outputs are never half drawn: a release whose noise is drawn writes all its outputs or none, and says so.

The real CLI in its own process, on real files: a read-only folder (refused before anything is read or drawn),
and a full disk standing in as a file-size limit (``RLIMIT_FSIZE``, with SIGXFSZ ignored so a write fails with
EFBIG instead of killing the process) that lets the CSV through and stops the report or the tokenizer written
after it. Each run first releases once without the limit (numba's kernels and the calibration cache are then
warm: the limit hits only the outputs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.accounting import pg
from tests.hostile.generate import GOOD_CSV, MECH
from tests.hostile.readonly import read_only_folder

REPO = Path(__file__).resolve().parents[2]

_MARK = "---- warm-up done ----"
_RUNNER = (
    f"_MARK = {_MARK!r}"
    + """
import resource, signal, sys
from dpsu_core.interfaces.cli import main
warm = sys.argv[2]
if main(["release", warm, *sys.argv[5:11], "-o", warm + ".out.csv", "--ledger", warm + ".ledger.sqlite"]) != 0:
    sys.exit("warm-up release failed")
print(_MARK, file=sys.stderr, flush=True)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(main(sys.argv[3:]))
"""
)


def _run(folder: Path, argv: list[str], *, fsize: int | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if fsize is None:
        cmd = [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv]
    else:
        warm = folder.parent / f"{folder.name}_warm.csv"
        warm.write_bytes(GOOD_CSV)
        cmd = [sys.executable, "-c", _RUNNER, str(fsize), str(warm), *argv]
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    proc.stderr = proc.stderr.rpartition(_MARK + "\n")[2]  # the limited run's own output
    return proc


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "run"
    folder.mkdir()
    src = folder / "corpus.csv"
    src.write_bytes(GOOD_CSV)
    return folder, src


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _server_ledger(server: str) -> list[str]:
    """``--ledger`` on a fresh PostgreSQL database: a file-size limit on this process binds every file it writes,
    a SQLite ledger's too, while a server's writes are its own (a team's ledger on a server, the laptop's disk full)."""
    return ["--ledger", pg.fresh_database(server)]


def _release(src: Path, *extra: str) -> list[str]:
    return ["release", src.name, *MECH, "-o", "out.csv", *extra]


def test_read_only_report_folder_is_refused_before_the_corpus_is_read(tmp_path):
    folder, src = _corpus(tmp_path)
    ro = folder / "reports"
    ro.mkdir()
    with read_only_folder(ro):
        proc = _run(folder, _release(src, "--report", "reports/r.json"))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    # (Permission denied) under chmod, as a user; (Operation not permitted) under chattr +i, as root
    assert lines[0].startswith("dpsu: error: the folder of --report 'reports/r.json' is not writable ("), lines
    assert lines[0].endswith("); choose a writable folder"), lines
    assert "privacy spent" not in proc.stderr and "note" not in proc.stderr  # nothing read, nothing drawn
    assert _files(folder) == {"corpus.csv": GOOD_CSV} and list(ro.iterdir()) == []


def test_read_only_tokenizer_folder_is_refused_before_the_corpus_is_read(tmp_path):
    pytest.importorskip("tokenizers")
    folder, src = _corpus(tmp_path)
    ro = folder / "tok"
    ro.mkdir()
    with read_only_folder(ro):
        proc = _run(folder, _release(src, "--report", "r.json", "--export-tokenizer", "tok/tokenizer.json"))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "the folder of --export-tokenizer 'tok/tokenizer.json' is not writable" in lines[0]
    assert _files(folder) == {"corpus.csv": GOOD_CSV}


@pytest.mark.parametrize(
    ("extra", "fails"),
    [
        (["--report", "r.json"], "--report 'r.json'"),  # the CSV fits, the report written after it does not
        (["--report", "r.md"], "--report 'r.md'"),
        (["--export-tokenizer", "tok.json"], "--export-tokenizer 'tok.json'"),
    ],
)
def test_full_disk_after_the_csv_leaves_no_output(tmp_path, postgres_server, extra, fails):
    if extra[0] == "--export-tokenizer":
        pytest.importorskip("tokenizers")
    folder, src = _corpus(tmp_path)
    ok = _run(folder, _release(src, *extra))  # the same run without a limit: what would have been written
    assert ok.returncode == 0, ok.stderr
    sizes = {name: len(body) for name, body in _files(folder).items() if name != "corpus.csv"}
    limit = sizes["out.csv"] + 64
    assert sizes[extra[1]] > limit  # so the limit lets the CSV through and stops the file after it
    for name in sizes:
        (folder / name).write_bytes(b"an earlier run's " + name.encode())  # must survive the failed run
    before = _files(folder)

    proc = _run(folder, _release(src, *extra, *_server_ledger(postgres_server)), fsize=limit)
    last = proc.stderr.splitlines()[-1]
    assert proc.returncode == 2, proc.stderr
    assert last.startswith(f"dpsu: error: cannot write {fails} (File too large); no output was written"), last
    assert "the noise was drawn, but nothing of this release was published" in last
    assert "Traceback" not in proc.stderr and "privacy spent by this run" not in proc.stderr
    assert _files(folder) == before  # every earlier output as it was, no temporary file left


def test_full_disk_before_the_csv_leaves_no_output(tmp_path, postgres_server):
    folder, src = _corpus(tmp_path)
    proc = _run(folder, _release(src, "--report", "r.json", *_server_ledger(postgres_server)), fsize=16)
    last = proc.stderr.splitlines()[-1]
    assert proc.returncode == 2, proc.stderr
    assert last.startswith("dpsu: error: cannot write -o 'out.csv' (File too large); no output was written"), last
    assert _files(folder) == {"corpus.csv": GOOD_CSV}
