"""Child process of the cluster tests (one SparkContext per process): load a CSV with trigrams on ``master``
and release it with every parallel mechanism at a fixed seed; write each release's items and H as JSON.

    python -m tests.spark.cluster_run MASTER CSV MAX_ITEMS OUT.json
"""

from __future__ import annotations

import json
import sys


def main(master: str, csv_path: str, max_items: int, out: str) -> None:
    from dpsu_core.engines.spark import load_spark_corpus, spark_release, spark_session
    from tests.spark.conftest import PARALLEL, parallel_mechanism

    spark = spark_session(master, shuffle_partitions=2)
    try:
        sc = load_spark_corpus(csv_path, spark=spark, max_n=3)
        res = {"master": spark.sparkContext.master, "n_users": sc.n_users, "n_items": sc.n_items}
        for name in PARALLEL:
            rel = spark_release(parallel_mechanism(name, max_items), sc, seed=11)
            res[name] = {"items": rel.items.tolist(), "h": rel.diagnostics.weights.tolist()}
    finally:
        spark.stop()
    with open(out, "w", encoding="utf-8") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
