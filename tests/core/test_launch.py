"""The ``dpsu-app`` launcher: hands over to ``streamlit run app.py`` from the repository folder."""

from __future__ import annotations

import subprocess
import sys

from dpsu_core.interfaces import launch


def test_launcher_runs_streamlit_on_the_app():
    # ``streamlit run <app> --help`` parses the launcher's command line and exits 0 without serving
    out = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.launch", "--help"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "Usage: streamlit run" in out.stdout


def test_missing_app_is_one_line_and_exit_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(launch, "APP", tmp_path / "app.py")
    assert launch.main([]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpsu-app: cannot find") and "\n" not in err
