"""What a browser sees while the app opens: every link text the sidebar ever shows, and when the app's menu and
the first page's heading first appear (ms after the navigation starts). Shared by the browser test of the
first minute and ``benchmarks/bench_first_run.py``."""

from __future__ import annotations

import time
from dataclasses import dataclass

#: records, from the document's creation on, every link text shown in the sidebar and when the menu appears
OBSERVER = """
window.__dpsuSeen = new Set();
window.__dpsuMenuAt = null;
new MutationObserver(() => {
    document.querySelectorAll('[data-testid="stSidebar"] a').forEach((a) => {
        const t = (a.innerText || '').trim().split('\\n').pop().trim();  // the title, after its icon's name
        if (t) window.__dpsuSeen.add(t);
    });
    if (window.__dpsuMenuAt === null && document.querySelector('.st-key-app_menu a')) {
        window.__dpsuMenuAt = performance.now();
    }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""

PAGE_TITLES = (
    "Corpus",
    "Release",
    "Thresholds",
    "Histogram fill",
    "Coverage",
    "Compare",
    "Neighbouring corpora",
    "Export",
    "Custodian",  # single-user mode: the local user is the custodian of their own store
)


@dataclass(frozen=True)
class Opening:
    seen_links: tuple[str, ...]  # every link text the sidebar showed, in no order
    menu_ms: float  # the app's menu first drawn (ms since the navigation started)
    useful_ms: float  # the Corpus page's heading shown
    loading_note: bool  # the "Loading dpsu…" note was shown before the heading


def open_app(browser, url: str, timeout_ms: float = 180_000) -> Opening:
    """Open ``url`` in a new context of ``browser`` and watch it until the Corpus page's heading shows."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.add_init_script(OBSERVER)
        note = {"seen": False}
        page.goto(url, wait_until="commit")
        heading = page.get_by_role("heading", name="1 · Corpus")
        deadline = time.monotonic() + timeout_ms / 1000
        while not heading.count():
            if page.get_by_text("Loading dpsu…").count():
                note["seen"] = True
            if time.monotonic() > deadline:
                raise TimeoutError(f"no Corpus page within {timeout_ms / 1000:.0f} s")
            page.wait_for_timeout(50)
        useful = float(page.evaluate("performance.now()"))
        seen, menu = page.evaluate("[Array.from(window.__dpsuSeen), window.__dpsuMenuAt]")
        return Opening(tuple(seen), float(menu if menu is not None else useful), useful, note["seen"])
    finally:
        ctx.close()
