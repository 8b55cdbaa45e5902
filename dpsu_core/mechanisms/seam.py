"""The engine seam: what a mechanism gets from an engine.

``EngineCorpus`` is the vocabulary side of a corpus (item strings, n-gram lengths, token ids, sizes, the
source's description): every mechanism reads it, and both the local ``corpus.Corpus`` and the Spark engine's
``engines.spark_release.SparkRows`` implement it. The users' rows are reached in one of two ways:

* ``RowsElsewhere``: an engine that keeps the rows where the data lives (the Spark executors) runs the
  order-free DPSU step there (``weighted_histogram``) and hands back the histogram H; only the parallel
  mechanisms (``order_free``) need nothing more, and ``dpsu_step.weighted_histogram`` dispatches to it;
* ``rows_here``: a mechanism that visits the users one by one needs the rows in this process, a ``Corpus``;
  given anything else it raises a one-line error naming the mechanism (never an empty corpus).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..corpus.model import Corpus, SourceInfo
from ..errors import InputError


class EngineCorpus(Protocol):
    """The vocabulary and sizes of a corpus, wherever its rows are."""

    @property
    def vocab(self) -> np.ndarray: ...  # object (str), by item id
    @property
    def ngram_len(self) -> np.ndarray: ...  # int8, by item id
    @property
    def gram_tokens(self) -> np.ndarray: ...  # (n_items, max_n) int32 unigram ids, -1 padded
    @property
    def source(self) -> SourceInfo: ...
    @property
    def n_users(self) -> int: ...
    @property
    def n_items(self) -> int: ...
    @property
    def nnz(self) -> int: ...
    @property
    def max_n(self) -> int: ...
    @property
    def n_posts(self) -> int: ...
    @property
    def n_tokens(self) -> int: ...
    @property
    def unigram_of_token(self) -> np.ndarray: ...
    def item_strings(self, ids: np.ndarray) -> np.ndarray: ...
    def lengths_mask(self, lengths) -> np.ndarray: ...


@runtime_checkable
class RowsElsewhere(EngineCorpus, Protocol):
    """A corpus whose rows live elsewhere: it runs steps 1-2 of the DPSU step where they are (each call with
    fresh sampling randomness) and hands back H; noise and threshold (step 3) stay here."""

    def weighted_histogram(self, max_items: int, power: float, keep: np.ndarray | None) -> np.ndarray: ...


class RowsNotHere(InputError):
    """A sequential mechanism was handed a corpus whose rows live elsewhere."""


def rows_here(corpus: EngineCorpus, mechanism: str) -> Corpus:
    """``corpus`` as a ``Corpus`` with its rows in this process, or a one-line error naming ``mechanism``."""
    if isinstance(corpus, Corpus):
        return corpus
    raise RowsNotHere(
        f"{mechanism} visits the users one by one and needs their rows in this process, which this engine keeps "
        "where the data lives; collect them first (the Spark engine's spark_release does that)"
    )
