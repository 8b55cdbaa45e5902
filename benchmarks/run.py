"""Run every benchmark section, each in its own process (so peak memory is per section), and
write benchmarks/results.json and benchmarks/RESULTS.md.

    python -m benchmarks.run                 # all sections but the opt-in ones
    python -m benchmarks.run setunion msnbc  # some
    python -m benchmarks.run scale_10m       # an opt-in section (named only)
    python -m benchmarks.run floor           # dpsu end to end against the floor (Arrow read + split)
    python -m benchmarks.run tokenizer       # private tokenizers: tokens per word on held-out users' words
    python -m benchmarks.run tokenizer_tuning  # how the counts' defaults were chosen (the first half only)
    python -m benchmarks.run ledger          # the ledger store's charge latency and a 10,000-entry total

A section whose data is missing (``benchmarks.data``: ../shared/data or $DPSU_SHARED_DATA) is refused
before anything runs: exit status 2 and one line naming the file. A section that fails leaves its
committed results as they were: the error goes to stderr, the exit status is 1, and only the sections
that succeeded are written.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.data import MSNBC

HERE = Path(__file__).resolve().parent
SECTIONS = {
    "setunion": "benchmarks.bench_setunion",
    "ingest": "benchmarks.bench_ingest",
    "msnbc": "benchmarks.bench_msnbc",
    "pcr_metrics": "benchmarks.bench_pcr_metrics",
    "app": "benchmarks.bench_app",
    "kernels": "benchmarks.bench_kernels",
    "hostile": "benchmarks.bench_hostile",
    "sessions": "benchmarks.bench_sessions",
    "spark": "benchmarks.bench_spark",  # Spark local[2] on 1M users (Java 17 + pyspark; about 8 GB)
    "spark_side": "benchmarks.bench_spark_side",  # local vs Spark vs PipelineDP on synthetic-200k; 1M load
    "spark_cold": "benchmarks.bench_spark_cold",  # spark_side's cold CLI pairs and the cold floor alone (no 10M)
    "spark_pdp_10m": "benchmarks.bench_spark_pdp_10m",  # PipelineDP and dpsu at 10M on the same cluster (~30 min)
    "scale": "benchmarks.bench_scale",
    "scale_10m": "benchmarks.bench_scale_10m",
    "floor": "benchmarks.bench_floor",  # dpsu end to end as a multiple of an Arrow read + split (issue 20)
    "floor_10m": "benchmarks.bench_floor_10m",
    "segment": "benchmarks.bench_segment",  # segmenters old vs new MB/s, zh vs en release, start-up, dictionary items
    "frontier_msnbc": "benchmarks.bench_frontier_msnbc",  # Policy DP-SIPS beside Policy Gaussian and DP-SIPS on MSNBC
    "frontier_demo": "benchmarks.bench_frontier_demo",  # the same on the bundled text corpus (assets/)
    "preview": "benchmarks.bench_preview",  # the Corpus page's whole-file column facts as a share of the load
    "overlap": "benchmarks.bench_overlap",  # the content check of a public file against reading the two files (1M)
    "overlap_10m": "benchmarks.bench_overlap_10m",  # the same on 10M users (two 2.3 GB CSVs)
    "fingerprint": "benchmarks.bench_fingerprint",  # the corpus fingerprint against reading and loading (1M)
    "fingerprint_10m": "benchmarks.bench_fingerprint_10m",  # its cost and size on 10M users (the 1M corpus x 10)
    "tokenizer": "benchmarks.bench_tokenizer",  # private tokenizers' tokens per word on held-out users (issue 30)
    "tokenizer_tuning": "benchmarks.bench_tokenizer_tuning",  # the counts' defaults, chosen on the first half only
    "ledger": "benchmarks.bench_ledger",  # the ledger store: charge latency (SQLite, PostgreSQL), 10,000 entries' total
    "first_run": "benchmarks.bench_first_run",  # first release on an empty kernel cache, cold app open (issue 39)
}
# sections run only when named: scale_10m needs about 12 GB, spark about 8 GB (and Java 17), spark_side
# Java 17 and pipeline-dp (the 'bench' extra); first_run compiles every kernel from an empty cache (minutes)
OPT_IN = {
    "scale_10m",
    "floor_10m",
    "spark",
    "spark_side",
    "spark_cold",
    "spark_pdp_10m",
    "overlap_10m",
    "fingerprint_10m",
    "first_run",
}
# data files a section needs: the runner refuses the section without them rather than replace committed
# MSNBC figures with a "skipped" (the other sections run without the shared folder)
NEEDS: dict[str, list[Path]] = {
    name: [MSNBC] for name in ("msnbc", "ingest", "pcr_metrics", "kernels", "frontier_msnbc")
}

_CHILD = """
import json, sys, importlib
mod = importlib.import_module(sys.argv[1])
res = mod.run()
sys.stdout.write("\\n@@RESULT@@" + json.dumps(res, default=str))
"""


def run_section(module: str) -> dict:
    """Run one section in a child process; its own peak RSS comes from wait4's rusage."""
    import tempfile

    t0 = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, module], cwd=HERE.parent, stdout=subprocess.PIPE, stderr=err_file, text=True
        )
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err_file.seek(0)
        err = err_file.read()
    wall = time.perf_counter() - t0
    peak = round(usage.ru_maxrss / 1024.0, 1)  # Linux reports KiB
    if proc.returncode != 0 or "@@RESULT@@" not in out:
        return {"error": (err or out)[-2000:], "wall_seconds": round(wall, 2), "peak_rss_mb": peak}
    res = json.loads(out.split("@@RESULT@@", 1)[1])
    res["wall_seconds"] = round(wall, 2)
    res["peak_rss_mb"] = peak
    return res


def main(
    argv: list[str] | None = None,
    *,
    sections: dict[str, str] | None = None,
    needs: dict[str, list[Path]] | None = None,
    out_dir: Path = HERE,
) -> int:
    sections = SECTIONS if sections is None else sections
    needs = NEEDS if needs is None else needs
    names = (argv if argv is not None else sys.argv[1:]) or [n for n in sections if n not in OPT_IN]
    unknown = [n for n in names if n not in sections]
    if unknown:
        print(f"unknown section(s) {unknown}; choose from {list(sections)}", file=sys.stderr)
        return 2
    missing = [(n, f) for n in names for f in needs.get(n, []) if not Path(f).is_file()]
    if missing:
        for n, f in missing:
            print(
                f"benchmark section {n!r} needs {f}, which is missing: put the shared data folder beside the "
                "repository (../shared/data) or point DPSU_SHARED_DATA at it, or leave the section out",
                file=sys.stderr,
            )
        return 2
    path = out_dir / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results.setdefault("sections", {})
    failed = []
    for n in names:
        print(f"[bench] {n} ...", flush=True)
        res = run_section(sections[n])
        if "error" in res:  # keep the committed results of this section
            failed.append(n)
            print(f"benchmark section {n!r} failed; its results were not written:\n{res['error']}", file=sys.stderr)
            continue
        results["sections"][n] = res
        print(json.dumps(res, indent=2, default=str), flush=True)
    if len(failed) == len(names):
        return 1
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    results["updated"] = datetime.now(UTC).isoformat(timespec="seconds")
    path.write_text(json.dumps(results, indent=2, default=str))
    (out_dir / "RESULTS.md").write_text(render_markdown(results))
    print(f"wrote {path} and {out_dir / 'RESULTS.md'}")
    return 1 if failed else 0


def render_markdown(results: dict) -> str:
    lines = [
        "# Benchmark results",
        "",
        f"Updated {results.get('updated')} on {results.get('machine')}.",
        "Regenerate with `python -m benchmarks.run`.",
        "",
    ]
    for name, res in results.get("sections", {}).items():
        lines += [f"## {name}", "", "```json", json.dumps(res, indent=2, default=str), "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
