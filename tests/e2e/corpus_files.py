"""Small real upload files for the browser tests, written into a temporary folder.

The good corpus is a CSV (columns author, body, score) of a few hundred users. Every user writes
some common words and a line of hostile-looking text (spreadsheet formulas, HTML, Markdown) so that,
with "Strip symbols" off, items starting with = + - @ and the pieces of ``<script>`` are used by
every user and get released; exactly one user also writes a canary word.
"""

from __future__ import annotations

import csv
import io

import numpy as np

N_USERS = 400
CANARY = "zqxcanary7731"  # written by one user only: a private release must not contain it
USER_PREFIX = "member_"  # user ids look like member_0007: no export may contain one
COMMON = (
    "the",
    "and",
    "data",
    "privacy",
    "model",
    "users",
    "release",
    "noise",
    "vocabulary",
    "words",
    "text",
    "corpus",
    "paper",
    "budget",
    "test",
    "query",
    "table",
    "count",
    "set",
    "union",
)
HOSTILE = "=SUM(A1) @everyone +1 -rf <script>alert(1)</script> **bold**"
# Tokens the fast tokenizer makes of HOSTILE with symbols kept, starting with a formula character.
FORMULA_TOKENS = ("=", "@", "+", "-")


def user_id(i: int) -> str:
    return f"{USER_PREFIX}{i:04d}"


def good_csv(n_users: int = N_USERS, seed: int = 7) -> bytes:
    """The good upload: one to three posts per user; user 0 alone writes the canary."""
    rng = np.random.default_rng(seed)  # test data only (no privacy noise here)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["author", "body", "score"])
    for i in range(n_users):
        n_posts = int(rng.integers(1, 4))
        for j in range(n_posts):
            words = rng.choice(COMMON, size=6, replace=False).tolist()
            body = " ".join(words)
            if j == 0:
                body += " " + HOSTILE
            if i == 0 and j == 0:
                body += f" {CANARY}"
            w.writerow([user_id(i), body, int(rng.integers(0, 100))])
    return buf.getvalue().encode("utf-8")


def binary_bytes() -> bytes:
    """Not text at all (a PNG header and NUL bytes): the reader must refuse it."""
    return b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8 + b"\x00" * 512


def one_column_csv() -> bytes:
    """A CSV with a text column but no user column."""
    return b"body\nhello world\nanother post here\nand a third one\n"
