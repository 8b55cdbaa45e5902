"""GW-KT's --public-corpus checked by content in the CLI on the Spark engine (issue 27.1): a copy of the private input
is refused in one line with exit status 2 and nothing written also when the input is a folder of part files (checked
in the executors' own pass over the parts, by the posts' hashes, before anything is tokenized or released). Moved
here from tests/core/test_overlap_cli.py because it starts a JVM."""

from __future__ import annotations

import pytest

from dpsu_core.interfaces.cli import main
from tests.core.overlap_files import private_rows, write_all

RELEASE = ["-m", "gw-kt", "-e", "1", "-d", "1e-6"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("overlap_cli_spark"), private_rows())


def test_a_copy_is_refused_when_the_input_is_a_folder_for_spark(files, tmp_path, capsys):
    pytest.importorskip("pyspark")
    out = tmp_path / "o.csv"
    argv = ["release", files["private_parts.csv"], *RELEASE, "--engine", "spark", "--format", "csv"]
    code = main([str(a) for a in [*argv, "--public-corpus", files["shuffled.csv"], "-o", out]])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    (line,) = err.strip().splitlines()
    assert "--public-corpus shuffled.csv: 100.0% of its distinct posts (3,000 of 3,000)" in line
