"""Every page's main flow through Streamlit's AppTest (the real app, the real core, the demo corpus)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpsu_core import app_logic as al

REPO = Path(__file__).resolve().parents[2]
APP = "../../app.py"
TIMEOUT = 120
PAGES = ["1_corpus", "2_release", "3_thresholds", "4_histogram", "5_coverage", "6_compare", "7_export"]


def _new() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    return at


def _go(at: AppTest, page: str) -> AppTest:
    at.switch_page(str(REPO / "pages" / f"{page}.py"))
    at.run()
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _metric(at: AppTest, label: str) -> str:
    for m in at.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"no metric {label!r}: {[m.label for m in at.metric]}")


def _table(at: AppTest, *columns: str) -> pd.DataFrame:
    """The first dataframe on the page having these columns (AppTest does not expose dataframe keys)."""
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise AssertionError(f"no table with columns {columns}: {[list(d.value.columns) for d in at.dataframe]}")


def _release(at: AppTest, mechanism: str = "policy-gaussian") -> AppTest:
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value(mechanism)
    at.run()
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    return at


@pytest.fixture(scope="module")
def released():
    """One session with the demo corpus and a policy-gaussian release at a sane budget (ε 3, δ 1e-6)."""
    return _release(_new())


def test_demo_corpus_is_loaded_at_once():
    at = _new()
    _ok(at)
    corpus = at.session_state["corpus"]
    assert corpus.n_users >= 5000
    assert int(_metric(at, "Users").replace(",", "")) == corpus.n_users
    assert any("NOT differentially private" in w.value for w in at.warning)
    assert len(at.session_state["canaries"]) == len(al.demo_canaries())
    # the sidebar carries the budget and the teaching switch
    assert at.sidebar.number_input(key="epsilon").value == al.DEFAULT_EPSILON
    assert at.toggle(key="teaching").value is False


def test_release_policy_gaussian_on_demo(released):
    at = released
    n = int(_metric(at, "Items released").replace(",", ""))
    assert n > 0
    assert _metric(at, "Canaries released") == f"0 of {len(al.demo_canaries())}"
    assert any("differentially private" in i.value for i in at.info)
    table = _table(at, "item", "n")
    assert len(table) == n and list(table.columns) == ["item", "n"]
    # searchable: every row shown contains the query
    at.text_input(key="item_search").input("the")
    at.run()
    shown = _table(at, "item", "n")
    assert 0 < len(shown) < n and shown["item"].str.contains("the").all()
    _ok(at)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_without_exception_after_a_release(released, page):
    at = _go(released, page)
    _ok(at)
    assert not at.error, [e.value for e in at.error]


def test_histogram_page_shows_fill_of_last_release(released):
    at = _go(released, "4_histogram")
    assert any("NOT differentially private" in w.value for w in at.warning)
    table = _table(at, "n_positive", "share_above_rho")
    rel = at.session_state["release"][1]
    w = rel.diagnostics.weights
    assert table.loc[0, "n_positive"] == int((w > 0).sum())
    assert 0.0 <= table.loc[0, "share_above_rho"] <= 1.0
    # a second mechanism side by side
    at.multiselect(key="hist_mechanisms").select("weighted-gaussian")
    at.run()
    at.button(key="hist_run").click()
    at.run()
    _ok(at)
    assert len(_table(at, "n_positive", "share_above_rho")) == 2


def test_coverage_page_tables(released):
    at = _go(released, "5_coverage")
    cov = _table(at, "k", "s_k", "size_ratio", "recall")
    assert {"k", "s_k", "size_ratio", "recall"} <= set(cov.columns)
    mm = _table(at, "recovered_mass", "missing_mass")
    assert ((mm["recovered_mass"] >= 0) & (mm["recovered_mass"] <= 1)).all()


def test_export_downloads_hold_only_the_private_output(released):
    at = _go(released, "7_export")
    _ok(at)
    rel = at.session_state["release"][1]
    buttons = at.get("download_button")
    assert sorted(b.proto.label for b in buttons) == sorted([
        "Released items (CSV)", "Released items (JSON)", "Released items (TXT)",
        "Release report (JSON)", "Release report (Markdown)"])
    from dpsu_core.export import to_csv_bytes, to_txt_bytes

    frame = pd.read_csv(io.BytesIO(to_csv_bytes(rel)), keep_default_na=False)
    assert list(frame.columns) == ["item", "n"]
    assert len(frame) == rel.n_released
    txt = to_txt_bytes(rel).decode()
    assert not set(al.demo_canaries()) & set(txt.split())


def test_compare_page_runs_several_mechanisms(released):
    at = _go(released, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(["policy-gaussian", "weighted-laplace"])
    at.number_input(key="cmp_runs").set_value(2)
    at.run()
    at.button(key="cmp_run").click()
    at.run()
    _ok(at)
    summary = _table(at, "mean", "sd", "runs")
    assert list(summary["mechanism"]) == ["policy-gaussian", "weighted-laplace"]
    assert (summary["runs"] == 2).all() and (summary["mean"] > 0).all()


def test_thresholds_page_tables_cover_every_set_union_mechanism():
    at = _go(_new(), "3_thresholds")
    _ok(at)
    from dpsu_core.mechanisms import mechanisms

    df = _table(at, "mechanism", "epsilon", "rho")
    assert set(df["mechanism"]) == {n for n, c in mechanisms().items() if c.kind == "set-union"}
    assert any("GW" in m.value for m in at.markdown)


def test_upload_then_bad_upload_keeps_previous_corpus():
    at = _new()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    posts = pd.DataFrame({"author": [f"u{i % 40}" for i in range(200)],
                          "body": [f"the quick fox number {i % 7} jumps" for i in range(200)]})
    at.file_uploader(key="upload").upload("posts.csv", posts.to_csv(index=False).encode(), "text/csv")
    at.run()
    _ok(at)
    assert at.selectbox(key="user_col").value == "author"
    assert at.selectbox(key="text_col").value == "body"
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    corpus = at.session_state["corpus"]
    assert corpus.n_users == 40 and at.session_state["corpus_name"] == "posts.csv"
    cid = at.session_state["corpus_id"]

    at.file_uploader(key="upload").set_value(("broken.csv", bytes(range(256)) * 50, "text/csv"))
    at.run()
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert at.error, "a bad upload must show an error box"
    assert at.session_state["corpus"] is corpus and at.session_state["corpus_id"] == cid


def test_core_error_is_an_error_box_not_a_traceback():
    at = _new()
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("dpne")
    at.run()
    at.number_input(key="param_max_n").set_value(3)  # the demo corpus is loaded with unigrams only
    at.run()
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    messages = [e.value.replace("\\", "") for e in at.error]  # error text is Markdown-escaped
    assert any("max_n >= 3" in m for m in messages), messages


def test_delta_warning_when_delta_not_well_below_one_over_n():
    at = _new()
    at.sidebar.number_input(key="delta").set_value(1e-3)  # > 1/6000
    at.run()
    _ok(at)
    assert any("1/(number of users)" in e.value.replace("\\", "") or "1/(number of users)" in e.value
               for e in at.sidebar.error), [e.value for e in at.sidebar.error]


def test_teaching_mode_banner_and_fixed_seed():
    at = _new()
    at.toggle(key="teaching").set_value(True)
    at.run()
    for page in PAGES:
        _go(at, page)
        _ok(at)
        assert any("Teaching mode" in w.value for w in at.warning), page
    _release(at)
    first = at.session_state["release"][1]
    at.button(key="run_release").click()
    at.run()
    second = at.session_state["release"][1]
    assert first.seed == second.seed == al.TEACHING_SEED
    assert list(first.items) == list(second.items)
    _go(at, "7_export")
    assert any("NOT for real use" in e.value for e in at.error)
    from dpsu_core.export import report_json

    assert json.loads(report_json(second)).get("teaching_mode") is True


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet", "txt", "sequences", "zip"])
def test_upload_each_format_through_the_page(fmt):
    from test_logic import UPLOADS  # the same small real files the logic tests read

    name, data, users = UPLOADS[fmt]
    at = _new()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload(name, data)
    at.run()
    _ok(at)
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["corpus_name"] == name
    assert at.session_state["corpus"].n_users == users
    assert int(_metric(at, "Users").replace(",", "")) == users


def test_ngram_flow_demo_with_bigrams_and_dpne():
    at = _new()
    at.number_input(key="corpus_max_n").set_value(2)
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert at.session_state["corpus"].max_n == 2
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("dpne")
    at.run()
    assert at.number_input(key="param_max_n").value == 2  # follows the loaded corpus
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    assert not at.error, [e.value for e in at.error]
    per_length = _table(at, "n", "released")
    assert list(per_length["n"]) == [1, 2] and (per_length["released"] > 0).all()
    assert _metric(at, "Canaries released") == f"0 of {len(al.demo_canaries())}"


def test_hostile_tokens_are_shown_as_text_only():
    posts = pd.DataFrame({"author": [f"u{i}" for i in range(400)],
                          "body": ["**boom** <b>bold</b> [click](http://x.test) :red[alert] hello"] * 400})
    at = _new()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload("hostile.csv", posts.to_csv(index=False).encode(), "text/csv")
    at.run()
    at.toggle(key="pp_strip_symbols").set_value(False)
    at.number_input(key="corpus_max_n").set_value(3)  # the fast tokenizer splits symbols off: n-grams rejoin them
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    _release(at, "dpsu-all")
    items = _table(at, "item", "n")["item"].tolist()
    hostile = [s for s in items if len(s) >= 4 and set(s) & set("*<>[]():")]
    assert hostile, items  # symbols survived tokenization and were released (400 users each)
    rendered = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success", "title")
                for e in getattr(at, kind)]
    rendered += [m.value for m in at.metric] + [m.label for m in at.metric]
    for token in hostile:
        assert not any(token in text for text in rendered), token
