"""The layout rules the README states, checked on the source: dpsu_core never imports Streamlit, and only
``pages/_state.py`` touches ``st.session_state`` (every page goes through ``AppState`` and its helpers)."""

from __future__ import annotations

import ast
import math
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


# --------------------------------------------------------------------------- the import graph of dpsu_core
def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in CORE}


def _imported_modules(name: str, path: Path) -> set[str]:
    """The dpsu_core modules ``name`` imports anywhere in its file: at the top, inside functions (a lazy import
    still closes a cycle) and under ``TYPE_CHECKING``. ``from pkg import mod`` counts as importing ``pkg.mod``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target not in MODULES:
                continue
            subs = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES}
            out |= subs
            if len(subs) < len(node.names):  # names defined in the package itself
                out.add(target)
    out.discard(name)
    return out


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: every import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


#: cycles that predate this test, each owned by the engineer of its files; remove a line when it is broken.
#: Nothing may be added here: a new cycle is broken by moving the shared piece where both sides can import it.
KNOWN_CYCLES: list[list[str]] = []  # none left: a new cycle is broken by moving the shared piece down a layer


def test_no_new_import_cycle_in_dpsu_core():
    graph = {name: _imported_modules(name, path) for name, path in MODULES.items()}
    new = [c for c in import_cycles(graph) if c not in KNOWN_CYCLES]
    assert new == [], f"import cycles (break each by moving the shared piece down a layer): {new}"


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"} - {"e"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    # and it sees this package's lazy and TYPE_CHECKING imports: a function-level import is in the graph
    assert "dpsu_core.mechanisms.registry" in _imported_modules(
        "dpsu_core.interfaces.cli", MODULES["dpsu_core.interfaces.cli"]
    )


#: the layers of dpsu_core, lowest first: a module may import its own layer and those below, never one above
LAYERS = [
    {"dpsu_core.errors", "dpsu_core.timings"},
    {"dpsu_core.privacy"},
    {"dpsu_core.params", "dpsu_core.wording", "dpsu_core.corpus", "dpsu_core.reading", "dpsu_core.publicfreq"},
    {"dpsu_core.mechanisms"},
]


def _layer(module: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if any(module == top or module.startswith(top + ".") for top in layer):
            return i
    return None  # above the listed layers (utility, ledger, export, the CLI, the engines, ...)


def test_no_upward_import_in_dpsu_core():
    upward = []
    for name, path in MODULES.items():
        mine = _layer(name)
        if mine is None:
            continue
        for dep in _imported_modules(name, path):
            theirs = _layer(dep)
            if theirs is None or theirs > mine:
                upward.append(f"{name} -> {dep}")
    assert upward == [], f"imports from a lower layer up to a higher one: {upward}"


def test_no_module_imports_another_modules_private_names():
    """``from .x import _name`` reaches into another module's internals: make the name public where it is defined.
    (A private submodule of the importer's own package, ``from . import _table``, is that package's business.)"""
    private = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                private += [f"{name}: from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
    assert private == []


# --------------------------------------------------------------------------- parameter specs (issue 40)
#: where widgets are declared: every page (``_state.py`` too: its defaults) and the app
WIDGET_FILES = sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]
WIDGET_NUMBERS = ("min_value", "max_value", "value")  # the keywords of a widget that hold a bound or a default


def _specs() -> list:
    from dpsu_core.params import OPTIONS, PARAMS

    return [*PARAMS.values(), *OPTIONS.values()]


def _number(node: ast.AST | None) -> float | None:
    """The number a literal writes (``-1e-3`` too), else None (a name, a call, a string, a bool)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def _distinctive(v: float) -> bool:
    """A number that says "this spec" when written again: not a small whole number (0, 1, 2, 10 bound many
    unrelated widgets: the Compare page's runs, a simulated corpus's sizes)."""
    return not (v.is_integer() and abs(v) <= 20)


def _spec_numbers() -> set[float]:
    """Every distinctive bound, app widget bound and default the specs hold."""
    out: set[float] = set()
    for s in _specs():
        held = [s.minimum, s.maximum, *(s.widget or ()), None if s.kind == "choice" else s.default]
        out |= {float(v) for v in held if v is not None and math.isfinite(v) and _distinctive(float(v))}
    return out


def _spec_ranges() -> set[tuple[float, float]]:
    """Every (minimum, maximum) and app widget range the specs hold (small whole numbers included)."""
    out = {(float(s.minimum), float(s.maximum)) for s in _specs() if s.minimum is not None and s.maximum is not None}
    return out | {(float(s.widget[0]), float(s.widget[1])) for s in _specs() if s.widget is not None}


def _copied_numbers(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, keyword) of every call writing as a literal a bound or default a spec holds: a distinctive number in
    ``min_value``, ``max_value`` or ``value``, or the two bounds together forming a spec's range ("range")."""
    found: list[tuple[int, str]] = []
    numbers, ranges = _spec_numbers(), _spec_ranges()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        kw = {k.arg: _number(k.value) for k in node.keywords if k.arg in WIDGET_NUMBERS}
        found += [(node.lineno, k) for k, v in kw.items() if v is not None and v in numbers]
        lo, hi = kw.get("min_value"), kw.get("max_value")
        if lo is not None and hi is not None and (lo, hi) in ranges:
            found.append((node.lineno, "range"))
    return found


@pytest.mark.parametrize("path", WIDGET_FILES, ids=lambda p: p.name)
def test_no_widget_writes_again_a_bound_a_spec_holds(path):
    """A widget's range and default held by a spec (``params.PARAMS``, ``params.OPTIONS``) are read from it
    (``pages/_ui.py:bounds``, ``spec.default``), never copied."""
    copied = _copied_numbers(ast.parse(path.read_text(encoding="utf-8")))
    assert not copied, f"{path.name}: bounds or defaults a spec holds, written again at (line, keyword) {copied}"


def test_the_bound_check_sees_a_copied_bound():
    source = (
        "st.number_input('ε', min_value=0.01, max_value=100.0)\n"  # the sidebar's ε range
        "st.number_input('size', min_value=2, max_value=10_000_000, value=30_000)\n"  # the tokenizer's size
        "st.number_input('cap', min_value=1e-15, max_value=x)\n"  # one bound of the caps' δ
        "st.slider('x', min_value=1, max_value=7, value=3)\n"  # no spec's: small numbers, no spec's range
        "st.number_input('n', min_value=1, max_value=10)\n"  # max_n's range, small as it is
        "st.number_input('s', **bounds('counts_share'), value=share)"  # read from the spec
    )
    assert _copied_numbers(ast.parse(source)) == [
        (1, "min_value"), (1, "max_value"), (1, "range"), (2, "max_value"), (2, "value"), (2, "range"),
        (3, "min_value"), (5, "range"),
    ]  # fmt: skip


def _argument_calls(tree: ast.AST) -> list[ast.Call]:
    return [
        n for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
    ]  # fmt: skip


def _copied_flags(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every ``add_argument`` that writes a spec's flag as a literal string, or a spec's distinctive
    bound or default as its literal ``default``."""
    flags = {s.cli for s in _specs() if s.cli}
    numbers = _spec_numbers()
    found = []
    for call in _argument_calls(tree):
        found += [(call.lineno, a.value) for a in call.args if isinstance(a, ast.Constant) and a.value in flags]
        found += [(call.lineno, "default") for k in call.keywords if k.arg == "default" and _number(k.value) in numbers]
    return found


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_flag_declares_again_what_a_spec_holds(path):
    """A spec's CLI flag is added from the spec (``spec.cli`` with its type, choices, default and range: the CLI's
    ``_add_option_arg``), so its bounds and default cannot drift from the app widget's."""
    copied = _copied_flags(ast.parse(path.read_text(encoding="utf-8")))
    assert copied == [], f"flags declaring again what a spec holds, at (line, what) {copied}"


def test_the_flag_check_sees_a_copied_flag():
    tree = ast.parse(
        "p.add_argument('--counts-clip', type=float, default=None)\n"
        "p.add_argument('-e', '--epsilon', type=float)\n"
        "p.add_argument('--vocab', type=int, default=30_000)\n"
        "p.add_argument(spec.cli, type=float, default=None)\n"
        "p.add_argument('--runs', type=int, default=3)"
    )
    assert _copied_flags(tree) == [(1, "--counts-clip"), (2, "--epsilon"), (3, "default")]


# --------------------------------------------------------------------------- folders by job (issue 40)
#: what each folder of dpsu_core holds; a new module goes in the folder of its job
FOLDERS = {
    "accounting": "the ledger, the spend gate, the history, the durable store, identities and corpus accounts",
    "outputs": "export files and reports, the output writer, tokenizer export, the redo command",
    "analysis": "metrics, comparisons, neighbouring corpora, the utility preview, threshold tables, charts",
    "interfaces": "the command line, the app's launcher, signals and the kernels' warm-up",
    "corpus": "reading, cleaning, tokenizing and building corpora; content fingerprints",
    "privacy": "calibrations, compositions and their safe rounding",
    "mechanisms": "the mechanisms, each with its calibration beside its update rule",
    "engines": "the Spark engine",
}
MAX_LOOSE = 10


def test_dpsu_core_is_in_folders_by_job_with_few_loose_modules():
    core = ROOT / "dpsu_core"
    folders = {p.name for p in core.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(FOLDERS), f"folders of dpsu_core: {sorted(folders)}; the layout names {sorted(FOLDERS)}"
    loose = sorted(p.name for p in core.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE, f"{len(loose)} loose modules at dpsu_core's root (at most {MAX_LOOSE}): {loose}"


def test_the_readme_layout_names_every_folder():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    for name in FOLDERS:
        assert f"dpsu_core/{name}/" in layout, f"README's Layout section does not name dpsu_core/{name}/"
