"""The Spark engine: the same corpus and the parallel mechanisms, for corpora past one machine.

Data path (every step on the executors unless it says driver):

1. read CSV/TSV/Parquet/JSONL from any path Spark reads; columns chosen by the reader's own
   ``choose_columns`` (never silently: a guess is a note); each row keeps its read position;
2. one Arrow-batch function (``mapInArrow``) per batch of rows: the core's row filters
   (``blank_mask``, ``removed_mask``), the core tokenizer (``tokenize``) and the core n-gram builder
   (``build_corpus``), so tokens and n-grams are the local engine's, byte for byte; it emits each
   batch-user's distinct items with counts;
3. per-user distinct items (group by user and item) and dictionary encoding in the local engine's
   order: users and unigrams by first appearance, k-grams by (prefix id, last token id);
4. compact per-user rows ``(uid, items[], counts[])`` (sorted ids), kept on the executors.

Parallel mechanisms (count, weighted, DP-SIPS, DPNE's levels) build their histogram H on the executors:
each user's row is filtered (DPNE's valid k-grams, DP-SIPS's not-yet-released items: a bitmask over
item ids, broadcast), sampled to Delta0 items by keyed hashing (``engines.keyed``; salt from
``secrets`` per release and round), and the core update rule (``count_update`` / ``weighted_update``)
runs per batch; partial histograms are summed by item. The driver then holds H (one float per item)
and does everything private with the core's code: calibration, noise (numpy Generator seeded by the
OS) and thresholds, DPNE's domains and spurious draws. Sequential mechanisms (policy, GW, GW-KT, PCR,
...) collect the per-user id arrays into a core ``Corpus`` on the driver and run the core mechanism.

pyspark is imported only inside functions: ``import dpsu_core`` never imports it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..corpus.load import LoadOptions
from ..corpus.model import Corpus, SourceInfo
from ..corpus.segment import tokenization_text
from ..corpus.tokenize import check_tokenizer
from ..errors import EmptyCorpusError, InputError, ParameterError
from .keyed import SaltSource, sample_rows

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from ..mechanisms.base import Mechanism, Release

#: Formats the Spark engine reads (a directory of part files needs --format).
SPARK_FORMATS = ("auto", "csv", "tsv", "parquet", "jsonl")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}

#: Where a mechanism ran on the Spark engine (shown by the CLI and written in the report).
PARALLEL_NOTE = (
    "spark: {name} sampled each user's items and built its histogram on the Spark executors; noise and "
    "thresholds were drawn on the driver from OS randomness"
)
SEQUENTIAL_NOTE = (
    "spark: {name} is sequential (each user's update depends on the users before it), so it ran on the driver, "
    "on the per-user id arrays collected from Spark; Spark did the reading, tokenizing and encoding"
)

_RAW_SCHEMA = (
    "user string, ufirst long, item string, n int, cnt long, first_row long, first_tok long"  # see _ingest_batches
)
_HIST_SCHEMA = "id int, h double"


# --------------------------------------------------------------------------- session
def spark_session(
    master: str | None = None, *, shuffle_partitions: int | None = None, conf: dict[str, str] | None = None
) -> SparkSession:
    """The active SparkSession, or a new one on ``master`` (default ``local[2]``) without the web UI;
    ``conf``: more Spark settings (e.g. spark.driver.memory)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - depends on the installation
        raise InputError(
            "--engine spark needs pyspark and Java 17: pip install 'dpsu[spark]' and install a Java 17 runtime "
            "(e.g. apt-get install openjdk-17-jre-headless)"
        ) from None
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = (
        SparkSession.builder.appName("dpsu")
        .master(master or "local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions or 4))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "20000")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class _Posts:
    df: Any  # DataFrame(user string, text string, pos long)
    format: str
    user_column: str | None
    text_column: str
    columns_guessed: bool
    notes: tuple[str, ...]


def _detect_format(path: str, format: str) -> str:
    if format not in SPARK_FORMATS:
        raise InputError(f"the Spark engine reads {', '.join(SPARK_FORMATS[1:])}; got --format {format}")
    if format != "auto":
        return format
    fmt = _EXTENSIONS.get(PurePath(path.rstrip("/")).suffix.lower())
    if fmt is None:
        raise InputError(
            f"cannot tell the format of {path!r} from its name; give --format "
            f"({', '.join(SPARK_FORMATS[1:])}) with --engine spark"
        )
    return fmt


def read_posts(spark: SparkSession, path: str, opts: LoadOptions) -> _Posts:
    """(user, text, pos) rows of ``path`` with the reader's column rules; ``pos`` follows Spark's read order.
    Each row its own user (``row_is_user``): the user is the row's position."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    from ..corpus.columns import choose_columns

    fmt = _detect_format(path, opts.format)
    header = True if opts.has_header is None else bool(opts.has_header)
    notes = []
    try:
        if fmt in ("csv", "tsv"):
            df = spark.read.csv(
                path,
                sep="\t" if fmt == "tsv" else ",",
                header=header,
                multiLine=True,
                escape='"',
                inferSchema=False,
                encoding="UTF-8",
                mode="PERMISSIVE",
            )
            if opts.has_header is None:
                notes.append("first row taken as the header (the Spark engine does not detect it; --no-header if not)")
        elif fmt == "parquet":
            df = spark.read.parquet(path)
            header = True
        else:
            df = spark.read.json(path, mode="PERMISSIVE")
            header = True
        names = list(df.columns)
    except AnalysisException as e:
        raise InputError(f"Spark cannot read {path!r} as {fmt} ({_short(e)}); check the path and --format") from None
    columns = names if header else [str(i) for i in range(len(names))]
    choice = choose_columns(columns, opts.user_col, opts.text_col, header, row_is_user=opts.row_is_user)
    text = F.col(f"`{names[choice.text]}`").cast("string").alias("text")
    pos = F.monotonically_increasing_id()
    if choice.user is None:
        df = df.select(F.lit(None).cast("string").alias("user"), text).withColumn("pos", pos)
        df = df.withColumn("user", F.concat(F.lit("row "), F.col("pos").cast("string")))
        user_column = None
    else:
        df = df.select(F.col(f"`{names[choice.user]}`").cast("string").alias("user"), text).withColumn("pos", pos)
        user_column = columns[choice.user]
    return _Posts(df, fmt, user_column, columns[choice.text], choice.guessed, tuple(notes) + tuple(choice.notes))


def _short(e: Exception) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return msg[:200]


# --------------------------------------------------------------------------- executors: tokenize and build
_STATS = ("rows", "unmatched", "no_user", "no_text", "removed", "posts", "tokens")


def _ingest_batches(batches, *, opts: LoadOptions):
    """Arrow batches of (user, text, pos) -> each batch-user's distinct items with counts.

    Rows: (user, ufirst = the user's first kept row, item, n = its length, cnt = occurrences,
    first_row/first_tok = where a unigram first occurs). A kept user without tokens in the batch gets one
    row with item null (it still fixes the user's first position); one row per statistic per partition
    has user null, item = the statistic's name, cnt = its value.
    """
    from ..corpus.build import build_corpus
    from ..corpus.clean import drop_tokens, token_drop_mask
    from ..corpus.columns import apply_user_pattern
    from ..corpus.tokenize import blank_mask, removed_mask, tokenize

    prep, max_n = opts.preprocessing(), opts.max_n
    totals = dict.fromkeys(_STATS, 0)
    for rb in batches:
        users, texts = rb.column(0), rb.column(1)
        pos = rb.column(2).to_numpy(zero_copy_only=False).astype(np.int64)
        n_rows = rb.num_rows
        totals["rows"] += n_rows
        if opts.user_pattern:
            users, unmatched = apply_user_pattern(users, opts.user_pattern)
            totals["unmatched"] += unmatched
        no_user = blank_mask(users)
        no_text = blank_mask(texts) & ~no_user
        removed = removed_mask(texts) & ~no_user & ~no_text if prep.drop_removed else np.zeros(n_rows, bool)
        keep = ~(no_user | no_text | removed)
        totals["no_user"] += int(no_user.sum())
        totals["no_text"] += int(no_text.sum())
        totals["removed"] += int(removed.sum())
        if not keep.any():
            continue
        mask = pa.array(keep)
        users, texts, pos = users.filter(mask), texts.filter(mask), pos[keep]
        totals["posts"] += len(texts)
        enc = pc.utf8_trim_whitespace(users).dictionary_encode()
        post_user = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        names = enc.dictionary
        n_users = len(names)
        first_post = np.unique(post_user, return_index=True)[1]  # the batch's rows are in read order
        ufirst = pos[first_post]
        tok = tokenize(texts, tokenizer=opts.tokenizer, prep=prep, workers=1, char_ngrams=opts.char_ngrams)
        drop = token_drop_mask(tok.unigrams, drop_digits=prep.drop_digits, stop_language=prep.stop_words)
        if drop is not None and drop.any():
            codes, post_ptr = drop_tokens(tok.codes, tok.post_ptr, drop)
            tok = replace(tok, codes=codes, post_ptr=post_ptr)
        totals["tokens"] += tok.n_tokens
        if tok.n_tokens == 0:
            yield _raw_batch(names, ufirst, np.arange(n_users), None)
            continue
        bc = build_corpus(
            tok.codes, tok.post_ptr, post_user, tok.unigrams, max_n=max_n, n_users=n_users, drop_empty_users=False
        )
        # where each unigram first occurs: (read position of its post, token index in the post)
        n_uni = int(np.count_nonzero(bc.ngram_len == 1))
        first_tok_idx = np.full(n_uni, -1, dtype=np.int64)
        uniq, idx = np.unique(tok.codes, return_index=True)
        first_tok_idx[np.arange(uniq.shape[0])] = idx  # build_corpus numbers the used unigrams densely, in order
        post = np.searchsorted(tok.post_ptr, first_tok_idx, side="right") - 1
        first_row, first_tok = pos[post], first_tok_idx - tok.post_ptr[post]
        row_len = np.diff(bc.indptr)
        entry_user = np.repeat(np.arange(n_users), row_len)
        items = bc.items.astype(np.int64)
        is_uni = items < n_uni
        fr = np.where(is_uni, first_row[np.minimum(items, n_uni - 1)], -1)
        ft = np.where(is_uni, first_tok[np.minimum(items, n_uni - 1)], -1)
        yield _raw_batch(
            names,
            ufirst,
            entry_user,
            (pa.array(bc.vocab, type=pa.string()).take(pa.array(items)), bc.ngram_len[items], bc.counts, fr, ft),
        )
        empty = np.flatnonzero(row_len == 0)
        if empty.size:
            yield _raw_batch(names, ufirst, empty, None)
    yield pa.RecordBatch.from_pydict(
        {
            "user": pa.nulls(len(_STATS), pa.string()),
            "ufirst": pa.nulls(len(_STATS), pa.int64()),
            "item": pa.array(_STATS, pa.string()),
            "n": pa.nulls(len(_STATS), pa.int32()),
            "cnt": pa.array([totals[s] for s in _STATS], pa.int64()),
            "first_row": pa.nulls(len(_STATS), pa.int64()),
            "first_tok": pa.nulls(len(_STATS), pa.int64()),
        }
    )


def _raw_batch(names: pa.Array, ufirst: np.ndarray, entry_user: np.ndarray, entries) -> pa.RecordBatch:
    m = len(entry_user)
    take = pa.array(entry_user, pa.int64())
    if entries is None:
        item, n, cnt, fr, ft = pa.nulls(m, pa.string()), None, None, None, None
        n, cnt, fr, ft = (pa.nulls(m, t) for t in (pa.int32(), pa.int64(), pa.int64(), pa.int64()))
    else:
        item, n_, cnt_, fr_, ft_ = entries
        n, cnt = pa.array(n_.astype(np.int32)), pa.array(cnt_.astype(np.int64))
        fr, ft = pa.array(fr_.astype(np.int64)), pa.array(ft_.astype(np.int64))
    return pa.RecordBatch.from_arrays(
        [names.take(take).cast(pa.string()), pa.array(ufirst[entry_user], pa.int64()), item, n, cnt, fr, ft],
        names=["user", "ufirst", "item", "n", "cnt", "first_row", "first_tok"],
    )


class _Clock:
    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings, self.t = timings, time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings[stage] = round(now - self.t, 3)
        self.t = now


# --------------------------------------------------------------------------- dictionary encoding
def _dense_ids(df: DataFrame, order: list[str], name: str, cached: list) -> tuple[DataFrame, int]:
    """(``df`` with a dense 0-based ``name`` column in ``order``, its row count): a distributed sort and one
    small job for the partitions' sizes (no single-partition window)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    s = (
        df.orderBy(*order)
        .withColumn("_pid", F.spark_partition_id())
        .withColumn("_mid", F.monotonically_increasing_id())
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    cached.append(s)
    parts = s.groupBy("_pid").agg(F.min("_mid").alias("lo"), F.count("*").alias("c")).collect()
    parts.sort(key=lambda r: r["_pid"])
    offsets, start = {}, 0
    for r in parts:
        offsets[r["_pid"]] = (start, r["lo"])
        start += r["c"]
    spark = df.sparkSession
    off = spark.createDataFrame(
        [(int(p), int(a), int(lo)) for p, (a, lo) in offsets.items()], "_pid int, _start long, _lo long"
    )
    out = (
        s.join(F.broadcast(off), "_pid")
        .withColumn(name, (F.col("_mid") - F.col("_lo") + F.col("_start")).cast("int"))
        .drop("_pid", "_mid", "_start", "_lo")
    )
    return out, start


def _vocabulary(items: DataFrame, max_n: int, cached: list) -> DataFrame:
    """(item, n, first) -> (id, item, n, tokens): unigrams by first appearance, then each level k by
    (id of its (k-1)-prefix, id of its last token), ids continuing from the level below (the local order)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    uni, offset = _dense_ids(items.filter(F.col("n") == 1), ["first_row", "first_tok"], "id", cached)
    uni = uni.select("id", "item", "n", F.array(F.col("id")).alias("tokens")).persist(StorageLevel.MEMORY_AND_DISK)
    cached.append(uni)
    levels = [uni]
    prev = uni
    for k in range(2, max_n + 1):
        kg = items.filter(F.col("n") == k).select(
            "item",
            "n",
            F.regexp_extract("item", r"^(.*) [^ ]*$", 1).alias("prefix"),
            F.substring_index("item", " ", -1).alias("last"),
        )
        kg = kg.join(
            prev.select(F.col("item").alias("prefix"), F.col("id").alias("pid"), F.col("tokens").alias("ptok")),
            "prefix",
        ).join(uni.select(F.col("item").alias("last"), F.col("id").alias("lid")), "last")
        kg, c = _dense_ids(kg, ["pid", "lid"], "lid_rank", cached)
        if c == 0:
            break
        lvl = kg.select(
            (F.col("lid_rank") + F.lit(offset)).cast("int").alias("id"),
            "item",
            "n",
            F.concat("ptok", F.array("lid")).alias("tokens"),
        ).persist(StorageLevel.MEMORY_AND_DISK)
        cached.append(lvl)
        levels.append(lvl)
        offset += c
        prev = lvl
    out = levels[0]
    for lvl in levels[1:]:
        out = out.unionByName(lvl)
    return out


# --------------------------------------------------------------------------- the corpus on Spark
@dataclass(eq=False)
class SparkCorpus:
    """A corpus whose per-user rows live on the executors.

    ``rows``: DataFrame(uid int, items array<int>, counts array<int>), ids sorted within a row, uids dense in the
    local engine's user order. ``vocabulary``: a core ``Corpus`` on the driver holding the vocabulary only
    (strings, n-gram lengths, token ids; no rows): what the driver needs for thresholds, DPNE's domains
    and the released strings.
    """

    spark: Any
    rows: Any
    vocabulary: Corpus
    n_users: int
    nnz: int
    source: SourceInfo = field(default_factory=SourceInfo)

    @property
    def n_items(self) -> int:
        return self.vocabulary.n_items

    def to_corpus(self) -> Corpus:
        """Collect the per-user id arrays into a core Corpus on the driver (for the sequential mechanisms)."""
        tab = self.rows.orderBy("uid").toArrow()
        items_col = tab.column("items").combine_chunks()
        counts_col = tab.column("counts").combine_chunks()
        indptr = items_col.offsets.to_numpy().astype(np.int64)
        indptr = indptr - indptr[0]
        items = items_col.flatten().to_numpy(zero_copy_only=False).astype(np.int32)
        counts = counts_col.flatten().to_numpy(zero_copy_only=False).astype(np.int32)
        return replace(self.vocabulary, indptr=indptr, items=items, counts=counts, source=self.source)

    def histogram(
        self, *, max_items: int, power: float, salt: tuple[int, int], eligible: np.ndarray | None = None
    ) -> np.ndarray:
        """H over the vocabulary (float64): each user's row restricted to ``eligible`` items, sampled to
        ``max_items`` by keyed hashing with ``salt``, then the core's update 1/|W|^power per kept item
        (``dpsu_step.weighted_update``: power 0 Count, 1 Weighted Laplace, 1/2 Weighted Gaussian).
        Computed on the executors, summed by item; NOT private (diagnostics and thresholding only)."""
        from pyspark.sql import functions as F

        n_items = self.n_items
        bits = None
        if eligible is not None:
            bits = self.spark.sparkContext.broadcast(np.packbits(np.asarray(eligible, dtype=bool)))

        def fn(batches):
            return _histogram_batches(batches, n_items, max_items, power, salt, bits)

        parts = self.rows.mapInArrow(fn, _HIST_SCHEMA).groupBy("id").agg(F.sum("h").alias("h")).toArrow()
        if bits is not None:
            bits.unpersist()
        h = np.zeros(n_items, dtype=np.float64)
        h[parts.column("id").to_numpy(zero_copy_only=False)] = parts.column("h").to_numpy(zero_copy_only=False)
        return h

    def __repr__(self) -> str:  # never print data
        return f"SparkCorpus(users={self.n_users}, items={self.n_items}, nnz={self.nnz}, max_n={self.vocabulary.max_n})"


def _histogram_batches(batches, n_items, max_items, power, salt, bits):
    from ..mechanisms.dpsu_step import weighted_update
    from ..mechanisms.sampling import OrderedRows

    eligible = None if bits is None else np.unpackbits(bits.value, count=n_items).astype(bool)
    for rb in batches:
        uid = rb.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
        lists = rb.column(1)
        indptr = lists.offsets.to_numpy().astype(np.int64)
        indptr -= indptr[0]
        items = lists.flatten().to_numpy(zero_copy_only=False).astype(np.int64)
        if eligible is not None:
            ok = eligible[items]
            indptr = np.concatenate([[0], np.cumsum(ok, dtype=np.int64)])[indptr]
            items = items[ok]
        indptr, kept = sample_rows(indptr, items, uid, salt, max_items)
        if kept.size == 0:
            continue
        ids, local = np.unique(kept, return_inverse=True)
        rows = OrderedRows(indptr, local.astype(np.int32), np.ones(local.shape[0], dtype=np.int32))
        h = weighted_update(rows, ids.shape[0], power)
        yield pa.RecordBatch.from_arrays([pa.array(ids.astype(np.int32)), pa.array(h)], names=["id", "h"])


def load_spark_corpus(
    path: str,
    options: LoadOptions | None = None,
    *,
    spark: SparkSession | None = None,
    name: str | None = None,
    timings: dict[str, float] | None = None,
    **overrides: Any,
) -> SparkCorpus:
    """``load_corpus`` on Spark: the same options, the same vocabulary, users and per-user items.

    Not computed here (they need whole columns on one machine): the chosen columns' facts and the sanity
    warnings; a note says so. ``timings``, if given, receives the wall seconds of each stage (benchmarks)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from ..corpus.columns import check_user_pattern
    from ..params import PARAMS

    opts = replace(options if options is not None else LoadOptions(), **overrides)
    check_tokenizer(opts.tokenizer)
    opts = replace(opts, max_n=int(PARAMS["max_n"].check(opts.max_n)))
    prep, tokenizer, max_n = opts.preprocessing(), opts.tokenizer, opts.max_n
    if prep.stop_words:
        from ..corpus.clean import stop_words

        stop_words(prep.stop_words)  # an unknown language fails before reading the file
    if opts.user_pattern:
        check_user_pattern(opts.user_pattern)
    spark = spark or spark_session()
    posts = read_posts(spark, path, opts)
    if opts.user_pattern and posts.user_column is None:
        raise ParameterError("--user-pattern needs a user column; drop --row-is-user to use a pattern")

    def ingest(batches):
        return _ingest_batches(batches, opts=opts)

    clock = _Clock(timings)
    raw = posts.df.mapInArrow(ingest, _RAW_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    cached: list = [raw]
    stats = {
        r["item"]: int(r["c"])
        for r in raw.filter(F.col("user").isNull()).groupBy("item").agg(F.sum("cnt").alias("c")).collect()
    }
    stats = {s: stats.get(s, 0) for s in _STATS}
    clock.lap("read_tokenize_ngrams")
    if stats["posts"] == 0:
        raw.unpersist()
        raise EmptyCorpusError(
            f"no usable rows: {stats['rows']} rows read, {stats['no_user']} without a user id, "
            f"{stats['no_text']} without text, {stats['removed']} '[removed]'/'[deleted]'; "
            "check the user and text columns"
        )
    if stats["tokens"] == 0:
        raw.unpersist()
        raise EmptyCorpusError(
            f"the corpus has no tokens after preprocessing ({stats['posts']} posts read); check that the text "
            f"column ({posts.text_column}) holds the posts, or switch off 'strip symbols'"
        )
    entries = raw.filter(F.col("user").isNotNull())
    users_all = entries.groupBy("user").agg(
        F.min("ufirst").alias("ufirst"), F.max(F.col("item").isNotNull().cast("int")).alias("has")
    )
    users, n_users = _dense_ids(users_all.filter(F.col("has") == 1).select("user", "ufirst"), ["ufirst"], "uid", cached)
    clock.lap("user_ids")
    pairs = entries.filter(F.col("item").isNotNull())
    items = (
        pairs.groupBy("item")
        .agg(F.first("n").alias("n"), F.min(F.struct("first_row", "first_tok")).alias("f"))
        .select("item", "n", "f.first_row", "f.first_tok")
    )
    vocab = _vocabulary(items, max_n, cached)
    clock.lap("item_ids")
    enc = (
        pairs.groupBy("user", "item")
        .agg(F.sum("cnt").cast("int").alias("cnt"))
        .join(users.select("user", "uid"), "user")
        .join(vocab.select("item", "id"), "item")
    )
    rows = (
        enc.groupBy("uid")
        .agg(F.array_sort(F.collect_list(F.struct("id", "cnt"))).alias("e"))
        .select("uid", F.col("e.id").alias("items"), F.col("e.cnt").alias("counts"))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    nnz = int(rows.select(F.sum(F.size("items"))).first()[0] or 0)
    clock.lap("per_user_rows")
    vocabulary = _collect_vocabulary(vocab, max_n, n_users)
    n_empty = users_all.filter(F.col("has") == 0).count()
    for df in cached:
        df.unpersist()
    clock.lap("vocabulary_to_driver")

    notes = list(posts.notes)
    if opts.user_pattern:
        notes.append(
            f"user = first group of {opts.user_pattern!r} in column {posts.user_column!r}"
            + (f"; {stats['unmatched']:,} rows where it does not match have no user" if stats["unmatched"] else "")
        )
    dropped = [("no_user", "rows without a user id were dropped"), ("no_text", "rows without text were dropped")]
    for key, text in dropped:
        if stats[key]:
            notes.append(f"{stats[key]} {text}")
    if stats["removed"]:
        notes.append(f"{stats['removed']} posts that were exactly '[removed]' or '[deleted]' were dropped")
    notes.append(f"preprocessing: {prep.describe()}; tokenizer: {tokenizer}")
    if n_empty:
        notes.append(f"{n_empty} users had no tokens after preprocessing and are not in the corpus")
    notes.append(
        f"read and tokenized with Spark ({spark.sparkContext.master}); the columns' facts and the sanity "
        "warnings are not computed by the Spark engine (run the local engine on a sample to see them)"
    )
    info = SourceInfo(
        name=name if name is not None else PurePath(path.rstrip("/")).name,
        format=posts.format,
        user_column=posts.user_column,
        text_column=posts.text_column,
        columns_guessed=posts.columns_guessed,
        rows_read=stats["rows"],
        rows_dropped_no_user=stats["no_user"],
        rows_dropped_no_text=stats["no_text"],
        rows_dropped_removed=stats["removed"],
        tokenizer=tokenizer,
        char_ngrams=opts.char_ngrams,
        tokenization=tokenization_text(tokenizer, opts.char_ngrams),
        notes=tuple(notes),
        row_is_user=opts.row_is_user,
        user_pattern=opts.user_pattern or None,
    )
    vocabulary = replace(vocabulary, n_posts=stats["posts"], n_tokens=stats["tokens"], source=info)
    if n_users < 2:
        rows.unpersist()
        raise EmptyCorpusError(
            f"the corpus has {n_users} user with tokens; user-level differential privacy hides each user, so "
            "with a single user nothing can be released. Check the user column (does every row have the same "
            "user id?) or add more users"
        )
    return SparkCorpus(spark=spark, rows=rows, vocabulary=vocabulary, n_users=n_users, nnz=nnz, source=info)


def _collect_vocabulary(vocab: DataFrame, max_n: int, n_users: int) -> Corpus:
    tab = vocab.orderBy("id").toArrow()
    n_items = tab.num_rows
    strings = np.asarray(tab.column("item").to_pylist(), dtype=object)
    ngram_len = tab.column("n").to_numpy().astype(np.int8)
    toks = tab.column("tokens").combine_chunks()
    flat = toks.flatten().to_numpy(zero_copy_only=False).astype(np.int32)
    gram_tokens = np.full((n_items, max_n), -1, dtype=np.int32)
    row = np.repeat(np.arange(n_items), ngram_len.astype(np.int64))
    offsets = toks.offsets.to_numpy().astype(np.int64)
    col = np.arange(flat.shape[0]) - np.repeat(offsets[:-1] - offsets[0], ngram_len.astype(np.int64))
    gram_tokens[row, col] = flat
    return Corpus(
        indptr=np.zeros(n_users + 1, dtype=np.int64),
        items=np.zeros(0, dtype=np.int32),
        counts=np.zeros(0, dtype=np.int32),
        vocab=strings,
        ngram_len=ngram_len,
        gram_tokens=gram_tokens,
    )


# --------------------------------------------------------------------------- releases
#: Mechanisms whose only pass over the users is ``dpsu_step.weighted_histogram`` (order-free DPSU steps):
#: they run as the core runs them, with that pass on the executors. Every other mechanism is sequential
#: or needs the rows on the driver, and runs there on the collected corpus.
PARALLEL_MECHANISMS = (
    "count-laplace",
    "count-gaussian",
    "weighted-laplace",
    "weighted-gaussian",
    "dp-sips",
    "dpne",
    "dpsu-all",
    "dpsu-even",
    "dpsu-single",
)


@dataclass(frozen=True, eq=False)
class SparkRows(Corpus):
    """The vocabulary on the driver, the rows on the executors: a core ``Corpus`` for the parallel mechanisms,
    which call ``weighted_histogram`` (``dpsu_step.RowsElsewhere``) for their pass over the users. Each call
    samples with a fresh salt."""

    backend: Any = None  # the SparkCorpus
    salts: Any = None  # SaltSource

    def weighted_histogram(self, max_items: int, power: float, keep: np.ndarray | None) -> np.ndarray:
        return self.backend.histogram(max_items=max_items, power=power, salt=self.salts.next(), eligible=keep)


def is_parallel(mech: Mechanism) -> bool:
    """Whether ``mech`` builds its histogram on the executors (else it runs on the driver)."""
    return mech.name in PARALLEL_MECHANISMS


def spark_release(mech: Mechanism, sc: SparkCorpus, *, seed: int | None = None) -> Release:
    """Release with ``mech`` on a SparkCorpus: the core mechanism's own ``release``, its pass over the users on
    the executors (parallel mechanisms) or on the corpus collected to the driver (the others). Where it ran
    is recorded in the calibration's details (``engine``), so the CLI output and the report say it.

    Noise and thresholds: the core's, on the driver (numpy Generator seeded by the OS); sampling salts from
    ``secrets``. ``seed`` fixes both only for teaching and tests, and the release is flagged as such.
    """
    if is_parallel(mech):
        v = sc.vocabulary
        view = SparkRows(**{f: getattr(v, f) for f in _CORPUS_FIELDS}, backend=sc, salts=SaltSource(seed))
        rel = mech.release(view, seed=seed)
        note = PARALLEL_NOTE.format(name=mech.name)
    else:
        rel = mech.release(sc.to_corpus(), seed=seed)
        note = SEQUENTIAL_NOTE.format(name=mech.name)
    cal = replace(rel.calibration, details={**rel.calibration.details, "engine": note})
    return replace(rel, calibration=cal)


_CORPUS_FIELDS = ("indptr", "items", "counts", "vocab", "ngram_len", "gram_tokens", "n_posts", "n_tokens", "source")
