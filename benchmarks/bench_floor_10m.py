"""The 10M-user point of the floor benchmark (``bench_floor.run_10m``), a section of its own: a 2.3 GB CSV
and several minutes, so ``python -m benchmarks.run`` leaves it out unless it is named."""

from benchmarks.bench_floor import run_10m as run

__all__ = ["run"]
