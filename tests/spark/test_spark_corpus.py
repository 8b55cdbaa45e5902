"""The Spark engine builds the local engine's corpus: same vocabulary (ids included), users, per-user
items and counts, notes; from CSV, Parquet and JSONL; and bad input fails with one clear message."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpsu_core.corpus import load_corpus
from dpsu_core.engines.spark import load_spark_corpus
from dpsu_core.errors import ColumnError, EmptyCorpusError, InputError
from dpsu_core.wording import CLI_OPTIONS, speak

from .conftest import corpus_rows


def _assert_same_corpus(local, spark_built):
    for name in ("indptr", "items", "counts", "ngram_len", "gram_tokens", "vocab"):
        assert np.array_equal(getattr(local, name), getattr(spark_built, name)), name
    assert (local.n_posts, local.n_tokens) == (spark_built.n_posts, spark_built.n_tokens)
    s, sp = local.source, spark_built.source
    assert (s.rows_read, s.rows_dropped_no_user, s.rows_dropped_no_text, s.rows_dropped_removed) == (
        sp.rows_read,
        sp.rows_dropped_no_user,
        sp.rows_dropped_no_text,
        sp.rows_dropped_removed,
    )
    assert set(s.notes) <= set(sp.notes)  # the same header detection, drop counts and preprocessing notes
    assert s.header == sp.header


def test_headerless_csv_detected_like_the_local_reader(spark, tmp_path):
    """No header row: both engines detect it from the first rows (the same rule) and read the same corpus."""
    rows = [(u, t) for u, t in corpus_rows(n_users=20, seed=4) if u.strip() and t.strip()]
    path = tmp_path / "nohead.csv"
    path.write_text("".join(f'{u.strip()},"{t}"\n' for u, t in rows if '"' not in t), encoding="utf-8")
    local = load_corpus(path, user_col=0, text_col=1)
    built = load_spark_corpus(str(path), spark=spark, user_col=0, text_col=1)
    assert not local.source.header.startswith("the first row is a header")
    _assert_same_corpus(local, built.to_corpus())


def test_the_distributed_corpus_is_not_a_corpus(spark_corpus3):
    """A mechanism that reads the users' rows from what the Spark engine hands the parallel mechanisms gets an
    error saying so, never an empty corpus; user ids stay on the executors as digests."""
    from dpsu_core.corpus.model import Corpus
    from dpsu_core.engines.keyed import SaltSource, string_keys
    from dpsu_core.engines.spark import SparkRows
    from dpsu_core.mechanisms.registry import get_mechanism
    from dpsu_core.mechanisms.seam import RowsElsewhere, RowsNotHere

    view = SparkRows(spark_corpus3, SaltSource(seed=1))
    assert not isinstance(spark_corpus3, Corpus) and not isinstance(view, Corpus)
    assert isinstance(view, RowsElsewhere)  # the engine seam
    assert view.n_items == spark_corpus3.n_items and view.n_users == spark_corpus3.n_users
    assert not hasattr(view, "indptr")
    sequential = get_mechanism("policy-gaussian", epsilon=1.0, delta=1e-5)
    with pytest.raises(RowsNotHere, match="Policy Gaussian visits the users one by one"):
        sequential.release(view)
    names = {u.strip() for u, _ in corpus_rows()} - {""}
    ukeys = set(spark_corpus3.rows.select("ukey").toArrow().column("ukey").to_numpy().view(np.uint64).tolist())
    assert len(ukeys) == spark_corpus3.n_users and ukeys <= set(string_keys(sorted(names)).tolist())
    assert set(spark_corpus3.rows.columns) == {"part", "ukey", "ufirst", "n", "items", "counts"}


def test_csv_trigrams_identical_to_local(spark_corpus3, local_corpus3):
    corpus = spark_corpus3.to_corpus()
    _assert_same_corpus(local_corpus3, corpus)
    assert local_corpus3.max_n == 3 and (local_corpus3.ngram_len == 3).any()
    assert local_corpus3.source.rows_dropped_removed == 2 and local_corpus3.source.rows_dropped_no_user == 1
    assert spark_corpus3.n_users == corpus.n_users and spark_corpus3.nnz == corpus.nnz
    assert "late" not in repr(spark_corpus3)  # never prints data


@pytest.mark.parametrize(
    ("fmt", "options"),
    [
        ("parquet", {"user_pattern": r"^(user\d)", "drop_digits": True, "stop_words": "english"}),
        ("jsonl", {"row_is_user": True, "tokenizer": "treebank", "keep_html": None}),
    ],
)
def test_parquet_and_jsonl_with_options_identical_to_local(spark, tmp_path, fmt, options):
    """The loading options go through the same core functions on both engines (a user pattern, each row its
    own user, token filters, the treebank tokenizer)."""
    options = {k: v for k, v in options.items() if k != "keep_html"}
    rows = corpus_rows(n_users=30, seed=1) + [("user7", "in 1999 and 2024 we were the 42 of them")]
    users, texts = [r[0] for r in rows], [r[1] for r in rows]
    if fmt == "parquet":
        path = tmp_path / "posts.parquet"
        pq.write_table(pa.table({"author": users, "body": texts}), path)
    else:
        path = tmp_path / "posts.jsonl"
        path.write_text("".join(json.dumps({"body": t}) + "\n" for _, t in rows), encoding="utf-8")
    local = load_corpus(path, max_n=2, **options)
    built = load_spark_corpus(str(path), spark=spark, max_n=2, **options)
    _assert_same_corpus(local, built.to_corpus())
    assert built.source.privacy_unit == local.source.privacy_unit


def test_bad_input_says_what_to_fix(spark, tmp_path, csv_path):
    (tmp_path / "posts.data").write_text("user,text\na,b\n", encoding="utf-8")
    with pytest.raises(InputError, match="from its name; give") as err:
        load_spark_corpus(str(tmp_path / "posts.data"), spark=spark)
    assert "--format" in speak(str(err.value), CLI_OPTIONS) and "--" not in str(err.value)  # named by the CLI
    with pytest.raises(InputError, match="check the path"):
        load_spark_corpus(str(tmp_path / "missing.csv"), spark=spark)
    with pytest.raises(ColumnError, match="no user column named 'who'"):
        load_spark_corpus(csv_path, spark=spark, user_col="who", text_col="text")
    one = tmp_path / "one.csv"
    one.write_text("user,text\nsolo,hello there\nsolo,again\n", encoding="utf-8")
    with pytest.raises(EmptyCorpusError, match="1 user with tokens"):
        load_spark_corpus(str(one), spark=spark)


def test_padded_users_meet_in_one_partition(spark, tmp_path, monkeypatch):
    """Without a user pattern the posts are shuffled by the user with white space removed, and trimmed on the
    executors: a user padded with tabs, no-break or ideographic spaces is one user, over many partitions."""
    import dpsu_core.engines.spark_load as engine

    pads = ["{}", "\u00a0{}\t", "\u3000{} ", " \u2003{}"]
    rows = [(pad.format(f"u{i}"), f"word{i} w{j} shared") for i in range(40) for j, pad in enumerate(pads)]
    path = tmp_path / "padded.csv"
    path.write_text("user,text\n" + "".join(f'"{u}","{t}"\n' for u, t in rows), encoding="utf-8")
    monkeypatch.setattr(engine, "PART_BYTES", max(1, path.stat().st_size // 8))  # 8 partitions at least
    local = load_corpus(path, user_col="user", text_col="text")
    built = load_spark_corpus(str(path), spark=spark, user_col="user", text_col="text")
    assert local.n_users == built.n_users == 40
    _assert_same_corpus(local, built.to_corpus())
