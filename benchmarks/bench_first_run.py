"""The first minute after an install (issue 39, item 13), side by side in one run:

  * the first ``dpsu release`` on synthetic-200k with an empty numba kernel cache (``NUMBA_CACHE_DIR`` a new
    folder: a fresh install) against the next run on the same cache (warm), and a third after ``dpsu_core.interfaces.warm``
    filled another empty cache (what the app's start-up warm-up leaves behind);
  * a cold first open of the app (a new server: the first session imports the library) in Chromium, to the menu
    with its loading note and to the Corpus page, against a warm open of the same server.

    python -m benchmarks.run first_run

Every CLI figure is a child process's wall time (the parent's clock); the machine is shared, so the load average
is recorded beside the figures. The ratios are what the figures are for.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_scale import CACHE, RELEASE, make_csv

REPO = Path(__file__).resolve().parents[1]
USERS = 200_000


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=1800)
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    return wall, run.stderr


def _release(src: Path, out: Path, cache: Path) -> tuple[float, str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return _timed(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", str(src), *RELEASE, "-o", str(out)], env
    )


def _cli(tmp: Path) -> dict:
    from dpsu_core.interfaces.warm import PREPARING_NOTE

    src = CACHE / f"synthetic_{USERS // 1000}k.csv"
    if not src.exists():
        make_csv(USERS, src)
    cold, cold_err = _release(src, tmp / "cold.csv", tmp / "cache-cold")
    warm, warm_err = _release(src, tmp / "warm.csv", tmp / "cache-cold")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp / "cache-warmed")}
    warm_up, _ = _timed([sys.executable, "-c", "from dpsu_core.interfaces.warm import warm; warm()"], env)
    after, after_err = _release(src, tmp / "after.csv", tmp / "cache-warmed")
    return {
        "corpus": f"synthetic-{USERS // 1000}k (CSV, {src.stat().st_size / 1e6:.0f} MB)",
        "first_release_empty_cache_s": round(cold, 2),
        "next_release_warm_cache_s": round(warm, 2),
        "first_over_warm": round(cold / warm, 2),
        "warm_up_s": round(warm_up, 2),
        "release_after_warm_up_s": round(after, 2),
        "after_warm_up_over_warm": round(after / warm, 2),
        "preparing_note_said": [PREPARING_NOTE in e for e in (cold_err, warm_err, after_err)],
    }


def _app(tmp: Path) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, streamlit_server_process
    from tests.e2e.first_paint import PAGE_TITLES, open_app

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            with streamlit_server_process(tmp) as (url, _proc):
                cold = open_app(browser, url)
                warm = open_app(browser, url)
        finally:
            browser.close()
    return {
        "cold_open_menu_ms": round(cold.menu_ms),
        "cold_open_corpus_page_ms": round(cold.useful_ms),
        "warm_open_menu_ms": round(warm.menu_ms),
        "warm_open_corpus_page_ms": round(warm.useful_ms),
        "cold_menu_over_warm_page": round(cold.menu_ms / warm.useful_ms, 2),
        "cold_page_over_warm_page": round(cold.useful_ms / warm.useful_ms, 2),
        "cold_open_loading_note": cold.loading_note,
        "only_app_pages_listed": set(cold.seen_links) == set(PAGE_TITLES),
    }


def run() -> dict:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        cli = _cli(Path(tmp))
        app = _app(Path(tmp))
    return {**cli, **app, "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run(), indent=2))
