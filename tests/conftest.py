"""Test-wide settings: calibrations are kept in a fresh folder per test session, never the user's cache."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from tests.accounting import pg

# The per-user data folder of the suite and of every process it starts, set when this file is imported (before any
# test module copies the environment): a ledger opened with no DPSU_LEDGER lands in a throwaway folder, never in the
# user's own store. The fixtures below give each test a ledger of its own on top.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="dpsu-test-data-")


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


@pytest.fixture(autouse=True, scope="module")
def _module_ledger(tmp_path_factory):
    """A durable ledger for each test module, set before the module's own module-scoped fixtures start an app, a
    server or a release (those start before a test's own ``_private_ledger``): two modules releasing the same words
    with the same settings never meet as an identical request, and nothing reaches the user's per-user store."""
    old = {k: os.environ.get(k) for k in ("DPSU_LEDGER", "DPSU_DEFAULT_CAP")}
    os.environ["DPSU_LEDGER"] = str(tmp_path_factory.mktemp("module-ledger") / "ledger.sqlite")
    os.environ["DPSU_DEFAULT_CAP"] = "1e6,0.5"
    yield
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A URL of a PostgreSQL server (its ``postgres`` database) where the tests may create databases."""
    given = os.environ.get("DPSU_TEST_POSTGRES")
    if given:
        yield given
        return
    if not pg.available():
        pytest.skip("no PostgreSQL: set DPSU_TEST_POSTGRES or install Debian's postgresql (.ci/run does)")
    with pg.throwaway_cluster() as url:
        yield url


@pytest.fixture
def plain_main(monkeypatch):
    """A test that starts processes with ``spawn`` or ``forkserver``: those run the parent's ``__main__`` file again
    in each child, and an app test earlier on this worker may have left ``app.py`` there (a Streamlit script
    whose page links fail outside a server, so every child died at start and a pool waited for ever)."""
    import sys

    main = sys.modules["__main__"]
    if getattr(main, "__file__", None):
        monkeypatch.delattr(main, "__file__")
