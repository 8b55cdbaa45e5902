"""The release report's tokenization is what the load did (issue 39, item 1), through the real CLI: with every
segmenter of the ``[languages]`` extra, and with them all missing (a real missing import: the CLI runs under a
``-c`` wrapper that sets ``sys.modules[name] = None`` for each package, so ``import`` fails and ``find_spec`` finds
nothing); and the exported command pins a segmentation that ran without its segmenter (``--korean eojeol``)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

import pytest

from dpsu_core.corpus import LoadOptions, load_corpus, segmenters
from dpsu_core.corpus.load import as_loaded
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.outputs.command import Redo, release_argv
from dpsu_core.outputs.export import report_dict

REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    """This process's environment at the call (the test's own DPSU_LEDGER: never the user's store)."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


KOREAN = ["법률이", "의하여", "학교에", "학교는", "사람이", "있다"]
TEXTS = {
    "Korean": " ".join(KOREAN),
    "Chinese": "我们今天在北京大学学习中文",
    "Thai": "ภาษาไทยเป็นภาษาที่สวยงาม",
    "Khmer": "ខ្ញុំស្រឡាញ់ប្រទេសកម្ពុជា",
    "Lao": "ພາສາລາວໃນປັດຈຸບັນ",
}
#: every module a language's candidates import (hiding them all hides the language's segmenter)
HIDDEN = sorted({c.module for lang in TEXTS for c in segmenters.CANDIDATES[lang]})


def _corpus(folder: Path) -> Path:
    rows = ["author,body"] + [f"u{i},{' '.join(TEXTS.values())} hello" for i in range(120)]  # every user, every word
    path = folder / "langs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _cli(folder: Path, hidden: list[str], *args: str) -> subprocess.CompletedProcess:
    block = "".join(f"sys.modules[{m!r}] = None; " for m in hidden)
    code = f"import sys; {block}from dpsu_core.interfaces.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=folder, env=_env(), capture_output=True, text=True, timeout=300
    )


def _languages(tokenization: str) -> dict[str, str]:
    inside = tokenization.split("(", 1)[1].rsplit(")", 1)[0]
    return dict(part.split(": ", 1) for part in inside.split("; "))


@pytest.mark.parametrize("installed", [True, False], ids=["with the extra", "without it"])
def test_the_report_names_the_segmentation_the_load_did(tmp_path, installed):
    for lang in TEXTS:
        if installed and segmenters.chosen(lang) is None:
            pytest.skip(f"the [languages] extra is not installed here ({lang})")
    src = _corpus(tmp_path)
    proc = _cli(tmp_path, [] if installed else HIDDEN, "release", src.name, "-m", "policy-sips", "-e", "3", "-d",
                "1e-6", "-o", "o.csv", "--report", "r.json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ran = _languages(json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["tokenization"])
    assert ran["Japanese"] == "none in the text" and ran["Burmese"] == "none in the text"
    with (tmp_path / "o.csv").open(encoding="utf-8", newline="") as f:
        items = {row["item"] for row in csv.DictReader(f)}
    for lang in TEXTS:
        cand = segmenters.CANDIDATES[lang][0]
        if installed:  # the segmenter that ran, with the version imported
            assert ran[lang].startswith(f"{cand.packages[0]} {version(cand.packages[0])}"), ran[lang]
        else:
            instead = "words as written (eojeol)" if lang == "Korean" else "character 2-grams"
            assert ran[lang].startswith(instead) and "was not installed" in ran[lang], ran[lang]
            assert "not installed" in proc.stderr  # the notes said the same
    korean_items = items & set(KOREAN)
    assert bool(korean_items) is (not installed)  # eojeol items exactly when the report says words as written


def test_a_korean_load_without_its_segmenter_is_redone_with_korean_eojeol(tmp_path, monkeypatch):
    """Loaded while kiwipiepy is missing (Korean kept as written), then kiwipiepy is back (as after a pip install
    into the running process): the report still says what the load did, and the command pins it."""
    if segmenters.chosen("Korean") is None:
        pytest.skip("kiwipiepy is not installed here")
    src = _corpus(tmp_path)
    options = LoadOptions(format="csv", user_col="author", text_col="body")
    segmenters.forget()
    try:
        with monkeypatch.context() as m:
            m.setitem(sys.modules, "kiwipiepy", None)
            corpus = load_corpus(src, options)
    finally:
        segmenters.forget()
    assert segmenters.chosen("Korean") is not None  # importable now
    assert corpus.source.pinned == (("korean", "eojeol"),)
    release = get_mechanism("policy-gaussian", epsilon=3.0, delta=1e-6).release(corpus)
    assert _languages(release.tokenization)["Korean"].startswith("words as written (eojeol)")
    redo = as_loaded(options, corpus.source)
    assert redo == replace(options, korean="eojeol")
    argv = release_argv(Redo(release.calibration, src.name, redo, output="o.csv", report="r.json"))
    assert argv[argv.index("--korean") + 1] == "eojeol"
    proc = _cli(tmp_path, [], *argv[1:])  # kiwipiepy installed: the pinned flag keeps the words as written
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    redone, done = _languages(rep["tokenization"]), _languages(release.tokenization)
    assert redone.pop("Korean") == "words as written (eojeol)" == done.pop("Korean").split(":")[0]  # the same cut
    assert redone == done
    assert rep["calibration"] == json.loads(json.dumps(report_dict(release)["calibration"]))
    # with kiwipiepy importable the same file loaded again is cut into morphemes: the load, not the install, decides
    assert _languages(load_corpus(src, options).source.tokenization)["Korean"].startswith("kiwipiepy ")


def test_an_english_tokenizer_without_any_segmenter_names_no_empty_list(tmp_path):
    """Item 16: with no segmenter installed, the tokenizer's line says what is not in the file without "()"."""
    pytest.importorskip("tokenizers")
    every = sorted({c.module for cands in segmenters.CANDIDATES.values() for c in cands})
    rows = ["author,body"] + [f"u{i},the cat sat on the mat again {i % 3}" for i in range(120)]
    (tmp_path / "en.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["release", "en.csv", "-m", "gw", "-e", "3", "-d", "1e-6", "-o", "o.csv", "--export-tokenizer", "t.json",
            "--report", "r.json"]  # fmt: skip
    proc = _cli(tmp_path, every, *args)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("tokenizer ("))
    assert "the word segmenters of the auto tokenizer, which a tokenizer.json cannot hold" in line and "()" not in line
    with_them = _cli(tmp_path, [], *args, "--spend-again")  # installed here: named, each with its package
    if segmenters.chosen("Chinese") is not None:
        assert "Chinese (rjieba" in with_them.stderr or "Chinese (jieba" in with_them.stderr


def test_the_user_column_error_lists_a_name_like_column_first(tmp_path):
    """Item 20: 15 columns, none a known user name; the one line lists ``name`` (position 12) among the shown
    columns, ahead of the others, and still says how many more there are."""
    header = [f"feature_{i}" for i in range(12)] + ["name", "price", "comments_text"]
    rows = [",".join(header)] + [",".join([str(i)] * 12 + [f"person{i % 9}", "3", f"words {i}"]) for i in range(40)]
    (tmp_path / "wide.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = _cli(tmp_path, [], "release", "wide.csv", "-m", "gw", "-e", "3", "-d", "1e-6", "-o", "o.csv")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    line = proc.stderr.strip()
    assert "12: 'name'" in line and "more" in line, line
    listed = line.split("available", 1)[-1]
    assert listed.index("12: 'name'") < listed.index("0: 'feature_0'"), line  # ranked first
