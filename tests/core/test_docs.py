"""docs/algorithms.md is the math the code cites: every "docs/algorithms.md §n" reference in the code, the tests,
the benchmarks and the app points to a section that exists, and every registered mechanism is described."""

from __future__ import annotations

import re
from pathlib import Path

from dpsu_core.mechanisms.registry import list_mechanisms

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "algorithms.md"


def _sections() -> set[str]:
    return set(re.findall(r"^## §(\d+) ", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE))


def _cited() -> list[tuple[str, str]]:
    """(file, section number) of every "docs/algorithms.md §n[, §m]" in the repository's code and README."""
    files = [ROOT / "app.py", ROOT / "README.md"]
    for sub in ("dpsu_core", "pages", "tests", "benchmarks"):
        files += sorted((ROOT / sub).rglob("*.py"))
    out = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        for m in re.finditer(r"algorithms\.md((?:,? ?§\d+(?:, )?)+)", text):
            out += [(f.name, n) for n in re.findall(r"§(\d+)", m.group(1))]
    return out


def test_every_cited_section_exists():
    sections = _sections()
    assert sections == {str(i) for i in range(1, len(sections) + 1)}  # numbered §1..§n without gaps
    cited = _cited()
    assert len(cited) > 20  # the code does cite it
    missing = [(f, n) for f, n in cited if n not in sections]
    assert missing == []


def test_no_reference_to_an_outside_spec_remains():
    pattern = re.compile(r"spec (section|§|\d)", flags=re.IGNORECASE)
    hits = []
    for sub in ("dpsu_core", "pages", "tests", "benchmarks"):
        for f in (ROOT / sub).rglob("*.py"):
            hits += [
                f"{f.name}: {line.strip()}"
                for line in f.read_text(encoding="utf-8").splitlines()
                if pattern.search(line)
            ]
    assert hits == []


def test_every_mechanism_is_described():
    text = DOC.read_text(encoding="utf-8")
    assert [n for n in list_mechanisms() if n not in text] == []
