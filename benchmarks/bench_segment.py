"""Word segmentation by script: MB/s of ``load_corpus`` with the ``auto`` tokenizer against ``fast`` on
Chinese, Japanese, Thai and English corpora, side by side in one run, and the items a release gets from a
synthetic Chinese corpus with each tokenizer.

Run ``python -m benchmarks.run segment``. The corpora are synthetic and seeded: words drawn by frequency
(wordfreq's lists for Chinese, Japanese and English; PyThaiNLP's word list, Zipf-weighted, for Thai), written
without spaces in Chinese, Japanese and Thai (with the script's sentence punctuation), with spaces in English;
posts of about 40 words, users with a heavy-tailed number of posts. Sizes (MB of text) can be set with
DPSU_BENCH_SEGMENT_MB="zh=20,ja=10,th=5,en=20".
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpsu_core.corpus import load_corpus

SIZES = {"zh": 20.0, "ja": 5.0, "th": 3.0, "en": 20.0}  # MB of text
REPEATS = {"en": 3}  # quick loads: the best of alternating runs (a shared machine's noise); the others run once
SPACED = {"en"}
PUNCT = {"zh": ("，", "。"), "ja": ("、", "。"), "th": (" ", " "), "en": (",", ".")}


def _sizes() -> dict[str, float]:
    sizes = dict(SIZES)
    for part in filter(None, os.environ.get("DPSU_BENCH_SEGMENT_MB", "").split(",")):
        lang, mb = part.split("=")
        sizes[lang.strip()] = float(mb)
    return sizes


def _vocabulary(lang: str) -> tuple[np.ndarray, np.ndarray]:
    if lang == "th":
        from pythainlp.corpus import thai_words

        words = np.array(sorted(thai_words()), dtype=object)
        np.random.default_rng(1).shuffle(words)
        freq = 1.0 / np.arange(1, words.shape[0] + 1)  # Zipf over a shuffled list
    else:
        import wordfreq

        top = sorted(wordfreq.get_frequency_dict(lang).items(), key=lambda kv: -kv[1])[:30000]  # no tokenizer needed
        words = np.array([w for w, _ in top], dtype=object)
        freq = np.array([f for _, f in top])
    return words, freq / freq.sum()


def make_posts(lang: str, mb: float, seed: int = 0) -> pd.DataFrame:
    """About ``mb`` MB of text (UTF-8) in ``lang``, as a frame with columns author, body."""
    rng = np.random.default_rng(seed)
    words, freq = _vocabulary(lang)
    avg_bytes = float((freq * np.array([len(w.encode()) for w in words])).sum()) + (1 if lang in SPACED else 0.3)
    n_words = int(mb * 1_000_000 / avg_bytes)
    idx = rng.choice(words.shape[0], size=n_words, p=freq)
    comma, stop = PUNCT[lang]
    punct = rng.choice(np.array(["", comma, stop], dtype=object), size=n_words, p=[0.85, 0.08, 0.07])
    tok = words[idx] + punct
    sep = " " if lang in SPACED else ""
    lens = np.maximum(1, rng.lognormal(3.2, 0.9, size=n_words // 10).astype(np.int64))
    ends = np.cumsum(lens)
    ends = np.concatenate([ends[ends < n_words], [n_words]])
    starts = np.concatenate([[0], ends[:-1]])
    bodies = np.array([sep.join(tok[s:e]) for s, e in zip(starts, ends)], dtype=object)
    n_posts = bodies.shape[0]
    n_users = max(2, n_posts // 8)
    user = (rng.zipf(1.6, n_posts) + rng.integers(0, n_users, n_posts)) % n_users
    return pd.DataFrame({"author": np.char.add("user_", user.astype(str)).astype(object), "body": bodies})


def _load(path: Path, tokenizer: str) -> tuple[float, object]:
    t0 = time.perf_counter()
    corpus = load_corpus(path, tokenizer=tokenizer)
    return time.perf_counter() - t0, corpus


def run() -> dict:
    from dpsu_core import get_mechanism

    out: dict = {"cpus": os.cpu_count(), "load_average_before": round(os.getloadavg()[0], 2)}
    warm = pd.DataFrame({"author": ["a", "b"], "body": ["我爱北京 東京は日本 ภาษาไทย hello", "hello"]})
    with tempfile.TemporaryDirectory() as tmp:
        warm_path = Path(tmp) / "warm.csv"
        warm.to_csv(warm_path, index=False)
        for tokenizer in ("auto", "fast"):  # compile the kernels once (numba's cache), outside the timings
            _load(warm_path, tokenizer)
        for lang, mb in _sizes().items():
            posts = make_posts(lang, mb)
            path = Path(tmp) / f"{lang}.csv"
            posts.to_csv(path, index=False)
            text_mb = float(posts["body"].str.encode("utf-8").str.len().sum()) / 1e6
            row = {"text_mb": round(text_mb, 2), "posts": int(posts.shape[0])}
            del posts
            best = {"auto": float("inf"), "fast": float("inf")}
            for _ in range(REPEATS.get(lang, 1) - 1):
                for tokenizer in best:
                    best[tokenizer] = min(best[tokenizer], _load(path, tokenizer)[0])
            for tokenizer in ("auto", "fast"):
                seconds, corpus = _load(path, tokenizer)
                seconds = min(seconds, best[tokenizer])
                row[f"{tokenizer}_seconds"] = round(seconds, 3)
                row[f"{tokenizer}_mb_per_s"] = round(text_mb / seconds, 2)
                row[f"{tokenizer}_vocabulary"] = int(corpus.n_items)
                row[f"{tokenizer}_tokens"] = int(corpus.n_tokens)
                if lang == "zh":  # items released from the Chinese corpus with each tokenizer
                    mech = get_mechanism("policy-gaussian", epsilon=3.0, delta=1e-6)
                    release = mech.release(corpus)
                    row[f"{tokenizer}_users"] = int(corpus.n_users)
                    row[f"{tokenizer}_released_items"] = int(release.n_released)
                    row[f"{tokenizer}_released_sample"] = [str(s) for s in release.items[:12].tolist()]
                del corpus
            row["auto_over_fast_time"] = round(row["auto_seconds"] / row["fast_seconds"], 2)
            out[lang] = row
    out["released_with"] = "policy-gaussian, epsilon 3, delta 1e-6 (fresh OS noise: counts vary a little per run)"
    out["timed"] = (
        "load_corpus end to end (read, clean, segment, tokenize, build), text MB / seconds; English the best of "
        f"{REPEATS['en']} alternating runs"
    )
    out["load_average_after"] = round(os.getloadavg()[0], 2)
    return out


if __name__ == "__main__":  # pragma: no cover
    print(run())
