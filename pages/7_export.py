"""Page 7: download the private release and its report. Nothing from the raw data is exported."""
import streamlit as st

from dpsu_core import app_logic as al
from dpsu_core.export import report_json, report_markdown, to_csv_bytes, to_json_bytes, to_txt_bytes
from pages import _ui

_ui.require_app()

ss = st.session_state
st.title("7 · Export")
st.caption("Downloads hold only the private output: the released items (for count mechanisms, the noisy count "
           "and its standard deviation), the calibration and the guarantee. No raw counts, weights or user ids.")

corpus = _ui.get_corpus()
rel = _ui.current_release()
if corpus is None or rel is None:
    _ui.need_release()
    st.stop()

cal = rel.calibration
st.info(cal.guarantee, icon="🔐")
if rel.seed is not None:
    st.error("This release was made in teaching mode with a fixed seed: it is NOT for real use. "
             "The report says so too.", icon="🎓")
try:
    leaked = al.canaries_in_release(rel, ss.get("canaries", []))
except Exception as exc:
    leaked = []
    _ui.show_error(exc, "could not check the canaries")
if leaked:
    st.warning(f"This release contains {len(leaked)} canaries (single-user strings). They are part of the "
               "differentially private output, but the budget is far too loose for real use.", icon="⚠️")

base = al.export_basename(rel)
try:
    files = [
        ("Released items (CSV)", to_csv_bytes(rel), f"{base}.csv", "text/csv", "dl_csv"),
        ("Released items (JSON)", to_json_bytes(rel), f"{base}.json", "application/json", "dl_json"),
        ("Released items (TXT)", to_txt_bytes(rel), f"{base}.txt", "text/plain", "dl_txt"),
        ("Release report (JSON)", report_json(rel), f"{base}_report.json", "application/json", "dl_report_json"),
        ("Release report (Markdown)", report_markdown(rel).encode("utf-8"), f"{base}_report.md", "text/markdown",
         "dl_report_md"),
    ]
except Exception as exc:
    _ui.show_error(exc, "the export failed")
    st.stop()

m = st.columns(3)
m[0].metric("Items released", f"{rel.n_released:,}")
m[1].metric("Mechanism", cal.label)
m[2].metric("Budget", f"ε={cal.epsilon:g}, δ={cal.delta:.1e}")
cols = st.columns(len(files))
for col, (label, data, fname, mime, key) in zip(cols, files):
    col.download_button(label, data=data, file_name=fname, mime=mime, key=key)
with st.expander("Report preview"):
    st.code(report_markdown(rel), language="markdown")
