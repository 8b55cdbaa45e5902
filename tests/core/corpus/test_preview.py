"""The Corpus page's look at a file before loading it (dpsu_core.corpus.preview): the column facts come from the
readers that load the file, over every row."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from dpsu_core.corpus import LoadOptions, load_corpus
from dpsu_core.corpus.preview import SHOWN_ROWS, preview, survey
from tests.column_fixtures import AIRLINE_ROWS, AIRLINE_USERS, airline_tweets

N_ROWS = AIRLINE_ROWS
N_USERS = AIRLINE_USERS


def _tweets(tmp_path):
    path = tmp_path / "tweets.csv"
    path.write_bytes(airline_tweets())
    return path


def test_facts_count_the_whole_file_past_a_malformed_row(tmp_path):
    path = _tweets(tmp_path)
    pv = preview(path, user_col="name", text_col="text")
    facts = {f.name: f for f in pv.facts}
    assert pv.complete and pv.n_rows == N_ROWS + 1  # every row but the malformed one
    assert facts["name"].distinct == N_USERS + 1 and facts["name"].rows == N_ROWS + 1
    assert facts["airline"].distinct == 6
    assert facts["tweet_id"].distinct == N_ROWS + 1
    assert "all 7,501 rows" in pv.coverage
    assert any("1 malformed rows" in n for n in pv.notes)
    assert len(pv.rows) == SHOWN_ROWS and pv.rows[0][2] == "user0"
    # the loader reads the same rows: the preview and the load agree on the file
    corpus = load_corpus(path, LoadOptions(user_col="name", text_col="text"))
    assert corpus.source.rows_read == pv.n_rows
    assert corpus.stats().users == facts["name"].distinct


def test_a_category_as_the_user_is_warned_before_loading_in_plain_words(tmp_path):
    path = _tweets(tmp_path)
    warns = preview(path, user_col="airline", text_col="text").warnings
    few = [w for w in warns if w.code == "user_few_values"]
    assert len(few) == 1
    assert "6 distinct values over 7,501 rows" in str(few[0]) and "category" in str(few[0])
    assert "placeholder" not in str(few[0])
    assert not [w for w in preview(path, user_col="name", text_col="text").warnings if w.code == "user_few_values"]


def test_facts_past_the_byte_cap_say_how_many_rows_they_cover(tmp_path):
    path = tmp_path / "posts.parquet"
    pq.write_table(
        pa.table({"user": [f"u{i % 500}" for i in range(100_000)], "text": [f"post {i}" for i in range(100_000)]}),
        path,
    )
    pv = preview(survey(path, max_bytes=1))  # stop after the first batch Arrow reads
    assert not pv.complete and 0 < pv.n_rows < 100_000 and pv.facts[0].rows == pv.n_rows
    assert pv.facts[0].distinct == 500 and pv.facts[1].distinct == pv.n_rows
    assert pv.coverage == f"the first {pv.n_rows:,} rows of the file (it is longer)"
    whole = preview(survey(tmp_path / "posts.parquet"))
    assert whole.complete and whole.n_rows == 100_000 and whole.facts[1].distinct == 100_000
    # a CSV read in one block is complete even when that block passes the cap
    assert preview(survey(_tweets(tmp_path), max_bytes=1)).complete


def test_jsonl_and_parquet_facts_cover_every_row(tmp_path):
    records = [{"author": f"a{i % 300}", "body": f"post number {i}", "meta": {"k": i % 3}} for i in range(6000)]
    jl = tmp_path / "posts.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    pj = preview(jl)
    assert pj.complete and pj.n_rows == 6000
    assert [f.distinct for f in pj.facts] == [300, 6000, 3]
    assert (pj.columns[pj.user_col], pj.columns[pj.text_col]) == ("author", "body")
    pqf = tmp_path / "posts.parquet"
    pq.write_table(
        pa.table({"author": [r["author"] for r in records], "body": [r["body"] for r in records]}),
        pqf,
        row_group_size=1000,
    )
    pp = preview(pqf)
    assert pp.complete and pp.n_rows == 6000 and [f.distinct for f in pp.facts] == [300, 6000]


def test_a_header_less_file_and_plain_text(tmp_path):
    rows = "".join(f"u{i % 40},some words {i}\n" for i in range(6000))
    f = tmp_path / "plain.csv"
    f.write_text(rows, encoding="utf-8")
    pv = preview(f, has_header=False, user_col=0, text_col=1)
    assert pv.n_rows == 6000 and pv.labels == ["column 0", "column 1"] and pv.facts[0].distinct == 40
    t = tmp_path / "lines.txt"
    t.write_text("one\n\ntwo\nthree\n", encoding="utf-8")
    pt = preview(t)
    assert pt.columns == [] and pt.rows == [["one"], ["two"], ["three"]] and pt.complete
