"""The ledger's hash chain: each corpus's entries (spends, its registration and cap changes) in one chain.

An entry's hash is SHA-256 over the previous entry's hash and the entry's canonical JSON (``canonical``: every
column but its sequence number and the hashes, keys sorted, floats as Python writes them: exact round trips). The
corpus row keeps the chain's head and length, so a deleted last entry shows too. ``check`` walks one corpus's chain
in sequence order and names the first bad row: edited (its hash does not match its contents), reordered (it points
at a row that comes after it), or preceded by a deleted row (it points at no row of the chain).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

GENESIS = "0" * 64  # the previous hash of a chain's first entry

#: the entries table's columns in the canonical JSON, in the order the store selects them
ENTRY_COLUMNS = (
    "corpus_id",
    "kind",
    "charge_id",
    "time_utc",
    "actor",
    "tool",
    "source",
    "mechanism",
    "label",
    "epsilon",
    "delta",
    "noise",
    "releases",
    "zcdp",
    "laplace",
    "teaching",
    "job",
    "request_key",
)


def canonical(row: dict[str, Any]) -> str:
    """The entry's canonical JSON (the hashed text)."""
    return json.dumps({k: row[k] for k in ENTRY_COLUMNS}, sort_keys=True, separators=(",", ":"), allow_nan=False)


def link(prev_hash: str, row: dict[str, Any]) -> str:
    return hashlib.sha256((prev_hash + "\n" + canonical(row)).encode("utf-8")).hexdigest()


def check(
    name: str, rows: Sequence[tuple[int, dict[str, Any], str, str]], head: str, length: int
) -> tuple[int | None, str] | None:
    """The first problem of one corpus's chain, as (the bad row's sequence number or None, one line), or None.
    ``rows``: (seq, the row's columns, prev_hash, hash) in sequence order; ``head``, ``length``: what the corpus row
    says the chain ends with and how long it is."""
    position = {h: i for i, (_, _, _, h) in enumerate(rows)}
    expected = GENESIS
    for i, (seq, row, prev_hash, stored) in enumerate(rows):
        if link(prev_hash, row) != stored:
            return seq, f"entry {seq} of corpus {name!r} was edited: its hash does not match its contents"
        if prev_hash != expected:
            if position.get(prev_hash, -1) > i:
                return seq, f"entry {seq} of corpus {name!r} was moved: it follows an entry recorded after it"
            return seq, f"the entry before entry {seq} of corpus {name!r} was deleted (or the entries were reordered)"
        expected = stored
    if len(rows) > length:
        seq = rows[length][0]
        return seq, f"entry {seq} of corpus {name!r} was added outside dpsu (the corpus records {length} entries)"
    if len(rows) < length:
        gone = length - len(rows)
        return None, f"corpus {name!r}: its last {gone} entr{'y was' if gone == 1 else 'ies were'} deleted"
    if expected != head:
        return None, f"corpus {name!r}: its chain head does not match its last entry (the corpus row was edited)"
    return None
