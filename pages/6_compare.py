"""Page 6: several mechanisms x repeated runs at one budget, on the cached corpus."""

import streamlit as st

from dpsu_core.charts import compare_chart
from dpsu_core.compare import summarize
from pages import _run, _ui
from pages._format import budget_summary, compare_summary_display, mechanism_labels
from pages._state import app_state
from pages._text import COMPARE_DEFAULT, SD_UNDEFINED

_ui.require_app()

state = app_state()
st.title("6 · Compare")
st.caption(
    "Release with several mechanisms at the sidebar budget, several times each (the noise differs "
    "between runs), and compare how many items each releases. All runs reuse the loaded corpus."
)

corpus = _ui.get_corpus()
if corpus is None:
    st.stop()
labels = mechanism_labels()
names = list(labels)
default = [n for n in COMPARE_DEFAULT if n in names]
chosen = st.multiselect("Mechanisms", names, default=default, format_func=labels.get, key="cmp_mechanisms")
runs = int(st.number_input("Runs per mechanism", min_value=1, max_value=50, value=3, step=1, key="cmp_runs"))
b = state.budget
st.caption(budget_summary(b.epsilon, b.delta, b.max_items, b.alpha))

if st.button("Run comparison", type="primary", key="cmp_run", disabled=not chosen):
    _run.run_comparison(corpus, chosen, runs)

df = state.comparison  # cleared when another corpus is loaded
if df is None:
    st.info("Pick mechanisms and press **Run comparison**.")
    st.stop()
summary = summarize(df)
st.subheader("Released items: mean ± sd over runs (private outputs)")
st.dataframe(compare_summary_display(summary), hide_index=True, key="cmp_summary")
st.caption(
    "The counts of released items are private outputs. The timings (mean_seconds, seconds) are measured "
    "on the raw data: a non-private diagnostic, never exported."
)
if (summary["runs"] < 2).any():
    st.caption(f"sd shown as “{SD_UNDEFINED}”: a sample standard deviation needs at least two runs per mechanism.")
st.subheader("Chart")
st.altair_chart(compare_chart(summary), width="stretch")
with st.expander("Every run"):
    st.dataframe(df, hide_index=True, key="cmp_runs_table")
