"""The Spark engine's rows keep each partition's own item ids (no renumbering job): the driver merges the
partitions' items into the local engine's vocabulary and maps every partition's ids to it (``IdMaps``). Run
here on the executors' own functions, without a JVM: the posts split into partitions by user give, once
mapped, the vocabulary, rows and histogram of the same posts built as one partition (the local engine's
build), and importing the engine's modules needs no pyspark for it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from dpsu_core.corpus.load import LoadOptions
from dpsu_core.engines import spark_build, spark_corpus
from dpsu_core.engines.keyed import string_keys
from dpsu_core.engines.spark_ids import IdMaps, merge_items

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "東京", "naïve"]


def _posts(n_users: int = 60, n_posts: int = 400, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    users = [f"user{int(rng.integers(0, n_users))}" for _ in range(n_posts)]
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(0, 12))).tolist()) for _ in range(n_posts)]
    return pa.table(
        {
            "user": pa.array(users),
            "text": pa.array(texts),
            "pos": pa.array(np.arange(n_posts, dtype=np.int64) * 7 + 5),  # read positions need not be dense
            "bad": pa.array(np.zeros(n_posts, dtype=bool)),
            "unmatched": pa.array(np.zeros(n_posts, dtype=bool)),
        }
    )


def _build(posts: pa.Table, max_n: int) -> pa.Table:
    return pa.Table.from_batches(
        list(spark_build.partition_build(posts.to_batches(max_chunksize=97), opts=LoadOptions(max_n=max_n)))
    )


def _partitions(posts: pa.Table, n_parts: int) -> list[pa.Table]:
    """Each user's posts in one partition (as the shuffle puts them), a partition's posts in any order."""
    part = np.array([hash(u) % n_parts for u in posts.column("user").to_pylist()])
    rng = np.random.default_rng(0)
    out = []
    for p in range(n_parts):
        idx = np.flatnonzero(part == p)
        out.append(posts.take(pa.array(rng.permutation(idx))))
    return out


def _of_kind(tab: pa.Table, kind: int) -> pa.Table:
    return tab.filter(pa.array(tab.column("kind").to_numpy() == kind))


def _merged(tabs: list[pa.Table], max_n: int):
    built = pa.concat_tables(tabs)
    vocab, maps = merge_items(_of_kind(built, spark_build.ITEM), max_n)
    return vocab, maps, _of_kind(built, spark_build.USER).select(list(spark_build.ROW_COLUMNS))


def _rows_by_user(rows: pa.Table, maps: IdMaps) -> dict[int, tuple[list[int], list[int]]]:
    ptr, local = spark_build.unblob(rows.column("items").combine_chunks())
    counts = spark_build.unblob(rows.column("counts").combine_chunks())[1]
    ids = maps.to_global(rows.column("part").to_numpy(), ptr, local)
    ids, counts = spark_corpus._sorted_rows(ptr, ids, counts)
    first = rows.column("ufirst").to_numpy()
    return {
        int(first[r]): (ids[ptr[r] : ptr[r + 1]].tolist(), counts[ptr[r] : ptr[r + 1]].tolist())
        for r in range(len(first))
    }


@pytest.mark.parametrize("max_n", [1, 3])
def test_partition_ids_mapped_give_the_one_partition_build(max_n):
    posts = _posts()
    whole_vocab, whole_maps, whole_rows = _merged([_build(posts, max_n)], max_n)
    vocab, maps, rows = _merged([_build(p, max_n) for p in _partitions(posts, 3)], max_n)
    assert len(maps.parts) == 3 and len(whole_maps.parts) == 1
    assert vocab.strings.to_pylist() == whole_vocab.strings.to_pylist()
    assert np.array_equal(vocab.ngram_len, whole_vocab.ngram_len)
    assert np.array_equal(vocab.gram_tokens, whole_vocab.gram_tokens)
    assert (vocab.ngram_len == max_n).any()
    assert _rows_by_user(rows, maps) == _rows_by_user(whole_rows, whole_maps)


def test_one_partition_is_numbered_as_the_local_engine(tmp_path):
    """One partition: its own ids are the vocabulary's (the identity map), and the vocabulary and rows are the
    local engine's (``load_corpus`` of the same posts)."""
    import csv

    from dpsu_core.corpus import load_corpus

    posts = _posts()
    path = tmp_path / "posts.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [["user", "text"], *zip(posts.column("user").to_pylist(), posts.column("text").to_pylist())]
        )
    vocab, maps, rows = _merged([_build(posts, 2)], 2)
    local = load_corpus(path, user_col="user", text_col="text", max_n=2)
    assert vocab.strings.to_pylist() == list(local.vocab)
    assert np.array_equal(maps.ids, np.arange(len(local.vocab), dtype=np.int32))
    mine = _rows_by_user(rows, maps)
    assert [mine[k][0] for k in sorted(mine)] == [
        local.items[local.indptr[u] : local.indptr[u + 1]].tolist() for u in range(local.n_users)
    ]


@pytest.mark.parametrize("eligible", [False, True])
def test_histogram_over_partition_ids_matches_the_one_partition_histogram(eligible):
    posts = _posts(n_users=40, n_posts=500)
    whole_vocab, whole_maps, whole_rows = _merged([_build(posts, 2)], 2)
    vocab, maps, rows = _merged([_build(p, 2) for p in _partitions(posts, 4)], 2)
    n = len(vocab.strings)
    keys = string_keys(vocab.strings.to_pylist())
    bits = np.packbits(np.arange(n) % 3 != 0) if eligible else None

    def hist(tab: pa.Table, id_maps: IdMaps) -> np.ndarray:
        h = np.zeros(n)
        for rb in spark_corpus.histogram_batches(
            tab.to_batches(max_chunksize=9), n, 4, 0.5, (11, 12), keys, bits, id_maps
        ):
            np.add.at(h, rb.column("id").to_numpy(), rb.column("h").to_numpy())
        return h

    got, want = hist(rows, maps), hist(whole_rows, whole_maps)
    assert got.sum() > 0 and np.allclose(got, want, rtol=1e-12, atol=0)
    if eligible:
        assert not got[np.arange(n) % 3 == 0].any()
