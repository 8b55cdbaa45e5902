"""Keyed per-user sampling (the Spark engine's step 2): SipHash-2-4 as published, a uniform Delta0-subset per
user, independent of other users and of who else is in the corpus, fresh per salt; and ``import dpsu_core``
does not import pyspark."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from scipy.stats import chisquare

from dpsu_core.engines.keyed import SaltSource, sample_rows, siphash16, string_keys


def _csr(rows):
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    return indptr, np.array([x for r in rows for x in r], dtype=np.int64)


ITEM_KEYS = string_keys(f"item{i}" for i in range(100))


def _users(n, start=0):
    return string_keys(f"user{i}" for i in range(start, start + n))


def test_siphash_matches_the_published_test_vector():
    """Aumasson and Bernstein's SipHash-2-4 test vector: key 00..0f, message 00..0f (16 bytes)."""
    word = lambda b: np.uint64(int.from_bytes(bytes(b), "little"))  # noqa: E731
    out = int(siphash16(word(range(8)), word(range(8, 16)), word(range(8)), word(range(8, 16))))
    assert out.to_bytes(8, "little") == bytes.fromhex("db9bc2577fcc2a3f")


def test_string_keys_are_blake2b_of_the_utf8_bytes():
    import hashlib

    keys = string_keys(["naïve", "東京", "naïve"])
    assert keys[0] == keys[2] != keys[1]
    assert int(keys[1]) == int.from_bytes(hashlib.blake2b("東京".encode(), digest_size=8).digest(), "little")


def test_a_users_sample_does_not_depend_on_the_other_users():
    """The key of a pair depends on the two strings and the salt only: adding users before someone, or
    renumbering them, leaves that user's kept set as it was."""
    salt = SaltSource(seed=3).next()
    row = [[3, 8, 13, 21, 34, 55, 89]]
    alone = sample_rows(*_csr(row), _users(1, start=7), ITEM_KEYS, salt, 3)[1]
    indptr, items = _csr([[1, 2, 3, 4, 5, 6], [9, 8, 7, 6, 5]] + row)
    crowd_users = np.concatenate([_users(2, start=100), _users(1, start=7)])
    crowded = sample_rows(indptr, items, crowd_users, ITEM_KEYS, salt, 3)
    assert crowded[1][crowded[0][2] : crowded[0][3]].tolist() == alone.tolist()


def test_short_rows_kept_whole_long_rows_cut_to_a_subset():
    indptr, items = _csr([[1, 2], [3, 4, 5, 6, 7], [], [8, 9, 10]])
    out_ptr, kept = sample_rows(indptr, items, _users(4), ITEM_KEYS, (11, 22), 3)
    assert np.diff(out_ptr).tolist() == [2, 3, 0, 3]
    assert kept[:2].tolist() == [1, 2] and kept[5:].tolist() == [8, 9, 10]
    assert set(kept[2:5].tolist()) <= {3, 4, 5, 6, 7} and len(set(kept[2:5].tolist())) == 3
    # max_items <= 0 keeps everything
    assert np.array_equal(sample_rows(indptr, items, _users(4), ITEM_KEYS, (11, 22), 0)[1], items)


def test_subset_is_uniform_over_salts():
    """Each 2-subset of a 5-item row is equally likely over fresh salts (chi-square over the 10 subsets)."""
    indptr, items = _csr([[10, 20, 30, 40, 50]])
    salts = SaltSource(seed=1)
    seen: dict[tuple, int] = {}
    for _ in range(5000):
        kept = tuple(sorted(sample_rows(indptr, items, _users(1, start=7), ITEM_KEYS, salts.next(), 2)[1].tolist()))
        seen[kept] = seen.get(kept, 0) + 1
    assert len(seen) == 10
    assert chisquare(list(seen.values())).pvalue > 1e-4


def test_users_get_independent_subsets():
    """Two users with the same row under one salt: their choices agree about as often as chance (1/10)."""
    rows = [[1, 2, 3, 4, 5]] * 2000
    indptr, items = _csr(rows)
    ptr, kept = sample_rows(indptr, items, _users(2000), ITEM_KEYS, SaltSource(seed=2).next(), 2)
    sets = [tuple(sorted(kept[ptr[i] : ptr[i + 1]].tolist())) for i in range(2000)]
    same = sum(a == b for a, b in zip(sets[::2], sets[1::2]))
    assert 60 < same < 140  # Binomial(1000, 0.1): mean 100, sd 9.5


def test_salts_come_from_the_os_unless_seeded():
    a, b = SaltSource(), SaltSource()
    assert a.next() != b.next()
    assert SaltSource(seed=5).next() == SaltSource(seed=5).next()


def test_import_dpsu_core_does_not_import_pyspark():
    code = "import sys, dpsu_core, dpsu_core.engines.spark, dpsu_core.interfaces.cli; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
