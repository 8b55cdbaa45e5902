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

The modules, one a job: ``spark_inputs`` (the input settled before Spark starts), ``spark_read`` (step 1's
read), ``spark_build`` (the executors' Python in steps 1 and 3: users derived, partitions built), ``spark_ids``
(step 4's numbering), ``spark_load`` (the driver of steps 1 to 4: ``load_spark_corpus``), ``spark_corpus`` (the
``SparkCorpus`` and its histogram on the executors) and ``spark_release`` (``spark_release``: where a mechanism
runs). This module gathers the engine's entry points.

The session (``spark_session``) makes the workers run the driver's dpsu and turns Spark's failures into one
line (``engines.spark_session``). pyspark is imported only inside functions: ``import dpsu_core`` never
imports it.
"""

from __future__ import annotations

from .spark_corpus import SparkCorpus
from .spark_load import load_spark_corpus
from .spark_release import SparkRows, is_parallel, spark_release
from .spark_session import spark_session

__all__ = ["SparkCorpus", "SparkRows", "is_parallel", "load_spark_corpus", "spark_release", "spark_session"]
