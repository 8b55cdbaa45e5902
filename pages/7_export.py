"""Page 7: download the private release and its report. Nothing from the raw data is exported."""

import streamlit as st

from dpsu_core.metrics import canaries_released
from pages import _ui
from pages._state import app_state

_ui.require_app()

state = app_state()
st.title("7 · Export")
st.caption(
    "Downloads hold only the private output: the released items (for count mechanisms, the noisy count "
    "and its standard deviation), the calibration and the guarantee. No raw counts, weights or user ids."
)

corpus = _ui.get_corpus()
rel = state.release
if corpus is None or rel is None:
    _ui.need_release()
    st.stop()

cal = rel.calibration
st.info(cal.guarantee, icon=_ui.ICONS["guarantee"])
if rel.seed is not None:
    st.error(
        "This release was made in teaching mode with a fixed seed: it is NOT for real use. The report says so too.",
        icon=_ui.ICONS["teaching"],
    )
try:
    leaked = canaries_released(rel, state.canaries)
except Exception as exc:
    leaked = []
    _ui.show_error(exc, "could not check the canaries")
if leaked:
    st.warning(
        f"This release contains {len(leaked)} canaries (single-user strings). They are part of the "
        "differentially private output, but the budget is far too loose for real use.",
        icon=_ui.ICONS["warning"],
    )

try:
    files = state.export_files(rel)  # built once per release: the report's date does not change between clicks
except Exception as exc:
    _ui.show_error(exc, "the export failed")
    st.stop()

m = st.columns(3)
m[0].metric("Items released", f"{rel.n_released:,}")
m[1].metric("Mechanism", cal.label)
m[2].metric("Budget", f"ε={cal.epsilon:g}, δ={cal.delta:.1e}")
for group, heading in (("items", "Released items"), ("report", "Release report")):
    st.markdown(f"**{heading}**")
    row = [f for f in files if f.group == group]
    for col, f in zip(st.columns(3), row):
        # on_click="ignore": the download does not rerun the page, so the file stays put while it downloads
        col.download_button(
            f.label,
            data=f.data,
            file_name=f.file_name,
            mime=f.mime,
            key=f"dl_{f.kind}",
            on_click="ignore",
            icon=_ui.ICONS["export"],
            width="stretch",
        )
with st.expander("Report preview"):
    md = next(f for f in files if f.kind == "report_md")
    st.code(md.data.decode("utf-8"), language="markdown")
