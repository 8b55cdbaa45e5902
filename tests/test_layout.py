"""The layout rules the README states, checked on the source: dpsu_core never imports Streamlit, and only
``pages/_state.py`` touches ``st.session_state`` (every page goes through ``AppState`` and its helpers)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def _session_state_uses(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr == "session_state")
        or (isinstance(node, ast.Name) and node.id == "session_state")
    ]


CORE = sorted((ROOT / "dpsu_core").rglob("*.py"))
PAGES = sorted(p for p in (ROOT / "pages").glob("*.py") if p.name != "_state.py") + [ROOT / "app.py"]


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_never_imports_streamlit(path):
    assert "streamlit" not in _imports(ast.parse(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_state_module_touches_session_state(path):
    assert _session_state_uses(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_checks_see_what_they_look_for():
    state = ast.parse((ROOT / "pages" / "_state.py").read_text(encoding="utf-8"))
    assert _session_state_uses(state) and "streamlit" in _imports(state)
    assert len(CORE) > 40 and len(PAGES) > 8
