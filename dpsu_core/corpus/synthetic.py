"""Synthetic corpora for benchmarks and tests (built straight into the CSR model, vectorised)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..privacy.validate import check_positive_int
from .model import Corpus, SourceInfo

SIZE_DISTRIBUTIONS = ("constant", "uniform", "log-uniform", "geometric")


def user_sizes(rng: np.random.Generator, n_users: int, distribution: str, size: int) -> np.ndarray:
    """Words per user (int64, >= 1). ``size`` is the constant value, the maximum (uniform 1..size; log-uniform:
    floor(exp(U(0, ln(size + 1)))) clipped to 1..size), or the mean (geometric on 1, 2, ...)."""
    n = check_positive_int(n_users, "users", "e.g. 2000")
    k = check_positive_int(size, "words per user", "e.g. 50")
    if distribution == "constant":
        return np.full(n, k, dtype=np.int64)
    if distribution == "uniform":
        return rng.integers(1, k + 1, size=n).astype(np.int64)
    if distribution == "log-uniform":
        sizes = np.floor(np.exp(rng.uniform(0.0, np.log(k + 1), size=n))).astype(np.int64)
        return np.clip(sizes, 1, k)
    if distribution == "geometric":
        return rng.geometric(1.0 / k, size=n).astype(np.int64)
    raise ParameterError(
        f"items-per-user distribution must be one of {', '.join(SIZE_DISTRIBUTIONS)}, got {distribution!r}"
    )


def _zipf_rows(
    rng: np.random.Generator,
    sizes: np.ndarray,
    n_words: int,
    s: float,
    name: str,
    fmt: str = "synthetic",
    *,
    keep_counts: bool = True,
) -> Corpus:
    """Draw each user's ``sizes[i]`` words i.i.d. from Zipf(s) over ``n_words`` words, de-duplicated per user.
    ``keep_counts``: the multiplicities become the per-user counts C_i[u] (text-like); otherwise each user
    holds a plain set (every C_i[u] = 1). Words are named ``w<rank>`` (rank 0 = most frequent)."""
    n_users = int(sizes.shape[0])
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
        counts=(counts if keep_counts else np.ones_like(counts)).astype(np.int32),
        vocab=vocab,
        ngram_len=np.ones(used.shape[0], dtype=np.int8),
        gram_tokens=np.arange(used.shape[0], dtype=np.int32).reshape(-1, 1),
        n_posts=n_users,
        n_tokens=total,
        source=SourceInfo(name=name, format=fmt),
    )


def zipf_corpus(
    n_users: int,
    n_words: int,
    max_size: int,
    *,
    s: float = 1.0,
    seed: int | None = None,
    keep_counts: bool = True,
) -> Corpus:
    """Each user's target size is log-uniform on 1..max_size (``user_sizes``); words are drawn i.i.d. from
    Zipf(s) over ``n_words`` words and de-duplicated per user (``keep_counts``: see ``_zipf_rows``).
    Words are named ``w<rank>``."""
    rng = np.random.default_rng(seed)
    sizes = user_sizes(rng, n_users, "log-uniform", max_size)
    return _zipf_rows(rng, sizes, n_words, s, f"synthetic zipf({s}) {n_users} users", keep_counts=keep_counts)


@dataclass(frozen=True)
class SimulationSpec:
    """Public numbers an analyst types to simulate an exploration corpus (never taken from the private file)."""

    users: int = 2000
    words_per_user: int = 50  # the constant, maximum or mean of ``distribution`` (see ``user_sizes``)
    distribution: str = "log-uniform"
    vocabulary: int = 5000
    zipf_exponent: float = 1.0

    def describe(self) -> str:
        return (
            f"simulated: {self.users:,} users, words per user {self.distribution} ({self.words_per_user}), "
            f"vocabulary {self.vocabulary:,}, Zipf exponent {self.zipf_exponent:g}"
        )


MAX_SIMULATED_WORDS = 20_000_000  # users x words per user: keeps a simulated corpus well under 1 GB


def simulated_corpus(spec: SimulationSpec, seed: int | None = None) -> Corpus:
    """An exploration corpus from ``spec`` alone. Words per user are drawn with repeats, so a user's distinct
    items can be fewer than the drawn words (more so for a steep Zipf exponent)."""
    if spec.distribution not in SIZE_DISTRIBUTIONS:
        raise ParameterError(
            f"items-per-user distribution must be one of {', '.join(SIZE_DISTRIBUTIONS)}, got {spec.distribution!r}"
        )
    vocab = check_positive_int(spec.vocabulary, "vocabulary size", "e.g. 5000")
    z = spec.zipf_exponent
    if isinstance(z, bool) or not isinstance(z, (int, float)) or not np.isfinite(z) or not 0 <= z <= 5:
        raise ParameterError(f"Zipf exponent must be a number from 0 to 5, got {z!r}; 1.0 is typical for words")
    users = check_positive_int(spec.users, "users", "e.g. 2000")
    per = check_positive_int(spec.words_per_user, "words per user", "e.g. 50")
    if users * per > MAX_SIMULATED_WORDS:
        raise ParameterError(
            f"users x words per user = {users * per:,} is above {MAX_SIMULATED_WORDS:,}; "
            "lower one of them (an exploration corpus only needs the right shape)"
        )
    rng = np.random.default_rng(seed)
    sizes = user_sizes(rng, users, spec.distribution, per)
    return _zipf_rows(rng, sizes, vocab, float(z), spec.describe(), fmt="simulated")


def synthetic_200k(seed: int = 12345, *, keep_counts: bool = False) -> Corpus:
    """The benchmark corpus as issue 2 defines it: 200,000 users; each user's target size
    floor(exp(U(0, ln 301))) clipped to 1..300; words drawn i.i.d. from Zipf(1.0) over 100,000 words,
    de-duplicated per user; seed 12345. De-duplicated means each user holds a set: every C_i[u] = 1, so
    GW's own-count order is its keyed tie-break alone (the GW figures of docs/algorithms.md §4 were measured so).
    ``keep_counts=True`` keeps the draws' multiplicities as C_i[u] instead (a variant, not the benchmark)."""
    return zipf_corpus(200_000, 100_000, 300, s=1.0, seed=seed, keep_counts=keep_counts)
