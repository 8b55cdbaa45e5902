"""Sessions never share what comes from an upload: every ``st.cache_data`` in the app is session-scoped, and the
one cross-session cache (``st.cache_resource``) holds the bundled demo corpus or the shared ledger store only."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_RESOURCES = {"_demo_corpus", "_store"}  # public synthetic data; the ledger every session charges


def _decorated(attr: str) -> list[tuple[str, ast.FunctionDef, ast.expr]]:
    found = []
    for path in [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    target = d.func if isinstance(d, ast.Call) else d
                    if isinstance(target, ast.Attribute) and target.attr == attr:
                        found.append((path.name, node, d))
    return found


def test_every_data_cache_is_session_scoped():
    caches = _decorated("cache_data")
    assert caches, "no st.cache_data found: the scan is broken"
    for name, fn, d in caches:
        scope = [k.value for k in d.keywords if k.arg == "scope"] if isinstance(d, ast.Call) else []
        assert scope and isinstance(scope[0], ast.Constant) and scope[0].value == "session", f"{name}:{fn.name}"


def test_cross_session_caches_hold_no_upload():
    resources = {fn.name for _, fn, _ in _decorated("cache_resource")}
    assert resources == SHARED_RESOURCES
