"""The benchmark runner: missing data is refused up front, a failing section never overwrites results."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import run as bench

COMMITTED = {"sections": {"tiny": {"answer": -1}, "broken": {"answer": 7}}, "updated": "then"}


def _committed(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(COMMITTED))
    return path


def test_missing_data_exits_2_with_one_clear_line_and_writes_nothing(tmp_path, capsys):
    path = _committed(tmp_path)
    absent = tmp_path / "shared" / "data" / "msnbc990928.zip"
    code = bench.main(
        ["tiny", "msnbc"],
        sections={"tiny": "tests.benchmarks.tiny_section", "msnbc": "benchmarks.bench_msnbc"},
        needs={"msnbc": [absent]},
        out_dir=tmp_path,
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "'msnbc' needs" in err and str(absent) in err and "DPSU_SHARED_DATA" in err
    assert json.loads(path.read_text()) == COMMITTED and not (tmp_path / "RESULTS.md").exists()


def test_a_failing_section_keeps_its_committed_results_and_exits_1(tmp_path, capsys):
    path = _committed(tmp_path)
    sections = {"tiny": "tests.benchmarks.tiny_section", "broken": "tests.benchmarks.no_such_module"}
    code = bench.main(["tiny", "broken"], sections=sections, needs={}, out_dir=tmp_path)
    err = capsys.readouterr().err
    assert code == 1 and "'broken' failed" in err and "ModuleNotFoundError" in err
    written = json.loads(path.read_text())
    assert written["sections"]["broken"] == {"answer": 7}  # untouched, no error in it
    assert written["sections"]["tiny"]["answer"] == 45  # the section that ran is updated
    assert "error" not in json.dumps(written) and "ModuleNotFoundError" not in (tmp_path / "RESULTS.md").read_text()

    path.write_text(json.dumps(COMMITTED))
    assert bench.main(["broken"], sections=sections, needs={}, out_dir=tmp_path) == 1
    assert json.loads(path.read_text()) == COMMITTED  # nothing succeeded: nothing written


def test_the_real_sections_that_need_the_shared_data_say_so():
    assert set(bench.NEEDS) <= set(bench.SECTIONS)
    for name, module in bench.SECTIONS.items():  # a section that reads MSNBC declares it
        source = Path(bench.HERE.parent, *module.split(".")).with_suffix(".py").read_text()
        assert ("MSNBC" in source) == (bench.MSNBC in bench.NEEDS.get(name, [])), name
