"""Runs the real ``app.py`` for AppTest.

Why a wrapper: AppTest resets Streamlit's "uses the pages/ directory" flag before every run, and an
app whose folder holds ``pages/`` then has each rerun routed straight to the page script by the legacy
multipage shim, skipping ``app.py`` (its sidebar and ``st.navigation``). The real server clears that
flag for good once ``app.py`` calls ``st.navigation``. Running ``app.py`` from here (a folder without
``pages/``) gives AppTest the server's behaviour while executing exactly the app's own code.
"""
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # what `streamlit run app.py` does for the app's folder
runpy.run_path(str(REPO / "app.py"), run_name="__main__")
