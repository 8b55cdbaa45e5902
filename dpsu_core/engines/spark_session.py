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
import re
import socket
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import DpsuError, InputError
from .spark_jvm import driver_java_options

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_MASTER = "local[2]"
DAEMON_MODULE = "dpsu_core.engines.spark_daemon"
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


_LOCAL_MASTER = re.compile(r"local(\[(\*|\d+)(,\s*\d+)?\])?")
_MASTERS = "local[N], local[*], spark://HOST:PORT, yarn or k8s://https://HOST:PORT"
_CONNECT_TIMEOUT = 5.0


def check_master(master: str) -> None:
    """Refuse, before any JVM starts, a master that is malformed, asks for absurdly many local threads (Spark
    would split every input into that many tasks) or names a standalone master nobody answers at."""
    m = _LOCAL_MASTER.fullmatch(master)
    if master.startswith("local"):
        if m is None:
            raise SparkError(f"the Spark master {master!r} is malformed; give {_MASTERS}")
        threads = m.group(2)
        most = max(64, 8 * (os.cpu_count() or 1))
        if threads not in (None, "*") and not 1 <= int(threads) <= most:
            raise SparkError(
                f"the Spark master {master!r} asks for {int(threads):,} local threads; give 1 to {most} "
                f"(this machine has {os.cpu_count()} cores), or local[*] for one per core"
            )
        return
    if master == "yarn" or master.startswith("k8s://"):
        return
    if not master.startswith("spark://"):
        raise SparkError(f"the Spark master {master!r} is not a master URL Spark knows; give {_MASTERS}")
    errors = []
    for hostport in master[len("spark://") :].split(","):
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise SparkError(f"the Spark master {master!r} is malformed (HOST:PORT expected); give {_MASTERS}")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=_CONNECT_TIMEOUT).close()
            return
        except OSError as exc:
            errors.append(f"{hostport}: {exc.strerror or type(exc).__name__}")
    raise SparkError(
        f"cannot reach the Spark master {master!r} ({'; '.join(errors)}); check that it runs and the URL is right"
    )


_LOG: dict[str, str] = {}


@contextlib.contextmanager
def _jvm_output_to_log():
    """Send what the JVM and its Python workers print (log4j warnings, Java stacks) to a log file instead of
    the terminal: the JVM inherits file descriptors 1 and 2 when it starts. The user sees dpsu's one-line
    messages (and dpsu's standard output only dpsu's own); the log's path is named in them. The JVM then holds
    neither of the command's streams, so whoever reads them is done when dpsu exits, not when the JVM has
    finished shutting down after it."""
    fd, path = tempfile.mkstemp(prefix="dpsu-spark-", suffix=".log")
    _LOG["path"] = path
    saved = {n: os.dup(n) for n in (1, 2)}
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        for n in saved:
            os.dup2(fd, n)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for n, dup in saved.items():
            os.dup2(dup, n)
            os.close(dup)
        os.close(fd)


def _see_log() -> str:
    return f" (Spark's log: {_LOG['path']})" if "path" in _LOG else ""


def _driver_path() -> str:
    """The driver's import path as a PYTHONPATH: dpsu_core's own folder first, then the driver's sys.path."""
    entries = [str(_PACKAGE_DIR.parent)] + [p for p in sys.path if p and Path(p).exists()]
    return os.pathsep.join(dict.fromkeys(entries))


def _session_class() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - depends on the installation
        raise InputError(
            "the Spark engine needs pyspark and Java 17: pip install 'dpsu[spark]' and install a Java 17 runtime "
            "(e.g. apt-get install openjdk-17-jre-headless)"
        ) from None
    return SparkSession


def _sql_conf(shuffle_partitions: int | None) -> dict[str, str]:
    """The session's SQL settings (set at start, or at run time on Spark Connect)."""
    return {
        "spark.sql.shuffle.partitions": str(shuffle_partitions or 4),
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "20000",
        "spark.sql.execution.pyspark.udf.faulthandler.enabled": "false",
    }


def spark_session(
    master: str | None = None,
    *,
    shuffle_partitions: int | None = None,
    conf: dict[str, str] | None = None,
    remote: str | None = None,
    archive: str | None = None,
) -> SparkSession:
    """The active SparkSession, or a new one on ``master`` (default ``local[2]``) without the web UI, whose
    workers run the driver's dpsu (see the module's docstring); ``conf``: more Spark settings.

    ``remote``: a Spark Connect server ``sc://HOST:PORT`` instead (``connect_session``). ``archive``: a packed
    environment (``dpsu spark-env``) the executors unpack (``spark.archives``) and run their Python from."""
    if remote is not None:
        return connect_session(remote, shuffle_partitions=shuffle_partitions, conf=conf)
    SparkSession = _session_class()
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    master = master or DEFAULT_MASTER
    check_master(master)
    local = is_local(master)
    builder = (
        SparkSession.builder.appName("dpsu")
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.python.worker.faulthandler.enabled", "false")
    )
    for key, value in _sql_conf(shuffle_partitions).items():
        builder = builder.config(key, value)
    python = sys.executable if local else None
    if archive is not None:
        python = _archive_python(archive, local)
        builder = builder.config("spark.archives", f"{Path(archive).resolve().as_uri()}#{ARCHIVE_DIR}")
    if local or archive is not None:  # the executors import dpsu at start: one daemon loads it for every worker
        builder = builder.config("spark.python.daemon.module", DAEMON_MODULE)
    if loopback(master):  # nothing of this session listens beyond this machine
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    if local:  # the workers are children of this JVM: the driver's interpreter and import path
        builder = builder.config("spark.pyspark.python", sys.executable).config(
            "spark.executorEnv.PYTHONPATH", _driver_path()
        )
    conf = dict(conf or {})
    java_options = driver_java_options(local, conf.pop("spark.driver.extraJavaOptions", ""))
    if java_options:  # class data sharing and, on a local master, a JIT and collector for short runs
        builder = builder.config("spark.driver.extraJavaOptions", java_options)
    for key, value in conf.items():
        builder = builder.config(key, value)
    # pyspark warns on every Arrow function that it does not yet support pandas 3; dpsu does not use pandas there
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    saved = os.environ.get("PYSPARK_PYTHON")
    if python is not None:
        os.environ["PYSPARK_PYTHON"] = python  # read once, when the SparkContext starts
    try:
        with _jvm_output_to_log():
            spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start, or the master is unreachable
        raise SparkError(f"Spark did not start on master {master!r}: {one_line(exc)}{_see_log()}") from None
    finally:
        if python is not None and saved is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        elif python is not None and saved is not None:
            os.environ["PYSPARK_PYTHON"] = saved
    spark.sparkContext.setLogLevel("ERROR")
    if not local:
        ship_package(spark, archive=archive is not None)
    return spark


#: where the executors unpack ``--spark-archive`` (``spark.archives``' ``#name``), and their Python in it
ARCHIVE_DIR = "env"
ARCHIVE_PYTHON = f"./{ARCHIVE_DIR}/bin/python"


def _archive_python(archive: str, local: bool) -> str:
    if local:
        raise SparkError(
            "--spark-archive ships a Python environment to a cluster's executors; a local master's workers run "
            "this Python: drop it, or give --spark-master spark://..., yarn or k8s://..."
        )
    if not Path(archive).is_file() or not archive.endswith((".tar.gz", ".tgz", ".zip")):
        raise SparkError(
            f"--spark-archive {archive!r} is not a packed environment (.tar.gz); make one with: dpsu spark-env "
            "dpsu-env.tar.gz"
        )
    return ARCHIVE_PYTHON


_REMOTE_RE = re.compile(r"sc://(\[[^\]]+\]|[^:/;]+)(?::(\d+))?(?:/.*)?")


def check_remote(remote: str) -> tuple[str, int]:
    """(host, port) of a Spark Connect URL, refused in one line when malformed or when nothing answers there."""
    m = _REMOTE_RE.fullmatch(remote)
    if m is None or (m.group(2) is not None and not 0 < int(m.group(2)) < 65536):
        raise SparkError(f"the Spark Connect URL {remote!r} is malformed; give sc://HOST:PORT (default port 15002)")
    host, port = m.group(1).strip("[]"), int(m.group(2) or 15002)
    try:
        socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise SparkError(
            f"cannot reach the Spark Connect server {remote!r} ({exc.strerror or type(exc).__name__}); check that it "
            "runs and the URL is right"
        ) from None
    return host, port


#: how long (seconds) each network step of Spark Connect may wait for the server before the run is refused in one
#: line: the session's start and configuration, shipping dpsu_core, a cancel; set by this environment variable
CONNECT_TIMEOUT_ENV = "DPSU_SPARK_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT = 30.0
_MAX_CONNECT_TIMEOUT = 86_400.0


def connect_timeout() -> float:
    """The time limit of each Spark Connect network step (``CONNECT_TIMEOUT_ENV``, else 30 s)."""
    raw = os.environ.get(CONNECT_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_CONNECT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= _MAX_CONNECT_TIMEOUT:  # NaN fails too
        raise SparkError(
            f"{CONNECT_TIMEOUT_ENV}={raw[:40]!r} is not a number of seconds above 0 and at most "
            f"{_MAX_CONNECT_TIMEOUT:,.0f}; give e.g. {CONNECT_TIMEOUT_ENV}=60, or unset it for "
            f"{DEFAULT_CONNECT_TIMEOUT:.0f} s"
        )
    return value


def _connect_step(remote: str, what: str, job: Callable[[], Any], holder: dict[str, Any]) -> Any:
    """``job()`` (a network step of Spark Connect), refused in one line when the server gives no answer within
    ``connect_timeout()``: the step runs in a thread, and on time-out the session's client (``holder["spark"]``,
    once the job made it) is closed, which ends the waiting call and keeps pyspark's exit hooks from waiting on
    the same server."""
    import threading

    seconds = connect_timeout()
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = job()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            out["error"] = exc

    t = threading.Thread(target=run, name="dpsu-spark-connect", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        abandon(holder.get("spark"))
        raise SparkError(
            f"the Spark Connect server {remote!r} accepted the connection but gave no answer within {seconds:g} s "
            f"while dpsu {what}; check that a Spark Connect server (not another service) listens there and is not "
            f"overloaded, or allow more time with {CONNECT_TIMEOUT_ENV}=SECONDS"
        )
    if "error" in out:
        raise out["error"]
    return out["value"]


def abandon(spark: Any) -> None:
    """Close a Spark Connect session's client without a word to its server (it did not answer): the calls still
    waiting end, and pyspark's exit hooks, which skip a closed client, send it nothing more."""
    client = getattr(spark, "client", None) if spark is not None else None
    if client is None:
        return
    try:
        client.close()
    except Exception:  # noqa: BLE001 - closing a channel to a server that does not answer: nothing to add
        pass


def connect_session(
    remote: str, *, shuffle_partitions: int | None = None, conf: dict[str, str] | None = None
) -> SparkSession:
    """A Spark Connect session on ``remote`` (``sc://HOST:PORT``): DataFrame and Arrow operations only, no
    SparkContext; dpsu_core shipped with ``addArtifacts`` and checked on the executors (``ship_package``). Each
    network step has a time limit (``connect_timeout``)."""
    connect_timeout()  # a bad limit is refused before anything else
    check_remote(remote)
    SparkSession = _session_class()
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    holder: dict[str, Any] = {}

    def start() -> Any:
        spark = holder["spark"] = SparkSession.builder.remote(remote).getOrCreate()
        for key, value in {**_sql_conf(shuffle_partitions), **(conf or {})}.items():
            spark.conf.set(key, value)
        return spark

    try:
        spark = _connect_step(remote, "started the session", start, holder)
    except ImportError as exc:
        raise SparkError(f"Spark Connect needs pyspark's connect extra ({exc}): pip install 'dpsu[spark]'") from None
    except SparkError:
        raise
    except Exception as exc:
        abandon(holder.get("spark"))
        raise SparkError(f"the Spark Connect server {remote!r} did not take the session: {one_line(exc)}") from None
    _REMOTE["url"] = remote
    ship_package(spark)
    return spark


def is_connect(spark: Any) -> bool:
    """A Spark Connect session (DataFrame and Arrow operations only: no SparkContext)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def master_of(spark: Any) -> str:
    """The session's master as a user names it (a Spark Connect session: its server)."""
    if is_connect(spark):
        return f"Spark Connect {_REMOTE.get('url', '')}".strip()
    return str(spark.sparkContext.master)


_REMOTE: dict[str, str] = {}


# --------------------------------------------------------------------------- shipping dpsu_core
def package_zip(folder: str | os.PathLike[str]) -> Path:
    """``dpsu_core`` as a zip in ``folder`` (sources only, no caches): what ``addPyFile`` ships."""
    out = Path(folder) / "dpsu_core.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(_PACKAGE_DIR.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".nbi", ".nbc"):
                z.write(f, Path("dpsu_core") / f.relative_to(_PACKAGE_DIR))
    return out


def ship_package(spark: SparkSession, *, archive: bool = False) -> None:
    """Ship the driver's dpsu_core to the executors (``addPyFile``; Spark Connect: ``addArtifacts``) and check
    that every executor imports it with its dependencies; raise a one-line ``SparkError`` saying what to do when
    one cannot. ``archive``: the executors run a packed environment (``spark_env``) holding dpsu and its compiled
    kernels; nothing is shipped, and its dpsu must be the driver's (the same sources, by digest)."""
    import functools

    import dpsu_core

    want = f"{dpsu_core.__version__} {source_digest(_PACKAGE_DIR)}" if archive else dpsu_core.__version__
    probe = functools.partial(_probe, digest=archive)
    if is_connect(spark):  # no SparkContext: the zip as a session artifact, the probe as an Arrow job
        zipped = str(package_zip(tempfile.mkdtemp(prefix="dpsu-ship-")))
        remote = _REMOTE.get("url", "")
        _connect_step(remote, "sent dpsu_core to it", lambda: spark.addArtifacts(zipped, pyfile=True), {"spark": spark})

        def connect_job() -> list[str]:
            df = spark.range(0, 2, 1, 2).mapInArrow(_probe_batches, "v string").distinct()
            return [r[0] for r in df.collect()]

        def cancel() -> None:  # the interrupt is a network step too: bounded, and the session closed after it
            try:
                _connect_step(remote, "cancelled its probe job", spark.interruptAll, {"spark": spark})
            except Exception:  # noqa: BLE001 - the time-out below is what the user hears
                pass
            abandon(spark)

        answers = _within(connect_job, cancel, PROBE_SECONDS)
    else:
        sc = spark.sparkContext
        if not archive and sc.getConf().get("spark.dpsu.shipped", "") != "yes":
            folder = tempfile.mkdtemp(prefix="dpsu-ship-")
            sc.addPyFile(str(package_zip(folder)))
            sc.getConf().set("spark.dpsu.shipped", "yes")
        n = max(int(sc.defaultParallelism), 2)
        job = lambda: sc.parallelize(range(n), n).map(probe).distinct().collect()  # noqa: E731
        answers = _within(job, sc.cancelAllJobs, PROBE_SECONDS)
    for answer in answers:
        if answer.startswith("error:"):
            raise SparkError(_cannot_import(answer[len("error:") :].strip(), archive))
        if answer != want:
            if archive and answer.split()[0] == dpsu_core.__version__:
                raise SparkError(
                    "the archive's dpsu has other sources than the driver's (the same version, edited since); "
                    "pack it again: dpsu spark-env OUT.tar.gz"
                )
            raise SparkError(
                f"the Spark executors run dpsu {answer.split()[0]}, the driver {dpsu_core.__version__}; install the "
                f"driver's version on the executors (pip install 'dpsu[spark]=={dpsu_core.__version__}') or remove "
                "theirs"
            )


def source_digest(package: Path) -> str:
    """A digest of dpsu_core's Python sources (which code runs, whatever the version says)."""
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    for f in sorted(package.rglob("*.py")):
        if "__pycache__" not in f.parts:
            h.update(f.relative_to(package).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


PROBE_SECONDS = 90.0


def _within(job: Callable[[], Any], cancel: Callable[[], Any], seconds: float) -> Any:
    """``job()``, cancelled with a one-line error when the cluster gives it no executor within ``seconds``."""
    import threading

    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = job()
        except Exception as exc:  # noqa: BLE001 - reported below in one line
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        cancel()
        raise SparkError(
            f"the Spark cluster ran no task within {seconds:.0f} s (no worker with a free core and enough memory?); "
            f"check its workers{_see_log()}"
        )
    if "error" in out:
        raise SparkError(_cannot_import(one_line(out["error"])))
    return out["value"]


def _probe_batches(batches):  # runs on an executor (Spark Connect: an Arrow job)
    import pyarrow as pa

    for _ in batches:
        pass
    yield pa.RecordBatch.from_arrays([pa.array([_probe(0)])], names=["v"])


def _probe(_: int, digest: bool = False) -> str:  # runs on an executor
    try:
        import numba  # noqa: F401
        import numpy  # noqa: F401
        import pyarrow  # noqa: F401

        import dpsu_core
        import dpsu_core.corpus.build  # noqa: F401  (what the executors run: the core build and keyed sampling)
        import dpsu_core.engines.keyed  # noqa: F401

        if digest:
            return f"{dpsu_core.__version__} {source_digest(Path(dpsu_core.__file__).resolve().parent)}"
        return str(dpsu_core.__version__)
    except Exception as exc:  # noqa: BLE001 - reported to the driver in one line
        return f"error: {type(exc).__name__}: {exc}"


def _cannot_import(cause: str, archive: bool = False) -> str:
    if archive:
        return (
            f"the Spark executors cannot run dpsu from the archive ({cause}); pack an environment that has dpsu and "
            "its dependencies: dpsu spark-env OUT.tar.gz (see docs/spark.md)"
        )
    return (
        f"the Spark executors cannot run dpsu ({cause}); ship a packed environment (dpsu spark-env OUT.tar.gz, "
        "then --spark-archive OUT.tar.gz), install dpsu's dependencies on every executor (pip install "
        "'dpsu[spark]'), or set PYSPARK_PYTHON to a Python that has them"
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
