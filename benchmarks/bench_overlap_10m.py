"""The content check of public files on 10M users (two 2.3 GB CSVs): ``bench_overlap`` at that size.

python -m benchmarks.run overlap_10m    # run on its own (about 6 GB at peak)
"""

from __future__ import annotations

from benchmarks.bench_overlap import run as _run


def run() -> dict:
    return _run(10_000_000, loads=False)


if __name__ == "__main__":
    print(run())
