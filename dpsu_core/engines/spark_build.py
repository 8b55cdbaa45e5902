"""The Spark engine's executors (the Python of steps 1 and 3 of ``engines.spark``'s data path): each post's user
derived before the one shuffle, then each shuffle partition built once (``mapInArrow``) with the core's row filters,
tokenizer, token filters and n-gram builder (``build_corpus``), so tokens and n-grams are the local engine's,
byte for byte.

A partition yields its users' rows ``(part, ukey, ufirst, n, items, counts)`` with the partition's own item ids
(ids and counts as int32 bytes: ``unblob`` reads them), its distinct items with their first positions and its
statistics (``BUILT_SCHEMA``, told apart by ``kind``); user ids never leave the executors, only their keyed
digests. Everything here runs on the executors' Python workers (``unblob`` on the driver too).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import timings as command_timings
from ..corpus.model import Corpus
from .keyed import string_keys

#: on an executor, a Python worker forked for a task imports this module first: its age now is that import's
#: time (``--timings``; meaningless on the driver, where it is not reported)
_IMPORT_SECONDS = command_timings.process_age()

if TYPE_CHECKING:  # pragma: no cover
    from ..corpus.load import LoadOptions
    from ..corpus.overlap import Fingerprint
    from ..corpus.tokenize import Preprocessing

__all__ = [
    "BUILT_SCHEMA", "HITS_SCHEMA", "ITEM", "POSTS_SCHEMA", "ROW_COLUMNS", "STAT", "STAT_NAMES", "USER",
    "derive_users", "partition_build", "unblob",
]  # fmt: skip

_STATS = ("rows", "malformed", "unmatched", "no_user", "no_text", "removed", "posts", "tokens")
#: the users' rows each partition built: users with tokens, their entries (nnz), users without tokens
_ROW_STATS = ("users", "nnz", "empty")
#: what the executors' Python workers spent, summed over the partitions (milliseconds of task time): importing
#: dpsu (once per worker process), numba compiling kernels (not found in its cache), and the whole build
_TASK_MS = ("ms_imports", "ms_numba", "n_numba", "ms_build")
#: every statistic a partition reports (kind STAT rows), summed over the partitions on the driver
STAT_NAMES = _STATS + _ROW_STATS + _TASK_MS
POSTS_SCHEMA = "user string, text string, pos long, bad boolean, unmatched boolean"  # see derive_users
HITS_SCHEMA = ", hits binary"  # with a public file to check (``derive_users``'s ``against``)
_POSTS_NAMES = ["user", "text", "pos", "bad", "unmatched", "hits"]
_ROWS_PER_BATCH = 65536


def derive_users(batches, pattern: str | None, against: Fingerprint | None = None, has_users: bool = True):
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
    from ..corpus.tokenize import tokenize

    prep = opts.preprocessing()
    stats = dict.fromkeys(STAT_NAMES, 0)
    tabs = [pa.Table.from_batches([rb]) for rb in batches if rb.num_rows]
    if not tabs:
        return _Partition(stats)
    tab = pa.concat_tables(tabs)
    part_key = int(pc.min(tab.column("pos")).as_py())  # read positions are unique: no other partition has it
    kept = _kept_posts(tab, prep, stats)
    if kept is None:
        return _Partition(stats, key=part_key)
    users, texts, pos = kept
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
    part.first_row, part.first_tok = _first_positions(tok.codes, tok.post_ptr, len(tok.unigrams), pos)
    return part


def _kept_posts(
    tab: pa.Table, prep: Preprocessing, stats: dict[str, int]
) -> tuple[pa.Array, pa.Array, np.ndarray] | None:
    """(users, texts, read positions) of the partition's posts the core's row filters keep, in read order
    (None: none kept); the rows' counts into ``stats``: malformed rows (the wrong number of fields: skipped
    and counted, as the local reader does), rows, unmatched users, rows without user or text, removed, posts."""
    from ..corpus.tokenize import blank_mask, removed_mask

    bad = tab.column("bad").to_numpy()
    stats["malformed"] = int(bad.sum())
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
        return None
    mask = pa.array(keep)
    users, texts, pos = users.filter(mask), texts.filter(mask), pos[keep]
    stats["posts"] = len(texts)
    return users, texts, pos


def _first_positions(
    codes: np.ndarray, post_ptr: np.ndarray, n_unigrams: int, pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where each used unigram first occurs (read position of its post, token index in it), in
    ``build_corpus``'s unigram order: it numbers the used unigrams densely, in order of first use."""
    first = np.full(n_unigrams, codes.shape[0], dtype=np.int64)  # np.unique's first indices, linear
    np.minimum.at(first, codes, np.arange(codes.shape[0], dtype=np.int64))
    first_idx = np.sort(first[first < codes.shape[0]])  # build_corpus numbers unigrams by first use
    post = np.searchsorted(post_ptr, first_idx, side="right") - 1
    return pos[post], first_idx - post_ptr[post]


BUILT_SCHEMA = (
    "kind int, part long, ukey long, ufirst long, n int, items binary, counts binary, item string, "
    "first_row long, first_tok long, cnt long"
)  # see partition_build
USER, ITEM, STAT = 0, 1, 2
#: the columns of a user's row (kind USER): what ``SparkCorpus.rows`` holds
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


def partition_build(batches, *, opts: LoadOptions):
    """One partition built once, cached as it is (no renumbering pass): its users' rows with the partition's
    own item ids (kind USER: part, ukey, ufirst, n, items, counts as int32 bytes), its distinct items (kind
    ITEM: part, item, n = length, first position of a unigram, cnt = the partition's id) and its statistics
    (kind STAT: item = name, cnt; with the rows' users, nnz and users without tokens). ``part`` is the
    partition's key (its smallest read position): the driver maps each partition's ids to the vocabulary's
    with it (``IdMaps``)."""
    part = _build_partition(batches, opts)
    n_empty = 0 if part.names is None else len(part.names)
    if part.built is not None and part.names is not None and part.ufirst is not None:
        yield _items_batch(part, part.built)
        has = np.diff(part.built.indptr) > 0
        n_empty = int((~has).sum())
        yield from _user_batches(part, part.built, part.names.filter(pa.array(has)), part.ufirst[has])
    part.stats["empty"] = n_empty
    yield _built_batch(
        len(STAT_NAMES), STAT, item=pa.array(STAT_NAMES, pa.string()), cnt=pa.array([part.stats[s] for s in STAT_NAMES])
    )


def _items_batch(part: _Partition, b: Corpus) -> pa.RecordBatch:
    """The partition's distinct items (kind ITEM), each with its id in the partition (``cnt``) and, for a
    unigram, its first position."""
    fr = np.full(b.n_items, -1, dtype=np.int64)
    ft = np.full(b.n_items, -1, dtype=np.int64)
    uni = np.flatnonzero(b.ngram_len == 1)
    fr[uni], ft[uni] = part.first_row[uni], part.first_tok[uni]  # type: ignore[index]
    return _built_batch(
        b.n_items,
        ITEM,
        part.key,
        item=pa.array(b.vocab, pa.string()),
        n=pa.array(b.ngram_len.astype(np.int32)),
        first_row=pa.array(fr),
        first_tok=pa.array(ft),
        cnt=pa.array(np.arange(b.n_items, dtype=np.int64)),
    )


def _user_batches(part: _Partition, b: Corpus, names: pa.Array, ufirst: np.ndarray):
    """The rows (kind USER) of the partition's users with tokens (``names``, ``ufirst``: theirs), in batches of
    ``_ROWS_PER_BATCH``; their number and entries into the partition's statistics."""
    row_len = np.diff(b.indptr)
    lens = row_len[row_len > 0]
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    ukey = string_keys(names.to_pylist()).view(np.int64)
    items, counts = b.items.astype("<i4"), b.counts.astype("<i4")  # rows of empty users hold no entries
    part.stats["users"], part.stats["nnz"] = int(lens.shape[0]), int(items.shape[0])
    for a in range(0, lens.shape[0], _ROWS_PER_BATCH):
        z = min(a + _ROWS_PER_BATCH, lens.shape[0])
        lo, hi = offsets[a], offsets[z]
        yield _built_batch(
            z - a,
            USER,
            part.key,
            ukey=pa.array(ukey[a:z], pa.int64()),
            ufirst=pa.array(ufirst[a:z], pa.int64()),
            n=pa.array(lens[a:z].astype(np.int32)),
            items=_blob(offsets[a : z + 1] - lo, items[lo:hi]),
            counts=_blob(offsets[a : z + 1] - lo, counts[lo:hi]),
        )


def _blob(offsets: np.ndarray | None = None, values: np.ndarray | None = None) -> pa.Array:
    """Rows of int32 values as one binary value per row (``offsets`` in values; None: one empty row)."""
    if offsets is None or values is None:
        return pa.array([b""], pa.binary())
    byte_offsets = pa.py_buffer((np.asarray(offsets, dtype=np.int64) * 4).astype(np.int32).tobytes())
    data = pa.py_buffer(np.ascontiguousarray(values, dtype="<i4").tobytes())
    return pa.Array.from_buffers(pa.binary(), len(offsets) - 1, [None, byte_offsets, data])


def unblob(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(indptr int64, values int32) of a binary column written by ``_blob``."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1].astype(np.int64)
    start, end = int(off[0]) if off.size else 0, int(off[-1]) if off.size else 0
    data = bufs[2]
    values = np.frombuffer(data, dtype="<i4", count=(end - start) // 4, offset=start) if end > start else None
    return (off - start) // 4, values if values is not None else np.zeros(0, dtype=np.int32)
