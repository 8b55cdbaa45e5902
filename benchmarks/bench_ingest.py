"""Ingestion speed: MB/s of ``load_corpus`` per tokenizer, and the MSNBC load time.

Run ``python -m benchmarks.bench_ingest`` (prints a dict). The text is synthetic but
shaped like forum posts: words drawn by English frequency (wordfreq's top list),
mixed case, punctuation, a few URLs and ``[removed]`` posts, users with a
heavy-tailed number of posts, a quoted CSV with a user column. Seeded.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.data import MSNBC
from dpsu_core.corpus import load_corpus


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
    punct = rng.choice(
        np.array(["", ",", ".", "!", "?", ";", ":", "..."], dtype=object),
        size=n_words,
        p=[0.86, 0.06, 0.05, 0.01, 0.01, 0.004, 0.004, 0.002],
    )
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


def _time_load(path, **kw) -> tuple[dict, object]:
    """Wall seconds and CPU seconds (user, system; all threads) of one load_corpus call."""
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    corpus = load_corpus(path, **kw)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall": wall, "user": r1.ru_utime - r0.ru_utime, "sys": r1.ru_stime - r0.ru_stime}, corpus


def _rate(prefix: str, size_mb: float, t: dict) -> dict:
    return {
        f"{prefix}_seconds": round(t["wall"], 3),
        f"{prefix}_mb_per_s": round(size_mb / t["wall"], 1),
        f"{prefix}_cpu_user_s": round(t["user"], 2),
        f"{prefix}_cpu_sys_s": round(t["sys"], 2),
    }


def run(mb: float = 50, treebank_mb: float | None = None, seed: int = 0) -> dict:
    """Generate ``mb`` MB of posts as CSV and time ``load_corpus`` on it.

    ``*_cold`` is the first big load in this process, ``*_warm`` the second (the
    allocator then reuses memory; the app's case after its first upload). MB/s
    are of the CSV file size. The treebank tokenizer runs on the same file (all ``mb`` of it) unless
    ``treebank_mb`` asks for a smaller slice (it tokenizes post by post in Python: ~1 MB/s).
    """
    out: dict = {"cpus": os.cpu_count(), "load_average_before": round(os.getloadavg()[0], 2)}
    load_corpus(b"user,text\na,warm up the compiled kernels\nb,and the tables\n")  # numba cache + char table
    with tempfile.TemporaryDirectory() as tmp:
        frame = make_posts(mb, seed)
        path = Path(tmp) / "posts.csv"
        frame.to_csv(path, index=False)
        size = path.stat().st_size / 1e6
        out["csv_mb"] = round(size, 2)
        out["text_mb"] = round(float(frame["body"].str.len().sum()) / 1e6, 2)
        out["posts"] = int(frame.shape[0])
        del frame
        t, corpus = _time_load(path, tokenizer="fast")
        out.update(_rate("fast_cold", size, t))
        t, corpus = _time_load(path, tokenizer="fast")
        out.update(_rate("fast_warm", size, t))
        out["fast_users"], out["fast_vocabulary"], out["fast_tokens"] = corpus.n_users, corpus.n_items, corpus.n_tokens
        del corpus
        t, c2 = _time_load(path, tokenizer="fast", max_n=2)
        out.update(_rate("fast_max_n_2", size, t))
        out["fast_max_n_2_vocabulary"] = c2.n_items
        del c2
        if treebank_mb is None or treebank_mb >= mb:
            small, small_mb = path, size
        else:  # a smaller slice, for quick runs
            small = Path(tmp) / "slice.csv"
            make_posts(treebank_mb, seed + 1).to_csv(small, index=False)
            small_mb = small.stat().st_size / 1e6
        t, _ = _time_load(small, tokenizer="treebank")
        out["treebank_mb"] = round(small_mb, 2)
        out.update(_rate("treebank", small_mb, t))
    if MSNBC.exists():
        t, ms = _time_load(MSNBC)
        out["msnbc_seconds"] = round(t["wall"], 3)
        out["msnbc_users"] = ms.n_users
        out["msnbc_unigrams"] = ms.n_items
    else:
        out["msnbc_seconds"] = None
    out["load_average_after"] = round(os.getloadavg()[0], 2)
    return out


if __name__ == "__main__":
    print(run())
