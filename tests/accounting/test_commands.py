"""``dpsu ledger ...`` and ``dpsu corpus ...`` through real subprocesses, on both backends: the custodian's
commands, the audit (export, verify), a kept release handed back at no cost, and bad input in one line."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpsu_core.accounting import open_store
from dpsu_core.accounting.backend import connect
from dpsu_core.accounting.ledger import LedgerEntry
from dpsu_core.mechanisms.registry import get_mechanism

ROOT = Path(__file__).resolve().parents[2]


def dpsu(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "DPSU_LEDGER"}
    base["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv],
        cwd=ROOT,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _entry(epsilon: float) -> LedgerEntry:
    cal = get_mechanism("policy-gaussian", epsilon=epsilon, delta=1e-7).calibrate()
    return LedgerEntry.from_calibration(cal, corpus_id=None, source="test")


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    path = tmp_path / "posts.csv"
    path.write_text("user,text\n" + "".join(f"u{i},hello world number {i}\n" for i in range(30)), encoding="utf-8")
    return path


def test_a_custodian_registers_lists_and_caps_a_corpus(location, corpus_file):
    r = dpsu("corpus", "register", str(corpus_file), "--name", "tickets", "--epsilon", "5", "--delta", "1e-5",
             "--ledger", location)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "registered corpus 'tickets': cap ε = 5" in r.stdout
    with open_store(location) as s:  # spends made by another tool (the API) on the same corpus
        s.charge("tickets", [_entry(2.0)], actor="ana", tool="api", job={})
        s.charge("tickets", [_entry(1.0)], actor="ben", tool="app", job={})
        spent = s.total("tickets")
    r = dpsu("corpus", "set-budget", "tickets", "--epsilon", "4", "--delta", "1e-5", "--ledger", location)
    assert r.returncode == 0 and "cap ε = 4" in r.stdout, r.stderr
    r = dpsu("corpus", "list", "--ledger", location)
    assert r.returncode == 0 and f"spent ε = {spent.epsilon:.4g} in 2 releases" in r.stdout, r.stdout + r.stderr
    r = dpsu("ledger", "show", "--corpus", "tickets", "--json", "--ledger", location)
    assert r.returncode == 0, r.stderr
    view = json.loads(r.stdout)["corpora"][0]
    assert (view["name"], view["epsilon_cap"], view["delta_cap"]) == ("tickets", 4.0, 1e-5)
    assert view["spent"]["epsilon"] == spent.epsilon and view["remaining_epsilon"] == 4.0 - spent.epsilon
    assert [(e["actor"], e["tool"], e["epsilon"]) for e in view["entries"]] == [
        ("ana", "api", 2.0),
        ("ben", "app", 1.0),
    ]
    with open_store(location) as s:
        assert [r["kind"] for r in s.chain_rows()] == ["register", "spend", "spend", "cap"]


def test_verify_passes_then_names_an_edited_row(location):
    with open_store(location) as s:
        for eps in (1.0, 2.0):
            s.charge("c", [_entry(eps)], actor="ana", tool="cli", job={})
        seq = [r["seq"] for r in s.chain_rows() if r["kind"] == "spend"][0]
    r = dpsu("ledger", "verify", "--ledger", location)
    assert r.returncode == 0 and r.stdout.startswith("ok: 3 entries of 1 corpus"), r.stderr
    db = connect(location, upgrade_schema=False)
    with db.transaction():
        db.execute("UPDATE entries SET epsilon = 0.5 WHERE seq = ?", (seq,))
    db.close()
    r = dpsu("ledger", "verify", "--ledger", location)
    assert r.returncode == 1
    assert (
        r.stderr.strip()
        == f"dpsu: ledger verify: entry {seq} of corpus 'c' was edited: its hash does not match its contents"
    )


def test_export_writes_the_hash_chain(location, tmp_path):
    with open_store(location) as s:
        s.charge("c", [_entry(1.0)], actor="ana", tool="cli", job={"m": 1})
        chained = [r["hash"] for r in s.chain_rows()]
    out = tmp_path / "ledger.csv"
    r = dpsu("ledger", "export", "--format", "csv", "-o", str(out), "--ledger", location)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [row["hash"] for row in rows] == chained and rows[1]["prev_hash"] == rows[0]["hash"]
    r = dpsu("ledger", "export", "--ledger", location)  # JSON on stdout
    assert r.returncode == 0 and [e["hash"] for e in json.loads(r.stdout)["entries"]] == chained


def test_export_release_hands_a_kept_release_back_at_no_cost(location, tmp_path):
    with open_store(location) as s:
        ch = s.charge("c", [_entry(1.0)], actor="ana", tool="app", job={}, request_key="k")
        kept = s.keep_release(ch.charge_id, items=["hello", ["new", "york"], "=cmd"], counts=[12.5, 3.0, 1.25],
                              calibration={"sigma": 2.0}, report="# Release report\n")  # fmt: skip
        before = (s.total("c"), len(s.entries("c")))
    items, report = tmp_path / "items.csv", tmp_path / "report.md"
    r = dpsu("ledger", "export-release", str(kept.id), "-o", str(items), "--report", str(report), "--ledger", location)
    assert r.returncode == 0 and "nothing spent" in r.stderr, r.stderr
    assert list(csv.reader(items.open(encoding="utf-8"))) == [
        ["item", "count"], ["hello", "12.5"], ["new york", "3.0"], ["'=cmd", "1.25"]
    ]  # fmt: skip
    assert report.read_text(encoding="utf-8") == "# Release report\n"
    with open_store(location) as s:
        assert (s.total("c"), len(s.entries("c"))) == before


def test_bad_input_is_one_line_and_exit_2(location, tmp_path, corpus_file):
    cases = [
        ("ledger", "show", "--corpus", "missing", "--ledger", location),
        ("ledger", "export-release", "7", "-o", str(tmp_path / "x.csv"), "--ledger", location),
        ("corpus", "register", str(tmp_path / "absent.csv"), "--name", "x", "--epsilon", "1", "--delta", "1e-6",
         "--ledger", location),
        ("corpus", "register", str(corpus_file), "--name", "x", "--epsilon", "-1", "--delta", "1e-6",
         "--ledger", location),
        ("corpus", "set-budget", "missing", "--epsilon", "1", "--delta", "1e-6", "--ledger", location),
    ]  # fmt: skip
    for argv in cases:
        r = dpsu(*argv)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("dpsu: error: "), (
            argv,
            r.stderr,
        )
        assert "Traceback" not in r.stderr


def test_the_ledger_file_is_never_an_output_and_a_folder_is_no_ledger(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    open_store(ledger).close()
    r = dpsu("ledger", "export", "-o", str(ledger), "--ledger", str(ledger))
    assert r.returncode == 2 and "is the ledger itself" in r.stderr
    r = dpsu("corpus", "list", "--ledger", str(tmp_path))
    assert r.returncode == 2 and "is a folder" in r.stderr


def test_the_ledger_comes_from_dpsu_ledger_else_the_per_user_data_folder(tmp_path):
    named = tmp_path / "named.sqlite"
    with open_store(named) as s:
        s.register_corpus("via-env", 1, 1e-6, by="x")
    r = dpsu("corpus", "list", env={"DPSU_LEDGER": str(named)})
    assert r.returncode == 0 and "'via-env'" in r.stdout, r.stderr
    if sys.platform.startswith("linux"):
        data = tmp_path / "xdg"
        r = dpsu("corpus", "list", env={"XDG_DATA_HOME": str(data)})
        assert r.returncode == 0 and "no corpus" in r.stdout, r.stderr
        assert (data / "dpsu" / "ledger.sqlite").is_file()
