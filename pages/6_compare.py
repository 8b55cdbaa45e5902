"""Page 6: several mechanisms x repeated runs at one budget, on the cached corpus."""

import streamlit as st

from dpsu_core import app_logic as al
from dpsu_core.charts import compare_chart
from dpsu_core.compare import compare_runs, summarize
from pages import _ui

_ui.require_app()

ss = st.session_state
st.title("6 · Compare")
st.caption(
    "Release with several mechanisms at the sidebar budget, several times each (the noise differs "
    "between runs), and compare how many items each releases. All runs reuse the loaded corpus."
)

corpus = _ui.get_corpus()
if corpus is None:
    st.stop()
labels = al.mechanism_labels()
names = list(labels)
default = [n for n in al.COMPARE_DEFAULT if n in names]
chosen = st.multiselect("Mechanisms", names, default=default, format_func=labels.get, key="cmp_mechanisms")
runs = int(st.number_input("Runs per mechanism", min_value=1, max_value=50, value=3, step=1, key="cmp_runs"))
b = _ui.budget()
st.caption(al.budget_summary(**b))

if st.button("Run comparison", type="primary", key="cmp_run", disabled=not chosen):
    bar = st.progress(0.0, text="Starting…")
    try:
        df = compare_runs(
            corpus,
            chosen,
            b["epsilon"],
            b["delta"],
            al.compare_params(chosen, _ui.param_values()),
            runs,
            seed=al.TEACHING_SEED if _ui.teaching() else None,
            progress=_ui.progress_callback(bar),
        )
        ss["compare"] = (ss.get("corpus_id"), df)
    except Exception as exc:
        _ui.show_error(exc, "the comparison failed")
    bar.empty()

res = ss.get("compare")
if res is None or res[0] != ss.get("corpus_id"):
    st.info("Pick mechanisms and press **Run comparison**.")
    st.stop()
df = res[1]
summary = summarize(df)
st.subheader("Released items: mean ± sd over runs (private outputs)")
st.dataframe(al.compare_summary_display(summary), hide_index=True, key="cmp_summary")
st.caption(
    "The counts of released items are private outputs. The timings (mean_seconds, seconds) are measured "
    "on the raw data: a non-private diagnostic, never exported."
)
if (summary["runs"] < 2).any():
    st.caption(f"sd shown as “{al.SD_UNDEFINED}”: a sample standard deviation needs at least two runs per mechanism.")
st.subheader("Chart")
st.altair_chart(compare_chart(summary), width="stretch")
with st.expander("Every run"):
    st.dataframe(df, hide_index=True, key="cmp_runs_table")
