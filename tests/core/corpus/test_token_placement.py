"""The tokens of a stream of batches over several worker threads are exactly those of one thread on the whole
column: the same strings per post, whatever the batching and the number of workers (issue 20: the parts
of every worker are copied or remapped into place by compiled kernels in the worker threads)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from dpsu_core.corpus import tokenize as tk
from dpsu_core.corpus.tokenize import Preprocessing, TokenStream, tokenize

WORDS = [
    "Alpha", "beta", "don't", "'quoted'", "ΔΈΛΤΑ", "straße", "STRASSE", "İstanbul", "ǅemal", "ﬁne", "東京", "日本語",
    "naïve", "nai\u0308ve", "e\u0301", "😀", "👍🏽", "x1", "42", "...", "foo-bar", "mañana", "ÅNGSTRÖM", "ﾊﾝｶｸ",
    "עברית", "العربية", "zero\u200bwidth", "a\ufe0fb", "it’s", "<b>bold</b>", "&amp;", "http://x.org/a", "www.y.com",
]  # fmt: skip


def _texts(n: int, seed: int) -> list[str]:
    """``n`` posts of 0 to 24 random words, each followed by a random separator (drawn in bulk)."""
    rng = np.random.default_rng(seed)
    seps = [" ", "  ", "\t", "\n", ", ", "—", " (", ") "]
    lengths = rng.integers(0, 25, size=n)
    words, gaps = rng.integers(0, len(WORDS), size=(2, int(lengths.sum())))
    pieces = [WORDS[w] + seps[g % len(seps)] for w, g in zip(words.tolist(), gaps.tolist())]
    ends = np.cumsum(lengths)
    return ["".join(pieces[a:b]) for a, b in zip((ends - lengths).tolist(), ends.tolist())]


def _posts(tok) -> list[list[str]]:
    return [list(tok.unigrams[tok.codes[a:b]]) for a, b in zip(tok.post_ptr[:-1], tok.post_ptr[1:])]


@pytest.mark.parametrize("prep", [Preprocessing(), Preprocessing(lowercase=False, strip_symbols=False)])
@pytest.mark.parametrize("workers, batches", [(2, 1), (2, 5), (3, 4)])
def test_streamed_parallel_tokens_equal_one_thread(monkeypatch, prep, workers, batches):
    monkeypatch.setattr(tk, "_PARALLEL_MIN_BYTES", 1)  # split even small batches across the workers
    texts = _texts(6000, seed=workers * 10 + batches)
    whole = pa.array(texts, type=pa.string())
    reference = tokenize(whole, tokenizer="fast", prep=prep, workers=1)
    with TokenStream("fast", prep, workers=workers) as stream:
        for part in np.array_split(np.arange(len(texts)), batches):
            stream.submit(whole.slice(int(part[0]), len(part)))
        got = stream.finish()
    assert _posts(got) == _posts(reference)
    assert got.codes.dtype == np.int32 and len(set(got.unigrams.tolist())) == got.unigrams.shape[0]
    assert np.array_equal(np.unique(got.codes), np.arange(got.unigrams.shape[0]))  # every id used, densely
