"""A throwaway PostgreSQL cluster on 127.0.0.1 (initdb + pg_ctl in a tmp folder, as an unprivileged user when run
as root: the ``postgres`` user, or a system user ``dpsu-pg`` created for it), for the store's tests and benchmark."""

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
from contextlib import contextmanager
from pathlib import Path


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def available() -> bool:
    return _pg_bin("initdb") is not None and _pg_bin("pg_ctl") is not None


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


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Start a cluster; yield the URL of its ``postgres`` database (role ``dpsu``, trusted on 127.0.0.1 only);
    stop it and delete its folder at the end."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    assert initdb is not None and pg_ctl is not None, "no initdb/pg_ctl: install Debian's postgresql"
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="dpsu-pg-"))  # under /tmp: the server's user can reach it
    data, log = root / "data", root / "server.log"
    if user is not None:
        shutil.chown(root, user)
    as_user = ["runuser", "-u", user, "--"] if user is not None else []
    port = _free_port()
    try:
        subprocess.run(
            [*as_user, initdb, "-D", str(data), "-U", "dpsu", "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
        )
        opts = f"-h 127.0.0.1 -p {port} -k {root} -c max_connections=60"
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-l", str(log), "-o", opts, "-w", "start"], check=True,
                       capture_output=True)  # fmt: skip
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
