"""load_corpus end to end: every format, preprocessing, drops, errors, n-grams, MSNBC."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus import Corpus, load_corpus
from dpsu_core.errors import ColumnError, EmptyCorpusError, EncodingError, InputError, ParameterError

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
MSNBC = SHARED / "data" / "msnbc990928.zip"

ROWS = [
    ("alice", "The cat sat."),
    ("bob", "A dog ran; the DOG barked!"),
    ("alice", "the cat ran"),
    ("carol", "[removed]"),
    ("", "no user here"),
    ("dave", ""),
    ("bob", "see https://example.com/x the end"),
]


def user_sets(c: Corpus) -> dict[int, dict[str, int]]:
    """Row i of the CSR as {item string: count}."""
    out = {}
    for i in range(c.n_users):
        a, b = c.indptr[i], c.indptr[i + 1]
        out[i] = dict(zip(c.vocab[c.items[a:b]].tolist(), c.counts[a:b].tolist()))
    return out


def write_csv(path: Path, rows, header=("author", "body"), delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=delimiter)
        if header:
            w.writerow(header)
        w.writerows(rows)
    return path


EXPECTED = {
    0: {"the": 2, "cat": 2, "sat": 1, "ran": 1},
    1: {"a": 1, "dog": 2, "ran": 1, "the": 2, "barked": 1, "see": 1, "end": 1},
}


def check_expected(c: Corpus):
    assert c.n_users == 2  # carol only [removed], dave no text, the user-less row dropped
    assert user_sets(c) == EXPECTED
    s = c.source
    assert (s.rows_read, s.rows_dropped_no_user, s.rows_dropped_no_text, s.rows_dropped_removed) == (7, 1, 1, 1)
    assert c.n_posts == 4 and c.n_tokens == 3 + 6 + 3 + 3


def test_csv(tmp_path):
    c = load_corpus(write_csv(tmp_path / "p.csv", ROWS))
    check_expected(c)
    s = c.source
    assert (s.name, s.format, s.encoding, s.encoding_fallback) == ("p.csv", "csv", "utf-8", False)
    assert (s.user_column, s.text_column, s.columns_guessed, s.tokenizer) == ("author", "body", True, "auto")
    assert any("guessed" in n for n in s.notes) and any("[removed]" in n for n in s.notes)


def test_tsv(tmp_path):
    check_expected(load_corpus(write_csv(tmp_path / "p.tsv", ROWS, delimiter="\t")))


def test_jsonl(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text("\n".join(json.dumps({"username": u, "content": t}) for u, t in ROWS))
    c = load_corpus(p)
    check_expected(c)
    assert c.source.format == "jsonl" and (c.source.user_column, c.source.text_column) == ("username", "content")


def test_parquet(tmp_path):
    p = tmp_path / "p.parquet"
    pq.write_table(pa.table({"user": [u for u, _ in ROWS], "text": [t for _, t in ROWS]}), p)
    check_expected(load_corpus(p))


def test_text_user_tab_text(tmp_path):
    p = tmp_path / "p.txt"
    # blank lines are not rows; a line without text after the tab is dropped
    p.write_text("\n".join(f"{u}\t{t}" for u, t in ROWS if u) + "\n\n")
    c = load_corpus(p)
    assert user_sets(c) == EXPECTED and c.source.rows_dropped_no_text == 1


def test_text_one_user_per_line(tmp_path):
    p = tmp_path / "p.txt"
    p.write_text("The cat sat.\n\nthe cat ran\n[deleted]\n")
    c = load_corpus(p)
    assert user_sets(c) == {0: {"the": 1, "cat": 1, "sat": 1}, 1: {"the": 1, "cat": 1, "ran": 1}}
    assert c.source.rows_dropped_removed == 1
    assert any("its own user" in n for n in c.source.notes)


def test_sequences_are_not_preprocessed():
    data = b"% Sequences:\n1 1 2\nA a\n\n% x\n2 B\n"
    c = load_corpus(io.BytesIO(data), format="sequences")
    assert user_sets(c) == {0: {"1": 2, "2": 1}, 1: {"A": 1, "a": 1}, 2: {"2": 1, "B": 1}}
    assert c.source.tokenizer == "as given (pre-tokenized)" and c.source.format == "sequences"


def test_zipped_upload_with_name_override():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("inner/posts.csv", "user,text\na,x y\nb,y z\n")
        z.writestr("__MACOSX/inner/._posts.csv", b"\x00\x01")
    up = io.BytesIO(buf.getvalue())
    up.name = "upload.zip"
    c = load_corpus(up, name="My corpus")
    assert c.n_users == 2 and c.source.name == "My corpus"
    assert any("zip" in n for n in c.source.notes)


def test_headerless_positional_columns(tmp_path):
    p = write_csv(tmp_path / "p.csv", [("x", 1, "hello world"), ("y", 2, "hello there")], header=None)
    c = load_corpus(p, user_col="0", text_col=2)
    assert user_sets(c) == {0: {"hello": 1, "world": 1}, 1: {"hello": 1, "there": 1}}
    assert (c.source.user_column, c.source.text_column, c.source.columns_guessed) == ("0", "2", False)


def test_bom_and_cp1252(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes("\ufeffuser,text\na,Café au lait\nb,café noir\n".encode("utf-8"))
    c = load_corpus(p)
    assert c.source.encoding == "utf-8-sig" and not c.source.encoding_fallback
    assert user_sets(c)[1] == {"café": 1, "noir": 1}
    p = tmp_path / "win.csv"
    p.write_bytes("user,text\na,Café \u201cau\u201d lait\nb,café noir\n".encode("cp1252"))
    c = load_corpus(p)
    assert (c.source.encoding, c.source.encoding_fallback) == ("cp1252", True)
    assert any("cp1252" in n for n in c.source.notes)
    assert user_sets(c)[0] == {"café": 1, "au": 1, "lait": 1}


def test_preprocessing_switches():
    data = b"user,text\na,Hello https://x.org World!\nb,[removed]\nc,hello\n"
    c = load_corpus(data, lowercase=False, strip_urls=False, drop_removed=False, strip_symbols=False)
    sets = user_sets(c)
    assert sets[0] == {"Hello": 1, "https": 1, ":": 1, "/": 2, "x": 1, ".": 1, "org": 1, "World": 1, "!": 1}
    assert sets[1] == {"[": 1, "removed": 1, "]": 1}
    assert c.source.rows_dropped_removed == 0
    c = load_corpus(data)
    assert user_sets(c) == {0: {"hello": 1, "world": 1}, 1: {"hello": 1}}


def test_treebank_tokenizer():
    c = load_corpus(b"user,text\na,They don't know.\nb,It's fine\n", tokenizer="treebank", max_n=2)
    assert user_sets(c)[0] == {"they": 1, "do": 1, "n't": 1, "know": 1, "they do": 1, "do n't": 1, "n't know": 1}
    assert c.source.tokenizer == "treebank"


def test_user_ids_are_trimmed_and_grouped():
    c = load_corpus(b"user,text\n a ,x\nb,y\na,z\n")
    assert user_sets(c) == {0: {"x": 1, "z": 1}, 1: {"y": 1}}


def test_users_without_tokens_are_reported():
    c = load_corpus(b"user,text\na,x\nb,!!!\nc,y\n")
    assert c.n_users == 2 and any("1 users had no tokens" in n for n in c.source.notes)


# ---- bad input ---------------------------------------------------------------


def test_empty_file(tmp_path):
    p = tmp_path / "e.csv"
    p.write_bytes(b"")
    with pytest.raises(EmptyCorpusError, match="empty"):
        load_corpus(p)


def test_binary_file():
    with pytest.raises(EncodingError, match="binary"):
        load_corpus(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00" * 100)


def test_header_only_and_all_rows_dropped():
    with pytest.raises(EmptyCorpusError, match="no usable rows"):
        load_corpus(b"user,text\n")
    with pytest.raises(EmptyCorpusError, match="no usable rows.*1 without a user id.*1 without text"):
        load_corpus(b"user,text\n,hello\nbob,\n")


def test_no_tokens():
    with pytest.raises(EmptyCorpusError, match="no tokens"):
        load_corpus(b"user,text\na,!!!\nb,???\n")


def test_single_user():
    with pytest.raises(EmptyCorpusError, match="single user.*nothing can be released"):
        load_corpus(b"user,text\na,hello\na,world\n")


def test_unknown_column_lists_available():
    with pytest.raises(ColumnError, match="available.*1: 'body'.*0: 'author'"):  # the text-like name first
        load_corpus(b"author,body\na,b\n", text_col="message")


def test_malformed_jsonl_and_parquet():
    with pytest.raises(InputError, match="line 2"):
        load_corpus(b'{"user": "a", "text": "b"}\n{oops}\n', format="jsonl")
    with pytest.raises(InputError, match="Parquet"):
        load_corpus(b"PAR1xxxxxxxxPAR1", format="parquet")


def test_bad_parameters():
    with pytest.raises(ParameterError, match="tokenizer"):
        load_corpus(b"user,text\na,b\nc,d\n", tokenizer="bert")
    with pytest.raises(ParameterError, match="max_n"):
        load_corpus(b"user,text\na,b\nc,d\n", max_n=0)
    with pytest.raises(ParameterError, match="format"):
        load_corpus(b"user,text\na,b\nc,d\n", format="xlsx")


# ---- n-grams against a brute-force reference ---------------------------------


def brute_force(users_posts, max_n):
    """Per user (in order of first appearance, users with no tokens left out): Counter of n-grams within posts."""
    order, grams = [], {}
    for user, tokens in users_posts:
        if user not in grams:
            grams[user] = Counter()
            order.append(user)
        for n in range(1, max_n + 1):
            for i in range(len(tokens) - n + 1):
                grams[user][" ".join(tokens[i : i + n])] += 1
    return [dict(grams[u]) for u in order if grams[u]]


words = st.sampled_from(["a", "b", "c", "dd", "e'f", "ü"])
post = st.lists(words, min_size=0, max_size=7)
rows = st.lists(st.tuples(st.sampled_from(["u1", "u2", "u3", "u4"]), post), min_size=2, max_size=12)


@settings(max_examples=60, deadline=None)
@given(rows=rows, max_n=st.integers(1, 3))
def test_csr_equals_brute_force_ngrams_within_posts(rows, max_n):
    # posts separated by a marker that is not a word: a post's last and the next post's
    # first token must never form an n-gram
    texts = [(u, " ".join(toks) if toks else "...") for u, toks in rows]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["user", "text"])
    w.writerows(texts)
    expected = brute_force(rows, max_n)
    if len(expected) < 2:
        with pytest.raises(EmptyCorpusError):
            load_corpus(buf.getvalue().encode(), max_n=max_n)
        return
    c = load_corpus(buf.getvalue().encode(), max_n=max_n)
    assert [user_sets(c)[i] for i in range(c.n_users)] == expected
    for i in range(c.n_users):  # rows sorted, distinct
        row = c.items[c.indptr[i] : c.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)
    assert np.array_equal(c.ngram_len, [len(v.split(" ")) for v in c.vocab])


# ---- real data ---------------------------------------------------------------


@pytest.mark.skipif(not MSNBC.exists(), reason=f"MSNBC data not found at {MSNBC} (the shared data folder is absent)")
def test_msnbc_loads_directly_from_the_zip():
    c = load_corpus(MSNBC)
    assert c.n_users == 989_818
    assert c.n_items == 17
    assert sorted(c.vocab.tolist(), key=int) == [str(i) for i in range(1, 18)]
    assert c.source.format == "sequences" and c.source.rows_read == 989_818
    assert any("zip" in n for n in c.source.notes)
