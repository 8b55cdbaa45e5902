"""Synthetic corpora for benchmarks and tests (built straight into the CSR model, vectorised)."""

from __future__ import annotations

import numpy as np

from .corpus.model import Corpus, SourceInfo


def zipf_corpus(n_users: int, n_words: int, max_size: int, *, s: float = 1.0, seed: int | None = None) -> Corpus:
    """Each user's target size is floor(exp(U(0, ln(max_size + 1)))) clipped to 1..max_size; words are
    drawn i.i.d. from Zipf(s) over ``n_words`` words and de-duplicated per user (multiplicities kept
    as per-user counts). Words are named ``w<rank>`` (rank 0 = most frequent)."""
    rng = np.random.default_rng(seed)
    sizes = np.floor(np.exp(rng.uniform(0.0, np.log(max_size + 1), size=n_users))).astype(np.int64)
    sizes = np.clip(sizes, 1, max_size)
    p = 1.0 / np.power(np.arange(1, n_words + 1, dtype=np.float64), s)
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    total = int(sizes.sum())
    words = np.searchsorted(cdf, rng.random(total), side="right").astype(np.int64)
    words = np.minimum(words, n_words - 1)
    users = np.repeat(np.arange(n_users, dtype=np.int64), sizes)
    key = users * n_words + words
    uniq, counts = np.unique(key, return_counts=True)
    u = uniq // n_words
    w = uniq % n_words
    used, items = np.unique(w, return_inverse=True)
    row_len = np.bincount(u, minlength=n_users)
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(row_len, out=indptr[1:])
    vocab = np.array([f"w{i}" for i in used.tolist()], dtype=object)
    return Corpus(
        indptr=indptr,
        items=items.astype(np.int32),
        counts=counts.astype(np.int32),
        vocab=vocab,
        ngram_len=np.ones(used.shape[0], dtype=np.int8),
        gram_tokens=np.arange(used.shape[0], dtype=np.int32).reshape(-1, 1),
        n_posts=n_users,
        n_tokens=total,
        source=SourceInfo(name=f"synthetic zipf({s}) {n_users} users", format="synthetic"),
    )


def synthetic_200k(seed: int = 12345) -> Corpus:
    """The issue's benchmark corpus: 200,000 users, sizes 1..300, Zipf(1.0) over 100,000 words, seed 12345."""
    return zipf_corpus(200_000, 100_000, 300, s=1.0, seed=seed)
