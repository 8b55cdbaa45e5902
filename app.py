"""dpsu: release a vocabulary / n-gram set under user-level differential privacy.

Run with ``streamlit run app.py`` (or the ``dpsu-app`` command). This file only sets the page
config, draws the shared sidebar and routes to the pages in ``pages/``.
"""
import streamlit as st

st.set_page_config(page_title="dpsu: private vocabulary release", page_icon="🔐", layout="wide")

from pages import _ui  # noqa: E402  (after set_page_config)

PAGES = [
    st.Page("pages/1_corpus.py", title="Corpus", icon="📄", default=True),
    st.Page("pages/2_release.py", title="Release", icon="🔐"),
    st.Page("pages/3_thresholds.py", title="Thresholds", icon="📈"),
    st.Page("pages/4_histogram.py", title="Histogram fill", icon="📊"),
    st.Page("pages/5_coverage.py", title="Coverage", icon="🎯"),
    st.Page("pages/6_compare.py", title="Compare", icon="⚖️"),
    st.Page("pages/7_export.py", title="Export", icon="💾"),
]

page = st.navigation(PAGES)
_ui.get_corpus()
_ui.sidebar()
_ui.teaching_banner()
page.run()
