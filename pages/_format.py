"""Display helpers of the app: labels, tables and text for the pages. No Streamlit; every number comes
from dpsu_core, this module only shapes it for display."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsu_core.mechanisms import Calibration, list_mechanisms, mechanism_class
from dpsu_core.outputs.export import format_value
from dpsu_core.wording import count_text
from pages._text import SD_UNDEFINED


def mechanism_labels(*kinds: str) -> dict[str, str]:
    """name -> 'Label (kind)' for the drop-downs, in registry order (only the given kinds if any)."""
    return {name: f"{cls.label} ({cls.kind})" for name, cls in list_mechanisms(*kinds).items()}


def calibration_rows(cal: Calibration) -> list[tuple[str, str]]:
    """(quantity, value) rows for display: the public calibration, nothing from data. The threshold and cutoff
    are the mechanism's headline figures (``calibration_view``: for rounds, the last round's)."""
    cls = mechanism_class(cal.mechanism)
    view = cls.calibration_view(cal)
    rows = [("noise", cal.noise)] + [(name, f"{v:.6g}") for name, v in cls.noise_quantities(cal)]
    if view.rounds:
        rows += [(name, "—" if v is None else f"{v:.6g}") for name, v in view.headline]
    else:
        if cal.rho is not None:
            rows.append(("ρ (threshold)", f"{cal.rho:.6g}"))
        if cal.gamma is not None:
            rows.append(("Γ (cutoff)", f"{cal.gamma:.6g}"))
    rows += [(str(k), format_value(v)) for k, v in cal.details.as_dict().items()]
    return rows


def headline_text(cal: Calibration) -> str:
    """The calibration's headline figures in one line ("Noise std (σ) 1.588 · Threshold ρ 6.82 · ..."): for a rounds
    mechanism the last round's, said so (``calibration_view``)."""
    view = mechanism_class(cal.mechanism).calibration_view(cal)
    text = " · ".join(f"{name} {v:.4g}" for name, v in view.headline if v is not None)
    return f"{cal.label}: {text}" + (f" ({len(view.rounds)} rounds: the last round's figures)" if view.rounds else "")


def rounds_frame(cal: Calibration) -> pd.DataFrame | None:
    """The per-round table (σᵢ, Tᵢ, Γᵢ, δᵢ, share) of a rounds mechanism, or None for a single-threshold one."""
    view = mechanism_class(cal.mechanism).calibration_view(cal)
    if not view.rounds:
        return None
    frame = pd.DataFrame(view.round_records())
    return frame if any(r.gamma is not None for r in view.rounds) else frame.drop(columns="Γᵢ")


#: number formats of the per-round table (``rounds_frame``)
ROUND_FORMATS = {"σᵢ": "%.4g", "Tᵢ": "%.4g", "Γᵢ": "%.4g", "δᵢ": "%.3g", "share": "%.3g"}


def budget_summary(epsilon: float, delta: float, max_items: int, alpha: float) -> str:
    return f"ε = {epsilon:g}, δ = {delta:.1e}, Δ0 = {count_text(max_items)}, α = {alpha:g}"


def parse_canaries(text: str) -> list[str]:
    """One canary per line (blank lines ignored)."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def filter_items(frame: pd.DataFrame, query: str) -> pd.DataFrame:
    """Rows whose item contains ``query`` (plain substring, case-insensitive)."""
    if not query:
        return frame
    mask = frame["item"].astype(str).str.contains(query, case=False, regex=False)
    return frame[np.asarray(mask, dtype=bool)]


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:&\"'=")


def escape_markdown(text: str) -> str:
    """Backslash-escape Markdown/HTML punctuation so user-supplied text (file names, column names,
    error messages quoting them) is shown literally in Streamlit elements that render Markdown."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


_MD_INLINE = set("\\`*_~$[]<>|")


def plain_text(text: str) -> str:
    """Backslash-escape the characters that start Markdown or HTML formatting inside a line (emphasis, code,
    links, maths, tags), so raw data quoted in a message (``_TheSpecialOne_``) shows as typed; lighter than
    ``escape_markdown``, leaving punctuation such as quotes and colons as they are."""
    return "".join("\\" + ch if ch in _MD_INLINE else ch for ch in str(text))


def compare_summary_display(summary: pd.DataFrame) -> pd.DataFrame:
    """``compare.summarize`` for display: the sd as text, "–" where it is undefined (a single run has no
    sample standard deviation), instead of a bare None/NaN cell."""
    out = summary.copy()
    sd = out["sd"].astype(float)
    out["sd"] = [f"{v:.1f}" if np.isfinite(v) else SD_UNDEFINED for v in sd]
    return out


# Column headers in words for the diagnostics and parameter tables (the frames keep their field names).
NEIGHBOUR_HEADERS = {
    "users_in_D": "users in D (raw)",
    "p_D": "P(released | D)",
    "p_D_low": "P(D) 99% low",
    "p_D_high": "P(D) 99% high",
    "p_D2": "P(released | D′)",
    "p_D2_low": "P(D′) 99% low",
    "p_D2_high": "P(D′) 99% high",
    "band_low": "band low",
    "band_high": "band high",
    "inside": "inside the band",
}
RUN_HEADERS = {
    "released": "items released",
    "seconds": "seconds (not private)",
    "recovered_mass": "recovered mass (NOT private)",
}
THRESHOLD_HEADERS = {
    "family": "noise",
    "epsilon": "ε",
    "scale": "noise scale",
    "rho": "threshold ρ",
    "gamma": "cutoff Γ",
    "max_items": "Δ0",
}


def header_labels(frame: pd.DataFrame, names: dict[str, str]) -> dict[str, str]:
    """column -> its header in words (``released_n2`` -> "released 2-grams"); the frame keeps its field names."""
    cols = [str(c) for c in frame.columns]
    out = {c: names[c] for c in cols if c in names}
    out |= {c: f"released {c.removeprefix('released_n')}-grams" for c in cols if c.startswith("released_n")}
    return out


#: pixels per character of a table cell (Streamlit's sans-serif at its table size, with room to spare) and padding
CELL_CHAR_PX, CELL_PAD_PX = 8, 24


def text_width(values) -> int:
    """The pixel width of a table column that shows each of ``values`` whole (a label is never cut)."""
    longest = max((len(str(v)) for v in values), default=0)
    return max(120, CELL_CHAR_PX * longest + CELL_PAD_PX)
