"""Loading at scale: streamed CSV batches, CSV quoting checks, long rows, the interning table, the
character tables shipped with the tokenizer, and the blockwise row sort (dpsu_core.corpus)."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus import charclass, delimited, load_corpus
from dpsu_core.corpus.build import _sort_rows, build_corpus
from dpsu_core.corpus.csvscan import UnterminatedQuote, scan_csv
from dpsu_core.corpus.intern import Interner
from dpsu_core.corpus.readers import read_table
from dpsu_core.corpus.tokenize import (
    _URL,
    Preprocessing,
    TokenStream,
    _may_hold_url,
    preprocess,
    rows_with_bytes,
    tokenize,
)
from dpsu_core.errors import InputError

NO_CLEAN = Preprocessing(strip_urls=False, strip_html=False, email_headers=False)


def rows_of(corpus) -> dict[str, dict[str, int]]:
    """User -> {item: count}, by strings (independent of id order). Users are numbered by first appearance."""
    return {
        u: {corpus.vocab[i]: int(c) for i, c in zip(corpus.items[a:b], corpus.counts[a:b])}
        for u, (a, b) in enumerate(zip(corpus.indptr[:-1], corpus.indptr[1:]))
    }


def posts_of(tok) -> list[list[str]]:
    return [list(tok.unigrams[tok.codes[a:b]]) for a, b in zip(tok.post_ptr[:-1], tok.post_ptr[1:])]


# ---- unterminated quotes ---------------------------------------------------------------------


def _broken_csv(tmp_path, last_row: str = "") -> tuple:
    rows = ["user,text"] + [f"u{i},post number {i}" for i in range(300)]
    rows[101] = 'u100,"this quote is never closed'  # line 102 of the file
    if last_row:
        rows.append(last_row)
    path = tmp_path / "broken.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_unterminated_quote_is_an_error_naming_its_line(tmp_path):
    path = _broken_csv(tmp_path)
    # Arrow alone swallows the 200 rows after it into one field
    import pyarrow.csv as pacsv

    swallowed = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(newlines_in_values=True))
    assert swallowed.num_rows == 101
    with pytest.raises(InputError, match=r"broken\.csv: line 102: .*never closed"):
        load_corpus(path)


def test_quote_closed_lines_later_by_a_quote_followed_by_text_is_an_error(tmp_path):
    path = _broken_csv(tmp_path, 'u999,"a later quoted field"')
    with pytest.raises(InputError, match=r"line 102: .*runs on to line 302"):
        read_table(path)


def test_cli_reports_the_unterminated_quote_in_one_line(tmp_path):
    path = _broken_csv(tmp_path)
    out = tmp_path / "out.csv"
    r = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", str(path), "-m", "count-gaussian", "-e", "1"]
        + ["-d", "1e-6", "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "line 102" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "data, shape",
    [
        (b'u,t\na,"x, y"\nb,"multi\nline"\r\nc,plain', dict(multiline_fields=1, longest_span=2, longest_span_line=3)),
        (b'u,t\r\na,"p ""q"" r"\r\n', dict(multiline_fields=0, stray_quotes=0)),
        (b'u,t\na,"say "hi" now"\nb,ok\n', dict(stray_quotes=1, first_stray_line=2)),
        (b'u,t\na,ab"c\n', dict(stray_quotes=0, longest_row=7)),
    ],
)
def test_scan_reports_the_shape_of_well_quoted_files(data, shape):
    got = scan_csv(data, ",")
    for k, v in shape.items():
        assert getattr(got, k) == v, k


def test_scan_finds_a_quote_open_at_the_end():
    with pytest.raises(UnterminatedQuote) as e:
        scan_csv(b'u\tt\r\na\t"x\r\nb\ty\r\n', "\t")
    assert e.value.line == 2 and e.value.closed_line is None


def test_stray_quotes_within_a_line_are_a_note(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('user,text\na,"say "hi" now"\nb,"fine text"\nc,more words\n')
    corpus = load_corpus(path)
    assert corpus.n_users == 3
    assert any("not doubled (first on line 2)" in n for n in corpus.source.notes)


# ---- long rows, streamed batches, large_string ----------------------------------------------


def test_a_row_longer_than_64_mb_is_read(tmp_path):
    word = b"abcdefg "  # 8 bytes
    n = (64 << 20) // len(word) + 1000  # a 64 MiB text field and a bit more
    path = tmp_path / "long.csv"
    with open(path, "wb") as f:
        f.write(b"user,text\nshort,two words\nlong,")
        f.write(word * n)
        f.write(b"\nlast,three more words\n")
    corpus = load_corpus(path)
    assert corpus.n_users == 3
    long_user = rows_of(corpus)[1]
    assert long_user == {"abcdefg": n}


def _multi_post_csv(tmp_path, n_rows: int = 3000) -> tuple:
    rng = np.random.default_rng(7)
    words = np.array(["alpha", "Beta", "gamma", "don't", "δέλτα", "x1", "…", "http://a.org/x", "<b>bold</b>"])
    lines = ["author,score,body"]
    expected_texts = []
    for i in range(n_rows):
        text = " ".join(rng.choice(words, size=rng.integers(1, 12)))
        if i % 7 == 0:
            text += "\nsecond line, with a comma"
        expected_texts.append(text)
        quoted = '"' + text.replace('"', '""') + '"'
        lines.append(f"user{rng.integers(0, 400)},{i},{quoted}")
    path = tmp_path / "posts.csv"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path, expected_texts


def test_small_blocks_give_the_same_corpus_as_one_block(tmp_path, monkeypatch):
    path, texts = _multi_post_csv(tmp_path)
    one = load_corpus(path)
    monkeypatch.setattr(delimited, "_BLOCK_BYTES", 4096)  # ~60 batches; users recur across batches
    table = read_table(path, stream=True)
    batches = list(table.batches())
    assert len(batches) > 20
    assert all(pa.types.is_large_string(t.type) for _, t in batches)  # never a 2 GiB string offset limit
    assert pa.concat_arrays([t for _, t in batches]).to_pylist() == texts
    many = load_corpus(path)
    assert many.n_users == one.n_users and many.nnz == one.nnz
    assert rows_of(many) == rows_of(one)
    assert many.source.notes == one.source.notes


def test_materialized_table_keeps_every_row(tmp_path, monkeypatch):
    path, texts = _multi_post_csv(tmp_path, 500)
    monkeypatch.setattr(delimited, "_BLOCK_BYTES", 2048)
    table = read_table(path)
    assert table.stream is None and table.n_rows == 500
    assert table.texts.to_pylist() == texts


def test_token_stream_over_batches_and_workers_matches_one_call():
    rng = np.random.default_rng(3)
    words = np.array(["Alpha", "beta", "GAMMA", "don’t", "Ärger", "x1", "...", "日本"], dtype=object)
    texts = [" ".join(rng.choice(words, size=rng.integers(0, 30))) for _ in range(30_000)]
    whole = tokenize(pa.array(texts), workers=1)
    with TokenStream(workers=2) as stream:
        for a in range(0, len(texts), 7_000):
            stream.submit(pa.array(texts[a : a + 7_000], type=pa.large_string()))
        parts = stream.finish()
    assert np.array_equal(whole.post_ptr, parts.post_ptr)
    assert posts_of(whole) == posts_of(parts)
    assert sorted(whole.unigrams.tolist()) == sorted(parts.unigrams.tolist())


# ---- case folding, and the cleaning steps that run only on the rows they can change -------------

_PIECES = list("aZ ÄöİΣẞȺǅ\u0301’'-.:/wW<>&;#x1\n\t\u200b") + ["://", "www.", "&amp;", "<i>", "&eacute;"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=8))
def test_kernel_case_folding_equals_arrows_lower(texts):
    arr = pa.array(texts)
    folded = tokenize(arr, prep=NO_CLEAN)
    arrow = tokenize(pc.utf8_lower(arr), prep=Preprocessing(lowercase=False, **_no_clean()))
    assert posts_of(folded) == posts_of(arrow)


def _no_clean() -> dict:
    return dict(strip_urls=False, strip_html=False, email_headers=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=8))
def test_cleaning_only_the_candidate_rows_changes_nothing_else(texts):
    from dpsu_core.corpus import clean

    arr = pa.array(texts)
    everywhere = pc.replace_substring_regex(clean.strip_html(arr), pattern=_URL, replacement=" ")
    got = preprocess(arr, Preprocessing(email_headers=False))
    assert got.to_pylist() == everywhere.to_pylist()


def test_candidate_rows():
    arr = pa.array(["x http://a", "WwW.b", "ww.x", ":/ /", "plain", "a<b", "&c", ""])
    assert _may_hold_url(arr).tolist() == [True, True, False, False, False, False, False, False]
    assert rows_with_bytes(arr, b"<&").tolist() == [False, False, False, False, False, True, True, False]
    assert _may_hold_url(arr.slice(1, 2)).tolist() == [True, False]


def test_lower_table_is_arrows_lower_case():
    table = charclass.lower_table()
    cps = np.arange(0x110000)
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]
    sample = cps[np.random.default_rng(0).integers(0, cps.shape[0], 5000)]
    text = "".join(map(chr, sample))
    assert "".join(chr(table[c]) for c in sample) == pc.utf8_lower(pa.array([text]))[0].as_py()
    assert chr(table[ord("İ")]) == "i" and chr(table[ord("Ⱥ")]) == "ⱥ"  # one code point each, bytes may grow


def test_shipped_lower_case_is_what_arrow_gives():
    from dpsu_core.corpus import _char_table as shipped

    built = charclass.build_lower_table()
    if shipped.LOWER_PYARROW == pa.__version__:
        assert np.array_equal(charclass.lower_table(), built), "regenerate: python -m dpsu_core.corpus.charclass"
    changed = np.flatnonzero(built != np.arange(built.shape[0]))
    assert 1000 < changed.shape[0] < 5000 and built[ord("A")] == ord("a")  # the table the file ships is small


def test_shipped_character_classes_match_the_rule():
    built = charclass.build_char_classes()
    if unicodedata.unidata_version == __import__("dpsu_core.corpus._char_table", fromlist=["x"]).UNICODE_VERSION:
        assert np.array_equal(charclass.char_classes(), built), "regenerate: python -m dpsu_core.corpus.charclass"
    assert charclass.expand_runs(*_runs(built)).tolist() == built.tolist()


def _runs(cls: np.ndarray) -> tuple:
    starts = np.flatnonzero(np.concatenate([[True], cls[1:] != cls[:-1]]))
    return starts, cls[starts].tobytes()


# ---- interning ----------------------------------------------------------------------------------


def test_interner_gives_dense_ids_in_order_of_first_sight_and_grows():
    values = ["b", "", "a", "b", "a-much-longer-string", "", "é", "a-much-longer-string", "b"] * 3
    extra = [f"w{i}" for i in range(5000)] + [f"long string number {i}" for i in range(5000)]
    intern = Interner(capacity=4)  # forces many rehashes and arena growths
    ids = intern.add_strings(pa.array(values + extra))
    first: dict[str, int] = {}
    for v in values + extra:
        first.setdefault(v, len(first))
    assert ids.tolist() == [first[v] for v in values + extra]
    assert intern.strings().to_pylist() == list(first)


@pytest.mark.parametrize("pylist_max", [0, 1_000_000])  # Arrow's to_numpy, and the Python-list path
def test_interner_objects_are_its_strings_as_python_str(monkeypatch, pylist_max):
    from dpsu_core.corpus import intern as intern_module

    monkeypatch.setattr(intern_module, "PYLIST_MAX", pylist_max)
    table = Interner(capacity=4)
    values = ["b", "", "é 漢字", "b", "a-much-longer-string"] + [f"w{i}" for i in range(3000)]
    table.add_strings(pa.array(values))
    got = table.objects()
    assert got.dtype == object and got.shape == (len(table),)
    assert got.tolist() == list(dict.fromkeys(values)) and all(type(x) is str for x in got)


def test_interner_merge_maps_the_other_tables_ids():
    a, b = Interner(), Interner()
    a.add_strings(pa.array(["x", "y", "same"]))
    b.add_strings(pa.array(["same", "new one that is long", "z"]))
    remap = a.merge(b)
    strings = a.strings().to_pylist()
    assert [strings[i] for i in remap] == ["same", "new one that is long", "z"]
    assert strings[:3] == ["x", "y", "same"]


# ---- build: rows in item order by blockwise counting sorts --------------------------------------


def test_blockwise_row_sort_orders_every_row():
    rng = np.random.default_rng(1)
    row_len = rng.integers(0, 40, 3000)
    indptr = np.concatenate([[0], np.cumsum(row_len)]).astype(np.int64)
    items = np.concatenate([rng.choice(500, size=n, replace=False) for n in row_len]).astype(np.int32)
    counts = rng.integers(1, 9, items.shape[0]).astype(np.int32)
    want = {
        (u, int(g)): int(c)
        for u in range(3000)
        for g, c in zip(items[indptr[u] : indptr[u + 1]], counts[indptr[u] : indptr[u + 1]])
    }
    _sort_rows(items, counts, indptr, 500, block=2000)  # about 30 blocks
    for u in range(3000):
        row = items[indptr[u] : indptr[u + 1]]
        assert np.all(np.diff(row) > 0)
    got = {
        (u, int(g)): int(c)
        for u in range(3000)
        for g, c in zip(items[indptr[u] : indptr[u + 1]], counts[indptr[u] : indptr[u + 1]])
    }
    assert got == want


def test_build_from_posts_of_users_in_any_order():
    # user 1's posts come before and after user 0's; counts add up over posts
    unigrams = np.array(["a", "b", "c", "unused"], dtype=object)
    tokens = np.array([2, 0, 0, 1, 2, 2], dtype=np.int32)
    post_ptr = np.array([0, 2, 4, 6])
    post_user = np.array([1, 0, 1], dtype=np.int32)
    c = build_corpus(tokens, post_ptr, post_user, unigrams, n_users=2)
    assert c.vocab.tolist() == ["c", "a", "b"]  # numbered by first use in the posts; "unused" dropped
    assert rows_of(c) == {0: {"a": 1, "b": 1}, 1: {"a": 1, "c": 3}}


def test_item_ids_are_first_use_order_whatever_the_tokenizer_workers(monkeypatch):
    # two workers intern their halves of each batch apart, and the tables merge worker by worker: a word first
    # seen in batch 1's second half got a later id than one first seen in batch 2's first half. The corpus's ids
    # must not show it: the same ids (so a teaching release with a fixed seed is the same) on one worker or two,
    # and the Spark engine's order (first appearance in the file)
    from dpsu_core.corpus import tokenize as tokenize_module
    from dpsu_core.corpus.tokenize import TokenStream

    monkeypatch.setattr(tokenize_module, "_PARALLEL_MIN_BYTES", 0)  # split these small batches between the workers
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(5000)]
    texts = [" ".join(rng.choice(words, 6)) for _ in range(3000)]
    built = []
    for workers in (1, 2):
        with TokenStream("fast", workers=workers) as stream:
            for a in range(0, len(texts), 1000):
                stream.submit(pa.array(texts[a : a + 1000]))
            tok = stream.finish()
        assert tok.unigrams.tolist() == list(dict.fromkeys(w for t in texts for w in t.split()))  # no remap left
        built.append(build_corpus(tok.codes, tok.post_ptr, np.arange(len(texts)), tok.unigrams, max_n=2))
    first_seen = list(dict.fromkeys(w for t in texts for w in t.split()))
    assert built[0].vocab[: len(first_seen)].tolist() == first_seen
    assert built[1].vocab.tolist() == built[0].vocab.tolist()
    np.testing.assert_array_equal(built[1].items, built[0].items)
    np.testing.assert_array_equal(built[1].indptr, built[0].indptr)
