"""Every page's main flow through Streamlit's AppTest (the real app, the real core, the demo corpus)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpsu_core.corpus.demo import DEMO_NAME, load_canaries
from pages import _account
from pages._state import STATE_KEY, AppState
from pages._text import DEFAULT_EPSILON, SD_UNDEFINED, TEACHING_SEED

REPO = Path(__file__).resolve().parents[2]
APP = "../../app.py"
TIMEOUT = 120
PAGES = [
    "1_corpus",
    "2_release",
    "3_thresholds",
    "4_histogram",
    "5_coverage",
    "6_compare",
    "7_export",
    "8_neighbours",
]


def _new() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    return at


def _go(at: AppTest, page: str) -> AppTest:
    at.switch_page(str(REPO / "pages" / f"{page}.py"))
    at.run()
    return at


def _state(at: AppTest) -> AppState:
    """The session's typed state (pages._state), as the pages see it."""
    return at.session_state[STATE_KEY]


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


def _confirm_spend(at: AppTest) -> bool:
    """Confirm what the spend gate asks for, if anything: a new session budget covering a spend past the current
    one (its button), or the explicit yes once the totals promise no guarantee (its checkbox)."""
    for b in at.button:
        if b.key and b.key.startswith("raise_budget_"):
            b.click()
            at.run()
            return True
    for cb in at.checkbox:
        if cb.key and cb.key.startswith("spend_yes_"):
            cb.check()
            at.run()
            return True
    return False


def _release(at: AppTest, mechanism: str = "policy-gaussian") -> AppTest:
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value(mechanism)
    at.run()
    _confirm_spend(at)
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
    corpus = _state(at).corpus
    assert corpus.n_users >= 5000
    assert int(_metric(at, "Users").replace(",", "")) == corpus.n_users
    assert any("NOT differentially private" in w.value for w in at.warning)
    assert len(_state(at).canaries) == len(load_canaries())
    # the sidebar carries the budget and the teaching switch
    assert at.sidebar.number_input(key="epsilon").value == DEFAULT_EPSILON
    assert at.toggle(key="teaching").value is False


def test_release_policy_gaussian_on_demo(released):
    at = released
    n = int(_metric(at, "Items released").replace(",", ""))
    assert n > 0
    assert _metric(at, "Canaries released") == f"0 of {len(load_canaries())}"
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
    rel = _account.current_release(_state(at))
    w = rel.diagnostics.weights
    assert table.loc[0, "n_positive"] == int((w > 0).sum())
    assert 0.0 <= table.loc[0, "share_above_rho"] <= 1.0
    # a second mechanism side by side
    at.multiselect(key="hist_mechanisms").select("weighted-gaussian")
    at.run()
    _confirm_spend(at)
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
    rel = _account.current_release(_state(at))
    buttons = at.get("download_button")
    assert sorted(b.proto.label for b in buttons) == sorted(
        [
            "Released items (CSV)",
            "Released items (JSON)",
            "Released items (TXT)",
            "Release report (JSON)",
            "Release report (Markdown)",
            "Tokenizer folder (.zip)",
            "tokenizer.json",
            "Report with the tokenizer (.md)",
            "Command line (.sh)",
            "Python script (.py)",
        ]
    )
    from dpsu_core.outputs.export import to_csv_bytes, to_txt_bytes

    frame = pd.read_csv(io.BytesIO(to_csv_bytes(rel)), keep_default_na=False)
    assert list(frame.columns) == ["item", "n"]
    assert len(frame) == rel.n_released
    txt = to_txt_bytes(rel).decode()
    assert not set(load_canaries()) & set(txt.split())


@pytest.mark.parametrize("model", ["wordlevel", "bpe"])
def test_export_tokenizer_download_is_built_from_the_release(released, model):
    from tokenizers import Tokenizer

    at = _go(released, "7_export")
    at.selectbox(key="tok_model").set_value(model)
    at.text_input(key="tok_specials").set_value("[PAD], [MASK]")
    at.run()
    _ok(at)
    rel = _account.current_release(_state(at))
    body, report, built = _state(at).tokenizer_cache.files
    tok = Tokenizer.from_str(body.decode("utf-8"))
    items = [str(s) for s in rel.items.tolist()]
    specials = {"[UNK]", "[PAD]", "[MASK]"}
    assert specials <= set(tok.get_vocab())
    assert all(e in specials or any(e.removeprefix("\u2581") in i for i in items) for e in tok.get_vocab())
    if model == "wordlevel":
        assert set(tok.get_vocab()) == specials | {i for i, n in zip(items, rel.ngram_len) if n == 1}
    assert built["model"] == model and "## Tokenizer (tokenizer.json)" in report.decode("utf-8")
    assert any(f"{built['vocabulary_size']:,} entries" in c.value for c in at.caption)
    # how many released words have a token of their own, counted on the downloaded tokenizer itself
    words = [i for i, n in zip(items, rel.ngram_len) if n == 1]
    whole = sum(len(tok.encode(w, add_special_tokens=False).ids) == 1 for w in words)
    assert (built["released_words"], built["released_words_whole"]) == (len(words), whole)
    said = f"Every released word ({len(words):,})" if whole == len(words) else f"{whole:,} of the {len(words):,}"
    assert any(said in c.value.replace("\\", "") for c in at.caption)


def _compare(at: AppTest, names: list[str], runs: int) -> pd.DataFrame:
    """Run the Compare page for ``names`` x ``runs``; return its summary table."""
    _go(at, "6_compare")
    at.multiselect(key="cmp_mechanisms").set_value(names)
    at.number_input(key="cmp_runs").set_value(runs)
    at.run()
    _confirm_spend(at)  # past the session budget: a new one covering it
    at.button(key="cmp_run").click()
    at.run()
    _ok(at)
    return _table(at, "mean", "sd", "runs")


def test_compare_page_runs_several_mechanisms(released):
    summary = _compare(released, ["policy-gaussian", "weighted-laplace"], 2)
    assert list(summary["mechanism"]) == ["policy-gaussian", "weighted-laplace"]
    assert (summary["runs"] == 2).all() and (summary["mean"] > 0).all()
    # the seconds shown are the warm runs' (the first run, which compiles, left out), and the page says so
    every = _table(released, "run", "released", "seconds")
    for name, shown in zip(summary["mechanism"], summary["median_seconds"]):
        assert shown == every.loc[(every["mechanism"] == name) & (every["run"] == 2), "seconds"].iloc[0]
    assert "mean_seconds" not in summary.columns
    assert any("the first run of each mechanism left out" in c.value for c in released.caption)


def test_thresholds_page_tables_cover_every_set_union_mechanism():
    at = _go(_new(), "3_thresholds")
    _ok(at)
    from dpsu_core.analysis.threshold_tables import PUBLISHED_GW
    from dpsu_core.mechanisms import list_mechanisms

    df = _table(at, "mechanism", "epsilon", "rho")
    set_union = {n for n, c in list_mechanisms().items() if c.kind == "set-union"}
    # every mechanism, plus the published (unproven) GW threshold as a labelled reference line
    assert set(df["mechanism"]) == set_union | {PUBLISHED_GW}
    pub = df[df["mechanism"] == PUBLISHED_GW]
    gw = df[df["mechanism"] == "gw"].set_index("epsilon")
    assert (pub.set_index("epsilon")["rho"] < gw.loc[pub["epsilon"], "rho"]).all()
    assert any("GW" in m.value for m in at.markdown)
    # against Delta0: the capped GW threshold grows with Delta0; the published line stays flat
    dm = _table(at, "mechanism", "max_items", "rho")
    gw_m = dm[dm["mechanism"] == "gw"].set_index("max_items")["rho"]
    pub_m = dm[dm["mechanism"] == PUBLISHED_GW]["rho"]
    assert gw_m.is_monotonic_increasing and gw_m.iloc[-1] > gw_m.iloc[0] and pub_m.nunique() == 1


def test_upload_then_bad_upload_keeps_previous_corpus():
    at = _new()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    posts = pd.DataFrame(
        {
            "author": [f"u{i % 40}" for i in range(200)],
            "body": [f"the quick fox number {i % 7} jumps" for i in range(200)],
        }
    )
    at.file_uploader(key="upload").upload("posts.csv", posts.to_csv(index=False).encode(), "text/csv")
    at.run()
    _ok(at)
    assert at.selectbox(key="user_col").value == "author"
    assert at.selectbox(key="text_col").value == "body"
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    corpus = _state(at).corpus
    assert corpus.n_users == 40 and _state(at).corpus_name == "posts.csv"
    cid = _state(at).corpus_id

    at.file_uploader(key="upload").set_value(("broken.csv", bytes(range(256)) * 50, "text/csv"))
    at.run()
    _ok(at)
    assert at.error, "a bad upload must show an error box"
    assert at.button(key="load_corpus").disabled  # nothing to load: clearly disabled, never a silent drop
    assert _state(at).corpus is corpus and _state(at).corpus_id == cid


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
    assert any("'Longest n-gram' at least 3" in m for m in messages), messages
    assert not any("max_n" in m or "load_corpus" in m for m in messages), messages  # the app's words, not Python's


def test_delta_warning_when_delta_not_well_below_one_over_n():
    at = _new()
    at.sidebar.number_input(key="delta").set_value(1e-3)  # > 1/6000
    at.run()
    _ok(at)
    assert any(
        "1/(number of users)" in e.value.replace("\\", "") or "1/(number of users)" in e.value for e in at.sidebar.error
    ), [e.value for e in at.sidebar.error]


def test_teaching_mode_banner_and_fixed_seed():
    at = _new()
    at.toggle(key="teaching").set_value(True)
    at.run()
    for page in PAGES:
        _go(at, page)
        _ok(at)
        assert any("Teaching mode" in w.value for w in at.warning), page
    _release(at)
    first = _account.current_release(_state(at))
    assert not _confirm_spend(at)  # the public demo: nothing private to spend, so nothing asked before another
    at.button(key="run_release").click()
    at.run()
    second = _account.current_release(_state(at))
    assert first.seed == second.seed == TEACHING_SEED
    assert list(first.items) == list(second.items)
    for page in ("2_release", "7_export"):  # the guarantee box says there is none, and what fresh noise would give
        _go(at, page)
        box = [e.value.replace("\\", "") for e in at.error if "NOT differentially private" in e.value]
        assert box and "With fresh randomness" in box[0] and "(3, 1e-06)-differentially private" in box[0]
    from dpsu_core.outputs.export import report_json

    assert json.loads(report_json(second)).get("teaching_mode") is True


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet", "txt", "sequences", "zip"])
def test_upload_each_format_through_the_page(fmt):
    from tests.core.corpus.test_upload import UPLOADS  # the same small real files the upload tests read

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
    assert _state(at).corpus_name == name
    assert _state(at).corpus.n_users == users
    assert int(_metric(at, "Users").replace(",", "")) == users


def test_ngram_flow_demo_with_bigrams_and_dpne():
    at = _new()
    at.number_input(key="corpus_max_n").set_value(2)
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert _state(at).corpus.max_n == 2
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
    assert _metric(at, "Canaries released") == f"0 of {len(load_canaries())}"


def test_hostile_tokens_are_shown_as_text_only():
    posts = pd.DataFrame(
        {
            "author": [f"u{i}" for i in range(400)],
            "body": ["**boom** <b>bold</b> [click](http://x.test) :red[alert] hello"] * 400,
        }
    )
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
    rendered = [
        e.value
        for kind in ("markdown", "caption", "info", "warning", "error", "success", "title")
        for e in getattr(at, kind)
    ]
    rendered += [m.value for m in at.metric] + [m.label for m in at.metric]
    for token in hostile:
        assert not any(token in text for text in rendered), token


# ---- fixes found by the browser tests ------------------------------------------------------------
def _upload_and_load(at: AppTest, name: str = "posts.csv", n_users: int = 40) -> AppTest:
    posts = pd.DataFrame(
        {
            "author": [f"u{i % n_users}" for i in range(5 * n_users)],
            "body": [f"the quick fox number {i % 7} jumps" for i in range(5 * n_users)],
        }
    )
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload(name, posts.to_csv(index=False).encode(), "text/csv")
    at.run()
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    return at


def _sidebar_corpus(at: AppTest) -> str:
    texts = [t.value for t in at.sidebar.text]
    assert len(texts) == 1, texts
    return texts[0]


def test_sidebar_shows_the_new_corpus_right_after_loading():
    at = _new()
    demo_users = _state(at).corpus.n_users
    assert _sidebar_corpus(at) == f"{DEMO_NAME}\n{demo_users:,} users"
    at.sidebar.number_input(key="delta").set_value(5e-4)  # above 1/(demo users): an error for the demo
    at.run()
    assert any("1/(number of users)" in e.value for e in at.sidebar.error)
    _upload_and_load(at, "posts.csv", 40)  # no further interaction: the run of the "Load corpus" click itself
    assert _sidebar_corpus(at) == "posts.csv\n40 users"
    # the δ guidance already uses the new user count: 5e-4 is well below 1/40
    assert not at.sidebar.error, [e.value for e in at.sidebar.error]
    assert any("1/(number of users) = 0.025" in c.value for c in at.sidebar.caption), [
        c.value for c in at.sidebar.caption
    ]
    assert any(s.value == "Corpus loaded." for s in at.success)  # the load still says so, once
    at.run()
    assert not any(s.value == "Corpus loaded." for s in at.success)


def test_demo_canaries_do_not_carry_over_to_an_upload():
    at = _new()
    assert at.text_area(key="canary_text").value == "\n".join(load_canaries())
    _upload_and_load(at)
    assert _state(at).canaries == []
    assert at.text_area(key="canary_text").value == ""
    at.run()  # the page parses the text area back into the list on every run
    assert _state(at).canaries == []
    # the user's own canaries for the upload stick ...
    at.text_area(key="canary_text").input("zqx\nfox number")
    at.run()
    assert _state(at).canaries == ["zqx", "fox number"]
    _go(at, "2_release")
    _go(at, "1_corpus")  # the text area's state is dropped on other pages: rebuilt from the list
    assert at.text_area(key="canary_text").value == "zqx\nfox number"
    # ... and going back to the demo brings the demo's list back
    at.radio(key="corpus_source").set_value("demo")
    at.run()
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert _state(at).canaries == load_canaries()
    assert at.text_area(key="canary_text").value == "\n".join(load_canaries())


def test_downloads_do_not_rerun_and_keep_their_files_across_reruns(released):
    from tests.clock import wait_for_the_clock_to_tick

    at = _go(released, "7_export")
    _ok(at)
    first = {b.proto.label: b.proto for b in at.get("download_button")}
    assert len(first) == 10  # items x 3, report x 2, tokenizer folder, file and report, command line and script
    assert all(p.ignore_rerun for p in first.values())  # on_click="ignore": a click does not rerun the page
    wait_for_the_clock_to_tick(1)  # the report's date has a one-second resolution: a rebuilt report would differ now
    at.run()
    second = {b.proto.label: b.proto for b in at.get("download_button")}
    assert {k: p.url for k, p in second.items()} == {k: p.url for k, p in first.items()}
    # the cached report is the release's: a new release builds new files
    rel = _account.current_release(_state(at))
    cache = _state(at).export_cache
    assert cache.number == _account.release_record(_state(at)).number
    files = cache.files
    report = json.loads(next(f.data for f in files if f.kind == "report_json"))
    assert report["released_total"] == rel.n_released


def test_export_buttons_sit_in_two_rows():
    at = _new()
    _release(at)
    _go(at, "7_export")
    labels = [m.value for m in at.markdown]
    assert "**Released items**" in labels and "**Release report**" in labels


def test_histogram_share_at_gamma_uses_the_noise_scale():
    import numpy as np

    at = _go(_release(_new(), "policy-gaussian"), "4_histogram")
    _ok(at)
    rel = _account.current_release(_state(at))
    cal, w = rel.calibration, rel.diagnostics.weights
    table = _table(at, "share_at_gamma", "gamma_tol")
    assert table.loc[0, "gamma_tol"] == pytest.approx(1e-3 * cal.scale)
    near = (w > 0) & (np.abs(w - cal.gamma) <= 1e-3 * cal.scale)
    assert table.loc[0, "share_at_gamma"] == pytest.approx(near.sum() / (w > 0).sum())
    assert table.loc[0, "share_at_gamma"] > 0  # Policy Gaussian fills items on the demo corpus
    assert _metric(at, "Share at Γ") == f"{near.sum() / (w > 0).sum():.1%}"


def test_compare_with_one_run_shows_a_dash_for_sd(released):
    summary = _compare(released, ["policy-gaussian", "gw"], 1)
    at = released
    assert list(summary["sd"]) == [SD_UNDEFINED] * 2 and (summary["runs"] == 1).all()
    assert any("at least two runs" in c.value for c in at.caption)
    assert any(h.value == "Chart" for h in at.subheader)


def test_pages_use_material_icons_not_emoji():
    import re

    for path in [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        emoji = re.findall("[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f]", text)
        assert not emoji, f"{path.name}: {emoji}"
    from pages import _ui

    assert all(v.startswith(":material/") and v.endswith(":") for v in _ui.ICONS.values())


def test_release_page_names_pcr_gumbel_scale_and_count_noise_separately():
    at = _go(_new(), "2_release")
    at.selectbox(key="mechanism").set_value("pcr")
    at.run()
    _ok(at)
    from dpsu_core.params import PARAMS

    labels = [m.label for m in at.metric]
    assert "Gumbel scale (1/ε*)" in labels and "Count noise std (1st step)" in labels
    assert not any("σ" in lab for lab in labels)  # the Gumbel scale is not a noise std
    gumbel = float(_metric(at, "Gumbel scale (1/ε*)"))
    assert gumbel == pytest.approx(1 / PARAMS["eps_star"].default, rel=1e-3)
    assert float(_metric(at, "Count noise std (1st step)")) != pytest.approx(gumbel)
    at.selectbox(key="mechanism").set_value("policy-gaussian")
    at.run()
    assert "Noise std (σ)" in [m.label for m in at.metric]


def _captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def test_release_page_preview_states_the_tuned_delta_split_and_why_alpha_is_not_chosen():
    at = _go(_new(), "2_release")
    at.selectbox(key="mechanism").set_value("policy-sips")
    at.run()
    _ok(at)
    text = _captions(at)
    assert "δ split: the halves" in text and "α is not chosen for you" in text
    at.selectbox(key="param_delta_split").set_value("tuned")
    at.number_input(key="param_tune_users").set_value(60)
    at.run()
    _ok(at)
    text = _captions(at)
    assert "δ split chosen from the parameters alone" in text and "held by 60 users" in text
    assert "α is not chosen for you" in text
    # the share quoted is the calibration's own (public) value, recomputed from the page's parameters
    from dpsu_core.mechanisms.registry import get_mechanism, mechanism_class

    names = mechanism_class("policy-sips").param_names
    params = {k: v for k, v in _state(at).param_values.items() if k in names}
    assert params["delta_split"] == "tuned" and params["tune_users"] == 60
    eps, delta = at.sidebar.number_input(key="epsilon").value, at.sidebar.number_input(key="delta").value
    cal = get_mechanism("policy-sips", epsilon=eps, delta=delta, **params).calibrate()
    assert f"noise share {cal.details.noise_share:g}," in text
