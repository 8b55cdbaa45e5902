"""One policy for SIGINT and SIGTERM in the command line (``cli.main``).

* Before the run's outputs are written, either signal stops the run: ``Stopped`` (a ``KeyboardInterrupt``, so
  whatever cleans up after Ctrl-C cleans up after SIGTERM too) is raised in the main thread, and ``cli`` says so on
  one line and exits with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). Nothing of the run is
  written: the outputs are staged and renamed into place together (``outputs.OutputSet``).
* While the outputs are written and renamed into place (``held``), a signal is set aside: the outputs appear
  together, and then the run has finished. A signal that came meanwhile, or comes while the command prints its
  last lines, changes nothing; one that comes after the command returned (Spark's shutdown in the exit hooks)
  ends the process at once with the run's own exit status (``exiting``): a run that finished reports success.

The handlers are installed by ``policy`` in the main thread only (``signal.signal`` works nowhere else); a
command run in another thread keeps the process's handlers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived before the run's outputs were written."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def stopped_by(exc: BaseException) -> Stopped | None:
    """The signal behind an error a library raised while our handler's ``Stopped`` was propagating (numba's
    dispatcher, interrupted while it loads a cached kernel, returns a ``SystemError`` whose cause is ours), if any."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, Stopped):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def exit_code(exc: KeyboardInterrupt) -> int:
    """128 + the signal's number: 130 for SIGINT (a plain KeyboardInterrupt too), 143 for SIGTERM."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def describe(exc: KeyboardInterrupt) -> str:
    """What stopped the run, in a few words."""
    signum = int(getattr(exc, "signum", signal.SIGINT))
    return "terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted"


# "run": a signal stops the run; "held": it waits; "finished": it is ignored; "exiting": it ends the process with
# the run's status ``code``
_STATE: dict[str, Any] = {"phase": "run", "code": 0, "installed": False}
#: a library's own handler that ``adopt`` replaced (pyspark's SparkContext cancels its jobs on SIGINT): called first
#: when a signal stops the run, never once the run has finished
_CHAINED: dict[int, Any] = {}


def _handle(signum: int, frame: Any) -> None:
    phase = _STATE["phase"]
    if phase == "run":
        chained = _CHAINED.get(signum)
        if chained is not None:
            with contextlib.suppress(KeyboardInterrupt):
                chained(signum, frame)
        raise Stopped(signum)
    if phase == "exiting":
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.flush()
        os._exit(_STATE["code"])
    # "held" or "finished": the outputs are (being) written; the run's result stands


@contextlib.contextmanager
def policy(*, restore: bool = True) -> Iterator[None]:
    """Handle SIGINT and SIGTERM as the module says for the block; ``restore``: put the previous handlers back
    after it (a command called from Python), else keep ours for the process's last steps (``exiting``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in SIGNALS}
    _STATE.update(phase="run", code=0, installed=True)
    _CHAINED.clear()
    for s in SIGNALS:
        signal.signal(s, _handle)
    try:
        yield
    finally:
        if restore:
            for s, handler in old.items():
                signal.signal(s, handler)
            _STATE.update(phase="run", code=0, installed=False)
            _CHAINED.clear()


def adopt() -> None:
    """Take SIGINT and SIGTERM back from a library that installed its own handler meanwhile (pyspark's
    SparkContext does for SIGINT): its handler still runs when a signal stops the run, never after the run
    finished."""
    if not _STATE["installed"] or threading.current_thread() is not threading.main_thread():
        return
    for s in SIGNALS:
        handler = signal.getsignal(s)
        if handler is not _handle and callable(handler):
            _CHAINED[s] = handler
            signal.signal(s, _handle)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Signals wait while the block runs (the outputs renamed into place); when it ends without an error the run
    has finished, and later signals no longer stop it."""
    if _STATE["phase"] != "run":
        yield
        return
    _STATE["phase"] = "held"
    try:
        yield
    except BaseException:
        _STATE["phase"] = "run"
        raise
    _STATE["phase"] = "finished"


def finish() -> None:
    """The run has ended (its failure is being reported): later signals no longer stop it."""
    if _STATE["phase"] in ("run", "held"):
        _STATE["phase"] = "finished"


def exiting(code: int) -> None:
    """The command returned ``code``: from now on a signal ends the process at once with that status."""
    _STATE.update(phase="exiting", code=code)
