"""Options named in messages: the core names an option by its key, each interface in its own words.

A core message refers to an option as ``opt("user_col")``; the CLI renders it with ``speak(msg, CLI_OPTIONS)``
("--user-col") and the app with its widget names. Anything not rendered reads as the neutral phrase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .reading import HEADER_FLAGS, HEADER_NEUTRAL, READING_OPTIONS

_MARK = re.compile(r"⟦([a-z_]+)⟧")

NEUTRAL: dict[str, str] = {
    **{o.field: o.neutral for o in READING_OPTIONS},  # the reading options (``reading``), then the others
    **HEADER_NEUTRAL,
    "max_n": "the longest n-gram length",
    "strict": "the strict option",
    "tokenizer": "the tokenizer",
    "char_ngrams": "the character n-gram length",
}

CLI_OPTIONS: dict[str, str] = {
    **{o.field: o.flag for o in READING_OPTIONS},
    "header": HEADER_FLAGS[True],
    "no_header": HEADER_FLAGS[False],
    "max_n": "--max-n",
    "strict": "--strict",
    "tokenizer": "--tokenizer",
    "char_ngrams": "--char-ngrams",
}


def opt(key: str) -> str:
    """The marker of option ``key`` inside a core message."""
    if key not in NEUTRAL:
        raise KeyError(key)
    return f"⟦{key}⟧"


def speak(message: str, names: Mapping[str, str] | None = None) -> str:
    """``message`` with every option marker replaced by ``names[key]`` (the neutral phrase if absent)."""
    names = names or {}
    return _MARK.sub(lambda m: names.get(m.group(1), NEUTRAL.get(m.group(1), m.group(1))), message)


def count_text(n: int | float) -> str:
    """A count as every interface shows it: with thousands separators ("3,271"), wherever a figure is written."""
    return f"{int(n):,}"
