"""Uploads of every format from bytes and a file name (what the app's Corpus page hands over)."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest

from dpsu_core.corpus import LoadOptions, load_upload, peek_upload
from dpsu_core.errors import DpsuError, EncodingError, InputError

POSTS = pd.DataFrame(
    {
        "author": ["ann", "bob", "ann", "cid", "dee", "bob"],
        "body": ["the cat sat", "a dog ran", "the cat ran", "hello world", "the end", "cat and dog"],
    }
)


def _zip(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, data)
    return buf.getvalue()


def _parquet() -> bytes:
    buf = io.BytesIO()
    POSTS.to_parquet(buf, index=False)
    return buf.getvalue()


UPLOADS = {
    "csv": ("posts.csv", POSTS.to_csv(index=False).encode(), 4),
    "tsv": ("posts.tsv", POSTS.to_csv(index=False, sep="\t").encode(), 4),
    "jsonl": ("posts.jsonl", "\n".join(json.dumps(r) for r in POSTS.to_dict("records")).encode(), 4),
    "parquet": ("posts.parquet", _parquet(), 4),
    "txt": ("posts.txt", "\n".join(POSTS["body"]).encode(), 6),  # one post per line: each line a user
    "sequences": ("seqs.seq", b"% Sequences:\r\n1 2 3\r\n2 2 4\r\n\r\n5 1\r\n", 3),
    "zip": ("posts.zip", _zip("posts.csv", POSTS.to_csv(index=False).encode()), 4),
}


@pytest.mark.parametrize("fmt", list(UPLOADS))
def test_upload_every_format_from_bytes(fmt):
    name, data, users = UPLOADS[fmt]
    corpus = load_upload(data, name, LoadOptions())
    assert corpus.n_users == users
    assert corpus.n_items > 0


def test_peek_upload_guesses_columns():
    name, data, _ = UPLOADS["csv"]
    cols, user, text = peek_upload(data, name)
    assert cols == ["author", "body"] and (user, text) == ("author", "body")


@pytest.mark.parametrize(
    "name,data,err",
    [
        ("empty.csv", b"", InputError),
        ("binary.csv", bytes(range(256)) * 40, EncodingError),
    ],
)
def test_bad_uploads_raise_typed_errors(name, data, err):
    with pytest.raises(err) as e:
        load_upload(data, name, LoadOptions())
    assert isinstance(e.value, DpsuError) and len(str(e.value)) > 20
