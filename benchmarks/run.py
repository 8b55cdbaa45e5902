"""Run every benchmark section, each in its own process (so peak memory is per section), and
write benchmarks/results.json and benchmarks/RESULTS.md.

    python -m benchmarks.run                 # all sections
    python -m benchmarks.run setunion msnbc  # some
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

HERE = Path(__file__).resolve().parent
SECTIONS = {
    "setunion": "benchmarks.bench_setunion",
    "ingest": "benchmarks.bench_ingest",
    "msnbc": "benchmarks.bench_msnbc",
    "pcr_metrics": "benchmarks.bench_pcr_metrics",
    "app": "benchmarks.bench_app",
    "hostile": "benchmarks.bench_hostile",
    "sessions": "benchmarks.bench_sessions",
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


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        print(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}", file=sys.stderr)
        return 2
    path = HERE / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results.setdefault("sections", {})
    for n in names:
        print(f"[bench] {n} ...", flush=True)
        res = run_section(SECTIONS[n])
        results["sections"][n] = res
        print(json.dumps(res, indent=2, default=str), flush=True)
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    results["updated"] = datetime.now(UTC).isoformat(timespec="seconds")
    path.write_text(json.dumps(results, indent=2, default=str))
    (HERE / "RESULTS.md").write_text(render_markdown(results))
    print(f"wrote {path} and {HERE / 'RESULTS.md'}")
    return 0


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
