"""Issue 39's polish through AppTest on the Histogram fill page: counts with thousands separators (item 17), the
fill table's mechanism names never cut (item 18), a Γ legend only where a Γ exists (item 19)."""

from __future__ import annotations

import json

import pytest

from pages._format import CELL_CHAR_PX
from tests.app.test_pages import _go, _new, _release

GAMMA_LEGEND = "Γ (policy cutoff)"


def _charts(at) -> list[str]:
    """The page's Vega-Lite specs, as the browser receives them."""
    return [json.dumps(json.loads(el.proto.spec), ensure_ascii=False) for el in at.get("vega_lite_chart")]


@pytest.fixture(scope="module")
def histogram():
    """DP-SIPS alone (no cutoff Γ), then Policy Gaussian beside it (a cutoff)."""
    at = _release(_new(), "dp-sips")
    _go(at, "4_histogram")
    sips_only = (_charts(at), [d.proto.columns for d in at.dataframe], [d.value for d in at.dataframe])
    _release(at, "policy-gaussian")
    _go(at, "4_histogram")
    at.multiselect(key=next(m.key for m in at.multiselect)).set_value(["dp-sips", "policy-gaussian"])
    at.run()
    return at, sips_only


def test_no_gamma_legend_without_a_gamma(histogram):
    at, (specs, _, _) = histogram
    assert specs and all(GAMMA_LEGEND not in s for s in specs)  # DP-SIPS: ρ only
    assert all("ρ (release threshold)" in s for s in specs)
    both = _charts(at)  # Policy Gaussian has a Γ: the shared legend names it
    assert any(GAMMA_LEGEND in s for s in both), [s[:200] for s in both]


def test_counts_beside_figures_have_thousands_separators(histogram):
    at, (specs, _, frames) = histogram
    n = int(frames[0]["n_positive"].iloc[0])
    assert n >= 1000  # the demo corpus: a figure that needs a separator
    assert any(f"{n:,} items with positive weight" in s for s in specs)
    assert not any(f"{n} items with positive weight" in s for s in specs)
    configs = [json.loads(c) for c in histogram[1][1]]
    assert configs[0]["n_positive"]["type_config"]["format"] == "localized"  # the table's count column too


def test_the_fill_tables_mechanism_column_holds_every_label_whole(histogram):
    at, (_, configs, frames) = histogram
    for cfg, frame in zip(configs, frames):
        col = json.loads(cfg)["mechanism"]
        longest = max(len(str(v)) for v in frame["mechanism"])
        assert isinstance(col["width"], int) and col["width"] >= CELL_CHAR_PX * longest and col["pinned"], col
    # two mechanisms, the rounds table included: still every label whole
    for d in at.dataframe:
        col = json.loads(d.proto.columns)["mechanism"]
        assert col["width"] >= CELL_CHAR_PX * max(len(str(v)) for v in d.value["mechanism"])
