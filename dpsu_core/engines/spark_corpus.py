"""The corpus on Spark: ``SparkCorpus``, whose per-user rows stay cached on the executors, and its two ways to
read them: ``to_corpus`` collects them into a core ``Corpus`` on the driver (the sequential mechanisms), and
``histogram`` builds a parallel mechanism's histogram H on the executors (``histogram_batches``: each user's row
filtered, sampled by a keyed hash and weighted by the core's update rule per partition), summed by item on the
driver.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa

from ..corpus.model import Corpus, SourceInfo
from ..mechanisms.dpsu_step import sum_units, units_to_weights
from .keyed import sample_rows
from .spark_build import unblob
from .spark_ids import IdMaps
from .spark_session import spark_errors

__all__ = ["SparkCorpus", "histogram_batches"]

_HIST_SCHEMA = "id int, h long"  # h: the item's total in grid units (``dpsu_step.GRID_BITS``)


@dataclass(eq=False)
class SparkCorpus:
    """A corpus whose per-user rows live on the executors (not a ``Corpus``: it has no rows on the driver).

    ``rows``: DataFrame(part long, ukey long, ufirst long, n int, items binary, counts binary): one row per
    user, its n item ids in its partition's numbering (``part``: the partition's key; ``id_maps`` maps them to
    the vocabulary's) and counts as int32 bytes (``unblob``); ``ukey`` the 64-bit BLAKE2b digest of the user
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
        ptr, local = unblob(tab.column("items"))
        items = self.id_maps.to_global(tab.column("part").to_numpy(), ptr, local)
        counts = unblob(tab.column("counts"))[1]
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
            return histogram_batches(batches, n_items, max_items, power, salt, keys, bits, maps)

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


def histogram_batches(batches, n_items, max_items, power, salt, keys, bits, maps: IdMaps):
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
        indptr, local = unblob(rb.column("items"))
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
