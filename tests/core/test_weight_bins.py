"""Weight histograms whose weights run far past the threshold (Count and Weighted mechanisms, no cutoff Γ): log-spaced
bins on a log axis, so ρ does not sit inside the first bar (issue 27.6: Weighted Gaussian's bins were ~20 wide
around ρ = 9.2). Checked on the chart's Vega-Lite spec, no browser."""

import numpy as np

from dpsu_core.analysis import charts


def _hist(spec):
    bars = spec["layer"][0]
    data = bars.get("data") or spec["data"]
    return bars, spec["datasets"][data["name"]]


def test_rho_far_below_the_largest_weight_gets_fine_bins_around_it():
    rng = np.random.default_rng(0)
    # a heavy tail like a Weighted Gaussian histogram: most items near 1, a few common words past 1,000
    w = np.concatenate([rng.pareto(1.2, 20_000) + 0.1, [1200.0], np.zeros(100)])
    rho = 9.2
    bars, hist = _hist(charts.weight_histogram_chart(w, rho=rho, bins=60).to_dict())
    assert bars["encoding"]["x"]["scale"]["type"] == "log" and "log scale" in bars["encoding"]["x"]["title"]
    assert sum(r["items"] for r in hist) == int((w > 0).sum())  # every positive weight in one bin
    below = [r for r in hist if r["end"] <= rho]
    assert len(below) >= 10  # rho is past many bars, not inside the first one
    around = next(r for r in hist if r["start"] <= rho < r["end"])
    assert around["end"] - around["start"] < rho / 2
    # equal-width bins (the old chart) would have put rho inside the first bar: the case this guards
    assert (w.max() / 60) > rho


def test_a_cutoff_or_a_short_range_keeps_equal_width_bins():
    w = np.linspace(0.0, 50.0, 1000)
    for gamma in (None, 20.0):
        rho = 10.0
        bars, hist = _hist(charts.weight_histogram_chart(w, rho=rho, gamma=gamma, bins=50).to_dict())
        assert bars["encoding"]["x"]["scale"].get("type") is None
        widths = {round(r["end"] - r["start"], 9) for r in hist}
        assert len(widths) == 1  # equal width
