"""The Spark engine: the same corpus and the parallel mechanisms, for corpora past one machine.

Data path (every step on the executors unless it says driver):

1. read CSV/TSV/Parquet/JSONL from any path Spark reads; the delimiter and header detected by the local
   reader's own rules (``readers.delimited_head`` on the input's first bytes), columns chosen by
   ``choose_columns`` (never silently: a guess is a note); each row keeps its read position; each post's
   user derived as the core derives it (user pattern, trimmed); with a public corpus to check, each post hashed
   against it in this same pass (``overlap.PassHits``: a bitmap per partition, no read of its own);
2. ONE shuffle: the posts by user, so each partition holds every post of its users;
3. per partition, once (``mapInArrow``): the core's row filters, tokenizer, token filters and n-gram builder
   (``build_corpus``), so tokens and n-grams are the local engine's, byte for byte; cached as the users' rows
   ``(part, ukey, ufirst, n, items, counts)`` with the partition's own item ids (ids and counts as int32
   bytes; ``part`` the partition's key, ``ukey`` the keyed hash's digest of the user id, ``ufirst`` the user's
   first read position), plus the partition's distinct items with their first positions and its statistics;
   user ids never reach the driver;
4. the partitions' distinct items (at most items x partitions rows, collected as they are: no SQL aggregation)
   go to the driver, which merges them, numbers them in the local engine's order (unigrams by first
   appearance, k-grams by (prefix id, last token id)) and keeps each partition's map from its ids to the
   vocabulary's (``IdMaps``): the rows are never renumbered on the executors; whoever reads them maps them.

Parallel mechanisms (count, weighted, DP-SIPS, DPNE's levels) build their histogram H on the executors:
each user's row is filtered (DPNE's valid k-grams, DP-SIPS's not-yet-released items: a bitmask over item ids,
broadcast), sampled to Delta0 items by a keyed hash of (user id, item string) with a secret salt per release
and round (``engines.keyed``), and the core update rule runs per batch; each partition's partial histogram
is collected and summed by item on the driver. The driver holds H (one float per item) and does everything
private with the core's code: calibration, noise (numpy Generator seeded by the OS) and thresholds, DPNE's
domains and spurious draws.
Sequential mechanisms (policy, GW, GW-KT, PCR, ...) collect the per-user id arrays into a core ``Corpus``
on the driver, in the local engine's user order, and run the core mechanism.

The session (``spark_session``) makes the workers run the driver's dpsu and turns Spark's failures into one
line (``engines.spark_session``). pyspark is imported only inside functions: ``import dpsu_core`` never
imports it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import timings as command_timings
from ..corpus.limits import HEAD_BYTES
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
from ..mechanisms.dpsu_step import sum_units, units_to_weights
from ..mechanisms.seam import RowsElsewhere
from ..wording import opt
from .keyed import SaltSource, sample_rows, string_keys
from .spark_inputs import SparkInput, resolve_input
from .spark_session import master_of, spark_errors, spark_session

#: on an executor, a Python worker forked for a task imports this module first: its age now is that import's
#: time (``--timings``; meaningless on the driver, where it is not reported)
_IMPORT_SECONDS = command_timings.process_age()

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from pyspark.sql import SparkSession

    from ..corpus.overlap import Fingerprint, Overlap
    from ..mechanisms.base import Mechanism, Release

__all__ = ["SparkCorpus", "SparkRows", "is_parallel", "load_spark_corpus", "spark_release", "spark_session"]

#: Where a mechanism ran on the Spark engine (shown by the CLI and written in the report).
PARALLEL_NOTE = (
    "spark: {name} sampled each user's items and built its histogram on the Spark executors; noise and "
    "thresholds were drawn on the driver from OS randomness"
)
SEQUENTIAL_NOTE = (
    "spark: {name} is sequential (each user's update depends on the users before it), so it ran on the driver, "
    "on the per-user id arrays collected from Spark; Spark did the reading, tokenizing and encoding"
)

_HIST_SCHEMA = "id int, h long"  # h: the item's total in grid units (``dpsu_step.GRID_BITS``)


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class _Posts:
    df: Any  # DataFrame(user string, text string, pos long)
    format: str
    user_column: str | None
    text_column: str
    columns_guessed: bool
    header: str | None
    notes: tuple[str, ...]


def _remote_head(spark: SparkSession, path: str) -> bytes:
    """The first lines of an input only Spark reaches, as Spark reads them."""
    lines = [r[0] for r in spark.read.text(path).limit(200).collect()]
    return "\n".join(lines).encode("utf-8")[:HEAD_BYTES]


def _col(name: str):
    """A column by its exact name (backticks and dots in it quoted)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _read_delimited(spark: SparkSession, inp: SparkInput, opts: LoadOptions):
    """(DataFrame of c0..cN and _bad, header decision, first row, notes): every part read with one schema of
    string columns named by position (so no column name reaches Spark's parser), and a malformed row (the
    wrong number of fields) flagged in ``_bad`` to be counted and skipped as the local reader does."""
    from functools import reduce

    from pyspark.sql.types import StringType, StructField, StructType

    from ..corpus.readers import delimited_head

    head = inp.head if inp.head is not None else _remote_head(spark, inp.given)
    delimiter, rows, decision, notes = delimited_head(head, inp.format, opts.has_header)
    first_row = rows[0] if rows else []
    fields = [StructField(f"c{i}", StringType()) for i in range(max(len(first_row), 1))]
    schema = StructType([*fields, StructField("_bad", StringType())])
    if any(g.encoding not in ("UTF-8", "ISO-8859-1") for g in inp.groups):
        spark.conf.set("spark.sql.legacy.javaCharsets", "true")  # Spark 4 reads cp1252 only with this
    frames = [
        spark.read.csv(
            list(g.paths),
            schema=schema,
            sep=delimiter,
            header=decision.has_header,
            multiLine=g.multiline,
            escape='"',
            encoding=g.encoding,
            mode="PERMISSIVE",
            columnNameOfCorruptRecord="_bad",
        )
        for g in inp.groups
    ]
    df = reduce(lambda a, b: a.unionByName(b), frames)
    return df, decision, first_row, notes


def read_posts(spark: SparkSession, inp: SparkInput, opts: LoadOptions) -> _Posts:
    """(user, text, pos, bad) rows of the input with the local reader's delimiter, header and column rules;
    ``pos`` follows Spark's read order; ``bad``: a malformed row. Each row its own user (``row_is_user``): the
    user is the row's position."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    from ..corpus.columns import choose_columns

    fmt = inp.format
    notes: list[str] = []
    header_reason = None
    first_row: list[str] | None = None
    bad = F.lit(False)
    try:
        if fmt in ("csv", "tsv"):
            df, decision, first_row, notes = _read_delimited(spark, inp, opts)
            header, header_reason = decision.has_header, decision.reason
            names = first_row if header else [str(i) for i in range(len(first_row))]
            refs = [F.col(f"c{i}") for i in range(len(names))]
            bad = F.col("_bad").isNotNull()
        else:
            if fmt == "table":
                df = spark.read.table(inp.given)
            elif fmt == "parquet":
                df = spark.read.parquet(*[p for g in inp.groups for p in g.paths])
            else:
                df = spark.read.json([p for g in inp.groups for p in g.paths], mode="PERMISSIVE")
            header = True
            names = list(df.columns)
            refs = [_col(n) for n in names]
    except AnalysisException as e:
        what = "the table" if fmt == "table" else f"{inp.given!r} as {fmt}"
        raise InputError(f"Spark cannot read {what} ({_short(e)}); check the name and {opt('format')}") from None
    columns = names if header else [str(i) for i in range(len(names))]
    choice = choose_columns(
        columns, opts.user_col, opts.text_col, header, row_is_user=opts.row_is_user, first_row=first_row
    )
    text = refs[choice.text].cast("string").alias("text")
    pos = F.monotonically_increasing_id()
    if choice.user is None:
        df = df.select(text, bad.alias("bad")).withColumn("pos", pos)
        user = F.concat(F.lit("row "), F.col("pos").cast("string")).alias("user")
        df = df.select(user, "text", "pos", "bad")
        user_column = None
    else:
        df = df.select(refs[choice.user].cast("string").alias("user"), text, bad.alias("bad"))
        df = df.withColumn("pos", pos).select("user", "text", "pos", "bad")
        user_column = columns[choice.user]
    return _Posts(
        df, fmt, user_column, columns[choice.text], choice.guessed, header_reason, tuple(notes) + choice.notes
    )


def _short(e: Exception) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return msg[:200]


# --------------------------------------------------------------------------- executors: tokenize and build
_STATS = ("rows", "malformed", "unmatched", "no_user", "no_text", "removed", "posts", "tokens")
#: the users' rows each partition built: users with tokens, their entries (nnz), users without tokens
_ROW_STATS = ("users", "nnz", "empty")
#: what the executors' Python workers spent, summed over the partitions (milliseconds of task time): importing
#: dpsu (once per worker process), numba compiling kernels (not found in its cache), and the whole build
_TASK_MS = ("ms_imports", "ms_numba", "n_numba", "ms_build")
_POSTS_SCHEMA = "user string, text string, pos long, bad boolean, unmatched boolean"  # see _derive_users
_HITS_SCHEMA = ", hits binary"  # with a public file to check (``_derive_users``'s ``against``)
_POSTS_NAMES = ["user", "text", "pos", "bad", "unmatched", "hits"]
_ROWS_PER_BATCH = 65536


def _derive_users(batches, pattern: str | None, against: Fingerprint | None = None, has_users: bool = True):
    """Each post's user as the core derives it (the user pattern's first group, white space trimmed; null when
    the pattern does not match), before the shuffle that brings each user's posts together. With ``against``
    (a public file's fingerprint): the content check made in this pass, which reads the rows anyway
    (``overlap.PassHits``), its bitmap one last row of the partition (``hits``; null in every post's row)."""
    from ..corpus.columns import apply_user_pattern

    hits = None
    if against is not None:
        from ..corpus.overlap import PassHits

        hits = PassHits(against)
    for rb in batches:
        users = rb.column(0)
        unmatched = np.zeros(rb.num_rows, dtype=bool)
        if pattern:
            matched, _ = apply_user_pattern(users, pattern)
            unmatched = pc.is_null(matched).to_numpy(zero_copy_only=False)  # as apply_user_pattern counts
            users = matched
        cols = [pc.utf8_trim_whitespace(users), rb.column(1), rb.column(2), rb.column(3), pa.array(unmatched)]
        if hits is not None:
            bad = rb.column(3).to_numpy(zero_copy_only=False)  # malformed: the local reader skips them
            hits.add(users if has_users else None, rb.column(1), skip=bad)
            cols.append(pa.nulls(rb.num_rows, pa.binary()))
        yield pa.RecordBatch.from_arrays(cols, names=_POSTS_NAMES[: len(cols)])
    if hits is not None:
        yield pa.RecordBatch.from_arrays(
            [pa.nulls(1, pa.string()), pa.nulls(1, pa.string()), pa.nulls(1, pa.int64()), pa.array([False]),
             pa.array([False]), pa.array([hits.packed()], pa.binary())],
            names=_POSTS_NAMES,
        )  # fmt: skip


@dataclass
class _Partition:
    """One shuffle partition's posts (every post of its users, in read order) through the core's loading
    steps: row filters, user pattern, tokenizer, token filters and ``build_corpus`` (n-grams)."""

    stats: dict[str, int]
    key: int = -1  # the partition's key (``IdMaps``): its smallest read position (-1: no rows)
    names: pa.Array | None = None  # the partition's kept users (trimmed ids), in order of first post
    ufirst: np.ndarray | None = None  # each user's first read position
    built: Corpus | None = None  # users x the partition's own item numbering (empty users kept)
    first_row: np.ndarray | None = None  # per partition unigram: read position of its first post
    first_tok: np.ndarray | None = None  # ... and its token index in that post


class _NumbaClock:
    """Wall time of numba's compilations in this process: the outermost ``numba:compile`` events (a kernel
    compiles its callees inside its own event). Kernels loaded from numba's cache fire none: their load
    counts in the build's time."""

    def __init__(self) -> None:
        self.seconds, self.count, self._depth, self._t0 = 0.0, 0, 0, 0.0

    def install(self) -> None:
        from numba.core import event

        clock = self

        class Listener(event.Listener):
            def on_start(self, ev) -> None:
                if clock._depth == 0:
                    clock._t0 = time.perf_counter()
                clock._depth += 1

            def on_end(self, ev) -> None:
                clock._depth -= 1
                if clock._depth == 0:
                    clock.seconds += time.perf_counter() - clock._t0
                    clock.count += 1

        event.register("numba:compile", Listener())


_WORKER: dict[str, Any] = {}


def _worker_clock() -> tuple[_NumbaClock, float]:
    """This worker's numba clock (installed on first use) and its import seconds, reported once per process."""
    if "numba" not in _WORKER:
        _WORKER["numba"] = _NumbaClock()
        _WORKER["numba"].install()
        return _WORKER["numba"], _IMPORT_SECONDS
    return _WORKER["numba"], 0.0


def _build_partition(batches, opts: LoadOptions) -> _Partition:
    numba_clock, imported = _worker_clock()
    t0, numba0, n0 = time.perf_counter(), numba_clock.seconds, numba_clock.count
    part = _build_partition_timed(batches, opts)
    part.stats["ms_imports"] = round(imported * 1000)
    part.stats["ms_numba"] = round((numba_clock.seconds - numba0) * 1000)
    part.stats["n_numba"] = numba_clock.count - n0
    part.stats["ms_build"] = round((time.perf_counter() - t0) * 1000)
    return part


def _build_partition_timed(batches, opts: LoadOptions) -> _Partition:
    from ..corpus.build import build_corpus
    from ..corpus.clean import drop_tokens, token_drop_mask
    from ..corpus.tokenize import blank_mask, removed_mask, tokenize

    prep = opts.preprocessing()
    stats = dict.fromkeys(_STATS + _ROW_STATS + _TASK_MS, 0)
    tabs = [pa.Table.from_batches([rb]) for rb in batches if rb.num_rows]
    if not tabs:
        return _Partition(stats)
    tab = pa.concat_tables(tabs)
    part_key = int(pc.min(tab.column("pos")).as_py())  # read positions are unique: no other partition has it
    bad = tab.column("bad").to_numpy()
    stats["malformed"] = int(bad.sum())  # the wrong number of fields: skipped and counted, as the local reader does
    if stats["malformed"]:
        tab = tab.filter(pa.array(~bad))
    pos = tab.column("pos").to_numpy().astype(np.int64)
    if pos.shape[0] > 1 and not (pos[1:] > pos[:-1]).all():  # read order (first positions need it), when the
        order = np.argsort(pos, kind="stable")  # shuffle's blocks did not arrive in it
        tab, pos = tab.take(pa.array(order)), pos[order]
    users, texts = tab.column("user").combine_chunks(), tab.column("text").combine_chunks()
    stats["rows"] = n_rows = tab.num_rows
    stats["unmatched"] = int(pc.sum(tab.column("unmatched")).as_py() or 0)
    no_user = blank_mask(users)
    no_text = blank_mask(texts) & ~no_user
    removed = removed_mask(texts) & ~no_user & ~no_text if prep.drop_removed else np.zeros(n_rows, bool)
    keep = ~(no_user | no_text | removed)
    stats["no_user"], stats["no_text"], stats["removed"] = int(no_user.sum()), int(no_text.sum()), int(removed.sum())
    if not keep.any():
        return _Partition(stats, key=part_key)
    mask = pa.array(keep)
    users, texts, pos = users.filter(mask), texts.filter(mask), pos[keep]
    stats["posts"] = len(texts)
    enc = pc.utf8_trim_whitespace(users).dictionary_encode()
    post_user = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    first_post = np.unique(post_user, return_index=True)[1]
    tok = tokenize(texts, tokenizer=opts.tokenizer, prep=prep, workers=1, char_ngrams=opts.char_ngrams)
    drop = token_drop_mask(tok.unigrams, drop_digits=prep.drop_digits, stop_language=prep.stop_words)
    if drop is not None and drop.any():
        codes, post_ptr = drop_tokens(tok.codes, tok.post_ptr, drop)
        tok = replace(tok, codes=codes, post_ptr=post_ptr)
    stats["tokens"] = tok.n_tokens
    part = _Partition(stats, key=part_key, names=enc.dictionary, ufirst=pos[first_post])
    if tok.n_tokens == 0:
        return part
    part.built = build_corpus(
        tok.codes,
        tok.post_ptr,
        post_user,
        tok.unigrams,
        max_n=opts.max_n,
        n_users=len(enc.dictionary),
        drop_empty_users=False,
    )
    # where each unigram first occurs: build_corpus numbers the used unigrams densely, in order of first use
    first = np.full(len(tok.unigrams), tok.codes.shape[0], dtype=np.int64)  # np.unique's first indices, linear
    np.minimum.at(first, tok.codes, np.arange(tok.codes.shape[0], dtype=np.int64))
    first_idx = np.sort(first[first < tok.codes.shape[0]])  # build_corpus numbers unigrams by first use
    post = np.searchsorted(tok.post_ptr, first_idx, side="right") - 1
    part.first_row, part.first_tok = pos[post], first_idx - tok.post_ptr[post]
    return part


_BUILT_SCHEMA = (
    "kind int, part long, ukey long, ufirst long, n int, items binary, counts binary, item string, "
    "first_row long, first_tok long, cnt long"
)  # see _partition_build
_USER, _ITEM, _STAT = 0, 1, 2
#: the columns of a user's row (kind _USER): what ``SparkCorpus.rows`` holds
ROW_COLUMNS = ("part", "ukey", "ufirst", "n", "items", "counts")


def _built_batch(m: int, kind: int, part: int | None = None, **cols: pa.Array) -> pa.RecordBatch:
    types = {
        "ukey": pa.int64(), "ufirst": pa.int64(), "n": pa.int32(), "items": pa.binary(), "counts": pa.binary(),
        "item": pa.string(), "first_row": pa.int64(), "first_tok": pa.int64(), "cnt": pa.int64(),
    }  # fmt: skip
    arrays = [pa.array(np.full(m, kind, dtype=np.int32))]
    arrays.append(pa.nulls(m, pa.int64()) if part is None else pa.array(np.full(m, part, dtype=np.int64)))
    arrays += [cols.get(name, pa.nulls(m, t)) for name, t in types.items()]
    return pa.RecordBatch.from_arrays(arrays, names=["kind", "part", *types])


def _partition_build(batches, *, opts: LoadOptions):
    """One partition built once, cached as it is (no renumbering pass): its users' rows with the partition's
    own item ids (kind _USER: part, ukey, ufirst, n, items, counts as int32 bytes), its distinct items (kind
    _ITEM: part, item, n = length, first position of a unigram, cnt = the partition's id) and its statistics
    (kind _STAT: item = name, cnt; with the rows' users, nnz and users without tokens). ``part`` is the
    partition's key (its smallest read position): the driver maps each partition's ids to the vocabulary's
    with it (``IdMaps``)."""
    part = _build_partition(batches, opts)
    n_empty = 0 if part.names is None else len(part.names)
    if part.built is not None and part.names is not None and part.ufirst is not None:
        b = part.built
        key = part.key
        fr = np.full(b.n_items, -1, dtype=np.int64)
        ft = np.full(b.n_items, -1, dtype=np.int64)
        uni = np.flatnonzero(b.ngram_len == 1)
        fr[uni], ft[uni] = part.first_row[uni], part.first_tok[uni]  # type: ignore[index]
        yield _built_batch(
            b.n_items,
            _ITEM,
            key,
            item=pa.array(b.vocab, pa.string()),
            n=pa.array(b.ngram_len.astype(np.int32)),
            first_row=pa.array(fr),
            first_tok=pa.array(ft),
            cnt=pa.array(np.arange(b.n_items, dtype=np.int64)),
        )
        row_len = np.diff(b.indptr)
        has = row_len > 0
        n_empty = int((~has).sum())
        lens = row_len[has]
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        ukey = string_keys(part.names.filter(pa.array(has)).to_pylist()).view(np.int64)
        ufirst = part.ufirst[has]
        items, counts = b.items.astype("<i4"), b.counts.astype("<i4")  # rows of empty users hold no entries
        part.stats["users"], part.stats["nnz"] = int(lens.shape[0]), int(items.shape[0])
        for a in range(0, lens.shape[0], _ROWS_PER_BATCH):
            z = min(a + _ROWS_PER_BATCH, lens.shape[0])
            lo, hi = offsets[a], offsets[z]
            yield _built_batch(
                z - a,
                _USER,
                key,
                ukey=pa.array(ukey[a:z], pa.int64()),
                ufirst=pa.array(ufirst[a:z], pa.int64()),
                n=pa.array(lens[a:z].astype(np.int32)),
                items=_blob(offsets[a : z + 1] - lo, items[lo:hi]),
                counts=_blob(offsets[a : z + 1] - lo, counts[lo:hi]),
            )
    part.stats["empty"] = n_empty
    names = _STATS + _ROW_STATS + _TASK_MS
    yield _built_batch(
        len(names), _STAT, item=pa.array(names, pa.string()), cnt=pa.array([part.stats[s] for s in names])
    )


def _blob(offsets: np.ndarray | None = None, values: np.ndarray | None = None) -> pa.Array:
    """Rows of int32 values as one binary value per row (``offsets`` in values; None: one empty row)."""
    if offsets is None or values is None:
        return pa.array([b""], pa.binary())
    byte_offsets = pa.py_buffer((np.asarray(offsets, dtype=np.int64) * 4).astype(np.int32).tobytes())
    data = pa.py_buffer(np.ascontiguousarray(values, dtype="<i4").tobytes())
    return pa.Array.from_buffers(pa.binary(), len(offsets) - 1, [None, byte_offsets, data])


def _unblob(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(indptr int64, values int32) of a binary column written by ``_blob``."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1].astype(np.int64)
    start, end = int(off[0]) if off.size else 0, int(off[-1]) if off.size else 0
    data = bufs[2]
    values = np.frombuffer(data, dtype="<i4", count=(end - start) // 4, offset=start) if end > start else None
    return (off - start) // 4, values if values is not None else np.zeros(0, dtype=np.int32)


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


# --------------------------------------------------------------------------- item ids (driver)
@dataclass(frozen=True)
class _Vocabulary:
    strings: pa.Array  # string, by id
    ngram_len: np.ndarray  # int8
    gram_tokens: np.ndarray  # (n_items, max_n) int32, -1 padded
    rows: np.ndarray  # int64, by id: the row of ``_number_items``' table that holds the item


def _number_items(tab: pa.Table, max_n: int) -> _Vocabulary:
    """Ids in the local engine's order from (item, n, first_row, first_tok): unigrams by first appearance, then
    each level k by (id of its (k-1)-prefix, id of its last token), ids continuing from the level below."""
    n = tab.column("n").to_numpy(zero_copy_only=False).astype(np.int64)
    items = tab.column("item")
    uni = np.flatnonzero(n == 1)
    first_row = tab.column("first_row").to_numpy(zero_copy_only=False)[uni]
    first_tok = tab.column("first_tok").to_numpy(zero_copy_only=False)[uni]
    uni = uni[np.lexsort((first_tok, first_row))]
    order = [uni]
    strings = items.take(pa.array(uni)).to_pylist()
    tokens: list[list[int]] = [[i] for i in range(len(uni))]
    ids = {s: i for i, s in enumerate(strings)}
    unigram_id = ids
    prev = ids
    for k in range(2, max_n + 1):
        lvl = np.flatnonzero(n == k)
        if lvl.size == 0:
            break
        grams = items.take(pa.array(lvl)).to_pylist()
        keys = []
        for g in grams:
            prefix, last = g.rsplit(" ", 1)
            keys.append((prev[prefix], unigram_id[last]))
        rank = sorted(range(len(grams)), key=keys.__getitem__)
        offset = len(strings)
        level: dict[str, int] = {}
        for j, r in enumerate(rank):
            level[grams[r]] = offset + j
            strings.append(grams[r])
            tokens.append(tokens[keys[r][0]] + [keys[r][1]])
        order.append(lvl[rank])
        prev = level
    rows = np.concatenate(order).astype(np.int64)
    ngram_len = n[rows].astype(np.int8)
    gram_tokens = np.full((len(strings), max_n), -1, dtype=np.int32)
    for i, t in enumerate(tokens):
        gram_tokens[i, : len(t)] = t
    return _Vocabulary(pa.array(strings, pa.string()), ngram_len, gram_tokens, rows)


@dataclass(frozen=True)
class IdMaps:
    """Each partition's item ids -> the vocabulary's: the executors cache the users' rows with their
    partition's own ids (no renumbering pass), and whoever reads a row maps its ids here (the histogram's
    function on the executors, ``to_corpus`` on the driver). ``parts``: the partitions' keys, sorted; the
    map of ``parts[j]`` is ``ids[starts[j]:starts[j + 1]]`` (indexed by the partition's id)."""

    parts: np.ndarray  # int64
    starts: np.ndarray  # int64, len(parts) + 1
    ids: np.ndarray  # int32

    def to_global(self, part: np.ndarray, indptr: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Rows (CSR ``indptr``, ``local`` ids) of the partitions ``part`` (one key per row) in vocabulary ids."""
        if local.size == 0:
            return np.zeros(0, dtype=np.int32)
        base = self.starts[np.searchsorted(self.parts, np.asarray(part, dtype=np.int64))]
        return self.ids[np.repeat(base, np.diff(indptr)) + local]


def _merge_items(tab: pa.Table, max_n: int) -> tuple[_Vocabulary, IdMaps]:
    """The vocabulary in the local engine's order (``_number_items``) and each partition's map to it, from the
    partitions' distinct items (part, item, n, first_row, first_tok, cnt = the partition's id; at most items x
    partitions rows): each item's first position is the least over the partitions holding it."""
    if tab.num_rows == 0:
        empty = tab.select(["item", "n", "first_row", "first_tok"])
        z = np.zeros(0, dtype=np.int64)
        return _number_items(empty, max_n), IdMaps(z, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32))
    order = pc.sort_indices(tab, [("item", "ascending"), ("first_row", "ascending"), ("first_tok", "ascending")])
    srt = tab.take(order)
    item = srt.column("item").combine_chunks()
    starts_group = np.ones(srt.num_rows, dtype=bool)  # the first row of each item (its least first position)
    if srt.num_rows > 1:
        starts_group[1:] = pc.not_equal(item[1:], item[:-1]).to_numpy(zero_copy_only=False)
    distinct = srt.filter(pa.array(starts_group)).select(["item", "n", "first_row", "first_tok"])
    vocab = _number_items(distinct, max_n)
    gid_of_distinct = np.empty(distinct.num_rows, dtype=np.int32)
    gid_of_distinct[vocab.rows] = np.arange(distinct.num_rows, dtype=np.int32)
    gid = gid_of_distinct[np.cumsum(starts_group) - 1]  # per sorted row
    part = srt.column("part").to_numpy(zero_copy_only=False)
    local = srt.column("cnt").to_numpy(zero_copy_only=False)
    by_part = np.lexsort((local, part))
    part, ids = part[by_part], gid[by_part]  # a partition's ids are 0..n-1: its map, in order
    keys, first = np.unique(part, return_index=True)
    starts = np.append(first, part.shape[0]).astype(np.int64)
    return vocab, IdMaps(keys.astype(np.int64), starts, ids.astype(np.int32))


# --------------------------------------------------------------------------- the corpus on Spark
@dataclass(eq=False)
class SparkCorpus:
    """A corpus whose per-user rows live on the executors (not a ``Corpus``: it has no rows on the driver).

    ``rows``: DataFrame(part long, ukey long, ufirst long, n int, items binary, counts binary): one row per
    user, its n item ids in its partition's numbering (``part``: the partition's key; ``id_maps`` maps them to
    the vocabulary's) and counts as int32 bytes (``_unblob``); ``ukey`` the 64-bit BLAKE2b digest of the user
    id (the keyed sampling's input), ``ufirst`` the user's first read position (the local engine's user order).
    ``vocabulary``: a core ``Corpus`` holding the vocabulary only (strings, n-gram lengths, token ids; no
    users): what the driver needs for thresholds, DPNE's domains and the released strings. ``item_keys``: the
    BLAKE2b digest of each item string. ``cached``: the executors' cached build the rows are read from
    (``unpersist``).
    """

    spark: Any
    rows: Any
    vocabulary: Corpus
    item_keys: np.ndarray
    n_users: int
    nnz: int
    id_maps: IdMaps
    cached: Any = None
    source: SourceInfo = field(default_factory=SourceInfo)

    @property
    def n_items(self) -> int:
        return self.vocabulary.n_items

    def unpersist(self) -> None:
        """Free the executors' cached rows (the corpus is unusable after)."""
        if self.cached is not None:
            self.cached.unpersist()

    @spark_errors
    def to_corpus(self) -> Corpus:
        """Collect the per-user id arrays into a core Corpus on the driver, users in the local engine's order
        (for the sequential mechanisms)."""
        tab = self.rows.select("part", "ufirst", "items", "counts").toArrow()
        order = np.argsort(tab.column("ufirst").to_numpy(), kind="stable")
        ptr, local = _unblob(tab.column("items"))
        items = self.id_maps.to_global(tab.column("part").to_numpy(), ptr, local)
        counts = _unblob(tab.column("counts"))[1]
        items, counts = _sorted_rows(ptr, items, counts)  # each row's ids ascending, as the local engine's
        lens = np.diff(ptr)[order]
        take = np.repeat(ptr[:-1][order] - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + np.arange(lens.sum())
        indptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        items, counts = items[take].astype(np.int32), counts[take].astype(np.int32)
        return replace(self.vocabulary, indptr=indptr, items=items, counts=counts, source=self.source)

    @spark_errors
    def histogram(
        self, *, max_items: int, power: float, salt: tuple[int, int], eligible: np.ndarray | None = None
    ) -> np.ndarray:
        """H over the vocabulary (float64): each user's row restricted to ``eligible`` items, sampled to
        ``max_items`` by the keyed hash with ``salt`` (``keyed.sample_rows``), then the core's update
        1/|W|^power per kept item (``dpsu_step.weighted_update_units``: power 0 Count, 1 Weighted Laplace, 1/2
        Weighted Gaussian), in the core's integer grid units. Computed on the executors, summed by item exactly
        (``dpsu_step.sum_units``: the same integers as the local engine on the same samples, in any partition
        order); NOT private (diagnostics and thresholding only)."""
        n_items = self.n_items
        keys = self.item_keys  # shipped with the function (Spark broadcasts a large closure itself)
        bits = None if eligible is None else np.packbits(np.asarray(eligible, dtype=bool))
        maps = self.id_maps

        def fn(batches):
            return _histogram_batches(batches, n_items, max_items, power, salt, keys, bits, maps)

        # each partition's partial histogram (its sampled items) collected and summed here: at most items x
        # partitions rows, no shuffle and no SQL aggregation
        parts = self.rows.mapInArrow(fn, _HIST_SCHEMA).toArrow()
        ids = parts.column("id").to_numpy(zero_copy_only=False)
        units = sum_units(ids, parts.column("h").to_numpy(zero_copy_only=False), n_items)  # exact: int64
        return units_to_weights(units, power)

    def __repr__(self) -> str:  # never print data
        return f"SparkCorpus(users={self.n_users}, items={self.n_items}, nnz={self.nnz}, max_n={self.vocabulary.max_n})"


def _sorted_rows(indptr: np.ndarray, items: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(items, counts) with each CSR row's items in ascending order."""
    lens = np.diff(indptr)
    row = np.repeat(np.arange(lens.shape[0], dtype=np.int64), lens)  # by (row, id): one int64 key
    order = np.argsort(row * (int(items.max(initial=0)) + 1) + items, kind="stable")
    return items[order].astype(np.int32), counts[order].astype(np.int32)


def _histogram_batches(batches, n_items, max_items, power, salt, keys, bits, maps: IdMaps):
    """A partition's users' rows (``SparkCorpus.rows``) -> its partial histogram (id, h) in vocabulary ids.
    The rows keep their partition's numbering and order; neither matters to the sample (keyed by the user
    and the item string) nor to the update (the same weight for every kept item of a user)."""
    from ..mechanisms.dpsu_step import sum_units, weighted_update_units
    from ..mechanisms.sampling import OrderedRows

    item_keys = keys
    eligible = None if bits is None else np.unpackbits(bits, count=n_items).astype(bool)
    dense = np.zeros(n_items, dtype=np.int64) if n_items <= _DENSE_ITEMS else None
    got_ids, got_h = [], []
    for rb in batches:
        user_keys = rb.column("ukey").to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64)
        indptr, local = _unblob(rb.column("items"))
        items = maps.to_global(rb.column("part").to_numpy(zero_copy_only=False), indptr, local)
        if eligible is not None:
            ok = eligible[items]
            indptr = np.concatenate([[0], np.cumsum(ok, dtype=np.int64)])[indptr]
            items = items[ok]
        indptr, kept = sample_rows(indptr, items, user_keys, item_keys, salt, max_items)
        if kept.size == 0:
            continue
        ones = np.ones(kept.shape[0], dtype=np.int32)
        if dense is not None and n_items <= 8 * kept.shape[0]:  # the update over the whole vocabulary
            h = weighted_update_units(OrderedRows(indptr, kept.astype(np.int32), ones), n_items, power)
            sum_units(np.flatnonzero(h), h[h > 0], n_items, into=dense)
            continue
        ids, local = np.unique(kept, return_inverse=True)  # over the batch's items only
        h = weighted_update_units(OrderedRows(indptr, local.astype(np.int32), ones), ids.shape[0], power)
        if dense is not None:
            sum_units(ids, h, n_items, into=dense)
        else:
            got_ids.append(ids)
            got_h.append(h)
    if dense is not None:
        ids = np.flatnonzero(dense)  # every kept item adds a positive number of units
        h = dense[ids]
    elif got_ids:  # the task's batches summed: one row per item it sampled
        ids, inverse = np.unique(np.concatenate(got_ids), return_inverse=True)
        h = sum_units(inverse, np.concatenate(got_h), ids.shape[0])
    else:
        return
    yield pa.RecordBatch.from_arrays([pa.array(ids.astype(np.int32)), pa.array(h.astype(np.int64))], names=["id", "h"])


#: a partition's partial histogram is summed in one dense vector up to this many items (8 bytes each)
_DENSE_ITEMS = 1 << 22


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
    _start_python_workers(spark)
    posts = read_posts(spark, inp, opts)
    check_pattern_has_column(opts, posts.user_column, posts.format)
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
        check_posts(stats["posts"], stats["rows"], _dropped(stats))
        check_tokens(stats["tokens"], stats["posts"], posts.text_column)
        vocab, id_maps = _merge_items(items, opts.max_n)
        clock.lap("item_ids")
        n_users = stats["users"]
        check_users(n_users)
    except BaseException:
        built.unpersist()
        raise
    finally:
        shuffled.unpersist()
    info = _source_info(inp, posts, opts, stats, stats["empty"], master_of(spark), name)
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
    rows = built.where(built["kind"] == _USER).select(*ROW_COLUMNS)
    return SparkCorpus(
        spark,
        rows,
        vocabulary,
        string_keys(vocabulary.vocab),
        n_users=n_users,
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
    ``partitions`` partitions, then each partition built once (``_partition_build``); built is cached (and
    the shuffled posts with ``keep_posts``, for ``--timings``' read and shuffle phase, or with ``against``),
    the caller unpersists.

    With a user pattern, or ``against`` (a public file's fingerprint: each partition's hits on it, a bitmap row
    read back from the cached shuffle by ``_overlap``), the users are derived (``_derive_users``) before the
    shuffle, in one Python pass.
    Without one, the user is the column trimmed: the posts are shuffled by the column with every white-space
    or control character removed (a key at least as coarse as the trimmed user, so a user's posts meet), and
    trimmed in the build's own Python pass, which saves a pass of every post through Python."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    pattern = opts.user_pattern
    schema = _POSTS_SCHEMA + (_HITS_SCHEMA if against is not None else "")

    def derive(batches):  # the public file's hashes and this run's key go with the function (as salts do)
        return _derive_users(batches, pattern, against, has_users)

    def build(batches):
        return _partition_build(batches, opts=opts)

    def derive_and_build(batches):
        return _partition_build(_derive_users(batches, None), opts=opts)

    if pattern or against is not None:
        shuffled = posts.mapInArrow(derive, schema).repartition(partitions, "user")
        rows = shuffled if against is None else shuffled.where(shuffled["hits"].isNull())  # posts, not bitmaps
        built = rows.mapInArrow(build, _BUILT_SCHEMA)
        keep_posts = keep_posts or against is not None  # the bitmaps are read back from the cached shuffle
    else:
        key = F.regexp_replace(F.col("user"), r"[\p{Z}\p{Cc}\p{Cf}]", "")
        shuffled = posts.repartition(partitions, key)
        built = shuffled.mapInArrow(derive_and_build, _BUILT_SCHEMA)
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
    ``_merge_items``)."""
    from pyspark.sql import functions as F

    tab = (
        built.where(F.col("kind") != _USER)
        .select("kind", "part", "item", "n", "first_row", "first_tok", "cnt")
        .toArrow()
    )
    is_stat = tab.column("kind").to_numpy(zero_copy_only=False) == _STAT
    stat_tab = tab.filter(pa.array(is_stat))
    names = np.asarray(stat_tab.column("item").to_pylist(), dtype=object)
    values = stat_tab.column("cnt").to_numpy(zero_copy_only=False)
    stats = {s: int(values[names == s].sum()) for s in _STATS + _ROW_STATS + _TASK_MS}
    return stats, tab.filter(pa.array(~is_stat))


def _dropped(stats: dict[str, int]) -> dict[str, int]:
    return {k: stats[k] for k in ("no_user", "no_text", "removed")}


def _source_info(
    inp: SparkInput,
    posts: _Posts,
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


# --------------------------------------------------------------------------- releases
def driver_rows_bytes(n_users: int, nnz: int) -> int:
    """What collecting every user's row to the driver costs at its peak: the Arrow collect (ids and counts as
    int32 with offsets), the reordered copy and the Corpus's arrays (ids, counts int32, indptr int64)."""
    return 3 * 8 * nnz + 4 * 8 * (n_users + 1)


def driver_limit(spark: Any) -> int:
    """Bytes the driver can take: its available memory, and Spark's cap on a collected result
    (``spark.driver.maxResultSize``, 0 = none)."""
    avail = _available_memory()
    try:
        cap = _spark_bytes(spark.conf.get("spark.driver.maxResultSize", "1g"))
    except Exception:  # noqa: BLE001 - a Connect server may not say: the machine's memory alone
        cap = 0
    return min(avail, cap) if cap else avail


def _available_memory() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def _spark_bytes(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().removesuffix("b")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def check_driver_memory(label: str, n_users: int, nnz: int, limit: int) -> None:
    """Refuse, in one line naming the mechanisms that run on the executors, a sequential mechanism whose users'
    rows would not fit in the driver."""
    need = driver_rows_bytes(n_users, nnz)
    if need <= limit:
        return
    from ..mechanisms.registry import list_mechanisms

    parallel = [name for name, cls in list_mechanisms().items() if cls.order_free]
    raise InputError(
        f"{label} visits the users one by one on the driver, and their rows ({n_users:,} users, {nnz:,} items) need "
        f"about {need / (1 << 30):.1f} GB there, more than the {limit / (1 << 30):.1f} GB it has (its free memory, "
        f"and spark.driver.maxResultSize); choose a mechanism that runs on the executors: {', '.join(parallel)}"
    )


def is_parallel(mech: Mechanism) -> bool:
    """Whether ``mech`` builds its histogram on the executors (else it runs on the driver): its class's
    ``order_free`` trait, True when its only pass over the users is ``dpsu_step.weighted_histogram``."""
    return type(mech).order_free


class SparkRows:
    """What a parallel mechanism sees of a SparkCorpus (the engine seam, ``mechanisms.seam.RowsElsewhere``): the
    vocabulary on the driver, and the pass over the users on the executors (``weighted_histogram``; each call
    samples with a fresh salt). Not a ``Corpus``: a sequential mechanism handed it gets ``seam.rows_here``'s
    one-line error, never an empty corpus."""

    def __init__(self, corpus: SparkCorpus, salts: SaltSource) -> None:
        self._corpus, self._salts = corpus, salts
        self._vocabulary = corpus.vocabulary
        self.source = corpus.source
        self.n_users = corpus.n_users
        self.nnz = corpus.nnz

    @property
    def vocab(self) -> np.ndarray:
        return self._vocabulary.vocab

    @property
    def ngram_len(self) -> np.ndarray:
        return self._vocabulary.ngram_len

    @property
    def gram_tokens(self) -> np.ndarray:
        return self._vocabulary.gram_tokens

    @property
    def n_items(self) -> int:
        return self._vocabulary.n_items

    @property
    def max_n(self) -> int:
        return self._vocabulary.max_n

    @property
    def n_posts(self) -> int:
        return self._vocabulary.n_posts

    @property
    def n_tokens(self) -> int:
        return self._vocabulary.n_tokens

    @property
    def unigram_of_token(self) -> np.ndarray:
        return self._vocabulary.unigram_of_token

    def item_strings(self, ids: np.ndarray) -> np.ndarray:
        return self._vocabulary.item_strings(ids)

    def lengths_mask(self, lengths) -> np.ndarray:
        return self._vocabulary.lengths_mask(lengths)

    def weighted_histogram(self, max_items: int, power: float, keep: np.ndarray | None) -> np.ndarray:
        return self._corpus.histogram(max_items=max_items, power=power, salt=self._salts.next(), eligible=keep)

    def __repr__(self) -> str:
        return f"SparkRows({self._corpus!r})"


def _seam(rows: SparkRows) -> RowsElsewhere:  # pragma: no cover - mypy checks SparkRows against the seam here
    return rows


@spark_errors
def spark_release(mech: Mechanism, sc: SparkCorpus, *, seed: int | None = None) -> Release:
    """Release with ``mech`` on a SparkCorpus: the core mechanism's own ``release``, its pass over the users on
    the executors (parallel mechanisms) or on the corpus collected to the driver (the others). Where it ran
    is recorded in the calibration's details (``engine``), so the CLI output and the report say it.

    Noise and thresholds: the core's, on the driver (numpy Generator seeded by the OS); sampling salts from
    ``secrets``. ``seed`` fixes both only for teaching and tests, and the release is flagged as such.
    """
    if is_parallel(mech):
        rel = mech.release(SparkRows(sc, SaltSource(seed)), seed=seed)
        note = PARALLEL_NOTE.format(name=mech.name)
    else:
        check_driver_memory(mech.label, sc.n_users, sc.nnz, driver_limit(sc.spark))
        rel = mech.release(sc.to_corpus(), seed=seed)
        note = SEQUENTIAL_NOTE.format(name=mech.name)
    cal = replace(rel.calibration, details=replace(rel.calibration.details, engine=note))
    return replace(rel, calibration=cal)
