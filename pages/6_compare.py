"""Page 6: several mechanisms x repeated runs at one budget, on the cached corpus."""

import streamlit as st

from dpsu_core.charts import compare_chart
from dpsu_core.compare import planned_entries, summarize, summary_csv
from dpsu_core.ledger import total as ledger_total
from pages import _run, _ui
from pages._format import budget_summary, compare_summary_display, escape_markdown, mechanism_labels
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
where = "exploration corpus (nothing is spent)" if state.exploring else "private corpus"
st.markdown(f"Runs on the {where}: **{escape_markdown(state.corpus_name)}** ({corpus.n_users:,} users).")

confirmed = True
if chosen:
    try:
        planned = planned_entries(
            chosen, b.epsilon, b.delta, _run.compare_params(chosen, state.mechanism_values()), runs
        )
        cost = ledger_total(planned)
        st.info(f"Cost of this comparison: {cost.sentence()}.", icon=_ui.ICONS["ledger"])
        if not state.exploring:
            after = ledger_total(state.ledger.for_corpus(state.dataset_key) + planned)
            limit = st.number_input(
                "Ask before the session's total on this corpus passes ε =",
                min_value=0.01,
                value=float(b.epsilon),
                step=1.0,
                key="cmp_limit",
                help="Defaults to the sidebar ε: the budget you meant to spend on this corpus.",
            )
            if after.tightest_epsilon > limit:
                confirmed = st.checkbox(
                    f"Spend it: the session's total on this corpus becomes ε = {after.tightest_epsilon:.4g} "
                    f"(δ = {after.basic_delta:.2g}), above ε = {limit:g}",
                    key="cmp_confirm",
                )
    except Exception as exc:
        _ui.show_error(exc, "these parameters are not valid")
        confirmed = False

if st.button("Run comparison", type="primary", key="cmp_run", disabled=not chosen or not confirmed):
    _run.run_comparison(corpus, chosen, runs)

df = state.comparison  # cleared when another corpus is loaded
if df is None:
    st.info("Pick mechanisms and press **Run comparison**.")
    st.stop()
summary = summarize(df)
st.subheader("Released items: mean ± sd over runs (private outputs)")
st.dataframe(
    compare_summary_display(summary),
    hide_index=True,
    key="cmp_summary",
    column_config={
        "mean": st.column_config.NumberColumn(format="%.1f"),
        "runs": st.column_config.NumberColumn(format="%d"),
        "mean_seconds": st.column_config.NumberColumn("mean seconds (not private)", format="%.3f"),
        "recovered_mass": st.column_config.NumberColumn("recovered mass (NOT private)", format="percent"),
    },
)
st.caption(
    "The counts of released items are private outputs. The recovered mass (share of all (user, item) pairs whose "
    "item was released, spec §6) and the timings are computed on the raw data: NOT private."
)
st.download_button(
    "Comparison table (CSV)",
    data=summary_csv(summary),
    file_name="dpsu_comparison.csv",
    mime="text/csv",
    key="cmp_csv",
    on_click="ignore",
    icon=_ui.ICONS["export"],
)
if (summary["runs"] < 2).any():
    st.caption(f"sd shown as “{SD_UNDEFINED}”: a sample standard deviation needs at least two runs per mechanism.")
st.subheader("Chart")
st.altair_chart(compare_chart(summary), width="stretch")
with st.expander("Every run"):
    st.dataframe(df, hide_index=True, key="cmp_runs_table")
