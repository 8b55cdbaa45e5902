"""The two databases behind the ledger store, one SQL text for both: a tiny adapter, not dialect switches.

``Db`` runs the store's SQL (``?`` placeholders) on SQLite (standard library ``sqlite3``) or PostgreSQL (psycopg 3),
with explicit transactions: ``BEGIN IMMEDIATE`` on SQLite (the write lock is taken before the first read, so a
check-then-charge cannot interleave), ``BEGIN`` plus a ``SELECT ... FOR UPDATE`` of the corpus row on PostgreSQL
(``Db.for_update``). The schema is versioned (``meta.schema_version``) and upgraded here at open, in order, all steps
in one transaction; each version's statements (``DDL_V1``, ``DDL_V2``, ...) are kept so the upgrade from every earlier
version stays tested. A step is SQL text, or a function of the ``Db`` for a step that moves data.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import InputError, ParameterError, short_path

SCHEMA_VERSION = 3
BUSY_TIMEOUT_MS = 60_000  # how long a charge waits for another process's transaction before it gives up
_SCHEMA_LOCK = 0x64707375  # PostgreSQL advisory-lock key serialising schema creation ("dpsu")

# column types per backend: the DDL names them {pk}, {blob} and {real}
_TYPES = {
    "sqlite": {"pk": "INTEGER PRIMARY KEY AUTOINCREMENT", "blob": "BLOB", "real": "REAL"},
    "postgresql": {"pk": "BIGSERIAL PRIMARY KEY", "blob": "BYTEA", "real": "DOUBLE PRECISION"},
}

#: version 1: corpora, the hash-chained entries (spends and cap changes), refusals and settings
DDL_V1 = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS corpora (
        id {pk}, name TEXT NOT NULL UNIQUE, epsilon_cap {real} NOT NULL, delta_cap {real} NOT NULL,
        fingerprint {blob} NOT NULL, users_hash TEXT NOT NULL, created_utc TEXT NOT NULL, created_by TEXT NOT NULL,
        head_hash TEXT NOT NULL, chain_length INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS entries (
        seq {pk}, corpus_id INTEGER NOT NULL REFERENCES corpora(id), kind TEXT NOT NULL, charge_id TEXT NOT NULL,
        time_utc TEXT NOT NULL, actor TEXT NOT NULL, tool TEXT NOT NULL, source TEXT NOT NULL,
        mechanism TEXT NOT NULL, label TEXT NOT NULL, epsilon {real} NOT NULL, delta {real} NOT NULL,
        noise TEXT NOT NULL, releases INTEGER NOT NULL, zcdp TEXT, laplace TEXT, teaching INTEGER NOT NULL,
        job TEXT NOT NULL, request_key TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS entries_corpus ON entries (corpus_id, kind)",
    """CREATE TABLE IF NOT EXISTS refusals (
        id {pk}, time_utc TEXT NOT NULL, corpus_id INTEGER NOT NULL, actor TEXT NOT NULL, tool TEXT NOT NULL,
        why TEXT NOT NULL, requested_epsilon {real} NOT NULL, requested_delta {real} NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
]

#: version 1 -> 2: an analyst's own smaller cap, and the kept releases (a download never spends twice)
DDL_V2 = [
    """CREATE TABLE IF NOT EXISTS analyst_caps (
        corpus_id INTEGER NOT NULL REFERENCES corpora(id), analyst TEXT NOT NULL, epsilon_cap {real} NOT NULL,
        delta_cap {real} NOT NULL, PRIMARY KEY (corpus_id, analyst))""",
    """CREATE TABLE IF NOT EXISTS releases (
        id {pk}, charge_id TEXT NOT NULL, corpus_id INTEGER NOT NULL REFERENCES corpora(id),
        request_key TEXT NOT NULL, items TEXT NOT NULL, counts TEXT, calibration TEXT NOT NULL, report TEXT NOT NULL,
        created_utc TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS releases_request ON releases (corpus_id, request_key)",
    "CREATE INDEX IF NOT EXISTS entries_actor ON entries (corpus_id, actor)",
]

#: the name of a kept release's CSV output in ``release_outputs`` (version 2 kept it in its calibration's JSON)
KEPT_CSV = "csv"


def _move_kept_csv(db: Db) -> None:
    """Version 2 kept a release's CSV text as ``calibration["csv"]``: move it to ``release_outputs`` (UTF-8 bytes,
    as written when it was released) and take it out of the calibration."""
    for rid, text in db.execute("SELECT id, calibration FROM releases ORDER BY id"):
        calibration = json.loads(text)
        if not isinstance(calibration, dict) or KEPT_CSV not in calibration:
            continue
        csv_text = calibration.pop(KEPT_CSV)
        db.execute(
            "INSERT INTO release_outputs (release_id, name, data) VALUES (?, ?, ?)",
            (rid, KEPT_CSV, str(csv_text).encode("utf-8")),
        )
        rest = json.dumps(calibration, sort_keys=True, separators=(",", ":"), allow_nan=False)
        db.execute("UPDATE releases SET calibration = ? WHERE id = ?", (rest, rid))


#: version 2 -> 3: a kept release's outputs (the CSV as written) in a table of their own, by name, as bytes
DDL_V3: list[str | Callable[[Db], None]] = [
    """CREATE TABLE IF NOT EXISTS release_outputs (
        release_id INTEGER NOT NULL REFERENCES releases(id), name TEXT NOT NULL, data {blob} NOT NULL,
        PRIMARY KEY (release_id, name))""",
    _move_kept_csv,
]

# version n: the steps taking version n-1 to n
MIGRATIONS: dict[int, Sequence[str | Callable[[Db], None]]] = {1: DDL_V1, 2: DDL_V2, 3: DDL_V3}


def is_url(location: str) -> bool:
    return location.startswith(("postgresql://", "postgres://"))


def default_location() -> Path:
    """The per-user data location of the default SQLite ledger: ``$XDG_DATA_HOME/dpsu/ledger.sqlite`` (default
    ``~/.local/share``), ``~/Library/Application Support/dpsu/`` on macOS, ``%LOCALAPPDATA%\\dpsu\\`` on Windows."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "dpsu" / "ledger.sqlite"


class Db:
    """One connection, in autocommit mode: every transaction is an explicit ``begin()`` ... ``COMMIT``."""

    def __init__(self, kind: str, conn: Any, where: str) -> None:
        self.kind = kind
        self.conn = conn
        self.where = where  # the location, for messages (a URL without its password)
        self.for_update = " FOR UPDATE" if kind == "postgresql" else ""  # SQLite: BEGIN IMMEDIATE already locks

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.kind == "postgresql" else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        cur = self.conn.execute(self._sql(sql), tuple(params))
        rows = cur.fetchall() if cur.description is not None else []
        return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        rows = self.execute(sql, params)
        return rows[0] if rows else None

    @contextmanager
    def transaction(self) -> Iterator[Db]:
        """A write transaction: committed when the block ends, rolled back on any exception."""
        self.conn.execute("BEGIN IMMEDIATE" if self.kind == "sqlite" else "BEGIN")
        try:
            yield self
            self.conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):  # a failed COMMIT leaves the transaction open (SQLite)
                self.conn.execute("ROLLBACK")
            raise

    def ddl(self, statement: str) -> str:
        return statement.format(**_TYPES[self.kind])

    def close(self) -> None:
        self.conn.close()


def connect(location: str, *, upgrade_schema: bool = True) -> Db:
    """A connection to the store at ``location`` (a file path or a ``postgresql://`` URL), its schema created or
    upgraded to ``SCHEMA_VERSION`` (``upgrade_schema`` False: as it is, for audits and tests)."""
    db = _connect_postgres(location) if is_url(location) else _connect_sqlite(location)
    if not upgrade_schema:
        return db
    try:
        upgrade(db)
    except BaseException:
        db.close()
        raise
    return db


def _connect_sqlite(location: str) -> Db:
    path = Path(location).expanduser()
    if path.is_dir():
        raise ParameterError(f"the ledger {short_path(path)} is a folder; give a file path (e.g. ledger.sqlite)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise ParameterError(f"cannot open the ledger {short_path(path)}: {exc}; check the path") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        if isinstance(exc, sqlite3.OperationalError):  # the file is there but cannot be written: disk full, I/O
            raise InputError(
                f"cannot write the ledger {short_path(path)} ({exc}); free some space or give another path"
            ) from None
        raise InputError(f"the ledger {short_path(path)} is not a dpsu ledger ({exc}); give another path") from None
    return Db("sqlite", conn, str(path))


def _connect_postgres(url: str) -> Db:
    try:
        import psycopg
    except ImportError:
        raise ParameterError("a postgresql:// ledger needs the psycopg driver: pip install 'dpsu[team]'") from None
    where = _without_password(url)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise InputError(f"cannot connect to the ledger {where}: {exc}") from None
    return Db("postgresql", conn, where)


def _without_password(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://…"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def schema_version(db: Db) -> int:
    """The store's schema version (0: empty, no meta table)."""
    if db.kind == "sqlite":
        exists = db.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
    else:
        exists = db.one(
            "SELECT 1 FROM information_schema.tables WHERE table_name = 'meta' AND table_schema = current_schema()"
        )
    if exists is None:
        return 0
    row = db.one("SELECT value FROM meta WHERE key = 'schema_version'")
    return int(row[0]) if row else 0


def upgrade(db: Db) -> int:
    """Bring the schema to ``SCHEMA_VERSION``, one version per step (a newer store than this code is refused)."""
    with db.transaction():
        if db.kind == "postgresql":
            db.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
        version = schema_version(db)
        if version > SCHEMA_VERSION:
            raise ParameterError(
                f"the ledger {db.where} has schema version {version}, newer than this dpsu's {SCHEMA_VERSION}: "
                "upgrade dpsu"
            )
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                if callable(statement):
                    statement(db)
                else:
                    db.execute(db.ddl(statement))
        if version < SCHEMA_VERSION:
            db.execute("DELETE FROM meta WHERE key = 'schema_version'")
            db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    return SCHEMA_VERSION
