"""Where one command's time goes: ``dpsu release --timings`` (or ``DPSU_TIMINGS=1``) prints its phases on stderr.

    timings (s): start-up 0.31, read 0.20, tokenize 0.41, checks 0.05, build 0.12, calibrate 0.02, ...

``start-up`` is the process's age when the command starts (the interpreter and the imports before it);
the other phases are wall time on the main thread, so a phase that waits for worker threads counts the
wait (``read`` is parsing the file's batches, ``tokenize`` the wait for the tokenizer threads beyond
it). Off by default: ``phase`` then costs one dict look-up.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

_spent: dict[str, float] = {}
_state = {"on": False}


def start(flag: bool = False) -> None:
    """Begin timing one command (on with ``flag`` or DPSU_TIMINGS=1, else off): phases cleared, the
    start-up phase recorded."""
    _state["on"] = flag or os.environ.get("DPSU_TIMINGS", "") not in ("", "0")
    _spent.clear()
    if _state["on"]:
        _spent["start-up"] = process_age()


def enabled() -> bool:
    return _state["on"]


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Add the wall time of the ``with`` block to phase ``name`` (when timings are on)."""
    if not _state["on"]:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        add(name, time.perf_counter() - t0)


def add(name: str, seconds: float) -> None:
    if _state["on"]:
        _spent[name] = _spent.get(name, 0.0) + seconds


def process_age() -> float:
    """Seconds since this process started (Linux: /proc; elsewhere the time since this module loaded)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            start_ticks = int(f.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _LOADED


def spent() -> dict[str, float]:
    return dict(_spent)


def report(file: TextIO | None = None) -> None:
    """One line of phases in seconds, in the order they were first timed, then the process's age."""
    if not _state["on"]:
        return
    parts = [f"{name} {s:.3f}" for name, s in _spent.items()]
    print(f"timings (s): {', '.join(parts)}; total {process_age():.3f}", file=file or sys.stderr)


_LOADED = time.perf_counter()
