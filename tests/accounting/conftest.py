"""The ledger store's backends, real: a SQLite file in a tmp folder, and a PostgreSQL database.

PostgreSQL: the server at ``$DPSU_TEST_POSTGRES`` (a URL whose role may create databases), else a throwaway cluster
started here on 127.0.0.1 (``pg.throwaway_cluster``) and stopped at the end. Each test gets a fresh database.
Without either, the PostgreSQL cases are skipped with the reason (``.ci/run`` installs the server).
"""

from __future__ import annotations

import pytest

from tests.accounting import pg

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path) -> str:
    """A fresh ledger location on each backend: a SQLite file path, or a postgresql:// URL of a new database."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.sqlite")
    return pg.fresh_database(request.getfixturevalue("postgres_server"))
