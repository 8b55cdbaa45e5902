"""PipelineDP and dpsu side by side at 10M users on the same Spark cluster, in one run:

    python -m benchmarks.run spark_pdp_10m   # opt-in: Java 17, pyspark, pipeline-dp; about 30 min on 2 cores

``spark_side``'s 10M part gives PipelineDP a 6-minute budget and so stops at 1M users; this section runs it
at 10M with no budget short of a 60-minute bound. On the standalone cluster of ``spark_side`` (two workers with
1 core each on 127.0.0.1, the 2.3 GB synthetic file of ``bench_scale_10m``): dpsu's Spark engine from the CLI
(weighted-gaussian at epsilon 3, delta 1e-8, Delta0 100), then PipelineDP's Spark RDD backend (``select_partitions``
with Gaussian thresholding at the same epsilon, delta and Delta0) in its own session on the same cluster, then
dpsu again (the machine is shared: the two dpsu runs bracket PipelineDP's). The ratio is PipelineDP's wall time
over the mean of dpsu's two.
"""

from __future__ import annotations

import os
import sys

from benchmarks.bench_spark_side import (
    DELTA_10M,
    EXECUTOR_MEMORY,
    WORKER_MEMORY,
    _cli,
    _pipeline_dp,
    _within,
    cluster_header,
    cluster_work,
)

PDP_BOUND_SECONDS = 60 * 60


def run() -> dict:
    import shutil

    from benchmarks.bench_scale import corpus_file
    from dpsu_core.engines.spark import spark_session
    from tests.spark.cluster import standalone_cluster

    path = corpus_file(10_000_000)
    res = cluster_header(path)
    work, env = cluster_work("dpsu-bench-pdp10m-")
    try:
        with standalone_cluster(work / "cluster", workers=2, memory=WORKER_MEMORY) as master:
            spark_args = ("--engine", "spark", "--spark-master", master)
            dpsu_runs = [_cli(path, *spark_args, timings=False, delta=DELTA_10M, env=env, timeout=1800)]
            os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors run this Python (it has pipeline_dp)
            spark = spark_session(master, conf={"spark.executor.memory": EXECUTOR_MEMORY})
            ok, value = _within(
                lambda: _pipeline_dp(spark, path, DELTA_10M), PDP_BOUND_SECONDS, spark.sparkContext.cancelAllJobs
            )
            spark.stop()
            res["pipeline_dp"] = value if ok else {"did_not_finish": value or f"cancelled after {PDP_BOUND_SECONDS} s"}
            res["load_average_after_pipeline_dp"] = os.getloadavg()
            dpsu_runs.append(_cli(path, *spark_args, timings=False, delta=DELTA_10M, env=env, timeout=1800))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["dpsu_spark_cli"] = dpsu_runs
    mean = sum(r["wall_seconds"] for r in dpsu_runs) / len(dpsu_runs)
    if ok:
        res["pipeline_dp_over_dpsu"] = round(value["wall_seconds"] / mean, 2)
        res["items_released_dpsu_over_pipeline_dp"] = round(
            sum(r["items_released"] for r in dpsu_runs) / len(dpsu_runs) / value["items_released"], 2
        )
    res["load_average_after"] = os.getloadavg()
    return res
