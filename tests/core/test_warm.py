"""A fresh install's first run (issue 39, item 13): numba's on-disk cache empty (``NUMBA_CACHE_DIR`` a new folder),
through real processes. The CLI says "preparing (first run only)" on a cold cache and not once it is filled;
``warm()`` fills it for everything the CLI's release checks. No timings here: ``python -m benchmarks.run
first_run`` measures the first run against a warm one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dpsu_core.interfaces.warm import ENTRY_KERNELS, PREPARING_NOTE, entry_kernels

REPO = Path(__file__).resolve().parents[2]


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(cache)}


def _release(src: Path, out: Path, cache: Path) -> subprocess.CompletedProcess:
    argv = ["release", str(src), "-m", "policy-gaussian", "-e", "3", "-d", "1e-5", "-o", str(out), "--spend-again"]
    return subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(cache),
    )


def test_entry_kernels_are_cached_numba_kernels():
    from numba.core.registry import CPUDispatcher

    kernels = entry_kernels()
    assert len(kernels) == len(ENTRY_KERNELS)
    assert all(isinstance(k, CPUDispatcher) and k._cache is not None for k in kernels)


def test_the_cli_says_preparing_on_a_cold_cache_only_and_warm_fills_it(tmp_path):
    src = tmp_path / "posts.csv"
    src.write_text("user,text\n" + "".join(f"u{u},the order {u % 7} was late again\n" for u in range(200)))
    cold_dir, warmed_dir = tmp_path / "cold", tmp_path / "warmed"
    first = _release(src, tmp_path / "a.csv", cold_dir)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(PREPARING_NOTE) == 1
    second = _release(src, tmp_path / "b.csv", cold_dir)
    assert second.returncode == 0 and PREPARING_NOTE not in second.stderr, second.stderr
    # the app's warm-up, in a process of its own, on another empty cache: afterwards the CLI finds it warm
    code = "from dpsu_core.interfaces import warm\nassert warm.cold()\nwarm.warm()\nassert not warm.cold()\nprint('ok')"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=_env(warmed_dir)
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
    after = _release(src, tmp_path / "c.csv", warmed_dir)
    assert after.returncode == 0 and PREPARING_NOTE not in after.stderr, after.stderr
