"""The commands of issue 26, run as a user runs them (the installed CLI's module in a fresh process, real files):
each released nothing but the seven shared words once the descent's rounding guard is fixed (before, every one
published all 400 lone words). A corner below a documented range is refused with one line and exit 2."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from dpsu_core.corpus.tokenize import TOKENIZERS
from tests.corners import SHARED_WORDS, canary_lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def base_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("canary") / "base.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["user", "text"])
        w.writerows(canary_lines())
    return path


def _release(base: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    out = base.parent / "out.csv"
    out.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", str(base), *args, "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    items: set[str] = set()
    if out.exists():
        with open(out, newline="", encoding="utf-8") as f:
            items = {row["item"] for row in csv.DictReader(f)}
    return proc, items


ISSUE_COMMANDS = [
    ["-m", "policy-sips", "-e", "3", "-d", "1e-6", "--rounds", "19"],
    ["-m", "policy-sips", "-e", "3", "-d", "1e-6", "--rounds", "12"],
    ["-m", "policy-gaussian", "-e", "1e-12", "-d", "1e-300"],
    ["-m", "policy-sips", "-e", "1", "-d", "1e-6", "--rounds", "15"],
    ["-m", "policy-sips", "-e", "3", "-d", "1e-6", "--rounds", "5", "--round-ratio", "1e-6"],
    ["-m", "policy-sips", "-e", "3", "-d", "1e-6", "--rounds", "20", "--round-ratio", "1e-6"],
]


@pytest.mark.parametrize("args", ISSUE_COMMANDS, ids=lambda a: " ".join(a))
def test_issue_commands_release_only_shared_words(base_csv, args):
    proc, items = _release(base_csv, *args)
    assert proc.returncode == 0, proc.stderr
    assert items <= set(SHARED_WORDS), sorted(items - set(SHARED_WORDS))[:5]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_every_tokenizer_at_the_hardest_rounds_corner(base_csv, tokenizer):
    proc, items = _release(
        base_csv, "-m", "policy-sips", "-e", "3", "-d", "1e-6", "--rounds", "20", "--round-ratio", "1e-6",
        "--tokenizer", tokenizer,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not any("uniq" in i for i in items), sorted(items)[:5]


@pytest.mark.parametrize(
    "args, says",
    [
        (["-m", "policy-gaussian", "-e", "1e-20", "-d", "1e-300"], "epsilon must be at least 1e-12"),
        (["-m", "weighted-laplace", "-e", "5e-324", "-d", "1e-6"], "epsilon must be at least 1e-12"),
        (["-m", "count-laplace", "-e", "1", "-d", "1e-310"], "delta must be at least 1e-300"),
    ],
)
def test_below_a_documented_range_is_one_line_and_exit_2(base_csv, args, says):
    proc, items = _release(base_csv, *args)
    assert proc.returncode == 2 and not items
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr


def test_calibrate_refuses_a_tiny_epsilon_instead_of_showing_inf():
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "calibrate", "-m", "count-laplace", "-e", "1e-300", "-d", "1e-6",
         "--max-items", "1000000"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2 and "inf" not in proc.stdout
    assert "epsilon must be at least 1e-12" in proc.stderr
