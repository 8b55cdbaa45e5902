"""The hash chain: an entry edited, deleted or moved in the database itself (not through dpsu), a cap changed
behind dpsu's back, or rows added: ``verify`` fails and names the row. And the schema upgrades from versions 1 and
2 (a release kept by version 2 is still handed back)."""

from __future__ import annotations

import json

import pytest

from dpsu_core.accounting import chain, open_store
from dpsu_core.accounting.account import kept_csv
from dpsu_core.accounting.backend import MIGRATIONS, SCHEMA_VERSION, connect, schema_version
from dpsu_core.accounting.ledger import LedgerEntry
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms.registry import get_mechanism


def _entry(epsilon: float) -> LedgerEntry:
    cal = get_mechanism("policy-gaussian", epsilon=epsilon, delta=1e-7).calibrate()
    return LedgerEntry.from_calibration(cal, corpus_id=None, source="test")


def _filled(location: str) -> list[int]:
    """A corpus with its registration and four spends; the spends' sequence numbers."""
    with open_store(location) as s:
        s.register_corpus("c", 100, 1e-5, by="custodian")
        for eps in (1.0, 2.0, 3.0, 4.0):
            s.charge("c", [_entry(eps)], actor="ana", tool="cli", job={"eps": eps})
        assert s.verify().ok
        return [r["seq"] for r in s.chain_rows() if r["kind"] == "spend"]


def _raw(location: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Run SQL on the store's database directly (sqlite3 / psycopg), as someone editing it would."""
    db = connect(location, upgrade_schema=False)
    try:
        with db.transaction():
            return db.execute(sql, params)
    finally:
        db.close()


def _verify(location: str):
    with open_store(location) as s:
        return s.verify()


def test_an_edited_entry_is_named(location):
    seq = _filled(location)
    _raw(location, "UPDATE entries SET epsilon = 0.1 WHERE seq = ?", (seq[1],))
    v = _verify(location)
    assert not v.ok and v.seq == seq[1] and "was edited" in v.problem and v.corpus == "c"


def test_a_deleted_entry_is_named_by_the_one_after_it(location):
    seq = _filled(location)
    _raw(location, "DELETE FROM entries WHERE seq = ?", (seq[1],))
    v = _verify(location)
    assert not v.ok and v.seq == seq[2] and f"the entry before entry {seq[2]}" in v.problem and "deleted" in v.problem


def test_a_deleted_last_entry_shows(location):
    seq = _filled(location)
    _raw(location, "DELETE FROM entries WHERE seq = ?", (seq[-1],))
    v = _verify(location)
    assert not v.ok and "last 1 entry was deleted" in v.problem


def test_reordered_entries_are_named(location):
    seq = _filled(location)
    cols = ", ".join((*chain.ENTRY_COLUMNS, "prev_hash", "hash"))
    a, b = (_raw(location, f"SELECT {cols} FROM entries WHERE seq = ?", (s,))[0] for s in (seq[1], seq[2]))
    sets = ", ".join(f"{c} = ?" for c in (*chain.ENTRY_COLUMNS, "prev_hash", "hash"))
    _raw(location, f"UPDATE entries SET {sets} WHERE seq = ?", (*b, seq[1]))
    _raw(location, f"UPDATE entries SET {sets} WHERE seq = ?", (*a, seq[2]))
    v = _verify(location)
    assert not v.ok and v.seq == seq[1] and "was moved" in v.problem


def test_a_cap_changed_behind_dpsus_back_shows(location):
    _filled(location)
    _raw(location, "UPDATE corpora SET epsilon_cap = 1000 WHERE name = 'c'")
    v = _verify(location)
    assert not v.ok and "changed outside dpsu" in v.problem


def test_an_entry_rehashed_but_not_in_the_corpus_head_shows(location):
    """Rewriting one entry with a correct hash still breaks the link from the next one."""
    seq = _filled(location)
    row = _raw(location, f"SELECT {', '.join(chain.ENTRY_COLUMNS)}, prev_hash FROM entries WHERE seq = ?", (seq[0],))[0]
    fields = dict(zip(chain.ENTRY_COLUMNS, row[:-1]))
    fields["epsilon"] = 0.1
    _raw(location, "UPDATE entries SET epsilon = 0.1, hash = ? WHERE seq = ?", (chain.link(row[-1], fields), seq[0]))
    v = _verify(location)
    assert not v.ok and v.seq == seq[1] and "deleted" in v.problem


# --------------------------------------------------------------------------- schema versions
def _old_store(location: str, version: int, *statements: tuple[str, tuple]) -> None:
    """A store of an earlier schema ``version``, made from that version's own statements, holding corpus 'old'
    (its registration chained) and then ``statements`` (SQL, parameters) as that version's code wrote them."""
    db = connect(location, upgrade_schema=False)
    try:
        with db.transaction():
            for step in range(1, version + 1):
                for statement in MIGRATIONS[step]:
                    assert isinstance(statement, str), "an earlier version's schema is SQL only"
                    db.execute(db.ddl(statement))
            db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(version),))
            register = {
                "corpus_id": 1, "kind": "register", "charge_id": "", "time_utc": "2026-01-01 00:00:00",
                "actor": "custodian", "tool": "cli", "source": "register", "mechanism": "", "label": "cap",
                "epsilon": 5.0, "delta": 1e-5, "noise": "", "releases": 0, "zcdp": None, "laplace": None,
                "teaching": 0, "job": "{}", "request_key": "",
            }  # fmt: skip
            h = chain.link(chain.GENESIS, register)
            db.execute(
                "INSERT INTO corpora (name, epsilon_cap, delta_cap, fingerprint, users_hash, created_utc, created_by, "
                "head_hash, chain_length) VALUES ('old', 5.0, 1e-5, ?, '', '2026-01-01 00:00:00', 'custodian', ?, 1)",
                (b"", h),
            )
            cols = ", ".join((*chain.ENTRY_COLUMNS, "prev_hash", "hash"))
            marks = ", ".join("?" * (len(chain.ENTRY_COLUMNS) + 2))
            db.execute(
                f"INSERT INTO entries ({cols}) VALUES ({marks})",
                [register[k] for k in chain.ENTRY_COLUMNS] + [chain.GENESIS, h],
            )
            for sql, params in statements:
                db.execute(sql, params)
        assert schema_version(db) == version
    finally:
        db.close()


def _version(location: str) -> int:
    db = connect(location, upgrade_schema=False)
    try:
        return schema_version(db)
    finally:
        db.close()


def test_a_version_1_store_is_upgraded_at_open_and_keeps_its_entries(location):
    _old_store(location, 1)
    with open_store(location) as s:
        assert s.verify().ok and [c.name for c in s.corpora()] == ["old"]
        s.set_analyst_cap("old", "ana", 1.0, 1e-6)  # a version-2 table
        ch = s.charge("old", [_entry(1.0)], actor="ana", tool="cli", job={}, request_key="k")
        s.keep_release(ch.charge_id, items=["a"], counts=None, calibration={}, report="", outputs={"csv": b"a\n"})
        assert s.find_release("old", "k").outputs == {"csv": b"a\n"} and s.verify().ok  # a version-3 table
    assert _version(location) == SCHEMA_VERSION == 3


def test_a_version_2_store_keeps_handing_back_its_kept_releases(location):
    """Version 2 kept a release's CSV text inside its calibration's JSON; upgraded, the CSV is in its own table,
    byte for byte, the calibration is what the release's calibration was, and every reader hands it back."""
    csv_text = '"item","n","count","std"\n"café",1,12.0,2.5\n"\'=cmd",1,7.0,2.5\n'
    calibration = {"label": "policy-gaussian", "epsilon": 1.0, "details": {"sigma": 2.5}}
    as_v2 = json.dumps({**calibration, "csv": csv_text}, sort_keys=True, separators=(",", ":"))
    release = (
        "INSERT INTO releases (charge_id, corpus_id, request_key, items, counts, calibration, report, created_utc) "
        "VALUES (?, 1, ?, ?, ?, ?, ?, '2026-01-02 00:00:00')"
    )
    _old_store(
        location,
        2,
        (release, ("c1", "with-csv", '["café","=cmd"]', "[12.0,7.0]", as_v2, '{"r":1}')),
        (release, ("c2", "without", '["a"]', None, "{}", "")),  # kept through keep_release alone: no CSV
    )
    with open_store(location) as s:
        kept = s.find_release("old", "with-csv")
        assert kept is not None and kept.outputs == {"csv": csv_text.encode("utf-8")}
        assert kept.calibration == calibration and kept.items == ("café", "=cmd") and kept.report == '{"r":1}'
        assert kept_csv(kept) == csv_text.encode("utf-8") and s.release(kept.id) == kept
        bare = s.find_release("old", "without")
        assert bare is not None and bare.outputs == {} and kept_csv(bare) == b'"item"\n"a"\n'
        assert [k.id for k in s.releases("old")] == [kept.id, bare.id] and s.verify().ok
    assert _version(location) == SCHEMA_VERSION
    with open_store(location) as s:  # opened again: nothing moved twice
        assert s.release(kept.id) == kept


def test_a_store_newer_than_this_code_is_refused(location):
    open_store(location).close()
    _raw(location, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ParameterError, match="schema version 99, newer than"):
        open_store(location)
