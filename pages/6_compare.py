"""Page 6: several mechanisms x repeated runs at one budget, on the cached corpus."""

import streamlit as st

from dpsu_core.analysis.charts import compare_chart
from dpsu_core.analysis.compare import SECONDS_NOTE, summarize, summary_csv
from pages import _account, _run, _ui, _workspace
from pages._format import (
    RUN_HEADERS,
    budget_summary,
    compare_summary_display,
    escape_markdown,
    mechanism_labels,
)
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
chosen = st.multiselect("Mechanisms", names, default=default, format_func=lambda n: labels[n], key="cmp_mechanisms")
runs = int(st.number_input("Runs per mechanism", min_value=1, max_value=50, value=3, step=1, key="cmp_runs"))
b = state.budget
st.caption(budget_summary(b.epsilon, b.delta, b.max_items, b.alpha))
where = "exploration corpus (nothing is spent)" if state.exploring else "private corpus"
st.markdown(f"Runs on the {where}: **{escape_markdown(state.corpus_name)}** ({corpus.n_users:,} users).")

go, plan = False, None
if chosen:
    try:
        plan = _account.plan(
            state,
            f"Compare: {len(chosen)} mechanism{'s' if len(chosen) != 1 else ''} × {runs} run{'s' if runs != 1 else ''}",
            [(_run.build_mechanism(n, b, _workspace.mechanism_values(state)).calibrate(), runs) for n in chosen],
            "Compare",
        )
        go = _ui.spend_gate(plan)  # asks again for every run: its yes is cleared once the comparison ran
    except Exception as exc:
        _ui.show_error(exc, "these parameters are not valid")
        go = False

if st.button("Run comparison", type="primary", key="cmp_run", disabled=not go) and go and plan is not None:
    _run.run_comparison(corpus, chosen, runs, plan)

df = state.comparison  # cleared when another corpus is loaded
if df is None:
    st.info(
        "Press **Run comparison** to run them." if chosen else "Pick mechanisms above, then press **Run comparison**."
    )
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
        "median_seconds": st.column_config.NumberColumn(
            "median seconds, warm runs (not private)", format="%.3f", help=SECONDS_NOTE
        ),
        "recovered_mass": st.column_config.NumberColumn("recovered mass (NOT private)", format="percent"),
    },
)
st.caption(
    "The counts of released items are private outputs. The recovered mass (share of all (user, item) pairs whose "
    "item was released, docs/algorithms.md §9) and the timings are computed on the raw data: NOT private, and not in the download "
    "unless you ask for it. " + SECONDS_NOTE[0].upper() + SECONDS_NOTE[1:] + "."
)
with_raw = st.checkbox(
    "Add the recovered mass to the download (raw data, NOT private: never publish it)", key="cmp_csv_raw"
)
st.download_button(
    "Comparison table (CSV)",
    data=summary_csv(summary, include_raw=with_raw),
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
    st.dataframe(df, hide_index=True, key="cmp_runs_table", column_config=_ui.labelled(df, RUN_HEADERS))
