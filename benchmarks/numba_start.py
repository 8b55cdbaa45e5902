"""The fixed start-up of any process that runs dpsu's compiled kernels, with no work at all: the interpreter,
numpy, Arrow's CSV reader and compute functions, numba, then one call of a tiny cached ``njit`` function. The
first call is where numba's CPU target initializes (its typing and lowering registries; numba's array maths
checks for BLAS there by importing ``scipy.linalg``), so this process pays what every ``dpsu release`` pays
before it can run its first kernel, and nothing else. ``bench_floor`` times it beside the floor: the share
of a target ratio that start-up alone takes.

    python -m benchmarks.numba_start      # prints 2

It ends as ``dpsu`` does (``os._exit`` once the output is flushed, skipping the interpreter's tear-down).
"""

from __future__ import annotations

import os
import sys

import numba
import numpy as np
import pyarrow.compute  # noqa: F401  (dpsu's readers and tokenizer use both)
import pyarrow.csv  # noqa: F401


@numba.njit(cache=True, nogil=True)
def _one(values):  # pragma: no cover - compiled
    return values[0] + 1


if __name__ == "__main__":
    print(_one(np.ones(1, dtype=np.int64)))
    sys.stdout.flush()
    os._exit(0)
