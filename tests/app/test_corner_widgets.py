"""Issue 26 through the app's own widgets: the Release page at the ends of the ranges its widgets offer
(sidebar epsilon and delta, Delta0, alpha, and the mechanism's own parameters, all generated from the same specs
as the CLI) on an uploaded canary corpus releases no lone word."""

from __future__ import annotations

import csv
import io

import pytest

from pages import _account
from tests.app.test_pages import _confirm_spend, _go, _new, _ok, _state
from tests.corners import SHARED_WORDS, canary_lines


def _upload_canary(at):
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["author", "body"])
    w.writerows(canary_lines())
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload("canary.csv", buf.getvalue().encode(), "text/csv")
    at.run()
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert _state(at).corpus.n_users == len(canary_lines())
    return at


def _widget_end(widget, end: str):
    return widget.min if end == "min" else widget.max


@pytest.mark.parametrize(
    "mechanism, params",
    [
        ("policy-sips", {"param_rounds": "max", "param_round_ratio": "min", "alpha": "max"}),
        ("policy-gaussian", {"alpha": "max", "max_items": "max"}),
        ("dp-sips", {"param_rounds": "max", "param_ratio": "min"}),
    ],
)
@pytest.mark.parametrize("eps_end, delta_end", [("min", "min"), ("max", "min")])
def test_release_page_at_its_widget_ends_releases_no_lone_word(mechanism, params, eps_end, delta_end):
    at = _upload_canary(_new())
    at.sidebar.number_input(key="epsilon").set_value(_widget_end(at.sidebar.number_input(key="epsilon"), eps_end))
    at.sidebar.number_input(key="delta").set_value(_widget_end(at.sidebar.number_input(key="delta"), delta_end))
    at.run()
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value(mechanism)
    at.run()
    for key, end in params.items():  # the mechanism's own widgets on the page, Delta0 and alpha in the sidebar
        w = at.sidebar.number_input(key=key) if key in ("alpha", "max_items") else at.number_input(key=key)
        w.set_value(_widget_end(w, end))
    at.run()
    _confirm_spend(at)
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    rel = _account.release_record(_state(at)).release
    assert set(map(str, rel.items)) <= set(SHARED_WORDS), sorted(map(str, rel.items))[:5]
