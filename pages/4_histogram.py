"""Page 4: how the weighted histogram H filled up (NON-private diagnostic of the raw data)."""

import pandas as pd
import streamlit as st

from dpsu_core.charts import multi_weight_histogram_chart, weight_histogram_chart
from dpsu_core.metrics import histogram_fill
from pages import _run, _ui
from pages._format import escape_markdown, mechanism_labels
from pages._state import app_state
from pages._text import DEFAULT_MECHANISM

_ui.require_app()

state = app_state()
st.title("4 · Histogram fill")
st.warning(
    "Everything on this page is computed from the raw weights H: it is NOT differentially private. "
    "Use it to understand the mechanisms; never publish it.",
    icon=_ui.ICONS["warning"],
)

corpus = _ui.get_corpus()
if corpus is None:
    st.stop()

labels = mechanism_labels("set-union", "ngram")  # the mechanisms that build a weighted histogram H
available = list(labels)
have = state.releases
default = [n for n in have if n in available] or ([DEFAULT_MECHANISM] if DEFAULT_MECHANISM in available else [])
chosen = st.multiselect(
    "Mechanisms to show side by side",
    available,
    default=default,
    format_func=lambda n: labels[n],
    key="hist_mechanisms",
)
missing = [n for n in chosen if n not in have]
if missing:
    try:
        cals = [(_run.build_mechanism(n, state.budget, state.mechanism_values()).calibrate(), 1) for n in missing]
    except Exception as exc:
        _ui.show_error(exc, "these parameters are not valid")
        st.stop()
    plan = state.plan(
        f"Histogram fill: {len(missing)} missing release{'s' if len(missing) != 1 else ''}", cals, "Histogram fill"
    )
    go = _ui.spend_gate(plan)
    st.caption("They join the session's release history; the Release page and Export keep showing their own.")
    if (
        st.button(
            f"Run {len(missing)} missing release{'s' if len(missing) != 1 else ''} at the sidebar budget",
            key="hist_run",
            disabled=not go,
        )
        and go
    ):
        _run.run_releases(corpus, missing, plan)
        have = state.releases

# the releases with a weight histogram and a threshold (set-union and n-gram mechanisms), with both
shown = {
    n: (have[n], w, rho)
    for n in chosen
    if n in have and (w := have[n].diagnostics.weights) is not None and (rho := have[n].calibration.rho) is not None
}
if not shown:
    last = state.release
    if last is not None and last.diagnostics.weights is None:
        st.info(
            f"The last release ({last.calibration.label}) has no weight histogram: it ranks distinct-user counts "
            "instead of building weights H, so there is nothing to fill. The histogram is about set-union and "
            "n-gram mechanisms: pick one above and press **Run … missing release(s)**."
        )
    elif missing:
        st.info("Press **Run … missing release(s)** above to see the histogram of the chosen mechanisms.")
    else:
        st.info("Pick at least one mechanism above.")
    st.stop()

rows = []
for rel, weights, rho in shown.values():
    cal = rel.calibration
    fill = histogram_fill(weights, rho, cal.gamma, scale=cal.scale)
    rows.append({"mechanism": cal.label, "ρ": cal.rho, "Γ": cal.gamma, **fill.as_dict()})
table = pd.DataFrame(rows)

if len(shown) == 1:
    ((rel, weights, rho),) = shown.values()
    cal = rel.calibration
    f = rows[0]
    m = st.columns(4)
    m[0].metric("Items with weight > 0", f"{f['n_positive']:,}")
    m[1].metric("Share above ρ", f"{f['share_above_rho']:.1%}")
    m[2].metric("Share at Γ", "—" if cal.gamma is None else f"{f['share_at_gamma']:.1%}")
    m[3].metric("Weight beyond ρ's need", f"{f['weight_beyond_rho_need']:.4g}")
    st.altair_chart(weight_histogram_chart(weights, rho, cal.gamma), width="stretch")
else:
    st.altair_chart(
        multi_weight_histogram_chart(
            {r.calibration.label: (w, rho, r.calibration.gamma) for r, w, rho in shown.values()}
        ),
        width="stretch",
    )
NUM = st.column_config.NumberColumn(format="%.4g")
st.caption(
    "Releases shown: "
    + "; ".join(
        escape_markdown(r.title())
        for r in state.history.latest_by_mechanism(state.corpus_id).values()
        if r.mechanism in shown
    )
)
st.dataframe(
    table,
    hide_index=True,
    key="hist_table",
    column_config={
        "ρ": NUM,
        "Γ": NUM,
        "n_positive": st.column_config.NumberColumn("items with weight > 0", format="localized"),
        "share_above_rho": st.column_config.NumberColumn("share above ρ", format="percent"),
        "share_at_gamma": st.column_config.NumberColumn("share at Γ", format="percent"),
        "total_weight": st.column_config.NumberColumn("total weight", format="%.4g"),
        "weight_beyond_rho_need": st.column_config.NumberColumn("weight beyond ρ's need", format="%.4g"),
        "gamma_tol": st.column_config.NumberColumn("Γ tolerance", format="%.4g"),
    },
)
st.caption(
    "Share above ρ: items whose weight alone clears the threshold. Share at Γ: items that reached the "
    "cutoff (policy mechanisms stop adding there); an item within 0.001 × the noise scale of Γ counts as "
    "there (Γ tolerance), since Policy Gaussian's l2 steps approach Γ without landing on it exactly. "
    "Weight beyond ρ's need: total weight above ρ, i.e. budget that could have lifted other items."
)
