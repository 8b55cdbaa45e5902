"""The corpus fingerprint (issue 36.2): corpora known by their users' token sets after dpsu's own reading,
cleaning and tokenizing. Real files written to a temporary folder and read by ``load_corpus``: every edit of the
private corpus that the tokenizer ignores is the same corpus (refused as GW-KT's public corpus, through the CLI,
and as an exploration corpus); a file where 5% of the users are the private corpus's is another corpus with a
warning; other users of the same kind of text are no match and no warning. Hypothesis: the bytes round-trip and
the shares are symmetric."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsu_core.corpus import Corpus, corpus_from_token_lists, load_corpus
from dpsu_core.corpus.fingerprint import (
    KEYS,
    MIN_TOKENS,
    SAME_CANDIDATE,
    WARN_SHARE,
    CorpusFingerprint,
    check_content,
    content,
    fingerprint,
    match,
    salted_users_hash,
    users_hash,
)
from dpsu_core.corpus.intern import Interner
from dpsu_core.corpus.overlap import Fingerprinter, new_key
from dpsu_core.corpus.synthetic import zipf_corpus
from dpsu_core.errors import InputError
from dpsu_core.interfaces.cli import main
from tests.core.fingerprint_files import write_all

ROOT = Path(__file__).resolve().parents[2]
SECRET = os.urandom(32)
EDITS = [
    "bang.csv",
    "html.csv",
    "quoted.csv",
    "numbered.csv",
    "halves.csv",
    "merged.csv",
    "words_shuffled.csv",
    "soft_hyphens.csv",
    "zero_width.csv",
    "rows_shuffled.csv",
    "lf.csv",
    "one_more.csv",
    "same.jsonl",
    "renamed_padded.csv",
    "lower_tr.csv",
]


def known_for(name: str) -> str:
    """The private file an edit is made from (the Turkish lower-casing has its own capitalised original)."""
    return "private_tr.csv" if name == "lower_tr.csv" else "private.csv"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("fingerprint"))


@pytest.fixture(scope="module")
def prints(files):
    """Each file's fingerprint, from the corpus ``load_corpus`` builds."""
    return {name: fingerprint(load_corpus(path), SECRET) for name, path in files.items()}


@pytest.mark.parametrize("name", EDITS)
def test_each_edit_the_tokenizer_ignores_is_the_same_corpus(prints, name):
    found = match(prints[name], prints[known_for(name)])
    assert found.same and found.refused and not found.partial
    # nearly every user of the private corpus is found (lower-casing İ the Python way changes those words)
    assert found.known_found >= 0.75


def test_a_padded_copy_with_users_renamed_is_found_by_the_share_of_the_private_users(prints):
    found = match(prints["renamed_padded.csv"], prints["private.csv"])
    # 4.5 times as many other posts: a small share of the file's users, but all of the private corpus's
    assert found.known_found >= 0.8 and found.candidate_found < SAME_CANDIDATE and found.same
    assert prints["renamed_padded.csv"].users > 4 * prints["private.csv"].users


def test_a_file_with_five_percent_of_the_users_is_another_corpus_with_the_figure(prints):
    found = match(prints["five.csv"], prints["private.csv"])
    assert not found.same and found.partial
    assert 0.03 <= found.known_found <= 0.07 and 0.03 <= found.candidate_found <= 0.07
    assert "of its users' words are in this file" in found.warning("the exploration corpus")


def test_other_people_writing_the_same_kind_of_text_are_no_match(prints):
    found = match(prints["different.csv"], prints["private.csv"])
    assert found.known_tokens > 0.5  # they share most of the private corpus's words ...
    assert found.known_found < WARN_SHARE and found.candidate_found < WARN_SHARE  # ... but not its people
    assert not found.same and not found.partial


def test_two_synthetic_corpora_over_one_vocabulary_are_no_match():
    a = fingerprint(zipf_corpus(6000, 2000, 200, seed=1), SECRET)
    b = fingerprint(zipf_corpus(6000, 2000, 200, seed=2), SECRET)
    found = match(a, b)
    assert found.known_tokens > 0.5 and found.known_found < WARN_SHARE and not found.partial


def _rows(corpus: Corpus, rows: np.ndarray) -> Corpus:
    """The corpus of these users only (same vocabulary)."""
    lengths = np.diff(corpus.indptr)[rows]
    take = np.concatenate([np.arange(corpus.indptr[r], corpus.indptr[r + 1]) for r in rows])
    indptr = np.zeros(rows.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return Corpus(indptr, corpus.items[take], corpus.counts[take], corpus.vocab, corpus.ngram_len, corpus.gram_tokens)


def test_a_sample_of_the_users_is_the_same_corpus_and_the_shares_say_how_much():
    big = zipf_corpus(8000, 3000, 200, seed=3)
    rows = np.random.default_rng(0).permutation(big.n_users)
    whole, sample = fingerprint(big, SECRET), fingerprint(_rows(big, np.sort(rows[:2000])), SECRET)
    found = match(sample, whole)
    assert found.candidate_found >= 0.9 and found.same  # the sample's users are all the corpus's
    counted = int((np.diff(big.indptr) >= MIN_TOKENS).sum())
    assert abs(found.known_found - sample.users / counted) < 0.05  # a quarter of the corpus's users
    other = fingerprint(_rows(big, np.sort(rows[2000:])), SECRET)
    assert match(other, sample).known_found < WARN_SHARE  # the rest of the users: nobody in common


def test_the_message_names_the_corpus_and_the_share(prints):
    said = match(prints["rows_shuffled.csv"], prints["private.csv"]).says("support-tickets")
    assert said.startswith("this is corpus 'support-tickets' (") and said.endswith("% of its users' words)")
    share = float(said.split("(")[1].split("%")[0])
    assert 90 <= share <= 100


def test_fingerprints_made_under_other_secrets_are_not_compared(prints, files):
    other = fingerprint(load_corpus(files["private.csv"]), os.urandom(32))
    with pytest.raises(ValueError, match="different secrets"):
        match(other, prints["private.csv"])


def test_the_fingerprint_stays_small_whatever_the_corpus_size():
    fp = fingerprint(zipf_corpus(60_000, 20_000, 100, seed=4), SECRET)
    assert fp.keys.shape[0] == KEYS and len(fp.to_bytes()) < 1_000_000
    assert CorpusFingerprint.from_bytes(fp.to_bytes()).key_tau == fp.key_tau


def test_a_damaged_blob_is_one_clear_error(prints):
    blob = prints["private.csv"].to_bytes()
    with pytest.raises(InputError, match="truncated"):
        CorpusFingerprint.from_bytes(blob[:-3])
    with pytest.raises(InputError, match="not a dpsu corpus fingerprint"):
        CorpusFingerprint.from_bytes(b"PK" + blob[2:])


def test_users_hash_is_the_set_of_ids_under_the_salt():
    salt = os.urandom(32)
    ids = [f"user{i}" for i in range(500)]
    h = users_hash(ids, salt)
    assert users_hash(list(reversed(ids)) + ids[:10], salt) == h  # order and repeats do not matter
    assert users_hash(ids[:-1], salt) != h and users_hash(ids, os.urandom(32)) != h
    assert "user1" not in h and len(h) == 64
    assert users_hash(pa.chunked_array([ids[250:], ids[:250]]), salt) == h  # as the loader's columns come


def test_the_blob_holds_hashes_only(prints, files):
    blob = prints["private.csv"].to_bytes()
    words = {w for line in files["private.csv"].read_text(encoding="utf-8").splitlines()[1:50] for w in line.split()}
    assert not [w for w in words if len(w) >= 6 and w.encode() in blob]


# ---- the checks where the files are used ------------------------------------------------------------------
def _content(path: Path, key):
    posts = Fingerprinter(key)
    corpus = load_corpus(path, on_batch=posts.add)
    return content(corpus, posts.finish(), key)


@pytest.fixture(scope="module")
def contents(files):
    """Each file's content as the app makes it on an upload (its posts as read, its users' tokens once built)."""
    key = new_key()
    return {name: _content(path, key) for name, path in files.items()}


@pytest.mark.parametrize("name", EDITS)
def test_each_edit_is_refused_as_an_exploration_corpus(contents, name):
    with pytest.raises(InputError, match="this file is the private corpus, by its users' words"):
        check_content(contents[name], contents[known_for(name)], "the exploration corpus")


def test_the_five_percent_file_is_explored_with_the_warning_and_the_other_file_in_silence(contents):
    said = check_content(contents["five.csv"], contents["private.csv"], "the exploration corpus")
    assert said.startswith("some of the private corpus's users are in this file") and "% of its users' words" in said
    assert check_content(contents["different.csv"], contents["private.csv"], "the exploration corpus") == ""


RELEASE = ["-m", "gw-kt", "-e", "1", "-d", "1e-6"]


@pytest.mark.parametrize("name", EDITS)
def test_each_edit_is_refused_as_gwkts_public_corpus(files, name, tmp_path, capsys):
    out = tmp_path / "o.csv"
    argv = ["release", files[known_for(name)], *RELEASE, "--public-corpus", files[name], "-o", out]
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    (line,) = err.strip().splitlines()
    assert line.startswith(f"dpsu: error: --public-corpus {name}: this file is the private corpus, by its users'")


def _cli(*argv) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "dpsu_core.interfaces.cli", *map(str, argv)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def test_the_cli_refuses_a_padded_renamed_copy_and_warns_of_five_percent(files, tmp_path):
    out = tmp_path / "o.csv"
    run = _cli("release", files["private.csv"], *RELEASE, "--public-corpus", files["renamed_padded.csv"], "-o", out)
    assert run.returncode == 2 and not out.exists()
    (line,) = run.stderr.strip().splitlines()
    assert "--public-corpus renamed_padded.csv: this file is the private corpus" in line and "PUBLIC" in line
    run = _cli("release", files["private.csv"], *RELEASE, "--public-corpus", files["five.csv"], "-o", out)
    assert run.returncode == 0 and out.exists()
    (warning,) = [x for x in run.stderr.splitlines() if "--public-corpus five.csv" in x]
    assert warning.startswith("warning (raw data, not private)") and "of its users' words are in this file" in warning
    # the same request on the same corpus again: a deliberate second spend
    run = _cli(
        "release", files["private.csv"], *RELEASE, "--public-corpus", files["different.csv"], "-o", out, "--spend-again"
    )
    assert run.returncode == 0 and "--public-corpus different.csv" not in run.stderr


# ---- properties -------------------------------------------------------------------------------------------
WORDS = st.lists(st.sampled_from([f"w{i}" for i in range(40)]), min_size=1, max_size=12)
CORPORA = st.lists(st.lists(WORDS, min_size=1, max_size=3), min_size=1, max_size=30)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CORPORA, CORPORA)
def test_bytes_round_trip_and_shares_are_symmetric(a_users, b_users):
    a = fingerprint(corpus_from_token_lists(a_users), SECRET)
    b = fingerprint(corpus_from_token_lists(b_users), SECRET)
    back = CorpusFingerprint.from_bytes(a.to_bytes())
    assert back.to_bytes() == a.to_bytes() and match(back, b) == match(a, b)
    ab, ba = match(a, b), match(b, a)
    assert ab.known_found == ba.candidate_found and ab.candidate_found == ba.known_found
    assert ab.known_tokens == ba.candidate_tokens
    if a.users:  # a corpus is itself, when any of its users counts
        assert match(a, a).known_found == 1.0
    else:
        assert match(a, a).known_found == 0.0 and not match(a, a).same


def test_the_id_set_digest_settles_equal_keys_by_their_bytes():
    # "ab" and "ab\0" share their intern key (a short string's key is its bytes packed), and so do "a" and "a\0\0":
    # the canonical order must put such ties in one order whatever the input order
    ids = ["ab", "ab\x00", "a", "a\x00\x00", "a-long-user-id-000001", "a-long-user-id-000002", ""]
    salt = os.urandom(32)
    hashes = set()
    for seed in range(6):
        random.Random(seed).shuffle(ids)
        interned = Interner(4)
        interned.add_strings(pa.array(ids))
        hashes.add(salted_users_hash(interned.digest(), salt))
    assert hashes == {users_hash(ids, salt)}
    assert users_hash([i for i in ids if i != "ab\x00"], salt) not in hashes
