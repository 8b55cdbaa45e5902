"""The output files of one run: checked before any noise is drawn, then written whole and together, or not at all.

A release spends privacy budget when its noise is drawn. If it then wrote its CSV and failed on its report (a full
disk, a folder made read-only meanwhile), the user would be left with some files, an error, and a rerun that
spends again. So:

* ``check_output_paths`` runs before the corpus is read: no output is an input (same path, symlink or hard link),
  no two outputs are the same file, no output is the folder of another, and each output's folder really takes a
  new file (a probe file is created and removed: permission bits alone do not say, e.g. for root or a read-only
  mount). An output that is a folder of files (``FolderOutput``: a tokenizer folder) is checked file by file, and
  its folder is an existing one or one the run can make (``OutputSet.make_folder``).
* ``OutputSet`` writes every body to a temporary file beside its target (``stage``), and only when all of them are
  on disk renames them over their targets together (``commit``). A failure while staging removes the temporary
  files and leaves every target as it was; a failure during the renames puts back the targets already renamed
  (the old files are kept as hard links until the end). The error says which outputs were (not) written.

A process killed (SIGKILL, power loss) between staging and the renames leaves hidden ``.<name>.<hex>.tmp`` files
beside the targets and every target as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import OutputCommitError, OutputError, short_path

_TMP_SUFFIX = ".tmp"
_NOTHING_WRITTEN = "no output was written (each output needs an existing, writable folder with room for it)"


def _folder(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def _temp_name(path: Path, what: str = "") -> Path:
    return _folder(path) / f".{path.name[:40]}.{what}{secrets.token_hex(6)}{_TMP_SUFFIX}"


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file: same resolved path, or (both existing) the same inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


@dataclass(frozen=True)
class FolderOutput:
    """An output that is a folder holding the files ``names`` (e.g. a tokenizer folder), made by the run (one level)
    if it does not exist yet."""

    path: Any
    names: tuple[str, ...]
    hint: str = "give a folder path"  # what to give instead of a file in the folder's way

    def files(self) -> list[Path]:
        return [Path(self.path) / name for name in self.names]


def output_files(outputs: dict[str, Any]) -> list[tuple[str, Path]]:
    """(label, file) for every file the ``outputs`` write: a path is one file, a ``FolderOutput`` each of its files."""
    files: list[tuple[str, Path]] = []
    for label, value in outputs.items():
        if isinstance(value, FolderOutput):
            files += [(label, f) for f in value.files()]
        elif value is not None:
            files.append((label, Path(value)))
    return files


def check_output_paths(outputs: dict[str, Any], inputs: dict[str, Any]) -> None:
    """Refuse outputs that would overwrite an input or each other, or that cannot be written.

    ``outputs`` maps a label (e.g. "-o", "--report") to a path, a ``FolderOutput`` (every file in it is checked)
    or None; ``inputs`` maps a label (e.g. "the input") to a path or None. Every file an output writes is checked
    against every input and every other output's files (the same file, or one output the folder of another). Run
    this before reading any input (and before any noise is drawn), so a bad output path costs nothing.
    """
    for label, value in outputs.items():
        if value is not None:
            _check_spelled(label, value.path if isinstance(value, FolderOutput) else value)
    made = {
        os.path.realpath(v.path)
        for label, v in outputs.items()
        if isinstance(v, FolderOutput) and _check_folder(label, v)
    }
    outs = output_files(outputs)
    ins = [(label, Path(p)) for label, p in inputs.items() if p is not None]
    for i, (label, out) in enumerate(outs):
        for in_label, src in ins:
            if same_file(out, src):
                raise OutputError(
                    f"{label} {short_path(out)} is {in_label} itself: writing it would destroy {in_label}; "
                    "choose another output path"
                )
        for other_label, other in outs[:i]:
            if same_file(out, other):
                raise OutputError(
                    f"{other_label} and {label} are the same file ({short_path(out)}): one would overwrite the "
                    "other; give them different paths"
                )
        for other_label, other in outs:
            if _inside(other, out):
                raise OutputError(
                    f"{label} {short_path(out)} is the folder {other_label} writes {other.name} into: one output "
                    "cannot be both a file and a folder; give them different paths"
                )
        if os.path.realpath(_folder(out)) not in made:  # a folder the run makes: its parent was probed
            _check_writable(label, out)


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` lies inside ``folder`` (resolved: symlinks followed as far as they exist)."""
    a, b = os.path.realpath(path), os.path.realpath(folder)
    return a != b and a.startswith(b.rstrip(os.sep) + os.sep)


def _check_spelled(label: str, path: Any) -> None:
    """An output path that is a path: not empty, not '-' (standard output is not an output: every output is
    written whole to a file, or not at all)."""
    text = os.fspath(path)
    if not str(text).strip():
        raise OutputError(f"{label} is empty; give a path")
    if text == "-":
        raise OutputError(
            f"{label} -: standard output is not an output here (every output is a file, written whole or not at "
            "all); give a file path (./- for a file named '-')"
        )


def _check_folder(label: str, out: FolderOutput) -> bool:
    """A ``FolderOutput``'s folder: an existing folder (False), or a path where the run can make one (True)."""
    p = Path(out.path)
    if p.is_dir():
        return False
    if p.is_symlink():
        raise OutputError(
            f"{label} {short_path(p)} is a symbolic link to a missing folder; create the folder it points to, or "
            "give another path"
        )
    if os.path.lexists(p):
        raise OutputError(f"{label} {short_path(p)} is a file, not a folder; {out.hint}")
    parent = _folder(p)
    if not parent.is_dir():
        raise OutputError(f"the folder holding {label} {short_path(p)} does not exist; create it first")
    probe = _temp_name(p, "probe.")
    try:  # the real test: make a folder there
        os.mkdir(probe, 0o700)
    except OSError as exc:
        raise OutputError(
            f"the folder holding {label} {short_path(p)} is not writable ({exc.strerror or exc}); "
            "choose a writable folder"
        ) from None
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return True


def _check_writable(label: str, path: Path) -> None:
    if path.is_dir():
        raise OutputError(
            f"{label} {short_path(path)} is a folder; give a file path (a folder cannot be replaced by a file)"
        )
    if path.exists() and not path.is_file():
        raise OutputError(f"{label} {short_path(path)} is not a regular file (a device or pipe); give a file path")
    folder = _folder(path)
    if not folder.is_dir():
        raise OutputError(f"the folder of {label} {short_path(path)} does not exist; create it or choose another path")
    probe = _temp_name(path, "probe.")
    try:  # the real test: create a file there (os.access says yes to root on a read-only mount)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise OutputError(
            f"the folder of {label} {short_path(path)} is not writable ({exc.strerror or exc}); "
            "choose a writable folder"
        ) from None
    with contextlib.suppress(OSError):
        os.unlink(probe)


class OutputSet:
    """The output files of one run, written together or not at all::

        with OutputSet() as out:
            out.stage("-o", "released.csv", csv_bytes)
            out.stage("--report", "report.json", report_bytes)
            out.commit()  # every target replaced, or none (and an OutputError)

    Leaving the ``with`` block without ``commit`` (an error) removes the staged files. Each new file gets the usual
    permissions of a new file (0666 minus the umask).
    """

    def __init__(self) -> None:
        self._staged: list[tuple[str, Path, Path]] = []  # (label, target, temporary file)
        self._made: list[Path] = []  # folders made for the outputs (removed again if the set is not committed)
        self.committed = False

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self.committed:
            self.discard()

    @property
    def labels(self) -> list[str]:
        return [label for label, _, _ in self._staged]

    def make_folder(self, label: str, path: Any) -> None:
        """Make the folder ``path`` (one level; a ``FolderOutput``) if it is missing: removed again, if still empty,
        when the set is not committed."""
        folder = Path(path)
        if folder.is_dir():
            return
        try:
            os.mkdir(folder)
        except OSError as exc:
            self.discard()
            raise OutputError(self._failed(label, folder, exc, _NOTHING_WRITTEN)) from None
        self._made.append(folder)

    def stage(self, label: str, path: Any, body: bytes) -> None:
        """Write ``body`` to a temporary file in ``path``'s folder (flushed to disk); ``path`` is not touched."""
        if self.committed:
            raise RuntimeError("this OutputSet is already committed")
        target = Path(path)
        tmp = _temp_name(target)
        try:
            # O_EXCL: never follow or reuse an existing name; mode 0666 minus the umask, like any new file
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:
            self.discard()
            raise OutputError(self._failed(label, target, exc, _NOTHING_WRITTEN)) from None
        self._staged.append((label, target, tmp))
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(body)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            self.discard()
            raise OutputError(self._failed(label, target, exc, _NOTHING_WRITTEN)) from None

    def commit(self) -> None:
        """Rename every staged file over its target. If a rename fails, the targets already replaced are put back
        (or removed, if they did not exist before) and an ``OutputError`` says what happened."""
        if self.committed:
            return
        backups: list[tuple[Path, Path | None]] = []  # (target, hard link to its old file, or None if it was new)
        try:
            for _, target, _ in self._staged:
                backups.append((target, self._keep_old(target)))
        except OSError as exc:
            label, target, _ = self._staged[len(backups)]
            self._drop_backups(backups)
            self.discard()
            raise OutputError(
                self._failed(label, target, exc, "no output was written, every file is as it was")
            ) from None
        done: list[int] = []
        for i, (label, target, tmp) in enumerate(self._staged):
            try:
                os.replace(tmp, target)
            except OSError as exc:
                undone = self._undo(done, backups)
                self._drop_backups(backups)
                self.discard()
                error = OutputCommitError if done else OutputError  # done: an output was in place for a moment
                raise error(self._commit_failed(label, target, exc, done, undone)) from None
            done.append(i)
        self.committed = True
        self._drop_backups(backups)
        for folder in {_folder(t) for _, t, _ in self._staged}:
            _fsync_folder(folder)

    def discard(self) -> None:
        """Remove every staged temporary file (targets untouched)."""
        for _, _, tmp in self._staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if not self.committed:
            self._staged = []
            for folder in reversed(self._made):
                with contextlib.suppress(OSError):  # only an empty folder goes
                    os.rmdir(folder)
            self._made = []

    # ---- internals -------------------------------------------------------------------------------------------
    @staticmethod
    def _keep_old(target: Path) -> Path | None:
        """A hard link to the target's current file (to put it back if a later rename fails), None if no file."""
        if not os.path.lexists(target) or (target.is_dir() and not target.is_symlink()):
            return None  # nothing to keep (a folder: the rename fails and nothing is replaced)
        backup = _temp_name(target, "old.")
        os.link(target, backup, follow_symlinks=False)  # a symlink is kept as the link, not as its target
        return backup

    def _undo(self, done: list[int], backups: list[tuple[Path, Path | None]]) -> list[str]:
        """Put back the targets already replaced; the labels that could NOT be put back."""
        failed = []
        for i in reversed(done):
            label, target, _ = self._staged[i]
            old = backups[i][1]
            try:
                if old is None:
                    os.unlink(target)
                else:
                    os.replace(old, target)
            except OSError:
                failed.append(label)
        return failed

    @staticmethod
    def _drop_backups(backups: Iterable[tuple[Path, Path | None]]) -> None:
        for _, old in backups:
            if old is not None:
                with contextlib.suppress(OSError):
                    os.unlink(old)

    @staticmethod
    def _failed(label: str, target: Path, exc: OSError, outcome: str) -> str:
        return f"{_cannot_write(label, target, exc)}; {outcome}"

    def _commit_failed(self, label: str, target: Path, exc: OSError, done: list[int], undone: list[str]) -> str:
        what = _cannot_write(label, target, exc)
        if not undone:
            return f"{what}; no output was written, every file is as it was"
        left = ", ".join(undone)
        return (
            f"{what}; {left} could not be put back and now hold this run's output, the other outputs are as they were"
        )


def _cannot_write(label: str, target: Path, exc: OSError) -> str:
    return f"cannot write {f'{label} ' if label else ''}{short_path(target)} ({exc.strerror or exc})"


def _fsync_folder(folder: Path) -> None:
    """Make the renames durable (best effort: some file systems refuse to open a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_together(files: Iterable[tuple[str, Any, bytes]], folders: Iterable[tuple[str, Any]] = ()) -> None:
    """Write (label, path, body) files whole and together, or none of them (``OutputSet``); (label, folder)
    ``folders`` are made first if missing (and removed again if nothing is written)."""
    with OutputSet() as out:
        for label, folder in folders:
            out.make_folder(label, folder)
        for label, path, body in files:
            out.stage(label, path, body)
        out.commit()


def atomic_write(path: Any, body: bytes) -> None:
    """Write one file whole or not at all: a temporary file in the same folder, then ``os.replace``."""
    write_together([("", path, body)])
