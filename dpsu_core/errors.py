"""Typed errors. Every message names what is wrong and how to fix it.

The CLI prints ``str(error)`` on one line and exits with status 2; the app shows
it in an error box. Nothing else in dpsu_core should raise bare exceptions for
bad user input.
"""

from __future__ import annotations


class DpsuError(ValueError):
    """Base class of every error caused by the user's input or parameters."""


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
