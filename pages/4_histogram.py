"""Page 4: how the weighted histogram H filled up (NON-private diagnostic of the raw data)."""

from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from dpsu_core.analysis.charts import multi_weight_histogram_chart, weight_histogram_chart
from dpsu_core.analysis.metrics import histogram_fill
from dpsu_core.mechanisms import Release, mechanism_class
from pages import _account, _run, _ui, _workspace
from pages._format import escape_markdown, mechanism_labels, text_width
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
have = _account.releases(state)
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
        jobs = [
            _run.make_job(n, state.budget, _workspace.mechanism_values(state), teaching=state.teaching) for n in missing
        ]
    except Exception as exc:
        _ui.show_error(exc, "these parameters are not valid")
        st.stop()
    plan = _account.plan(
        state,
        f"Histogram fill: {len(missing)} missing release{'s' if len(missing) != 1 else ''}",
        [(j.calibration, 1) for j in jobs],
        "Histogram fill",
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
        _run.run_releases(corpus, jobs, plan)
        have = _account.releases(state)


class Shown(NamedTuple):
    """One release's histogram as shown: the weights, threshold, cutoff and noise scale they are read against."""

    release: Release
    weights: np.ndarray
    rho: float
    gamma: float | None
    scale: float
    label: str


def shown_histograms(rel: Release) -> tuple[Shown | None, list[Shown]]:
    """The headline histogram of a release (None without weights or threshold) and, for a rounds mechanism, every
    round's H_i against its own T_i and Gamma_i (``calibration_view``: the headline is the last round's)."""
    cal = rel.calibration
    view = mechanism_class(cal.mechanism).calibration_view(cal)
    per_round = rel.diagnostics.extra.get("round_weights")
    if view.rounds and per_round is not None and len(per_round) == len(view.rounds):
        rounds = [
            Shown(rel, h, r.threshold, r.gamma, r.sigma, f"round {r.round} of {len(view.rounds)} · {cal.label}")
            for h, r in zip(per_round, view.rounds)
        ]
        return rounds[-1], rounds
    if rel.diagnostics.weights is None or cal.rho is None:
        return None, []
    return Shown(rel, rel.diagnostics.weights, cal.rho, cal.gamma, cal.scale, cal.label), []


# the releases with a weight histogram and a threshold (set-union and n-gram mechanisms), with both
shown: dict[str, Shown] = {}
rounds_of: dict[str, list[Shown]] = {}
for n in chosen:
    if n in have:
        head, per_round = shown_histograms(have[n])
        if head is not None:
            shown[n], rounds_of[n] = head, per_round
if not shown:
    last = _account.current_release(state)
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


def fill_row(h: Shown) -> dict:
    fill = histogram_fill(h.weights, h.rho, h.gamma, scale=h.scale)
    return {"mechanism": h.label, "ρ": h.rho, "Γ": "—" if h.gamma is None else f"{h.gamma:.4g}", **fill.as_dict()}


rows = [fill_row(h) for h in shown.values()]
table = pd.DataFrame(rows)

if len(shown) == 1:
    (h,) = shown.values()
    f = rows[0]
    m = st.columns(4)
    m[0].metric("Items with weight > 0", f"{f['n_positive']:,}")
    m[1].metric("Share above ρ", f"{f['share_above_rho']:.1%}")
    m[2].metric("Share at Γ", "—" if h.gamma is None else f"{f['share_at_gamma']:.1%}")
    m[3].metric("Weight beyond ρ's need", f"{f['weight_beyond_rho_need']:.4g}")
    st.altair_chart(weight_histogram_chart(h.weights, h.rho, h.gamma), width="stretch")
else:
    st.altair_chart(
        multi_weight_histogram_chart({h.label: (h.weights, h.rho, h.gamma) for h in shown.values()}),
        width="stretch",
    )
if any(rounds_of.values()):
    st.caption(
        "Rounds mechanisms: the figures above are the last round's (its histogram H_I against its own threshold T_I "
        "and cutoff Γ_I: the round most released items cross). Each round's H_i, read against that round's own "
        "Tᵢ and Γᵢ, is in the table below; items released in an earlier round have weight 0 in later rounds."
    )
st.caption(
    "Releases shown: "
    + "; ".join(
        escape_markdown(r.title())
        for r in state.history.latest_by_mechanism(state.corpus_id).values()
        if r.mechanism in shown
    )
)
# the mechanism's column is as wide as its longest label (pinned at the left: never cut), the figures small beside it
NUM = st.column_config.NumberColumn(format="%.4g", width="small")
rounds_rows = [fill_row(h) for per_round in rounds_of.values() for h in per_round]
fill_labels = [r["mechanism"] for r in rows + rounds_rows]
FILL_COLUMNS = {
    "mechanism": st.column_config.TextColumn("mechanism", width=text_width(fill_labels), pinned=True),
    "ρ": NUM,
    "Γ": st.column_config.TextColumn("Γ", width="small"),
    "n_positive": st.column_config.NumberColumn("items > 0", format="localized", width="small"),
    "share_above_rho": st.column_config.NumberColumn("above ρ", format="percent", width="small"),
    "share_at_gamma": st.column_config.NumberColumn("at Γ", format="percent", width="small"),
    "total_weight": st.column_config.NumberColumn("total weight", format="%.4g", width="small"),
    "weight_beyond_rho_need": st.column_config.NumberColumn("past ρ's need", format="%.4g", width="small"),
    "gamma_tol": st.column_config.NumberColumn("Γ tolerance", format="%.4g", width="small"),
}
st.dataframe(table, hide_index=True, key="hist_table", width="stretch", column_config=FILL_COLUMNS)
if rounds_rows:
    st.subheader("Per round (each round's histogram against its own threshold)")
    st.dataframe(
        pd.DataFrame(rounds_rows).rename(columns={"ρ": "Tᵢ", "Γ": "Γᵢ"}),
        hide_index=True,
        key="hist_rounds_table",
        width="stretch",
        column_config={**FILL_COLUMNS, "Tᵢ": NUM, "Γᵢ": st.column_config.TextColumn("Γᵢ", width="small")},
    )
st.caption(
    "Columns: items with weight > 0, the share of them above ρ and at Γ, their total weight, the weight beyond ρ's "
    "need and the Γ tolerance. Share above ρ: items whose weight alone clears the threshold. Share at Γ: items that reached the "
    "cutoff (policy mechanisms stop adding there); an item within 0.001 × the noise scale of Γ counts as "
    "there (Γ tolerance), since Policy Gaussian's l2 steps approach Γ without landing on it exactly. "
    "Weight beyond ρ's need: total weight above ρ, i.e. budget that could have lifted other items."
)
