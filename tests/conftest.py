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
