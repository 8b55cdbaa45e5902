"""The content check of public files (``dpsu_core.corpus.overlap``, issue 27.1) against reading the two files.

    python -m benchmarks.run overlap        # 1M users (a 230 MB CSV) against a copy with one row changed
    python -m benchmarks.run overlap_10m    # 10M users (a 2.3 GB CSV): run on its own

The private file is the synthetic corpus of ``bench_scale`` (one row per user, written once into the benchmark
cache); the "public" file is a copy of it with one row's post changed, which the check must refuse. In the same
run, alternating A B A B ... (the shared machine's speed drifts; the ratio that counts is the median of the
per-pair ratios):

A  read    both files read as every load reads them (``readers.read_table``: parsed by Arrow into the user and
           text columns, batch by batch), nothing else done: the floor of any check of their content.
B  check   both files read the same way, each batch hashed as it comes (``overlap.Fingerprinter``, as the app and
           the CLI do inside the load), then compared (``overlap.compare``): the whole check done standalone (as
           for a Spark input folder). Its hashing and comparing alone (``hash_s``) is what the check adds to
           the loads the app and CLI do anyway.

Spark (``spark_*`` keys; ``DPSU_OVERLAP_SPARK_USERS``, default 250,000; 0 or no pyspark: skipped): the private
file's first users as a Spark input folder of two part files, checked against the same "public" copy as a
GW-KT run does it, Spark ``local[2]``, alternating R S C R S C ...:

R  read    the folder read by Spark as the engine reads it (``read_posts``: user and text parsed), nothing else:
           a plain Spark read of the same files.
S  shuffle the engine's first pass without a check: the read, the user derived, the shuffle by user, cached.
C  check   the same pass with the check folded in (``load_spark_corpus(public=...)``: each row hashed and
           looked up in the public file's hashes on the executors, the distinct hits counted): C - S is what
           the check adds to a Spark load; ``spark_check_added_vs_read`` = (C - S) / R, per triple, median of five.
The standalone check it replaces (the driver reading the folder's parts again, ``overlap.fingerprint``) is
timed once beside them: ``spark_standalone_vs_read``.

Each figure is wall seconds and CPU seconds: of this process (user + system, all threads) for the reads, the
checks and the loads; of the calling thread for the hashing (the kernels run there, while Arrow's reader threads
parse the next block: the process's figure would count their work as hashing). Up to 1M users the section also
times ``load_corpus`` of both files once, so the hashing can be read against a whole load.
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from functools import partial
from pathlib import Path

from benchmarks.bench_scale import CACHE, corpus_file
from dpsu_core.corpus.overlap import Fingerprinter, compare, new_key
from dpsu_core.corpus.readers import read_table

PAIRS = 3
SPARK_TRIPLES = 5  # Spark's timings vary more on a shared machine


def one_row_changed(path: Path) -> Path:
    """A copy of ``path`` whose middle row's post has one more word (written once beside it)."""
    out = path.with_name("changed_" + path.name)  # not "synthetic_*": bench_scale.corpus_file must not cut it
    if out.exists():
        return out
    mid, pos, done = path.stat().st_size // 2, 0, False
    tmp = out.with_suffix(".part")
    with path.open("rb") as src, tmp.open("wb") as dst:
        while block := src.read(64 << 20):
            start, pos = pos, pos + len(block)
            if not done and pos > mid:  # the block holding the middle: change the row that starts after it
                cut = block.find(b"\n", max(0, mid - start))
                end = block.find(b"\n", cut + 1) if cut >= 0 else -1
                if end >= 0:
                    row = block[cut + 1 : end]
                    changed = row[:-1] + b' changed"' if row.endswith(b'"') else row + b" changed"
                    block, done = block[: cut + 1] + changed + block[end:], True
            dst.write(block)
    tmp.replace(out)
    return out


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _read(path: Path, on_batch=None) -> int:
    """Read one file as every load does, batch by batch (each batch handed to ``on_batch``): its row count.
    A function of its own, so that the file's bytes and its last batch go when it returns."""
    rows = 0
    table = read_table(path, stream=True)
    for users, texts in table.batches():
        rows += len(texts)
        if on_batch is not None:
            on_batch(users, texts)
    table.stream = table.texts = table.users = None  # as the loader does: the stream holds the file's bytes
    return rows


def read_both(paths: list[Path]) -> dict:
    """A: both files parsed into their user and text columns, batch by batch."""
    w0, c0 = time.perf_counter(), _cpu()
    rows = sum(_read(p) for p in paths)
    return {"wall_s": time.perf_counter() - w0, "cpu_s": _cpu() - c0, "rows": rows}


def check_both(paths: list[Path]) -> dict:
    """B: both files read the same way, each batch hashed as it comes, then compared."""
    key = new_key()
    w0, c0 = time.perf_counter(), _cpu()
    spent = {"wall": 0.0, "cpu": 0.0}  # the hashing and comparing, timed apart from the reading

    def timed(fn, *args):
        h0, hc = time.perf_counter(), time.thread_time()
        out = fn(*args)
        spent["wall"] += time.perf_counter() - h0
        spent["cpu"] += time.thread_time() - hc
        return out

    prints = []
    for p in paths:
        fp = Fingerprinter(key)
        _read(p, partial(timed, fp.add))
        prints.append(timed(fp.finish))
    found = timed(compare, prints[1], prints[0])
    return {
        "wall_s": time.perf_counter() - w0,
        "cpu_s": _cpu() - c0,
        "hash_wall_s": spent["wall"],
        "hash_cpu_s": spent["cpu"],
        "refused": found.refused,
        "figures": found.figures(),
    }


def _median_ratio(num: list[float], den: list[float]) -> float:
    return round(statistics.median(n / d for n, d in zip(num, den)), 3)


def run(n_users: int | None = None, loads: bool | None = None) -> dict:
    n_users = n_users or int(os.environ.get("DPSU_OVERLAP_USERS", "1000000"))
    loads = (n_users <= 1_000_000) if loads is None else loads
    private = corpus_file(n_users)
    public = one_row_changed(private)
    paths = [private, public]
    check_both(paths)  # warm-up: numba's cache, the OS's file cache
    read_both(paths)
    reads, checks = [], []
    for _ in range(PAIRS):
        reads.append(read_both(paths))
        checks.append(check_both(paths))
    assert all(c["refused"] for c in checks), "the copy with one row changed must be refused"
    out: dict = {
        "users": n_users,
        "csv_mb_each": round(private.stat().st_size / 1e6, 1),
        "rows_read": reads[0]["rows"],
        "pairs": PAIRS,
        "cache": str(CACHE),
        "verdict": f"refused: {checks[0]['figures']}",
        "read_wall_s": [round(r["wall_s"], 2) for r in reads],
        "check_wall_s": [round(c["wall_s"], 2) for c in checks],
        "hash_wall_s": [round(c["hash_wall_s"], 2) for c in checks],
        "check_vs_read_wall": _median_ratio([c["wall_s"] for c in checks], [r["wall_s"] for r in reads]),
        "check_vs_read_cpu": _median_ratio([c["cpu_s"] for c in checks], [r["cpu_s"] for r in reads]),
        "hash_vs_read_wall": _median_ratio([c["hash_wall_s"] for c in checks], [r["wall_s"] for r in reads]),
        "hash_vs_read_cpu": _median_ratio([c["hash_cpu_s"] for c in checks], [r["cpu_s"] for r in reads]),
        "load_avg": round(os.getloadavg()[0], 1),
    }
    out.update(spark_section(private, public))
    if loads:
        from dpsu_core.corpus import load_corpus

        w0, c0 = time.perf_counter(), _cpu()
        for p in paths:
            load_corpus(p)
        load_wall, load_cpu = time.perf_counter() - w0, _cpu() - c0
        out["load_both_wall_s"] = round(load_wall, 2)
        out["hash_vs_load_wall"] = round(statistics.median(c["hash_wall_s"] for c in checks) / load_wall, 3)
        out["hash_vs_load_cpu"] = round(statistics.median(c["hash_cpu_s"] for c in checks) / load_cpu, 3)
    return out


# ---- Spark: the check folded into the engine's pass over an input folder ---------------------------------
def spark_folder(n_users: int) -> Path:
    """The first ``n_users`` users of the benchmark corpus as a folder of two part files (written once)."""
    src = corpus_file(n_users)
    folder = CACHE / f"parts_{n_users}"
    if (folder / "_SUCCESS").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with src.open("rb") as f:
        header, rows = f.readline(), f.readlines()  # no field spans lines in this corpus
    half = len(rows) // 2
    for i, chunk in enumerate((rows[:half], rows[half:])):
        (folder / f"part-0000{i}.csv").write_bytes(header + b"".join(chunk))
    (folder / "_SUCCESS").write_bytes(b"")
    return folder


def _spark_read(spark, inp, opts) -> float:
    """R: a plain Spark read of the folder, user and text parsed (their lengths summed so both are)."""
    from pyspark.sql import functions as F

    from dpsu_core.engines.spark_read import read_posts

    w0 = time.perf_counter()
    df = read_posts(spark, inp, opts).df
    df.agg(F.sum(F.length("text")), F.sum(F.length("user"))).first()
    return time.perf_counter() - w0


def _spark_pass(spark, inp, opts, public=None) -> tuple[float, object]:
    """S (``public`` None) or C: the engine's first pass, with the check folded in when ``public`` is given."""
    from dpsu_core.engines import spark_load as engine
    from dpsu_core.engines.spark_read import read_posts

    w0 = time.perf_counter()
    posts = read_posts(spark, inp, opts)
    shuffled, built = engine._shuffle_and_build(posts.df, opts, public, posts.user_column is not None)
    try:
        found = shuffled.count() if public is None else engine._overlap(shuffled, public, True)
    finally:
        shuffled.unpersist(blocking=True)
        built.unpersist(blocking=True)
    return time.perf_counter() - w0, found


def spark_section(private: Path, public: Path) -> dict:
    n_users = int(os.environ.get("DPSU_OVERLAP_SPARK_USERS", "250000"))
    if not n_users:
        return {"spark": "skipped (DPSU_OVERLAP_SPARK_USERS=0)"}
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return {"spark": "skipped: pyspark is not installed"}
    from dpsu_core.corpus import LoadOptions
    from dpsu_core.corpus.overlap import fingerprint, fingerprint_options
    from dpsu_core.engines.spark import spark_session
    from dpsu_core.engines.spark_inputs import resolve_input

    folder = spark_folder(n_users)
    opts = LoadOptions(format="csv", user_col="user", text_col="text")
    inp = resolve_input(str(folder), "csv")
    key = new_key()
    candidate = fingerprint(public, key)  # the public file, hashed as GW-KT's load reads it (on the driver)
    spark = spark_session("local[2]", shuffle_partitions=4)
    try:
        _spark_read(spark, inp, opts), _spark_pass(spark, inp, opts, candidate)  # warm-up: JVM, workers, numba
        reads, passes, checks, found = [], [], [], None
        for _ in range(SPARK_TRIPLES):
            reads.append(_spark_read(spark, inp, opts))
            passes.append(_spark_pass(spark, inp, opts)[0])
            wall, found = _spark_pass(spark, inp, opts, candidate)
            checks.append(wall)
    finally:
        spark.stop()
    w0 = time.perf_counter()
    standalone = compare(candidate, fingerprint_options(folder, key, opts))
    standalone_wall = time.perf_counter() - w0
    assert found == standalone, (found, standalone)  # the same figures as the check it replaces
    return {
        "spark_users": n_users,
        "spark_folder_mb": round(sum(p.stat().st_size for p in folder.glob("part-*")) / 1e6, 1),
        "spark_verdict": ("refused: " if found.refused else "accepted: ") + found.figures(),
        "spark_read_wall_s": [round(x, 2) for x in reads],
        "spark_pass_wall_s": [round(x, 2) for x in passes],
        "spark_pass_with_check_wall_s": [round(x, 2) for x in checks],
        "spark_check_added_vs_read": round(statistics.median((c - p) / r for c, p, r in zip(checks, passes, reads)), 3),
        "spark_pass_with_check_vs_pass": _median_ratio(checks, passes),
        "spark_standalone_wall_s": round(standalone_wall, 2),
        "spark_standalone_vs_read": round(standalone_wall / statistics.median(reads), 3),
        "spark_load_avg": round(os.getloadavg()[0], 1),
    }


if __name__ == "__main__":
    print(run())
