"""PySpark's daemon (``pyspark.daemon``) with dpsu's executor code loaded before it forks a Python worker per
task: ``spark.python.daemon.module`` names this module where the executors can import dpsu at start (a local
master, whose workers run the driver's interpreter and import path; a packed environment, ``--spark-archive``).

Without it every Python worker imports dpsu's modules and loads (or compiles) numba's kernels for itself;
with it the daemon imports them once per executor and every worker it forks inherits them. Only imports:
running the steps here (Arrow's thread pools, numba's threading layer) before the fork crashes the workers,
so each worker still loads the kernels it calls from numba's cache. A failure here is not fatal: the workers
then import and report as usual.
"""

from __future__ import annotations

#: what the executors' tasks import (``engines.spark``'s functions and the core steps they call)
EXECUTOR_MODULES = (
    "dpsu_core.engines.spark",
    "dpsu_core.corpus.build",
    "dpsu_core.corpus.tokenize",
    "dpsu_core.corpus.clean",
    "dpsu_core.corpus.columns",
    "dpsu_core.engines.keyed",
    "dpsu_core.mechanisms.dpsu_step",
    "dpsu_core.mechanisms.sampling",
)


def main() -> None:
    try:
        import importlib

        for module in EXECUTOR_MODULES:
            importlib.import_module(module)
    except Exception:  # noqa: BLE001 - the workers import dpsu themselves and report any problem in one line
        pass
    from pyspark import daemon

    daemon.manager()


if __name__ == "__main__":
    main()
