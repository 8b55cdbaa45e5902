"""The ``dpsu-app`` console script: ``streamlit run <repo>/app.py`` through Streamlit's own CLI.

Extra arguments are passed on to ``streamlit run`` (e.g. ``dpsu-app --server.port 8600``).
The app's settings (upload limit, no error details, no usage statistics) live in
``<repo>/.streamlit/config.toml``; Streamlit reads it from the working directory, so we run there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "app.py"


def streamlit_argv(extra: list[str]) -> list[str]:
    return ["streamlit", "run", str(APP), *extra]


def main(argv: list[str] | None = None) -> int:
    if not APP.is_file():
        print(
            f"dpsu-app: cannot find {APP}; run it from a checkout of the dpsu repository "
            "(pip install -e . in the repo).",
            file=sys.stderr,
        )
        return 2
    from streamlit.web import cli as stcli

    os.chdir(REPO)  # so .streamlit/config.toml applies
    sys.argv = streamlit_argv(list(sys.argv[1:] if argv is None else argv))
    try:
        stcli.main()
    except SystemExit as e:  # click exits; hand its status back
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
