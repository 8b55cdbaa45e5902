"""dpsu: release a vocabulary / n-gram set under user-level differential privacy.

Run with ``streamlit run app.py`` (or the ``dpsu-app`` command). This file only sets the page config, passes the
sign-in gate, draws the menu and the shared sidebar and routes to the pages in ``pages/``.

The first open after a start imports the library (seconds): the menu and a loading note are drawn first, from
light modules only. The menu is this file's own (``st.page_link``, in sections; Streamlit's automatic menu is off
in ``.streamlit/config.toml``): Streamlit would otherwise list every file of ``pages/``, helpers included, until
``st.navigation`` runs.
"""

import sys
from pathlib import Path

import streamlit as st

st.set_page_config(page_title="dpsu: private vocabulary release", page_icon=":material/lock:", layout="wide")

from pages import _auth  # noqa: E402  (after set_page_config; no heavy import)
from pages._icons import ICONS as I  # noqa: E402

HERE = Path(__file__).resolve().parent


def _page(file: str, title: str, icon: str, **kw) -> st.Page:
    return st.Page(HERE / "pages" / file, title=title, icon=I[icon], **kw)


# The menu in sections: the release path first, then the pages that explain a release, the teaching page, and the
# custodian's page (custodians only: for anyone else its URL does not resolve).
SECTIONS = {
    "Release": [
        _page("1_corpus.py", "Corpus", "corpus", default=True),
        _page("2_release.py", "Release", "release"),
        _page("7_export.py", "Export", "export"),
    ],
    "Understand": [
        _page("3_thresholds.py", "Thresholds", "thresholds"),
        _page("4_histogram.py", "Histogram fill", "histogram"),
        _page("5_coverage.py", "Coverage", "coverage"),
        _page("6_compare.py", "Compare", "compare"),
    ],
    "Teach": [_page("8_neighbours.py", "Neighbouring corpora", "neighbours")],
}
ACCOUNT = {"Account": [_page("9_custodian.py", "Custodian", "custodian", url_path="custodian")]}

# With sign-in configured, a visitor not signed in gets nothing but the sign-in (``_auth.gate`` stops the script).
who = _auth.gate()
shown = {**SECTIONS, **ACCOUNT} if who.is_custodian else SECTIONS
page = st.navigation(shown, position="hidden")
with st.sidebar.container(key="app_menu"):
    for section, pages in shown.items():
        st.caption(section)
        for p in pages:
            st.page_link(p, label=p.title, icon=p.icon)
cold = "pages._ui" not in sys.modules
loading = st.empty()
if cold:  # the first open after a start: the library loads (seconds); say so under the menu
    loading.info("Loading dpsu… (the first open after a start takes a few seconds)", icon=":material/hourglass_top:")

from pages import _ui  # noqa: E402  (the library: after the menu is drawn)

loading.empty()
if cold:
    _ui.warm_kernels()  # compile (or read from the on-disk cache) the release kernels in the background
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
