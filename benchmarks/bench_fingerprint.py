"""The corpus fingerprint (``dpsu_core.corpus.fingerprint``, issue 36.2) against reading and loading the files.

    python -m benchmarks.run fingerprint        # 1M users (a 230 MB CSV) against a copy with one row changed
    python -m benchmarks.run fingerprint_10m    # its cost and size on 10M users (bench_fingerprint_10m)

The checks that use it (GW-KT's public corpus in the CLI, the app's exploration and public corpora) fingerprint
the corpora the run has loaded anyway: both files are read and tokenized for the release, so the fingerprint
adds no read of either file, only its own pass over each built corpus's CSR arrays. The private file is the
synthetic corpus of ``bench_scale`` (one row per user); the other is ``bench_overlap``'s copy of it with one
row's post changed, which must be recognised as the same corpus. For each file, one at a time (peak memory is
one loaded corpus; the fingerprint kept is small):

A  read         the file parsed into its user and text columns (``bench_overlap.read_both``): the floor of
                any check of its content
L  load         ``load_corpus`` of the file: what the CLI and the app do anyway
F  fingerprint  ``fingerprint`` of the loaded corpus, ``REPEATS`` times (wall and this thread's CPU seconds)

then ``match`` of the two fingerprints. The figures that count are F / A and F / L (medians of the repeats).
"""

from __future__ import annotations

import os
import statistics
import time

from benchmarks.bench_overlap import _cpu, one_row_changed, read_both
from benchmarks.bench_scale import CACHE, corpus_file
from dpsu_core.corpus import corpus_from_token_lists, load_corpus
from dpsu_core.corpus.fingerprint import fingerprint, match

REPEATS = 3


def _one(path, secret: bytes) -> dict:
    """A, L and F for one file; the corpus is dropped before returning (the fingerprint is kept)."""
    read = read_both([path])
    w0, c0 = time.perf_counter(), _cpu()
    corpus = load_corpus(path)
    load_wall, load_cpu = time.perf_counter() - w0, _cpu() - c0
    walls, cpus = [], []
    for _ in range(REPEATS):
        w0, c0 = time.perf_counter(), time.thread_time()
        fp = fingerprint(corpus, secret)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.thread_time() - c0)
    return {
        "users": corpus.n_users,
        "nnz": corpus.nnz,
        "read_wall_s": round(read["wall_s"], 2),
        "read_cpu_s": round(read["cpu_s"], 2),
        "load_wall_s": round(load_wall, 2),
        "load_cpu_s": round(load_cpu, 2),
        "fingerprint_wall_s": [round(w, 3) for w in walls],
        "fingerprint_cpu_s": [round(c, 3) for c in cpus],
        "fingerprint_vs_read_wall": round(statistics.median(walls) / read["wall_s"], 3),
        "fingerprint_vs_read_cpu": round(statistics.median(cpus) / read["cpu_s"], 3),
        "fingerprint_vs_load_wall": round(statistics.median(walls) / load_wall, 3),
        "fingerprint_vs_load_cpu": round(statistics.median(cpus) / load_cpu, 3),
        "blob_bytes": len(fp.to_bytes()),
        "_fp": fp,
    }


def run(n_users: int | None = None) -> dict:
    n_users = n_users or int(os.environ.get("DPSU_FINGERPRINT_USERS", "1000000"))
    private = corpus_file(n_users)
    public = one_row_changed(private)
    secret = os.urandom(32)
    fingerprint(corpus_from_token_lists([["warm", "up", "the", "kernels", "now"]]), secret)  # numba's cache
    files = {"private": _one(private, secret), "changed_copy": _one(public, secret)}
    w0 = time.perf_counter()
    found = match(files["changed_copy"].pop("_fp"), files["private"].pop("_fp"))
    match_s = time.perf_counter() - w0
    assert found.same, "the copy with one row changed must be recognised"
    return {
        "users": n_users,
        "csv_mb_each": round(private.stat().st_size / 1e6, 1),
        "cache": str(CACHE),
        "extra_reads": 0,  # the checks fingerprint the corpora their run loads anyway
        "verdict": (
            f"same corpus: {100 * found.known_found:.1f}% of its users found, "
            f"{100 * found.candidate_found:.1f}% of the copy's"
        ),
        "match_s": round(match_s, 4),
        **files,
        "load_avg": round(os.getloadavg()[0], 1),
    }


if __name__ == "__main__":
    print(run())
