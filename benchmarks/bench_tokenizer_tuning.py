"""How the counts' defaults were chosen: on the tokenizer benchmark's FIRST half only.

    python -m benchmarks.run tokenizer_tuning

``bench_tokenizer`` splits each corpus's users in two and measures on the second half. The defaults of
``--with-counts`` (its share of the budget, ``item_counts.DEFAULT_SHARE``) and the rule turning noisy counts into
training frequencies (``tokenizer_export.training_frequencies``) were chosen here, where the FIRST half's users are
split again: release and train on part A, measure tokens per word on part B. The second half is never read. Rules
compared (each item at least once): ``once`` (counts ignored), ``scaled_200k`` (the former rule: counts scaled to
about 200,000 words), ``count_over_sigma`` and ``sqrt_count_over_sigma`` (the rule kept). Noise is seeded.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from benchmarks.bench_tokenizer import DELTA, MECHANISM, SEED, VOCAB, _score, _subset, _word_frequencies
from dpsu_core.corpus.model import Corpus
from dpsu_core.mechanisms.item_counts import mechanism_with_counts, release_with_counts
from dpsu_core.tokenizer_export import TokenizerSpec, build_tokenizer

GRID = {  # corpus: (epsilons, shares)
    "demo": ((1.0, 3.0, 8.0), (0.05, 0.1, 0.2)),
    "synthetic-200k": ((3.0,), (0.1, 0.2)),
}
MODELS = ("bpe", "unigram")
SPLIT_SEED = 7


def _rule(name: str, counts: np.ndarray, sigma: float) -> np.ndarray | None:
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    if name == "once":
        return None
    if name == "scaled_200k":
        units = c * (200_000 / max(float(c.sum()), 1e-300))
    elif name == "count_over_sigma":
        units = c / sigma
    else:
        units = np.sqrt(c / sigma)
    return np.maximum(1, np.rint(units)).astype(np.int64)


RULES = ("once", "scaled_200k", "count_over_sigma", "sqrt_count_over_sigma")


def _one_corpus(name: str, corpus: Corpus) -> dict[str, Any]:
    perm = np.random.default_rng(SEED).permutation(corpus.n_users)  # bench_tokenizer's split: its first half only
    first = _subset(corpus, np.sort(perm[: corpus.n_users // 2]))
    p2 = np.random.default_rng(SPLIT_SEED).permutation(first.n_users)
    half = first.n_users // 2
    a, b = _subset(first, np.sort(p2[:half])), _subset(first, np.sort(p2[half:]))
    words, freq = _word_frequencies(b)
    size = VOCAB[name]
    epsilons, shares = GRID[name]
    rows = []
    for eps in epsilons:
        for share in shares:
            mech, cc = mechanism_with_counts(MECHANISM, epsilon=eps, delta=DELTA, share=share)
            rel = release_with_counts(mech, cc, a, seed=SEED)
            items = SimpleNamespace(items=rel.items, ngram_len=rel.ngram_len, noisy_counts=None)
            for model in MODELS:
                spec = TokenizerSpec(model=model, vocab_size=size)
                row: dict[str, Any] = {"epsilon": eps, "share": share, "model": model, "items": rel.n_released}
                for rule in RULES:
                    reps = _rule(rule, rel.noisy_counts, cc.sigma)
                    tok = build_tokenizer(items, spec, frequencies=reps)[0]
                    row[rule] = _score(tok, words, freq)["tokens_per_word"]
                rows.append(row)
                print(name, row, flush=True)
    return {"users_a": int(a.n_users), "users_b": int(b.n_users), "vocab_size": size, "rows": rows}


def run() -> dict[str, Any]:
    from dpsu_core.demo import load_demo
    from dpsu_core.synthetic import synthetic_200k

    return {
        "mechanism": MECHANISM,
        "delta": DELTA,
        "note": "tokens per word on part B of the benchmark's first half; released and trained on part A",
        "demo": _one_corpus("demo", load_demo()),
        "synthetic-200k": _one_corpus("synthetic-200k", synthetic_200k(keep_counts=True)),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
