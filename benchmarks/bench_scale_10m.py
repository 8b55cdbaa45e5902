"""The 10M-user point of the scale benchmark (``bench_scale.run_10m``), a section of its own: it needs
about 12 GB at peak, so ``python -m benchmarks.run`` leaves it out unless it is named."""

from benchmarks.bench_scale import run_10m as run

__all__ = ["run"]
