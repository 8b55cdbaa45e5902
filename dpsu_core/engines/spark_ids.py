"""The Spark engine's item ids, on the driver (step 4 of ``engines.spark``'s data path): the partitions'
distinct items merged and numbered in the local engine's order (unigrams by first appearance, k-grams by
(prefix id, last token id)), and each partition's map from its own ids to the vocabulary's (``IdMaps``): the
rows are never renumbered on the executors; whoever reads them maps them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["IdMaps", "Vocabulary", "merge_items"]


@dataclass(frozen=True)
class Vocabulary:
    strings: pa.Array  # string, by id
    ngram_len: np.ndarray  # int8
    gram_tokens: np.ndarray  # (n_items, max_n) int32, -1 padded
    rows: np.ndarray  # int64, by id: the row of ``_number_items``' table that holds the item


def _number_items(tab: pa.Table, max_n: int) -> Vocabulary:
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
    return Vocabulary(pa.array(strings, pa.string()), ngram_len, gram_tokens, rows)


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


def merge_items(tab: pa.Table, max_n: int) -> tuple[Vocabulary, IdMaps]:
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
