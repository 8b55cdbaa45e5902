"""Issue 36: every tool charges one durable account. The CLI (a real subprocess), the library's ``release`` and the
app's session state spend on the same corpus and read one total; a near copy of a charged file is charged to the
same corpus; a cap refuses before any output is written; an identical request is not spent again by accident; a
process killed after its charge leaves the charge recorded."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpsu_core.accounting.account import kept_csv
from dpsu_core.accounting.ledger import total
from dpsu_core.accounting.store import open_store
from dpsu_core.corpus import LoadOptions, load_corpus
from tests.core.overlap_files import copies, csv_bytes, private_rows

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, ledger: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DPSU_LEDGER": str(ledger), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def _release(path: Path, out: Path, ledger: Path, *extra: str, epsilon: str = "1") -> subprocess.CompletedProcess:
    return _cli(
        "release", str(path), "-m", "policy-gaussian", "-e", epsilon, "-d", "1e-7", "--user-col", "author",
        "--text-col", "body", "-o", str(out), *extra, ledger=ledger,
    )  # fmt: skip


@pytest.fixture
def files(tmp_path):
    rows = private_rows()
    (tmp_path / "private.csv").write_bytes(csv_bytes(rows))
    out = {"private.csv": tmp_path / "private.csv"}
    for name, data in copies(rows).items():
        (tmp_path / name).write_bytes(data)
        out[name] = tmp_path / name
    return out


def _entries(ledger: Path) -> dict[str, int]:
    store = open_store(str(ledger))
    return {c.name: sum(e.releases for e in store.entries(c.id)) for c in store.corpora()}


def test_cli_copies_of_a_charged_file_are_charged_to_the_same_corpus(files, tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    first = _release(files["private.csv"], tmp_path / "a.csv", ledger)
    assert first.returncode == 0, first.stderr
    assert "new corpus 'private.csv'" in first.stderr
    for i, name in enumerate(["lf.csv", "shuffled.csv", "one_more.csv", "same.jsonl"]):
        r = _release(files[name], tmp_path / f"out{i}.csv", ledger, epsilon=str(1 + (i + 1) / 10))
        assert r.returncode == 0, r.stderr
        assert "this is corpus 'private.csv'" in r.stderr, r.stderr
    assert _entries(ledger) == {"private.csv": 5}


def test_cap_refuses_before_any_output_and_says_what_is_left(files, tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    reg = _cli("corpus", "register", str(files["private.csv"]), "--name", "tickets", "--epsilon", "3.5",
               "--delta", "1e-5", "--user-col", "author", "--text-col", "body", ledger=ledger)  # fmt: skip
    assert reg.returncode == 0, reg.stderr
    ok = _release(files["shuffled.csv"], tmp_path / "a.csv", ledger, epsilon="3")
    assert ok.returncode == 0 and "this is corpus 'tickets'" in ok.stderr, ok.stderr
    refused = _release(files["lf.csv"], tmp_path / "b.csv", ledger, "--spend-again", epsilon="3")
    assert refused.returncode == 2
    line = refused.stderr.strip().splitlines()[-1]
    assert line.startswith("dpsu: error:") and "left" in line and "tickets" in line, refused.stderr
    assert not (tmp_path / "b.csv").exists()
    assert _entries(ledger) == {"tickets": 1}


def test_identical_request_is_offered_not_spent_again(files, tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    assert _release(files["private.csv"], tmp_path / "a.csv", ledger).returncode == 0
    again = _release(files["private.csv"], tmp_path / "b.csv", ledger)
    assert again.returncode == 2 and "export-release" in again.stderr and "--spend-again" in again.stderr
    assert not (tmp_path / "b.csv").exists()
    store = open_store(str(ledger))
    (kept,) = store.releases(store.corpora()[0].id)
    back = _cli("ledger", "export-release", str(kept.id), "-o", str(tmp_path / "back.csv"), ledger=ledger)
    assert back.returncode == 0, back.stderr
    assert _entries(ledger) == {"private.csv": 1}  # handing it back spent nothing
    released = (tmp_path / "a.csv").read_text().splitlines()[1:]
    assert sorted(released) and set(r.split(",")[0] for r in released) <= set(
        r.split(",")[0] for r in (tmp_path / "back.csv").read_text().splitlines()[1:]
    )
    assert _release(files["private.csv"], tmp_path / "c.csv", ledger, "--spend-again").returncode == 0
    assert _entries(ledger) == {"private.csv": 2}


def test_the_kept_output_is_the_file_the_release_wrote(files, tmp_path):
    """The CLI writes the released items with their noisy counts; the store keeps that very file (bytes), its
    public columns only, and the app's download and ``export-release`` hand the release back from it."""
    ledger = tmp_path / "ledger.sqlite"
    r = _release(files["private.csv"], tmp_path / "a.csv", ledger, "--with-counts")
    assert r.returncode == 0, r.stderr
    written = (tmp_path / "a.csv").read_bytes()
    with open_store(str(ledger)) as store:
        (kept,) = store.releases(store.corpora()[0].id)
    assert kept.outputs == {"csv": written} and kept_csv(kept) == written
    rows = list(csv.reader(io.StringIO(written.decode("utf-8"))))
    assert rows[0] == ["item", "n", "count", "std"] and len(rows) > 2  # the released columns, nothing raw
    assert [row[0] for row in rows[1:]] == list(kept.items)
    assert [float(row[2]) for row in rows[1:]] == list(kept.counts)  # the noisy counts the store keeps
    back = _cli("ledger", "export-release", str(kept.id), "-o", str(tmp_path / "back.csv"), ledger=ledger)
    assert back.returncode == 0, back.stderr
    assert [row[0] for row in csv.reader((tmp_path / "back.csv").open(encoding="utf-8"))][1:] == list(kept.items)


def test_the_api_keeps_its_releases_csv(files, tmp_path):
    from dpsu_core import release
    from dpsu_core.outputs.export import to_csv_bytes

    corpus = load_corpus(str(files["private.csv"]), LoadOptions(user_col="author", text_col="body"))
    with open_store(str(tmp_path / "ledger.sqlite")) as store:
        rel = release(corpus, "policy-gaussian", epsilon=1.0, delta=1e-7, store=store, counts=(0.5, 1.0))
        (kept,) = store.releases(store.corpora()[0].id)
    assert rel.noisy_counts is not None and kept.outputs == {"csv": to_csv_bytes(rel)}
    assert kept.counts == tuple(float(c) for c in rel.noisy_counts) and "csv" not in kept.calibration


def test_cli_api_and_app_read_one_total(files, tmp_path, monkeypatch):
    from dpsu_core import release
    from pages import _account, _workspace
    from pages._state import AppState

    ledger = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPSU_LEDGER", str(ledger))
    assert _release(files["private.csv"], tmp_path / "a.csv", ledger).returncode == 0
    corpus = load_corpus(str(files["same.jsonl"]), LoadOptions(user_col="author", text_col="body"))
    release(corpus, "gw", epsilon=1.0, delta=1e-7, corpus_name="again")
    state = AppState()
    account = _account.recognise_corpus(state, corpus, "upload.csv")
    _workspace.set_corpus(
        state, corpus, "upload.csv", LoadOptions(), is_demo=False, canaries=[], dataset_key="upload:x"
    )
    state.ledger.attach(state.dataset_key, account)
    store = open_store(str(ledger))
    (c,) = store.corpora()
    assert account.name == "private.csv" and _account.spent(state).releases == 2
    assert _account.spent(state).epsilon == total(store.entries(c.id)).epsilon
    shown = json.loads(_cli("ledger", "show", "--json", ledger=ledger).stdout)
    assert json.dumps(shown).count("private.csv") >= 1


def test_a_process_killed_after_its_charge_leaves_it_recorded(files, tmp_path):
    """SIGKILL right after the charge committed (the release then never runs): the charge is in the store."""
    ledger = tmp_path / "ledger.sqlite"
    code = f"""
import os, signal
from dpsu_core.accounting import account as acc
real = acc.charge
def charge_then_die(*a, **k):
    real(*a, **k)
    os.kill(os.getpid(), signal.SIGKILL)
acc.charge = charge_then_die
from dpsu_core.api import release
from dpsu_core.corpus import LoadOptions, load_corpus
import dpsu_core.api as api
api.charge = charge_then_die
c = load_corpus({str(files["private.csv"])!r}, LoadOptions(user_col="author", text_col="body"))
release(c, "policy-gaussian", epsilon=1.0, delta=1e-7, corpus_name="killed", store={str(ledger)!r})
"""
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    assert r.returncode == -9
    assert _entries(ledger) == {"killed": 1}
