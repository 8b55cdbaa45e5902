"""Calibrations computed once and kept on disk, each re-verified when it is read back (``kept``; the analytic
Gaussian's check is ``gaussian.gaussian_sigma``).

The analytic Gaussian's sigma takes a float root search (scipy) and a 60-digit check (mpmath) that
cost far more than a small release; the result depends only on (epsilon, delta, sensitivity). It is
kept in one small JSON file per calibration in the user's cache folder:

    $DPSU_CACHE_DIR, else $XDG_CACHE_HOME/dpsu, else ~/.cache/dpsu   (then calibrations/)

Nothing read back is trusted: an entry whose inputs differ from the ones asked for (a hash clash, an
older format), that does not parse, or whose sigma fails the same exact check the search ends with
(delta(sigma) <= delta at 60 digits, ``gaussian_delta_exact``) is recomputed and rewritten. The check
costs two evaluations of delta, not a search: the second confirms the entry is still the smallest
sigma to a relative 2^-40, so a corrupted, needlessly large sigma does not silently cost utility.
Writes go to a temporary file in the same folder, then ``os.replace``: concurrent runs each write a
whole file and the last one wins; a reader never sees half an entry. A folder that cannot be
written is no error: the calibration is then computed every time, as without the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

FORMAT = 1  # bump when the meaning of an entry changes: older entries then miss
MINIMAL_REL = 2.0**-40  # a kept sigma must fail the check once lowered by this much (it is the smallest)


def cache_dir() -> Path:
    """The folder calibrations are kept in (not created here)."""
    root = os.environ.get("DPSU_CACHE_DIR")
    if root:
        return Path(root) / "calibrations"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) / "dpsu" if xdg else Path.home() / ".cache" / "dpsu"
    return base / "calibrations"


def _key(kind: str, inputs: dict[str, float]) -> dict:
    # float.hex: the exact value of every input, no rounding in the key
    return {"format": FORMAT, "kind": kind, "inputs": {k: float(v).hex() for k, v in sorted(inputs.items())}}


def _path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"{key['kind']}-{digest}.json"


def _read(path: Path, key: dict) -> float | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry.get("key") != key:
            return None
        value = float.fromhex(entry["value"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return value


def _write(path: Path, key: dict, value: float) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"key": key, "value": value.hex()}, f)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return  # no cache folder: compute every time


def kept(kind: str, inputs: dict[str, float], compute: Callable[[], float], holds: Callable[[float], bool]) -> float:
    """The kept value for ``inputs`` when there is one and ``holds(value)``; else ``compute()``, kept.

    ``holds`` is the re-verification: a value read back that fails it is never returned."""
    key = _key(kind, inputs)
    path = _path(key)
    value = _read(path, key)
    if value is not None and holds(value):
        return value
    value = compute()
    _write(path, key, value)
    return value
