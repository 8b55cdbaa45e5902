"""The app under load: 12 browser sessions at once against one server (see tests/e2e/sessions.py).

Every session finishes (upload, load, release, export) without a traceback or an error box, each small
corpus's marker word is in its own session's export and in no other session's, and the server's peak
memory is measured (VmHWM) and reported in the test's output and its junit properties.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import streamlit_server_process
from tests.e2e.sessions import leaks, peak_rss_mb, plans, run_sessions

pytestmark = pytest.mark.e2e
#: the sessions and the big corpora's users here, on the CI machine's two cores beside the other tests (the
#: benchmark, benchmarks/bench_sessions.py, runs sessions.SESSIONS sessions with sessions.BIG_USERS users)
TEST_SESSIONS, TEST_BIG_USERS = 12, 20_000
pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


@pytest.mark.timeout(1200)
def test_concurrent_sessions_are_isolated(browser, tmp_path, record_property, capsys):
    session_plans = plans(TEST_SESSIONS, big_users=TEST_BIG_USERS)
    assert len({p.marker for p in session_plans if p.marker}) == TEST_SESSIONS // 2
    with streamlit_server_process(tmp_path) as (url, proc):
        results = run_sessions(browser, url, session_plans)
        peak = peak_rss_mb(proc.pid)
    problems = [f"{r.plan.name}: {p}" for r in results for p in r.problems]
    assert not problems, "\n".join(problems)
    assert all(r.csv_text.startswith('"item","n"') for r in results)
    assert not leaks(results), "\n".join(leaks(results))
    record_property("server_peak_rss_mb", peak)
    with capsys.disabled():
        print(f"\n[sessions] {TEST_SESSIONS} concurrent sessions: server peak RSS {peak} MB")
