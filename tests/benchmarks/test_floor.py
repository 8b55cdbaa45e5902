"""The floor benchmark's arithmetic: dpsu's --timings line read back, ratios taken pair by pair (issue 20).
The figures themselves come from ``python -m benchmarks.run floor``, not from tests."""

from __future__ import annotations

import sys

from benchmarks import bench_floor, floor
from benchmarks import run as bench


def test_phases_are_read_from_the_timings_line():
    err = "note: x\ntimings (s): start-up 0.310, read 1.200, tokenize 0.400; total 2.500\nprivacy spent"
    assert bench_floor.phases(err) == {"start-up": 0.31, "read": 1.2, "tokenize": 0.4, "total": 2.5}
    assert bench_floor.phases("no timings here") == {}


def test_pairs_alternate_and_the_ratio_is_the_median_of_per_pair_ratios(monkeypatch):
    calls, walls = [], iter([2.0, 1.0, 3.0, 1.0, 9.0, 1.0, 5.0, 2.0])
    cpus = iter([1.0, 1.0, 4.0, 2.0, 3.0, 3.0, 6.0, 1.0])

    def fake(argv, keep_stderr=False):
        calls.append(argv[0])
        res = {"wall_s": next(walls), "cpu_s": next(cpus), "peak_rss_mb": 10.0, "load_avg_before": 0.5}
        return {**res, "stderr": ""} if keep_stderr else res

    monkeypatch.setattr(bench_floor, "measure", fake)
    res = bench_floor.paired(["A"], ["B"], runs=3, warmup=1)
    assert calls == ["A", "B"] * 4  # the warm-up pair, then A B A B A B
    assert res["ratios"] == [3.0, 9.0, 2.5] and res["ratio_median"] == 3.0
    assert res["cpu_ratio_median"] == 2.0  # per pair 2.0, 1.0, 6.0: the CPU seconds' own median
    assert res["a"]["wall_s_median"] == 5.0 and res["b"]["wall_s_median"] == 1.0


def test_the_floor_reads_lowers_and_splits(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("user,text\nu1,Hello  World\nu2,ΔΈΛΤΑ a\n", encoding="utf-8")
    assert floor.floor(str(path)) == 5  # "hello", "", "world", "δέλτα", "a"


def test_floor_sections_are_registered_and_the_10m_point_is_opt_in():
    assert bench.SECTIONS["floor"] == "benchmarks.bench_floor" and "floor" not in bench.OPT_IN
    assert "floor_10m" in bench.OPT_IN
    assert bench_floor._dpsu("f.csv", "o.csv")[:3] == [sys.executable, "-m", "dpsu_core.interfaces.cli"]


def test_the_start_up_probe_runs_a_cached_kernel():
    import subprocess

    out = subprocess.run([sys.executable, "-m", "benchmarks.numba_start"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "2", out.stderr


def test_fixed_costs_pair_both_probes_against_the_floor_on_the_same_file(monkeypatch, tmp_path):
    seen = []
    walls = iter([0.7, 0.5, 0.9, 0.5] * 10)

    def fake(argv, keep_stderr=False):
        seen.append(argv)
        res = {"wall_s": next(walls), "cpu_s": 1.0, "peak_rss_mb": 10.0, "load_avg_before": 0.5}
        return {**res, "stderr": ""} if keep_stderr else res

    monkeypatch.setattr(bench_floor, "measure", fake)
    monkeypatch.setattr(bench_floor, "CACHE", tmp_path)
    monkeypatch.setattr(bench_floor, "corpus_file", lambda n: tmp_path / f"synthetic_{n}.csv")
    probes = bench_floor.start_vs_floor(tmp_path / "big.csv", runs=1)
    assert set(probes) == {"numba_start", "dpsu_2000_users"}
    floors = [a for a in seen if a[2] == "benchmarks.floor"]
    assert floors and all(a[3] == str(tmp_path / "big.csv") for a in floors)  # every pair: the same floor file
    assert any(str(tmp_path / "synthetic_2000.csv") in a for a in seen)  # the small release
    assert probes["numba_start"]["ratios"] == [1.8]  # 0.9 / 0.5: the warm-up pair (0.7, 0.5) is not counted
