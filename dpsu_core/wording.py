"""Options named in messages: the core names an option by its key, each interface in its own words.

A core message refers to an option as ``opt("user_col")``; the CLI renders it with ``speak(msg, CLI_OPTIONS)``
("--user-col") and the app with its widget names. Anything not rendered reads as the neutral phrase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_MARK = re.compile(r"⟦([a-z_]+)⟧")

NEUTRAL: dict[str, str] = {
    "user_col": "the user column",
    "text_col": "the text column",
    "header": "the header choice (the first row is a header)",
    "no_header": "the header choice (the file has no header row)",
    "row_is_user": "the 'each row is its own user' option",
    "user_pattern": "the user pattern",
    "format": "the format",
    "max_n": "the longest n-gram length",
    "strip_symbols": "the 'strip symbols' option",
    "stop_words": "the stop-word list",
    "strict": "the strict option",
    "tokenizer": "the tokenizer",
    "char_ngrams": "the character n-gram length",
}

CLI_OPTIONS: dict[str, str] = {
    "user_col": "--user-col",
    "text_col": "--text-col",
    "header": "--header",
    "no_header": "--no-header",
    "row_is_user": "--row-is-user",
    "user_pattern": "--user-pattern",
    "format": "--format",
    "max_n": "--max-n",
    "strip_symbols": "--keep-symbols",
    "stop_words": "--stop-words",
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
