"""``dpsu spark-env OUT.tar.gz``: a Python environment packed for a cluster's executors.

Clusters (YARN, Kubernetes, a standalone cluster, most managed platforms) take a Python environment as an
archive: Spark unpacks it in each executor's working folder (``spark.archives``, ``ARCHIVE#env``) and the
Python workers run ``./env/bin/python``. This module packs one:

* a virtual environment with venv-pack, a conda environment with conda-pack (``--prefix``: another
  environment than the running one); an environment that is neither is refused in one line saying how to make
  one. dpsu must be installed in it as a regular package (``pip install dpsu`` or ``pip install --no-deps .``),
  not editable: venv-pack and conda-pack pack files, and the executors import dpsu from the archive;
* before packing, the environment's own Python runs the executors' code once on a small corpus (``warm``), so
  numba's compiled kernels are cached beside dpsu's modules (``__pycache__``, relocatable: tar keeps the
  sources' times) and every executor loads them instead of compiling (numba recompiles only on another CPU).

venv-pack keeps the environment's link to its base Python: every executor needs that base Python at the same
path (conda-pack ships Python itself). The driver checks, before any job, that the executors' dpsu is the
driver's (``spark_session.ship_package``: the same sources, by digest).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..errors import InputError, OutputError, short_name
from ..outputs.writer import check_output_paths


def environment_kind(prefix: Path) -> str:
    """'conda' or 'venv' (refused otherwise, in one line)."""
    if (prefix / "conda-meta").is_dir():
        return "conda"
    if (prefix / "pyvenv.cfg").is_file():
        return "venv"
    raise InputError(
        f"{short_name(str(prefix))} is neither a virtual environment nor a conda environment, so it cannot be packed "
        "for the executors; make one: python -m venv dpsu-env && dpsu-env/bin/pip install 'dpsu[spark]', then run "
        "dpsu-env/bin/dpsu spark-env OUT.tar.gz (or give --prefix dpsu-env)"
    )


def _python(prefix: Path) -> Path:
    return prefix / "bin" / "python"


def check_output(out: Path, prefix: Path) -> None:
    if not out.name.endswith((".tar.gz", ".tgz")):
        raise OutputError(
            f"{short_name(out.name)}: the packed environment is a .tar.gz file; name it e.g. dpsu-env.tar.gz"
        )
    if prefix.resolve() in out.resolve().parents:
        raise OutputError(f"{short_name(str(out))} is inside the environment it packs; write it elsewhere")
    check_output_paths({"the packed environment": out}, {})  # a folder in the way, a missing or read-only folder


def pack_environment(out: str, prefix: str | None = None) -> str:
    """Pack the environment at ``prefix`` (default: the running one) into ``out``; returns a one-line summary."""
    env = Path(prefix or sys.prefix).resolve()
    target = Path(out)
    check_output(target, env)
    kind = environment_kind(env)
    _check_dpsu_installed(env)
    warm_environment(env)
    tmp = target.with_name(f".{target.name}.part")
    try:
        if kind == "venv":
            try:
                import venv_pack  # type: ignore[import-untyped,import-not-found,unused-ignore]
            except ImportError:
                raise InputError("packing a virtual environment needs venv-pack: pip install 'dpsu[spark]'") from None
            try:
                venv_pack.pack(prefix=str(env), output=str(tmp), force=True, format="tar.gz")
            except venv_pack.VenvPackException as e:
                raise InputError(f"venv-pack cannot pack {short_name(str(env))}: {_first_line(e)}") from None
        else:
            try:
                import conda_pack  # type: ignore[import-untyped,import-not-found,unused-ignore]
            except ImportError:
                raise InputError("packing a conda environment needs conda-pack: pip install conda-pack") from None
            try:
                conda_pack.pack(prefix=str(env), output=str(tmp), force=True, format="tar.gz")
            except conda_pack.CondaPackException as e:
                raise InputError(f"conda-pack cannot pack {short_name(str(env))}: {_first_line(e)}") from None
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as any new file: the cluster's daemons may read it as another user
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    mb = target.stat().st_size / (1 << 20)
    return (
        f"packed {kind} {env} with dpsu and its compiled kernels -> {target} ({mb:,.0f} MB); "
        f"use it with --spark-archive {target}"
    )


def _first_line(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return " ".join(lines[:1] + [ln for ln in lines[1:] if ln.startswith("- ")])


def _check_dpsu_installed(env: Path) -> None:
    """dpsu must be a regular package of ``env`` (the executors import it from the archive)."""
    probe = "import dpsu_core, sys; sys.stdout.write(dpsu_core.__file__)"
    proc = subprocess.run([str(_python(env)), "-c", probe], capture_output=True, text=True, cwd="/", env=_bare_env())
    where = Path(proc.stdout.strip()) if proc.returncode == 0 else None
    if where is None or env not in where.resolve().parents:
        found = f"it imports dpsu from {where.parent}" if where is not None else "dpsu is not installed in it"
        raise InputError(
            f"{short_name(str(env))}: {found}; the executors import dpsu from the archive, so install it there as a "
            f"regular package: {_python(env)} -m pip install --no-deps . (from dpsu's folder), or pip install dpsu"
        )


def _bare_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME") and not k.startswith("NUMBA_")}


def warm_environment(env: Path) -> None:
    """Run the executors' code once with the environment's Python, so numba caches its kernels there."""
    code = "from dpsu_core.engines.spark_env import warm; warm()"
    proc = subprocess.run([str(_python(env)), "-c", code], capture_output=True, text=True, cwd="/", env=_bare_env())
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(
            f"the environment's Python cannot run the Spark executors' code ({last}); install dpsu's dependencies "
            f"there: {_python(env)} -m pip install 'dpsu[spark]' (or the module named)"
        )


def warm() -> None:  # runs in the environment being packed
    """The Spark executors' steps on a tiny corpus (build, ids mapped, sample and histogram), so that every
    kernel they call is compiled and cached beside the modules."""
    import numpy as np
    import pyarrow as pa

    from ..corpus.load import LoadOptions
    from .spark_build import ITEM, ROW_COLUMNS, USER, partition_build
    from .spark_corpus import histogram_batches
    from .spark_ids import merge_items

    users = pa.array(["a", "b", "a", "c"])
    texts = pa.array(["one two three", "two three four", "four five", "one one two"])
    batch = pa.RecordBatch.from_arrays(
        [users, texts, pa.array(np.arange(4, dtype=np.int64)), pa.array([False] * 4), pa.array([False] * 4)],
        names=["user", "text", "pos", "bad", "unmatched"],
    )
    tab = pa.Table.from_batches(list(partition_build([batch], opts=LoadOptions(max_n=3))))
    kind = tab.column("kind").to_numpy()
    vocab, maps = merge_items(tab.filter(pa.array(kind == ITEM)), 3)
    rows = tab.filter(pa.array(kind == USER)).select(list(ROW_COLUMNS)).to_batches()
    from .keyed import string_keys

    keys = string_keys(vocab.strings.to_pylist())
    for bits in (None, np.packbits(np.ones(len(vocab.strings), dtype=bool))):
        list(histogram_batches(rows, len(vocab.strings), 2, 0.5, (1, 2), keys, bits, maps))
