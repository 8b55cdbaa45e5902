"""Page 3: thresholds rho and cutoffs Gamma of every set-union mechanism (public: parameters only)."""

import numpy as np
import streamlit as st

from dpsu_core.analysis.charts import rho_vs_max_items_chart, thresholds_chart
from dpsu_core.analysis.threshold_tables import thresholds_vs_epsilon, thresholds_vs_max_items
from pages import _ui
from pages._format import THRESHOLD_HEADERS
from pages._state import app_state
from pages._text import EPSILON_GRID, MAX_ITEMS_GRID, THRESHOLDS_EXPLANATION

_ui.require_app()

st.title("3 · Thresholds")
st.caption(
    "How high a noisy weight must be before an item is released. These numbers depend on the "
    "parameters only (δ, Δ0 and α from the sidebar), never on the data."
)

b = app_state().budget
lo, hi = st.select_slider("ε range", options=EPSILON_GRID, value=(0.5, 10.0), key="thr_eps_range")
epsilons = [e for e in EPSILON_GRID if lo <= e <= hi]
log_y = st.toggle("Logarithmic y axis", value=True, key="thr_log_y")
try:
    df_eps = thresholds_vs_epsilon(epsilons, b.delta, b.max_items, b.alpha, include_published_gw=True)
    df_m = thresholds_vs_max_items(MAX_ITEMS_GRID, b.epsilon, b.delta, b.alpha, include_published_gw=True)
except Exception as exc:
    _ui.show_error(exc, "the thresholds cannot be computed")
    st.stop()

CHART_HEIGHT = 460  # tall enough for the mechanisms' legend (ten lines) beside the plot
# One chart per row: beside a ten-line legend, a half-width plot was too narrow to read.
st.altair_chart(thresholds_chart(df_eps, y="rho", log_y=log_y).properties(height=CHART_HEIGHT), width="stretch")
st.altair_chart(
    thresholds_chart(df_eps[np.isfinite(df_eps["gamma"])], y="gamma", log_y=log_y).properties(height=CHART_HEIGHT),
    width="stretch",
)
st.altair_chart(rho_vs_max_items_chart(df_m, log_y=log_y).properties(height=CHART_HEIGHT), width="stretch")
st.caption(
    "GW / GW-KT use the capped threshold ρ = ln((e^ε + Δ0 − 1)/(2δ))/ε, which grows with ln Δ0. "
    "“GW as published (unproven reference)” is the paper's ρ = 1 − ln(2δ)/ε: shown for comparison only, "
    "no mechanism uses it (its proof does not hold; see below). Mechanisms that run in rounds show their last "
    "round's threshold and cutoff (T_I and Γ_I: the round with the largest share of the budget, the one most released "
    "items cross); the Release page lists every round."
)

st.markdown(THRESHOLDS_EXPLANATION)
with st.expander("Table: thresholds against ε"):
    st.dataframe(df_eps, hide_index=True, key="thr_table_eps", column_config=_ui.labelled(df_eps, THRESHOLD_HEADERS))
with st.expander("Table: thresholds against Δ0"):
    st.dataframe(df_m, hide_index=True, key="thr_table_m", column_config=_ui.labelled(df_m, THRESHOLD_HEADERS))
