"""Many browser sessions against one Streamlit server at once (issue 9's load test), shared by the e2e test
``test_sessions.py`` and the benchmark section ``sessions`` (which records the server's peak memory).

Half the sessions upload a corpus of 250,000 users; the other half each upload a small corpus in which every
user writes the session's own marker word (so that word is surely released). All sessions go through the same
steps in lock step, one step at a time across all pages: each step is started in every page before any page
is waited for, so the server really works on all sessions at once, while the order of steps stays fixed
(deterministic enough for a 2-core machine). Each session ends by downloading its CSV and TXT exports.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.e2e.conftest import MENU_LINK

SESSIONS = 20
BIG_USERS = 250_000
SMALL_USERS = 300
STEP_TIMEOUT_MS = 240_000
COMMON = ("river", "stone", "light", "paper", "green", "table", "music", "water")


@dataclass
class SessionPlan:
    name: str  # the uploaded file's name
    data: bytes
    marker: str | None  # the word only this session's corpus holds (small corpora)
    users: int


@dataclass
class SessionResult:
    plan: SessionPlan
    csv_text: str = ""
    txt_text: str = ""
    problems: list[str] = field(default_factory=list)


def big_corpus(n_users: int = BIG_USERS, seed: int = 11) -> bytes:
    """One post per user, six words from a Zipf-distributed vocabulary of 5,000 words."""
    rng = np.random.default_rng(seed)  # test data, not privacy noise
    vocab = np.array([f"word{i}" for i in range(5000)])
    idx = (rng.zipf(1.4, size=(n_users, 6)) - 1) % len(vocab)
    words = vocab[idx]
    body = [" ".join(row) for row in words.tolist()]
    lines = ["author,body", *(f"user{i:06d},{b}" for i, b in enumerate(body))]
    return ("\n".join(lines) + "\n").encode("utf-8")


def small_corpus(marker: str, n_users: int = SMALL_USERS) -> bytes:
    lines = ["author,body"]
    for i in range(n_users):
        words = [COMMON[(i + j) % len(COMMON)] for j in range(4)]
        lines.append(f"member{i:04d},{' '.join(words)} {marker}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def plans(n_sessions: int = SESSIONS, big_users: int = BIG_USERS) -> list[SessionPlan]:
    """Every other session a big corpus, the others a small one with a marker word of its own. Each big corpus
    is drawn with a seed of its own: the same file in every session would be one corpus to the durable ledger,
    whose second identical release is offered back instead of spent again."""
    out = []
    for i in range(n_sessions):
        if i % 2 == 0:
            out.append(SessionPlan(f"big_{i:02d}.csv", big_corpus(big_users, seed=11 + i), None, big_users))
        else:
            marker = f"qzmarker{i:02d}x"
            out.append(SessionPlan(f"small_{i:02d}.csv", small_corpus(marker), marker, SMALL_USERS))
    return out


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024.0, 1)
    raise RuntimeError(f"no VmHWM for pid {pid}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024.0, 1)
    raise RuntimeError(f"no VmRSS for pid {pid}")


# ---- driving the pages -----------------------------------------------------------------------------------
def _idle(page) -> None:
    try:  # a rerun may take a moment to start after the action that triggers it
        page.locator('[data-testid="stApp"][data-test-script-state="running"]').wait_for(timeout=1500)
    except Exception:  # noqa: BLE001  (Playwright's TimeoutError: the run was already over or never started)
        pass
    page.locator(
        '[data-testid="stApp"][data-test-connection-state="CONNECTED"][data-test-script-state="notRunning"]'
    ).wait_for(timeout=STEP_TIMEOUT_MS)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=STEP_TIMEOUT_MS)


def _check(page, result: SessionResult, step: str) -> None:
    tb = page.locator('[data-testid="stException"]').count()
    errs = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    if tb:
        result.problems.append(f"{step}: {tb} traceback box(es)")
    if errs:
        result.problems.append(f"{step}: error box(es) {errs}")


def run_sessions(browser, url: str, session_plans: list[SessionPlan]) -> list[SessionResult]:
    """Drive one browser context per plan through upload, load, release and export, in lock step."""
    results = [SessionResult(p) for p in session_plans]
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True) for _ in results]
    try:
        pages = [ctx.new_page() for ctx in contexts]
        for page in pages:
            page.set_default_timeout(STEP_TIMEOUT_MS)

        def each(action, step: str) -> None:
            for page, res in zip(pages, results):
                if not res.problems:
                    action(page, res)

        def wait_all(step: str, ready=None) -> None:
            for page, res in zip(pages, results):
                if res.problems:
                    continue
                if ready is not None:
                    ready(page, res)
                _idle(page)
                _check(page, res, step)

        each(lambda p, r: p.goto(url, wait_until="commit"), "open")
        wait_all("open", lambda p, r: p.get_by_role("heading", name="1 · Corpus").wait_for())
        each(lambda p, r: p.get_by_text("Upload a file", exact=True).click(), "choose upload")
        wait_all(
            "choose upload",
            lambda p, r: p.locator('[data-testid="stFileUploaderDropzoneInput"]').wait_for(state="attached"),
        )
        each(
            lambda p, r: p.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
                {"name": r.plan.name, "mimeType": "text/csv", "buffer": r.plan.data}
            ),
            "upload",
        )
        wait_all(
            "upload",
            lambda p, r: p.locator(f'[data-testid="stFileChip"][aria-label^="{r.plan.name}, "]').wait_for(),
        )
        wait_all("columns", lambda p, r: p.get_by_role("combobox", name="Text column", exact=True).wait_for())
        each(lambda p, r: p.get_by_role("button", name="Load corpus").click(), "load")
        wait_all("load", lambda p, r: p.get_by_text("Corpus loaded.", exact=True).wait_for())
        for page, res in zip(pages, results):
            if res.problems:
                continue
            users = page.locator('[data-testid="stSidebar"] [data-testid="stText"]').inner_text()
            if f"{res.plan.users:,} users" not in users:
                res.problems.append(f"load: the sidebar shows {users!r}, expected {res.plan.users:,} users")
        each(lambda p, r: p.locator(MENU_LINK, has_text="Release").click(), "to release")
        wait_all("to release", lambda p, r: p.get_by_role("heading", name="2 · Release").wait_for())
        each(lambda p, r: p.get_by_role("button", name="Run release").click(), "release")
        wait_all("release", lambda p, r: p.get_by_role("heading", name="Released set (private)").wait_for())
        each(lambda p, r: p.locator(MENU_LINK, has_text="Export").click(), "to export")
        wait_all("to export", lambda p, r: p.get_by_role("heading", name="7 · Export").wait_for())
        for page, res in zip(pages, results):
            if res.problems:
                continue
            res.csv_text = _download(page, "Released items (CSV)")
            res.txt_text = _download(page, "Released items (TXT)")
            _check(page, res, "export")
    finally:
        for ctx in contexts:
            ctx.close()
    return results


def _download(page, label: str) -> str:
    with page.expect_download(timeout=STEP_TIMEOUT_MS) as d:
        page.get_by_role("button", name=label).click()
    body = Path(d.value.path()).read_text(encoding="utf-8")
    _idle(page)
    return body


def released_items(csv_text: str) -> list[str]:
    rows = list(csv.reader(io.StringIO(csv_text)))
    return [r[0] for r in rows[1:]] if rows else []


def leaks(results: list[SessionResult]) -> list[str]:
    """Problems of isolation: a session missing its own marker, or holding another session's."""
    out = []
    markers = {r.plan.marker for r in results if r.plan.marker}
    for r in results:
        text = r.csv_text + r.txt_text
        found = set(re.findall(r"qzmarker\d\dx", text))
        if r.plan.marker and r.plan.marker not in released_items(r.csv_text):
            out.append(f"{r.plan.name}: its own marker {r.plan.marker} is not in its export")
        foreign = (found & markers) - {r.plan.marker}
        if foreign:
            out.append(f"{r.plan.name}: holds other sessions' markers {sorted(foreign)}")
    return out
