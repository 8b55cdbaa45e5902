"""Page 2: pick a mechanism, see its calibration, run it, inspect the released set."""

import pandas as pd
import streamlit as st

from dpsu_core import app_logic as al
from dpsu_core.mechanisms import mechanisms
from dpsu_core.metrics import canaries_released
from pages import _ui

_ui.require_app()

ss = st.session_state
st.title("2 · Release")
st.caption(
    "Choose a mechanism and its parameters. Only the released set (and, for count mechanisms, the noisy "
    "counts) is private; the calibration depends on the parameters only, never on the data."
)

corpus = _ui.get_corpus()
if corpus is None:
    st.stop()

regs = mechanisms()
labels = al.mechanism_labels()
names = list(regs)
prev = ss.get("mechanism_choice", al.DEFAULT_MECHANISM)
name = st.selectbox(
    "Mechanism", names, index=names.index(prev) if prev in names else 0, format_func=labels.get, key="mechanism"
)
ss["mechanism_choice"] = name
cls = regs[name]
st.caption(cls.summary)

b = _ui.budget()
m = st.columns(4)
m[0].metric("ε", f"{b['epsilon']:g}")
m[1].metric("δ", f"{b['delta']:.1e}")
m[2].metric("Δ0 (max items per user)", f"{b['max_items']}" if "max_items" in cls.param_names else "not used")
m[3].metric("α", f"{b['alpha']:g}" if "alpha" in cls.param_names else "not used")
g = al.delta_guidance(b["delta"], corpus.n_users)
{"ok": st.success, "warning": st.warning, "error": st.error}[g.level](g.message)
st.caption("ε, δ, Δ0 and α are set in the sidebar.")

# Mechanism-specific parameters, generated from the ParamSpecs.
values = dict(ss.get("param_values", {}))
extra = al.extra_param_specs(name)
if extra:
    st.subheader("Parameters")
    cols = st.columns(min(3, len(extra)))
    for i, spec in enumerate(extra):
        default = values.get(spec.name, al.default_param_value(spec, corpus))
        with cols[i % len(cols)]:
            values[spec.name] = _ui.param_widget(spec, default, key=f"param_{spec.name}")
ss["param_values"] = values
if al.takes_public_source(name):
    st.markdown(
        "**Public frequencies for GW-KT.** By default the public English word list of `wordfreq`; "
        "or upload a PUBLIC corpus (never the private one)."
    )
    pub = st.file_uploader("Public corpus (optional)", key="public_upload")
    if pub is None:
        ss.pop("public_corpus", None)
    elif ss.get("public_corpus_name") != (pub.file_id, pub.name) or "public_corpus" not in ss:
        try:
            ss["public_corpus"] = al.load_upload(pub.getvalue(), pub.name, al.LoadOptions(max_n=corpus.max_n))
            ss["public_corpus_name"] = (pub.file_id, pub.name)
        except Exception as exc:
            ss.pop("public_corpus", None)
            _ui.show_error(exc, "the public corpus cannot be read (using wordfreq instead)")
all_values = _ui.param_values()

st.subheader("Calibration (public: depends on the parameters only)")
try:
    cal = al.calibrate(name, b["epsilon"], b["delta"], all_values)
except Exception as exc:
    _ui.show_error(exc, "these parameters are not valid")
    st.stop()
c = st.columns(3)
c[0].metric("Noise scale (" + ("λ" if cal.noise == "laplace" else "σ") + ")", f"{cal.scale:.4g}")
c[1].metric("Threshold ρ", "—" if cal.rho is None else f"{cal.rho:.4g}")
c[2].metric("Cutoff Γ", "—" if cal.gamma is None else f"{cal.gamma:.4g}")
with st.expander("Full calibration"):
    st.dataframe(
        pd.DataFrame(al.calibration_rows(cal), columns=["quantity", "value"]), hide_index=True, key="calibration_table"
    )

if st.button("Run release", type="primary", key="run_release"):
    bar = st.progress(0.0, text="Starting…")
    try:
        rel = al.run_release(
            corpus,
            name,
            b["epsilon"],
            b["delta"],
            all_values,
            teaching=_ui.teaching(),
            progress=_ui.progress_callback(bar),
        )
        _ui.store_release(name, rel)
        bar.progress(1.0, text=f"Done in {rel.elapsed_seconds:.2f} s")
    except Exception as exc:
        bar.empty()
        _ui.show_error(exc, "the release failed")

rel = _ui.current_release()
if rel is None:
    st.info("Press **Run release** to draw a private release.")
    st.stop()

rcal = rel.calibration
st.subheader("Released set (private)")
st.caption(
    f"Last release: {rcal.label}, ε = {rcal.epsilon:g}, δ = {rcal.delta:.1e}"
    + (f", seed {rel.seed} (teaching)" if rel.seed is not None else ", OS-seeded noise")
)
canaries = ss.get("canaries", [])
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
frame = al.filter_items(al.released_table(rel), query)
st.caption(f"{len(frame):,} of {rel.n_released:,} items shown")
st.dataframe(frame, hide_index=True, width="stretch", key="released_table")
