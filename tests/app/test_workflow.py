"""Issue 12 through AppTest: the privacy ledger, the exploration corpus, the utility preview, the command export."""

from __future__ import annotations

import json
import math
import shlex

import numpy as np
from scipy.stats import norm

from dpsu_core.outputs.export import report_dict
from dpsu_core.privacy.thresholds import gaussian_scale, rho_weighted_gaussian
from pages import _account, _downloads, _workspace
from tests.app.test_pages import REPO, _compare, _go, _metric, _new, _ok, _release, _state, _upload_and_load
from tests.helpers import run_displayed

EPS = 3.0  # the sidebar's default budget
DELTA = 1e-6


def _sidebar_metric(at, label: str) -> str:
    for m in at.sidebar.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"no sidebar metric {label!r}: {[m.label for m in at.sidebar.metric]}")


def test_two_releases_and_a_comparison_add_up_and_zcdp_is_tighter_for_gaussian_only():
    at = _new()
    _release(at, "policy-gaussian")
    _release(at, "policy-gaussian")  # the same configuration again: it spends again (past ε = 3: asked first)
    _compare(at, ["weighted-gaussian", "policy-gaussian"], 2)
    state = _state(at)
    t = _account.spent(state)
    assert t.releases == 2 + 2 * 2
    assert t.basic_epsilon == EPS * 6 and math.isclose(t.basic_delta, DELTA * 6)
    assert {e.source for e in state.ledger.entries} == {"Release", "Compare"}
    # all Gaussian-family: the zCDP total is there and below the basic one; the sidebar shows both
    assert t.zcdp_epsilon is not None and t.gdp_epsilon is not None and t.gdp_epsilon < t.zcdp_epsilon < 18
    assert _sidebar_metric(at, "ε spent (smallest valid bound)") == f"{t.gdp_epsilon:.4g}"
    # a Laplace release joins: Gaussian DP on the six plus basic on it is valid, the PLD over all seven tighter
    _release(at, "weighted-laplace")
    t = _account.spent(_state(at))
    assert t.releases == 7 and t.gdp_mixed and t.gdp_epsilon < t.basic_epsilon == 21
    assert t.method == "privacy-loss distribution (dp-accounting)" and t.epsilon < t.gdp_epsilon
    assert _sidebar_metric(at, "ε spent (smallest valid bound)") == f"{t.epsilon:.4g}"
    # the release report lists the session's total on the corpus and names the release
    _go(at, "7_export")
    rec = _account.release_record(_state(at))
    files = _downloads.release_files(_state(at), rec)
    rep = json.loads(next(f.data for f in files if f.kind == "report_json"))
    assert rep["session_spent"]["releases"] == 7 and rep["session_spent"]["basic_epsilon"] == EPS * 7
    assert rep["session_spent"]["method"] == t.method and rep["release"] == rec.title()


def test_compare_shows_its_cost_and_asks_past_the_limit():
    at = _new()
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["weighted-laplace", "policy-laplace", "gw"])
    at.number_input(key="cmp_runs").set_value(5)
    at.run()
    assert any("15 releases on" in i.value and "ε = 45" in i.value for i in at.info), [i.value for i in at.info]
    assert "private corpus" in " ".join(m.value for m in at.markdown)
    assert at.button(key="cmp_run").disabled  # ε = 45 is past the session budget (ε = 10)
    assert _account.spent(_state(at)).releases == 0
    assert any("would become ε = 45" in w.value and "past the session budget ε = 10" in w.value for w in at.warning)
    (raise_,) = [b for b in at.button if b.key and b.key.startswith("raise_budget_")]
    assert "ε = 45, δ = 1.5e-05" in raise_.label
    raise_.click()
    at.run()
    at.button(key="cmp_run").click()
    at.run()
    _ok(at)
    assert _account.spent(_state(at)).releases == 15
    csv = at.get("download_button")
    assert any(b.proto.label == "Comparison table (CSV)" for b in csv)


def test_simulated_exploration_never_touches_the_private_corpus_and_spends_nothing():
    at = _new()
    _upload_and_load(at, "posts.csv", 40)
    state = _state(at)
    private = state.corpus
    snapshot = (private.indptr.copy(), private.items.copy(), private.vocab.copy())
    _go(at, "1_corpus")
    at.radio(key="explore_kind").set_value("simulated")
    at.run()
    at.number_input(key="sim_users").set_value(500)
    at.number_input(key="sim_words").set_value(20)
    at.number_input(key="sim_vocab").set_value(300)
    at.run()
    at.button(key="explore_start").click()
    at.run()
    _ok(at)
    state = _state(at)
    assert state.exploring and state.corpus is not private and state.corpus.n_users == 500
    assert _workspace.private_work(state).corpus is private
    assert any("Exploring" in i.value for i in at.sidebar.info), [i.value for i in at.sidebar.info]
    # every page works on it; releases and a comparison there spend nothing
    _release(at, "policy-gaussian")
    assert _account.current_release(state) is not None and _account.current_release(state).n_released > 0
    _compare(at, ["weighted-gaussian"], 2)
    _go(at, "8_neighbours")
    _ok(at)
    assert _account.spent(state).releases == 0
    # the private corpus is the same object with the same arrays
    assert _workspace.private_work(state).corpus is private
    for a, b in zip(snapshot, (private.indptr, private.items, private.vocab)):
        assert np.array_equal(a, b)
    # the step after exploring: one release on the private corpus, recorded
    _go(at, "2_release")
    at.button(key="release_private").click()
    at.run()
    _ok(at)
    assert not state.exploring and state.corpus is private
    assert _account.spent(state).releases == 1  # charged to the private corpus's account in the durable ledger
    rel = _account.current_release(state)
    assert set(rel.items.tolist()) <= set(private.vocab.tolist())  # released from the private corpus's items
    # Count Laplace needs hundreds of users per item (rho = 592 at Delta0 = 100): on 40 users the release is
    # empty, and the preview is the explanation offered, beside the corpus's NOT-private item-user counts
    _release(at, "count-laplace")
    assert _account.current_release(state).n_released == 0
    why = [w.value for w in at.warning if "Only 0 items released" in w.value]
    assert why and "592 users" in why[0] and "NOT private" in why[0]
    assert _account.spent(state).releases == 2


def test_utility_preview_matches_the_closed_form():
    at = _new()
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("weighted-gaussian")
    at.run()
    at.number_input(key="preview_items_per_user").set_value(10)
    at.run()
    _ok(at)
    # independent computation: k users, each with 10 items, give weight k / sqrt(10); noise N(0, sigma^2)
    rho, sigma = rho_weighted_gaussian(EPS, DELTA, 100), gaussian_scale(EPS, DELTA)
    assert _metric(at, "Users for a 50% chance") == f"{math.ceil(rho * math.sqrt(10)):,}"
    assert _metric(at, "Users for a 90% chance") == f"{math.ceil((rho + norm.ppf(0.9) * sigma) * math.sqrt(10)):,}"


def test_the_exported_command_reproduces_the_release_parameters(tmp_path):
    at = _new()
    at.sidebar.number_input(key="max_items").set_value(30)
    at.run()
    _release(at, "policy-laplace")
    _go(at, "7_export")
    _ok(at)
    rel = _account.current_release(_state(at))
    (block,) = [c for c in at.code if c.value.startswith("dpsu release")]
    command = block.value
    assert "--seed" not in command
    assert block.proto.wrap_lines is False  # never soft-wrapped (a wrap cut "--text-col" in two); a line per flag
    lines = command.split("\n")
    assert len(lines) > 5 and all(line.endswith(" \\") for line in lines[:-1])
    assert all(line.startswith("  -") and len(shlex.split(line.rstrip("\\"))) <= 2 for line in lines[1:]), lines
    proc = run_displayed(command, tmp_path, {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})  # as pasted
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(command.replace(" \\\n", " "))
    report = json.loads((tmp_path / argv[argv.index("--report") + 1]).read_text())
    orig = report_dict(rel)
    for key in ("mechanism", "epsilon", "delta", "params", "calibration"):
        assert report[key] == orig[key], key
    assert report["params"]["max_items"] == 30


def test_the_exported_command_names_a_header_files_columns_and_the_cli_reads_the_same(tmp_path):
    """Columns picked by name on an upload with a header (none of them a known name, none in first place) are
    exported by name, not by position; the command, run by a shell, reads the same columns and corpus."""
    rows = ["id,lang,handle,said"] + [f"{i},en,u{i % 40},the quick fox number {i % 7} jumps" for i in range(200)]
    data = ("\n".join(rows) + "\n").encode()
    at = _new()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload("my posts.csv", data, "text/csv")
    at.run()
    at.selectbox(key="user_col").set_value("handle")
    at.selectbox(key="text_col").set_value("said")
    at.run()
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    corpus = _state(at).corpus
    assert corpus.source.user_column == "handle" and _state(at).corpus_options.user_col == "handle"
    _release(at, "policy-gaussian")
    _go(at, "7_export")
    _ok(at)
    command = next(c.value for c in at.code if c.value.startswith("dpsu release"))
    assert "\n  --user-col handle \\\n" in command and "\n  --text-col said \\\n" in command, command
    (tmp_path / "my posts.csv").write_bytes(data)
    proc = run_displayed(command, tmp_path, {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    argv = shlex.split(command.replace(" \\\n", " "))
    report = json.loads((tmp_path / argv[argv.index("--report") + 1]).read_text())
    assert report["privacy_unit"] == "the user is the value of column 'handle'"
    assert report["params"] == report_dict(_account.current_release(_state(at)))["params"]
