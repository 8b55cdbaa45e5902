"""Spark side by side, in one run on one machine: is the Spark engine worth running, and how does it compare
with PipelineDP's Spark backend?

    python -m benchmarks.run spark_side    # opt-in: Java 17, pyspark and pipeline-dp (pip install '.[spark,bench]')
    python -m benchmarks.run spark_cold    # the cold CLI pairs and the cold floor alone (no 10M part)

At 200k users: synthetic-200k (``dpsu_core.corpus.synthetic.synthetic_200k``, one CSV row per user holding the
user's words) with Weighted Gaussian at epsilon 3, delta e^-10, Delta0 100:

* the cold CLI, paired: the local engine's ``dpsu release`` and the Spark engine's (``--engine spark
  --spark-master local[2]``: JVM, session, workers) in turn, three pairs, no ``--timings`` (it adds a job);
  the ratio of each pair, their median and range; then one run of each with ``--timings`` for the phases;
* the Spark engine in a warm session (``load_spark_corpus`` + ``spark_release``, twice after one warm-up run:
  the faster of the two) against the local CLI's median;
* PipelineDP's Spark RDD backend (``pipeline_dp.SparkRDDBackend``, ``select_partitions`` with Gaussian
  thresholding at the same epsilon, delta and Delta0 = ``max_partitions_contributed``) in the same warm
  session, on the same file (each user's distinct words: the same tokens for this corpus's ``w<rank>`` words).

At 10M users (``cluster_10m``): the 2.3 GB synthetic file of ``bench_scale_10m`` (generated once into
benchmarks/_cache) on a standalone cluster of two workers with 1 core each on 127.0.0.1 (started and
stopped by process id): the local engine's CLI and the Spark engine's CLI on the cluster, each with
``--report`` (their calibrations compared), the driver's peak RSS (the CLI's process tree: the Python driver
and its JVM; the executors are the workers' children); then PipelineDP on the same cluster at the largest
size that finishes in its time budget (1M, 3M, 10M users: the first rows of the same file), with dpsu on the
cluster at that size beside it when it is not 10M. The load average before and after says how busy the
shared machine was.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_spark import CACHE, PeakSampler

EPS, DELTA, DELTA0 = 3.0, math.exp(-10), 100
MECHANISM = "weighted-gaussian"
SPARK_CONF = {"spark.driver.memory": "4g"}


def csv_200k() -> Path:
    """synthetic-200k as CSV (user,text), written once into benchmarks/_cache/."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    from dpsu_core.corpus.synthetic import synthetic_200k

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


def _cli(
    path: Path,
    *extra: str,
    timings: bool = True,
    delta: float = DELTA,
    env: dict | None = None,
    timeout: float | None = None,
) -> dict:
    """``dpsu release`` in a child process: wall seconds, items released, peak RSS of its process tree (with
    ``--report`` in ``extra``: the report's calibration too)."""
    argv = [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", str(path), "-m", MECHANISM, "-e", str(EPS)]
    argv += ["-d", repr(delta), "--max-items", str(DELTA0), "--user-col", "user", "--text-col", "text"]
    argv += ["-o", str(CACHE / f"side_{'spark' if extra else 'local'}.csv"), *(["--timings"] if timings else [])]
    argv += list(extra)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with PeakSampler(proc.pid) as peak:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()  # this process id (its JVM exits when its stdin closes)
            proc.communicate()
            raise RuntimeError(f"did not finish within {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise RuntimeError(stderr[-500:])
    out: dict = {
        "wall_seconds": round(time.perf_counter() - t0, 2),
        "items_released": int(stdout.split("released ", 1)[1].split()[0]),
        "peak_rss_mb_tree": round(peak.peak, 1),
    }
    if timings:
        out["phases_seconds"] = _phases(stderr)
    if "--report" in extra:
        import json

        report = json.loads(Path(extra[list(extra).index("--report") + 1]).read_text(encoding="utf-8"))
        calibration = report["calibration"]
        calibration["details"].pop("engine", None)  # where it ran: the only difference allowed
        out["calibration"] = calibration
    return out


SPARK_LOCAL = ("--engine", "spark", "--spark-master", "local[2]")


def cold_pairs(path: Path, pairs: int = 3) -> dict:
    """The cold CLI, paired: local then Spark ``local[2]``, ``pairs`` times, without ``--timings``; then one of
    each with ``--timings`` for the phases."""
    runs = []
    for _ in range(pairs):
        load = os.getloadavg()[0]
        local = _cli(path, timings=False)
        spark = _cli(path, *SPARK_LOCAL, timings=False)
        runs.append(
            {
                "local_seconds": local["wall_seconds"],
                "spark_seconds": spark["wall_seconds"],
                "ratio": round(spark["wall_seconds"] / local["wall_seconds"], 2),
                "load_average_1min_before": round(load, 2),
                "spark_peak_rss_mb_tree": spark["peak_rss_mb_tree"],
            }
        )
    ratios = sorted(r["ratio"] for r in runs)
    local_t, spark_t = _cli(path), _cli(path, *SPARK_LOCAL)
    return {
        "pairs": runs,
        "ratio_median": ratios[len(ratios) // 2],
        "ratio_range": [ratios[0], ratios[-1]],
        "target": 4.0,
        "local_median_seconds": sorted(r["local_seconds"] for r in runs)[len(runs) // 2],
        "spark_median_seconds": sorted(r["spark_seconds"] for r in runs)[len(runs) // 2],
        "phases_local_seconds": local_t["phases_seconds"],
        "phases_spark_seconds": spark_t["phases_seconds"],
        "phases_runs_seconds": {"local": local_t["wall_seconds"], "spark": spark_t["wall_seconds"]},
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


#: the floor of a cold Spark run on this machine: the interpreter with dpsu's Spark engine imported, the
#: session (the engine's own settings: class-data-sharing archive, C1, serial collector), one empty Python job
#: (the executor's Python daemon importing dpsu and loading its cached kernels) and a count of the input's
#: lines read by Spark (one JVM job over the file), then the session stopped: no data reaches Python
_FLOOR = """
import sys, time
t0 = time.perf_counter()
from dpsu_core.engines.spark import spark_session
from dpsu_core.engines.spark_load import _noop_batches
spark = spark_session("local[2]")
t1 = time.perf_counter()
spark.range(0, 1, 1, 1).mapInArrow(_noop_batches, "id long").collect()
t2 = time.perf_counter()
spark.read.text(sys.argv[1]).count()
t3 = time.perf_counter()
spark.stop()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f}")
"""


def floor_pairs(path: Path, pairs: int = 2) -> dict:
    """The cold floor, paired with the local CLI: a process that starts the engine's session, runs one empty
    Python job and one JVM job reading the input, and stops (``_FLOOR``); its ratio to the local engine's
    whole release is what no change to the engine's data path can go under."""
    runs = []
    for _ in range(pairs):
        load = os.getloadavg()[0]
        local = _cli(path, timings=False)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _FLOOR, str(path)], capture_output=True, text=True, check=True)
        wall = round(time.perf_counter() - t0, 2)
        session, python_job, read_job = (float(x) for x in proc.stdout.split()[-3:])
        runs.append(
            {
                "local_seconds": local["wall_seconds"],
                "floor_seconds": wall,
                "ratio": round(wall / local["wall_seconds"], 2),
                "floor_parts_seconds": {
                    "imports_and_session": session,
                    "first_python_job": python_job,
                    "read_count_job": read_job,
                },
                "load_average_1min_before": round(load, 2),
            }
        )
    ratios = sorted(r["ratio"] for r in runs)
    return {"pairs": runs, "ratio_median": ratios[len(ratios) // 2], "ratio_range": [ratios[0], ratios[-1]]}


def cold() -> dict:
    """The cold CLI alone, paired, and the floor of a cold Spark run beside the local CLI
    (``python -m benchmarks.run spark_cold``, or ``python -m benchmarks.bench_spark_side cold`` to print
    it); no 10M part."""
    before = os.getloadavg()
    path = csv_200k()
    res = cold_pairs(path)
    return {
        "corpus": "synthetic-200k as CSV (one row per user)",
        "csv_mb": round(path.stat().st_size / 1e6, 1),
        "mechanism": MECHANISM,
        "spark_master": "local[2]",
        "cores": os.cpu_count(),
        **res,
        "floor": floor_pairs(path),
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
        sc.unpersist()
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


def _pipeline_dp(spark, path: Path, delta: float = DELTA) -> dict:
    """PipelineDP's private partition selection on Spark RDDs: each user's distinct words, Gaussian
    thresholding, at most Delta0 partitions per user, the same (epsilon, delta)."""
    import pipeline_dp

    t0 = time.perf_counter()
    rows = spark.read.csv(str(path), header=True, schema="user string, text string").rdd
    pairs = rows.flatMap(lambda r: [(r[0], w) for w in set((r[1] or "").split())])
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPS, total_delta=delta)
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


#: the 10M run: delta below 1/users; workers' memory (the executors' heap a little under it)
DELTA_10M = 1e-8
WORKER_MEMORY, EXECUTOR_MEMORY = "7g", "6g"  # 3g executors ran out of heap caching the 10M rows
#: PipelineDP on the cluster: sizes tried in turn (the first rows of the 10M file), while its budget lasts
PDP_SIZES = (1_000_000, 3_000_000, 10_000_000)
PDP_BUDGET_SECONDS = 6 * 60
SPARK_10M_TIMEOUT = 20 * 60


def _within(fn, seconds: float, cancel) -> tuple[bool, Any]:
    """``fn()`` in a thread: (True, result), or (False, None) after ``cancel()`` when it takes past ``seconds``."""
    import threading

    out: dict = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - reported in the results
            out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        cancel()
        t.join(60)
        return False, None
    if "error" in out:
        return False, out["error"]
    return True, out["value"]


def cluster_header(path: Path) -> dict:
    """The 10M cluster runs' common facts: the file, delta, the cluster, the load before."""
    return {
        "users": 10_000_000,
        "csv_mb": round(path.stat().st_size / 1e6, 1),
        "delta": DELTA_10M,
        "cluster": f"standalone, 2 workers x 1 core, {WORKER_MEMORY} each (executors {EXECUTOR_MEMORY}), 127.0.0.1",
        "load_average_before": os.getloadavg(),
    }


def cluster_work(prefix: str) -> tuple[Path, dict]:
    """A scratch folder (``cluster/`` for the workers) and the CLI's environment: the executors' memory in Spark's
    own defaults file (read by spark-submit), this Python on the executors."""
    import tempfile

    work = Path(tempfile.mkdtemp(prefix=prefix))
    conf_dir = work / "conf"
    conf_dir.mkdir()
    (work / "cluster").mkdir()
    (conf_dir / "spark-defaults.conf").write_text(f"spark.executor.memory {EXECUTOR_MEMORY}\n", encoding="utf-8")
    return work, {**os.environ, "SPARK_CONF_DIR": str(conf_dir), "PYSPARK_PYTHON": sys.executable}


def cluster_10m() -> dict:
    """dpsu's local engine and its Spark engine on the standalone cluster at 10M users, then PipelineDP on
    the same cluster at the largest size that finishes in its budget (see the module's docstring)."""
    from benchmarks.bench_scale import corpus_file
    from tests.spark.cluster import standalone_cluster

    path = corpus_file(10_000_000)
    res = cluster_header(path)
    work, env = cluster_work("dpsu-bench-cluster-")
    local = _cli(path, "--report", str(work / "local.json"), timings=True, delta=DELTA_10M)
    res["local_engine_cli"] = local
    with standalone_cluster(work / "cluster", workers=2, memory=WORKER_MEMORY) as master:
        spark_args = ("--engine", "spark", "--spark-master", master, "--report", str(work / "spark.json"))
        try:
            spark = _cli(path, *spark_args, timings=False, delta=DELTA_10M, env=env, timeout=SPARK_10M_TIMEOUT)
            spark["ratio_to_local"] = round(spark["wall_seconds"] / local["wall_seconds"], 2)
            spark["driver_peak_rss_mb"] = spark.pop("peak_rss_mb_tree")  # the CLI's tree: Python driver + JVM
            spark["driver_under_2gb"] = spark["driver_peak_rss_mb"] < 2048
            spark["calibration_identical_to_local"] = spark["calibration"] == local["calibration"]
        except Exception as exc:  # noqa: BLE001 - reported, and PipelineDP still runs
            spark = {"error": str(exc)[-500:]}
        res["spark_engine_cluster_cli"] = spark
        res["pipeline_dp_cluster"] = _pipeline_dp_ladder(master, env, res, spark)
    res["load_average_after"] = os.getloadavg()
    import shutil

    shutil.rmtree(work, ignore_errors=True)  # the workers' folders (executors' logs, shipped files)
    return res


def _pipeline_dp_ladder(master: str, env: dict, res: dict, dpsu_10m: dict) -> dict:
    """PipelineDP on the cluster at 1M, 3M, 10M users in turn while the budget lasts: a size is tried only
    when the last one's time, scaled by the users, fits in what is left; then dpsu's Spark engine on the
    cluster at the largest size PipelineDP finished (when not 10M), for the ratio at equal size."""
    from benchmarks.bench_scale import corpus_file
    from dpsu_core.engines.spark import spark_session

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors run this Python (it has pipeline_dp)
    spark = spark_session(master, conf={"spark.executor.memory": EXECUTOR_MEMORY})
    t_start, done, tried = time.perf_counter(), [], []
    last: tuple[int, float] | None = None
    for n in PDP_SIZES:
        left = PDP_BUDGET_SECONDS - (time.perf_counter() - t_start)
        predicted = None if last is None else last[1] * n / last[0]
        if last is not None and predicted is not None and predicted > left:
            tried.append(
                {"users": n, "skipped": f"predicted {predicted:.0f} s from {last[0]:,} users > {left:.0f} s left"}
            )
            break
        path = corpus_file(n)
        ok, value = _within(lambda p=path: _pipeline_dp(spark, p, DELTA_10M), left, spark.sparkContext.cancelAllJobs)
        if not ok:
            tried.append({"users": n, "did_not_finish": value or f"cancelled after {left:.0f} s"})
            break
        done.append({"users": n, **value})
        last = (n, value["wall_seconds"])
    spark.stop()
    out: dict = {"budget_seconds": PDP_BUDGET_SECONDS, "finished": done, "not_run_or_unfinished": tried}
    if done and done[-1]["users"] != 10_000_000:
        n = done[-1]["users"]
        spark_args = ("--engine", "spark", "--spark-master", master)
        try:
            beside = _cli(corpus_file(n), *spark_args, timings=True, delta=DELTA_10M, env=env)
            out["dpsu_spark_cluster_same_size"] = {"users": n, **beside}
            out["pipeline_dp_over_dpsu_same_size"] = round(done[-1]["wall_seconds"] / beside["wall_seconds"], 2)
        except Exception as exc:  # noqa: BLE001
            out["dpsu_spark_cluster_same_size"] = {"users": n, "error": str(exc)[-500:]}
    elif done and "wall_seconds" in dpsu_10m:
        out["pipeline_dp_over_dpsu_10m"] = round(done[-1]["wall_seconds"] / dpsu_10m["wall_seconds"], 2)
    return out


def run() -> dict:
    from benchmarks.bench_scale import corpus_file
    from dpsu_core.engines.spark import spark_session

    path = csv_200k()
    corpus_file(10_000_000)  # the 10M file, generated before anything is timed
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
    res["cold_cli_paired"] = cold_pairs(path)
    base = res["cold_cli_paired"]["local_median_seconds"]
    t0 = time.perf_counter()
    spark = spark_session("local[2]", conf=SPARK_CONF)
    session_start = round(time.perf_counter() - t0, 2)
    with PeakSampler(os.getpid()) as peak:
        warm = _dpsu_warm(spark, path)
        pdp = _pipeline_dp(spark, path)
    spark.stop()
    measured = _median([warm["measured"], warm["measured_again"]])
    res["spark_warm_session"] = {
        **measured,
        "ratio": round(measured["wall_seconds"] / base, 1),
        "runs_seconds": [warm["measured"]["wall_seconds"], warm["measured_again"]["wall_seconds"]],
        "first_run_in_session_seconds": warm["warm_up"]["wall_seconds"],
        "session_start_seconds": session_start,
    }
    res["pipeline_dp_spark_rdd"] = {**pdp, "ratio": round(pdp["wall_seconds"] / base, 1)}
    res["peak_rss_mb_tree_warm_session"] = round(peak.peak, 1)
    res["load_average_after_200k"] = os.getloadavg()
    res["cluster_10m"] = cluster_10m()
    res["load_average_after"] = os.getloadavg()
    return res


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(cold() if sys.argv[1:] == ["cold"] else run(), indent=2))
