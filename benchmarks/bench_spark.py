"""Spark engine on one machine: ``local[2]`` on 1M synthetic users against the local engine.

    python -m benchmarks.run spark      # never run by CI; needs Java 17 and pyspark; about 8 GB at peak

The corpus is synthetic-200k's shape at 1M users (``dpsu_core.corpus.synthetic.zipf_corpus``: log-uniform 1-300
words per user, Zipf(1.0) over 100,000 words ``w<rank>``), one CSV row per user holding the user's words,
written once into benchmarks/_cache/ (git-ignored) in chunks.

Figures: wall seconds per stage (Spark: read + the shuffle of the posts by user + tokenize + items, item ids
on the driver, per-user rows; then each release), peak RSS of the whole process tree (this Python process, the
JVM and the Python workers, sampled from /proc every 0.2 s), and the items released next to the local
engine's on the same file (``dpsu release`` in a child process: wall and peak RSS from its rusage).
The machine is shared: the load average is recorded beside the figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

CACHE = Path(__file__).resolve().parent / "_cache"
N_USERS = 1_000_000
EPS, DELTA = 3.0, 1e-7
SPARK_CONF = {"spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "8"}


def corpus_csv(n_users: int = N_USERS, chunk: int = 250_000, seed: int = 12345) -> Path:
    """The synthetic corpus as CSV (user,text), generated once, chunk by chunk."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    from dpsu_core.corpus.synthetic import zipf_corpus

    path = CACHE / f"spark_synthetic_{n_users}.csv"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with pacsv.CSVWriter(tmp, pa.schema([("user", pa.string()), ("text", pa.string())])) as writer:
        for c0 in range(0, n_users, chunk):
            n = min(chunk, n_users - c0)
            c = zipf_corpus(n, 100_000, 300, seed=seed + c0)
            words = pa.array(c.vocab.tolist(), pa.string()).take(pa.array(c.items))
            text = pc.binary_join(pa.ListArray.from_arrays(pa.array(c.indptr.astype(np.int32)), words), " ")
            writer.write_table(pa.table({"user": [f"u{i}" for i in range(c0, c0 + n)], "text": text}))
    tmp.replace(path)
    return path


def _tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants (MB), from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{d}/statm") as f:
                rss[int(d)] = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d))
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total / 1e6


class PeakSampler:
    """Samples the process tree's RSS in a thread; ``peak`` in MB."""

    def __init__(self, root: int, every: float = 0.2) -> None:
        self.root, self.every, self.peak = root, every, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss_mb(self.root))
            time.sleep(self.every)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _local_peak(path: Path, mechanism: str) -> dict:
    """The local engine with its tree's peak RSS sampled like Spark's (the same measure for both)."""
    code = (
        "import sys; from dpsu_core.interfaces.cli import main; "
        f"sys.exit(main(['release', {str(path)!r}, '-m', {mechanism!r}, '-e', '{EPS}', '-d', '{DELTA}', "
        f"'-o', {str(CACHE / ('local_' + mechanism + '.csv'))!r}, '--user-col', 'user', '--text-col', 'text']))"
    )
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PeakSampler(proc.pid) as peak:
        stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(stderr[-500:])
    return {
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "peak_rss_mb": round(peak.peak, 1),
        "items_released": int(stdout.split("released ", 1)[1].split()[0]),
    }


def spark_engine(path: Path, mechanisms: list[str]) -> dict:
    from dpsu_core.engines.spark import load_spark_corpus, spark_release, spark_session
    from dpsu_core.mechanisms.registry import get_mechanism

    res: dict = {"stages_seconds": {}, "releases": {}}
    with PeakSampler(os.getpid()) as peak:
        t0 = time.perf_counter()
        spark = spark_session("local[2]", conf=SPARK_CONF)
        res["stages_seconds"]["session_start"] = round(time.perf_counter() - t0, 2)
        t1 = time.perf_counter()
        sc = load_spark_corpus(str(path), spark=spark, user_col="user", text_col="text", timings=res["stages_seconds"])
        res["load_seconds"] = round(time.perf_counter() - t1, 1)
        res["corpus"] = {"users": sc.n_users, "items": sc.n_items, "pairs": sc.nnz}
        for name in mechanisms:
            mech = get_mechanism(name, epsilon=EPS, delta=DELTA)
            t = time.perf_counter()
            rel = spark_release(mech, sc)
            res["releases"][name] = {
                "wall_seconds": round(time.perf_counter() - t, 1),
                "items_released": rel.n_released,
                "where": "executors" if "executors" in (rel.calibration.details.engine or "") else "driver",
            }
        res["wall_seconds"] = round(time.perf_counter() - t0, 1)
        spark.stop()
    res["peak_rss_mb_tree"] = round(peak.peak, 1)
    return res


def run() -> dict:
    path = corpus_csv()
    mechanisms = ["weighted-gaussian", "dp-sips", "policy-gaussian"]
    res: dict = {
        "corpus": f"synthetic zipf(1.0), {N_USERS:,} users, 1-300 words each, 100k words",
        "csv_mb": round(path.stat().st_size / 1e6, 1),
        "epsilon": EPS,
        "delta": DELTA,
        "spark_conf": {"master": "local[2]", **SPARK_CONF},
        "load_average_before": os.getloadavg(),
    }
    res["spark"] = spark_engine(path, mechanisms)
    res["local"] = {name: _local_peak(path, name) for name in mechanisms}
    res["load_average_after"] = os.getloadavg()
    return res


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run(), indent=2))
