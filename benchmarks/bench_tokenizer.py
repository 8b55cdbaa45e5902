"""How well private tokenizers tokenize: tokens per word and [UNK] rate on held-out users' text.

    python -m benchmarks.run tokenizer

For each corpus (the bundled demo corpus; synthetic-200k with its draws' multiplicities kept as counts, so its
users have text-like word frequencies) the users are split in two at random. On half one: a DP release (the
default mechanism below) at epsilon in {1, 3, 8}, delta 1e-5, once as a set alone and once with noisy counts
(``--with-counts``: the same total (epsilon, delta), ``item_counts.DEFAULT_SHARE`` of it on the counts), and a
tokenizer of each model from each release (``tokenizer_export.build_tokenizer``, exactly what --export-tokenizer
writes). Beside them, a NON-private tokenizer of the same model and the same target vocabulary size, trained on
half one's own words with their true frequencies (as on the raw text: every occurrence). Every tokenizer then encodes half two's
words, each weighted by how often half two uses it: tokens per word and the share of words holding [UNK]. All in
one run, so the figures compare side by side. Noise is seeded (a measurement, not a release). "its items once":
the counted release's items trained each once, so the table parts what the counts add (counted vs its items once)
from what their share of the budget costs in released items (its items once vs set only).

The subword models' target vocabulary size is VOCAB[corpus]: below what it takes to spell every released word as
one token, so the models must choose which words to keep whole (where frequencies matter).
"""

from __future__ import annotations

import dataclasses
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

from dpsu_core.corpus.model import Corpus
from dpsu_core.mechanisms.item_counts import DEFAULT_SHARE, mechanism_with_counts, release_with_counts
from dpsu_core.mechanisms.registry import get_mechanism
from dpsu_core.tokenizer_export import UNK, TokenizerSpec, build_tokenizer

MECHANISM = "policy-gaussian"
EPSILONS = (1.0, 3.0, 8.0)
DELTA = 1e-5
MODELS = ("bpe", "wordpiece", "unigram")
VOCAB = {"demo": 300, "synthetic-200k": 3000}
SEED = 20261126


def _subset(corpus: Corpus, users: np.ndarray) -> Corpus:
    """The corpus of the given users (rows), same vocabulary ids."""
    lens = np.diff(corpus.indptr)[users]
    indptr = np.zeros(users.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    take = np.concatenate([np.arange(corpus.indptr[u], corpus.indptr[u + 1]) for u in users.tolist()])
    return Corpus(
        indptr=indptr,
        items=corpus.items[take],
        counts=corpus.counts[take],
        vocab=corpus.vocab,
        ngram_len=corpus.ngram_len,
        gram_tokens=corpus.gram_tokens,
        n_posts=0,
        n_tokens=int(corpus.counts[take].sum()),
        source=corpus.source,
    )


def _word_frequencies(corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
    """(words, how often the corpus's users use each): single words only. NOT private (raw data)."""
    freq = np.bincount(corpus.items, weights=corpus.counts, minlength=corpus.n_items)
    keep = np.flatnonzero((freq > 0) & (corpus.ngram_len == 1))
    return corpus.vocab[keep], freq[keep]


def _score(tok: Any, words: np.ndarray, freq: np.ndarray) -> dict[str, float]:
    """Tokens per word and [UNK] share over the held-out words, each weighted by its frequency."""
    enc = tok.encode_batch([[w] for w in words.tolist()], is_pretokenized=True, add_special_tokens=False)
    n_tok = np.array([len(e.ids) for e in enc], dtype=np.float64)
    unk = np.array([UNK in e.tokens for e in enc], dtype=np.float64)
    total = float(freq.sum())
    return {
        "tokens_per_word": round(float((n_tok * freq).sum() / total), 4),
        "unk_rate": round(float((unk * freq).sum() / total), 4),
    }


def _non_private(words: np.ndarray, freq: np.ndarray, model: str, size: int) -> Any:
    """A tokenizer trained on half one's words with their true frequencies (the same builder as the DP ones)."""
    fake = SimpleNamespace(items=words, ngram_len=np.ones(words.shape[0], np.int16), noisy_counts=None)
    return build_tokenizer(fake, TokenizerSpec(model=model, vocab_size=size), frequencies=freq)[0]


def _one_corpus(name: str, corpus: Corpus) -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    perm = rng.permutation(corpus.n_users)
    half = corpus.n_users // 2
    train, held = _subset(corpus, np.sort(perm[:half])), _subset(corpus, np.sort(perm[half:]))
    train_words, train_freq = _word_frequencies(train)
    test_words, test_freq = _word_frequencies(held)
    vocab = VOCAB[name]
    rows: list[dict[str, Any]] = []
    for eps in EPSILONS:
        plain = get_mechanism(MECHANISM, epsilon=eps, delta=DELTA).release(train, seed=SEED)
        mech, cc = mechanism_with_counts(MECHANISM, epsilon=eps, delta=DELTA, share=DEFAULT_SHARE)
        counted = release_with_counts(mech, cc, train, seed=SEED)
        for model in ("wordlevel", *MODELS):
            size = None if model == "wordlevel" else vocab
            row: dict[str, Any] = {"epsilon": eps, "model": model}
            t0 = time.perf_counter()
            tok_plain = build_tokenizer(plain, TokenizerSpec(model=model, vocab_size=size))[0]
            tok_counted = build_tokenizer(counted, TokenizerSpec(model=model, vocab_size=size))[0]
            row["released_items"] = {"set only": plain.n_released, "with counts": counted.n_released}
            row["vocab_size"] = {"set only": tok_plain.get_vocab_size(), "with counts": tok_counted.get_vocab_size()}
            row["dp_set_only"] = _score(tok_plain, test_words, test_freq)
            row["dp_with_counts"] = _score(tok_counted, test_words, test_freq)
            if model != "wordlevel":  # the counted release's items, each once: what the counts add on their own
                once = dataclasses.replace(counted, noisy_counts=None, count_std=None)
                tok_once = build_tokenizer(once, TokenizerSpec(model=model, vocab_size=size))[0]
                row["dp_counted_items_once"] = _score(tok_once, test_words, test_freq)
            if model != "wordlevel":
                ref = _non_private(train_words, train_freq, model, vocab)
                row["vocab_size"]["non-private"] = ref.get_vocab_size()
                row["non_private"] = _score(ref, test_words, test_freq)
                c, p, n = (row[k]["tokens_per_word"] for k in ("dp_with_counts", "dp_set_only", "non_private"))
                row["counted_over_non_private"] = round(c / n, 4)
                row["counted_over_set_only"] = round(c / p, 4)
            row["build_seconds"] = round(time.perf_counter() - t0, 2)
            rows.append(row)
            print(name, row, flush=True)
    return {
        "users_train": int(train.n_users),
        "users_held_out": int(held.n_users),
        "distinct_words_train": int(train_words.shape[0]),
        "held_out_word_occurrences": int(test_freq.sum()),
        "target_vocab_size": vocab,
        "rows": rows,
        "table": _table(rows),
        "targets_at_epsilon_3": _targets(rows),
    }


def _targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Issue 30's targets for BPE at epsilon 3, with the arithmetic: counted within 5% of the non-private tokens
    per word, and at least 10% fewer than set-only. When the non-private tokenizer itself is less than 10% better
    than set-only, the second target means beating the non-private one: said so, with by how much."""
    r = next(r for r in rows if r["model"] == "bpe" and r["epsilon"] == 3.0)
    c, p, n = (r[k]["tokens_per_word"] for k in ("dp_with_counts", "dp_set_only", "non_private"))
    need = 0.9 * p  # at least 10% fewer tokens per word than set-only
    return {
        "counted_over_non_private": round(c / n, 4),
        "within_5pct_of_non_private": c <= 1.05 * n,
        "counted_over_set_only": round(c / p, 4),
        "at_least_10pct_below_set_only": c <= need,
        "non_private_over_set_only": round(n / p, 4),
        "ten_pct_target_tokens_per_word": round(need, 4),
        "ten_pct_target_over_non_private": round(need / n, 4),
        "note": (
            f"10% below set-only is {need:.4f} tokens per word, {'below' if need < n else 'above'} the non-private "
            f"tokenizer's {n:.4f} by {abs(1 - need / n):.1%}"
            + (": reachable only by beating the non-private tokenizer" if need < n else "")
        ),
    }


def _table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown rows: model, epsilon, tokens/word (set only, with counts, non-private) and [UNK] rates."""
    out = [
        "| model | ε | tokens/word: set only | with counts | its items once | non-private | counted/non-private "
        "| counted/set-only | [UNK] set only | [UNK] counted | [UNK] non-private |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        npv = r.get("non_private", {})
        out.append(
            f"| {r['model']} | {r['epsilon']:g} | {r['dp_set_only']['tokens_per_word']} | "
            f"{r['dp_with_counts']['tokens_per_word']} | "
            f"{r.get('dp_counted_items_once', {}).get('tokens_per_word', '–')} | {npv.get('tokens_per_word', '–')} | "
            f"{r.get('counted_over_non_private', '–')} | {r.get('counted_over_set_only', '–')} | "
            f"{r['dp_set_only']['unk_rate']} | {r['dp_with_counts']['unk_rate']} | {npv.get('unk_rate', '–')} |"
        )
    return out


def run() -> dict[str, Any]:
    from dpsu_core.demo import load_demo
    from dpsu_core.synthetic import synthetic_200k

    out: dict[str, Any] = {
        "mechanism": MECHANISM,
        "delta": DELTA,
        "counts_share": DEFAULT_SHARE,
        "note": "tokens per word and [UNK] share on held-out users' words (frequency-weighted)",
    }
    out["demo"] = _one_corpus("demo", load_demo())
    out["synthetic-200k"] = _one_corpus("synthetic-200k", synthetic_200k(keep_counts=True))
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
