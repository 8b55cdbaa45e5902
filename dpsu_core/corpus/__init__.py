"""Corpus ingestion and the Corpus model.

``load_corpus(source, ...)`` reads CSV, TSV, JSON Lines, Parquet, plain text and
pre-tokenized sequence files (optionally zipped) into a ``Corpus``.
"""

from .build import build_corpus, corpus_from_token_lists
from .limits import DEFAULT_LIMITS, ReadLimits
from .load import LoadOptions, load_corpus, load_upload, peek_upload, read_upload
from .model import Corpus, CorpusStats, SourceInfo
from .readers import FORMATS, guess_columns, peek_columns
from .tokenize import TOKENIZERS, Preprocessing

__all__ = [
    "DEFAULT_LIMITS",
    "ReadLimits",
    "FORMATS",
    "TOKENIZERS",
    "Corpus",
    "CorpusStats",
    "LoadOptions",
    "Preprocessing",
    "SourceInfo",
    "build_corpus",
    "corpus_from_token_lists",
    "guess_columns",
    "load_corpus",
    "load_upload",
    "peek_columns",
    "peek_upload",
    "read_upload",
]
