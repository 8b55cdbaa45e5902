"""Every fenced ```bash and ```python block of README.md and docs/*.md is run (issue 40.2).

Python blocks are executed in a temporary folder holding ``posts.csv`` (the bundled demo corpus), with
``DPSU_LEDGER`` pointing at a temporary SQLite file. Bash blocks of ``dpsu ...`` commands run through a real shell
in such a folder, beside small real files this test writes (``posts.csv``, a folder ``posts/`` of two parts and an
MSNBC-format ``../shared/data/msnbc990928.zip``). A block is left out only when the line right before it is
``<!-- not run: REASON -->``, and every such comment must give a reason."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(bash|python)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not run:(.*)-->\s*$")


def blocks() -> list[tuple[str, int, str, str, str | None]]:
    """(file, line, language, code, reason it is not run or None) of every fenced bash/python block."""
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            end = lines.index("```", i + 1)
            before = next((x for x in reversed(lines[:i]) if x.strip()), "")
            skip = NOT_RUN.match(before.strip())
            reason = skip.group(1).strip() if skip else None
            found.append((path.relative_to(ROOT).as_posix(), i + 1, m.group(1), "\n".join(lines[i + 1 : end]), reason))
            i = end + 1
    return found


BLOCKS = blocks()
RUN = [b for b in BLOCKS if b[4] is None]


def test_blocks_are_found_and_every_skip_says_why():
    assert len(BLOCKS) >= 10 and RUN, BLOCKS
    for path in DOCS:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "not run" in line and line.lstrip().startswith("<!--"):
                m = NOT_RUN.match(line.strip())
                assert m and len(m.group(1).strip()) >= 10, f"{path.name}:{n}: a skip without a reason: {line}"
    for where, line, lang, code, _ in RUN:
        if lang == "bash":
            commands = [x for x in code.replace("\\\n", " ").splitlines() if x.strip() and not x.startswith("#")]
            assert all(x.startswith("dpsu ") for x in commands), f"{where}:{line}: not only dpsu commands; mark it"


def _files(folder: Path) -> None:
    shutil.copy(ROOT / "assets" / "demo_corpus.csv", folder / "posts.csv")
    (folder / "posts").mkdir()
    rows = (ROOT / "assets" / "demo_corpus.csv").read_text(encoding="utf-8").splitlines()
    for k in range(2):
        (folder / "posts" / f"part-{k}.csv").write_text("\n".join([rows[0], *rows[1 + k :: 2]]) + "\n", "utf-8")
    rng = random.Random(40)
    seqs = [" ".join(str(rng.choice([1, 1, 2, 3, 4, 5])) for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    text = "% Different categories found in input file:\n\na b c d e\n\n\n% Sequences:\n\n" + " \n".join(seqs) + " \n"
    data = folder.parent / "shared" / "data"
    data.mkdir(parents=True)
    with zipfile.ZipFile(data / "msnbc990928.zip", "w") as z:
        z.writestr("msnbc990928.seq", text)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    work = tmp_path / "repo"
    work.mkdir()
    _files(work)
    monkeypatch.setenv("DPSU_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("where, line, lang, code", [b[:4] for b in RUN], ids=[f"{b[0]}:{b[1]}" for b in RUN])
def test_block_runs(workdir, where, line, lang, code):
    if lang == "python":
        script = workdir / "snippet.py"
        script.write_text(code + "\n", encoding="utf-8")
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    else:
        dpsu = f'dpsu() {{ "{sys.executable}" -m dpsu_core.interfaces.cli "$@"; }}\nset -e\n'
        proc = subprocess.run(["bash", "-c", dpsu + code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{where}:{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
