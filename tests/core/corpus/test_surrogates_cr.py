"""Text Python accepts but UTF-8 cannot hold (lone surrogate escapes in JSON) is repaired and counted, never a
crash; a CSV with old-Mac CR-only line endings is read row by row."""

from __future__ import annotations

import json

from dpsu_core.corpus import load_corpus, peek_upload
from dpsu_core.corpus.readers import repair_surrogates
from dpsu_core.interfaces.cli import main


def _jsonl(rows: list[str]) -> bytes:
    return ("\n".join(rows) + "\n").encode("ascii")


LONE = _jsonl(
    [
        r'{"user": "a", "text": "lone \ud800 surrogate"}',
        r'{"user": "b\udc00", "text": "fine text"}',
        r'{"user": "c", "text": "pair \ud83d\ude00 kept, escaped \\ud800 kept"}',
    ]
)


def test_lone_surrogates_in_text_and_user_are_replaced_and_counted():
    c = load_corpus(LONE, name="s.jsonl")
    assert c.n_users == 3
    vocab = set(c.vocab.tolist())
    assert {"lone", "surrogate", "fine", "pair", "kept", "escaped", "ud800"} <= vocab
    notes = [n for n in c.source.notes if "lone surrogate" in n]
    assert len(notes) == 1 and notes[0].startswith("2 lines hold") and "first on line 1" in notes[0]


def test_repair_keeps_pairs_and_escaped_backslashes():
    data = rb'{"t": "\ud83d\ude00 \\ud800 \\\ud800 \uDC00x"}'
    out, lines, first = repair_surrogates(data)
    assert json.loads(out)["t"] == "\U0001f600 \\ud800 \\\ufffd \ufffdx"
    assert (lines, first) == (1, 1)
    assert repair_surrogates(b'{"t": "plain"}') == (b'{"t": "plain"}', 0, 0)


def test_json_array_form_and_upload_peek_with_surrogates():
    data = json.dumps([{"user": "a", "text": "x \ud800 y"}, {"user": "b", "text": "z"}]).encode("ascii")
    assert b"\\ud800" in data
    c = load_corpus(data, name="a.json")
    assert c.n_users == 2 and any("lone surrogate" in n for n in c.source.notes)
    assert peek_upload(LONE, "s.jsonl")[0] == ["user", "text"]


def test_cli_surrogates_exit_zero(tmp_path, capsys):
    src = tmp_path / "s.jsonl"
    src.write_bytes(LONE)
    code = main(["release", str(src), "-m", "policy-laplace", "-e", "1", "-d", "1e-3", "-o", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "replaced with U+FFFD" in err and "internal error" not in err


CR = b'user,text\ra,hello world\rb,"good\rday"\rc,hello there\r'


def test_cr_only_csv_is_read_row_by_row():
    c = load_corpus(CR, name="cr.csv")
    assert c.n_users == 3 and c.source.rows_read == 3
    assert (c.source.user_column, c.source.text_column) == ("user", "text")
    assert {"hello", "world", "good", "day", "there"} == set(c.vocab.tolist())
    assert any("CR alone" in n for n in c.source.notes)
    assert peek_upload(CR, "cr.csv")[:3] == (["user", "text"], "user", "text")


def test_cr_only_jsonl_is_read_too():
    data = b'{"user": "a", "text": "x"}\r{"user": "b", "text": "y"}\r'
    assert load_corpus(data, name="cr.jsonl").n_users == 2
