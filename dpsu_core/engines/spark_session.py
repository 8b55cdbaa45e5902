"""The Spark session of the Spark engine: workers that run the driver's dpsu, and Spark's errors in one line.

* A ``local[...]`` master starts its Python workers on this machine: they run the driver's own interpreter
  (``sys.executable``, so a virtual environment works without being activated) with the driver's import
  path, so they import the very ``dpsu_core`` the driver runs.
* Any other master (``spark://``, ``yarn``, ``k8s://``): the executors may not have dpsu at all. The driver
  zips its ``dpsu_core`` package and adds it to the Spark context (``addPyFile``), then runs one small job
  that imports it on the executors together with its dependencies (numpy, pyarrow, numba) and compares
  versions; when that fails the user gets one line saying what to install where.
* Errors raised by Spark (a Python exception on an executor, a Java exception in the JVM) reach the user as
  one line: the Python exception's last line, or the first line of the Java message, never a stack.

pyspark is imported only inside functions.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import DpsuError, InputError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_MASTER = "local[2]"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # .../dpsu_core


class SparkError(InputError):
    """Spark failed (on the executors or in the JVM): the cause in one line."""


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def loopback(master: str) -> bool:
    """A local master, or a cluster on this machine's loopback address: the driver binds to 127.0.0.1 only."""
    if is_local(master):
        return True
    host = master.split("://", 1)[-1].split(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


_LOG: dict[str, str] = {}


@contextlib.contextmanager
def _jvm_output_to_log():
    """Send what the JVM and its Python workers print (log4j warnings, Java stacks) to a log file instead of
    the terminal: the JVM inherits file descriptor 2 when it starts. The user sees dpsu's one-line messages;
    the log's path is named in them."""
    fd, path = tempfile.mkstemp(prefix="dpsu-spark-", suffix=".log")
    _LOG["path"] = path
    saved = os.dup(2)
    try:
        sys.stderr.flush()
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def _see_log() -> str:
    return f" (Spark's log: {_LOG['path']})" if "path" in _LOG else ""


def _driver_path() -> str:
    """The driver's import path as a PYTHONPATH: dpsu_core's own folder first, then the driver's sys.path."""
    entries = [str(_PACKAGE_DIR.parent)] + [p for p in sys.path if p and Path(p).exists()]
    return os.pathsep.join(dict.fromkeys(entries))


def spark_session(
    master: str | None = None, *, shuffle_partitions: int | None = None, conf: dict[str, str] | None = None
) -> SparkSession:
    """The active SparkSession, or a new one on ``master`` (default ``local[2]``) without the web UI, whose
    workers run the driver's dpsu (see the module's docstring); ``conf``: more Spark settings."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - depends on the installation
        raise InputError(
            "the Spark engine needs pyspark and Java 17: pip install 'dpsu[spark]' and install a Java 17 runtime "
            "(e.g. apt-get install openjdk-17-jre-headless)"
        ) from None
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    master = master or DEFAULT_MASTER
    local = is_local(master)
    builder = (
        SparkSession.builder.appName("dpsu")
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions or 4))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "20000")
        .config("spark.sql.execution.pyspark.udf.faulthandler.enabled", "false")
        .config("spark.python.worker.faulthandler.enabled", "false")
    )
    if loopback(master):  # nothing of this session listens beyond this machine
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    if local:  # the workers are children of this JVM: the driver's interpreter and import path
        builder = builder.config("spark.pyspark.python", sys.executable).config(
            "spark.executorEnv.PYTHONPATH", _driver_path()
        )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    # pyspark warns on every Arrow function that it does not yet support pandas 3; dpsu does not use pandas there
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    saved = os.environ.get("PYSPARK_PYTHON")
    if local:
        os.environ["PYSPARK_PYTHON"] = sys.executable  # read once, when the SparkContext starts
    try:
        with _jvm_output_to_log():
            spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start, or the master is unreachable
        raise SparkError(f"Spark did not start on master {master!r}: {one_line(exc)}{_see_log()}") from None
    finally:
        if local and saved is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        elif local and saved is not None:
            os.environ["PYSPARK_PYTHON"] = saved
    spark.sparkContext.setLogLevel("ERROR")
    if not local:
        ship_package(spark)
    return spark


# --------------------------------------------------------------------------- shipping dpsu_core
def package_zip(folder: str | os.PathLike[str]) -> Path:
    """``dpsu_core`` as a zip in ``folder`` (sources only, no caches): what ``addPyFile`` ships."""
    out = Path(folder) / "dpsu_core.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(_PACKAGE_DIR.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".nbi", ".nbc"):
                z.write(f, Path("dpsu_core") / f.relative_to(_PACKAGE_DIR))
    return out


def ship_package(spark: SparkSession) -> None:
    """Add the driver's dpsu_core to the Spark context and check that every executor imports it with its
    dependencies; raise a one-line ``SparkError`` saying what to do when one cannot."""
    import dpsu_core

    sc = spark.sparkContext
    if sc.getConf().get("spark.dpsu.shipped", "") != "yes":
        folder = tempfile.mkdtemp(prefix="dpsu-ship-")
        sc.addPyFile(str(package_zip(folder)))
        sc.getConf().set("spark.dpsu.shipped", "yes")
    n = max(int(sc.defaultParallelism), 2)
    try:
        answers = sc.parallelize(range(n), n).map(_probe).distinct().collect()
    except Exception as exc:
        raise SparkError(_cannot_import(one_line(exc))) from None
    for answer in answers:
        if answer.startswith("error:"):
            raise SparkError(_cannot_import(answer[len("error:") :].strip()))
        if answer != dpsu_core.__version__:
            raise SparkError(
                f"the Spark executors run dpsu {answer}, the driver {dpsu_core.__version__}; install the driver's "
                f"version on the executors (pip install 'dpsu[spark]=={dpsu_core.__version__}') or remove theirs"
            )


def _probe(_: int) -> str:  # runs on an executor
    try:
        import numba  # noqa: F401
        import numpy  # noqa: F401
        import pyarrow  # noqa: F401

        import dpsu_core
        import dpsu_core.engines.spark  # noqa: F401

        return str(dpsu_core.__version__)
    except Exception as exc:  # noqa: BLE001 - reported to the driver in one line
        return f"error: {type(exc).__name__}: {exc}"


def _cannot_import(cause: str) -> str:
    return (
        f"the Spark executors cannot run dpsu ({cause}); install dpsu's dependencies on every executor "
        "(pip install 'dpsu[spark]'), or set PYSPARK_PYTHON to a Python that has them"
    )


# --------------------------------------------------------------------------- errors in one line
def one_line(exc: BaseException) -> str:
    """The cause of a Spark failure in one line: the last line of a Python traceback inside it (the Python
    exception), else the first line of its message; the JVM's class prefixes dropped."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if "Traceback (most recent call last)" in text:
        start = max(i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last)"))
        block = lines[start + 1 :]
        # the exception line is the first line after the traceback's frames that is not a frame or source
        for ln in block:
            if not ln.startswith(("File ", "^", "~")) and not _is_source_line(ln, block):
                return _strip_java(ln)
    if not lines:
        return type(exc).__name__
    return _strip_java(lines[0])[:300]


def _is_source_line(line: str, block: list[str]) -> bool:
    i = block.index(line)
    return i > 0 and block[i - 1].startswith("File ")


def _strip_java(line: str) -> str:
    for prefix in ("org.apache.spark.api.python.PythonException: ", "py4j.protocol.Py4JJavaError: "):
        line = line.replace(prefix, "")
    return line


def spark_errors(fn: F) -> F:
    """Decorator: a failure inside Spark leaves ``fn`` as a one-line ``SparkError`` (dpsu's own errors pass)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DpsuError:
            raise
        except Exception as exc:
            if not _from_spark(exc):
                raise
            raise SparkError(f"Spark failed: {one_line(exc)}{_see_log()}") from None

    return wrapper  # type: ignore[return-value]


def _from_spark(exc: BaseException) -> bool:
    mod = type(exc).__module__ or ""
    return mod.startswith(("pyspark", "py4j")) or "Py4J" in type(exc).__name__
