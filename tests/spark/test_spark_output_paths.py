"""With ``--engine spark`` every file a run writes is checked against the input's parts, folder and pattern, each
file of a tokenizer folder too (issue 38, item 1, on the Spark path): the real CLI, refused before Spark starts."""

from __future__ import annotations

import contextlib
import io
import os

import pytest

from dpsu_core.interfaces import cli
from dpsu_core.outputs.tokenizer_export import DIRECTORY_FILES
from tests.hostile.generate import GOOD_CSV, MECH


def _tree(folder):
    return sorted((str(p.relative_to(folder)), p.read_bytes() if p.is_file() else b"") for p in folder.rglob("*"))


@pytest.mark.parametrize("where", ["the input folder", "a folder inside it", "a part's name as the folder"])
def test_a_tokenizer_folder_in_the_input_folder_is_refused_before_spark_starts(tmp_path, where):
    d = tmp_path / "in"
    d.mkdir()
    (d / "part-0.csv").write_bytes(GOOD_CSV)
    tok = {"the input folder": d, "a folder inside it": d / "tok", "a part's name as the folder": d / "part-1"}[where]
    before = _tree(tmp_path)
    argv = ["release", str(d), *MECH, "-o", str(tmp_path / "o.csv"), "--export-tokenizer", str(tok)]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main([*argv, "--engine", "spark"])
    lines = err.getvalue().strip().splitlines()
    assert code == 2 and len(lines) == 1, err.getvalue()
    assert "--export-tokenizer" in lines[0] and "inside the input folder" in lines[0]
    assert any(name in lines[0] for name in DIRECTORY_FILES)
    assert _tree(tmp_path) == before and not os.path.exists(tmp_path / "o.csv")
