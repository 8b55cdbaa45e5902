"""Waiting on the clock's condition instead of a fixed sleep: a timestamp with a resolution of ``seconds``
(a zip entry's two seconds, a report's one second) differs from the one taken before the call."""

from __future__ import annotations

import time


def wait_for_the_clock_to_tick(seconds: int) -> None:
    """Return as soon as ``int(time.time()) // seconds`` has changed (at most ``seconds`` later)."""
    start = int(time.time()) // seconds
    while int(time.time()) // seconds == start:
        time.sleep(0.02)
