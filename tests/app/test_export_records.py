"""Export's records say what happened (issue 39, items 4-7) through AppTest: files named by what the release spent,
the report's account taken at its release, the tokenizer zip's folder named like the zip, and no default release
made on another file than the corpus in use."""

from __future__ import annotations

import io
import json
import re
import sys
import zipfile

import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import app_test as app_test_module

from dpsu_core.accounting.ledger import ledger_summary
from pages import _account
from tests.app.test_pages import _confirm_spend, _go, _metric, _new, _ok, _state

SHARE = 0.3


def _plain(text: str) -> str:
    return text.replace("\\", "")


class _KeptStorage(MemoryMediaFileStorage):
    """AppTest's in-memory media storage, kept after the run (AppTest drops its runtime when a run ends), so a test
    reads what a download button serves: the same class, only remembered."""

    runs: list[MemoryMediaFileStorage] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _KeptStorage.runs.append(self)


@pytest.fixture(scope="module", autouse=True)
def _keep_downloads():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(app_test_module, "MemoryMediaFileStorage", _KeptStorage)
        yield


def _download(at, label: str) -> tuple[str, bytes]:
    """The file name and bytes of the download button ``label`` of the last run, as the browser receives them."""
    (button,) = [b for b in at.get("download_button") if b.proto.label == label]
    stored = _KeptStorage.runs[-1].get_file(button.proto.url.rsplit("/", 1)[-1])
    return str(stored.filename), stored.content


def _release(at, mechanism: str, counts: bool = False):
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value(mechanism)
    at.run()
    if counts:
        at.checkbox(key="with_counts").check()
        at.run()
        at.number_input(key="counts_share").set_value(SHARE)
        at.run()
    _confirm_spend(at)
    at.button(key="run_release").click()
    at.run()
    _ok(at)
    return _state(at).history.records[-1]


@pytest.fixture(scope="module")
def two_releases():
    """The demo corpus: #1 policy-gaussian with noisy counts (0.3 of the budget), then #2 without; the ledger's
    summary right after #1 is kept to compare with #1's report."""
    at = _new()
    first = _release(at, "policy-gaussian", counts=True)
    after_first = ledger_summary(_account.spent(_state(at)))
    second = _release(at, "weighted-gaussian")
    _go(at, "7_export")
    at.selectbox(key="export_release").set_value(first.number)
    at.run()
    _ok(at)
    return at, first, second, after_first


def test_files_of_a_counted_release_are_named_by_what_it_spent(two_releases):
    at, first, _, _ = two_releases
    b = _state(at).budget
    assert _metric(at, "Budget") == f"ε={b.epsilon:g}, δ={b.delta:.1e} with counts"
    spent = f"_eps{b.epsilon:g}_delta{b.delta:.0e}_counts"  # the whole budget, counts included
    names = [_download(at, label)[0] for label in ("Released items (CSV)", "Release report (JSON)")]
    items_only = f"_eps{first.calibration.epsilon:g}_"  # the items' part alone (0.7 of it): never the name
    assert all(spent in n and items_only not in n for n in names), names
    assert names[0].startswith(f"dpsu_r{first.number}_policy-gaussian")
    stems = [
        re.sub(r"_(command\.sh|release\.py)$", "", _download(at, x)[0])
        for x in ("Command line (.sh)", "Python script (.py)")
    ]
    assert all(spent in s for s in stems), stems


def test_the_tokenizer_zip_unzips_to_a_folder_named_like_the_zip(two_releases):
    at, first, _, _ = two_releases
    name, data = _download(at, "Tokenizer folder (.zip)")
    assert name.endswith("_tokenizer.zip") and f"_r{first.number}_" in name
    folders = {m.split("/", 1)[0] for m in zipfile.ZipFile(io.BytesIO(data)).namelist()}
    assert folders == {name.removesuffix(".zip")}  # the release number in the folder too


def test_a_report_states_the_account_at_its_release_not_later(two_releases):
    at, first, second, after_first = two_releases
    now = ledger_summary(_account.spent(_state(at)))
    assert now["releases"] > after_first["releases"]  # #2 spent after #1
    _, body = _download(at, "Release report (JSON)")
    rep = json.loads(body)
    assert rep["release"] == first.title() and rep["session_spent"] == after_first
    _, md = _download(at, "Report with the tokenizer (.md)")
    assert after_first["summary"] in md.decode("utf-8") and now["summary"] not in md.decode("utf-8")
    # #2's report: the account after #2
    at.selectbox(key="export_release").set_value(second.number)
    at.run()
    rep2 = json.loads(_download(at, "Release report (JSON)")[1])
    assert rep2["session_spent"] == now


def _upload(at, name: str, rows: pd.DataFrame):
    _go(at, "1_corpus")
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload(name, rows.to_csv(index=False).encode(), "text/csv")
    at.run()
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)


def test_export_never_defaults_to_a_release_made_on_another_file():
    """Item 7: after loading a file again, Export's default is a release made on that file, never one made on
    another file (a shuffled copy, or the same rows under another name)."""
    rows = pd.DataFrame(
        {
            "author": [f"u{i % 40}" for i in range(200)],
            "body": [f"the quick fox number {i % 7} jumps" for i in range(200)],
        }
    )
    at = _new()
    _upload(at, "airline.csv", rows)
    first = _release(at, "policy-gaussian")
    _upload(at, "airline_shuffled.csv", rows.sample(frac=1.0, random_state=1))
    second = _release(at, "policy-gaussian")
    assert second.corpus.input_name == "airline_shuffled.csv"
    _upload(at, "airline.csv", rows)  # the first file again: a new load of the same data, name and reading
    _go(at, "7_export")
    _ok(at)
    box = at.selectbox(key="export_release")
    assert box.value == first.number and set(box.options) == {first.title(), second.title()}
    commands = [c.value for c in at.code if c.value.startswith("dpsu release")]
    assert commands and all("airline.csv" in c and "shuffled" not in c for c in commands)
    # the same rows under another name: another file, so nothing is preselected
    _upload(at, "airline_copy.csv", rows)
    _go(at, "7_export")
    _ok(at)
    box = at.selectbox(key="export_release")
    assert box.value is None
    assert any("No release on the corpus in use (airline_copy.csv)" in _plain(i.value) for i in at.info)
    assert not at.get("download_button") and not at.code  # nothing of #2 (or #1) offered until picked
    # a release on the corpus in use is the default
    third = _release(at, "weighted-gaussian")
    _go(at, "7_export")
    assert at.selectbox(key="export_release").value == third.number
    assert any("airline_copy.csv" in c.value for c in at.code if c.value.startswith("dpsu release"))
    # picked by hand, another file's release exports with its own file in the command
    at.selectbox(key="export_release").set_value(second.number)
    at.run()
    _ok(at)
    assert any("airline_shuffled.csv" in c.value for c in at.code if c.value.startswith("dpsu release"))


def test_a_korean_load_without_kiwi_reports_and_redoes_words_as_written_after_kiwi_arrives(monkeypatch):
    """Item 1 in the app: the corpus is loaded while kiwipiepy is missing (Korean words kept as written), then
    kiwipiepy becomes importable (as after a pip install into the running server): the report still says what the
    load did, and the exported command pins it with --korean eojeol."""
    from dpsu_core.corpus import segmenters

    if segmenters.chosen("Korean") is None:
        pytest.skip("kiwipiepy is not installed here")
    words = ["법률이", "의하여", "학교에", "학교는", "사람이"]
    rows = pd.DataFrame({"author": [f"u{i}" for i in range(150)], "body": [" ".join(words) + " hello"] * 150})
    at = _new()
    segmenters.forget()
    try:
        with monkeypatch.context() as m:
            m.setitem(sys.modules, "kiwipiepy", None)  # a real missing import while the corpus loads
            _upload(at, "ko.csv", rows)
    finally:
        segmenters.forget()
    assert segmenters.chosen("Korean") is not None  # importable from now on
    rec = _release(at, "policy-gaussian")
    _go(at, "7_export")
    _ok(at)
    report = next(c.value for c in at.code if c.value.startswith("# dpsu release report"))
    assert "Korean: words as written (eojeol): kiwipiepy was not installed" in report
    assert "kiwipiepy 0" not in report
    command = next(c.value for c in at.code if c.value.startswith("dpsu release"))
    assert "--korean eojeol" in command.replace(" \\\n", " ")
    assert set(words) & set(rec.release.items.tolist())  # the items are the words as written
