"""dpsu: release a vocabulary / n-gram set under user-level differential privacy.

Run with ``streamlit run app.py`` (or the ``dpsu-app`` command). This file only sets the page
config, draws the shared sidebar and routes to the pages in ``pages/``.
"""

from pathlib import Path

import streamlit as st

st.set_page_config(page_title="dpsu: private vocabulary release", page_icon=":material/lock:", layout="wide")

from pages import _auth, _ui  # noqa: E402  (after set_page_config)

HERE = Path(__file__).resolve().parent
I = _ui.ICONS
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

# With sign-in configured, a visitor not signed in gets nothing but the sign-in (``_auth.gate`` stops the script).
# The custodian's page is in the navigation of custodians only: for anyone else its URL does not resolve.
who = _auth.gate()
CUSTODIAN = [st.Page(HERE / "pages" / "9_custodian.py", title="Custodian", icon=I["custodian"], url_path="custodian")]
page = st.navigation(PAGES + CUSTODIAN if who.is_custodian else PAGES)
_auth.sidebar(who)
_ui.get_corpus()
# The sidebar is drawn before the page: a corpus load on the Corpus page reruns the script at once
# (``_ui.set_corpus``), so the sidebar never shows the previous corpus; its privacy totals sit in a placeholder
# that every spend refills at once (``_ui.redraw_ledger``), so they never show the total before a spend.
_ui.sidebar()
_ui.teaching_banner()
_ui.workflow_steps()
with _ui.inside_app():
    page.run()
