"""The app under load (issue 9): 20 browser sessions at once against one Streamlit server, half on a
250,000-user corpus, half on small corpora with marker words (the scenario of tests/e2e/sessions.py).
Records the server's peak RSS (VmHWM), its RSS at the end, the wall time, and whether every session
finished cleanly and kept to its own data."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, streamlit_server_process
from tests.e2e.sessions import BIG_USERS, SESSIONS, leaks, peak_rss_mb, plans, rss_mb, run_sessions


def run(n_sessions: int = SESSIONS) -> dict:
    from playwright.sync_api import sync_playwright

    session_plans = plans(n_sessions)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            with streamlit_server_process(Path(tmp)) as (url, proc):
                idle_mb = rss_mb(proc.pid)
                t0 = time.perf_counter()
                results = run_sessions(browser, url, session_plans)
                wall = time.perf_counter() - t0
                peak, end = peak_rss_mb(proc.pid), rss_mb(proc.pid)
        finally:
            browser.close()
    problems = [f"{r.plan.name}: {x}" for r in results for x in r.problems]
    return {
        "sessions": n_sessions,
        "big_corpus_users": BIG_USERS,
        "big_sessions": sum(1 for r in results if r.plan.marker is None),
        "server_rss_idle_mb": idle_mb,
        "server_peak_rss_mb": peak,
        "server_rss_after_mb": end,
        "wall_seconds_all_sessions": round(wall, 1),
        "all_finished_cleanly": not problems,
        "problems": problems[:10],
        "isolation_violations": leaks(results),
    }


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run(), indent=2))
