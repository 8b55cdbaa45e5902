"""Every file a release writes is checked against every input and every other output before any noise is drawn:
the tokenizer folder's files (as many as the exporter writes, ``tokenizer_export.DIRECTORY_FILES``), a folder
named by two flags, a dangling symlink as the folder, '' and '-' as paths (issue 38, items 1, 13 and 16).

The regressions run the real CLI in this process (``cli.main``: the same code minus the start-up); the property
test draws -o, --report, --export-tokenizer, --public-corpus and the input from names inside one folder (the
tokenizer folder, its files and the folder itself among them) and checks that each run is either refused before
the noise, nothing written and every input as it was, or writes every output whole and leaves every input as it
was.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dpsu_core.interfaces import cli
from dpsu_core.outputs.tokenizer_export import DIRECTORY_FILES
from tests.hostile.generate import GOOD_CSV, MECH, csv_bytes

PUBLIC_CSV = csv_bytes([(f"p{i}", "one two three four five six") for i in range(40)])
AFTER_NOISE = ("noise was drawn", "privacy spent", "spent by this run")


def _run(argv: list[str]) -> tuple[int, str, str]:
    """``cli.main`` on a ledger of its own (the examples release the same words again and again, which the ledger
    rightly refuses as an identical request)."""
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as ledger, pytest.MonkeyPatch.context() as mp:
        mp.setenv("DPSU_LEDGER", str(Path(ledger) / "ledger.sqlite"))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a folder or symlink by its kind."""
    tree: dict[str, bytes | str] = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_symlink():
            tree[rel] = "symlink -> " + os.readlink(p)
        elif p.is_dir():
            tree[rel] = "folder"
        else:
            tree[rel] = p.read_bytes()
    return tree


def _refused_before_noise(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpsu: error: "), err
    assert not any(s in err for s in AFTER_NOISE), err
    return lines[0]


def _release(src: Path, *extra: str) -> list[str]:
    return ["release", str(src), "--format", "csv", *MECH, *extra]


@pytest.mark.parametrize("name", DIRECTORY_FILES)
def test_every_tokenizer_file_is_checked_against_the_input(tmp_path, name):
    tok = tmp_path / "tokdir"
    tok.mkdir()
    src = tok / name
    src.write_bytes(GOOD_CSV)
    before = _tree(tmp_path)
    code, _, err = _run(_release(src, "-o", str(tmp_path / "out.csv"), "--export-tokenizer", str(tok)))
    assert "is the input itself" in _refused_before_noise(code, err)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("name", DIRECTORY_FILES)
def test_every_tokenizer_file_is_checked_against_the_public_corpus(tmp_path, name):
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    tok = tmp_path / "tokdir"
    tok.mkdir()
    (tok / name).write_bytes(PUBLIC_CSV)
    before = _tree(tmp_path)
    argv = ["release", str(src), "-m", "gw-kt", "-e", "4", "-d", "1e-6", "-o", str(tmp_path / "out.csv")]
    argv += ["--public-corpus", str(tok / name), "--public-format", "csv", "--export-tokenizer", str(tok)]
    code, _, err = _run(argv)
    assert "is the public corpus itself" in _refused_before_noise(code, err)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("flag", ["-o", "--report"])
@pytest.mark.parametrize("name", DIRECTORY_FILES)
def test_no_other_output_is_a_file_of_the_tokenizer_folder(tmp_path, flag, name):
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    (tmp_path / "tokdir").mkdir()
    outs = {"-o": str(tmp_path / "out.csv"), flag: str(tmp_path / "tokdir" / name)}
    argv = _release(src, *[x for kv in outs.items() for x in kv], "--export-tokenizer", str(tmp_path / "tokdir"))
    before = _tree(tmp_path)
    code, _, err = _run(argv)
    assert "are the same file" in _refused_before_noise(code, err)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("flag", ["-o", "--report"])
def test_a_new_folder_named_by_two_flags_is_refused_before_the_noise(tmp_path, flag):
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    outs = {"-o": str(tmp_path / "out.csv"), flag: str(tmp_path / "tokdir")}
    argv = _release(src, *[x for kv in outs.items() for x in kv], "--export-tokenizer", str(tmp_path / "tokdir"))
    code, _, err = _run(argv)
    assert f"{flag} " in (line := _refused_before_noise(code, err)) and "is the folder --export-tokenizer" in line
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]


def test_a_dangling_symlink_as_the_tokenizer_folder_is_refused_before_the_noise(tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    (tmp_path / "tokdir").symlink_to(tmp_path / "missing")
    code, _, err = _run(_release(src, "-o", str(tmp_path / "out.csv"), "--export-tokenizer", str(tmp_path / "tokdir")))
    assert "symbolic link to a missing folder" in _refused_before_noise(code, err)
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "tokdir"] and not (tmp_path / "missing").exists()


def test_a_new_tokenizer_folder_is_made_with_every_file(tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    code, _, err = _run(_release(src, "-o", str(tmp_path / "out.csv"), "--export-tokenizer", str(tmp_path / "tok")))
    assert code == 0, err
    assert sorted(os.listdir(tmp_path / "tok")) == sorted(DIRECTORY_FILES)


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["-o", ""], "-o is empty"),
        (["-o", "OUT", "--export-tokenizer", ""], "--export-tokenizer is empty"),
        (["-o", "OUT", "--report", ""], "--report is empty"),
        (["-o", "-"], "-o -: standard output is not an output here"),
        (["-o", "OUT", "--report", "-"], "--report -: standard output"),
        (["-o", "OUT", "--export-tokenizer", "-"], "--export-tokenizer -: standard output"),
    ],
)
def test_empty_and_dash_paths_are_refused_in_one_line(tmp_path, flags, says, monkeypatch):
    """'' would write into the current folder and '-' a file named '-': both refused before anything is read; a
    file named '-' is still ./- (standard output is not an output: every output is written whole or not at all)."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    argv = _release(src, *[str(tmp_path / "out.csv") if f == "OUT" else f for f in flags])
    code, out, err = _run(argv)
    assert says in _refused_before_noise(code, err) and out == ""
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]
    code, _, err = _run(_release(src, "-o", "./-"))
    assert code == 0 and next(csv.reader((tmp_path / "-").open(encoding="utf-8"))) == ["item", "n"], err


# ---- the property ---------------------------------------------------------------------------------------------
TOK = "tok"
TOK_FILES = tuple(f"{TOK}/{name}" for name in DIRECTORY_FILES)
NAMES = ("in.csv", "pub.csv", "out.csv", "rep.json", "rep.md", "tok.json", TOK, *TOK_FILES)


def _whole(path: Path, kind: str) -> None:
    """An output is whole: it parses as what it is."""
    if kind == "csv":
        rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
        assert rows[0] == ["item", "n"] and all(len(r) == 2 for r in rows)
    elif kind == "md":
        text = path.read_text(encoding="utf-8")
        assert text.startswith("#") and text.rstrip().endswith(".")
    else:
        json.loads(path.read_bytes())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    src=st.sampled_from(("in.csv", *TOK_FILES)),
    public=st.none() | st.sampled_from(NAMES),
    output=st.sampled_from(NAMES),
    report=st.none() | st.sampled_from(NAMES),
    tokenizer=st.none() | st.sampled_from(NAMES),
    tok_exists=st.booleans(),
)
def test_outputs_never_touch_an_input_nor_each_other(src, public, output, report, tokenizer, tok_exists):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if tok_exists or any(n is not None and n.startswith(TOK + "/") for n in (src, public)):
            (d / TOK).mkdir()
        (d / src).write_bytes(GOOD_CSV)
        if public not in (None, src, TOK):  # the folder as the public corpus: refused as unreadable
            (d / public).write_bytes(PUBLIC_CSV)
        inputs = {p: (d / p).read_bytes() for p in (src, public) if p is not None and (d / p).is_file()}
        before = _tree(d)
        mech = ["-m", "gw-kt", "-e", "4", "-d", "1e-6"] if public is not None else list(MECH)
        argv = ["release", str(d / src), "--format", "csv", *mech, "-o", str(d / output)]
        if public is not None:
            argv += ["--public-corpus", str(d / public), "--public-format", "csv"]
        if report is not None:
            argv += ["--report", str(d / report)]
        if tokenizer is not None:
            argv += ["--export-tokenizer", str(d / tokenizer)]
        code, _, err = _run(argv)
        for p, body in inputs.items():
            assert (d / p).read_bytes() == body, f"input {p} changed: {argv}"
        if code != 0:
            event("refused: " + _refused_before_noise(code, err).split(" ")[2])
            assert _tree(d) == before, argv
            return
        event("written")
        _whole(d / output, "csv")
        if report is not None:
            _whole(d / report, "md" if report.endswith(".md") else "json")
        if tokenizer is not None:
            files = [d / tokenizer] if tokenizer.endswith(".json") else [d / tokenizer / n for n in DIRECTORY_FILES]
            for f in files:
                _whole(f, "json")
