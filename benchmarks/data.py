"""Where the benchmarks find their data: the shared folder beside the repository (``../shared/data``), or
the folder named by the environment variable ``DPSU_SHARED_DATA``. Not part of the repository."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("DPSU_SHARED_DATA") or REPO.parent / "shared" / "data")
MSNBC = SHARED_DATA / "msnbc990928.zip"  # UCI MSNBC.com anonymous web data (989,818 users)
