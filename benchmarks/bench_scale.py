"""Scale: the command line end to end on synthetic corpora of 1M-10M users, start-up times, and the
peak memory of loading a 1 GB CSV.

    python -m benchmarks.run scale        # start-up, synthetic-200k, 1M and 3M users, the 1 GB CSV
    python -m benchmarks.run scale_10m    # 10M users (a 2.3 GB CSV; needs about 12 GB): run on its own

Corpora are shaped like synthetic-200k (``dpsu_core.corpus.synthetic``: log-uniform 1-300 words per user,
Zipf(1.0) over 100,000 words named w<rank>): one CSV row per user holding the user's distinct words
(10M users: 2.3 GB, 413M user-word pairs). The files are written once into benchmarks/_cache/
(git-ignored) in chunks of 250k users, never all in memory.

Every figure comes from a child process: wall time from the parent's clock, CPU (user + system, all
threads) and peak RSS from the child's rusage (``os.wait4``), the same figures ``/usr/bin/time -v`` gives.
The machine is shared: the load average before and after each run is recorded beside it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(
    os.environ.get("DPSU_BENCH_CACHE") or Path(__file__).resolve().parent / "_cache"
)  # big files: point it at /tmp
RELEASE = ["-m", "policy-gaussian", "-e", "3", "-d", "1e-6"]  # delta well below 1/users at every size
SIZES = (1_000_000, 3_000_000)
USERS_PER_GB = 4_250_000  # about 0.99e9 bytes of CSV
CHUNK = 250_000


def make_csv(n_users: int, path: Path, *, chunk: int = CHUNK, seed: int = 12345) -> Path:
    """Write the synthetic corpus of ``n_users`` users as CSV (user,text), chunk by chunk."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    from dpsu_core.corpus.synthetic import zipf_corpus

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    words = pa.array([f"w{i}" for i in range(100_000)])
    writer = None
    try:
        for c0 in range(0, n_users, chunk):
            n = min(chunk, n_users - c0)
            corpus = zipf_corpus(n, 100_000, 300, seed=seed + c0)
            ranks = np.fromiter((int(s[1:]) for s in corpus.vocab), dtype=np.int64, count=corpus.n_items)
            tokens = words.take(pa.array(ranks[corpus.items]))
            text = pc.binary_join(pa.ListArray.from_arrays(pa.array(corpus.indptr.astype(np.int32)), tokens), " ")
            users = pa.array([f"u{i}" for i in range(c0, c0 + n)])
            table = pa.table({"user": users, "text": text})
            if writer is None:
                writer = pacsv.CSVWriter(tmp, table.schema, write_options=pacsv.WriteOptions(quoting_style="needed"))
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    tmp.replace(path)
    return path


def corpus_file(n_users: int) -> Path:
    """The cached CSV of ``n_users`` users: written, or (the same bytes, chunk seeds being per chunk) the
    first rows of a larger cached file when ``n_users`` is a whole number of chunks."""
    path = CACHE / f"synthetic_{n_users}.csv"
    if path.exists():
        return path
    larger = sorted(
        (p for p in CACHE.glob("synthetic_*.csv") if int(p.stem.split("_")[1]) > n_users),
        key=lambda p: int(p.stem.split("_")[1]),
    )
    if larger and n_users % CHUNK == 0:
        tmp = path.with_suffix(".part")
        with larger[0].open("rb") as src, tmp.open("wb") as dst:
            for _ in range(n_users + 1):  # the header and n_users rows (no field spans lines)
                dst.write(src.readline())
        tmp.replace(path)
        return path
    return make_csv(n_users, path)


def measure(argv: list[str], *, keep_stderr: bool = False) -> dict:
    """Run ``argv`` as a child process: wall seconds, CPU seconds (user + sys) and peak RSS (MB)
    (with ``keep_stderr``, what it printed on stderr too)."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {code}: {err[-1000:]}")
    res = {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024.0, 1),
        "load_avg_before": round(load_before, 1),
        "load_avg_after": round(os.getloadavg()[0], 1),
    }
    return {**res, "stderr": err} if keep_stderr else res


def release_run(n_users: int) -> dict:
    path = corpus_file(n_users)
    out = CACHE / f"release_{n_users}.csv"
    res = measure([sys.executable, "-m", "dpsu_core.interfaces.cli", "release", str(path), *RELEASE, "-o", str(out)])
    released = sum(1 for _ in out.open()) - 1
    out.unlink()
    size = path.stat().st_size
    return {"users": n_users, "csv_mb": round(size / 1e6, 1), "items_released": released, **res}


def _median_of(argv: list[str], runs: int) -> dict:
    results = [measure(argv) for _ in range(runs)]
    walls = [r["wall_s"] for r in results]
    return {
        "wall_s_median": round(statistics.median(walls), 3),
        "wall_s_min": round(min(walls), 3),
        "runs": runs,
        "load_avg": round(statistics.median(r["load_avg_before"] for r in results), 1),
    }


def startup(runs: int = 7) -> dict:
    py = sys.executable
    out = {
        "python_no_op": _median_of([py, "-c", "pass"], runs),
        "dpsu_help": _median_of([py, "-m", "dpsu_core.interfaces.cli", "--help"], runs),
        "import_dpsu_core": _median_of([py, "-c", "import dpsu_core"], runs),
        "import_load_corpus_and_get_mechanism": _median_of(
            [py, "-c", "from dpsu_core import load_corpus, get_mechanism"], runs
        ),
    }
    script = shutil.which("dpsu")
    if script:  # the console script as installed (a pyenv shim adds its own start-up)
        out["dpsu_help_console_script"] = {"path": script, **_median_of([script, "--help"], runs)}
    return out


def load_peak_1gb() -> dict:
    """Peak RSS of ``load_corpus`` alone on a ~1 GB CSV, as a multiple of the file size."""
    path = corpus_file(USERS_PER_GB)
    size = path.stat().st_size
    base = measure([sys.executable, "-c", "import dpsu_core.corpus, dpsu_core.mechanisms"])
    res = measure([sys.executable, "-c", f"from dpsu_core import load_corpus; load_corpus({str(path)!r})"])
    return {
        "csv_mb": round(size / 1e6, 1),
        "users": USERS_PER_GB,
        "load_corpus": res,
        "peak_over_file_size": round(res["peak_rss_mb"] * 1024 * 1024 / size, 2),
        "peak_above_imports_over_file_size": round((res["peak_rss_mb"] - base["peak_rss_mb"]) * 1024 * 1024 / size, 2),
        "imports_only_peak_rss_mb": base["peak_rss_mb"],
    }


def run() -> dict:
    corpus_file(200_000)  # data first, so the timings below do not share the machine with the writer
    for n in SIZES:
        corpus_file(n)
    corpus_file(USERS_PER_GB)
    measure([sys.executable, "-m", "dpsu_core.interfaces.cli", "list"])  # numba's cache warm, as after installing
    res: dict = {"cpus": os.cpu_count(), "startup": startup()}
    runs = [release_run(200_000) for _ in range(3)]
    best = min(runs, key=lambda r: r["wall_s"])
    res["synthetic_200k_end_to_end"] = {**best, "wall_s_all_runs": [r["wall_s"] for r in runs]}
    res["scaling"] = [release_run(n) for n in SIZES]
    res["load_1gb_csv"] = load_peak_1gb()
    return res


def run_10m() -> dict:
    """The 10M-user point of the scaling curve (run on its own: about 12 GB at peak)."""
    corpus_file(10_000_000)
    measure([sys.executable, "-m", "dpsu_core.interfaces.cli", "list"])
    return {"cpus": os.cpu_count(), "release_10m": release_run(10_000_000)}


if __name__ == "__main__":
    print(run_10m() if "10m" in sys.argv[1:] else run())
