"""The corpus fingerprint on 10M users (a 2.3 GB CSV and its changed copy): ``bench_fingerprint`` at that size.

python -m benchmarks.run fingerprint_10m    # run on its own (one loaded 10M corpus at a time)
"""

from __future__ import annotations

from benchmarks.bench_fingerprint import run as _run


def run() -> dict:
    return _run(10_000_000)


if __name__ == "__main__":
    print(run())
