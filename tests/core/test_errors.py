"""errors.py: every typed error's message is one line of at most MAX_MESSAGE_CHARS; lists are shortened."""

from __future__ import annotations

import pytest

from dpsu_core.errors import (
    MAX_MESSAGE_CHARS,
    ColumnError,
    DpsuError,
    InputError,
    OutputError,
    ParameterError,
    ResourceLimitError,
    cap_message,
    short_name,
    shorten_list,
)


def test_cap_message_cuts_between_words():
    words = " ".join(f"word{i:03d}" for i in range(200))  # 7 characters + a space each
    capped = cap_message(words, limit=50)
    assert capped.endswith("…") and len(capped) <= 50
    kept = capped[:-1].split()
    assert kept == words.split()[: len(kept)]  # whole words only, in order
    assert cap_message("x" * 80, limit=50) == "x" * 49 + "…"  # one word longer than the line: cut inside it


def test_cap_message_one_line_and_capped():
    assert cap_message("a\nb\r\n  c\td") == "a b c d"
    long = "word " * 1000
    capped = cap_message(long)
    assert len(capped) <= MAX_MESSAGE_CHARS and capped.endswith("…")
    assert cap_message("x" * MAX_MESSAGE_CHARS) == "x" * MAX_MESSAGE_CHARS  # exactly at the cap: unchanged


@pytest.mark.parametrize("cls", [DpsuError, InputError, ColumnError, ParameterError, ResourceLimitError, OutputError])
def test_every_typed_error_is_capped(cls):
    exc = cls("bad column " + "y" * 65536 + "\nsecond line")
    text = str(exc)
    assert "\n" not in text and len(text) <= MAX_MESSAGE_CHARS
    assert text.startswith("bad column yyy")
    assert isinstance(exc, DpsuError) and isinstance(exc, ValueError)


def test_shorten_list():
    assert shorten_list([]) == "none"
    assert shorten_list(["a", "b"]) == "a, b"
    names = [f"m{i}.csv" for i in range(20_000)]
    text = shorten_list(names, limit=3)
    assert text == "m0.csv, m1.csv, m2.csv … and 19997 more"
    assert shorten_list(["x" * 500], quote=True) == repr("x" * 59 + "…")
    assert shorten_list(iter(["a", "b", "c"]), limit=2) == "a, b … and 1 more"  # any iterable, read once


def test_short_name():
    assert short_name("a.csv") == "'a.csv'"
    assert short_name("n\nl") == repr("n\nl")  # repr keeps a newline in a name off the message's line
    assert len(short_name("z" * 10_000)) <= 62
