"""The Release page's noisy counts option (``mechanisms.item_counts``) through AppTest: its cost in the spend gate,
its two ledger entries, the counts shown as noisy, and the Export page's tokenizer and command using them."""

from __future__ import annotations

import dataclasses
import shlex

import pytest
from tokenizers import Tokenizer

from dpsu_core.mechanisms.item_counts import NAME, calibrate_counts
from dpsu_core.outputs.tokenizer_export import build_tokenizer
from pages import _account
from tests.app.test_pages import _confirm_spend, _go, _metric, _new, _ok, _state, _table

SHARE, CLIP = 0.3, 2.0


def _counts_on(at):
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("policy-gaussian")
    at.run()
    at.checkbox(key="with_counts").check()
    at.run()
    at.number_input(key="counts_share").set_value(SHARE)
    at.number_input(key="counts_clip").set_value(CLIP)
    at.run()
    _ok(at)
    return at


@pytest.fixture(scope="module")
def counted():
    """A policy-gaussian release of the demo corpus with noisy counts at share 0.3, bound 2."""
    at = _counts_on(_new())
    _confirm_spend(at)
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    return at


def test_the_gate_states_the_counts_cost_before_it_runs():
    at = _counts_on(_new())
    state = _state(at)
    b = state.budget
    cc = calibrate_counts(b.epsilon, b.delta, SHARE, CLIP)
    infos = [i.value.replace("\\", "") for i in at.info]  # Markdown escapes removed
    # the counts' own line: their share, epsilon and sigma, from the public calibration
    assert any("noisy counts: 0.3 of the budget" in i and f"sigma = {cc.sigma:.4g}" in i for i in infos), infos
    # the gate: the action names the counts, two releases, the basic total is the (epsilon, delta) the user gave
    gate = [i for i in infos if "with noisy counts" in i]
    assert gate and "2 releases" in gate[0] and f"ε = {b.epsilon:.4g}" in gate[0], infos
    # the set release's calibration is at the rest of the budget
    assert any(f"ε = {b.epsilon - cc.epsilon:.4g}" in c.value.replace("\\", "") for c in at.caption)
    assert state.ledger.entries == []  # nothing spent before it runs
    # unchecked: the gate is the set release's alone, at the whole budget
    at.checkbox(key="with_counts").uncheck()
    at.run()
    assert not any("with noisy counts" in i.value for i in at.info)
    assert any("1 release on" in i.value for i in at.info)


def test_a_counted_release_enters_two_ledger_entries_and_shows_noisy_counts(counted):
    at = counted
    state = _state(at)
    b = state.budget
    entries = state.ledger.entries
    assert [e.mechanism for e in entries] == ["policy-gaussian", NAME]
    cc = calibrate_counts(b.epsilon, b.delta, SHARE, CLIP)
    assert entries[1].epsilon == cc.epsilon and entries[1].delta == cc.delta and entries[1].noise == "gaussian"
    assert entries[0].epsilon + entries[1].epsilon <= b.epsilon
    assert abs(entries[0].epsilon + entries[1].epsilon - b.epsilon) < 1e-9
    assert _account.spent(state).basic_epsilon == pytest.approx(b.epsilon)
    rel = _account.current_release(state)
    assert rel.noisy_counts is not None and rel.n_released > 0
    assert rel.calibration.details.item_counts["sigma"] == cc.sigma
    table = _table(at, "item", "noisy count", "noise σ")
    assert len(table) == rel.n_released and (table["noise σ"] == cc.sigma).all()
    assert any("NOT how often the words occur" in c.value.replace("\\", "") for c in at.caption)
    title = _account.release_record(state).title()
    assert f"with noisy counts, ε = {b.epsilon:g}" in title and f"({SHARE:g} on the counts)" in title


def test_the_export_trains_on_the_counts_and_the_command_redoes_them(counted):
    at = _go(counted, "7_export")
    at.selectbox(key="tok_model").set_value("bpe")
    at.run()
    at.number_input(key="tok_size").set_value(200)
    at.run()
    _ok(at)
    state = _state(at)
    rel = _account.current_release(state)
    cache = state.tokenizer_cache
    body, built, spec = cache.files.body, cache.files.built, cache.spec
    assert "noisy counts as frequencies" in built["trained_on"]
    # the download is the tokenizer trained on the released counts, not on the items once each
    assert body.decode("utf-8") == build_tokenizer(rel, spec)[0].to_str()
    once = build_tokenizer(dataclasses.replace(rel, noisy_counts=None, count_std=None), spec)[0]
    assert Tokenizer.from_str(body.decode("utf-8")).get_vocab() != once.get_vocab()
    command = next(c.value for c in at.code if c.value.startswith("dpsu release"))
    argv = shlex.split(command)
    assert "--with-counts" in argv
    assert argv[argv.index("--counts-share") + 1] == repr(SHARE)
    assert argv[argv.index("--counts-clip") + 1] == repr(CLIP)
    assert float(argv[argv.index("-e") + 1]) == state.budget.epsilon  # the whole budget: the CLI splits it again
    assert _metric(at, "Budget") == f"ε={state.budget.epsilon:g}, δ={state.budget.delta:.1e} with counts"


def _advice(at):
    return [i.value.replace("\\", "") for i in at.info if "Are the counts worth it?" in i.value]


def test_the_page_advises_on_the_counts_from_the_parameters():
    from dpsu_core.analysis.counts_advice import counts_advice
    from dpsu_core.mechanisms.item_counts import mechanism_with_counts
    from dpsu_core.mechanisms.registry import get_mechanism

    at = _counts_on(_new())
    m = at.number_input(key="preview_items_per_user").value
    shown = {}
    for eps in (1.0, 3.0):
        at.sidebar.number_input(key="epsilon").set_value(eps)
        at.run()
        _ok(at)
        b = _state(at).budget
        mech, cc = mechanism_with_counts("policy-gaussian", epsilon=b.epsilon, delta=b.delta, share=SHARE, clip=CLIP)
        whole = get_mechanism("policy-gaussian", epsilon=b.epsilon, delta=b.delta).calibrate()
        want = counts_advice(cc, m, mech.calibrate(), whole)
        (text,) = _advice(at)
        assert f"σ = {cc.sigma:.4g}" in text and f"about {want.users_for_signal:,} users of the word" in text
        assert f"about {want.users_released:,} users for a 50% chance" in text
        shown[eps] = want.users_for_signal
    assert shown[1.0] > shown[3.0]  # computed from the parameters: a lower epsilon needs more users
    at.checkbox(key="with_counts").uncheck()
    at.run()
    assert _advice(at) == []
