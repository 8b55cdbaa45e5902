"""Issue 16 through AppTest: the release history, the spend gate, teaching runs off the private budget, the sidebar's
total right after a spend, releases that fail after they were attempted."""

from __future__ import annotations

import json
import re

from dpsu_core.accounting.ledger import LedgerEntry
from dpsu_core.accounting.ledger import total as ledger_total
from dpsu_core.accounting.spend import PUBLIC_DEMO_SPENT
from dpsu_core.mechanisms import get_mechanism
from pages import _account, _downloads, _workspace
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


def _raise_buttons(at) -> list:
    """The spend gate's "Confirm a new session budget" buttons (an action past the session budget)."""
    return [b for b in at.button if b.key and b.key.startswith("raise_budget_")]


def _set_session_budget(at, epsilon: float, delta: float, confirm: bool = True) -> None:
    """Type a session budget into the sidebar, and confirm it."""
    at.sidebar.number_input(key="session_epsilon").set_value(epsilon)
    at.sidebar.number_input(key="session_delta").set_value(delta)
    at.run()
    if confirm:
        at.sidebar.button(key="session_budget_set").click()
        at.run()


def test_two_releases_on_two_pages_export_keeps_the_first_and_offers_both():
    at = _new()
    _set_session_budget(at, 3.0, 1e-5)
    _release(at, "policy-gaussian")
    first = _account.release_record(_state(at))
    assert first is not None and first.page == "Release"
    # Histogram fill runs another mechanism: a release of its own, blocked past the session budget ε = 3
    _go(at, "4_histogram")
    at.multiselect(key="hist_mechanisms").set_value(["policy-gaussian", "weighted-gaussian"])
    at.run()
    assert at.button(key="hist_run").disabled  # ε total 4.29 > 3: a new budget comes first
    (raise_,) = _raise_buttons(at)
    assert "ε = 4.29" in raise_.label
    assert _confirm_spend(at)
    assert _state(at).session_budget.epsilon == 4.29
    at.button(key="hist_run").click()
    at.run()
    _ok(at)
    state = _state(at)
    assert [r.page for r in state.history.records] == ["Release", "Histogram fill"]
    second = state.history.records[1]
    assert second.mechanism == "weighted-gaussian" and _account.spent(state).releases == 2
    # the Release page and Export still show the Release page's release, and name it
    _go(at, "2_release")
    assert any(first.title().split(" · ")[0] in _plain(c.value) for c in at.caption)
    _go(at, "7_export")
    _ok(at)
    box = at.selectbox(key="export_release")
    assert box.value == first.number and len(box.options) == 2
    assert any("Exporting release #1" in _plain(c.value) for c in at.caption)
    files = _downloads.release_files(state, first)
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
    _set_session_budget(at, 3.0, 1e-5)
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["weighted-gaussian"])
    at.number_input(key="cmp_runs").set_value(2)
    at.run()
    assert at.button(key="cmp_run").disabled
    blocked = [w.value for w in at.warning if "past the session budget" in _plain(w.value)]
    assert blocked and "become ε = 4.286" in _plain(blocked[0]) and "Gaussian-DP composition" in _plain(blocked[0])
    (raise_,) = _raise_buttons(at)
    raise_.click()
    at.run()
    at.button(key="cmp_run").click()
    at.run()  # no rerun after a comparison: the sidebar is redrawn in this very run
    _ok(at)
    t = _account.spent(_state(at))
    assert t.releases == 2 and _sidebar_headline(at) == f"{t.epsilon:.4g}" == "4.286"
    # the same comparison again: past the new budget (4.29), blocked again, the button off until a new budget
    buttons = _raise_buttons(at)
    assert len(buttons) == 1 and buttons[0].key != raise_.key
    cal = get_mechanism("weighted-gaussian", epsilon=EPS, delta=DELTA).calibrate()
    four = ledger_total([LedgerEntry.from_calibration(cal, corpus_id="demo", source="x", releases=4)])
    assert any(f"become ε = {four.epsilon:.4g}" in _plain(w.value) for w in at.warning)
    assert at.button(key="cmp_run").disabled
    assert _account.spent(_state(at)).releases == 2


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
    assert state.ledger.entries == [] and _account.spent(state).releases == 0
    # picking the private corpus states its cost and is blocked past the session budget (δ = 4e-4 > 1e-5)
    at.radio(key="nb_target").set_value("private")
    at.run()
    (raise_,) = _raise_buttons(at)
    assert at.button(key="nb_run").disabled
    assert any("400 releases on posts.csv" in _plain(i.value) for i in at.info)
    assert any("posts.csv would become" in _plain(w.value) for w in at.warning)
    raise_.click()
    at.run()
    at.button(key="nb_run").click()
    at.run()
    _ok(at)
    assert _account.spent(state).releases == 400
    assert _sidebar_headline(at) == f"{_account.spent(state).epsilon:.4g}"  # at once, without a rerun


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
    assert len(state.history) == 0  # no output, but the attempt spent: the history counts it, as the ledger does
    (group,) = state.history.groups_on(_workspace.private_work(state).dataset_key)
    assert group.releases == 1 and group.members == [] and "failed part-way" in group.not_kept
    assert _sidebar_headline(at) == "3"
    # a comparison failing at its second mechanism: the runs attempted before and at the failure are counted
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["policy-gaussian", "dpne"])
    at.number_input(key="cmp_runs").set_value(2)
    at.run()
    _confirm_spend(at)  # within the default session budget: nothing to confirm
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
    t = _account.spent(_state(at))
    assert t.releases == 1 and not t.guaranteed
    assert _sidebar_headline(at) == PUBLIC_DEMO_SPENT  # public data: nothing private to spend
    assert not _spend_boxes(at)  # and no yes was asked for it
    # the total the pages quote matches a ledger made of the same entry
    cal = get_mechanism("policy-gaussian", epsilon=EPS, delta=DELTA).calibrate()
    same = ledger_total([LedgerEntry.from_calibration(cal, corpus_id="demo", source="x", teaching=True)])
    assert same.headline() == t.headline() == "no DP guarantee on this corpus"


def test_sidebar_states_the_ledger_scope_and_alpha_follows_its_spec():
    from dpsu_core.params import PARAMS

    at = _new()  # the bundled public demo: kept in this session only
    scope = [c.value for c in at.sidebar.caption if c.value.startswith("Scope")]
    assert scope and "this browser session" in scope[0] and "not kept in the durable ledger" in scope[0]
    assert at.sidebar.number_input(key="alpha").max == PARAMS["alpha"].maximum
    _upload_and_load(at, "posts.csv", 40)  # an upload: the durable ledger's account, shared by every tool
    durable = [c.value for c in at.sidebar.caption if "in the durable ledger" in c.value]
    assert durable and "every session, tab and tool" in durable[0] and "posts.csv" in _plain(durable[0])


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
    # δ with a non-breaking hyphen: the narrow sidebar cannot wrap it into "1e-" and "06"
    assert frame.iloc[0].tolist() == ["Policy Gaussian", 1, "3", "1e\u201106"]


# ---- issue 27: the session budget apart from each release's ε; one history, the same as the ledger -----------------


def test_the_session_budget_blocks_a_release_that_would_pass_it_until_a_new_budget_is_confirmed():
    at = _new()
    # the release's ε and the session budget are two inputs: the budget typed, not yet confirmed, is not in force
    _set_session_budget(at, 4.0, 1e-5, confirm=False)
    assert _state(at).session_budget.epsilon == 10.0
    assert any("not confirmed yet" in c.value for c in at.sidebar.caption)
    at.sidebar.button(key="session_budget_set").click()
    at.run()
    assert _state(at).session_budget.epsilon == 4.0 and at.sidebar.number_input(key="epsilon").value == EPS
    _release(at, "policy-gaussian")  # ε = 3 of 4: runs on its own button
    assert _account.spent(_state(at)).releases == 1
    left = [p.proto.text for p in at.sidebar.get("progress") if "Session budget left" in p.proto.text]
    assert left == ["Session budget left: ε = 1 of 4, δ = 9e-06 of 1e-05"]
    # a second one would take the total to 4.286 > 4: blocked, with nothing spent, until a new budget is confirmed
    _go(at, "2_release")
    assert at.button(key="run_release").disabled
    assert any("past the session budget ε = 4" in _plain(w.value) for w in at.warning)
    assert _account.spent(_state(at)).releases == 1
    # raising the budget in the sidebar without confirming it changes nothing; confirming it unblocks the release
    _set_session_budget(at, 5.0, 1e-5, confirm=False)
    assert at.button(key="run_release").disabled
    at.sidebar.button(key="session_budget_set").click()
    at.run()
    assert not at.button(key="run_release").disabled
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    assert _account.spent(_state(at)).releases == 2 and _sidebar_headline(at) == "4.286"


def test_history_counts_every_release_the_ledger_counts_compare_and_neighbours_included():
    """Two releases, a comparison (2 mechanisms x 2 runs) and a neighbouring-corpora run on the private corpus
    (2 x 20 runs): the history on Export lists 2 + 4 + 40 = 46 releases, as the ledger does; the comparison's runs
    can be exported; the neighbouring-corpora batch says why its releases cannot."""
    at = _new()
    _set_session_budget(at, 1000.0, 0.01)
    _release(at, "policy-gaussian")
    _release(at, "weighted-laplace")
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["weighted-gaussian", "policy-laplace"])
    at.number_input(key="cmp_runs").set_value(2)
    at.run()
    at.button(key="cmp_run").click()
    at.run()
    _ok(at)
    _go(at, "8_neighbours")
    at.radio(key="nb_target").set_value("private")
    at.number_input(key="nb_runs").set_value(20)
    at.run()
    at.button(key="nb_run").click()
    at.run()
    _ok(at)
    state = _state(at)
    assert (
        _account.spent(state).releases == 46 == state.history.spent_releases(_workspace.private_work(state).dataset_key)
    )
    _go(at, "7_export")
    _ok(at)
    assert any("46 releases spent; the ledger counts 46" in _plain(m.value) for m in at.markdown)
    # the comparison's four runs are exportable releases; the default stays the Release page's last one
    box = at.selectbox(key="export_release")
    assert len(box.options) == 6 and box.value == 2
    expanders = [_plain(e.label) for e in at.expander]
    assert any(x.startswith("Compare: 2 mechanisms × 2 runs · 4 releases") for x in expanders), expanders
    assert any(x.startswith("Neighbouring corpora (40 runs) · 40 releases, 0 exportable") for x in expanders)
    assert any(
        "40 releases of this action cannot be exported: a neighbouring-corpora run keeps only" in _plain(c.value)
        for c in at.caption
    )
    member = next(r for r in state.history.records if r.batch)
    box.set_value(member.number)
    at.run()
    _ok(at)
    assert any(
        f"Exporting release #{member.number}" in _plain(c.value) and "One run of Compare" in _plain(c.value)
        for c in at.caption
    )
    # downloads of different releases have different names
    names = {f.file_name for r in state.history.records for f in _downloads.release_files(state, r) if f.kind == "csv"}
    assert len(names) == 6


def test_compare_prompt_follows_the_picks_and_the_canaries_box_names_the_demo_only_on_the_demo():
    at = _new()
    _go(at, "1_corpus")
    assert any("the demo corpus plants" in c.value for c in at.caption)
    _go(at, "6_compare")
    assert at.multiselect(key="cmp_mechanisms").value  # the defaults are picked: the prompt says to run them
    assert any("Press **Run comparison** to run them." in i.value for i in at.info)
    assert not any("Pick mechanisms" in i.value for i in at.info)
    at.multiselect(key="cmp_mechanisms").set_value([])
    at.run()
    assert any("Pick mechanisms above" in i.value for i in at.info)
    _go(at, "1_corpus")
    _upload_and_load(at, "posts.csv", 40)
    captions = [c.value for c in at.caption if "only one user wrote" in c.value]
    assert captions and "demo" not in captions[0] and "type some from your file" in captions[0]


def test_an_analyst_cap_of_their_own_holds_their_next_release():
    """Issue 37: once the uploaded corpus is in the durable ledger (its first release), its user may set a smaller
    cap of their own in the sidebar; the next release past it is refused with what is left, and no button lifts it."""
    at = _new()
    _upload_and_load(at, "posts.csv", 40)
    _go(at, "2_release")
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    assert _account.spent(_state(at)).releases == 1
    at.sidebar.number_input(key="own_cap_eps").set_value(4.0)
    at.sidebar.button(key="own_cap_set").click()
    at.run()
    _ok(at)
    assert "your own cap" in " ".join(c.value for c in at.sidebar.caption)
    # a second Policy Gaussian at ε 3 would make ε 4.286 by Gaussian DP: past the analyst's own cap of 4
    assert at.button(key="run_release").disabled
    refusal = [e.value for e in at.error if "past its cap" in e.value]
    assert refusal and "your own cap" in refusal[0] and "Left: ε = 1" in _plain(refusal[0])
    assert _raise_buttons(at) == []
