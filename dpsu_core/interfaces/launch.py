"""The ``dpsu-app`` console script: ``python -m streamlit run <repo>/app.py`` in place of this process.

Extra arguments are passed on to ``streamlit run`` (e.g. ``dpsu-app --server.port 8600``).
The app's settings (upload limit, no error details, no usage statistics) live in
``<repo>/.streamlit/config.toml``; Streamlit reads it from the working directory, so we run there.
The launcher execs Streamlit rather than importing it: ``dpsu_core`` never imports Streamlit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"


def streamlit_argv(extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(APP), *extra]


def main(argv: list[str] | None = None) -> int:
    if not APP.is_file():
        print(
            f"dpsu-app: cannot find {APP}; run it from a checkout of the dpsu repository "
            "(pip install -e . in the repo).",
            file=sys.stderr,
        )
        return 2
    os.chdir(REPO)  # so .streamlit/config.toml applies
    cmd = streamlit_argv(list(sys.argv[1:] if argv is None else argv))
    os.execv(cmd[0], cmd)  # Streamlit takes over this process (signals, exit status); never returns


if __name__ == "__main__":
    sys.exit(main())
