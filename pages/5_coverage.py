"""Page 5: how much of the k-anonymous vocabulary and of the users' usage the release covers (NON-private)."""

import streamlit as st

from dpsu_core.analysis.charts import coverage_chart
from dpsu_core.analysis.metrics import coverage_table, matching_k, missing_mass
from pages import _account, _ui
from pages._format import escape_markdown, headline_text
from pages._state import app_state
from pages._text import K_GRID

_ui.require_app()

st.title("5 · Coverage")
st.warning(
    "Coverage compares the private release with the raw data (S_k = items used by at least k users): "
    "these figures are NOT differentially private. Never publish them.",
    icon=_ui.ICONS["warning"],
)

corpus = _ui.get_corpus()
record = _account.release_record(app_state())
if corpus is None or record is None:
    _ui.need_release()
    st.stop()
rel = record.release
st.caption(f"Coverage of release {escape_markdown(record.title())} (the one Export offers by default).")
st.caption(f"Calibration (public): {escape_markdown(headline_text(rel.calibration))}")

ks = st.multiselect("k values", K_GRID, default=K_GRID, key="cov_ks")
if not ks:
    st.info("Pick at least one k.")
    st.stop()
try:
    with st.spinner("Computing coverage…"):
        cov = coverage_table(corpus, rel, sorted(ks))
        k_match = matching_k(corpus, rel, n=0)
        mm = missing_mass(corpus, rel)
except Exception as exc:
    _ui.show_error(exc, "coverage cannot be computed")
    st.stop()

overall = mm[mm["n"] == 0].iloc[0]
m = st.columns(3)
m[0].metric("Items released", f"{rel.n_released:,}")
m[1].metric(
    "Matches k-anonymity at k =",
    "—" if k_match is None else f"{k_match:,}",
    help="The smallest k with |S_k| ≤ |S|: the private release is as large as the set of items used by k users.",
)
m[2].metric(
    "Recovered mass",
    f"{overall['recovered_mass']:.1%}",
    help="Share of all (user, item) pairs whose item was released; missing mass is the rest.",
)
st.altair_chart(coverage_chart(cov), width="stretch")
st.caption(
    "Size ratio |S| / |S_k| (can exceed 100%) and recall |S ∩ S_k| / |S_k| against k; n = 0 is all lengths. "
    "An empty (None) ratio means |S_k| = 0: no item has that many users, so the ratio is undefined."
)
st.dataframe(
    cov,
    hide_index=True,
    key="cov_table",
    column_config={
        "size_ratio": st.column_config.NumberColumn("size ratio |S| / |S_k|", format="percent"),
        "recall": st.column_config.NumberColumn("recall", format="percent"),
        "s_k": st.column_config.NumberColumn("|S_k|", format="localized"),
    },
)
st.subheader("Missing mass per n-gram length")
st.dataframe(
    mm,
    hide_index=True,
    key="mm_table",
    column_config={
        "recovered_pairs": st.column_config.NumberColumn("recovered (user, item) pairs", format="localized"),
        "recovered_mass": st.column_config.NumberColumn("recovered mass", format="percent"),
        "missing_mass": st.column_config.NumberColumn("missing mass", format="percent"),
    },
)
