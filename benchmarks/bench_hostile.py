"""Peak memory of hostile inputs (issue 9): compression bombs read by the CLI and by the app's upload path.

Each bomb is written to a temporary folder, then read in a fresh child process whose peak RSS comes
from wait4's rusage:
  - "cli": ``python -m dpsu_core.interfaces.cli release BOMB ...`` (the real command; it must refuse the file);
  - "app": the app's load path in a child process (``read_upload`` then ``load_upload`` on the upload's
    bytes, as the Corpus page calls them), which must refuse it too.
A "baseline" row runs the same two paths on a small good CSV, so the bombs' cost over the start-up
(imports, numba) is visible. Before the limits (issue 9) a 2 MB zip bomb cost 4.4 GB in the CLI and
4.6 GB per upload in the app.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MECH = ["-m", "policy-gaussian", "-e", "4", "-d", "1e-6"]

_APP_CHILD = """
import sys
from dpsu_core.corpus import load_upload, read_upload
from dpsu_core.errors import DpsuError
data = open(sys.argv[1], "rb").read()
try:
    load_upload(read_upload(data, sys.argv[2]), sys.argv[2])
    print("loaded")
except DpsuError as exc:
    print("refused:", exc)
"""


ZEROS = b"\x00" * (1 << 20)
TEXT_LINE = b"u1,alpha beta gamma\n"
TEXT = TEXT_LINE * ((1 << 20) // len(TEXT_LINE))


def _zip_bomb(path: Path, chunk: bytes, unpacked_mb: int) -> None:
    """A zip of one member holding ``chunk`` (1 MB) ``unpacked_mb`` times, written in pieces."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open("posts.csv", "w", force_zip64=True) as fh:
            for _ in range(unpacked_mb):
                fh.write(chunk)


def _gzip_bomb(path: Path, chunk: bytes, unpacked_mb: int) -> None:
    with gzip.open(path, "wb", compresslevel=9) as gz:
        for _ in range(unpacked_mb):
            gz.write(chunk)


def _good_csv(path: Path) -> None:
    buf = io.StringIO()
    buf.write("author,body\n")
    for i in range(2000):
        buf.write(f"u{i},alpha beta gamma delta word{i % 50}\n")
    path.write_text(buf.getvalue())


def _peak(cmd: list[str], cwd: Path) -> tuple[float, int, str]:
    """(peak RSS in MB, exit code, last line of output) of one child process."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        text = out.read().decode("utf-8", "replace").strip().splitlines()
    return round(usage.ru_maxrss / 1024.0, 1), os.waitstatus_to_exitcode(status), (text[-1] if text else "")[:200]


def run() -> dict:
    out: dict = {"cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = {
            "baseline_good_csv": ("good.csv", _good_csv),
            "zip_bomb_zeros_2GB": ("bomb_zeros.zip", lambda p: _zip_bomb(p, ZEROS, 2048)),
            "zip_bomb_text_2GB": ("bomb_text.zip", lambda p: _zip_bomb(p, TEXT, 2048)),
            "gzip_bomb_text_2GB": ("bomb_text.csv.gz", lambda p: _gzip_bomb(p, TEXT, 2048)),
        }
        for label, (name, make) in cases.items():
            path = folder / name
            make(path)
            cli_mb, cli_code, cli_msg = _peak(
                [
                    sys.executable,
                    "-m",
                    "dpsu_core.interfaces.cli",
                    "release",
                    str(path),
                    *MECH,
                    "-o",
                    str(folder / "out.csv"),
                ],
                folder,
            )
            app_mb, app_code, app_msg = _peak([sys.executable, "-c", _APP_CHILD, str(path), name], folder)
            out["cases"][label] = {
                "file_mb": round(path.stat().st_size / (1 << 20), 2),
                "cli_peak_rss_mb": cli_mb,
                "cli_exit": cli_code,
                "cli_message": cli_msg,
                "app_load_peak_rss_mb": app_mb,
                "app_result": app_msg,
            }
    out["note"] = (
        "peak RSS of a fresh process per row (imports included; compare with baseline_good_csv). "
        "Default unpack limit: 20x the compressed size, at least 16 MiB, at most 4 GiB."
    )
    return out


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run(), indent=2))
