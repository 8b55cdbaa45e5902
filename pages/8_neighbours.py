"""Page 8 (teaching): neighbouring corpora D and D′, and the definition of differential privacy holding per item."""

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dpsu_core.accounting.history import NOT_KEPT_NEIGHBOURS
from dpsu_core.analysis.charts import neighbours_chart, privacy_loss_chart
from dpsu_core.analysis.neighbours import MAX_RUNS, add_user, holders, remove_user, run_neighbours, user_items
from dpsu_core.corpus import Corpus
from dpsu_core.corpus.demo import DEMO_NAME, load_canaries
from dpsu_core.mechanisms import list_mechanisms
from dpsu_core.wording import count_text
from pages import _account, _run, _ui, _workspace
from pages._format import NEIGHBOUR_HEADERS, escape_markdown, header_labels, mechanism_labels
from pages._state import NeighbourView, app_state
from pages._text import TEACHING_SEED

_ui.require_app()


def _progress(bar: DeltaGenerator, fraction: float, message: str) -> None:
    bar.progress(min(max(fraction, 0.0), 1.0), text=message)


state = app_state()
st.title("8 · Neighbouring corpora")
st.caption(
    "Differential privacy compares two corpora that differ by one user's whole data: D (the corpus in use) and "
    "D′ (that user removed, or a new user added). Here the mechanism runs many times on each; for every item of "
    "that user you see how often it is released under D and under D′, and the band e^ε·P_D + δ that "
    "(ε, δ)-DP promises D′ stays inside."
)
st.warning(
    "A teaching view: everything here (the user's items, release rates, users per item) is computed from the raw "
    "data and is NOT differentially private. Never publish it.",
    icon=_ui.ICONS["warning"],
)

if _ui.get_corpus() is None:
    st.stop()

# Which corpus D is: a teaching view runs off the private budget unless the user picks the private corpus.
TARGETS = {"in_use": "the exploration corpus in use", "demo": "the demo corpus (public, bundled)"}
options = (["in_use"] if state.exploring else []) + ["demo", "private"]
target = st.radio(
    "D is",
    options,
    format_func=lambda t: TARGETS.get(t, f"your private corpus, {_workspace.private_name(state)} (spends its budget)"),
    horizontal=True,
    key="nb_target",
    help="The demo or an exploration corpus costs nothing. On the private corpus every run is a release on its "
    "users' data: one click makes hundreds of releases.",
)
corpus: Corpus | None
if target == "demo":
    corpus, corpus_name, canaries = _ui.demo_corpus(), DEMO_NAME, load_canaries()
elif target == "in_use":
    corpus, corpus_name, canaries = state.corpus, state.corpus_name, state.canaries
else:
    work = _workspace.private_work(state)  # kept aside while exploring
    corpus, corpus_name, canaries = work.corpus, work.corpus_name, work.canaries
if corpus is None:
    st.stop()

labels = mechanism_labels("set-union", "ngram", "count")
names = list(labels)
mech_name = str(
    st.selectbox(
        "Mechanism",
        names,
        index=names.index(state.mechanism) if state.mechanism in names else 0,
        format_func=lambda n: labels[n],
        key="nb_mechanism",
    )
)
runs = int(
    st.number_input(
        "Runs on each corpus",
        min_value=20,
        max_value=MAX_RUNS,
        value=200,
        step=50,
        key="nb_runs",
        help="More runs give tighter estimates (the red 99% intervals). 200 takes a few seconds on the demo corpus.",
    )
)

mode = st.radio(
    "D′ is D with …",
    ["remove", "add"],
    format_func={"remove": "one user removed", "add": "one new user added (type the words)"}.get,
    horizontal=True,
    key="nb_mode",
)
neighbour = None
try:
    if mode == "remove":
        pick = st.radio(
            "Which user",
            ["canary", "row"],
            format_func={"canary": "the user who wrote a canary", "row": "by row number"}.get,
            horizontal=True,
            key="nb_pick",
        )
        row = None
        if pick == "canary" and canaries:
            canary = str(st.selectbox("Canary", canaries, key="nb_canary"))
            first = canary.split()[0] if canary.split() else canary
            rows = holders(corpus, first)
            if rows.size:
                row = int(rows[0])
            else:
                st.info("No user holds this canary's first word in the corpus in use; pick a user by row number.")
        elif pick == "canary":
            st.info("No canaries for this corpus (add some on the Corpus page); pick a user by row number.")
        if row is None:
            row = int(
                st.number_input(
                    "User row (0-based, in the order of the file)",
                    min_value=0,
                    max_value=corpus.n_users - 1,
                    value=0,
                    step=1,
                    key="nb_row",
                )
            )
        items = corpus.vocab[user_items(corpus, row)]
        st.caption(
            f"User #{row} holds {items.size:,} distinct items (raw data, NOT private): "
            + ", ".join(escape_markdown(x) for x in items[:25].tolist())
            + (" …" if items.size > 25 else "")
        )
        neighbour = remove_user(corpus, row)
    else:
        text = st.text_area(
            "The new user's words (tokenized like the corpus)",
            value="my secret canary zqxwv lives at 42 quiet lane",
            key="nb_text",
        )
        neighbour = add_user(corpus, text)
        st.caption(escape_markdown(neighbour.description))
except Exception as exc:
    _ui.show_error(exc, "D′ cannot be built")

b = state.budget
mech, plan = None, None
try:
    mech = _run.build_mechanism(mech_name, b, _workspace.mechanism_values(state))
    st.caption(f"One click makes {2 * runs:,} releases: {runs:,} on D and {runs:,} on D′.")
    plan = _account.plan_on(
        state,
        f"Neighbouring corpora ({2 * runs:,} runs)",
        [(mech.calibrate(), 2 * runs)],
        "Neighbouring corpora",
        on_private=target == "private",
        corpus_name=corpus_name,
    )
    go = _ui.spend_gate(plan)
except Exception as exc:
    _ui.show_error(exc, "these parameters are not valid")
    go = False

if (
    st.button("Run on D and D′", type="primary", key="nb_run", disabled=neighbour is None or not go)
    and go
    and mech is not None
    and plan is not None
    and neighbour is not None
):
    # every run spends, even if a later one fails; the history counts them as one batch with no exportable output
    charged = _ui.charge_or_refuse(plan, NOT_KEPT_NEIGHBOURS)
    bar = st.progress(0.0, text="Starting…")
    try:
        if not charged:
            raise _ui.Refused()
        res = run_neighbours(
            mech,
            corpus,
            neighbour,
            runs,
            seed=TEACHING_SEED if state.teaching else None,
            progress=lambda f, m: _progress(bar, f, m),
        )
        state.neighbours = NeighbourView(neighbour.description, list_mechanisms()[mech_name].label, corpus_name, res)
        ok = True
    except _ui.Refused:  # the ledger refused the charge (its error box is shown): nothing ran
        ok = False
    except Exception as exc:
        _ui.show_error(exc, "the runs failed")
        ok = False
    bar.empty()
    _ui.spent_done(plan, ok)

if state.neighbours is None:
    st.info("Choose D′ and press **Run on D and D′**.")
    st.stop()

view = state.neighbours
res, t = view.runs, view.runs.table
st.subheader(f"{view.label}: {escape_markdown(view.description)}")
st.caption(f"D = {escape_markdown(view.corpus_name)}.")
inside = int(t["inside"].sum())
loss = res.loss_summary()
m = st.columns(4)
m[0].metric("Items of the user", f"{len(t):,}")
m[1].metric(
    "Inside the DP band",
    f"{count_text(inside)} of {count_text(len(t))}",
    help="D′'s release rate lies in [(P_D − δ)·e^−ε, e^ε·P_D + δ], up to the sampling error of the runs "
    "(99% intervals on both rates).",
)
m[2].metric("Runs with privacy loss above ε", f"{loss['share_above_epsilon']:.1%}")
m[3].metric("Runs per corpus", f"{res.runs:,}" + (" (fixed seed)" if res.seeded else ""))
if inside == len(t):
    st.success(
        f"Every item's release probability under D′ stays inside the band e^ε·P_D + δ (ε = {res.epsilon:g}, "
        f"δ = {res.delta:.2g}): the definition holds on this pair of corpora.",
        icon=_ui.ICONS["ok"],
    )
else:
    st.error(
        f"{count_text(len(t) - inside)} item(s) fall outside the band beyond sampling error: this mechanism and budget do not "
        "behave as (ε, δ)-DP on this pair.",
        icon=_ui.ICONS["warning"],
    )
st.altair_chart(neighbours_chart(t, res.epsilon, res.delta), width="content")  # a fixed step per item
st.altair_chart(privacy_loss_chart(res.loss, res.epsilon), width="stretch")
st.caption(
    "Privacy loss of a run with the user: ln(P_with(o) / P_without(o)), o = which of the user's items it released, "
    "summed item by item from the release rates (add-½ estimates). Most runs sit near 0; DP bounds it by ε except "
    "with probability about δ."
)
heads = header_labels(t, NEIGHBOUR_HEADERS)
st.dataframe(
    t,
    hide_index=True,
    key="nb_table",
    column_config={
        c: st.column_config.NumberColumn(heads[c], format="%.3f" if c != "users_in_D" else "%d")
        for c in t.columns
        if c.startswith(("p_", "band")) or c == "users_in_D"
    }
    | {"inside": st.column_config.CheckboxColumn(heads["inside"])},
)
st.caption(
    f"Release rates over {res.runs:,} runs on each corpus; band = [(P_D − δ)·e^−ε, e^ε·P_D + δ] clipped to [0, 1]. "
    + ("Rows sorted by users in D (raw count, NOT private)." if len(t) else "")
)
