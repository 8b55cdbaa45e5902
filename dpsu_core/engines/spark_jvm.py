"""The driver JVM's start-up: what a short ``dpsu release --engine spark`` spends before Spark runs a task.

A cold driver JVM spends most of its start loading and verifying Spark's classes (tens of thousands, from
some 250 jars) and compiling them with both JIT tiers on a machine whose cores the job needs. Two standard
JVM features cut that (``driver_java_options``):

* **Class data sharing** (JDK 13+ dynamic archives, ``-XX:ArchiveClassesAtExit`` / ``-XX:SharedArchiveFile``):
  the first Spark run of an installation writes the classes it loaded to an archive in the user's cache
  (``~/.cache/dpsu/spark-cds/``, keyed by the Java runtime, the pyspark version and the options), and every
  later run maps it instead of loading the classes again. The archive is written when the JVM exits
  (``finish_archive``, at the Python process's exit: the JVM is asked to exit and waited for) under a
  temporary name and renamed, so a concurrent run never maps half an archive. A stale or foreign archive is
  ignored by the JVM itself (``-Xshare:auto``), silently (``-Xlog:cds=off``).
* **The C1 compiler only, and the serial collector**, for a local master, where the driver JVM is also the
  executor of a short run on few cores: C2's compiler threads and the parallel collector's threads compete
  with the tasks for the cores.

``DPSU_SPARK_CDS=0`` turns the archive off. The user's own ``spark.driver.extraJavaOptions`` come last (the
JVM takes the last of repeated options).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

#: a local master: its driver JVM runs every task of a run on this machine's few cores
LOCAL_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
_QUIET = "-Xlog:cds=off,cds+dynamic=off"
_PENDING: dict[str, Path] = {}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpsu" / "spark-cds"


def _archive_key(options: tuple[str, ...]) -> str:
    """Which archive fits this JVM: the Java runtime (its path and modification time), pyspark's version and
    jars, and the other options (class data sharing needs the same class path and compatible flags)."""
    import pyspark

    java = shutil.which(
        "java", path=os.path.join(os.environ.get("JAVA_HOME", ""), "bin") + os.pathsep + os.environ.get("PATH", "")
    )
    real = os.path.realpath(java) if java else "none"
    stamp = str(os.stat(real).st_mtime_ns) if java else ""
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    h = hashlib.blake2b(digest_size=8)
    for part in (real, stamp, pyspark.__version__, str(jars), " ".join(options)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def driver_java_options(local: bool, user_options: str = "") -> str:
    """``spark.driver.extraJavaOptions`` for a new session (see the module's docstring)."""
    options = LOCAL_OPTIONS if local else ()
    parts = list(options)
    if os.environ.get("DPSU_SPARK_CDS", "1") != "0":
        parts += _archive_options(options)
    if user_options:
        parts.append(user_options)
    return " ".join(parts)


def _archive_options(options: tuple[str, ...]) -> list[str]:
    folder = cache_dir()
    archive = folder / f"{_archive_key(options)}.jsa"
    if archive.is_file():
        return ["-Xshare:auto", f"-XX:SharedArchiveFile={archive}", _QUIET]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:  # no cache to write to: no archive
        return []
    if not os.access(folder, os.W_OK):
        return []
    tmp = folder / f"{archive.name}.{os.getpid()}.tmp"
    _PENDING.update(archive=archive, tmp=tmp)
    atexit.register(finish_archive)
    return [f"-XX:ArchiveClassesAtExit={tmp}", _QUIET]


def finish_archive(timeout: float = 120.0) -> None:
    """When this process asked its JVM to write an archive: stop Spark, let the JVM exit (it exits when its
    stdin closes) and write the archive, then rename it into place. Runs at exit; never raises."""
    if "tmp" not in _PENDING:
        return
    tmp, archive = _PENDING.pop("tmp"), _PENDING.pop("archive")
    try:
        from pyspark import SparkContext

        proc: Any = getattr(SparkContext._gateway, "proc", None)
        active = SparkContext._active_spark_context
        if active is not None:
            active.stop()
        if proc is not None and proc.stdin is not None:
            proc.stdin.close()
            proc.wait(timeout)
        if tmp.is_file() and tmp.stat().st_size > 0:
            os.replace(tmp, archive)
    except Exception:  # noqa: BLE001 - an archive is an optimisation: without it the next run loads classes
        pass
    finally:
        tmp.unlink(missing_ok=True)
