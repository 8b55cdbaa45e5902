"""dpsu: release a vocabulary / n-gram set under user-level differential privacy.

Run with ``streamlit run app.py`` (or the ``dpsu-app`` command). This file only sets the page config, draws the
menu and the shared sidebar and routes to the pages in ``pages/``.

The first open after a start imports the library (seconds): the menu and a loading note are drawn first, from
light modules only. The menu is this file's own (``st.page_link``; Streamlit's automatic menu is off in
``.streamlit/config.toml``): Streamlit would otherwise list every file of ``pages/``, helpers included, until
``st.navigation`` runs.
"""

import sys
from pathlib import Path

import streamlit as st

st.set_page_config(page_title="dpsu: private vocabulary release", page_icon=":material/lock:", layout="wide")

from pages._icons import ICONS as I  # noqa: E402  (after set_page_config; no heavy import)

HERE = Path(__file__).resolve().parent
PAGES = [
    st.Page(HERE / "pages" / "1_corpus.py", title="Corpus", icon=I["corpus"], default=True),
    st.Page(HERE / "pages" / "2_release.py", title="Release", icon=I["release"]),
    st.Page(HERE / "pages" / "3_thresholds.py", title="Thresholds", icon=I["thresholds"]),
    st.Page(HERE / "pages" / "4_histogram.py", title="Histogram fill", icon=I["histogram"]),
    st.Page(HERE / "pages" / "5_coverage.py", title="Coverage", icon=I["coverage"]),
    st.Page(HERE / "pages" / "6_compare.py", title="Compare", icon=I["compare"]),
    st.Page(HERE / "pages" / "8_neighbours.py", title="Neighbouring corpora", icon=I["neighbours"]),
    st.Page(HERE / "pages" / "7_export.py", title="Export", icon=I["export"]),
]

page = st.navigation(PAGES, position="hidden")
with st.sidebar.container(key="app_menu"):
    for p in PAGES:
        st.page_link(p, label=p.title, icon=p.icon)
cold = "pages._ui" not in sys.modules
loading = st.empty()
if cold:  # the first open after a start: the library loads (seconds); say so under the menu
    loading.info("Loading dpsu… (the first open after a start takes a few seconds)", icon=":material/hourglass_top:")

from pages import _ui  # noqa: E402  (the library: after the menu is drawn)

loading.empty()
if cold:
    _ui.warm_kernels()  # compile (or read from the on-disk cache) the release kernels in the background
_ui.get_corpus()
# The sidebar is drawn before the page: a corpus load on the Corpus page reruns the script at once
# (``_ui.set_corpus``), so the sidebar never shows the previous corpus; its privacy totals sit in a placeholder
# that every spend refills at once (``_ui.redraw_ledger``), so they never show the total before a spend.
_ui.sidebar()
_ui.teaching_banner()
_ui.workflow_steps()
with _ui.inside_app():
    page.run()
