"""``load_spark_corpus``: the Spark engine's driver for loading (``engines.spark``'s data path, steps 1 to 4).

It reads the input (``spark_read``), makes the one shuffle (the posts by user) and has each partition built once
on the executors (``spark_build``), checks a public corpus's overlap in the same pass, collects the statistics
and the partitions' distinct items, numbers them (``spark_ids``) and returns the ``SparkCorpus`` whose users'
rows stay cached on the executors. Its stages' seconds go to ``--timings``. pyspark is imported only inside
functions.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .. import timings as command_timings
from ..corpus.load import (
    LoadOptions,
    check_pattern_has_column,
    check_posts,
    check_tokens,
    check_users,
    checked_options,
    empty_users_note,
    row_notes,
)
from ..corpus.model import Corpus, SourceInfo
from ..corpus.readers import malformed_note
from ..corpus.segment import tokenization_text
from ..errors import InputError
from .keyed import string_keys
from .spark_build import (
    BUILT_SCHEMA,
    HITS_SCHEMA,
    POSTS_SCHEMA,
    ROW_COLUMNS,
    STAT,
    STAT_NAMES,
    USER,
    derive_users,
    partition_build,
)
from .spark_corpus import SparkCorpus
from .spark_ids import IdMaps, Vocabulary, merge_items
from .spark_inputs import SparkInput, resolve_input
from .spark_read import Posts, read_posts
from .spark_session import master_of, spark_errors, spark_session

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from pyspark.sql import SparkSession

    from ..corpus.overlap import Fingerprint, Overlap

__all__ = ["PART_BYTES", "load_spark_corpus", "posts_partitions"]


@spark_errors
def load_spark_corpus(
    path: str | SparkInput,
    options: LoadOptions | None = None,
    *,
    spark: SparkSession | None = None,
    name: str | None = None,
    timings: dict[str, float] | None = None,
    public: Fingerprint | None = None,
    on_overlap: Callable[[Overlap], None] | None = None,
    **overrides: Any,
) -> SparkCorpus:
    """``load_corpus`` on Spark: the same options, checks, messages, vocabulary, users and per-user items.

    Not computed here (they need whole columns on one machine): the chosen columns' facts and the sanity
    warnings; a note says so. ``timings``, if given, receives the wall seconds of each stage (benchmarks).
    ``public`` (a public file's fingerprint, ``overlap``) is checked against the rows in the pass that reads them
    (no read of its own): ``on_overlap`` gets the ``Overlap`` once the rows are read and shuffled, before any is
    tokenized, and refuses by raising (default: the one-line refusal of ``overlap.check_public``)."""
    opts = checked_options(options, **overrides)
    inp = path if isinstance(path, SparkInput) else resolve_input(path, opts.format)
    spark = spark or spark_session()
    posts = _read(spark, inp, opts)
    clock = _Clock(timings)
    has_users = posts.user_column is not None
    apart = timings is not None or command_timings.enabled()  # the read and the shuffle apart (one more job)
    shuffled, built = _shuffle_and_build(
        posts.df, opts, posts_partitions(spark, inp), keep_posts=apart, against=public, has_users=has_users
    )
    try:
        if apart:
            shuffled.count()
            clock.lap("read_shuffle")
        if public is not None:  # before anything is built from the rows
            (on_overlap or _refuse_public)(_overlap(shuffled, public, has_users))
            clock.lap("overlap")
        stats, items = _stats_and_items(built)
        shuffled.unpersist()  # the posts are built and cached: the text is no longer needed
        clock.lap("tokenize_build_items")
        _report_task_times(stats, timings)
        vocab, id_maps = _checked_items(stats, items, posts.text_column, opts.max_n)
        clock.lap("item_ids")
        check_users(stats["users"])
    except BaseException:
        built.unpersist()
        raise
    finally:
        shuffled.unpersist()
    info = _source_info(inp, posts, opts, stats, stats["empty"], master_of(spark), name)
    return _spark_corpus(spark, built, vocab, id_maps, stats, info)


def _read(spark: SparkSession, inp: SparkInput, opts: LoadOptions) -> Posts:
    """The input's posts (``read_posts``), the executors' Python workers started meanwhile; a user pattern
    needs a user column."""
    _start_python_workers(spark)
    posts = read_posts(spark, inp, opts)
    check_pattern_has_column(opts, posts.user_column, posts.format)
    return posts


def _checked_items(stats: dict[str, int], items: pa.Table, text_column: str, max_n: int) -> tuple[Vocabulary, IdMaps]:
    """The local engine's checks of the posts and tokens kept, then the partitions' items numbered
    (``merge_items``)."""
    check_posts(stats["posts"], stats["rows"], _dropped(stats))
    check_tokens(stats["tokens"], stats["posts"], text_column)
    return merge_items(items, max_n)


def _spark_corpus(
    spark: Any, built: Any, vocab: Vocabulary, id_maps: IdMaps, stats: dict[str, int], info: SourceInfo
) -> SparkCorpus:
    """The ``SparkCorpus`` of the cached build: its users' rows, and a core ``Corpus`` holding the vocabulary
    (``merge_items``') and the loading's totals, no users."""
    vocabulary = Corpus(
        indptr=np.zeros(1, dtype=np.int64),
        items=np.zeros(0, dtype=np.int32),
        counts=np.zeros(0, dtype=np.int32),
        vocab=np.asarray(vocab.strings.to_pylist(), dtype=object),
        ngram_len=vocab.ngram_len,
        gram_tokens=vocab.gram_tokens,
        n_posts=stats["posts"],
        n_tokens=stats["tokens"],
        source=info,
    )
    rows = built.where(built["kind"] == USER).select(*ROW_COLUMNS)
    return SparkCorpus(
        spark,
        rows,
        vocabulary,
        string_keys(vocabulary.vocab),
        n_users=stats["users"],
        nnz=stats["nnz"],
        id_maps=id_maps,
        cached=built,
        source=info,
    )


def _noop_batches(batches):  # runs on an executor: starts its Python daemon (imports, cached kernels)
    yield from batches


def _start_python_workers(spark: Any) -> None:
    """A one-task Python job in the background, so the executor's Python daemon imports dpsu and loads its
    cached kernels (``spark_daemon``) while the driver plans the read and the JVM reads and shuffles, not
    after: the build's tasks find it started. One task: the other cores go on with the read."""
    import threading

    def warm() -> None:
        try:
            spark.range(0, 1, 1, 1).mapInArrow(_noop_batches, "id long").collect()
        except Exception:  # noqa: BLE001 - a warm-up only: the build starts the workers itself
            pass

    threading.Thread(target=warm, name="dpsu-warm-python-workers", daemon=True).start()


def _shuffle_and_build(
    posts: Any,
    opts: LoadOptions,
    partitions: int,
    *,
    keep_posts: bool,
    against: Fingerprint | None = None,
    has_users: bool = True,
) -> tuple[Any, Any]:
    """The one shuffle (every post to the partition of its user, the user as the core derives it) into
    ``partitions`` partitions, then each partition built once (``partition_build``); built is cached (and
    the shuffled posts with ``keep_posts``, for ``--timings``' read and shuffle phase, or with ``against``),
    the caller unpersists.

    With a user pattern, or ``against`` (a public file's fingerprint: each partition's hits on it, a bitmap row
    read back from the cached shuffle by ``_overlap``), the users are derived (``derive_users``) before the
    shuffle, in one Python pass.
    Without one, the user is the column trimmed: the posts are shuffled by the column with every white-space
    or control character removed (a key at least as coarse as the trimmed user, so a user's posts meet), and
    trimmed in the build's own Python pass, which saves a pass of every post through Python."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    pattern = opts.user_pattern
    schema = POSTS_SCHEMA + (HITS_SCHEMA if against is not None else "")

    def derive(batches):  # the public file's hashes and this run's key go with the function (as salts do)
        return derive_users(batches, pattern, against, has_users)

    def build(batches):
        return partition_build(batches, opts=opts)

    def derive_and_build(batches):
        return partition_build(derive_users(batches, None), opts=opts)

    if pattern or against is not None:
        shuffled = posts.mapInArrow(derive, schema).repartition(partitions, "user")
        rows = shuffled if against is None else shuffled.where(shuffled["hits"].isNull())  # posts, not bitmaps
        built = rows.mapInArrow(build, BUILT_SCHEMA)
        keep_posts = keep_posts or against is not None  # the bitmaps are read back from the cached shuffle
    else:
        key = F.regexp_replace(F.col("user"), r"[\p{Z}\p{Cc}\p{Cf}]", "")
        shuffled = posts.repartition(partitions, key)
        built = shuffled.mapInArrow(derive_and_build, BUILT_SCHEMA)
    if keep_posts:
        shuffled = shuffled.persist(StorageLevel.MEMORY_AND_DISK)
    return shuffled, built.persist(StorageLevel.MEMORY_AND_DISK)


#: bytes of input per partition of the posts' shuffle: each is built in one Python task
PART_BYTES = 64 << 20


def posts_partitions(spark: Any, inp: SparkInput) -> int:
    """Partitions of the posts' shuffle: enough that one holds about ``PART_BYTES`` of the input, and a
    multiple of the cluster's parallelism (its cores) so every core builds; without local parts to measure
    (remote storage, a table) the session's ``spark.sql.shuffle.partitions``."""
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext: the session's setting
        cores = int(spark.conf.get("spark.sql.shuffle.partitions", "4"))
    if not inp.parts:
        return max(cores, int(spark.conf.get("spark.sql.shuffle.partitions", "4")))
    size = sum(p.stat().st_size for p in inp.parts if p.is_file())
    need = max(1, -(-size // PART_BYTES))
    return max(cores, -(-need // cores) * cores)


def _overlap(shuffled: Any, public: Fingerprint, has_users: bool) -> Overlap:
    """How much of ``public`` the rows hold: the first pass's bitmaps (a row per partition of it, read from the
    cached shuffle; the posts are not read again), ORed on the driver."""
    from ..corpus.overlap import found_in_pass

    bitmaps = shuffled.where(shuffled["hits"].isNotNull()).select("hits").toArrow()
    return found_in_pass(public, bitmaps.column("hits").to_pylist(), has_users)


def _refuse_public(found: Overlap) -> None:
    if found.refused:
        raise InputError(found.refusal("the public corpus"))


def _stats_and_items(built: Any) -> tuple[dict[str, int], pa.Table]:
    """The loading statistics summed over the partitions, and every partition's distinct items with their
    first positions (at most items x partitions rows): the cached build's rows other than the users', collected
    as they are (no aggregation: a cold session's SQL aggregation costs more than the driver's merge,
    ``merge_items``)."""
    from pyspark.sql import functions as F

    tab = (
        built.where(F.col("kind") != USER)
        .select("kind", "part", "item", "n", "first_row", "first_tok", "cnt")
        .toArrow()
    )
    is_stat = tab.column("kind").to_numpy(zero_copy_only=False) == STAT
    stat_tab = tab.filter(pa.array(is_stat))
    names = np.asarray(stat_tab.column("item").to_pylist(), dtype=object)
    values = stat_tab.column("cnt").to_numpy(zero_copy_only=False)
    stats = {s: int(values[names == s].sum()) for s in STAT_NAMES}
    return stats, tab.filter(pa.array(~is_stat))


def _dropped(stats: dict[str, int]) -> dict[str, int]:
    return {k: stats[k] for k in ("no_user", "no_text", "removed")}


def _source_info(
    inp: SparkInput,
    posts: Posts,
    opts: LoadOptions,
    stats: dict[str, int],
    n_empty: int,
    master: str,
    name: str | None,
) -> SourceInfo:
    dropped = _dropped(stats)
    notes = [*inp.notes, *posts.notes]
    if stats["malformed"]:
        notes.append(malformed_note(stats["malformed"]))
    notes += row_notes(opts, posts.user_column, stats["unmatched"], dropped)
    if n_empty:
        notes.append(empty_users_note(n_empty))
    notes.append(
        f"read and tokenized with Spark ({master}); the columns' facts and the sanity warnings are not computed "
        "by the Spark engine (run the local engine on a sample to see them)"
    )
    return SourceInfo(
        name=name if name is not None else inp.name,
        format=posts.format,
        user_column=posts.user_column,
        text_column=posts.text_column,
        columns_guessed=posts.columns_guessed,
        rows_read=stats["rows"],
        rows_dropped_no_user=dropped["no_user"],
        rows_dropped_no_text=dropped["no_text"],
        rows_dropped_removed=dropped["removed"],
        tokenizer=opts.tokenizer,
        char_ngrams=opts.char_ngrams,
        tokenization=tokenization_text(opts.tokenizer, opts.char_ngrams, opts.korean),
        notes=tuple(notes),
        header=posts.header,
        row_is_user=opts.row_is_user,
        user_pattern=opts.user_pattern or None,
    )


class _Clock:
    """The load's stages: into ``timings`` (benchmarks) and the command's ``--timings`` line."""

    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings, self.t = timings, time.perf_counter()

    def lap(self, stage: str) -> None:
        from .. import timings as command_timings

        now = time.perf_counter()
        if self.timings is not None:
            self.timings[stage] = round(now - self.t, 3)
        command_timings.add(f"spark {stage.replace('_', ' ')}", now - self.t)
        self.t = now


def _report_task_times(stats: dict[str, int], timings: dict[str, float] | None) -> None:
    """The executors' task seconds (summed over partitions and workers) beside the driver's wall phases."""
    from .. import timings as command_timings

    for key, label in (("ms_imports", "imports"), ("ms_numba", "numba compile"), ("ms_build", "build")):
        seconds = stats[key] / 1000
        command_timings.add(f"executors' {label} (task s)", seconds)
        if timings is not None:
            timings[f"executors_{label}"] = seconds
    if timings is not None:
        timings["executors_numba_kernels"] = stats["n_numba"]
