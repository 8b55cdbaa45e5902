"""The Spark engine's cold CLI on synthetic-200k, alone: ``spark_side``'s paired cold runs (local engine, then
Spark ``local[2]``, three pairs, then one ``--timings`` run of each for the phases) and the floor of a cold
Spark run beside the local CLI (``bench_spark_side.floor_pairs``), without the section's 10M cluster part.

    python -m benchmarks.run spark_cold    # opt-in: Java 17 and pyspark (pip install '.[spark]')
"""

from __future__ import annotations

from benchmarks.bench_spark_side import cold


def run() -> dict:
    return cold()
