"""The app under load: 20 browser sessions at once against one server (see tests/e2e/sessions.py).

Every session finishes (upload, load, release, export) without a traceback or an error box, each small
corpus's marker word is in its own session's export and in no other session's, and the server's peak
memory is measured (VmHWM) and reported in the test's output and its junit properties.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import streamlit_server_process
from tests.e2e.sessions import SESSIONS, leaks, peak_rss_mb, plans, run_sessions

pytestmark = pytest.mark.e2e
pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


def test_twenty_concurrent_sessions_are_isolated(browser, tmp_path, record_property, capsys):
    session_plans = plans(SESSIONS)
    assert len({p.marker for p in session_plans if p.marker}) == SESSIONS // 2
    with streamlit_server_process(tmp_path) as (url, proc):
        results = run_sessions(browser, url, session_plans)
        peak = peak_rss_mb(proc.pid)
    problems = [f"{r.plan.name}: {p}" for r in results for p in r.problems]
    assert not problems, "\n".join(problems)
    assert all(r.csv_text.startswith('"item","n"') for r in results)
    assert not leaks(results), "\n".join(leaks(results))
    record_property("server_peak_rss_mb", peak)
    with capsys.disabled():
        print(f"\n[sessions] {SESSIONS} concurrent sessions: server peak RSS {peak} MB")
