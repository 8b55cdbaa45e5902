"""Chart functions are tested on their Vega-Lite specs (chart.to_dict()), no browser."""

import numpy as np
import pandas as pd
import pytest

from dpsu_core.analysis import charts
from dpsu_core.analysis.threshold_tables import thresholds_vs_epsilon, thresholds_vs_max_items
from dpsu_core.errors import ParameterError


def rows(spec, part):
    """The data rows a (sub)chart of a to_dict() spec ships to the browser."""
    data = part.get("data") or spec["data"]  # altair hoists data shared by all layers to the top
    return spec["datasets"][data["name"]]


def title_text(spec):
    t = spec["title"]
    return " ".join([t["text"], *t.get("subtitle", [])]) if isinstance(t, dict) else t


@pytest.fixture(scope="module")
def eps_table():
    return thresholds_vs_epsilon([0.5, 1, 2, 4], 1e-6, 100, 4.0)


def test_thresholds_chart_rho_and_gamma(eps_table):
    spec = charts.thresholds_chart(eps_table, y="rho").to_dict()
    data = rows(spec, spec)
    assert len(data) == len(eps_table)
    assert spec["mark"]["type"] == "line"
    assert spec["encoding"]["y"]["field"] == "rho" and spec["encoding"]["y"]["scale"]["type"] == "log"
    assert spec["encoding"]["x"]["field"] == "epsilon"
    assert spec["encoding"]["color"]["field"] == "label"
    got = sorted((r["label"], r["epsilon"], r["rho"]) for r in data)
    assert got == sorted(zip(eps_table["label"], eps_table["epsilon"], eps_table["rho"]))
    assert "Public" in title_text(spec)

    g = charts.thresholds_chart(eps_table, y="gamma", log_y=False).to_dict()
    gdata = rows(g, g)
    assert len(gdata) == int(eps_table["gamma"].notna().sum()) > 0  # mechanisms without Gamma are left out
    assert g["encoding"]["y"]["field"] == "gamma" and g["encoding"]["y"]["scale"].get("type") != "log"


def test_thresholds_chart_title_keeps_capital_gamma(eps_table):
    spec = charts.thresholds_chart(eps_table, y="gamma").to_dict()
    assert spec["title"]["text"].startswith("Cutoff Γ (Gamma) against ε")


def test_thresholds_chart_falls_back_to_linear_for_non_positive(eps_table):
    df = eps_table.copy()
    df.loc[0, "rho"] = -1.0
    spec = charts.thresholds_chart(df, y="rho", log_y=True).to_dict()
    assert spec["encoding"]["y"]["scale"].get("type") != "log"


def test_rho_vs_max_items_chart():
    df = thresholds_vs_max_items([1, 10, 100, 300], 2.0, 1e-6, 4.0)
    spec = charts.rho_vs_max_items_chart(df).to_dict()
    assert spec["encoding"]["x"]["field"] == "max_items" and spec["encoding"]["x"]["scale"]["type"] == "log"
    assert len(rows(spec, spec)) == len(df)
    assert "ε = 2" in title_text(spec)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda t: charts.thresholds_chart(t, y="delta"), "y must be one of"),
        (lambda t: charts.thresholds_chart(t.drop(columns=["rho"])), "missing: rho"),
        (lambda t: charts.rho_vs_max_items_chart(t), "missing: max_items"),
        (lambda t: charts.thresholds_chart([1, 2]), "DataFrame"),
    ],
)
def test_threshold_chart_bad_input(eps_table, call, match):
    with pytest.raises(ParameterError, match=match):
        call(eps_table)


@pytest.fixture(scope="module")
def weights():
    rng = np.random.default_rng(0)
    w = rng.exponential(2.0, 20_000)
    w[:3000] = 0.0  # zero-weight items: never candidates, not in the histogram
    return w


def test_weight_histogram_is_binned_and_marks_rho_gamma(weights):
    spec = charts.weight_histogram_chart(weights, rho=6.5, gamma=9.0, bins=60).to_dict()
    bars, rules = spec["layer"]
    hist = rows(spec, bars)
    assert 0 < len(hist) <= 60  # aggregated: never one row per item
    assert all(r["items"] > 0 for r in hist)  # empty bins are not drawn
    assert sum(r["items"] for r in hist) == int((weights > 0).sum())
    assert hist[0]["start"] == 0.0 and hist[-1]["end"] == pytest.approx(weights.max())
    # counts per bin agree with an independent count
    pos = weights[weights > 0]
    for r in hist[:5]:
        assert r["items"] == int(((pos >= r["start"]) & (pos < r["end"])).sum())
    marks = {r["line"]: r["value"] for r in rows(spec, rules)}
    assert sorted(marks.values()) == [6.5, 9.0]
    assert bars["mark"]["type"] == "bar" and rules["mark"]["type"] == "rule"
    assert "NON-PRIVATE" in title_text(spec) and "not differentially private" in title_text(spec).lower()
    assert f"{int((weights > 0).sum()):,} items" in title_text(spec)  # with thousands separators


def test_weight_histogram_y_axis_starts_at_zero_without_empty_bins():
    # a gap in the weights (nothing between 2 and 8) makes empty bins; none is drawn, no axis below 0
    w = np.concatenate([np.linspace(0.1, 2.0, 500), np.full(3, 8.0), np.zeros(50)])
    for log_y in (True, False):
        spec = charts.weight_histogram_chart(w, rho=5.0, bins=40, log_y=log_y).to_dict()
        bars = spec["layer"][0]
        hist = rows(spec, bars)
        assert hist and all(r["items"] > 0 for r in hist) and sum(r["items"] for r in hist) == 503
        assert len(hist) < 40
        y = bars["encoding"]["y"]
        assert y["scale"]["domain"][0] == 0 and y["scale"]["domain"][1] == max(r["items"] for r in hist)
        assert y["scale"].get("type") == ("symlog" if log_y else None)
        if log_y:  # labelled ticks 0, 1, 2, 5, 10, ... up to the tallest bar (500 items in the first bins)
            top = y["scale"]["domain"][1]
            assert y["axis"]["values"][:5] == [0, 1, 2, 5, 10] and max(y["axis"]["values"]) <= top
        assert bars["encoding"]["y2"] == {"datum": 0}  # bars rise from 0


def test_weight_histogram_x_domain_reaches_rho(weights):
    spec = charts.weight_histogram_chart(weights / 100, rho=40.0).to_dict()
    bars, rules = spec["layer"]
    assert bars["encoding"]["x"]["scale"]["domain"][1] >= 40.0
    assert [r["value"] for r in rows(spec, rules)] == [40.0]  # no Gamma rule without Gamma


def test_weight_histogram_empty_and_bad_input():
    spec = charts.weight_histogram_chart(np.zeros(10), rho=3.0).to_dict()
    assert rows(spec, spec["layer"][0]) == []
    assert "0 items with positive weight" in title_text(spec)
    with pytest.raises(ParameterError, match="no weight histogram"):
        charts.weight_histogram_chart(None, rho=3.0)
    with pytest.raises(ParameterError, match="NaN"):
        charts.weight_histogram_chart(np.array([1.0, np.nan]), rho=3.0)
    with pytest.raises(ParameterError, match="bins"):
        charts.weight_histogram_chart(np.ones(3), rho=3.0, bins=0)
    with pytest.raises(ParameterError, match="rho"):
        charts.weight_histogram_chart(np.ones(3), rho="high")


def test_multi_weight_histogram(weights):
    named = {"Policy Gaussian": (weights, 6.5, 12.0), "Weighted Gaussian": (weights * 0.5, 6.5, None)}
    spec = charts.multi_weight_histogram_chart(named, bins=30).to_dict()
    panels = spec["concat"]
    assert len(panels) == 2
    for panel, (name, (w, rho, gamma)) in zip(panels, named.items()):
        bars, rules = panel["layer"]
        assert panel["title"]["text"] == name
        assert 0 < len(rows(spec, bars)) <= 30 and sum(r["items"] for r in rows(spec, bars)) == int((w > 0).sum())
        assert sorted(r["value"] for r in rows(spec, rules)) == sorted(v for v in (rho, gamma) if v is not None)
    assert spec["resolve"]["scale"]["x"] == "independent"
    assert "NON-PRIVATE" in title_text(spec)
    with pytest.raises(ParameterError, match="non-empty dict"):
        charts.multi_weight_histogram_chart({})
    with pytest.raises(ParameterError, match="weights, rho, gamma"):
        charts.multi_weight_histogram_chart({"x": weights})


def test_released_per_length_chart():
    spec = charts.released_per_length_chart({1: 17, 2: 254, 3: 1273}).to_dict()
    bars = spec["layer"][0]
    assert sorted((r["n"], r["released"]) for r in rows(spec, bars)) == [(1, 17), (2, 254), (3, 1273)]
    assert "Private output" in title_text(spec)
    empty = charts.released_per_length_chart({}).to_dict()
    assert rows(empty, empty["layer"][0]) == []
    with pytest.raises(ParameterError, match="per_length"):
        charts.released_per_length_chart([17, 254])


def coverage_df():
    return pd.DataFrame(
        {
            "n": [0, 0, 0, 1, 1, 1, 2, 2, 2],
            "k": [1, 10, 100] * 3,
            "s_k": [500, 60, 4, 300, 50, 4, 200, 10, 0],
            "released": [80, 80, 80, 60, 60, 60, 20, 20, 20],
            "size_ratio": [0.16, 80 / 60, 20.0, 0.2, 1.2, 15.0, 0.1, 2.0, np.inf],
            "recall": [0.15, 0.9, 1.0, 0.19, 0.95, 1.0, 0.1, 1.0, np.nan],
        }
    )


def test_coverage_chart():
    df = coverage_df()
    spec = charts.coverage_chart(df).to_dict()
    ratio_panel, recall_panel = spec["hconcat"]
    for panel in (ratio_panel, recall_panel):
        assert panel["encoding"]["x"]["field"] == "k" and panel["encoding"]["x"]["scale"]["type"] == "log"
        assert panel["encoding"]["color"]["field"] == "length"
        assert panel["encoding"]["y"]["axis"]["format"] == "~%"
    # the size ratio spans decades (20 = 2000%): log axis, so n = 1 is not flattened against the largest ratio
    assert ratio_panel["encoding"]["y"]["scale"]["type"] == "log"
    ratio = {(r["length"], r["k"]): r["size_ratio"] for r in rows(spec, ratio_panel)}
    assert ratio[("n = 1", 10)] == pytest.approx(1.2) and ratio[("all lengths", 100)] == pytest.approx(20.0)
    assert len(ratio) == len(df) - 1  # the k with |S_k| = 0 has no ratio
    assert recall_panel["encoding"]["y"]["scale"]["domain"] == [0.0, 1.0]
    assert "NON-PRIVATE" in title_text(spec)
    single = charts.coverage_chart(df[df["n"] != 2]).to_dict()
    assert {r["length"] for r in rows(single, single["hconcat"][0])} == {"n = 1"}  # "all" would repeat it
    with pytest.raises(ParameterError, match="missing: recall"):
        charts.coverage_chart(df.drop(columns=["recall"]))


def test_all_zero_coverage_keeps_a_readable_axis():
    """A release of 0 items: every share is 0; the axes still run 0..100% (not a collapsed 0.000000% axis)."""
    df = coverage_df().assign(released=0, size_ratio=0.0, recall=0.0)
    spec = charts.coverage_chart(df).to_dict()
    for panel in spec["hconcat"]:
        assert panel["encoding"]["y"]["scale"]["domain"] == [0.0, 1.0]


def test_labels_are_not_cut_and_length_ticks_are_upright(eps_table):
    spec = charts.thresholds_chart(eps_table).to_dict()
    assert spec["encoding"]["color"]["legend"]["labelLimit"] >= 400
    bars = charts.released_per_length_chart({1: 3, 2: 4}).to_dict()
    assert bars["layer"][0]["encoding"]["x"]["axis"]["labelAngle"] == 0


def test_kanon_sizes_chart():
    df = coverage_df()
    spec = charts.kanon_sizes_chart(df[["n", "k", "s_k"]]).to_dict()
    assert spec["mark"]["type"] == "line"
    assert sorted(r["s_k"] for r in rows(spec, spec)) == sorted(df["s_k"])
    assert "NON-PRIVATE" in title_text(spec)
    with_rel = charts.kanon_sizes_chart(df).to_dict()
    lines, rules = with_rel["layer"]
    assert {(r["length"], r["released"]) for r in rows(with_rel, rules)} == {
        ("all lengths", 80),
        ("n = 1", 60),
        ("n = 2", 20),
    }
    assert "private release" in title_text(with_rel)


def test_compare_chart():
    s = pd.DataFrame(
        {
            "mechanism": ["a", "b"],
            "label": ["A", "B"],
            "mean": [100.0, 3.0],
            "sd": [10.0, 5.0],
            "runs": [5, 5],
            "mean_seconds": [0.1, 0.2],
        }
    )
    spec = charts.compare_chart(s).to_dict()
    bars, err, labels = spec["layer"]
    assert bars["mark"]["type"] == "bar" and err["mark"]["type"] == "errorbar" and labels["mark"]["type"] == "text"
    assert bars["encoding"]["y"]["field"] == "label"  # horizontal bars: names read left to right
    data = {r["label"]: r for r in rows(spec, err)}
    assert (data["A"]["low"], data["A"]["high"]) == (90.0, 110.0)
    assert (data["B"]["low"], data["B"]["high"]) == (0.0, 8.0)  # a count cannot go below 0
    assert "5 runs each" in title_text(spec) and "sample sd" in title_text(spec)
    # one run: the sd is undefined, so no error bars (not zero-width ticks) and the subtitle says why
    one = s.assign(sd=[np.nan, np.nan], runs=[1, 1])
    spec1 = charts.compare_chart(one).to_dict()
    assert [layer["mark"]["type"] for layer in spec1["layer"]] == ["bar", "text"]
    assert "1 run each" in title_text(spec1) and "at least two runs" in title_text(spec1)
    assert all(r["low"] == r["high"] == r["mean"] for r in rows(spec1, spec1["layer"][0]))
    # mixed: error bars only for the mechanism with an sd
    mixed = s.assign(sd=[10.0, np.nan], runs=[5, 1])
    spec2 = charts.compare_chart(mixed).to_dict()
    assert [r["label"] for r in rows(spec2, spec2["layer"][1])] == ["A"]


def test_relative_error_chart():
    rng = np.random.default_rng(2)
    rel = rng.normal(0, 0.08, 5000)
    df = pd.DataFrame(
        {
            "item": [f"w{i}" for i in range(5002)],
            "true_count": 1,
            "noisy_count": 1,
            "rel_error": np.concatenate([rel, [np.inf, np.nan]]),
        }
    )
    spec = charts.relative_error_chart(df, r=0.1, bins=40).to_dict()
    bars, rule = spec["layer"]
    hist = rows(spec, bars)
    assert len(hist) == 40 and sum(h["items"] for h in hist) == 5000
    assert [r["value"] for r in rows(spec, rule)] == [0.1]
    share = float(np.mean(np.abs(rel) <= 0.1))
    assert f"{share:.1%} of 5,000" in title_text(spec)
    assert "2 item(s)" in title_text(spec) and "NON-PRIVATE" in title_text(spec)
    with pytest.raises(ParameterError, match="rel_error"):
        charts.relative_error_chart(pd.DataFrame({"x": [1]}))


def test_utility_charts():
    from dpsu_core.analysis.utility import utility_preview
    from dpsu_core.mechanisms import get_mechanism

    p = utility_preview(get_mechanism("weighted-gaussian", epsilon=3, delta=1e-6, max_items=20).calibrate())
    spec = charts.utility_curve_chart(p.curve(), p.users_needed).to_dict()
    pts = rows(spec, spec["layer"][1])
    assert sorted(r["users"] for r in pts) == sorted(p.users_needed.values())
    assert "Public" in title_text(spec)
    counts = np.array([1] * 50 + [3] * 10 + [200] * 4)
    dist = charts.item_user_distribution_chart(counts, {0.5: 100, 0.9: 150}).to_dict()
    bins = rows(dist, dist["layer"][0])
    assert sum(r["items"] for r in bins) == counts.size
    y = dist["layer"][0]["encoding"]["y"]  # symlog from 0: the 4 items held by 200 users stay visible
    assert y["scale"]["type"] == "symlog" and y["scale"]["domain"] == [0, 50] and y["axis"]["values"][:3] == [0, 1, 2]
    assert "NON-PRIVATE" in title_text(dist) and "4 items have at least the users for a 50% chance" in title_text(dist)


def test_neighbours_and_loss_charts():
    table = pd.DataFrame(
        {
            "item": ["a", "b", "c"],
            "users_in_D": [10, 2, 1],
            "p_D": [1.0, 0.4, 0.02],
            "p_D2": [1.0, 0.3, 0.0],
            "p_D2_low": [0.98, 0.25, 0.0],
            "p_D2_high": [1.0, 0.35, 0.02],
            "band_low": [0.05, 0.02, 0.0],
            "band_high": [1.0, 1.0, 0.4],
            "inside": [True, True, True],
        }
    )
    spec = charts.neighbours_chart(table, 3.0, 1e-6, max_items=2).to_dict()
    shown = rows(spec, spec["layer"][0])
    assert [r["item"] for r in shown] == ["b", "c"]  # largest gap between D and D' first
    assert "NON-PRIVATE" in title_text(spec)
    loss = charts.privacy_loss_chart(np.array([0.0, 0.1, 0.2, 4.0]), 3.0).to_dict()
    assert sum(r["runs"] for r in rows(loss, loss["layer"][0])) == 4
    assert "25.0% of 4 runs above ε" in title_text(loss)


@pytest.mark.parametrize("make", ["eps", "max_items"])
def test_threshold_charts_have_one_legend_and_a_fixed_dash_per_noise(eps_table, make):
    """One legend (the mechanisms): the noise family is a fixed dash named in the subtitle. A second legend
    for it did not fit beside ten mechanisms and was cut off in the browser."""
    df = eps_table if make == "eps" else thresholds_vs_max_items([1, 10, 100], 2.0, 1e-6, 4.0)
    chart = charts.thresholds_chart(df) if make == "eps" else charts.rho_vs_max_items_chart(df)
    spec = chart.to_dict()
    dash = spec["encoding"]["strokeDash"]
    assert dash["legend"] is None
    assert dict(zip(dash["scale"]["domain"], dash["scale"]["range"])) == {"gaussian": [1, 0], "laplace": [6, 3]}
    assert "dashed: Laplace" in " ".join(spec["title"]["subtitle"])
    assert set(df["family"]) <= set(dash["scale"]["domain"])  # every family in the tables gets its dash


def _ranged_bars(spec: dict) -> list[dict]:
    """The encodings of every bar mark in ``spec`` (layers included) whose bins are given as x .. x2."""
    found = []
    for layer in spec.get("layer", [spec]):
        mark = layer.get("mark", {})
        kind = mark.get("type") if isinstance(mark, dict) else mark
        if kind == "bar" and "x2" in layer.get("encoding", {}):
            found.append(layer["encoding"])
    return found


@pytest.mark.parametrize(
    "make",
    [
        lambda: charts.relative_error_chart(pd.DataFrame({"rel_error": [0.01, 0.05, 0.2, -0.03]})),
        lambda: charts.privacy_loss_chart(np.array([-0.1, 0.0, 0.4, 0.5]), 1.0),
        lambda: charts.item_user_distribution_chart(np.array([1, 1, 3, 9, 40]), {0.5: 5, 0.9: 20}),
        lambda: charts.weight_histogram_chart(np.array([0.5, 1.0, 2.5, 3.0]), rho=2.0, gamma=3.0),
    ],
    ids=["relative_error", "privacy_loss", "item_users", "weights"],
)
def test_histogram_bars_rise_from_zero(make):
    """A bar whose bin is x .. x2 needs y2 as well: without it Vega-Lite draws a thin bar at the count
    (the histograms looked like floating dashes in the browser)."""
    spec = make().to_dict()
    bars = _ranged_bars(spec)
    assert bars, "no binned bar layer found"
    for enc in bars:
        assert enc.get("y2") == {"datum": 0}


def test_a_mechanism_has_one_colour_on_every_chart_and_coinciding_lines_stay_visible():
    """Issue 16: the same mechanism had different colours from chart to chart, and lines hid under identical ones."""
    eps = thresholds_vs_epsilon([0.5, 1, 2, 4], 1e-6, 100, 4.0, include_published_gw=True)
    specs = [
        charts.thresholds_chart(eps, y="rho").to_dict(),
        charts.thresholds_chart(eps[np.isfinite(eps["gamma"])], y="gamma").to_dict(),
        charts.rho_vs_max_items_chart(thresholds_vs_max_items([1, 10, 100], 2.0, 1e-6, 4.0)).to_dict(),
    ]
    colour_of: dict[str, str] = {}
    for spec in specs:
        scale = spec["encoding"]["color"]["scale"]
        for label, colour in zip(scale["domain"], scale["range"]):
            assert colour_of.setdefault(label, colour) == colour, label
        assert len(set(scale["range"])) == len(scale["domain"])  # no two mechanisms share a colour on a chart
    # lines that coincide (e.g. GW and GW-KT's rho) are named and the one underneath is wider
    rho = specs[0]
    data = rows(rho, rho)
    width = {r["label"]: r["width"] for r in data}
    by_label: dict[str, list] = {}
    for r in data:
        by_label.setdefault(r["label"], []).append((r["epsilon"], round(r["rho"], 9)))
    same = [(a, b) for a in by_label for b in by_label if a < b and sorted(by_label[a]) == sorted(by_label[b])]
    assert same, "the ρ table has mechanisms with identical thresholds (GW and GW-KT)"
    for a, b in same:
        assert width[a] != width[b]
        assert f"{a} = {b}" in title_text(rho) or f"{b} = {a}" in title_text(rho)


def test_two_mechanism_histogram_draws_rho_and_gamma_differently(weights):
    named = {"Policy Gaussian": (weights, 6.5, 12.0), "Weighted Gaussian": (weights * 0.5, 6.5, None)}
    spec = charts.multi_weight_histogram_chart(named, bins=30).to_dict()
    for panel in spec["concat"]:
        enc = panel["layer"][1]["encoding"]
        assert enc["color"]["scale"]["domain"] == list(charts.RULES)
        colours, dashes = enc["color"]["scale"]["range"], enc["strokeDash"]["scale"]["range"]
        assert len(set(colours)) == 2 and dashes[0] != dashes[1]


def test_neighbours_chart_labels_every_item():
    table = pd.DataFrame(
        {
            "item": [f"w{i}" for i in range(30)],
            "users_in_D": range(30),
            "p_D": 0.5,
            "p_D2": 0.4,
            "p_D2_low": 0.3,
            "p_D2_high": 0.5,
            "band_low": 0.1,
            "band_high": 0.9,
            "inside": True,
        }
    )
    spec = charts.neighbours_chart(table, 3.0, 1e-6).to_dict()
    x = spec["layer"][0]["encoding"]["x"] if "encoding" in spec["layer"][0] else spec["encoding"]["x"]
    assert x["axis"]["labelOverlap"] is False and spec["width"] == {"step": 24}
    assert len(spec["title"]["text"]) < 60  # short enough not to be clipped
