"""Typed errors. Every message names what is wrong and how to fix it.

The CLI prints ``str(error)`` on one line and exits with status 2; the app shows
it in an error box. Nothing else in dpsu_core should raise bare exceptions for
bad user input.

Messages are capped here, in one place: a message is put on one line and cut to
``MAX_MESSAGE_CHARS`` characters (``cap_message``), and lists in a message (zip
members, columns) are shortened with ``shorten_list`` ("a, b, c … and 17 more"),
so a file with 20,000 members or a 64 KB column name never yields a 200 KB line.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_MESSAGE_CHARS = 500  # a sentence of ~300 characters plus a short list (e.g. the columns, first values)
MAX_LISTED = 8  # items of a list shown in a message before "… and N more"
MAX_NAME_CHARS = 60  # one listed name (a column, a zip member) before it is cut with "…"


def first_line(e: BaseException, limit: int = 200, *, typed: bool = False) -> str:
    """The first line of a library's error message, at most ``limit`` characters, for a message of our own: its
    type's name when it has none; ``typed``: "Type: first line" (a failure of a library's own code)."""
    text = str(e).strip()
    first = text.splitlines()[0] if text else ""
    if typed:
        return cap_message(f"{type(e).__name__}: {first}" if first else type(e).__name__, limit)
    return (first or type(e).__name__)[:limit]


def cap_message(message: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` on one line (line breaks become spaces) and at most ``limit`` characters, cut with "…" between
    words (a word of ``MAX_NAME_CHARS`` or more, e.g. a huge column name, is cut inside)."""
    text = " ".join(str(message).split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    before, _, part = head.rpartition(" ")
    if text[limit - 1] != " " and before and len(part) < MAX_NAME_CHARS:
        head = before  # the word the cap falls in is dropped whole
    return head.rstrip() + "…"


def short_name(name: object, limit: int = MAX_NAME_CHARS) -> str:
    """``repr`` of one user-supplied name, cut to ``limit`` characters."""
    text = str(name)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)


def short_path(path: object, limit: int = MAX_NAME_CHARS) -> str:
    """``repr`` of a user-supplied path, cut at the front to ``limit`` characters (the file name is kept)."""
    text = str(path)
    if len(text) > limit:
        text = "…" + text[-(limit - 1) :]
    return repr(text)


def shorten_list(items: Iterable[object], limit: int = MAX_LISTED, *, quote: bool = False, sep: str = ", ") -> str:
    """The first ``limit`` items joined by ``sep``, then "… and N more"; "none" when empty.

    Each item is cut to ``MAX_NAME_CHARS`` (and quoted with ``quote``)."""
    shown: list[str] = []
    n = 0
    for item in items:
        if n < limit:
            if quote:
                shown.append(short_name(item))
            else:
                text = str(item)
                shown.append(text if len(text) <= MAX_NAME_CHARS else text[: MAX_NAME_CHARS - 1] + "…")
        n += 1
    if n == 0:
        return "none"
    more = f" … and {n - limit} more" if n > limit else ""
    return sep.join(shown) + more


class DpsuError(ValueError):
    """Base class of every error caused by the user's input or parameters. The message is capped (``cap_message``)."""

    def __init__(self, message: object = "") -> None:
        super().__init__(cap_message(message))


class ParameterError(DpsuError):
    """A privacy or mechanism parameter is out of range."""


class InputError(DpsuError):
    """A corpus file cannot be read or interpreted."""


class EmptyCorpusError(InputError):
    """The corpus has no users, no tokens, or too few users to be useful."""


class ColumnError(InputError):
    """The user or text column is missing, unknown or ambiguous."""


class EncodingError(InputError):
    """The file is binary or cannot be decoded as text."""


class ResourceLimitError(InputError):
    """Reading the input would pass a size limit (file size, decompressed size, nesting depth)."""


class OutputError(ParameterError):
    """An output path is unsafe (it would overwrite an input) or cannot be written."""


class OutputCommitError(OutputError):
    """Renaming a run's written outputs into place failed part way: an output may have been visible (or still be
    there), so the release must count as spent."""


def os_error_message(exc: OSError) -> str:
    """One line for an OSError raised while reading or writing a user's file."""
    what = exc.strerror or type(exc).__name__
    return f"{what}: {exc.filename}" if exc.filename else f"{what} ({exc})"
