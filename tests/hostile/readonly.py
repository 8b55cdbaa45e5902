"""A folder made read-only for the test, even when the tests run as root (as in CI containers): permission bits
do not stop root, so there the folder is made immutable (``chattr +i``), which does."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _refuses_new_files(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.write_bytes(b"")
    except OSError:
        return True
    probe.unlink()
    return False


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """``folder`` refuses new files inside the block (skips the test where this machine cannot make it so)."""
    mode = folder.stat().st_mode
    os.chmod(folder, 0o555)
    immutable = False
    try:
        if not _refuses_new_files(folder) and shutil.which("chattr"):
            immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
        if not _refuses_new_files(folder):
            pytest.skip("cannot make a folder read-only here (root without chattr)")
        yield folder
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        os.chmod(folder, mode)
