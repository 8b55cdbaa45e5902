"""The store keeps a salted hash of a corpus's user-id set when the corpus is first charged or registered (issue 36,
point 2): through real ``dpsu`` subprocesses on a SQLite store, checked against ``fingerprint.users_hash`` of the
file's ids under the store's own secret; the raw ids never reach the store's file."""

from __future__ import annotations

import random
from pathlib import Path

from dpsu_core.accounting import open_store
from dpsu_core.corpus import load_corpus
from dpsu_core.corpus.fingerprint import salted_users_hash, users_hash
from tests.accounting.test_commands import dpsu

WORDS = "river stone cloud maple quiet lantern harbor meadow copper violet tunnel garden".split()


def _ids(prefix: str, n: int = 40) -> list[str]:
    return [f"{prefix}{i:03d}qz" for i in range(n)]


def _write(path: Path, ids: list[str], *, seed: int = 0, shuffle: bool = False) -> Path:
    rng = random.Random(seed)
    rows = [(u, " ".join(rng.sample(WORDS, 6))) for u in ids for _ in range(2)]
    if shuffle:
        random.Random(seed + 1).shuffle(rows)
    path.write_text("user,text\n" + "".join(f" {u} ,{t}\n" for u, t in rows), encoding="utf-8")
    return path


def _register(path: Path, name: str, ledger: Path) -> None:
    r = dpsu("corpus", "register", str(path), "--name", name, "--epsilon", "5", "--delta", "1e-5",
             "--ledger", str(ledger))  # fmt: skip
    assert r.returncode == 0, r.stderr


def _hashes(ledger: Path) -> tuple[dict[str, str], bytes]:
    with open_store(str(ledger)) as s:
        return {c.name: c.users_hash for c in s.corpora()}, s.secret()


def _store_bytes(ledger: Path) -> bytes:
    return b"".join(p.read_bytes() for p in ledger.parent.glob(ledger.name + "*"))


def test_register_keeps_the_salted_hash_of_the_id_set_and_never_the_ids(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    ids, others = _ids("alicia-"), _ids("bertram-")
    _register(_write(tmp_path / "a.csv", ids), "a", ledger)
    _register(_write(tmp_path / "a_shuffled.csv", ids, seed=5, shuffle=True), "a shuffled", ledger)
    _register(_write(tmp_path / "b.csv", others), "b", ledger)
    hashes, secret = _hashes(ledger)
    assert len(hashes["a"]) == 64 and hashes["a"] == users_hash(ids, secret)  # the ids as written, trimmed
    assert hashes["a shuffled"] == hashes["a"]  # the same set in another order, with other posts
    assert hashes["b"] == users_hash(others, secret) != hashes["a"]
    assert users_hash(ids, b"another store's secret") != hashes["a"]
    data = _store_bytes(ledger)
    for u in ids + others:
        assert u.encode() not in data and u[:9].encode() not in data

    other_ledger = tmp_path / "other" / "ledger.sqlite"  # another store: another salt, another hash
    other_ledger.parent.mkdir()
    _register(tmp_path / "a.csv", "a", other_ledger)
    assert _hashes(other_ledger)[0]["a"] not in ("", hashes["a"])


def test_a_cli_release_records_the_hash_at_the_first_charge(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    ids = _ids("cordelia-")
    path = _write(tmp_path / "posts.csv", ids)
    r = dpsu("release", str(path), "-m", "policy-gaussian", "-e", "1", "-d", "1e-7", "--user-col", "user",
             "--text-col", "text", "-o", str(tmp_path / "out.csv"), "--ledger", str(ledger))  # fmt: skip
    assert r.returncode == 0, r.stderr
    hashes, secret = _hashes(ledger)
    assert list(hashes.values()) == [users_hash(ids, secret)]
    assert all(u.encode() not in _store_bytes(ledger) for u in ids)


def test_a_corpus_without_user_ids_has_no_hash(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(" ".join(WORDS[i : i + 5]) + "\n" for i in range(6)), encoding="utf-8")
    corpus = load_corpus(str(path))
    assert corpus.source.user_column is None and corpus.users_digest == b""
    assert salted_users_hash(corpus.users_digest, b"k") == ""
    with_ids = load_corpus(str(_write(tmp_path / "p.csv", _ids("d-"))), user_col="user", text_col="text")
    assert len(with_ids.users_digest) == 32 and "users_digest" not in repr(with_ids)


def test_the_apps_custodian_registration_keeps_the_hash(tmp_path):
    from dpsu_core.accounting import custodian
    from dpsu_core.accounting.account import recognise
    from dpsu_core.accounting.identity import local_user

    ids = _ids("dorothea-")
    corpus = load_corpus(str(_write(tmp_path / "posts.csv", ids)), user_col="user", text_col="text")
    with open_store(str(tmp_path / "ledger.sqlite")) as store:
        account = recognise(store, corpus, "posts.csv", by="ana")  # as the app's sidebar does on load
        assert account.corpus_id is None and account.users_hash == users_hash(ids, store.secret())
        registered = custodian.register_loaded(local_user(), account, "tickets", 5.0, 1e-5)
        assert store.corpus(registered.corpus_id).users_hash == users_hash(ids, store.secret())
