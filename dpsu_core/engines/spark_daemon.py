"""PySpark's daemon (``pyspark.daemon``) with dpsu's executor code loaded before it forks a Python worker per
task: ``spark.python.daemon.module`` names this module where the executors can import dpsu at start (a local
master, whose workers run the driver's interpreter and import path; a packed environment, ``--spark-archive``).

Without it every Python worker imports dpsu's modules and loads (or compiles) numba's kernels for itself;
with it the daemon imports them once per executor, loads every kernel numba has cached for them (``compile``
of each cached signature: a load, nothing runs) and every worker it forks inherits both. Nothing is run
here: running the steps before the fork crashes the workers (numba's parallel threading layer is not
fork-safe), and the one parallel kernel (``build``'s block sort) is left for each worker to load. A failure
here is not fatal: the workers then import, load and report as usual.

Spark puts its ``pyspark.zip`` and ``py4j-*-src.zip`` first on the executors' import path. Python keeps no
compiled bytecode for modules imported from a zip, so the daemon compiles pyspark's ~100 modules from source
on every start (~1 s of a cold run's first Python job on a busy machine, and again in each forked worker for
``pyspark.worker``). When those zips are a pip-installed pyspark's own (``<site>/pyspark/python/lib/``, a
local master or a packed environment's pyspark), the same package is importable with its bytecode: the zips
go to the end of the path (``prefer_installed_pyspark``), still there for any module the package lacks.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: what the executors' tasks import (``engines.spark`` imports the engine's modules: ``spark_build``'s and
#: ``spark_corpus``'s functions run there; and the core steps they call)
EXECUTOR_MODULES = (
    "dpsu_core.engines.spark",
    "dpsu_core.corpus.build",
    "dpsu_core.corpus.tokenize",
    "dpsu_core.corpus.clean",
    "dpsu_core.corpus.columns",
    "dpsu_core.engines.keyed",
    "dpsu_core.mechanisms.dpsu_step",
    "dpsu_core.mechanisms.sampling",
    "dpsu_core.corpus.overlap",  # a public corpus's content check, made in the first pass (``overlap.row_hits``)
)


def prefer_installed_pyspark(path: list[str]) -> list[str]:
    """``path`` (an import path) with the zips of a pip-installed pyspark (``<dir>/pyspark/python/lib/*.zip``,
    ``<dir>/pyspark`` a package and ``<dir>`` on the path: the same pyspark as the JVM's) moved after every
    other entry; other zips (a Spark distribution's, or a pyspark this path would not import) stay."""
    on_path = {str(Path(e).resolve()) for e in path if e}
    own = []
    for entry in path:
        p = Path(entry)
        lib = p.parent
        if (
            p.suffix == ".zip"
            and lib.name == "lib"
            and lib.parent.name == "python"
            and (lib.parent.parent / "__init__.py").is_file()
            and lib.parent.parent.name == "pyspark"
            and str(lib.parent.parent.parent.resolve()) in on_path
        ):
            own.append(entry)
    return [e for e in path if e not in own] + own


def load_cached_kernels() -> int:
    """Load into this process every signature numba has cached for dpsu's imported kernels (not the parallel
    ones: their threading layer must not start before a fork); returns how many."""
    from numba.core.dispatcher import Dispatcher

    loaded = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("dpsu_core.") or module is None:
            continue
        for obj in list(vars(module).values()):
            cache = getattr(obj, "_cache", None)  # numba's own cache object (not a typed attribute)
            if not isinstance(obj, Dispatcher) or cache is None or obj.targetoptions.get("parallel"):
                continue
            try:
                signatures = [key[0] for key in cache._cache_file._load_index()]
            except Exception:  # noqa: BLE001 - no readable index: the workers load or compile it themselves
                continue
            for sig in signatures:
                obj.compile(sig)
                loaded += 1
    return loaded


def main() -> None:
    if "pyspark" not in sys.modules:
        sys.path[:] = prefer_installed_pyspark(sys.path)
    try:
        import importlib

        for module in EXECUTOR_MODULES:
            importlib.import_module(module)
        load_cached_kernels()
    except Exception:  # noqa: BLE001 - the workers import dpsu themselves and report any problem in one line
        pass
    from pyspark import daemon

    daemon.manager()


if __name__ == "__main__":
    main()
