"""The ledger store's backends, real: a SQLite file in a tmp folder, and a PostgreSQL database.

PostgreSQL: the server at ``$DPSU_TEST_POSTGRES`` (a URL whose role may create databases), else a throwaway cluster
started here on 127.0.0.1 (``initdb`` + ``pg_ctl``, as an unprivileged user when the tests run as root: the
``postgres`` user, or a system user ``dpsu-pg`` created for it) and stopped at the end. Each test gets a fresh
database. Without either, the PostgreSQL cases are skipped with the reason (``.ci/run`` installs the server).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

BACKENDS = ["sqlite", "postgresql"]


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_user() -> str | None:
    """The unprivileged user the server runs as (None: this one, when it is not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "dpsu-pg"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            pass
    subprocess.run(["useradd", "-r", "-M", "-s", "/usr/sbin/nologin", "dpsu-pg"], check=True)
    return "dpsu-pg"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A URL of a PostgreSQL server (its ``postgres`` database) where the tests may create databases."""
    given = os.environ.get("DPSU_TEST_POSTGRES")
    if given:
        yield given
        return
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("no PostgreSQL: set DPSU_TEST_POSTGRES or install Debian's postgresql (.ci/run does)")
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="dpsu-pg-"))
    data, log = root / "data", root / "server.log"
    if user is not None:
        shutil.chown(root, user)
    as_user = ["runuser", "-u", user, "--"] if user is not None else []
    port = _free_port()
    subprocess.run(
        [*as_user, initdb, "-D", str(data), "-U", "dpsu", "--auth=trust", "-E", "UTF8", "--no-sync"],
        check=True,
        capture_output=True,
    )
    opts = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=60"
    subprocess.run([*as_user, pg_ctl, "-D", str(data), "-l", str(log), "-o", opts, "-w", "start"], check=True,
                   capture_output=True)  # fmt: skip
    try:
        yield f"postgresql://dpsu@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server: str) -> str:
    """A new, empty database on the server, as a URL."""
    import psycopg

    name = f"dpsu_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path) -> str:
    """A fresh ledger location on each backend: a SQLite file path, or a postgresql:// URL of a new database."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.sqlite")
    return fresh_database(request.getfixturevalue("postgres_server"))
