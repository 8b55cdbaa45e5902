"""The content check of public files (``dpsu_core.corpus.overlap``, issue 27.1): SipHash-2-4 against the paper's test
vectors and an independent pure-Python implementation, the normalisation against Python's own Unicode functions,
and the decision on the copies of a private file that a byte comparison lets through."""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus import LoadOptions, load_corpus
from dpsu_core.corpus.overlap import (
    REFUSE_PAIRS,
    REFUSE_SHARE,
    Fingerprinter,
    check_public,
    compare,
    fingerprint,
    hash_normalised,
    new_key,
    siphash,
)
from dpsu_core.errors import InputError
from tests.core.overlap_files import csv_bytes, private_rows, write_all

PAPER_KEY = (int.from_bytes(bytes(range(8)), "little"), int.from_bytes(bytes(range(8, 16)), "little"))


def _sip_reference(data: bytes, key: tuple[int, int]) -> int:
    """SipHash-2-4 written from the paper (Aumasson and Bernstein 2012, section 2), in plain Python."""
    mask = (1 << 64) - 1

    def rotl(x: int, b: int) -> int:
        return ((x << b) | (x >> (64 - b))) & mask

    v = [key[0] ^ 0x736F6D6570736575, key[1] ^ 0x646F72616E646F6D, key[0] ^ 0x6C7967656E657261]
    v.append(key[1] ^ 0x7465646279746573)

    def sipround() -> None:
        v[0] = (v[0] + v[1]) & mask
        v[1] = rotl(v[1], 13) ^ v[0]
        v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & mask
        v[3] = rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & mask
        v[3] = rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & mask
        v[1] = rotl(v[1], 17) ^ v[2]
        v[2] = rotl(v[2], 32)

    tail = len(data) % 8
    blocks = [int.from_bytes(data[i : i + 8], "little") for i in range(0, len(data) - tail, 8)]
    blocks.append(int.from_bytes(data[len(data) - tail :], "little") | ((len(data) & 0xFF) << 56))
    for m in blocks:
        v[3] ^= m
        sipround()
        sipround()
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        sipround()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def test_siphash_matches_the_papers_test_vectors():
    # the reference implementation's vectors: key 00..0f, message 00..(n-1)
    assert siphash(b"", PAPER_KEY) == 0x726FDB47DD0E0E31
    assert siphash(bytes(range(8)), PAPER_KEY) == 0x93F5F5799A932462
    assert siphash(bytes(range(15)), PAPER_KEY) == 0xA129CA6149BE45E5  # the paper's appendix A example


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=70), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_siphash_matches_an_independent_implementation(data, k0, k1):
    assert siphash(data, (k0, k1)) == _sip_reference(data, (k0, k1))


def _python_normal(s: str) -> str:
    """The normalisation as Python spells it: NFC, lower case (with casefold's ß and final sigma), white space
    runs as one space, trimmed."""
    s = unicodedata.normalize("NFC", s).lower().replace("ß", "ss").replace("ς", "σ")
    return " ".join(s.split())


# letters whose lower case Arrow and Python agree on, combining marks, and white space of both kinds
ALPHABET = "aAzZß ΣσςΑαéÉe\u0301E\u0301\u00a0\u2003\t\n\r\x0b\x0c ÅÖøЖжĳ,.!"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET, max_size=30), min_size=1, max_size=20))
def test_normalised_hash_is_the_hash_of_the_python_normal_form(texts):
    key = new_key()
    hashes, ok = hash_normalised(pa.array(texts, pa.large_string()), key)
    for text, h, good in zip(texts, hashes, ok):
        normal = _python_normal(text)
        assert bool(good) == (normal != "")
        if normal:
            assert int(h) == _sip_reference(normal.encode(), key)


def test_same_post_written_differently_has_one_hash():
    key = new_key()
    texts = ["Hello  World", " hello world ", "HELLO\tworld\r\n", "hello\u00a0world", "Straße", "STRASSE", None, "  "]
    h, ok = hash_normalised(pa.array(texts), key)
    assert len({int(x) for x in h[:4]}) == 1 and h[4] == h[5]
    assert list(ok) == [True] * 6 + [False, False]


def test_keys_come_from_the_os_and_fingerprints_of_two_keys_do_not_compare(tmp_path):
    assert new_key() != new_key()
    path = tmp_path / "p.csv"
    path.write_bytes(csv_bytes(private_rows(50, 10)))
    with pytest.raises(ValueError):
        compare(fingerprint(path, new_key()), fingerprint(path, new_key()))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("overlap"), private_rows())


@pytest.mark.parametrize("name", ["lf.csv", "shuffled.csv", "one_more.csv", "same.jsonl"])
def test_copies_a_byte_comparison_misses_are_refused(files, name):
    key = new_key()
    assert files[name].read_bytes() != files["private.csv"].read_bytes()
    private = fingerprint(files["private.csv"], key)
    found = compare(fingerprint(files[name], key), private)
    assert found.refused and found.shared_posts == 3000 and found.shared_pairs == 3000
    assert found.posts == (3001 if name == "one_more.csv" else 3000)
    with pytest.raises(InputError) as err:
        check_public(fingerprint(files[name], key), private, "the exploration corpus")
    message = str(err.value)
    assert "\n" not in message and "of its distinct posts (3,000 of 3," in message and "PUBLIC" in message


def test_a_file_sharing_five_percent_of_its_posts_is_accepted_with_the_figure(files):
    key = new_key()
    found = check_public(fingerprint(files["five.csv"], key), fingerprint(files["private.csv"], key), "x")
    assert found is not None and not found.refused and found.any
    assert (found.posts, found.shared_posts, found.shared_pairs) == (2000, 100, 0)
    assert "5.0% of its distinct posts (100 of 2,000)" in found.warning("GW-KT's public corpus")


def test_the_refusal_limits_are_the_documented_ones(tmp_path):
    rows = private_rows(1000, 100)
    key = new_key()
    (tmp_path / "p.csv").write_bytes(csv_bytes(rows))
    private = fingerprint(tmp_path / "p.csv", key)
    other = [(f"q{i % 50}", f"something else entirely {i}") for i in range(1000)]

    def found(public_rows):
        (tmp_path / "c.csv").write_bytes(csv_bytes(public_rows))
        return compare(fingerprint(tmp_path / "c.csv", key), private)

    # exactly REFUSE_PAIRS of the private (user, post) pairs: warned; one more: refused (a 1.1% share)
    at = found(other[: 1000 - REFUSE_PAIRS] + rows[:REFUSE_PAIRS])
    assert not at.refused and at.shared_pairs == REFUSE_PAIRS
    over = found(other[: 999 - REFUSE_PAIRS] + rows[: REFUSE_PAIRS + 1])
    assert over.refused and over.share < REFUSE_SHARE
    # the same posts under other users: only the share counts (just below 20%: warned; at 20%: refused)
    below = int(1000 * REFUSE_SHARE) - 1
    renamed = [(f"q{i}", t) for i, (_, t) in enumerate(rows)]
    assert not found(other[: 1000 - below] + renamed[:below]).refused
    assert found(other[: 1000 - below - 1] + renamed[: below + 1]).refused


def test_a_folder_of_parts_reads_as_the_whole_file(files):
    key = new_key()
    whole, parts = fingerprint(files["private.csv"], key), fingerprint(files["private_parts.csv"], key)
    assert (whole.posts == parts.posts).all() and whole.pairs is not None and parts.pairs is not None
    assert (whole.pairs == parts.pairs).all() and whole.rows == parts.rows == 3000


def test_the_load_hook_fingerprints_what_a_separate_read_does(files):
    key = new_key()
    hooked = Fingerprinter(key)
    corpus = load_corpus(files["shuffled.csv"], LoadOptions(), on_batch=hooked.add)
    assert corpus.n_users == 300
    got, separate = hooked.finish(), fingerprint(files["shuffled.csv"], key)
    assert (got.posts == separate.posts).all() and got.rows == separate.rows


def test_a_file_without_users_compares_posts_only(tmp_path):
    key = new_key()
    rows = private_rows(400, 40)
    (tmp_path / "p.csv").write_bytes(csv_bytes(rows))
    (tmp_path / "t.txt").write_text("\n".join(t.upper() for _, t in rows) + "\n")
    found = compare(fingerprint(tmp_path / "t.txt", key), fingerprint(tmp_path / "p.csv", key))
    assert found.pairs is None and found.shared_pairs == 0 and found.share == 1.0 and found.refused


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["u1", "U1 ", "u2", "", "  ", None]),
            st.sampled_from(["the cat", "The  CAT", "a dog", "", None, "straße", "ok"]),
            st.booleans(),
        ),
        max_size=40,
    ),
    public=st.lists(
        st.tuples(st.sampled_from(["u1", "u3", ""]), st.sampled_from(["the cat", "strasse", "x", "a dog"])),
        max_size=12,
    ),
    cuts=st.lists(st.integers(0, 40), max_size=4),
    with_users=st.booleans(),
)
def test_hits_counted_in_passes_over_any_batches_give_compares_figures(rows, public, cuts, with_users):
    """``PassHits`` (the Spark engine's in-pass check: any split of the rows into passes and batches, skipped
    rows left out) gives exactly ``compare``'s figure against the fingerprint of the rows it keeps."""
    from dpsu_core.corpus.overlap import PassHits, found_in_pass

    key = new_key()
    cand = Fingerprinter(key)
    cand.add(pa.array([u for u, _ in public], pa.string()), pa.array([t for _, t in public], pa.string()))
    candidate = cand.finish()
    kept = Fingerprinter(key)
    kept_rows = [(u, t) for u, t, skip in rows if not skip]
    kept.add(
        pa.array([u for u, _ in kept_rows], pa.string()) if with_users else None,
        pa.array([t for _, t in kept_rows], pa.string()),
    )
    bounds = sorted({0, len(rows), *[min(c, len(rows)) for c in cuts]})
    packed = []
    for a, b in zip(bounds, bounds[1:]):  # each slice a pass of its own (a partition), as two batches
        hits = PassHits(candidate)
        for lo, hi in ((a, (a + b) // 2), ((a + b) // 2, b)):
            part = rows[lo:hi]
            hits.add(
                pa.array([u for u, _, _ in part], pa.string()) if with_users else None,
                pa.array([t for _, t, _ in part], pa.string()),
                skip=np.array([s for _, _, s in part], bool),
            )
        packed.append(hits.packed())
    assert found_in_pass(candidate, packed, with_users) == compare(candidate, kept.finish())
