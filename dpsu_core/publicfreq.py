"""Public item frequencies for GW-KT (Carvalho et al. 2022, section 4: knowledge transfer).

GW-KT orders each user's items by a frequency taken from PUBLIC data instead of the user's
own counts. The frequencies here are a function of two things only: the item *strings*
(``vocab``) and a public source, either

* the default, the ``wordfreq`` package's frequency list for ``lang`` (cached per language), or
* a public corpus the analyst supplies: a ``Corpus`` loaded from a public file, or the path of
  such a file (read with ``dpsu_core.corpus.load_corpus``); its distinct-user counts (default) or
  occurrence counts, matched to ``vocab`` by string.

``public_frequencies`` never sees the private corpus' counts or users: its only input from the
private side is the list of strings whose public frequency is looked up, one lookup per string.

Scale: only the order matters to GW-KT. Items missing from the public source count 1 (the paper's
rule). Public-corpus counts are >= 1 for every item it contains. wordfreq frequencies are
expressed as occurrences per billion words; wordfreq's list stops at about 1e-8, i.e. about 10
per billion, so every listed word ranks above a missing one.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .corpus.model import Corpus
from .errors import InputError, ParameterError
from .privacy.validate import check_choice

PER_BILLION = 1e9
MISSING = 1.0
COUNT_KINDS = ("users", "occurrences")


# --------------------------------------------------------------------------- wordfreq
@functools.lru_cache(maxsize=8)
def _wordfreq_table(lang: str) -> pd.Series:
    """wordfreq's 'best' list for ``lang`` as a Series word -> occurrences per billion words (cached)."""
    import wordfreq

    table = wordfreq.get_frequency_dict(lang, wordlist="best")
    return pd.Series(table, dtype=np.float64) * PER_BILLION


def _check_lang(lang: str) -> str:
    import wordfreq

    langs = wordfreq.available_languages(wordlist="best")
    if not isinstance(lang, str) or lang not in langs:
        raise ParameterError(
            f"wordfreq has no frequency list for language {lang!r}; use one of {', '.join(sorted(langs))} "
            f"(e.g. 'en'), or supply a public corpus instead"
        )
    return lang


def wordfreq_frequencies(vocab: np.ndarray, lang: str = "en") -> np.ndarray:
    """Occurrences per billion words of each item in wordfreq's list; MISSING (1) if absent.

    An n-gram ("new york") gets wordfreq's own phrase rule, 1/f = 1/f_1 + ... + 1/f_n over its words
    (what ``wordfreq.word_frequency`` does for a multi-word string): smaller than every word's
    frequency and dominated by the rarest word, so "of the" ranks far above "of zymurgy". If any
    word is missing, the n-gram is missing. Words are looked up lower-cased, as wordfreq does.
    Vectorised: one pandas lookup per n-gram position.
    """
    table = _wordfreq_table(_check_lang(lang))
    words = pd.Series(np.asarray(vocab, dtype=object), dtype=object).astype(str)
    if words.empty:
        return np.zeros(0, dtype=np.float64)
    parts = words.str.lower().str.split(" ", expand=True)
    inv = np.zeros(len(words), dtype=np.float64)
    missing = np.zeros(len(words), dtype=bool)
    for col in parts.columns:
        tok = parts[col]
        present = tok.notna().to_numpy() & (tok.fillna("").to_numpy(dtype=object) != "")
        f = tok.map(table).to_numpy(dtype=np.float64, na_value=np.nan)
        missing |= present & ~np.isfinite(f)
        ok = present & np.isfinite(f)
        inv[ok] += 1.0 / f[ok]
    out = np.full(len(words), MISSING, dtype=np.float64)
    known = ~missing & (inv > 0)
    out[known] = 1.0 / inv[known]
    return out


# --------------------------------------------------------------------------- public corpus
def corpus_frequencies(vocab: np.ndarray, public: Corpus, count: str = "users") -> np.ndarray:
    """Counts of each item in a PUBLIC corpus, matched by string; MISSING (1) if absent.

    ``count="users"``: distinct users of the public corpus using the item; ``"occurrences"``: total uses.
    """
    check_choice(count, "count", COUNT_KINDS)
    if count == "users":
        pub: np.ndarray = public.user_counts.astype(np.float64)
    else:
        pub = np.bincount(public.items, weights=public.counts.astype(np.float64), minlength=public.n_items)
    idx = pd.Index(np.asarray(public.vocab, dtype=object)).get_indexer(np.asarray(vocab, dtype=object))
    out = np.full(idx.shape[0], MISSING, dtype=np.float64)
    hit = idx >= 0
    out[hit] = np.maximum(pub[idx[hit]], MISSING)
    return out


@functools.lru_cache(maxsize=4)
def _load_public(path: str, mtime_ns: int, max_n: int) -> Corpus:
    from .corpus import load_corpus  # the project's one reader

    return load_corpus(path, max_n=max_n)


def _vocab_max_n(vocab: np.ndarray) -> int:
    if len(vocab) == 0:
        return 1
    return int(pd.Series(np.asarray(vocab, dtype=object), dtype=object).astype(str).str.count(" ").max()) + 1


def load_public_corpus(path: str | os.PathLike, max_n: int = 1) -> Corpus:
    """Read a PUBLIC corpus file (cached by path, modification time and max_n)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"public corpus file {str(p)!r} not found; give the path of a readable public text file")
    return _load_public(str(p.resolve()), p.stat().st_mtime_ns, int(max_n))


# --------------------------------------------------------------------------- entry point
def check_public_source(source: Any, lang: str = "en") -> Any:
    """Validate a public source early (before any data is touched); returns it unchanged."""
    if source is None:
        _check_lang(lang)
        return None
    if isinstance(source, Corpus):
        return source
    if isinstance(source, (str, os.PathLike)):
        if not Path(source).is_file():
            raise InputError(
                f"public corpus file {str(source)!r} not found; give the path of a readable public text "
                f"file, or leave public_source empty to use wordfreq's English frequencies"
            )
        return source
    raise ParameterError(
        f"public_source must be None (wordfreq), a file path or a Corpus loaded from a public file, "
        f"got {type(source).__name__}"
    )


def describe_source(source: Any, lang: str = "en") -> str:
    """What GW-KT records in its calibration: a description only, never data."""
    if source is None:
        return f"wordfreq {lang}"
    if isinstance(source, Corpus):
        return f"public corpus {source.source.name}" if source.source.name else "public corpus (in memory)"
    return f"public corpus {Path(source).name}"


def public_frequencies(
    vocab: np.ndarray, source: None | str | os.PathLike | Corpus = None, lang: str = "en", *, count: str = "users"
) -> np.ndarray:
    """Public frequency of every item of ``vocab`` (float64, aligned with it); items missing count 1.

    ``source``: None -> wordfreq's list for ``lang``; a path -> that public file, read with n-grams up to
    the longest in ``vocab``; a Corpus -> that public corpus. ``count`` applies to public corpora.
    Only the strings of ``vocab`` are used, never anything else about the private corpus.
    """
    vocab = np.asarray(vocab, dtype=object)
    source = check_public_source(source, lang)
    if source is None:
        return wordfreq_frequencies(vocab, lang)
    if not isinstance(source, Corpus):
        source = load_public_corpus(source, max_n=_vocab_max_n(vocab))
    return corpus_frequencies(vocab, source, count)
