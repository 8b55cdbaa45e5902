"""Columns, header detection, facts, sanity warnings, cleaning and per-row decoding (issue 10).

The fixture files (tests/column_fixtures.py) go through the real CLI and ``load_corpus``; each case
holds the expected columns, header decision, warnings and tokens.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from dpsu_core.corpus import load_corpus
from dpsu_core.corpus.clean import drop_email_headers, drop_tokens, strip_html, token_drop_mask
from dpsu_core.corpus.columns import (
    apply_user_pattern,
    cell_kind,
    check_user_pattern,
    choose_columns,
    column_facts,
    column_warnings,
    detect_header,
    guess_columns,
    is_unnamed,
    load_warnings,
    reads_like_category,
)
from dpsu_core.corpus.decode import decode_rows
from dpsu_core.corpus.readers import read_table
from dpsu_core.corpus.tokenize import tokenize
from dpsu_core.errors import ColumnError, ParameterError
from dpsu_core.interfaces.cli import main
from dpsu_core.wording import CLI_OPTIONS, NEUTRAL, opt, speak
from tests.column_fixtures import ANALYST_ROWS, ANALYST_STOCKS, FIXTURES, MAILBOXES, analyst_notes

RELEASE = ["release", "-m", "policy-gaussian", "-e", "3", "-d", "1e-5"]


def _vocab(corpus) -> set[str]:
    return set(corpus.vocab[corpus.ngram_len == 1].tolist())


# ---- names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "columns, expected",
    [
        (["", "tweet_id", "author_id", "inbound", "text"], ("author_id", "text")),
        (["Unnamed: 0", "review", "sentiment"], (None, "review")),
        (["0", "1", "2"], (None, None)),  # a header-less file's positions are never guessed
        (["file", "message"], (None, "message")),
        (["screen_name", "tweet"], ("screen_name", "tweet")),
        (["customer_id", "comment"], ("customer_id", "comment")),
        (["from", "body", "sender"], ("sender", "body")),  # sender outranks from
        (["user", "User", "text"], (None, "text")),  # a shared name is not a guess
    ],
)
def test_guess_columns_by_known_names_only(columns, expected):
    assert guess_columns(columns) == expected


def test_unnamed_columns():
    assert is_unnamed("") and is_unnamed("Unnamed: 0") and is_unnamed(" unnamed: 12 ") and is_unnamed("3")
    assert not is_unnamed("author") and not is_unnamed("user 2")


def test_no_guess_names_the_columns_and_the_options():
    with pytest.raises(ColumnError) as e:
        choose_columns(["review", "sentiment"], None, None, True)
    msg = str(e.value)
    assert "'review'" in msg and "'sentiment'" in msg and opt("user_col") in msg and opt("row_is_user") in msg
    cli = speak(msg, CLI_OPTIONS)
    assert "--user-col" in cli and "--row-is-user" in cli and "⟦" not in cli
    with pytest.raises(ColumnError, match="exclude each other"):
        choose_columns(["author", "text"], "author", None, True, row_is_user=True)
    c = choose_columns(["review", "sentiment"], None, None, True, row_is_user=True)
    assert (c.user, c.text, c.guessed) == (None, 0, True)


def test_speak_renders_every_option_for_each_interface():
    assert set(CLI_OPTIONS) == set(NEUTRAL)
    msg = " ".join(opt(k) for k in NEUTRAL)
    assert "⟦" not in speak(msg, CLI_OPTIONS) and "⟦" not in speak(msg)
    with pytest.raises(KeyError):
        opt("has_header")


# ---- header ---------------------------------------------------------------------------------


def _rows(text: str) -> list[list[str]]:
    import csv
    import io

    return [r for r in csv.reader(io.StringIO(text)) if r]


@pytest.mark.parametrize(
    "text, has_header, why",
    [
        (
            '"0","1467810369","Mon Apr 06","NO_QUERY","bob","hello there you"\n"4","1467810370","Mon Apr 07","NO_QUERY","al","so it goes on"\n',
            False,
            "a number",
        ),
        ("alice,hello there\nbob,good morning\n", False, "a sentence"),
        ("handle,post_text\nalice,hello there\nbob,good morning\n", True, "above sentences"),
        ("id,handle,score\n1,alice,3\n2,bob,5\n", True, "above numbers"),
        (",tweet_id,who\n0,1001,a\n1,1002,b\n", True, "above numbers"),  # pandas' index column: empty header cell
        ("author,body\nalice,hello\n", True, "column name"),
        ("alice,bob\ncarol,dave\n", True, "does not tell"),
    ],
)
def test_detect_header(text, has_header, why):
    d = detect_header(_rows(text))
    assert d.has_header is has_header and why in d.reason
    assert opt("header" if not has_header else "no_header") in d.reason or "column name" in d.reason


# ---- facts and checks -------------------------------------------------------------------------


def test_column_facts():
    f = column_facts(pa.array(["ab", " ", None, "ab", "1234"]), "c")
    assert (f.rows, f.distinct, f.empty_share, f.mean_length) == (5, 2, 0.4, pytest.approx(8 / 3))
    assert f.numeric_share == pytest.approx(1 / 3)
    assert "2 distinct values in 5 rows, 40.0% empty, mean length 2.7" in f.describe("user")
    g = column_facts(pa.array(["", None, "\u3000 ", "x y", "7"] * 3).slice(2, 11), "d")  # an offset view
    assert (g.rows, g.distinct, g.empty_share, g.mean_length) == (11, 2, pytest.approx(7 / 11), 2.0)


def test_column_warnings():
    n = 30
    texts = pa.array([f"post number {i} words" for i in range(n)])
    _, w = column_warnings(pa.array([str(i) for i in range(n)]), texts, "idx", "text")
    assert [x.code for x in w] == ["user_unique", "user_row_index"]
    assert "each row will be a user: is that the privacy unit you mean?" in w[0].message
    _, w = column_warnings(pa.array([str(i + 1) for i in range(n)]), texts, "idx", "text")
    assert "1..n" in w[1].message
    _, w = column_warnings(pa.array([str(i % 5) for i in range(n)]), pa.array(["positive", "negative"] * 15), "u", "s")
    assert [x.code for x in w] == ["text_few_values"]
    _, w = column_warnings(pa.array([str(i % 5) for i in range(n)]), pa.array([str(i) for i in range(n)]), "u", "n")
    assert [x.code for x in w] == ["text_numbers"]
    _, w = column_warnings(pa.array([f"u{i % 7}" for i in range(n)]), texts, "u", "text")
    assert w == []
    assert [x.code for x in load_warnings(10, 6, np.ones(20))] == ["rows_dropped"]
    assert load_warnings(10, 5, np.ones(20)) == []
    assert [x.code for x in load_warnings(10, 0, np.array([11.0] + [10.0] * 9))] == ["user_heavy"]
    assert load_warnings(10, 0, np.array([10.0] * 10)) == []


def test_user_pattern():
    users, unmatched = apply_user_pattern(pa.array(["allen-p/inbox/1.", "lay-k/sent/2.", "noslash"]), "^([^/]+)/")
    assert users.to_pylist() == ["allen-p", "lay-k", None] and unmatched == 1
    with pytest.raises(ParameterError, match="no group"):
        check_user_pattern("^[^/]+/")
    with pytest.raises(ParameterError, match="not a valid regular expression"):
        check_user_pattern("([")
    with pytest.raises(ParameterError, match="cannot be used"):
        check_user_pattern(r"(a)(?=b)")


# ---- cleaning ---------------------------------------------------------------------------------


def test_strip_html_and_entities():
    t = pa.array(["a<br />b &amp;lt; &amp; &eacute;t&eacute; <b>x</b>&nbsp;y", "2 &lt; 3 &#233;", None, "no tags"])
    assert strip_html(t).to_pylist() == ["a b &lt; & été  x \u00a0y", "2 < 3 é", None, "no tags"]


def test_email_headers_dropped_only_from_messages():
    mail = "Message-ID: <1@x>\nFrom: a@b.c\nSubject: hi there\nX-From: A\n\nThe body text.\n"
    other = "From: the start of a sentence, not a message"
    out, n = drop_email_headers(pa.array([mail, other, None]))
    assert out.to_pylist() == ["The body text.\n", other, None] and n == 1


def test_token_filters():
    vocab = np.array(["the", "2024", "cat", "The", "42nd", "٣"], dtype=object)
    mask = token_drop_mask(vocab, drop_digits=True, stop_language="english")
    assert mask.tolist() == [True, True, False, True, False, True]
    assert token_drop_mask(vocab, drop_digits=False, stop_language=None) is None
    codes, ptr = drop_tokens(np.array([0, 2, 1, 2, 2], np.int32), np.array([0, 2, 3, 5]), mask)
    assert codes.tolist() == [2, 2, 2] and ptr.tolist() == [0, 1, 1, 3]
    with pytest.raises(ParameterError, match="no stop-word list"):
        token_drop_mask(vocab, drop_digits=False, stop_language="klingon")


@pytest.mark.parametrize("strip_symbols", [True, False])
def test_format_characters_never_in_a_token(strip_symbols):
    from dpsu_core.corpus.tokenize import Preprocessing

    texts = pa.array(["love \u2764\ufe0f it", "co\u00adop wi\u200bth", "a\u200db \U0001f468\u200d\U0001f469", "x\x01y"])
    tok = tokenize(texts, prep=Preprocessing(strip_symbols=strip_symbols))
    words = set(tok.unigrams.tolist())
    # a soft hyphen, a zero width space, a word joiner or a byte order mark inside a word is no break
    assert {"love", "it", "coop", "with", "ab", "x", "y"} <= words and not {"co", "wi", "th"} & words
    for w in words:
        assert w and not any(ch in w for ch in "\ufe0f\u00ad\u200b\u200d\x01")


# ---- decoding ---------------------------------------------------------------------------------


def test_one_bad_byte_decodes_only_its_row():
    data = "a,na\u00efve caf\u00e9\n".encode() + "b,r\u00e9sum\u00e9\n".encode("latin-1") + "c,\u65e5\u672c\n".encode()
    d = decode_rows(data)
    assert d.data.decode() == "a,na\u00efve caf\u00e9\nb,r\u00e9sum\u00e9\nc,\u65e5\u672c\n"
    assert (d.encoding, d.fallback_rows) == ("utf-8", 1) and "1 row was not valid UTF-8" in d.note
    whole = decode_rows("x,caf\u00e9\ny,\u00e0 bient\u00f4t\n".encode("latin-1"))
    assert (whole.encoding, whole.fallback_rows) == ("cp1252", 2)


# ---- the fixture files through the CLI and load_corpus ----------------------------------------------

# name -> (extra CLI args, exit code, stderr must hold, load_corpus kwargs, user col, text col, header,
#          warning codes, tokens present, tokens absent)
CASES = {
    "index_first.csv": (
        [],
        0,
        [
            "the first row is read as a header",
            "user column 'author_id'",
            "privacy unit: the user is the value of column 'author_id'",
        ],
        {},
        "author_id",
        "text",
        True,
        [],
        {"refund", "delivery"},
        set(),
    ),
    "index_first.csv:index": (
        ["--user-col", "0", "--strict"],
        2,
        [
            "warning: the user column '(unnamed column 0)' has a different value on every row",
            "looks like a row index",
            "--strict",
        ],
        {"user_col": 0},
        "(unnamed column 0)",
        "text",
        True,
        ["user_unique", "user_row_index"],
        set(),
        set(),
    ),
    "reviews.csv": (
        [],
        2,
        ["cannot tell which column holds the user ids", "'review'", "'sentiment'", "--user-col", "--row-is-user"],
        None,
        None,
        None,
        True,
        [],
        set(),
        set(),
    ),
    "reviews.csv:rows": (
        ["--row-is-user"],
        0,
        ["privacy unit: each row is its own user", "text column 'review'"],
        {"row_is_user": True},
        None,
        "review",
        True,
        [],
        {"acting", "superb", "twist", "works"},
        {"br", "amp", "quot", "mdash", "8220"},
    ),
    "reviews.csv:label": (
        ["--row-is-user", "--text-col", "sentiment"],
        0,
        ["warning: the text column 'sentiment' has only 2 distinct values"],
        {"row_is_user": True, "text_col": "sentiment"},
        None,
        "sentiment",
        True,
        ["text_few_values"],
        {"positive", "negative"},
        set(),
    ),
    "tweets_latin1.csv": (
        [],
        2,
        ["the file has no header row", "--user-col", "first value 'user_00'", "--header"],
        None,
        None,
        None,
        False,
        [],
        set(),
        set(),
    ),
    "tweets_latin1.csv:positions": (
        ["--user-col", "4", "--text-col", "5"],
        0,
        [
            "no header row: the first row holds data",
            "decoded as cp1252",
            "user column '4': 12 distinct values in 40 rows",
        ],
        {"user_col": 4, "text_col": 5},
        "4",
        "5",
        False,
        [],
        {"café", "naïve", "bientôt", "friend"},
        {"cafã", "caf"},
    ),
    "html_reviews.csv": (
        [],
        0,
        ["user column 'user_id'", "text column 'review'"],
        {},
        "user_id",
        "review",
        True,
        [],
        {"great", "five", "stars", "link"},
        {"p", "b", "br", "a", "href", "amp", "lt", "nbsp", "shop"},
    ),
    "html_reviews.csv:keep": (
        ["--keep-html"],
        0,
        [],
        {"strip_html": False},
        "user_id",
        "review",
        True,
        [],
        {"br", "amp", "href"},
        set(),
    ),
    "emails.csv": (
        ["--user-col", "file", "--user-pattern", "^([^/]+)/"],
        0,
        ["privacy unit: the user is the first group of the pattern '^([^/]+)/' in column 'file'"],
        {"user_col": "file", "user_pattern": "^([^/]+)/"},
        "file",
        "message",
        True,
        [],
        {"here", "forecast", "desk"},
        {"javamail", "enron", "mime", "charset", "thyme", "x", "folder", "phillip"},
    ),
    "emails.csv:file": (
        ["--user-col", "file"],
        0,
        ["warning: the user column 'file' has a different value on every row"],
        {"user_col": "file"},
        "file",
        "message",
        True,
        ["user_unique"],
        {"forecast"},
        set(),
    ),
    "emails.csv:headers": (
        ["--user-col", "file", "--user-pattern", "^([^/]+)/", "--keep-email-headers"],
        0,
        [],
        {"user_col": "file", "user_pattern": "^([^/]+)/", "email_headers": False},
        "file",
        "message",
        True,
        [],
        {"javamail", "enron", "forecast"},
        set(),
    ),
    "emoji.csv": (
        [],
        0,
        ["user column 'username'", "text column 'tweet'"],
        {},
        "username",
        "tweet",
        True,
        [],
        {"love", "thumbs", "cooperate", "within", "space", "right", "mark", "text"},
        {"\ufe0f", "\u200d", "co", "operate", "spa", "ce"},
    ),
    "emoji.csv:symbols": (
        ["--keep-symbols"],
        0,
        [],
        {"strip_symbols": False},
        "username",
        "tweet",
        True,
        [],
        {"\u2764", "\U0001f44d", "\u263a", "love"},
        {"\ufe0f", "\u200d", "\u00ad", "\u200b", "\u200f"},
    ),
    "one_bad_byte.csv": (
        ["--drop-digits", "--stop-words", "english"],
        0,
        ["1 row was not valid UTF-8"],
        {"drop_digits": True, "stop_words": "english"},
        "author",
        "text",
        True,
        [],
        {"naïve", "café", "日本", "語", "résumé"},  # Han without kana: jieba's words (auto tokenizer)
        {"cafã", "naã", "sent"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fixture_through_cli(case, tmp_path, capsys):
    name = case.split(":")[0]
    args, code, must, *_ = CASES[case]
    src = tmp_path / name
    src.write_bytes(FIXTURES[name]())
    out = tmp_path / "out.csv"
    got = main([*RELEASE[:1], str(src), *RELEASE[1:], "-o", str(out), *args])
    err = capsys.readouterr().err
    assert got == code, err
    for s in must:
        assert s in err, (s, err)
    assert "⟦" not in err and "user_col" not in err and "has_header" not in err
    if code == 0:
        assert out.exists()
    else:
        assert len([ln for ln in err.splitlines() if ln.startswith("dpsu: error")]) == 1


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][3] is not None])
def test_fixture_through_load_corpus(case):
    name = case.split(":")[0]
    _, _, _, kwargs, user, text, header, warns, present, absent = CASES[case]
    c = load_corpus(FIXTURES[name](), name=name, **kwargs)
    s = c.source
    assert (s.user_column, s.text_column) == (user, text)
    assert s.header.startswith("the first row is read as a header" if header else "no header row")
    assert [w.code for w in s.warnings] == warns
    vocab = _vocab(c)
    assert present <= vocab, present - vocab
    assert not (absent & vocab), absent & vocab
    assert not any(ch in w for w in vocab for ch in "\ufe0f\u200d\u200b\u00ad")


def test_emails_users_are_the_mailboxes():
    c = load_corpus(FIXTURES["emails.csv"](), user_col="file", user_pattern="^([^/]+)/")
    assert c.n_users == len(MAILBOXES)
    t = read_table(FIXTURES["index_first.csv"]())
    assert t.user_column == "author_id" and t.users.to_pylist()[:2] == ["support_0", "115729"]


def test_release_report_records_the_privacy_unit(tmp_path, capsys):
    import json

    src = tmp_path / "reviews.csv"
    src.write_bytes(FIXTURES["reviews.csv"]())
    rep = tmp_path / "r.json"
    assert (
        main(
            [*RELEASE[:1], str(src), *RELEASE[1:], "-o", str(tmp_path / "o.csv"), "--report", str(rep), "--row-is-user"]
        )
        == 0
    )
    assert json.loads(rep.read_text())["privacy_unit"] == "each row is its own user"


def test_dates_are_called_dates_in_the_header_decision():
    rows = [
        ["0", "1467810369", "Mon Apr 06 22:19:45 PDT 2009", "NO_QUERY", "_TheSpecialOne_", "is upset about it"],
        ["0", "1467810672", "Mon Apr 06 22:19:49 PDT 2009", "NO_QUERY", "scotthamilton", "can not update"],
        ["4", "1467810917", "Tue Apr 07 01:02:03 PDT 2009", "NO_QUERY", "mattycus", "dived many times"],
    ]
    d = detect_header(rows)
    assert not d.has_header and "'Mon Apr 06 22:19:45 PDT 2009' (a date)" in d.reason
    named = detect_header([["id", "created", "body"], ["1", "2015-02-24 11:35:52 -0800", "late again today"]])
    assert named.has_header and "sentence" not in named.reason
    assert [cell_kind(v) for v in ("2015-02-24", "24/02/2015 11:35", "Apr 6, 2009", "late again today")] == [
        "date",
        "date",
        "date",
        "text",
    ]


@pytest.mark.parametrize("has_header", [True, False])
@pytest.mark.parametrize("user_col", [None, "nope"])
def test_a_wide_files_column_list_is_never_cut_mid_entry(has_header, user_col):
    """Issue 27: with 40 long column names the message was cut by its 500-character cap inside an entry
    ("… 9:…"); the list now ends in whole entries and says how many more there are."""
    from dpsu_core.errors import MAX_MESSAGE_CHARS, ColumnError

    cols = [f"tweet_column_number_{i}" for i in range(40)]
    first = [f"value_of_column_{i}" for i in range(40)]
    if not has_header and user_col is not None:
        user_col = "99"  # no header: a position, out of range
    with pytest.raises(ColumnError) as err:
        choose_columns(cols, user_col, None, has_header, first_row=first)
    msg = str(err.value)
    assert len(msg) <= MAX_MESSAGE_CHARS
    assert not msg.endswith("…"), msg  # the cap did not fall inside the message
    shown = msg.count("first value") if not has_header else msg.count("'tweet_column_number_")
    assert shown >= 3 and f"… and {40 - shown} more" in msg, msg


def test_a_category_is_judged_by_rows_per_value_and_the_largest_share_not_only_by_few_values():
    # few values, many rows each (the old rule); many values, many rows each; one value on a tenth of the rows
    assert reads_like_category(6, 7501, 1251)
    assert reads_like_category(37, 9989, 1700) and reads_like_category(37, 9989, 270)
    assert reads_like_category(5000, 20_000, 2500)
    # people: a few rows each, none holding a tenth of them; and a small file's few users
    assert not reads_like_category(2000, 9989, 6) and not reads_like_category(7, 30, 5)
    assert not reads_like_category(30, 200, 40)  # a fifth of the rows, but fewer than a category's rows per value


def test_a_category_with_many_values_is_warned_before_loading_and_refused_under_strict(tmp_path):
    src = tmp_path / "analyst.csv"
    src.write_bytes(analyst_notes())
    out = tmp_path / "o.csv"

    def release(user_col: str) -> subprocess.CompletedProcess:
        argv = [*RELEASE[:1], str(src), *RELEASE[1:], "--text-col", "text", "--user-col", user_col, "--strict"]
        argv += ["-o", str(out)]
        return subprocess.run(
            [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv], capture_output=True, text=True, timeout=300
        )

    run = release("stock")
    assert run.returncode == 2, run.stderr
    warned = [ln for ln in run.stderr.splitlines() if ln.startswith("warning:") and "distinct values over" in ln]
    assert len(warned) == 1, run.stderr
    assert f"{ANALYST_STOCKS} distinct values over {ANALYST_ROWS:,} rows" in warned[0]
    assert "270 rows per value" in warned[0] and "the largest holds 17% of the rows" in warned[0]
    assert run.stderr.splitlines()[-1].startswith("dpsu: error") and "--strict" in run.stderr.splitlines()[-1]
    assert not out.exists()
    # the analysts are people: no such warning, and --strict lets the release through
    run = release("analyst")
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr and out.exists()
