"""GW-KT's --public-corpus checked by content in the CLI (issue 27.1): the copies of the private input that a byte
comparison lets through are refused in one line with exit status 2 and nothing written (by the users' token sets,
issue 36.2, on the local engine; the Spark engine's case, which starts a JVM, is in
tests/spark/test_overlap_cli_spark.py); a file sharing 5% of its posts is used with a warning giving the figure."""

from __future__ import annotations

import pytest

from dpsu_core.interfaces.cli import main
from tests.core.overlap_files import private_rows, write_all

RELEASE = ["-m", "gw-kt", "-e", "1", "-d", "1e-6"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("overlap_cli"), private_rows())


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", ["lf.csv", "shuffled.csv", "one_more.csv", "same.jsonl"])
def test_a_copy_of_the_input_is_refused_as_gwkts_public_corpus(files, name, tmp_path, capsys):
    out = tmp_path / "o.csv"
    argv = ["release", files["private.csv"], *RELEASE, "--public-corpus", files[name], "-o", out]
    code, _, err = _run(argv, capsys)
    assert code == 2 and not out.exists()
    (line,) = err.strip().splitlines()
    # the local engine reads both files into corpora: its users' token sets say it first (``fingerprint``)
    assert line.startswith(f"dpsu: error: --public-corpus {name}: this file is the private corpus, by its users'")
    share = line.split("after tokenizing: ")[1].split("%")[0]
    assert float(share) >= 90 and "% of its users' words are in this file" in line and "PUBLIC" in line


def test_a_file_sharing_five_percent_is_used_with_the_figure(files, tmp_path, capsys):
    out = tmp_path / "o.csv"
    argv = ["release", files["private.csv"], *RELEASE, "--public-corpus", files["five.csv"], "-o", out]
    code, stdout, err = _run(argv, capsys)
    assert code == 0 and out.exists() and stdout.startswith("released ")
    (warning,) = [x for x in err.splitlines() if "--public-corpus five.csv" in x]
    assert warning.startswith("warning (raw data, not private)")
    assert "5.0% of its distinct posts (100 of 2,000) and 0 of its (user, post) pairs" in warning
