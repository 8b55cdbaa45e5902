"""export.check_output_paths and export.atomic_write: outputs never overwrite inputs or each other,
and a file appears whole or not at all. The CLI flow is covered by tests/hostile."""

from __future__ import annotations

import os

import pytest

from dpsu_core import cli
from dpsu_core.errors import OutputError
from dpsu_core.export import atomic_write, check_output_paths

CSV = "author,body\n" + "".join(f"u{i},alpha beta gamma delta\n" for i in range(80))


def test_outputs_that_are_inputs_are_refused(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text(CSV)
    (tmp_path / "d").mkdir()
    os.link(src, tmp_path / "hard.csv")
    (tmp_path / "soft.csv").symlink_to(src)
    spellings = [src, tmp_path / "d" / ".." / "in.csv", tmp_path / "hard.csv", tmp_path / "soft.csv"]
    for out in spellings:
        with pytest.raises(OutputError, match="is the input itself"):
            check_output_paths({"-o": out}, {"the input": src})
        with pytest.raises(OutputError, match="is the public corpus itself"):
            check_output_paths({"--report": out}, {"the input": tmp_path / "x.csv", "the public corpus": src})
    with pytest.raises(OutputError, match="are the same file"):
        check_output_paths({"-o": tmp_path / "a.csv", "--report": tmp_path / "d" / ".." / "a.csv"}, {"the input": src})
    check_output_paths({"-o": tmp_path / "new.csv", "--report": None}, {"the input": src, "the public corpus": None})


def test_output_folder_checked(tmp_path):
    with pytest.raises(OutputError, match="does not exist"):
        check_output_paths({"-o": tmp_path / "nope" / "o.csv"}, {})
    with pytest.raises(OutputError, match="is a folder"):
        check_output_paths({"-o": tmp_path}, {})
    with pytest.raises(OutputError, match="not a regular file"):
        check_output_paths({"-o": "/dev/null"}, {})


def test_atomic_write_replaces_whole_and_cleans_up(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"old")
    atomic_write(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temporary file left
    mode = os.stat(target).st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # an ordinary new file, not mkstemp's 0600


def test_atomic_write_failure_leaves_nothing_half_written(tmp_path):
    blocker = tmp_path / "out.csv"
    blocker.mkdir()
    (blocker / "keep").write_text("x")  # os.replace onto a non-empty folder fails after the data is written
    with pytest.raises(OutputError, match="cannot write"):
        atomic_write(blocker, b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
    assert (blocker / "keep").read_text() == "x"


def test_cli_refuses_before_reading_the_corpus(tmp_path, capsys):
    """A clobbering -o is refused even when the input could not be read at all: the check comes first."""
    src = tmp_path / "in.csv"
    src.write_bytes(b"\x00" * 100)  # unreadable as a corpus: if the corpus were read first, that error would show
    code = cli.main(["release", str(src), "-m", "policy-gaussian", "-e", "1", "-d", "1e-6", "-o", str(src)])
    err = capsys.readouterr().err
    assert code == 2 and "is the input itself" in err and err.count("\n") == 1
    assert src.read_bytes() == b"\x00" * 100


def test_cli_writes_release_and_report(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text(CSV)
    out, rep = tmp_path / "o.csv", tmp_path / "r.md"
    code = cli.main(
        ["release", str(src), "-m", "policy-gaussian", "-e", "4", "-d", "1e-6", "-o", str(out), "--report", str(rep)]
    )
    assert code == 0, capsys.readouterr().err
    assert out.read_text().startswith('"item","n"') and rep.read_text().startswith("# dpsu release report")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "o.csv", "r.md"]
