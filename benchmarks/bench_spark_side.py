"""Spark side by side, in one run on one machine: is the Spark engine worth running, and how does it compare
with PipelineDP's Spark backend?

    python -m benchmarks.run spark_side    # opt-in: Java 17, pyspark and pipeline-dp (pip install '.[spark,bench]')

synthetic-200k (``dpsu_core.synthetic.synthetic_200k``, one CSV row per user holding the user's words) with
Weighted Gaussian at epsilon 3, delta e^-10, Delta0 100, measured back to back:

* the local engine: ``dpsu release`` in a child process, three times (the median is the baseline, 1x);
* the Spark engine on ``local[2]`` from the CLI (``--engine spark``, a cold start: JVM, session, workers);
* the Spark engine in a warm session (``load_spark_corpus`` + ``spark_release``, twice after one warm-up run:
  the faster of the two);
* PipelineDP's Spark RDD backend (``pipeline_dp.SparkRDDBackend``, ``select_partitions`` with Gaussian
  thresholding at the same epsilon, delta and Delta0 = ``max_partitions_contributed``) in the same warm
  session, on the same file (each user's distinct words: the same tokens for this corpus's ``w<rank>`` words);

and, between the warm runs and PipelineDP, the Spark engine's load of the 1M-user file of the ``spark``
section (``bench_spark.corpus_csv``) in the same session, with its stages. Ratios are to the local engine's wall time in the same run; the load
average before and after says how busy the shared machine was.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_spark import CACHE, PeakSampler, corpus_csv

EPS, DELTA, DELTA0 = 3.0, math.exp(-10), 100
MECHANISM = "weighted-gaussian"
SPARK_CONF = {"spark.driver.memory": "4g"}


def csv_200k() -> Path:
    """synthetic-200k as CSV (user,text), written once into benchmarks/_cache/."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    from dpsu_core.synthetic import synthetic_200k

    path = CACHE / "spark_synthetic_200k.csv"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    c = synthetic_200k()
    words = pa.array(c.vocab.tolist(), pa.string()).take(pa.array(c.items))
    text = pc.binary_join(pa.ListArray.from_arrays(pa.array(c.indptr.astype(np.int32)), words), " ")
    tmp = path.with_suffix(".part")
    pacsv.write_csv(pa.table({"user": [f"u{i}" for i in range(c.n_users)], "text": text}), tmp)
    tmp.replace(path)
    return path


def _cli(path: Path, *extra: str) -> dict:
    """``dpsu release`` in a child process: wall seconds, items released, peak RSS of its process tree."""
    argv = [sys.executable, "-m", "dpsu_core.cli", "release", str(path), "-m", MECHANISM, "-e", str(EPS)]
    argv += ["-d", repr(DELTA), "--max-items", str(DELTA0), "--user-col", "user", "--text-col", "text"]
    argv += ["-o", str(CACHE / f"side_{'spark' if extra else 'local'}.csv"), "--timings", *extra]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PeakSampler(proc.pid) as peak:
        stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(stderr[-500:])
    return {
        "wall_seconds": round(time.perf_counter() - t0, 2),
        "items_released": int(stdout.split("released ", 1)[1].split()[0]),
        "peak_rss_mb_tree": round(peak.peak, 1),
        "phases_seconds": _phases(stderr),
    }


def _phases(stderr: str) -> dict[str, float]:
    """The ``--timings`` line as {phase: seconds} (the executors' phases are task seconds, summed)."""
    line = next((ln for ln in stderr.splitlines() if ln.startswith("timings (s): ")), "")
    body = line.removeprefix("timings (s): ").split("; total ")[0]
    out = {}
    for part in filter(None, body.split(", ")):
        name, _, value = part.rpartition(" ")
        out[name] = float(value)
    return out


def cold() -> dict:
    """The cold CLI alone, side by side: the local engine (median of three) and Spark local[2] (once), with
    the phases of each (``python -m benchmarks.bench_spark_side cold``)."""
    path = csv_200k()
    before = os.getloadavg()
    local = _median([_cli(path) for _ in range(3)])
    spark = _cli(path, "--engine", "spark", "--spark-master", "local[2]")
    return {
        "corpus": "synthetic-200k as CSV (one row per user)",
        "local_engine_cli": local,
        "spark_cold_cli": {**spark, "ratio": round(spark["wall_seconds"] / local["wall_seconds"], 1)},
        "load_average_before": before,
        "load_average_after": os.getloadavg(),
    }


def _median(runs: list[dict]) -> dict:
    """The run with the median wall time (the faster of two), with every run's wall time beside it."""
    ranked = sorted(runs, key=lambda r: r["wall_seconds"])
    return {**ranked[(len(ranked) - 1) // 2], "runs_seconds": [r["wall_seconds"] for r in runs]}


def _dpsu_warm(spark, path: Path) -> dict:
    from dpsu_core.engines.spark import load_spark_corpus, spark_release
    from dpsu_core.mechanisms.registry import get_mechanism

    mech = get_mechanism(MECHANISM, epsilon=EPS, delta=DELTA, max_items=DELTA0)
    out: dict = {}
    for run in ("warm_up", "measured", "measured_again"):
        stages: dict[str, float] = {}
        t0 = time.perf_counter()
        sc = load_spark_corpus(str(path), spark=spark, user_col="user", text_col="text", timings=stages)
        t1 = time.perf_counter()
        rel = spark_release(mech, sc)
        t2 = time.perf_counter()
        sc.rows.unpersist()
        out[run] = {
            "wall_seconds": round(t2 - t0, 2),
            "load_seconds": round(t1 - t0, 2),
            "release_seconds": round(t2 - t1, 2),
            "stages_seconds": stages,
            "items_released": rel.n_released,
            "users": sc.n_users,
            "vocabulary": sc.n_items,
        }
    return out


def _pipeline_dp(spark, path: Path) -> dict:
    """PipelineDP's private partition selection on Spark RDDs: each user's distinct words, Gaussian
    thresholding, at most Delta0 partitions per user, the same (epsilon, delta)."""
    import pipeline_dp

    t0 = time.perf_counter()
    rows = spark.read.csv(str(path), header=True).rdd
    pairs = rows.flatMap(lambda r: [(r[0], w) for w in set((r[1] or "").split())])
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPS, total_delta=DELTA)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.SparkRDDBackend(spark.sparkContext))
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=DELTA0,
        partition_selection_strategy=pipeline_dp.PartitionSelectionStrategy.GAUSSIAN_THRESHOLDING,
    )
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda p: p[0], partition_extractor=lambda p: p[1])
    selected = engine.select_partitions(pairs, params, extractors)
    accountant.compute_budgets()
    n = selected.count()
    return {"wall_seconds": round(time.perf_counter() - t0, 2), "items_released": int(n)}


def _load_1m(spark) -> dict:
    from dpsu_core.engines.spark import load_spark_corpus

    path = corpus_csv()
    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    sc = load_spark_corpus(str(path), spark=spark, user_col="user", text_col="text", timings=stages)
    out = {
        "csv_mb": round(path.stat().st_size / 1e6, 1),
        "load_seconds": round(time.perf_counter() - t0, 1),
        "stages_seconds": stages,
        "users": sc.n_users,
        "pairs": sc.nnz,
        "vocabulary": sc.n_items,
    }
    sc.rows.unpersist()
    return out


def run() -> dict:
    from dpsu_core.engines.spark import spark_session

    path = csv_200k()
    corpus_csv()  # the 1M file, generated before anything is timed
    res: dict = {
        "corpus": "synthetic-200k as CSV (one row per user)",
        "csv_mb": round(path.stat().st_size / 1e6, 1),
        "mechanism": MECHANISM,
        "epsilon": EPS,
        "delta": DELTA,
        "max_items": DELTA0,
        "spark_master": "local[2]",
        "cores": os.cpu_count(),
        "load_average_before": os.getloadavg(),
    }
    local = _median([_cli(path) for _ in range(3)])  # the baseline: the median of three runs
    cold = _cli(path, "--engine", "spark", "--spark-master", "local[2]")
    t0 = time.perf_counter()
    spark = spark_session("local[2]", conf=SPARK_CONF)
    session_start = round(time.perf_counter() - t0, 2)
    with PeakSampler(os.getpid()) as peak:
        warm = _dpsu_warm(spark, path)
        big = _load_1m(spark)  # before PipelineDP, whose RDDs would share the JVM's memory
        pdp = _pipeline_dp(spark, path)
    spark.stop()
    base = local["wall_seconds"]
    res["local_engine_cli"] = {**local, "ratio": 1.0}
    res["spark_cold_cli"] = {**cold, "ratio": round(cold["wall_seconds"] / base, 1)}
    measured = _median([warm["measured"], warm["measured_again"]])
    res["spark_warm_session"] = {
        **measured,
        "ratio": round(measured["wall_seconds"] / base, 1),
        "runs_seconds": [warm["measured"]["wall_seconds"], warm["measured_again"]["wall_seconds"]],
        "first_run_in_session_seconds": warm["warm_up"]["wall_seconds"],
        "session_start_seconds": session_start,
    }
    res["pipeline_dp_spark_rdd"] = {**pdp, "ratio": round(pdp["wall_seconds"] / base, 1)}
    res["spark_load_1m_users"] = big
    res["peak_rss_mb_tree_warm_session"] = round(peak.peak, 1)
    res["load_average_after"] = os.getloadavg()
    return res


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(cold() if sys.argv[1:] == ["cold"] else run(), indent=2))
