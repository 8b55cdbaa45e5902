"""Releasing on the Spark engine: ``spark_release`` runs the core mechanism's own ``release`` where its pass
over the users belongs.

Parallel mechanisms (count, weighted, DP-SIPS, DPNE's levels; ``is_parallel``) see the corpus through
``SparkRows``: their histogram H is built on the executors (``SparkCorpus.histogram``: each user's row filtered,
sampled to Delta0 items by a keyed hash with a secret salt per release and round, ``engines.keyed``), and the
driver does everything private with the core's code: calibration, noise (numpy Generator seeded by the OS) and
thresholds, DPNE's domains and spurious draws. Sequential mechanisms (policy, GW, GW-KT, PCR, ...) get the
per-user id arrays collected into a core ``Corpus`` on the driver, in the local engine's user order, when they
fit in its memory (``check_driver_memory``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..mechanisms.seam import RowsElsewhere
from .keyed import SaltSource
from .spark_session import spark_errors

if TYPE_CHECKING:  # pragma: no cover
    from ..mechanisms.base import Mechanism, Release
    from .spark_corpus import SparkCorpus

__all__ = [
    "PARALLEL_NOTE", "SEQUENTIAL_NOTE", "SparkRows", "check_driver_memory", "driver_limit", "driver_rows_bytes",
    "is_parallel", "spark_release",
]  # fmt: skip

#: Where a mechanism ran on the Spark engine (shown by the CLI and written in the report).
PARALLEL_NOTE = (
    "spark: {name} sampled each user's items and built its histogram on the Spark executors; noise and "
    "thresholds were drawn on the driver from OS randomness"
)
SEQUENTIAL_NOTE = (
    "spark: {name} is sequential (each user's update depends on the users before it), so it ran on the driver, "
    "on the per-user id arrays collected from Spark; Spark did the reading, tokenizing and encoding"
)


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
