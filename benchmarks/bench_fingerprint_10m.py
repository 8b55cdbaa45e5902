"""The corpus fingerprint on 10M users: its cost and size at that scale.

python -m benchmarks.run fingerprint_10m    # run on its own (about 5 GB at peak)

Writing, reading and loading two 2.3 GB CSVs of 10M users takes far longer on the shared machine than the
fingerprint itself, and the fingerprint's pass depends only on the built corpus's CSR arrays, so the 10M-user
corpus here is the 1M-user corpus of ``bench_fingerprint`` (its synthetic CSV, loaded and timed once) repeated
ten times as ten groups of users over one vocabulary (413M entries). Figures: the fingerprint of the 1M corpus
and of the 10M one (wall and this thread's CPU seconds, ns per CSR entry: the cost is linear in the entries),
the 1M file's read and load in the same run, and the fingerprint's bytes at both sizes (fixed: a bottom-k sample).
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks.bench_overlap import _cpu, read_both
from benchmarks.bench_scale import corpus_file
from dpsu_core.corpus import Corpus, load_corpus
from dpsu_core.corpus.fingerprint import fingerprint, match


def _timed(corpus: Corpus, secret: bytes):
    w0, c0 = time.perf_counter(), time.thread_time()
    fp = fingerprint(corpus, secret)
    wall, cpu = time.perf_counter() - w0, time.thread_time() - c0
    return fp, {
        "users": corpus.n_users,
        "nnz": corpus.nnz,
        "fingerprint_wall_s": round(wall, 2),
        "fingerprint_cpu_s": round(cpu, 2),
        "cpu_ns_per_entry": round(1e9 * cpu / corpus.nnz, 1),
        "blob_bytes": len(fp.to_bytes()),
    }


def _tiled(c: Corpus, times: int) -> Corpus:
    """``c``'s users ``times`` over (the same vocabulary): a corpus ``times`` as large."""
    nnz = c.indptr[-1]
    indptr = np.concatenate([c.indptr[:-1] + k * nnz for k in range(times)] + [np.array([times * nnz])])
    return Corpus(indptr, np.tile(c.items, times), np.tile(c.counts, times), c.vocab, c.ngram_len, c.gram_tokens)


def run() -> dict:
    secret = os.urandom(32)
    path = corpus_file(1_000_000)
    read = read_both([path])
    w0, c0 = time.perf_counter(), _cpu()
    small = load_corpus(path)
    load_wall, load_cpu = time.perf_counter() - w0, _cpu() - c0
    fingerprint(small, secret)  # numba's cache
    fp_small, at_1m = _timed(small, secret)
    big = _tiled(small, 10)
    del small
    fp_big, at_10m = _timed(big, secret)
    found = match(fp_small, fp_big)
    return {
        "file_1m_read_wall_s": round(read["wall_s"], 2),
        "file_1m_read_cpu_s": round(read["cpu_s"], 2),
        "file_1m_load_wall_s": round(load_wall, 2),
        "file_1m_load_cpu_s": round(load_cpu, 2),
        "at_1m": at_1m,
        "at_10m": at_10m,
        "check": f"1M inside 10M: {100 * found.candidate_found:.1f}% of the 1M corpus's users found",
        "load_avg": round(os.getloadavg()[0], 1),
    }


if __name__ == "__main__":
    print(run())
