"""How the counts' defaults were chosen: on the tokenizer benchmark's FIRST half only.

    python -m benchmarks.run tokenizer_tuning

``bench_tokenizer`` splits each corpus's users in two and measures on the second half. The defaults of
``--with-counts`` (its share of the budget, ``item_counts.DEFAULT_SHARE``) and the rule turning noisy counts into
training frequencies (``tokenizer_export.training_frequencies``) were chosen here, where the FIRST half's users are
split again: release and train on part A, measure tokens per word on part B. The second half is never read. Rules
compared (each item at least once): ``once`` (counts ignored), ``scaled_200k`` (the former rule: counts scaled to
about 200,000 words), ``count_over_sigma`` and ``sqrt_count_over_sigma`` (the rule kept). Noise is seeded; each
cell is the median over DRAWS independent draws (seeds 0, 1, ...) with its range, and the set release at the whole
budget (no counts) is measured beside them.

The target vocabulary size is half the benchmark's (``VOCAB // 2``): part A holds half the users of the benchmark's
training half, so its release is about half as large, and the vocabulary must bind as it does in the benchmark
(below what spells every released word whole). At the benchmark's own size the demo's part-A release (about 125
words at epsilon 3) fits whole, every word keeps its own token whatever its count, and the rules cannot differ:
the earlier single-draw tuning at that size compared noise, not rules.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from benchmarks.bench_tokenizer import DELTA, MECHANISM, SEED, VOCAB, _score, _spread, _subset, _word_frequencies
from dpsu_core.corpus.model import Corpus
from dpsu_core.mechanisms.item_counts import mechanism_with_counts, release_with_counts
from dpsu_core.mechanisms.registry import get_mechanism
from dpsu_core.outputs.tokenizer_export import TokenizerSpec, build_tokenizer

GRID = {  # corpus: (epsilons, shares)
    "demo": ((1.0, 3.0, 8.0), (0.05, 0.1, 0.2)),
    "synthetic-200k": ((3.0,), (0.1, 0.2)),
}
MODELS = ("bpe", "unigram")
SPLIT_SEED = 7
DRAWS = {"demo": 5, "synthetic-200k": 3}


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
    size = VOCAB[name] // 2
    epsilons, shares = GRID[name]
    draws = DRAWS[name]
    rows = []

    def score(release: Any, spec: TokenizerSpec, reps: np.ndarray | None) -> float:
        bare = SimpleNamespace(items=release.items, ngram_len=release.ngram_len, noisy_counts=None)
        return _score(build_tokenizer(bare, spec, frequencies=reps)[0], words, freq)["tokens_per_word"]

    for eps in epsilons:
        plain = [get_mechanism(MECHANISM, epsilon=eps, delta=DELTA).release(a, seed=d) for d in range(draws)]
        for model in MODELS:
            spec = TokenizerSpec(model=model, vocab_size=size)
            row: dict[str, Any] = {"epsilon": eps, "share": 0.0, "model": model}
            row["items"] = _spread([p.n_released for p in plain])
            row["set_only"] = _spread([score(p, spec, None) for p in plain])
            rows.append(row)
            print(name, row, flush=True)
        for share in shares:
            mech, cc = mechanism_with_counts(MECHANISM, epsilon=eps, delta=DELTA, share=share)
            rels = [release_with_counts(mech, cc, a, seed=d) for d in range(draws)]
            for model in MODELS:
                spec = TokenizerSpec(model=model, vocab_size=size)
                row = {"epsilon": eps, "share": share, "model": model}
                row["items"] = _spread([r.n_released for r in rels])
                for rule in RULES:
                    row[rule] = _spread([score(r, spec, _rule(rule, r.noisy_counts, cc.sigma)) for r in rels])
                rows.append(row)
                print(name, row, flush=True)
    return {"users_a": int(a.n_users), "users_b": int(b.n_users), "vocab_size": size, "draws": draws, "rows": rows}


def run() -> dict[str, Any]:
    from dpsu_core.corpus.demo import load_demo
    from dpsu_core.corpus.synthetic import synthetic_200k

    return {
        "mechanism": MECHANISM,
        "delta": DELTA,
        "note": (
            "tokens per word on part B of the benchmark's first half (median and range over the draws); released "
            "and trained on part A; share 0 is the set release at the whole budget, each item once"
        ),
        "demo": _one_corpus("demo", load_demo()),
        "synthetic-200k": _one_corpus("synthetic-200k", synthetic_200k(keep_counts=True)),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
