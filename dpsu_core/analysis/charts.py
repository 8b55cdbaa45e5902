"""Pure functions that return Altair charts. No Streamlit, no I/O.

Every chart title says whether what it shows is private output, public calibration, or a
NON-PRIVATE diagnostic computed from the raw data. Distributions over items are aggregated
to bins in numpy first: the browser never receives one row per item.
"""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..privacy.validate import check_choice, check_number, check_positive_int
from ..wording import count_text

NON_PRIVATE = "NON-PRIVATE diagnostic"
LABEL_LIMIT = 480  # px: mechanism names such as "GW as published (unproven reference)" are never cut short
_Y_LABELS = {"rho": "threshold ρ (rho)", "gamma": "cutoff Γ (Gamma)", "scale": "noise scale (λ or σ)"}


# --------------------------------------------------------------------------- helpers
def _need_columns(df, columns, what: str, source: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(f"{what} needs a pandas DataFrame from {source}, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ParameterError(
            f"{what} needs the columns {', '.join(columns)} (from {source}); missing: {', '.join(missing)}"
        )
    return df


def _title(text: str, *subtitle: str) -> alt.TitleParams:
    return alt.TitleParams(text=text, subtitle=[s for s in subtitle if s], anchor="start")


def _positive_scale(values: pd.Series, log: bool) -> alt.Scale:
    """A log scale when asked and every value is > 0 (log of 0 or less is undefined); linear otherwise."""
    v = pd.to_numeric(values, errors="coerce").dropna()
    if log and len(v) and bool((v > 0).all()):
        return alt.Scale(type="log")
    return alt.Scale(zero=False)


def _as_weights(weights, name: str = "weights") -> np.ndarray:
    if weights is None:
        raise ParameterError(
            f"{name} is None: this mechanism keeps no weight histogram; choose a set-union mechanism to see its weights"
        )
    w = np.asarray(weights, dtype=np.float64).ravel()
    if not np.isfinite(w).all():
        raise ParameterError(f"{name} contains NaN or infinite values; pass Release.diagnostics.weights unchanged")
    return w


def _check_float(x, name: str, allow_none: bool = False):
    if x is None and allow_none:
        return None
    return check_number(x, name, hint=f"pass the calibration's {name}")


def _check_bins(bins) -> int:
    return check_positive_int(bins, "bins", "e.g. 60", maximum=1000)


def histogram_frame(
    values: np.ndarray, bins: int, upper: float | None = None, lower: float | None = None
) -> pd.DataFrame:
    """Bins [start, end) with their counts (numpy aggregation; the last bin is closed). The range runs from
    ``lower`` (default: min(0, smallest value)) to ``upper`` (default: the largest value)."""
    if values.size == 0:
        return pd.DataFrame({"start": [], "end": [], "items": []}).astype(
            {"start": float, "end": float, "items": np.int64}
        )
    hi = float(values.max()) if upper is None else float(upper)
    lo = min(0.0, float(values.min())) if lower is None else float(lower)
    if hi <= lo:
        hi = lo + 1.0
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi))
    return pd.DataFrame({"start": edges[:-1], "end": edges[1:], "items": counts.astype(np.int64)})


def _binned_bars(
    hist: pd.DataFrame,
    x_title: str,
    count: str,
    y_title: str,
    x_scale=alt.Undefined,
    *,
    y_scale=alt.Undefined,
    y_axis=alt.Undefined,
    edge_format: str = ".3g",
    edge_titles: tuple[str, str] = ("from", "to"),
    count_format=alt.Undefined,
) -> alt.Chart:
    """Bars over the [start, end) bins of ``hist`` with their counts in column ``count``, rising from 0
    (``y2``: with ``x2`` set and no ``y2``, Vega-Lite draws each bin as a thin bar at its count)."""
    return (
        alt.Chart(hist)
        .mark_bar(opacity=0.8)
        .encode(
            x=alt.X("start:Q", title=x_title, scale=x_scale),
            x2="end:Q",
            y=alt.Y(f"{count}:Q", title=y_title, scale=y_scale, axis=y_axis),
            y2=alt.datum(0),
            tooltip=[
                alt.Tooltip("start:Q", title=edge_titles[0], format=edge_format),
                alt.Tooltip("end:Q", title=edge_titles[1], format=edge_format),
                alt.Tooltip(f"{count}:Q", title=count, format=count_format),
            ],
        )
    )


def _symlog_counts(top: int) -> dict:
    """``y_scale`` / ``y_axis`` of a count axis from 0 to ``top`` on a symlog scale (log-like for counts
    >= 1, defined at 0, so bars still rise from 0), labelled 0, 1, 2, 5, 10, ..."""
    return {
        "y_scale": alt.Scale(type="symlog", domain=[0, top], nice=False),
        "y_axis": alt.Axis(values=_count_ticks(top)),
    }


def _labelled_rule(label: str, value: float, color: str) -> alt.Chart:
    """A dashed vertical rule at ``value`` whose tooltip names it."""
    return (
        alt.Chart(pd.DataFrame({"line": [label], "value": [value]}))
        .mark_rule(strokeWidth=2, strokeDash=[6, 3], color=color)
        .encode(x="value:Q", tooltip=[alt.Tooltip("line:N", title="line")])
    )


def _length_label(n) -> str:
    return "all lengths" if int(n) == 0 else f"n = {int(n)}"


def _drop_redundant_all(df: pd.DataFrame) -> pd.DataFrame:
    """n = 0 (all lengths) repeats the single length when there is only one: drop it then."""
    lengths = set(df["n"].astype(int)) - {0}
    if len(lengths) == 1 and (df["n"] == 0).any():
        return df[df["n"] != 0]
    return df


# --------------------------------------------------------------------------- calibration (public)
NOISE_DASH = {"gaussian": [1, 0], "laplace": [6, 3]}  # noise family -> line dash
NOISE_NOTE = "Solid lines: Gaussian noise; dashed: Laplace noise."


# One colour per mechanism on every chart (tableau20, in registry order, the unproven GW reference last).
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
)  # fmt: skip


def mechanism_colours() -> dict[str, str]:
    """label -> colour, the same on every chart: the registry's mechanisms in order, then GW as published."""
    from ..mechanisms import list_mechanisms
    from .threshold_tables import PUBLISHED_GW_LABEL

    labels = [cls.label for cls in list_mechanisms().values()] + [PUBLISHED_GW_LABEL]
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}


def _coinciding(data: pd.DataFrame, x: str, y: str) -> list[list[str]]:
    """Groups of mechanisms whose lines are the same (equal y at every x, to 9 significant digits)."""
    series: dict[tuple, list[str]] = {}
    for label, part in data.groupby("label", sort=False):
        key = tuple((float(a), float(f"{b:.9g}")) for a, b in sorted(zip(part[x], part[y].astype(float))))
        series.setdefault(key, []).append(str(label))
    return [g for g in series.values() if len(g) > 1]


def _mechanism_lines(data: pd.DataFrame, x: str, y: str) -> tuple[pd.DataFrame, dict, str]:
    """Colour per mechanism (fixed across charts, ``mechanism_colours``); a fixed dash per noise family, named in
    the subtitle (``NOISE_NOTE``) rather than in a second legend, which did not fit under ten mechanisms. Lines
    that coincide are drawn wider underneath, so each stays visible; the subtitle names them."""
    colours = mechanism_colours()
    labels = list(dict.fromkeys(data["label"].astype(str)))
    groups = _coinciding(data, x, y)
    width = {label: 2.0 for label in labels}
    for g in groups:
        for i, label in enumerate(g):
            width[label] = 2.0 + 3.0 * (len(g) - 1 - i)
    data = data.assign(width=data["label"].map(width)).sort_values("width", ascending=False, kind="stable")
    enc = {
        "color": alt.Color(
            "label:N",
            title="mechanism",
            legend=alt.Legend(labelLimit=LABEL_LIMIT),
            scale=alt.Scale(domain=labels, range=[colours.get(lb, "#000000") for lb in labels]),
        ),
        "strokeDash": alt.StrokeDash(
            "family:N", scale=alt.Scale(domain=list(NOISE_DASH), range=list(NOISE_DASH.values())), legend=None
        ),
        "strokeWidth": alt.StrokeWidth("width:Q", scale=None, legend=None),
    }
    note = "; ".join(" = ".join(g) for g in groups)
    return data, enc, (f"Same line (drawn wider underneath): {note}." if note else "")


def thresholds_chart(df: pd.DataFrame, y: str = "rho", log_y: bool = True) -> alt.Chart:
    """rho (or gamma, or scale) against epsilon, one line per mechanism, from ``thresholds_vs_epsilon``."""
    check_choice(y, "y", tuple(_Y_LABELS))
    _need_columns(
        df, ["mechanism", "label", "family", "epsilon", y], "thresholds_chart", "threshold_tables.thresholds_vs_epsilon"
    )
    data = df[[c for c in ("label", "family", "epsilon", "scale", "rho", "gamma") if c in df.columns]].copy()
    data = data[np.isfinite(data[y].astype(float))]
    tips = [alt.Tooltip("label:N", title="mechanism"), alt.Tooltip("epsilon:Q", title="ε", format=".3g")]
    tips += [
        alt.Tooltip(f"{c}:Q", title=_Y_LABELS[c], format=".4g") for c in ("rho", "gamma", "scale") if c in data.columns
    ]
    data, lines, same = _mechanism_lines(data, "epsilon", y)
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "epsilon:Q",
                title="ε (epsilon)",
                scale=alt.Scale(type="log", nice=False) if (data["epsilon"] > 0).all() else alt.Scale(),
            ),
            y=alt.Y(f"{y}:Q", title=_Y_LABELS[y], scale=_positive_scale(data[y], log_y)),
            **lines,
            tooltip=tips,
        )
        .properties(
            title=_title(
                f"{_Y_LABELS[y][:1].upper()}{_Y_LABELS[y][1:]} against ε",  # keeps Γ (capitalize() -> γ)
                "Public calibration: depends on the parameters only, never on the data.",
                NOISE_NOTE,
                same,
            )
        )
    )


def rho_vs_max_items_chart(df: pd.DataFrame, log_y: bool = True) -> alt.Chart:
    """rho against Delta0 (log axis), one line per mechanism, from ``thresholds_vs_max_items``."""
    _need_columns(
        df,
        ["mechanism", "label", "family", "max_items", "rho"],
        "rho_vs_max_items_chart",
        "threshold_tables.thresholds_vs_max_items",
    )
    data = df[["label", "family", "max_items", "rho"] + [c for c in ("epsilon",) if c in df.columns]].copy()
    data = data[np.isfinite(data["rho"].astype(float))]
    eps = sorted(set(data["epsilon"])) if "epsilon" in data.columns else []
    sub = f"at ε = {eps[0]:g}; " if len(eps) == 1 else ""
    data, lines, same = _mechanism_lines(data, "max_items", "rho")
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("max_items:Q", title="Δ0 (max items per user)", scale=alt.Scale(type="log")),
            y=alt.Y("rho:Q", title=_Y_LABELS["rho"], scale=_positive_scale(data["rho"], log_y)),
            **lines,
            tooltip=[
                alt.Tooltip("label:N", title="mechanism"),
                alt.Tooltip("max_items:Q", title="Δ0"),
                alt.Tooltip("rho:Q", title="ρ", format=".4g"),
            ],
        )
        .properties(
            title=_title(
                "Threshold ρ against Δ0",
                f"{sub}public calibration: depends on the parameters only, never on the data.",
                NOISE_NOTE,
                same,
            )
        )
    )


# --------------------------------------------------------------------------- weights (NON-private)
def _count_ticks(top: int) -> list[int]:
    """0, 1, 2, 5, 10, 20, 50, ... up to ``top``: labelled ticks for a symlog count axis (its own ticks are sparse)."""
    ticks, m = [0], 1
    while m <= top:
        ticks += [v for v in (m, 2 * m, 5 * m) if v <= top]
        m *= 10
    return ticks


RULES = ("ρ (release threshold)", "Γ (policy cutoff)")  # the two rules of a weight histogram
#: weights spanning more than this many times the threshold (and no cutoff) get log-spaced bins on a log axis
LOG_WEIGHT_SPAN = 20.0


def _log_weights(pos: np.ndarray, rho: float, gamma: float | None) -> bool:
    """Bin on a log scale: no cutoff caps the weights, and the largest is far beyond rho (with equal-width bins,
    rho would sit inside the first bar)."""
    return gamma is None and rho > 0 and pos.size > 0 and float(pos.max()) > LOG_WEIGHT_SPAN * rho


def _weight_layers(
    weights: np.ndarray, rho: float, gamma: float | None, bins: int, log_y: bool, legend: tuple[str, ...] = RULES
):
    """The bars and the rules of one weight histogram; ``legend``: the rules the legend lists (Γ only where a
    panel has a cutoff: a mechanism without one, DP-SIPS or Weighted, shows no Γ in its legend)."""
    pos = weights[weights > 0]  # weight-0 items are never candidates; they are not part of the histogram
    upper = max([float(pos.max()) if pos.size else 0.0, rho] + ([gamma] if gamma is not None else []))
    if _log_weights(pos, rho, gamma):
        # weights far beyond the threshold (no cutoff: Count, Weighted): equal-width bins would put rho inside the
        # first bar; log-spaced bins on a log axis resolve the weights around rho and the tail alike
        lower = min(float(pos.min()), rho)
        edges = np.geomspace(lower, upper, bins + 1)
        counts, _ = np.histogram(pos, bins=edges)
        hist = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "items": counts.astype(np.int64)})
        x_scale = alt.Scale(type="log", domain=[lower / 1.05, upper * 1.05])
        x_title = "weight H (before noise, log scale)"
    else:
        hist = histogram_frame(pos, bins)
        x_scale = alt.Scale(domain=[0.0, upper * 1.05 if upper > 0 else 1.0])
        x_title = "weight H (before noise)"
    hist = hist[hist["items"] > 0].reset_index(drop=True)  # empty bins are not drawn (no bars of height 0)
    top = max(int(hist["items"].max()) if len(hist) else 1, 1)
    linear = {"y_scale": alt.Scale(domain=[0, top], nice=True), "y_axis": alt.Axis()}
    bars = _binned_bars(
        hist,
        x_title,
        "items",
        "items (symlog scale)" if log_y else "items",
        x_scale,
        edge_format=".4g",
        **(_symlog_counts(top) if log_y else linear),
    )
    marks = [{"line": RULES[0], "value": rho}]
    if gamma is not None:
        marks.append({"line": RULES[1], "value": gamma})
    rules = (
        alt.Chart(pd.DataFrame(marks))
        .mark_rule(strokeWidth=2)
        .encode(
            x=alt.X("value:Q", scale=x_scale),
            # dark dashed ρ, red dotted Γ on every panel (one scale for both, whether a panel has Γ or not): both
            # stay visible next to the blue bars (the tallest bar often ends right at Γ)
            color=alt.Color(
                "line:N",
                title="marks",
                scale=alt.Scale(domain=list(legend), range=["#333333", "#d62728"][: len(legend)]),
            ),
            strokeDash=alt.StrokeDash(
                "line:N", scale=alt.Scale(domain=list(legend), range=[[6, 3], [2, 2]][: len(legend)])
            ),
            tooltip=[alt.Tooltip("line:N", title="line"), alt.Tooltip("value:Q", title="value", format=".4g")],
        )
    )
    return alt.layer(bars, rules), int(pos.size)


def weight_histogram_chart(
    weights, rho: float, gamma: float | None = None, bins: int = 60, log_y: bool = True, name: str | None = None
) -> alt.LayerChart:
    """Distribution of the positive weights H with rules at rho and Gamma. A NON-private diagnostic."""
    w = _as_weights(weights)
    rho = _check_float(rho, "rho")
    gamma = _check_float(gamma, "gamma", allow_none=True)
    chart, n_pos = _weight_layers(w, rho, gamma, _check_bins(bins), log_y, RULES if gamma is not None else RULES[:1])
    head = f"{name}: weights H" if name else "Weight histogram H"
    return chart.properties(
        title=_title(
            f"{head} — {NON_PRIVATE}",
            "Computed from the raw data before noise: NOT differentially private; do not publish.",
            f"{count_text(n_pos)} items with positive weight (weight-0 items are never candidates).",
        )
    )


def multi_weight_histogram_chart(
    named_weights: Mapping[str, tuple], bins: int = 40, log_y: bool = True, columns: int = 2
) -> alt.ConcatChart:
    """Several mechanisms' weight histograms side by side: {name: (weights, rho, gamma)}. NON-private."""
    if not isinstance(named_weights, Mapping) or not named_weights:
        raise ParameterError(
            "named_weights must be a non-empty dict {mechanism name: (weights, rho, gamma)}; "
            "run at least one set-union mechanism first"
        )
    panels = []
    entries = {}
    for name, entry in named_weights.items():
        if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
            raise ParameterError(f"named_weights[{name!r}] must be (weights, rho, gamma), got {type(entry).__name__}")
        entries[name] = (*entry, None) if len(entry) == 2 else tuple(entry)
    legend = RULES if any(e[2] is not None for e in entries.values()) else RULES[:1]  # Γ only where one exists
    for name, (weights, rho, gamma) in entries.items():
        layer, n_pos = _weight_layers(
            _as_weights(weights, f"weights of {name}"),
            _check_float(rho, "rho"),
            _check_float(gamma, "gamma", allow_none=True),
            _check_bins(bins),
            log_y,
            legend,
        )
        panels.append(
            layer.properties(
                width=260, height=180, title=_title(str(name), f"{count_text(n_pos)} items with positive weight")
            )
        )
    return (
        alt.concat(*panels, columns=max(1, int(columns)))
        .resolve_scale(x="independent", y="independent")
        .properties(
            title=_title(
                f"Weight histograms H — {NON_PRIVATE}",
                "Computed from the raw data before noise: NOT differentially private; do not publish.",
            )
        )
    )


# --------------------------------------------------------------------------- released output (private)
def released_per_length_chart(per_length: Mapping[int, int]) -> alt.LayerChart:
    """Bar chart of released items per n-gram length (``Release.per_length()``): private output."""
    if not isinstance(per_length, Mapping):
        raise ParameterError(
            f"per_length must be a dict {{length: count}} (Release.per_length()), got {type(per_length).__name__}"
        )
    data = pd.DataFrame({"n": [int(k) for k in per_length], "released": [int(v) for v in per_length.values()]})
    data["n"] = data["n"].astype(np.int64)
    data["released"] = data["released"].astype(np.int64)
    base = alt.Chart(data).encode(
        x=alt.X("n:O", title="n-gram length", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("released:Q", title="items released"),
        tooltip=[alt.Tooltip("n:O", title="n-gram length"), alt.Tooltip("released:Q", title="items released")],
    )
    return alt.LayerChart(layer=[base.mark_bar(), base.mark_text(dy=-6).encode(text="released:Q")]).properties(
        title=_title("Released items per n-gram length", "Private output (counts of the released set).")
    )


# --------------------------------------------------------------------------- coverage (NON-private)
def _share_scale(values: pd.Series, log: bool) -> alt.Scale:
    """A share axis that never collapses: log (or symlog with zeros) for ratios that span decades, and at
    least 0..100% otherwise, so an all-zero series reads 0% to 100% instead of a degenerate 0.000000% axis."""
    v = pd.to_numeric(values, errors="coerce").dropna()
    top = float(v.max()) if len(v) else 0.0
    if log and len(v) and top > 0:
        if bool((v > 0).all()):
            return alt.Scale(type="log")
        return alt.Scale(type="symlog", constant=0.01, domainMin=0)
    return alt.Scale(domain=[0.0, max(1.0, top)])


def coverage_chart(df: pd.DataFrame) -> alt.HConcatChart:
    """Size ratio |S|/|S_k| (log axis: it spans decades and can exceed 100%) and recall |S ∩ S_k|/|S_k|
    (0 to 100%) against k (log axis), one line per length. NON-private."""
    _need_columns(df, ["n", "k", "s_k", "released", "size_ratio", "recall"], "coverage_chart", "metrics.coverage_table")
    data = _drop_redundant_all(df[df["k"] > 0]).copy()
    data["length"] = data["n"].map(_length_label)
    panels = []
    for col, title, log in (
        ("size_ratio", "size ratio |S| / |S_k| (log scale)", True),
        ("recall", "recall |S ∩ S_k| / |S_k|", False),
    ):
        part = data[np.isfinite(data[col].astype(float))][["length", "k", "s_k", "released", col]]
        panels.append(
            alt.Chart(part)
            .mark_line(point=True)
            .encode(
                x=alt.X("k:Q", title="k (users per item at least)", scale=alt.Scale(type="log")),
                y=alt.Y(f"{col}:Q", title=title, scale=_share_scale(part[col], log), axis=alt.Axis(format="~%")),
                color=alt.Color("length:N", title="n-gram length", legend=alt.Legend(labelLimit=LABEL_LIMIT)),
                tooltip=[
                    alt.Tooltip("length:N", title="length"),
                    alt.Tooltip("k:Q", title="k"),
                    alt.Tooltip(f"{col}:Q", title=title.replace(" (log scale)", ""), format=".1%"),
                    alt.Tooltip("s_k:Q", title="|S_k|", format=","),
                    alt.Tooltip("released:Q", title="released", format=","),
                ],
            )
            .properties(width=280, height=220, title=title)
        )
    return alt.hconcat(*panels).properties(
        title=_title(
            f"Coverage of the k-anonymity sets S_k — {NON_PRIVATE}",
            "S_k (items used by at least k users) comes from the raw data: NOT private. The size ratio can exceed 100%.",
        )
    )


def kanon_sizes_chart(df: pd.DataFrame, log_y: bool = True) -> alt.Chart | alt.LayerChart:
    """|S_k| against k per n-gram length (from ``metrics.kanon_sets_sizes``); NON-private.

    With a ``released`` column (``metrics.coverage_table``) the private release size is drawn
    as a dashed line per length for comparison.
    """
    _need_columns(df, ["n", "k", "s_k"], "kanon_sizes_chart", "metrics.kanon_sets_sizes")
    data = _drop_redundant_all(df[df["k"] > 0]).copy()
    data["length"] = data["n"].map(_length_label)
    y_scale = alt.Scale(type="symlog") if log_y else alt.Scale()
    lines = (
        alt.Chart(data[["length", "k", "s_k"]])
        .mark_line(point=True)
        .encode(
            x=alt.X("k:Q", title="k (users per item at least)", scale=alt.Scale(type="log")),
            y=alt.Y("s_k:Q", title="items", scale=y_scale),
            color=alt.Color("length:N", title="n-gram length", legend=alt.Legend(labelLimit=LABEL_LIMIT)),
            tooltip=[
                alt.Tooltip("length:N", title="length"),
                alt.Tooltip("k:Q", title="k"),
                alt.Tooltip("s_k:Q", title="|S_k| (raw data)", format=","),
            ],
        )
    )
    sub = "S_k = items used by at least k distinct users, computed from the raw data: NOT private."
    chart = lines
    if "released" in data.columns:
        rel = data.groupby("length", as_index=False)["released"].first()
        rules = (
            alt.Chart(rel)
            .mark_rule(strokeDash=[6, 3])
            .encode(
                y=alt.Y("released:Q", scale=y_scale),
                color=alt.Color("length:N"),
                tooltip=[
                    alt.Tooltip("length:N", title="length"),
                    alt.Tooltip("released:Q", title="released (private)"),
                ],
            )
        )
        chart = alt.layer(lines, rules)
        sub += " Dashed: size of the private release."
    return chart.properties(title=_title(f"Size of the k-anonymity sets |S_k| — {NON_PRIVATE}", sub))


# --------------------------------------------------------------------------- comparison and counts
def compare_chart(df: pd.DataFrame) -> alt.LayerChart:
    """Mean ± sd of released items per mechanism (from ``compare.summarize``), as horizontal bars so the
    mechanism names read left to right. Error bars only where the sd is defined (two runs or more)."""
    _need_columns(df, ["mechanism", "label", "mean", "sd", "runs"], "compare_chart", "compare.summarize")
    data = df[["label", "mean", "sd", "runs"]].copy()
    sd = data["sd"].astype(float)
    has_sd = sd.notna() & (data["runs"].astype(int) >= 2)
    data["low"] = np.where(has_sd, np.maximum(data["mean"].astype(float) - sd.fillna(0.0), 0.0), data["mean"])
    data["high"] = np.where(has_sd, data["mean"].astype(float) + sd.fillna(0.0), data["mean"])
    order = list(data["label"])
    y = alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelLimit=LABEL_LIMIT))
    tips = [
        alt.Tooltip("label:N", title="mechanism"),
        alt.Tooltip("mean:Q", title="mean released", format=".1f"),
        alt.Tooltip("sd:Q", title="sd", format=".1f"),
        alt.Tooltip("runs:Q", title="runs"),
    ]
    x_title = "items released (mean ± sd)" if has_sd.any() else "items released"
    bars = alt.Chart(data).mark_bar().encode(y=y, x=alt.X("mean:Q", title=x_title), tooltip=tips)
    labels = (
        alt.Chart(data)
        .mark_text(align="left", dx=4)
        .encode(y=y, x=alt.X("high:Q"), text=alt.Text("mean:Q", format=".1f"))
    )
    layers = [bars]
    if has_sd.any():
        layers.append(
            alt.Chart(data[has_sd]).mark_errorbar(ticks=True).encode(y=y, x=alt.X("low:Q", title=x_title), x2="high:Q")
        )
    layers.append(labels)
    runs = sorted(set(int(r) for r in data["runs"]))
    n_runs = f"{count_text(runs[0])} run{'s' if runs[0] != 1 else ''} each" if len(runs) == 1 else "several runs"
    bars_note = (
        "error bars: sample sd over runs"
        if has_sd.all()
        else "no error bars: the sd needs at least two runs"
        if not has_sd.any()
        else "error bars (sample sd over runs) where there are at least two runs"
    )
    return alt.LayerChart(layer=layers).properties(
        height=alt.Step(28),
        title=_title(
            "Released items per mechanism",
            f"{n_runs}; each run's count is the size of a private release ({bars_note}).",
        ),
    )


def relative_error_chart(df: pd.DataFrame, r: float = 0.1, bins: int = 40) -> alt.LayerChart:
    """Distribution of |relative error| of released counts (``metrics.relative_errors``), rule at r. NON-private."""
    _need_columns(df, ["rel_error"], "relative_error_chart", "metrics.relative_errors")
    r = _check_float(r, "r")
    err = np.abs(pd.to_numeric(df["rel_error"], errors="coerce").to_numpy(dtype=np.float64))
    finite = err[np.isfinite(err)]
    hist = histogram_frame(finite, _check_bins(bins), upper=max(float(finite.max()) if finite.size else 0.0, r))
    within = float(np.mean(finite <= r)) if finite.size else float("nan")
    bars = _binned_bars(hist, "|relative error| of the released count", "items", "released items")
    rule = _labelled_rule(f"target r = {r:g}", r, "firebrick")
    share = (
        f"{within:.1%} of {count_text(finite.size)} released counts within r." if finite.size else "no released counts."
    )
    dropped = err.size - finite.size
    note = f" {dropped} item(s) without a finite relative error (true count 0) left out." if dropped else ""
    return alt.LayerChart(layer=[bars, rule]).properties(
        title=_title(
            f"Relative error of released counts — {NON_PRIVATE}",
            "Compares the noisy counts with the true counts from the raw data: NOT private.",
            share + note,
        )
    )


# --------------------------------------------------------------------------- utility preview and teaching views
def utility_curve_chart(curve: pd.DataFrame, users_needed: Mapping[float, int | None]) -> alt.LayerChart:
    """P(release) against the number of users holding an item (``utility.Preview.curve``), with the 50% and 90%
    points. Public: computed from the calibration and the typed assumptions only."""
    _need_columns(curve, ["users", "probability"], "utility_curve_chart", "utility.Preview.curve")
    line = (
        alt.Chart(curve)
        .mark_line()
        .encode(
            x=alt.X("users:Q", title="users holding the item"),
            y=alt.Y(
                "probability:Q", title="chance of release", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="~%")
            ),
            tooltip=[
                alt.Tooltip("users:Q", title="users", format=","),
                alt.Tooltip("probability:Q", title="chance of release", format=".1%"),
            ],
        )
    )
    marks = pd.DataFrame(
        [{"target": f"{t:.0%}", "p": float(t), "users": int(k)} for t, k in users_needed.items() if k is not None]
    )
    layers: list = [line]
    if len(marks):
        pts = alt.Chart(marks).encode(
            x="users:Q",
            y="p:Q",
            tooltip=[alt.Tooltip("target:N", title="chance"), alt.Tooltip("users:Q", title="users needed", format=",")],
        )
        layers += [
            pts.mark_point(filled=True, size=70, color="#d62728"),
            pts.mark_text(align="left", dx=6, dy=8).encode(text=alt.Text("users:Q", format=",")),
        ]
    return alt.LayerChart(layer=layers).properties(
        title=_title(
            "Chance that an item is released, by how many users hold it",
            "Public: from the calibration and the stated assumptions only, never from the data.",
        )
    )


def _log2_bins(counts: np.ndarray) -> pd.DataFrame:
    """Items per users-per-item bin [2^j, 2^(j+1)) (numpy aggregation)."""
    c = counts[counts > 0]
    if c.size == 0:
        return pd.DataFrame({"start": [], "end": [], "items": []})
    top = int(np.ceil(np.log2(c.max() + 1))) + 1
    edges = 2 ** np.arange(top, dtype=np.int64)
    hist, _ = np.histogram(c, bins=np.append(edges, edges[-1] * 2))
    df = pd.DataFrame({"start": edges, "end": edges * 2, "items": hist.astype(np.int64)})
    return df[df["items"] > 0].reset_index(drop=True)


def item_user_distribution_chart(user_counts, users_needed: Mapping[float, int | None]) -> alt.LayerChart:
    """How many items are held by how many users (log2 bins), with the preview's 50%/90% points as rules.
    NON-private: the users per item come from the raw data."""
    counts = np.asarray(user_counts, dtype=np.int64)
    hist = _log2_bins(counts)
    top = max(int(hist["items"].max()) if len(hist) else 1, 1)
    # symlog: the few items held by many users (where the preview's rules sit) stay visible
    bars = _binned_bars(
        hist,
        "users holding the item (log scale)",
        "items",
        "items (symlog scale)",
        alt.Scale(type="log"),
        edge_format=",",
        edge_titles=("from (users)", "to (users, excl.)"),
        count_format=",",
        **_symlog_counts(top),
    )
    marks = pd.DataFrame(
        [{"line": f"{t:.0%} chance", "users": int(k)} for t, k in users_needed.items() if k is not None]
    )
    layers: list = [bars]
    if len(marks):
        layers.append(
            alt.Chart(marks)
            .mark_rule(strokeWidth=2, strokeDash=[6, 3])
            .encode(
                x="users:Q",
                color=alt.Color("line:N", title="preview", scale=alt.Scale(range=["#ff7f0e", "#d62728"])),
                tooltip=[alt.Tooltip("line:N", title="line"), alt.Tooltip("users:Q", title="users", format=",")],
            )
        )
    reach = {t: int(np.count_nonzero(counts >= k)) for t, k in users_needed.items() if k is not None}
    sub = "; ".join(f"{n:,} items have at least the users for a {t:.0%} chance" for t, n in reach.items())
    return alt.LayerChart(layer=layers).properties(
        title=_title(
            f"Items by number of users — {NON_PRIVATE}",
            "Computed from the raw data: NOT differentially private; do not publish.",
            sub,
        )
    )


def neighbours_chart(table: pd.DataFrame, epsilon: float, delta: float, max_items: int = 40) -> alt.LayerChart:
    """Per item of the differing user: release rate under D (black) and D′ (red, with its interval), and the band
    [(p_D − δ)e^−ε, e^ε p_D + δ] that (ε, δ)-DP allows for D′ (grey). NON-private teaching view."""
    _need_columns(
        table,
        ["item", "users_in_D", "p_D", "p_D2", "p_D2_low", "p_D2_high", "band_low", "band_high", "inside"],
        "neighbours_chart",
        "neighbours.run_neighbours",
    )
    eps = _check_float(epsilon, "epsilon")
    # the items where the two corpora can differ most come first (then the most widely held)
    order = table.assign(gap=(table["p_D"] - table["p_D2"]).abs(), mid=-(table["p_D"] - 0.5).abs())
    data = order.sort_values(["gap", "mid", "users_in_D"], ascending=False).head(
        check_positive_int(max_items, "max_items")
    )
    data = data[["item", "users_in_D", "p_D", "p_D2", "p_D2_low", "p_D2_high", "band_low", "band_high", "inside"]]
    x = alt.X(
        "item:N",
        title="item of the differing user",
        sort=list(data["item"]),
        axis=alt.Axis(labelAngle=-45, labelLimit=160, labelOverlap=False),  # every item named
    )
    tips = [
        alt.Tooltip("item:N", title="item"),
        alt.Tooltip("users_in_D:Q", title="users in D (raw)", format=","),
        alt.Tooltip("p_D:Q", title="P(released | D)", format=".3f"),
        alt.Tooltip("p_D2:Q", title="P(released | D′)", format=".3f"),
        alt.Tooltip("band_high:Q", title="e^ε·P_D + δ", format=".3f"),
        alt.Tooltip("inside:N", title="inside the band"),
    ]
    base = alt.Chart(data).encode(x=x, tooltip=tips)
    y = alt.Y(
        "band_low:Q",
        title="probability the item is released",
        scale=alt.Scale(domain=[0, 1]),
        axis=alt.Axis(format="~%"),
    )
    band = base.mark_bar(opacity=0.25, color="#7f7f7f", size=14).encode(y=y, y2="band_high:Q")
    p_d = base.mark_tick(color="black", thickness=3, size=16).encode(y="p_D:Q")
    err = base.mark_rule(color="#d62728").encode(y="p_D2_low:Q", y2="p_D2_high:Q")
    p_d2 = base.mark_point(color="#d62728", filled=True, size=50).encode(y="p_D2:Q")
    return alt.LayerChart(layer=[band, p_d, err, p_d2]).properties(
        width=alt.Step(24),  # room for every item's label
        title=_title(
            f"Release probability per item — {NON_PRIVATE}",
            "D: black ticks; D′: red points.",
            f"Grey: the band (P_D − δ)·e^−ε … e^ε·P_D + δ that ({eps:g}, {delta:.2g})-DP allows for D′; "
            "red bars: 99% intervals of the estimate.",
            f"{count_text(len(data))} of {count_text(len(table))} items shown (those whose rates differ most first).",
        ),
    )


def privacy_loss_chart(loss, epsilon: float, bins: int = 40) -> alt.LayerChart:
    """Histogram of the empirical privacy loss per run (``neighbours.NeighbourRuns.loss``), rule at ε. NON-private."""
    eps = _check_float(epsilon, "epsilon")
    x = np.asarray(loss, dtype=np.float64)
    x = x[np.isfinite(x)]
    lo = min(float(x.min()) if x.size else 0.0, -eps)
    hi = max(float(x.max()) if x.size else 0.0, eps) * 1.05
    hist = histogram_frame(x, _check_bins(bins), upper=hi, lower=lo).rename(columns={"items": "runs"})
    hist = hist[hist["runs"] > 0]
    title = "privacy loss ln(P_with(o) / P_without(o))"
    bars = _binned_bars(hist, title, "runs", "runs", x_scale=alt.Scale(domain=[lo, hi]))
    rule = _labelled_rule(f"ε = {eps:g}", eps, "#d62728")
    above = float(np.mean(x > eps)) if x.size else 0.0
    return alt.LayerChart(layer=[bars, rule]).properties(
        title=_title(
            f"Empirical privacy loss of the runs with the user — {NON_PRIVATE}",
            f"{above:.1%} of {count_text(x.size)} runs above ε (DP allows a share of about δ beyond ε, up to sampling error).",
        )
    )
