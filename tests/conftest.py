"""Test-wide settings: calibrations are kept in a fresh folder per test session, never the user's cache."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_calibration_cache(tmp_path_factory):
    old = os.environ.get("DPSU_CACHE_DIR")
    os.environ["DPSU_CACHE_DIR"] = str(tmp_path_factory.mktemp("dpsu-cache"))
    yield
    if old is None:
        os.environ.pop("DPSU_CACHE_DIR", None)
    else:
        os.environ["DPSU_CACHE_DIR"] = old


@pytest.fixture(autouse=True)
def _private_ledger(tmp_path_factory, monkeypatch):
    """Every test spends on a durable ledger of its own (an SQLite file in a fresh folder), never the user's; a
    corpus nobody registered gets a cap large enough for the suite's many releases (the cap tests register their
    corpora with the caps they test)."""
    monkeypatch.setenv("DPSU_LEDGER", str(tmp_path_factory.mktemp("ledger") / "ledger.sqlite"))
    monkeypatch.setenv("DPSU_DEFAULT_CAP", "1e6,0.5")
