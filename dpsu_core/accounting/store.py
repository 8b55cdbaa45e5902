"""The durable privacy ledger: one account per corpus, shared by the app, the CLI, the API and Spark.

``open_store(location)`` opens it: a SQLite file (the default: ``$DPSU_LEDGER``, else the per-user data location,
``backend.default_location``) or a PostgreSQL server (a ``postgresql://`` URL, for a team; ``pip install
'dpsu[team]'``). A spend is one transaction (``LedgerStore.charge``): the corpus's entries are read, composed with
the new ones by the ledger's own compositions (``ledger.total``) and the spend is refused, or recorded, before any
noise is drawn. SQLite takes its write lock at ``BEGIN IMMEDIATE``; PostgreSQL locks the corpus row (``SELECT ...
FOR UPDATE``). Racing processes or hosts are therefore admitted one at a time, and a process killed after its
charge committed leaves the charge recorded.

Threat model. The ledger binds every release made through dpsu, by any of its tools, on a corpus the store knows
(registered by a custodian, or first charged under its name or fingerprint): its cap cannot be passed by reloading
the app, opening a second tab, using the CLI instead, or racing two processes. It cannot bind someone who holds the
raw file and runs something other than dpsu, nor a corpus changed beyond what the corpus fingerprint recognises
(it is then a new corpus, with the default cap), nor anyone with write access to the store itself: the hash chain
(``chain``) makes an edited, deleted or reordered entry visible to ``dpsu ledger verify``, but whoever can write
the database can also rewrite the whole chain. Keep the store where analysts cannot write it directly (a
PostgreSQL server whose role for the app may only use dpsu's tables, or a file owned by the custodian), and keep
copies of exports (``dpsu ledger export``) elsewhere: a later export whose chain does not extend an earlier one's
shows a rewrite. The store keeps no raw user ids and no posts: a corpus is known by an opaque fingerprint and a
salted hash of its user-id set, both computed by the caller with the store's own key (``LedgerStore.secret``).

Backups. SQLite: ``sqlite3 ledger.sqlite ".backup ledger-copy.sqlite"`` (consistent while dpsu runs; do not copy
the file alone in WAL mode). PostgreSQL: ``pg_dump`` of the database. ``dpsu ledger verify`` checks a restored copy.
"""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import threading
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ..errors import ParameterError
from ..params import OPTIONS
from ..privacy.cost import LaplaceCost, ZcdpCost
from ..privacy.validate import check_delta, check_positive
from . import chain
from .backend import KEPT_CSV, SCHEMA_VERSION, Db, connect, default_location
from .ledger import LedgerEntry, LedgerTotal, total, within
from .records import (
    BudgetRefused,
    Charge,
    Corpus,
    KeptRelease,
    Refusal,
    VerifyResult,
    compact,
    items_csv,
    refusal,
    shown_down,
)

__all__ = [
    "TOOLS",
    "BudgetRefused",
    "Charge",
    "Corpus",
    "KeptRelease",
    "LedgerStore",
    "KEPT_OUTPUTS",
    "Refusal",
    "VerifyResult",
    "compact",
    "items_csv",
    "shown_down",
    "default_location",
    "open_store",
]

TOOLS = ("app", "cli", "api", "spark")
# the cap a corpus nobody registered gets on first use (``set_default_cap`` changes it): ``params.OPTIONS``
DEFAULT_EPSILON_CAP, DEFAULT_DELTA_CAP = float(OPTIONS["cap_epsilon"].default), float(OPTIONS["cap_delta"].default)
MAX_NAME = 200
SPEND, REGISTER, CAP = "spend", "register", "cap"  # the kinds of chained entries
#: the outputs a kept release may hold, by name: only what a release publishes (its items' CSV as written)
KEPT_OUTPUTS = (KEPT_CSV,)

_ENTRY_SELECT = ", ".join(chain.ENTRY_COLUMNS)
_GROUP = "mechanism, label, epsilon, delta, noise, zcdp, laplace, teaching"
_CORPUS_SELECT = "id, name, epsilon_cap, delta_cap, fingerprint, users_hash, created_utc, created_by"
_RELEASE_SELECT = "id, charge_id, corpus_id, request_key, items, counts, calibration, report, created_utc"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _json(value: Any, what: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{what} must be JSON (numbers, text, lists, objects): {exc}") from None


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
        raise ParameterError(f"{what} must be a non-empty name of at most {MAX_NAME} characters, got {value!r}")
    return value.strip()


def _caps(epsilon: Any, delta: Any) -> tuple[float, float]:
    return float(check_positive(epsilon, "the epsilon cap")), float(check_delta(delta))


def _corpus(row: tuple) -> Corpus:
    return Corpus(int(row[0]), row[1], float(row[2]), float(row[3]), bytes(row[4]), row[5], row[6], row[7])


def _entry(row: tuple, corpus_id: int, source: str = "", time_utc: str = "") -> LedgerEntry:
    """A ledger entry from (mechanism, label, epsilon, delta, noise, zcdp, laplace, teaching, releases)."""
    mechanism, label, epsilon, delta, noise, z, lap, teaching, releases = row
    return LedgerEntry(
        mechanism=mechanism,
        label=label,
        epsilon=float(epsilon),
        delta=float(delta),
        noise=noise,
        corpus_id=corpus_id,
        source=source,
        releases=int(releases),
        time_utc=time_utc,
        zcdp=None if z is None else ZcdpCost(**json.loads(z)),
        teaching=bool(teaching),
        laplace=None if lap is None else LaplaceCost(**json.loads(lap)),
    )


def _release(row: tuple, outputs: dict[str, bytes]) -> KeptRelease:
    counts = None if row[5] is None else tuple(json.loads(row[5]))
    return KeptRelease(
        int(row[0]),
        row[1],
        int(row[2]),
        row[3],
        tuple(json.loads(row[4])),
        counts,
        json.loads(row[6]),
        row[7],
        row[8],
        outputs,
    )


def _outputs(outputs: Mapping[str, bytes] | None) -> list[tuple[str, bytes]]:
    """A kept release's outputs, checked: names from ``KEPT_OUTPUTS`` only (what a release publishes), bytes."""
    out = []
    for name, data in (outputs or {}).items():
        if name not in KEPT_OUTPUTS:
            raise ParameterError(
                f"a kept release holds only its published outputs ({', '.join(KEPT_OUTPUTS)}), not {name!r}"
            )
        if not isinstance(data, bytes):
            raise ParameterError(f"a kept release's output {name!r} must be bytes, got {type(data).__name__}")
        out.append((name, data))
    return out


def env_default_cap() -> tuple[float, float]:
    """The default cap from ``DPSU_DEFAULT_CAP`` ("EPSILON,DELTA"), else ε 10, δ 1e-5; a malformed value is refused
    in one line naming the variable."""
    text = os.environ.get("DPSU_DEFAULT_CAP", "").strip()
    if not text:
        return DEFAULT_EPSILON_CAP, DEFAULT_DELTA_CAP
    try:
        e, d = (float(x) for x in text.split(","))
    except ValueError:
        raise ParameterError(
            f"DPSU_DEFAULT_CAP must be 'EPSILON,DELTA' (e.g. '10,1e-5'), got {text!r}: fix or unset it"
        ) from None
    return _caps(e, d)


def open_store(location: str | os.PathLike[str] | None = None) -> LedgerStore:
    """The ledger at ``location`` (a file path: SQLite; a ``postgresql://`` URL), else ``$DPSU_LEDGER``, else the
    per-user default file (``default_location()``); created, or upgraded to the current schema, as needed."""
    where = os.fspath(location) if location is not None else os.environ.get("DPSU_LEDGER") or str(default_location())
    if not where.strip():
        raise ParameterError("the ledger location is empty; give a file path or a postgresql:// URL")
    return LedgerStore(connect(where))


class LedgerStore:
    """One store (see the module's docstring). Thread-safe: one connection, one operation at a time."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._lock = threading.RLock()
        with self._lock, db.transaction():
            db.execute(
                "INSERT INTO settings (key, value) VALUES ('secret', ?) ON CONFLICT (key) DO NOTHING",
                (secrets.token_hex(32),),
            )

    # ------------------------------------------------------------------ the store itself
    @property
    def location(self) -> str:
        return self._db.where

    @property
    def backend(self) -> str:
        return self._db.kind

    @property
    def schema_version(self) -> int:
        return SCHEMA_VERSION

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> LedgerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def secret(self) -> bytes:
        """The store's 32-byte key, generated at creation: the salt and key of corpus fingerprints."""
        return bytes.fromhex(self._setting("secret") or "")

    def _setting(self, key: str) -> str | None:
        with self._lock:
            row = self._db.one("SELECT value FROM settings WHERE key = ?", (key,))
        return None if row is None else row[0]

    def default_cap(self) -> tuple[float, float]:
        """(epsilon, delta) a corpus nobody registered gets on first use: the store's setting (``set_default_cap``),
        else the deployment's ``DPSU_DEFAULT_CAP`` ("EPSILON,DELTA"), else ε 10, δ 1e-5."""
        e, d = self._setting("default_epsilon"), self._setting("default_delta")
        if e is not None and d is not None:
            return float(e), float(d)
        return env_default_cap()

    def set_default_cap(self, epsilon: float, delta: float) -> None:
        e, d = _caps(epsilon, delta)
        with self._lock, self._db.transaction() as db:
            for key, value in (("default_epsilon", e), ("default_delta", d)):
                db.execute(
                    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, repr(value)),
                )

    # ------------------------------------------------------------------ corpora
    def register_corpus(
        self,
        name: str,
        epsilon_cap: float,
        delta_cap: float,
        *,
        fingerprint: bytes = b"",
        users_hash: str = "",
        by: str,
    ) -> Corpus:
        """A corpus registered ahead of its first use, with its cap (an existing name is refused)."""
        name, by = _name(name, "the corpus name"), _name(by, "who registers it")
        e, d = _caps(epsilon_cap, delta_cap)
        if not isinstance(fingerprint, bytes) or not isinstance(users_hash, str):
            raise ParameterError("a corpus's fingerprint must be bytes and its users' hash text")
        with self._lock, self._db.transaction() as db:
            c = self._insert_corpus(db, name, e, d, fingerprint, users_hash, by)
        if c is None:
            raise ParameterError(f"corpus {name!r} is already registered; change its cap with set-budget")
        return c

    def _insert_corpus(
        self, db: Db, name: str, e: float, d: float, fingerprint: bytes, users_hash: str, by: str
    ) -> Corpus | None:
        """Insert the corpus and its registration entry (inside the caller's transaction); None if the name exists."""
        now = _now()
        row = db.one(
            "INSERT INTO corpora (name, epsilon_cap, delta_cap, fingerprint, users_hash, created_utc, created_by, "
            "head_hash, chain_length) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (name) DO NOTHING "
            f"RETURNING {_CORPUS_SELECT}",
            (name, e, d, fingerprint, users_hash, now, by, chain.GENESIS),
        )
        if row is None:
            return None
        c = _corpus(row)
        self._append(db, c.id, [self._cap_row(c.id, REGISTER, e, d, by, now)])
        return c

    def corpora(self) -> list[Corpus]:
        with self._lock:
            return [_corpus(r) for r in self._db.execute(f"SELECT {_CORPUS_SELECT} FROM corpora ORDER BY id")]

    def corpus(self, name_or_id: str | int) -> Corpus:
        with self._lock:
            c = self._find(self._db, name_or_id)
        if c is None:
            raise ParameterError(f"no corpus {name_or_id!r} in the ledger {self.location}; see 'dpsu corpus list'")
        return c

    def _find(self, db: Db, name_or_id: str | int, *, lock: bool = False) -> Corpus | None:
        col = "id" if isinstance(name_or_id, int) and not isinstance(name_or_id, bool) else "name"
        row = db.one(
            f"SELECT {_CORPUS_SELECT} FROM corpora WHERE {col} = ?" + (db.for_update if lock else ""), (name_or_id,)
        )
        return None if row is None else _corpus(row)

    def _locked(self, db: Db, name_or_id: str | int, *, create_by: str | None = None) -> tuple[Corpus, bool]:
        """The corpus, its row locked for this transaction; a name nobody registered is created with the default
        cap when ``create_by`` is given."""
        if isinstance(name_or_id, str):
            name_or_id = name_or_id.strip()
        c = self._find(db, name_or_id, lock=True)
        if c is not None:
            return c, False
        if create_by is None or not isinstance(name_or_id, str):
            raise ParameterError(f"no corpus {name_or_id!r} in the ledger {self.location}; see 'dpsu corpus list'")
        e, d = self.default_cap()
        made = self._insert_corpus(db, _name(name_or_id, "the corpus name"), e, d, b"", "", create_by)
        c = self._find(db, name_or_id, lock=True)  # another process may have created it first
        assert c is not None
        return c, made is not None

    def set_cap(self, corpus: str | int, epsilon: float, delta: float, *, by: str) -> Corpus:
        """A new cap for the corpus (recorded in its hash chain: who, when, what)."""
        e, d = _caps(epsilon, delta)
        by = _name(by, "who sets the cap")
        with self._lock, self._db.transaction() as db:
            c, _ = self._locked(db, corpus)
            db.execute("UPDATE corpora SET epsilon_cap = ?, delta_cap = ? WHERE id = ?", (e, d, c.id))
            self._append(db, c.id, [self._cap_row(c.id, CAP, e, d, by, _now())])
        return self.corpus(c.id)

    def set_analyst_cap(self, corpus: str | int, analyst: str, epsilon: float, delta: float) -> None:
        """An analyst's own cap on the corpus (their spends only; the corpus's cap still holds)."""
        e, d = _caps(epsilon, delta)
        analyst = _name(analyst, "the analyst")
        with self._lock, self._db.transaction() as db:
            c, _ = self._locked(db, corpus)
            db.execute(
                "INSERT INTO analyst_caps (corpus_id, analyst, epsilon_cap, delta_cap) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (corpus_id, analyst) DO UPDATE SET epsilon_cap = excluded.epsilon_cap, "
                "delta_cap = excluded.delta_cap",
                (c.id, analyst, e, d),
            )

    def analyst_cap(self, corpus: str | int, analyst: str) -> tuple[float, float] | None:
        c = self.corpus(corpus)
        with self._lock:
            row = self._db.one(
                "SELECT epsilon_cap, delta_cap FROM analyst_caps WHERE corpus_id = ? AND analyst = ?", (c.id, analyst)
            )
        return None if row is None else (float(row[0]), float(row[1]))

    # ------------------------------------------------------------------ entries and totals
    def entries(self, corpus: str | int) -> list[LedgerEntry]:
        """The corpus's spends, in order, as ledger entries (``ledger.total`` composes them)."""
        c = self.corpus(corpus)
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_GROUP}, releases, source, time_utc FROM entries WHERE corpus_id = ? AND kind = ? "
                "ORDER BY seq",
                (c.id, SPEND),
            )
        return [_entry(r[:9], c.id, r[9], r[10]) for r in rows]

    def _grouped(self, db: Db, corpus_id: int, actor: str | None = None) -> list[LedgerEntry]:
        """The corpus's spends (one actor's), identical configurations merged by the database."""
        where, params = "corpus_id = ? AND kind = ?", [corpus_id, SPEND]
        if actor is not None:
            where, params = where + " AND actor = ?", [*params, actor]
        rows = db.execute(f"SELECT {_GROUP}, SUM(releases) FROM entries WHERE {where} GROUP BY {_GROUP}", params)
        return [_entry(r, corpus_id) for r in rows]

    def total(self, corpus: str | int) -> LedgerTotal:
        """Everything the corpus has spent, from every tool, by the ledger's tightest valid composition."""
        c = self.corpus(corpus)
        with self._lock:
            return total(self._grouped(self._db, c.id))

    def spent_by_actor(self, corpus: str | int) -> dict[str, LedgerTotal]:
        c = self.corpus(corpus)
        with self._lock:
            actors = [r[0] for r in self._db.execute(
                "SELECT DISTINCT actor FROM entries WHERE corpus_id = ? AND kind = ? ORDER BY actor", (c.id, SPEND)
            )]  # fmt: skip
            return {a: total(self._grouped(self._db, c.id, a)) for a in actors}

    def charge(
        self,
        corpus: str | int,
        entries: Sequence[LedgerEntry],
        *,
        actor: str,
        tool: str,
        job: dict[str, Any],
        request_key: str = "",
    ) -> Charge:
        """Check the caps and record the spend in one transaction, before any noise is drawn. Raises
        ``BudgetRefused`` (a refusal row recorded, nothing spent) when the corpus's total, or the actor's own, would
        pass its cap. A corpus name nobody registered is created with the default cap (``Charge.new_corpus``)."""
        new = list(entries)
        if not new or not all(isinstance(e, LedgerEntry) for e in new):
            raise ParameterError("a charge needs one or more ledger entries")
        actor = _name(actor, "the actor")
        if tool not in TOOLS:
            raise ParameterError(f"the tool must be one of {', '.join(TOOLS)}, got {tool!r}")
        job_text = _json(job, "the job")
        if not isinstance(request_key, str):
            raise ParameterError("the request key must be text")
        with self._lock:
            with self._db.transaction() as db:
                c, created = self._locked(db, corpus, create_by=actor)
                before = self._grouped(db, c.id)
                refusal = self._over(db, c, actor, before, new)
                if refusal is not None:
                    db.execute(
                        "INSERT INTO refusals (time_utc, corpus_id, actor, tool, why, requested_epsilon, "
                        "requested_delta) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (_now(), c.id, actor, tool, str(refusal), refusal.requested_epsilon, refusal.requested_delta),
                    )
                else:
                    charge_id, now = uuid.uuid4().hex, _now()
                    rows = [self._spend_row(c.id, e, charge_id, now, actor, tool, job_text, request_key) for e in new]
                    self._append(db, c.id, rows)
            if refusal is not None:
                raise refusal
        after = total(compact(before + new))  # the tight total, composed outside the transaction
        return Charge(
            charge_id,
            c,
            tuple(new),
            after,
            max(0.0, c.epsilon_cap - after.epsilon),
            max(0.0, c.delta_cap - after.basic_delta),
            created,
        )

    def _over(
        self,
        db: Db,
        c: Corpus,
        actor: str,
        before: list[LedgerEntry],
        new: list[LedgerEntry],
    ) -> BudgetRefused | None:
        """The refusal, when the corpus's cap or the actor's own would be passed (``ledger.within``: the tight
        total is composed only when the basic one would pass a cap)."""
        if not within(compact(before + new), c.epsilon_cap, c.delta_cap):
            return refusal(f"corpus {c.name!r}", c.name, c.epsilon_cap, c.delta_cap, before, new, custodian=True)
        row = db.one(
            "SELECT epsilon_cap, delta_cap FROM analyst_caps WHERE corpus_id = ? AND analyst = ?", (c.id, actor)
        )
        if row is None:
            return None
        cap_e, cap_d = float(row[0]), float(row[1])
        mine = self._grouped(db, c.id, actor)
        if within(compact(mine + new), cap_e, cap_d):
            return None
        return refusal(f"{actor!r}'s own cap on corpus {c.name!r}", c.name, cap_e, cap_d, mine, new)

    def refusals(self, corpus: str | int) -> list[Refusal]:
        c = self.corpus(corpus)
        with self._lock:
            rows = self._db.execute(
                "SELECT time_utc, actor, tool, why, requested_epsilon, requested_delta FROM refusals "
                "WHERE corpus_id = ? ORDER BY id",
                (c.id,),
            )
        return [Refusal(r[0], c.name, r[1], r[2], r[3], float(r[4]), float(r[5])) for r in rows]

    # ------------------------------------------------------------------ the hash chain
    @staticmethod
    def _spend_row(
        corpus_id: int, e: LedgerEntry, charge_id: str, now: str, actor: str, tool: str, job: str, key: str
    ) -> dict[str, Any]:
        return {
            "corpus_id": corpus_id,
            "kind": SPEND,
            "charge_id": charge_id,
            "time_utc": now,
            "actor": actor,
            "tool": tool,
            "source": str(e.source),
            "mechanism": str(e.mechanism),
            "label": str(e.label),
            "epsilon": float(e.epsilon),
            "delta": float(e.delta),
            "noise": str(e.noise),
            "releases": int(e.releases),
            "zcdp": None if e.zcdp is None else _json(_floats(e.zcdp.__dict__), "zcdp"),
            "laplace": None if e.laplace is None else _json(_floats(e.laplace.__dict__), "laplace"),
            "teaching": int(bool(e.teaching)),
            "job": job,
            "request_key": key,
        }

    @staticmethod
    def _cap_row(corpus_id: int, kind: str, e: float, d: float, by: str, now: str) -> dict[str, Any]:
        """A registration or cap change, as a chained entry (its epsilon and delta: the new cap; no releases)."""
        return {
            "corpus_id": corpus_id, "kind": kind, "charge_id": "", "time_utc": now, "actor": by, "tool": "cli",
            "source": kind, "mechanism": "", "label": f"cap ε = {e:g}, δ = {d:g}", "epsilon": e, "delta": d,
            "noise": "", "releases": 0, "zcdp": None, "laplace": None, "teaching": 0, "job": "{}", "request_key": "",
        }  # fmt: skip

    def _append(self, db: Db, corpus_id: int, rows: list[dict[str, Any]]) -> None:
        """Append chained rows to the corpus's chain (its row locked by the caller's transaction)."""
        head = db.one("SELECT head_hash, chain_length FROM corpora WHERE id = ?", (corpus_id,))
        assert head is not None
        prev, length = head[0], int(head[1])
        marks = ", ".join("?" * (len(chain.ENTRY_COLUMNS) + 2))
        for row in rows:
            h = chain.link(prev, row)
            db.execute(
                f"INSERT INTO entries ({_ENTRY_SELECT}, prev_hash, hash) VALUES ({marks})",
                [row[k] for k in chain.ENTRY_COLUMNS] + [prev, h],
            )
            prev, length = h, length + 1
        db.execute("UPDATE corpora SET head_hash = ?, chain_length = ? WHERE id = ?", (prev, length, corpus_id))

    def verify(self) -> VerifyResult:
        """Walk every corpus's chain; the first edited, deleted, reordered or added row, or a cap changed outside
        dpsu, is named."""
        checked = 0
        with self._lock:
            heads = self._db.execute(
                "SELECT id, name, head_hash, chain_length, epsilon_cap, delta_cap FROM corpora ORDER BY id"
            )
            for cid, name, head, length, cap_e, cap_d in heads:
                rows = self._db.execute(
                    f"SELECT seq, {_ENTRY_SELECT}, prev_hash, hash FROM entries WHERE corpus_id = ? ORDER BY seq",
                    (cid,),
                )
                walk = [(r[0], dict(zip(chain.ENTRY_COLUMNS, r[1:-2])), r[-2], r[-1]) for r in rows]
                checked += len(walk)
                bad = chain.check(name, walk, head, int(length))
                if bad is not None:
                    return VerifyResult(False, checked, bad[1], name, bad[0])
                caps = [(float(w[1]["epsilon"]), float(w[1]["delta"])) for w in walk if w[1]["kind"] in (REGISTER, CAP)]
                if caps and caps[-1] != (float(cap_e), float(cap_d)):
                    why = f"corpus {name!r}: its cap (ε = {cap_e:g}) was changed outside dpsu (the chain says {caps[-1][0]:g})"
                    return VerifyResult(False, checked, why, name, None)
        return VerifyResult(True, checked)

    # ------------------------------------------------------------------ kept releases
    def keep_release(
        self,
        charge_id: str,
        *,
        items: Sequence[Any],
        counts: Sequence[float] | None,
        calibration: dict,
        report: str,
        outputs: Mapping[str, bytes] | None = None,
    ) -> KeptRelease:
        """Keep a charged release's public output (items, noisy counts, calibration, report, and the files it
        published: ``outputs``, by a name of ``KEPT_OUTPUTS``) so it can be handed back at no cost."""
        files = _outputs(outputs)
        with self._lock:
            row = self._db.one(
                "SELECT corpus_id, request_key FROM entries WHERE charge_id = ? AND kind = ? ORDER BY seq",
                (charge_id, SPEND),
            )
            if row is None:
                raise ParameterError(f"no charge {charge_id!r} in the ledger: a release is kept after its charge")
            values = (
                charge_id,
                row[0],
                row[1],
                _json(list(items), "the items"),
                None if counts is None else _json([float(x) for x in counts], "the counts"),
                _json(calibration, "the calibration"),
                str(report),
                _now(),
            )
            with self._db.transaction() as db:
                out = db.one(
                    "INSERT INTO releases (charge_id, corpus_id, request_key, items, counts, calibration, report, "
                    f"created_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING {_RELEASE_SELECT}",
                    values,
                )
                assert out is not None
                for name, data in files:
                    db.execute(
                        "INSERT INTO release_outputs (release_id, name, data) VALUES (?, ?, ?)", (out[0], name, data)
                    )
        return _release(out, dict(files))

    def _with_outputs(self, rows: list[tuple]) -> list[KeptRelease]:
        """Kept releases from their rows, each with its outputs (one query for all of them)."""
        if not rows:
            return []
        ids = [int(r[0]) for r in rows]
        found: dict[int, dict[str, bytes]] = {i: {} for i in ids}
        for start in range(0, len(ids), 500):  # a bounded number of parameters per query
            part = ids[start : start + 500]
            marks = ", ".join("?" * len(part))
            for rid, name, data in self._db.execute(
                f"SELECT release_id, name, data FROM release_outputs WHERE release_id IN ({marks}) ORDER BY name",
                part,
            ):
                found[int(rid)][name] = bytes(data)
        return [_release(r, found[int(r[0])]) for r in rows]

    def releases(self, corpus: str | int) -> list[KeptRelease]:
        c = self.corpus(corpus)
        with self._lock:
            rows = self._db.execute(f"SELECT {_RELEASE_SELECT} FROM releases WHERE corpus_id = ? ORDER BY id", (c.id,))
            return self._with_outputs(rows)

    def release(self, release_id: int) -> KeptRelease:
        with self._lock:
            row = self._db.one(f"SELECT {_RELEASE_SELECT} FROM releases WHERE id = ?", (int(release_id),))
            if row is None:
                raise ParameterError(f"no kept release {release_id} in the ledger; see 'dpsu ledger show'")
            return self._with_outputs([row])[0]

    def find_release(self, corpus: str | int, request_key: str) -> KeptRelease | None:
        """The latest kept release of the same request (same corpus, mechanism, parameters), or None."""
        c = self.corpus(corpus)
        with self._lock:
            row = self._db.one(
                f"SELECT {_RELEASE_SELECT} FROM releases WHERE corpus_id = ? AND request_key = ? "
                "ORDER BY id DESC LIMIT 1",
                (c.id, request_key),
            )
            return None if row is None else self._with_outputs([row])[0]

    # ------------------------------------------------------------------ export
    def chain_rows(self) -> list[dict[str, Any]]:
        """Every chained entry with its corpus's name, sequence number and hashes (the audit export)."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT e.seq, c.name, {', '.join('e.' + k for k in chain.ENTRY_COLUMNS)}, e.prev_hash, e.hash "
                "FROM entries e JOIN corpora c ON c.id = e.corpus_id ORDER BY e.seq"
            )
        keys = ("seq", "corpus", *chain.ENTRY_COLUMNS, "prev_hash", "hash")
        return [dict(zip(keys, r)) for r in rows]

    def export(self, fmt: str = "json") -> str:
        """The whole ledger with its hash chain: CSV (one row per entry) or JSON (corpora, entries, refusals)."""
        if fmt not in ("csv", "json"):
            raise ParameterError(f"the export format must be csv or json, got {fmt!r}")
        rows = self.chain_rows()
        if fmt == "csv":
            buf = io.StringIO()
            keys = ["seq", "corpus", *chain.ENTRY_COLUMNS, "prev_hash", "hash"]
            writer = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
            return buf.getvalue()
        corpora = [
            {"id": c.id, "name": c.name, "epsilon_cap": c.epsilon_cap, "delta_cap": c.delta_cap,
             "created_utc": c.created_utc, "created_by": c.created_by}
            for c in self.corpora()
        ]  # fmt: skip
        refusals = [r.__dict__ for c in self.corpora() for r in self.refusals(c.id)]
        doc = {"schema_version": SCHEMA_VERSION, "corpora": corpora, "entries": rows, "refusals": refusals}
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def _floats(d: dict[str, Any]) -> dict[str, Any]:
    """A cost's fields as floats (an int would hash differently once read back from a REAL column's JSON)."""
    return {k: None if v is None else float(v) for k, v in d.items()}
