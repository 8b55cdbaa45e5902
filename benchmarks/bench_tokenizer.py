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
one run, so the figures compare side by side. Each release is drawn DRAWS times independently (seeds SEED,
SEED + 1, ...: a measurement, not a release); every DP figure is the median over the draws with its range, and the
ratios are taken draw by draw (the non-private tokenizer has no noise: trained once). "its items once": the counted
release's items trained each once, so the table parts what the counts add (counted vs its items once) from what
their share of the budget costs in released items (its items once vs set only). "its items, true counts" (BPE, NOT
private, a diagnostic only): the counted release's items trained on their true training-half frequencies, so the
gap between the counted and the non-private tokenizer parts into what the released set allows (true counts vs
non-private) and what the counts' noise costs (counted vs true counts); "set-only items, true counts" is the
best any count release could do on the set-only release's items (counts free and exact).

The subword models' target vocabulary size is VOCAB[corpus]: below what it takes to spell every released word as
one token, so the models must choose which words to keep whole (where frequencies matter). Not so at epsilon 1 on
the demo corpus: its release (about a hundred words) fits whole (BPE stops below the target), every word keeps
its own token whatever its count, so the counts can only cost released words: the Release page's advice
(``counts_advice``) says when counts pay.
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
from dpsu_core.outputs.tokenizer_export import UNK, TokenizerSpec, build_tokenizer

MECHANISM = "policy-gaussian"
EPSILONS = (1.0, 3.0, 8.0)
DELTA = 1e-5
MODELS = ("bpe", "wordpiece", "unigram")
VOCAB = {"demo": 300, "synthetic-200k": 3000}
SEED = 20261126
DRAWS = 5  # independent DP draws per epsilon (seeds SEED, SEED + 1, ...): medians and ranges, not one draw
ORACLE_MODELS = ("bpe",)  # the diagnostic on true counts (NOT private): for the model the targets are about


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


def _release_pair(train: Corpus, eps: float, seed: int) -> tuple[Any, Any]:
    """One draw: the set release at the whole (epsilon, delta), and the counted release (its share on counts)."""
    plain = get_mechanism(MECHANISM, epsilon=eps, delta=DELTA).release(train, seed=seed)
    mech, cc = mechanism_with_counts(MECHANISM, epsilon=eps, delta=DELTA, share=DEFAULT_SHARE)
    return plain, release_with_counts(mech, cc, train, seed=seed)


def _true_counts(release: Any, words: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """A release's items' TRUE training-half frequencies (NOT private: a diagnostic that parts the gap to the
    non-private tokenizer into what the released set costs and what the counts' noise costs)."""
    where = dict(zip(words.tolist(), freq.tolist()))
    return np.array([where.get(w, 0.0) for w in release.items.tolist()], dtype=np.float64)


def _spread(values: list[float]) -> dict[str, float]:
    """Median and range over the draws."""
    v = np.asarray(values, dtype=np.float64)
    return {"median": round(float(np.median(v)), 4), "min": round(float(v.min()), 4), "max": round(float(v.max()), 4)}


def _one_corpus(name: str, corpus: Corpus) -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    perm = rng.permutation(corpus.n_users)
    half = corpus.n_users // 2
    train, held = _subset(corpus, np.sort(perm[:half])), _subset(corpus, np.sort(perm[half:]))
    train_words, train_freq = _word_frequencies(train)
    test_words, test_freq = _word_frequencies(held)
    vocab = VOCAB[name]
    refs = {m: _non_private(train_words, train_freq, m, vocab) for m in MODELS}  # no noise: trained once
    ref_scores = {m: _score(t, test_words, test_freq) for m, t in refs.items()}
    rows: list[dict[str, Any]] = []
    for eps in EPSILONS:
        t0 = time.perf_counter()
        per: dict[str, dict[str, list[Any]]] = {m: {} for m in ("wordlevel", *MODELS)}
        for d in range(DRAWS):
            plain, counted = _release_pair(train, eps, SEED + d)
            once = dataclasses.replace(counted, noisy_counts=None, count_std=None)
            truth = _true_counts(counted, train_words, train_freq)
            truth_plain = _true_counts(plain, train_words, train_freq)
            for model in ("wordlevel", *MODELS):
                size = None if model == "wordlevel" else vocab
                spec = TokenizerSpec(model=model, vocab_size=size)
                got = per[model]
                built = {"set_only": build_tokenizer(plain, spec)[0], "with_counts": build_tokenizer(counted, spec)[0]}
                if model != "wordlevel":  # the counted release's items, each once: what the counts add on their own
                    built["counted_items_once"] = build_tokenizer(once, spec)[0]
                if model in ORACLE_MODELS:
                    built["counted_items_true_counts"] = build_tokenizer(once, spec, frequencies=truth)[0]
                    built["set_only_items_true_counts"] = build_tokenizer(plain, spec, frequencies=truth_plain)[0]
                got.setdefault("released_items_set_only", []).append(plain.n_released)
                got.setdefault("released_items_with_counts", []).append(counted.n_released)
                got.setdefault("vocab_size_with_counts", []).append(built["with_counts"].get_vocab_size())
                for key, tok in built.items():
                    s = _score(tok, test_words, test_freq)
                    got.setdefault(f"{key}_tokens_per_word", []).append(s["tokens_per_word"])
                    got.setdefault(f"{key}_unk_rate", []).append(s["unk_rate"])
                if model != "wordlevel":
                    c, p = got["with_counts_tokens_per_word"][-1], got["set_only_tokens_per_word"][-1]
                    n = ref_scores[model]["tokens_per_word"]
                    got.setdefault("counted_over_non_private", []).append(c / n)
                    got.setdefault("counted_over_set_only", []).append(c / p)
        for model in ("wordlevel", *MODELS):
            row: dict[str, Any] = {"epsilon": eps, "model": model, "draws": DRAWS}
            row.update({k: _spread(v) for k, v in per[model].items()})
            if model != "wordlevel":
                row["non_private"] = ref_scores[model]
                row["vocab_size_non_private"] = refs[model].get_vocab_size()
            rows.append(row)
            print(name, row, flush=True)
        rows[-1]["seconds_all_models_all_draws"] = round(time.perf_counter() - t0, 1)
    return {
        "users_train": int(train.n_users),
        "users_held_out": int(held.n_users),
        "distinct_words_train": int(train_words.shape[0]),
        "held_out_word_occurrences": int(test_freq.sum()),
        "target_vocab_size": vocab,
        "draws": DRAWS,
        "rows": rows,
        "table": _table(rows),
        "targets_at_epsilon_3": _targets(rows),
    }


def _targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Issue 30's targets for BPE at epsilon 3, over the draws (median, range, how many draws meet each): counted
    within 5% of the non-private tokens per word, and at least 10% fewer than set-only. When the non-private
    tokenizer itself is less than 10% better than set-only, the second target means beating the non-private one:
    said so, with by how much. The gap to the non-private tokenizer is parted by the diagnostic trained on the
    counted release's items with their TRUE counts (what the released set alone allows)."""
    r = next(r for r in rows if r["model"] == "bpe" and r["epsilon"] == 3.0)
    c_np, c_so = r["counted_over_non_private"], r["counted_over_set_only"]
    n = r["non_private"]["tokens_per_word"]
    p = r["set_only_tokens_per_word"]["median"]
    need = 0.9 * p  # at least 10% fewer tokens per word than set-only (median set-only)
    truth = r["counted_items_true_counts_tokens_per_word"]["median"]
    truth_plain = r["set_only_items_true_counts_tokens_per_word"]["median"]
    return {
        "draws": r["draws"],
        "counted_over_non_private": c_np,
        "within_5pct_of_non_private": c_np["median"] <= 1.05,
        "counted_over_set_only": c_so,
        "at_least_10pct_below_set_only": c_so["median"] <= 0.9,
        "non_private_over_set_only_median": round(n / p, 4),
        "counted_items_true_counts_over_non_private_median": round(truth / n, 4),
        "set_only_items_true_counts_over_non_private_median": round(truth_plain / n, 4),
        "ten_pct_target_tokens_per_word": round(need, 4),
        "ten_pct_target_over_non_private": round(need / n, 4),
        "note": (
            f"10% below set-only (median) is {need:.4f} tokens per word, {'below' if need < n else 'above'} the "
            f"non-private tokenizer's {n:.4f} by {abs(1 - need / n):.1%}"
            + (": reachable only by beating the non-private tokenizer" if need < n else "")
            + f"; trained on their true counts (not private), the counted release's items give {truth / n - 1:+.1%} "
            f"over the non-private tokenizer and the set-only release's items {truth_plain / n - 1:+.1%}: the part "
            "of the gap the released set itself sets, which no count release can close"
        ),
    }


def _cell(r: dict[str, Any], key: str) -> str:
    v = r.get(key)
    return "–" if v is None else f"{v['median']} ({v['min']}–{v['max']})"


def _table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown rows: model, epsilon, tokens/word median (range over the draws): set only, with counts, its items
    once, its items with true counts (diagnostic), non-private; the ratios; [UNK] rates (medians)."""
    out = [
        "| model | ε | tokens/word: set only | with counts | its items once | its items, true counts (not private) "
        "| set-only items, true counts (not private) | non-private | counted/non-private | counted/set-only "
        "| [UNK] set only | [UNK] counted | [UNK] non-private |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        npv = r.get("non_private", {})
        out.append(
            f"| {r['model']} | {r['epsilon']:g} | {_cell(r, 'set_only_tokens_per_word')} | "
            f"{_cell(r, 'with_counts_tokens_per_word')} | {_cell(r, 'counted_items_once_tokens_per_word')} | "
            f"{_cell(r, 'counted_items_true_counts_tokens_per_word')} | "
            f"{_cell(r, 'set_only_items_true_counts_tokens_per_word')} | {npv.get('tokens_per_word', '–')} | "
            f"{_cell(r, 'counted_over_non_private')} | {_cell(r, 'counted_over_set_only')} | "
            f"{r['set_only_unk_rate']['median']} | {r['with_counts_unk_rate']['median']} | {npv.get('unk_rate', '–')} |"
        )
    return out


def run() -> dict[str, Any]:
    from dpsu_core.corpus.demo import load_demo
    from dpsu_core.corpus.synthetic import synthetic_200k

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
