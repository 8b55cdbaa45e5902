"""Page 2: pick a mechanism, see its calibration, run it, inspect the released set."""

import pandas as pd
import streamlit as st

from dpsu_core.corpus import LoadOptions, load_upload
from dpsu_core.mechanisms import mechanisms
from dpsu_core.metrics import canaries_released
from dpsu_core.privacy import delta_guidance
from pages import _run, _ui
from pages._format import calibration_rows, filter_items, mechanism_labels
from pages._state import app_state
from pages._text import BUDGET_PARAMS

_ui.require_app()

state = app_state()
st.title("2 · Release")
st.caption(
    "Choose a mechanism and its parameters. Only the released set (and, for count mechanisms, the noisy "
    "counts) is private; the calibration depends on the parameters only, never on the data."
)

corpus = _ui.get_corpus()
if corpus is None:
    st.stop()

regs = mechanisms()
labels = mechanism_labels()
names = list(regs)
prev = state.mechanism
name = st.selectbox(
    "Mechanism", names, index=names.index(prev) if prev in names else 0, format_func=labels.get, key="mechanism"
)
state.mechanism = name
cls = regs[name]
st.caption(cls.summary)

b = state.budget
m = st.columns(4)
m[0].metric("ε", f"{b.epsilon:g}")
m[1].metric("δ", f"{b.delta:.1e}")
m[2].metric("Δ0 (max items per user)", f"{b.max_items}" if "max_items" in cls.param_names else "not used")
m[3].metric("α", f"{b.alpha:g}" if "alpha" in cls.param_names else "not used")
g = delta_guidance(b.delta, corpus.n_users)
{"ok": st.success, "warning": st.warning, "error": st.error}[g.level](g.message)
st.caption("ε, δ, Δ0 and α are set in the sidebar.")

# Mechanism-specific parameters, generated from the ParamSpecs.
extra = [spec for spec in cls.param_specs() if spec.name not in BUDGET_PARAMS]
if extra:
    st.subheader("Parameters")
    _ui.param_widgets(extra, corpus)
if "public_source" in cls.accepted_params():
    st.markdown(
        "**Public frequencies for GW-KT.** By default the public English word list of `wordfreq`; "
        "or upload a PUBLIC corpus (never the private one)."
    )
    pub = st.file_uploader("Public corpus (optional)", key="public_upload")
    if pub is None:
        state.public_corpus = state.public_corpus_key = None
    elif state.public_corpus_key != (pub.file_id, pub.name) or state.public_corpus is None:
        try:
            state.public_corpus = load_upload(pub.getvalue(), pub.name, LoadOptions(max_n=corpus.max_n))
            state.public_corpus_key = (pub.file_id, pub.name)
        except Exception as exc:
            state.public_corpus = state.public_corpus_key = None
            _ui.show_error(exc, "the public corpus cannot be read (using wordfreq instead)")

st.subheader("Calibration (public: depends on the parameters only)")
try:
    cal = _run.build_mechanism(name, b, state.mechanism_values()).calibrate()
except Exception as exc:
    _ui.show_error(exc, "these parameters are not valid")
    st.stop()
shown = [(label, f"{v:.4g}") for label, v in cal.noise_quantities()]
shown += [("Threshold ρ", "—" if cal.rho is None else f"{cal.rho:.4g}")]
shown += [("Cutoff Γ", "—" if cal.gamma is None else f"{cal.gamma:.4g}")]
for col, (label, text) in zip(st.columns(len(shown)), shown):
    col.metric(label, text)
with st.expander("Full calibration"):
    st.dataframe(
        pd.DataFrame(calibration_rows(cal), columns=["quantity", "value"]), hide_index=True, key="calibration_table"
    )

if st.button("Run release", type="primary", key="run_release"):
    _run.run_releases(corpus, [name])

rel = state.release
if rel is None:
    st.info("Press **Run release** to draw a private release.")
    st.stop()

rcal = rel.calibration
st.subheader("Released set (private)")
st.caption(
    f"Last release: {rcal.label}, ε = {rcal.epsilon:g}, δ = {rcal.delta:.1e}"
    + (f", seed {rel.seed} (teaching)" if rel.seed is not None else ", OS-seeded noise")
)
canaries = state.canaries
try:
    leaked = canaries_released(rel, canaries)
except Exception as exc:
    leaked = []
    _ui.show_error(exc, "could not check the canaries")
r = st.columns(3)
r[0].metric("Items released", f"{rel.n_released:,}")
r[1].metric("Canaries released", f"{len(leaked)} of {len(canaries)}")
r[2].metric(
    "Time",
    f"{rel.elapsed_seconds:.2f} s",
    help="Wall-clock time of the release. It depends on the corpus size: a raw-data diagnostic, not "
    "private, and never exported.",
)
st.info(rcal.guarantee, icon=_ui.ICONS["guarantee"])
if leaked:
    st.warning(
        f"{len(leaked)} canaries were released. They are part of the differentially private output, but a "
        "release that exposes single-user strings means the budget is far too loose (ε too large or δ too "
        "close to 1/users).",
        icon=_ui.ICONS["warning"],
    )
    st.dataframe(pd.DataFrame({"released canary": leaked}), hide_index=True, key="leaked_canaries")

per_length = rel.per_length()
if len(per_length) > 1 or cls.kind == "ngram":
    st.dataframe(
        pd.DataFrame({"n": list(per_length), "released": list(per_length.values())}),
        hide_index=True,
        key="per_length_table",
    )
    try:
        from dpsu_core.charts import released_per_length_chart

        st.altair_chart(released_per_length_chart(per_length), width="stretch")
    except ImportError:
        pass

query = st.text_input("Search released items", key="item_search", placeholder="substring, e.g. the")
frame = filter_items(rel.private_frame(), query)
st.caption(f"{len(frame):,} of {rel.n_released:,} items shown")
st.dataframe(frame, hide_index=True, width="stretch", key="released_table")
