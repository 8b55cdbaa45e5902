"""The compiled kernels on a fresh install: said, and prepared ahead where possible.

Every numba kernel of dpsu is ``njit(cache=True)``: compiled on its first call in a process and kept on disk for
later processes (next to its module in ``__pycache__``; numba's per-user cache folder when that folder is
read-only, e.g. a site-packages owned by root; ``NUMBA_CACHE_DIR`` when set). Only the first run after an install
(or an upgrade) compiles them, which takes seconds. So:
  * ``cold()`` says whether the release path's kernels have no usable cache yet (the CLI then says "preparing
    (first run only)" before it starts, so the wait is not read as its speed);
  * ``warm()`` runs the whole path once on a tiny synthetic corpus (a load with the ``auto`` tokenizer, then each
    mechanism's release): every kernel a release uses is compiled, or read from the cache, with the argument types
    of a real run;
  * ``warm_in_background()`` does that once per process in a daemon thread, only when ``cold()``: the app calls it
    at start-up, so a fresh install's first release in the app finds its kernels ready.
The synthetic corpus is made up here and every release of it is dropped: nothing private is involved.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

# kernels every corpus load calls from Python (those they call in turn are compiled into them, with no cache entry
# of their own; a mechanism's kernels depend on the mechanism): ``cold`` reads their cache indexes, so the first
# run after an install says it is preparing, and the runs after it do not
ENTRY_KERNELS = (
    ("dpsu_core.corpus.build", "_group_posts"),
    ("dpsu_core.corpus.build", "_user_rows"),
    ("dpsu_core.corpus.build", "_first_use"),
)
PREPARING_NOTE = (
    "preparing (first run only): compiling dpsu's kernels, which later runs read from the cache; this run is "
    "slower than the next"
)
WARM_USERS = 60

_started = threading.Lock()
_thread: threading.Thread | None = None


def entry_kernels() -> list[Any]:
    """The ``ENTRY_KERNELS`` (numba dispatchers)."""
    return [getattr(importlib.import_module(module), name) for module, name in ENTRY_KERNELS]


def cold() -> bool:
    """Whether a kernel of the release path has no usable entry in numba's cache (none yet, or made from another
    version of its source): its first call will compile it."""
    for kernel in entry_kernels():
        try:
            # numba's own index of the kernel's cached versions; empty when missing or stale (its source changed)
            if not kernel._cache._cache_file._load_index():
                return True
        except Exception:  # pragma: no cover - another numba's layout: say nothing rather than guess
            return False
    return False


def _tiny_csv() -> bytes:
    words = ("order", "refund", "delivery", "phone", "battery", "update", "screen", "service")
    rows = ["user,text"]
    for u in range(WARM_USERS):
        rows.append(f"u{u},{' '.join(words[(u * 3 + k) % len(words)] for k in range(5))} 北京 학교")
    return ("\n".join(rows) + "\n").encode()


def warm() -> None:
    """Load a tiny synthetic corpus and release it once with every mechanism (outputs dropped)."""
    from ..corpus import load_corpus
    from ..mechanisms import get_mechanism, list_mechanisms

    corpus = load_corpus(_tiny_csv(), name="warm-up", user_col="user", text_col="text", korean="eojeol")
    for name, cls in list_mechanisms().items():
        if cls.takes_public_corpus:
            continue
        try:
            get_mechanism(name, epsilon=1.0, delta=1e-6).release(corpus)
        except Exception:  # a mechanism that needs more than its defaults: its kernels are compiled on first use
            continue


def warm_in_background() -> threading.Thread | None:
    """Start ``warm`` in a daemon thread, once per process and only when ``cold()``; the thread (None if not
    started)."""
    global _thread
    with _started:
        if _thread is None and cold():
            _thread = threading.Thread(target=_quietly_warm, name="dpsu-warm", daemon=True)
            _thread.start()
        return _thread


def _quietly_warm() -> None:
    try:
        warm()
    except Exception:  # pragma: no cover - best effort: a release compiles what it needs anyway
        pass
