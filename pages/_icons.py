"""The app's icons: no imports, so app.py draws the menu with them before the heavy modules load."""

# Material Symbols (rendered from Streamlit's bundled icon font): emoji need an emoji font, often missing.
ICONS = {
    "app": ":material/lock:",
    "corpus": ":material/description:",
    "release": ":material/lock:",
    "thresholds": ":material/show_chart:",
    "histogram": ":material/bar_chart:",
    "coverage": ":material/track_changes:",
    "compare": ":material/compare_arrows:",
    "export": ":material/download:",
    "error": ":material/block:",
    "warning": ":material/warning:",
    "teaching": ":material/school:",
    "guarantee": ":material/verified_user:",
    "ok": ":material/check_circle:",
    "neighbours": ":material/group_remove:",
    "explore": ":material/travel_explore:",
    "ledger": ":material/receipt_long:",
    "custodian": ":material/admin_panel_settings:",
}
