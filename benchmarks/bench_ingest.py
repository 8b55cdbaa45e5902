"""Ingestion speed: MB/s of ``load_corpus`` per tokenizer, and the MSNBC load time.

Run ``python -m benchmarks.bench_ingest`` (prints a dict). The text is synthetic but
shaped like forum posts: words drawn by English frequency (wordfreq's top list),
mixed case, punctuation, a few URLs and ``[removed]`` posts, users with a
heavy-tailed number of posts, a quoted CSV with a user column. Seeded.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpsu_core.corpus import load_corpus

MSNBC = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "msnbc990928.zip"


def make_posts(mb: float, seed: int = 0) -> pd.DataFrame:
    """About ``mb`` megabytes of post text (UTF-8), as a frame with columns author, body."""
    import wordfreq

    rng = np.random.default_rng(seed)
    words = np.array(wordfreq.top_n_list("en", 30000), dtype=object)
    freq = np.array([wordfreq.word_frequency(w, "en") for w in words])
    freq /= freq.sum()
    # decorate a small share of words: capitalised, followed by punctuation
    caps = np.array([w.capitalize() for w in words], dtype=object)
    target = int(mb * 1_000_000)
    avg_word = float((freq * np.array([len(w) + 1 for w in words])).sum()) + 0.15
    n_words = int(target / avg_word)
    idx = rng.choice(words.shape[0], size=n_words, p=freq)
    tok = np.where(rng.random(n_words) < 0.08, caps[idx], words[idx])
    punct = rng.choice(np.array(["", ",", ".", "!", "?", ";", ":", "..."], dtype=object), size=n_words,
                       p=[0.86, 0.06, 0.05, 0.01, 0.01, 0.004, 0.004, 0.002])
    tok = tok + punct
    # post lengths: geometric-ish around 40 words
    lens = np.maximum(1, rng.lognormal(3.2, 0.9, size=n_words // 10).astype(np.int64))
    ends = np.cumsum(lens)
    ends = ends[ends < n_words]
    starts = np.concatenate([[0], ends])
    ends = np.concatenate([ends, [n_words]])
    n_posts = starts.shape[0]
    bodies = np.array([" ".join(tok[s:e]) for s, e in zip(starts, ends)], dtype=object)
    url = rng.random(n_posts) < 0.02
    bodies[url] = bodies[url] + " https://example.com/r/" + rng.integers(0, 10**6, url.sum()).astype(str).astype(object)
    removed = rng.random(n_posts) < 0.01
    bodies[removed] = "[removed]"
    n_users = max(2, n_posts // 8)
    user = (rng.zipf(1.6, n_posts) + rng.integers(0, n_users, n_posts)) % n_users
    authors = np.char.add("user_", user.astype(str)).astype(object)
    return pd.DataFrame({"author": authors, "body": bodies})


def _time_load(path: Path, **kw) -> tuple[float, object]:
    t0 = time.perf_counter()
    corpus = load_corpus(path, **kw)
    return time.perf_counter() - t0, corpus


def run(mb: float = 50, treebank_mb: float = 5, seed: int = 0) -> dict:
    out: dict = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        frame = make_posts(mb, seed)
        path = Path(tmp) / "posts.csv"
        frame.to_csv(path, index=False)
        size = path.stat().st_size / 1e6
        text_mb = float(frame["body"].str.len().sum()) / 1e6
        out["csv_mb"] = round(size, 2)
        out["text_mb"] = round(text_mb, 2)
        out["posts"] = int(frame.shape[0])
        secs, corpus = _time_load(path, tokenizer="fast")
        out["fast_seconds"] = round(secs, 3)
        out["fast_mb_per_s"] = round(size / secs, 1)
        out["fast_users"] = corpus.n_users
        out["fast_vocabulary"] = corpus.n_items
        secs2, corpus2 = _time_load(path, tokenizer="fast", max_n=2)
        out["fast_max_n_2_seconds"] = round(secs2, 3)
        out["fast_max_n_2_mb_per_s"] = round(size / secs2, 1)
        # treebank on a slice (it tokenizes post by post in Python)
        small = Path(tmp) / "slice.csv"
        sl = frame.iloc[: max(2, int(frame.shape[0] * min(1.0, treebank_mb / mb)))]
        sl.to_csv(small, index=False)
        small_mb = small.stat().st_size / 1e6
        secs3, _ = _time_load(small, tokenizer="treebank")
        out["treebank_slice_mb"] = round(small_mb, 2)
        out["treebank_seconds"] = round(secs3, 3)
        out["treebank_mb_per_s"] = round(small_mb / secs3, 2)
    if MSNBC.exists():
        secs4, ms = _time_load(MSNBC)
        out["msnbc_seconds"] = round(secs4, 3)
        out["msnbc_users"] = ms.n_users
        out["msnbc_unigrams"] = ms.n_items
    else:
        out["msnbc_seconds"] = None
    return out


if __name__ == "__main__":
    print(run())
