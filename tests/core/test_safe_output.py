"""outputs.check_output_paths, outputs.OutputSet and export.atomic_write: outputs never overwrite inputs or each
other, a file appears whole or not at all, and the files of one run appear together or not at all. The CLI
flow under a read-only folder and a full disk is in tests/hostile/test_half_drawn.py."""

from __future__ import annotations

import os

import pytest

from dpsu_core.errors import OutputCommitError, OutputError
from dpsu_core.interfaces import cli, release_command
from dpsu_core.outputs.export import atomic_write, check_output_paths
from dpsu_core.outputs.writer import OutputSet, write_together
from tests.hostile.readonly import read_only_folder

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
    with pytest.raises(OutputError, match="cannot write '(…)?[^']*/out.csv' .*no output was written"):
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


def _names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_output_set_writes_every_file_together(tmp_path):
    (tmp_path / "b.json").write_bytes(b"old b")
    sub = tmp_path / "sub"
    sub.mkdir()
    with OutputSet() as out:
        out.stage("-o", tmp_path / "a.csv", b"A" * 5000)
        out.stage("--report", tmp_path / "b.json", b"B")
        out.stage("--export-tokenizer", sub / "t.json", b"T")
        # staged: hidden temporaries, the targets untouched...
        assert [n for n in _names(tmp_path) if not n.endswith(".tmp")] == ["b.json", "sub"]
        assert len(list(tmp_path.glob(".*.tmp"))) == 2 and (tmp_path / "b.json").read_bytes() == b"old b"
        out.commit()
    assert (tmp_path / "a.csv").read_bytes() == b"A" * 5000 and (tmp_path / "b.json").read_bytes() == b"B"
    assert _names(tmp_path) == ["a.csv", "b.json", "sub"] and _names(sub) == ["t.json"]  # ...and gone


def test_output_set_without_commit_leaves_nothing(tmp_path):
    (tmp_path / "b.json").write_bytes(b"old b")
    with pytest.raises(RuntimeError, match="boom"), OutputSet() as out:
        out.stage("-o", tmp_path / "a.csv", b"A")
        out.stage("--report", tmp_path / "b.json", b"B")
        raise RuntimeError("boom")  # e.g. the report failed to render: nothing is written
    assert _names(tmp_path) == ["b.json"] and (tmp_path / "b.json").read_bytes() == b"old b"


def test_a_failed_stage_removes_the_files_staged_before_it(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    (tmp_path / "a.csv").write_bytes(b"old a")
    with read_only_folder(ro):
        with pytest.raises(
            OutputError, match=r"cannot write --report '(…)?[^']*/r.json' \(.+\); no output was written"
        ):
            write_together([("-o", tmp_path / "a.csv", b"new a"), ("--report", ro / "r.json", b"R")])
        assert _names(ro) == []
    assert _names(tmp_path) == ["a.csv", "ro"] and (tmp_path / "a.csv").read_bytes() == b"old a"


@pytest.mark.parametrize("existed", [True, False])
def test_a_failed_rename_puts_back_the_files_renamed_before_it(tmp_path, existed):
    """The second rename fails (its target became a non-empty folder after staging): the first target is put
    back as it was (or removed if it is new), and the error says an output was in place for a moment."""
    first, second = tmp_path / "a.csv", tmp_path / "r.json"
    if existed:
        first.write_bytes(b"old a")
    out = OutputSet()
    out.stage("-o", first, b"new a")
    out.stage("--report", second, b"R")
    second.mkdir()
    (second / "keep").write_text("x")
    with pytest.raises(OutputCommitError, match="cannot write --report '(…)?[^']*/r.json'.*every file is as it was"):
        out.commit()
    assert not out.committed
    assert (first.read_bytes() == b"old a") if existed else not first.exists()
    assert _names(tmp_path) == (["a.csv", "r.json"] if existed else ["r.json"])  # no temporary or backup left
    assert _names(second) == ["keep"]


def test_a_failed_first_rename_is_not_a_commit_error(tmp_path):
    blocker = tmp_path / "a.csv"
    out = OutputSet()
    out.stage("-o", blocker, b"A")
    out.stage("--report", tmp_path / "r.json", b"R")
    blocker.mkdir()
    (blocker / "keep").write_text("x")
    with pytest.raises(OutputError) as info:
        out.commit()
    assert not isinstance(info.value, OutputCommitError)  # nothing was ever in place
    assert _names(tmp_path) == ["a.csv"]


def test_a_symlinked_output_is_replaced_by_a_file_and_put_back_as_the_link(tmp_path):
    target = tmp_path / "elsewhere.csv"
    target.write_bytes(b"elsewhere")
    link = tmp_path / "o.csv"
    link.symlink_to(target.name)
    out = OutputSet()
    out.stage("-o", link, b"new")
    out.stage("--report", tmp_path / "r.json", b"R")
    (tmp_path / "r.json").mkdir()
    (tmp_path / "r.json" / "keep").write_text("x")
    with pytest.raises(OutputCommitError):
        out.commit()
    assert link.is_symlink() and link.read_bytes() == b"elsewhere" and target.read_bytes() == b"elsewhere"


def test_read_only_folder_is_refused_before_anything(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    with read_only_folder(ro):
        with pytest.raises(OutputError, match="the folder of --report '(…)?[^']*/r.json' is not writable"):
            check_output_paths({"-o": tmp_path / "o.csv", "--report": ro / "r.json"}, {})
        assert _names(ro) == []
    assert _names(tmp_path) == ["ro"]  # the probe file is gone


def test_the_cli_says_what_a_failed_write_after_the_noise_means(tmp_path):
    """A failure while writing: nothing was published (say so); a failure part way through the renames: an
    output was in place, so the release counts as spent (say what it spent)."""
    from dpsu_core.mechanisms import get_mechanism

    cal = get_mechanism("policy-gaussian", epsilon=4, delta=1e-6).calibrate()
    with pytest.raises(OutputError, match="no output was written.*the noise was drawn, but nothing of this release"):
        with release_command.after_noise(cal):
            write_together([("-o", tmp_path / "missing" / "o.csv", b"x")])
    out = OutputSet()
    out.stage("-o", tmp_path / "o.csv", b"new")
    out.stage("--report", tmp_path / "r.json", b"R")
    (tmp_path / "r.json").mkdir()
    (tmp_path / "r.json" / "keep").write_text("x")
    with pytest.raises(OutputCommitError) as info, release_command.after_noise(cal):
        out.commit()
    message = str(info.value)
    assert message.startswith("privacy spent by this run: epsilon = 4, delta = 1e-06")
    assert "yet writing the outputs failed: cannot write --report" in message and "\n" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    with pytest.raises(RuntimeError, match="ZeroDivisionError: .*nothing of this release was published"):
        with release_command.after_noise(cal):
            1 / 0  # noqa: B018


def test_the_apps_downloads_are_all_built_or_none_with_the_reason():
    """The app's downloads are built in memory: one that cannot be built (here a released item holding a lone
    surrogate, which UTF-8 cannot encode) fails them all with an error naming it, never a partial set."""
    from dpsu_core.corpus.build import corpus_from_token_lists
    from dpsu_core.mechanisms import get_mechanism
    from dpsu_core.outputs.export import export_files

    mech = get_mechanism("weighted-gaussian", epsilon=8, delta=1e-6)
    good = mech.release(corpus_from_token_lists([["alpha beta"] for _ in range(200)]), seed=1)
    assert [f.kind for f in export_files(good)] == ["csv", "json", "txt", "report_json", "report_md"]
    bad = mech.release(corpus_from_token_lists([["alpha", "b\ud800"] for _ in range(200)]), seed=1)
    assert "\ud800" in bad.items.tolist()
    with pytest.raises(OutputError, match=r"could not build the download Released items \(CSV\) \(UnicodeEncodeError"):
        export_files(bad)
