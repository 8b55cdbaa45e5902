"""Issue 16 through AppTest: the release history, the spend gate, teaching runs off the private budget, the sidebar's
total right after a spend, releases that fail after they were attempted."""

from __future__ import annotations

import json
import re

from dpsu_core.ledger import LedgerEntry
from dpsu_core.ledger import total as ledger_total
from dpsu_core.mechanisms import get_mechanism
from tests.app.test_pages import _confirm_spend, _go, _new, _ok, _release, _state, _upload_and_load

EPS, DELTA = 3.0, 1e-6
HEADLINE = "ε spent (smallest valid bound)"


def _sidebar_headline(at) -> str:
    return next(m.value for m in at.sidebar.metric if m.label == HEADLINE)


def _plain(text: str) -> str:
    """Text as shown: without the backslashes that escape Markdown."""
    return text.replace("\\", "")


def _spend_boxes(at) -> list:
    return [c for c in at.checkbox if c.key and c.key.startswith("spend_yes_")]


def test_two_releases_on_two_pages_export_keeps_the_first_and_offers_both():
    at = _new()
    _release(at, "policy-gaussian")
    first = _state(at).release_record
    assert first is not None and first.page == "Release"
    # Histogram fill runs another mechanism: a release of its own, asked for (past the sidebar's ε)
    _go(at, "4_histogram")
    at.multiselect(key="hist_mechanisms").set_value(["policy-gaussian", "weighted-gaussian"])
    at.run()
    assert at.button(key="hist_run").disabled  # ε total 4.29 > 3: the yes comes first
    assert _confirm_spend(at)
    at.button(key="hist_run").click()
    at.run()
    _ok(at)
    state = _state(at)
    assert [r.page for r in state.history.records] == ["Release", "Histogram fill"]
    second = state.history.records[1]
    assert second.mechanism == "weighted-gaussian" and state.spent().releases == 2
    # the Release page and Export still show the Release page's release, and name it
    _go(at, "2_release")
    assert any(first.title().split(" · ")[0] in _plain(c.value) for c in at.caption)
    _go(at, "7_export")
    _ok(at)
    box = at.selectbox(key="export_release")
    assert box.value == first.number and len(box.options) == 2
    assert any("Exporting release #1" in _plain(c.value) for c in at.caption)
    files = state.export_files(first)
    rep = json.loads(next(f.data for f in files if f.kind == "report_json"))
    assert rep["mechanism"] == "policy-gaussian" and rep["release"] == first.title()
    # the user can pick the other one: its files and command follow
    box.set_value(second.number)
    at.run()
    _ok(at)
    assert any("Exporting release #2" in _plain(c.value) for c in at.caption)
    assert any("weighted-gaussian" in c.value for c in at.code)  # the batch command redoes release #2


def test_compare_asks_again_after_it_spent_and_the_sidebar_shows_the_new_total_at_once():
    at = _new()
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["weighted-gaussian"])
    at.number_input(key="cmp_runs").set_value(2)
    at.run()
    (yes,) = _spend_boxes(at)
    assert "becomes ε = 4.286" in _plain(yes.label) and "Gaussian-DP composition" in _plain(yes.label)
    yes.check()
    at.run()
    at.button(key="cmp_run").click()
    at.run()  # no rerun after a comparison: the sidebar is redrawn in this very run
    _ok(at)
    t = _state(at).spent()
    assert t.releases == 2 and _sidebar_headline(at) == f"{t.epsilon:.4g}" == "4.286"
    # the same comparison again: a new yes, for the new total, unticked; the button is off until it is given
    boxes = _spend_boxes(at)
    assert len(boxes) == 1 and boxes[0].key != yes.key and boxes[0].value is False
    cal = get_mechanism("weighted-gaussian", epsilon=EPS, delta=DELTA).calibrate()
    four = ledger_total([LedgerEntry.from_calibration(cal, corpus_id="demo", source="x", releases=4)])
    assert f"becomes ε = {four.epsilon:.4g}" in _plain(boxes[0].label)
    assert at.button(key="cmp_run").disabled
    assert _state(at).spent().releases == 2


def test_one_click_on_neighbouring_corpora_with_defaults_spends_nothing_on_the_private_corpus():
    at = _new()
    _upload_and_load(at, "posts.csv", 40)
    _go(at, "8_neighbours")
    assert at.radio(key="nb_target").value == "demo"
    assert any("One click makes 400 releases" in _plain(c.value) for c in at.caption)
    at.button(key="nb_run").click()
    at.run()
    _ok(at)
    state = _state(at)
    assert state.neighbours is not None and state.neighbours.corpus_name.startswith("demo")
    assert state.ledger.entries == [] and state.spent().releases == 0
    # picking the private corpus states its cost and needs the explicit yes
    at.radio(key="nb_target").set_value("private")
    at.run()
    (yes,) = _spend_boxes(at)
    assert "posts.csv" in _plain(yes.label) and at.button(key="nb_run").disabled
    assert any("400 releases on posts.csv" in _plain(i.value) for i in at.info)
    yes.check()
    at.run()
    at.button(key="nb_run").click()
    at.run()
    _ok(at)
    assert state.spent().releases == 400
    assert _sidebar_headline(at) == f"{state.spent().epsilon:.4g}"  # at once, without a rerun


def test_a_release_that_raises_after_it_was_attempted_is_in_the_ledger():
    at = _new()  # the demo corpus, read with n-grams up to length 1
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("dpne")
    at.run()
    at.number_input(key="param_max_n").set_value(3)
    at.run()
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    assert any("DPNE needs n-grams up to length 3" in _plain(e.value) for e in at.error)
    state = _state(at)
    assert len(state.ledger.entries) == 1 and state.ledger.entries[0].mechanism == "dpne"
    assert len(state.history) == 0  # no output, but the attempt spent
    assert _sidebar_headline(at) == "3"
    # a comparison failing at its second mechanism: the runs attempted before and at the failure are counted
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["policy-gaussian", "dpne"])
    at.number_input(key="cmp_runs").set_value(2)
    at.run()
    assert _confirm_spend(at)
    at.button(key="cmp_run").click()
    at.run()
    _ok(at)
    assert any("the comparison failed" in _plain(e.value) for e in at.error)
    assert [e.mechanism for e in state.ledger.entries] == ["dpne", "policy-gaussian", "policy-gaussian", "dpne"]


def test_teaching_mode_cannot_spend_on_the_private_corpus():
    at = _new()
    _upload_and_load(at, "posts.csv", 40)
    at.toggle(key="teaching").set_value(True)
    at.run()
    _go(at, "2_release")
    assert at.button(key="run_release").disabled
    assert any("Teaching mode (fixed seed) runs on exploration corpora only" in _plain(e.value) for e in at.error)
    _go(at, "6_compare")
    assert at.button(key="cmp_run").disabled
    _go(at, "8_neighbours")
    at.radio(key="nb_target").set_value("private")
    at.run()
    assert at.button(key="nb_run").disabled
    assert _state(at).ledger.entries == []
    # on the demo (the teaching view's default) it runs, with the fixed seed and nothing spent
    at.radio(key="nb_target").set_value("demo")
    at.run()
    at.button(key="nb_run").click()
    at.run()
    _ok(at)
    assert _state(at).neighbours.runs.seeded and _state(at).ledger.entries == []


def test_seeded_release_on_the_public_demo_leaves_the_totals_without_a_guarantee():
    at = _new()  # the bundled demo is the corpus in use: teaching may run there, and the totals say what it costs
    at.toggle(key="teaching").set_value(True)
    at.run()
    _release(at, "policy-gaussian")
    t = _state(at).spent()
    assert t.releases == 1 and not t.guaranteed
    assert _sidebar_headline(at) == "no DP guarantee"
    # the total the pages quote matches a ledger made of the same entry
    cal = get_mechanism("policy-gaussian", epsilon=EPS, delta=DELTA).calibrate()
    same = ledger_total([LedgerEntry.from_calibration(cal, corpus_id="demo", source="x", teaching=True)])
    assert same.headline() == t.headline() == "no DP guarantee on this corpus"


def test_sidebar_states_the_ledger_scope_and_alpha_follows_its_spec():
    from dpsu_core.params import PARAMS

    at = _new()
    scope = [c.value for c in at.sidebar.caption if c.value.startswith("Scope")]
    assert scope and "this browser session" in scope[0] and "this exact file" in scope[0]
    assert at.sidebar.number_input(key="alpha").max == PARAMS["alpha"].maximum


def test_longest_ngram_widget_follows_the_parameter_spec():
    from dpsu_core.params import PARAMS

    at = _new()
    w = at.number_input(key="corpus_max_n")
    assert (w.min, w.max) == (PARAMS["max_n"].minimum, PARAMS["max_n"].maximum)


def _shown_headers(frame_element) -> list[str]:
    """The headers a table shows: its column config's label where one is set, else the frame's column name."""
    config = json.loads(frame_element.proto.columns or "{}")
    return [config.get(str(c), {}).get("label", str(c)) for c in frame_element.value.columns]


SNAKE = re.compile(r"^[a-z]+(_[a-z0-9]+)+$")


def test_diagnostics_tables_show_headers_in_words():
    at = _new()
    _release(at, "policy-gaussian")
    seen = {}
    for page in ("4_histogram", "5_coverage", "3_thresholds"):
        _go(at, page)
        seen[page] = [h for d in at.dataframe for h in _shown_headers(d)]
    _go(at, "8_neighbours")
    at.button(key="nb_run").click()
    at.run()
    seen["8_neighbours"] = [h for d in at.dataframe for h in _shown_headers(d)]
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["weighted-laplace"])
    at.run()
    _confirm_spend(at)
    at.button(key="cmp_run").click()
    at.run()
    seen["6_compare"] = [h for d in at.dataframe for h in _shown_headers(d)]
    for page, heads in seen.items():
        assert heads, page
        assert not [h for h in heads if SNAKE.match(h)], (page, heads)


def test_the_sidebar_ledger_is_a_table_of_mechanism_releases_epsilon_and_delta():
    at = _new()
    _release(at, "policy-gaussian")
    (table,) = at.sidebar.table
    frame = table.value
    assert list(frame.columns) == ["mechanism", "×", "ε", "δ"]
    assert frame.iloc[0].tolist() == ["Policy Gaussian", 1, "3", "1e-06"]
