"""The flat form of tokenized posts, shared by the tokenizer (``tokenize``) and the word segmentation that
finishes the ``auto`` and ``char-ngrams`` tokenizers (``segment``): both import it from here, neither imports
the other's module at import time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tokenized:
    """Flat tokenized posts: post j is ``codes[post_ptr[j]:post_ptr[j+1]]``, ids into ``unigrams``."""

    codes: np.ndarray  # int32
    post_ptr: np.ndarray  # int64, n_posts + 1
    unigrams: np.ndarray  # object array of str

    @property
    def n_tokens(self) -> int:
        return int(self.codes.shape[0])
