"""The app's helpers outside the pages: Streamlit config, parameters per mechanism, calibration rows, the
teaching seed, display helpers. (The demo corpus, uploads and δ guidance are core: tests/core.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsu_core.corpus import LoadOptions
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import list_mechanisms
from dpsu_core.outputs.export import export_basename
from pages import _account, _downloads, _run, _workspace
from pages._format import calibration_rows, escape_markdown, filter_items
from pages._state import Budget
from pages._text import TEACHING_SEED

REPO = Path(__file__).resolve().parents[2]


def test_streamlit_config():
    cfg = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["maxUploadSize"] == 1024
    assert cfg["client"]["showErrorDetails"] == "none"
    assert cfg["browser"]["gatherUsageStats"] is False


def test_params_for_and_compare_params_take_only_what_a_mechanism_takes():
    vals = {"max_items": 50, "alpha": 4.0, "eta": 0.01, "max_n": 3}
    regs = list_mechanisms()
    assert regs["policy-gaussian"].params_for(vals) == {"max_items": 50, "alpha": 4.0}
    assert regs["count-laplace"].params_for(vals) == {"max_items": 50}
    assert _run.compare_params(["count-laplace"], vals) == {"max_items": 50}
    assert _run.compare_params(["count-laplace", "policy-gaussian"], vals) == {"max_items": 50, "alpha": 4.0}


def test_calibrate_and_rows_come_from_the_core():
    from dpsu_core.privacy import rho_weighted_gaussian

    mech = _run.build_mechanism("policy-gaussian", Budget(3.0, float(np.exp(-10))), {"max_items": 100, "alpha": 5.0})
    cal = mech.calibrate()
    assert cal.rho == pytest.approx(rho_weighted_gaussian(3.0, float(np.exp(-10)), 100))
    rows = dict(calibration_rows(cal))
    assert float(rows["ρ (threshold)"]) == pytest.approx(6.8237, abs=1e-3)
    with pytest.raises(ParameterError):
        _run.build_mechanism("policy-gaussian", Budget(-1.0, 1e-6), {"max_items": 100})


def _small_corpus():
    words = [f"w{i}" for i in range(30)]
    rng = np.random.default_rng(1)
    users = [[list(rng.choice(words, size=8))] for _ in range(400)]
    users[0] = [["secretcanary", "w1"]]
    return corpus_from_token_lists(users, max_n=2)


def test_teaching_release_is_reproducible_and_marked():
    c = _small_corpus()
    budget = Budget(10.0, 1e-3)
    a = _run.make_job("weighted-laplace", budget, {"max_items": 5}, teaching=True).run(c)
    b = _run.make_job("weighted-laplace", budget, {"max_items": 5}, teaching=True).run(c)
    assert a.seed == TEACHING_SEED and list(a.items) == list(b.items)
    assert export_basename(a).endswith("_TEACHING")
    r = _run.make_job("weighted-laplace", budget, {"max_items": 5}).run(c)
    assert r.seed is None and "TEACHING" not in export_basename(r)


def test_filter_items_is_plain_substring():
    frame = pd.DataFrame({"item": ["a.b", "axb", "c"], "n": [1, 1, 1]})
    assert filter_items(frame, ".").item.tolist() == ["a.b"]  # not a regex
    assert filter_items(frame, "A").item.tolist() == ["a.b", "axb"]
    assert len(filter_items(frame, "")) == 3


def test_escape_markdown_neutralises_markup():
    s = escape_markdown("[x](http://e) **b** <img> :red[x] $x$")
    for ch in "[]()*<>:$":
        assert ch not in s.replace("\\" + ch, "")


def test_the_session_state_is_a_closed_declaration_of_keys():
    """``AppState`` declares each key with its type and default, and nothing else: no method or property (what
    acts on it lives in pages._workspace, _account, _downloads), and no key set outside the declaration."""
    from dataclasses import fields

    from pages._state import AppState, Workspace

    declared = {f.name for f in fields(AppState)}
    for cls in (AppState, Workspace):
        assert {n for n in vars(cls) if not n.startswith("__")} <= declared, cls
    state = AppState()
    with pytest.raises(AttributeError):
        state.corpus_nme = "typo.csv"  # type: ignore[attr-defined]
    state.corpus_name = "posts.csv"
    assert state.corpus_name == "posts.csv"


def test_a_new_corpus_clears_every_result_of_the_previous_one():
    from pages._state import AppState

    c = _small_corpus()
    state = AppState()
    _workspace.set_corpus(state, c, "a.csv", LoadOptions(), is_demo=False, canaries=["x"])
    rel = _run.make_job("weighted-laplace", Budget(10.0, 1e-3), {"max_items": 5}).run(c)
    rec = _account.add_release(state, rel, "Release")
    state.comparison = pd.DataFrame({"released": [1]})
    files = _downloads.release_files(state, rec)
    assert _account.current_release(state) is rel
    assert _downloads.release_files(state, rec) is files  # built once per release
    state.param_values = {"eta": 0.5}
    _workspace.set_corpus(state, c, "b.csv", LoadOptions(max_n=2), is_demo=False, canaries=[])
    assert _account.current_release(state) is None and _account.releases(state) == {} and state.comparison is None
    assert state.history.records == [rec] and rec.corpus.name == "a.csv"  # the history keeps it, named
    assert state.export_cache is None and state.canaries == [] and state.corpus_id == 2
    assert state.param_values == {"eta": 0.5}  # the user's choices stay
