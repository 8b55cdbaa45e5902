"""Issue 38's floating-point items where the CLI shows them (real subprocesses): a delta share below the float range
is named by its exact value. (The rounding of negative thresholds is below the CLI's six printed digits:
``test_safe_rounding`` checks it through the mechanisms' calibrations.)"""

from __future__ import annotations

import subprocess
import sys


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_an_underflowed_delta_share_is_named_by_its_exact_value():
    proc = _cli("calibrate", "-m", "dp-sips", "-e", "3", "-d", "1e-250", "--rounds", "20", "--ratio", "1e-6")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "round 1's share of it (5e-365)" in lines[0] and "(0)" not in lines[0]
