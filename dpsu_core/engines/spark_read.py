"""The Spark engine's reading (step 1 of ``engines.spark``'s data path): the input into a DataFrame of posts.

CSV/TSV/Parquet/JSONL from any path Spark reads, or a table; the delimiter and header detected by the local
reader's own rules (``readers.delimited_head`` on the input's first bytes), columns chosen by ``choose_columns``
(never silently: a guess is a note); each row keeps its read position. pyspark is imported only inside
functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..corpus.limits import HEAD_BYTES
from ..errors import InputError, first_line
from ..wording import opt

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

    from ..corpus.load import LoadOptions
    from .spark_inputs import SparkInput

__all__ = ["Posts", "read_posts"]


@dataclass(frozen=True)
class Posts:
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


def read_posts(spark: SparkSession, inp: SparkInput, opts: LoadOptions) -> Posts:
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
        raise InputError(f"Spark cannot read {what} ({first_line(e)}); check the name and {opt('format')}") from None
    columns = names if header else [str(i) for i in range(len(names))]
    choice = choose_columns(
        columns, opts.user_col, opts.text_col, header, row_is_user=opts.row_is_user, first_row=first_row
    )
    df = _select_posts(df, refs, choice.user, choice.text, bad)
    user_column = None if choice.user is None else columns[choice.user]
    return Posts(df, fmt, user_column, columns[choice.text], choice.guessed, header_reason, tuple(notes) + choice.notes)


def _select_posts(df: Any, refs: list[Any], user: int | None, text: int, bad: Any) -> Any:
    """The (user, text, pos, bad) rows of ``df``'s chosen columns (``refs[user]``, ``refs[text]``), ``pos`` in
    Spark's read order; without a user column (``user`` None) each row its own user: ``row <pos>``."""
    from pyspark.sql import functions as F

    text_col = refs[text].cast("string").alias("text")
    pos = F.monotonically_increasing_id()
    if user is None:
        df = df.select(text_col, bad.alias("bad")).withColumn("pos", pos)
        row_user = F.concat(F.lit("row "), F.col("pos").cast("string")).alias("user")
        return df.select(row_user, "text", "pos", "bad")
    df = df.select(refs[user].cast("string").alias("user"), text_col, bad.alias("bad"))
    return df.withColumn("pos", pos).select("user", "text", "pos", "bad")
