"""The on-disk calibration cache: a kept sigma is the search's own value, and nothing read back is trusted
(corrupt, foreign, too small or too large entries are recomputed), concurrent writers leave a whole entry."""

from __future__ import annotations

import json

import mpmath as mp
import pytest

from dpsu_core.privacy import calcache
from dpsu_core.privacy.gaussian import _search_sigma, gaussian_delta_exact, gaussian_sigma

EPS, DELTA, SENS = 3.0, 1e-6, 1.0


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPSU_CACHE_DIR", str(tmp_path))
    return tmp_path / "calibrations"


def _search():
    return _search_sigma(EPS, DELTA, SENS)


def _no_search():
    raise AssertionError("the kept value should have been used")


def _entry(cache):
    (path,) = cache.glob("analytic-gaussian-sigma-*.json")
    return path


def test_kept_sigma_is_the_searched_sigma_and_is_read_back(cache):
    first = gaussian_sigma(EPS, DELTA, SENS, _search)
    assert first == _search()
    assert gaussian_sigma(EPS, DELTA, SENS, _no_search) == first
    assert gaussian_delta_exact(first, EPS, SENS) <= mp.mpf(DELTA)


def test_other_parameters_do_not_share_an_entry(cache):
    a = gaussian_sigma(EPS, DELTA, SENS, _search)
    b = gaussian_sigma(EPS, DELTA, 2.0, lambda: _search_sigma(EPS, DELTA, 2.0))
    assert b == _search_sigma(EPS, DELTA, 2.0) != a
    assert len(list(cache.glob("*.json"))) == 2


@pytest.mark.parametrize(
    "text",
    ["", "{", "null", "[]", '{"key": 1}', '{"key": {}, "value": "0x1p+0"}'],
)
def test_unreadable_entries_are_recomputed(cache, text):
    sigma = gaussian_sigma(EPS, DELTA, SENS, _search)
    path = _entry(cache)
    path.write_text(text)
    assert gaussian_sigma(EPS, DELTA, SENS, _search) == sigma
    assert gaussian_sigma(EPS, DELTA, SENS, _no_search) == sigma  # rewritten whole


@pytest.mark.parametrize("factor", [1 - 2.0**-45, 1 - 1e-9, 0.5, 1 + 1e-6, 1e300, 0.0, -1.0])
def test_a_tampered_sigma_is_never_trusted(cache, factor):
    """Too small (even by a few ulp: not private) or needlessly large: the search runs again."""
    sigma = gaussian_sigma(EPS, DELTA, SENS, _search)
    path = _entry(cache)
    entry = json.loads(path.read_text())
    entry["value"] = (sigma * factor).hex()
    path.write_text(json.dumps(entry))
    calls = []

    def counted():
        calls.append(1)
        return _search()

    assert gaussian_sigma(EPS, DELTA, SENS, counted) == sigma
    assert calls == [1]


def test_an_entry_for_other_inputs_is_not_used(cache):
    """An entry whose stored inputs differ from the ones asked for (a clash, an edit) misses."""
    sigma = gaussian_sigma(EPS, DELTA, SENS, _search)
    path = _entry(cache)
    entry = json.loads(path.read_text())
    entry["key"]["inputs"]["delta"] = (DELTA * 2).hex()
    path.write_text(json.dumps(entry))
    assert gaussian_sigma(EPS, DELTA, SENS, _search) == sigma
    assert json.loads(path.read_text())["key"]["inputs"]["delta"] == DELTA.hex()


def test_an_unwritable_cache_folder_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("DPSU_CACHE_DIR", str(blocker))
    assert gaussian_sigma(EPS, DELTA, SENS, _search) == _search()


def _sigma_in_a_process(folder: str) -> float:
    import os

    os.environ["DPSU_CACHE_DIR"] = folder
    return gaussian_sigma(EPS, DELTA, SENS, _search)


def test_concurrent_runs_leave_one_whole_entry(cache, plain_main):
    """Processes (not threads: mpmath's precision is process-wide) searching and writing the same entry."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.map_async(_sigma_in_a_process, [str(cache.parent)] * 4).get(timeout=300)
    assert len(set(results)) == 1
    assert [p.name for p in cache.iterdir()] == [_entry(cache).name]  # no temporary file left
    assert gaussian_sigma(EPS, DELTA, SENS, _no_search) == results[0]


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("DPSU_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert calcache.cache_dir() == tmp_path / "dpsu" / "calibrations"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert calcache.cache_dir() == tmp_path / "home" / ".cache" / "dpsu" / "calibrations"
    monkeypatch.setenv("DPSU_CACHE_DIR", str(tmp_path / "mine"))
    assert calcache.cache_dir() == tmp_path / "mine" / "calibrations"
