"""The checks at the API's and the CLI's boundary (issue 38, items 6, 10, 15 and 18): a bad value is one
ParameterError (the API) or one line and exit 2 (the CLI), never an OverflowError, TypeError, AttributeError or an
internal error from deeper down."""

from __future__ import annotations

import os

import numpy as np
import pytest

from dpsu_core.accounting.ledger import LedgerEntry
from dpsu_core.corpus.load import load_corpus
from dpsu_core.errors import ParameterError
from dpsu_core.interfaces import cli
from dpsu_core.mechanisms.item_counts import CLIP_MAX, CLIP_MIN, calibrate_counts
from dpsu_core.mechanisms.registry import get_mechanism
from dpsu_core.outputs import export, tokenizer_export
from dpsu_core.reading import READING_OPTIONS
from tests.hostile.generate import GOOD_CSV, MECH

BIG = 10**400  # an int no float can hold


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpsu: error: "), err
    assert "internal error" not in err[0]
    return err[0]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    src = tmp_path_factory.mktemp("corpus") / "in.csv"
    src.write_bytes(GOOD_CSV)
    return get_mechanism("policy-gaussian", epsilon=4, delta=1e-6).release(load_corpus(src))


@pytest.mark.parametrize("name", ["policy-gaussian", "gw", "pcr", "dp-sips"])
def test_an_epsilon_too_large_for_a_float_is_a_parameter_error(name):
    with pytest.raises(ParameterError, match="epsilon"):
        get_mechanism(name, epsilon=BIG, delta=1e-6).calibrate()
    with pytest.raises(ParameterError, match="delta"):
        get_mechanism(name, epsilon=1.0, delta=BIG).calibrate()


@pytest.mark.parametrize("path", [None, 7, b"out.csv", ""])
def test_write_release_names_a_bad_path(release, tmp_path, path):
    with pytest.raises(ParameterError, match="out_csv_path must be a file path"):
        export.write_release(release, path)
    with pytest.raises(ParameterError, match="report_path must be a file path"):
        export.write_release(release, tmp_path / "o.csv", 7)
    assert os.listdir(tmp_path) == []


def test_the_tokenizer_needs_a_release():
    for bad in (None, "release", {"items": []}):
        with pytest.raises(ParameterError, match="expected a Release"):
            tokenizer_export.tokenizer_json(bad, tokenizer_export.TokenizerSpec())


def test_ledger_entry_takes_a_numpy_integer_count(release):
    entry = LedgerEntry.from_calibration(release.calibration, corpus_id=1, source="x", releases=np.int64(2))
    assert entry.releases == 2 and type(entry.releases) is int
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ParameterError, match="releases must be"):
            LedgerEntry.from_calibration(release.calibration, corpus_id=1, source="x", releases=bad)


def test_the_counts_clip_range_is_declared_once_and_finite_inside_it():
    """At both ends of the clip range and of the budget, the counts' sigma and zCDP cost are finite and > 0;
    outside it, one ParameterError naming --counts-clip (1e300 used to give NaN after calibrate_counts)."""
    for clip in (CLIP_MIN, CLIP_MAX):
        for eps, delta, share in ((1e-11, 1e-299, 0.5), (1e300, 0.5, 0.999), (3, 1e-6, 0.1)):
            cc = calibrate_counts(eps, delta, share, clip)
            assert 0 < cc.sigma < float("inf") and 0 < cc.cost.rho < float("inf")
    for clip in (1e300, CLIP_MAX * 2, CLIP_MIN / 2, 0.0, float("nan"), BIG):
        with pytest.raises(ParameterError, match="--counts-clip"):
            calibrate_counts(3, 1e-6, 0.1, clip)


def test_cli_counts_clip_out_of_range_is_one_line(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    argv = ["release", str(src), *MECH, "-o", str(tmp_path / "o.csv"), "--with-counts"]
    assert cli.main([*argv, "--counts-clip", "1e300"]) == 2
    assert f"must be <= {CLIP_MAX:g}" in _one_line(capsys)
    assert cli.main([*argv, "--counts-clip", str(CLIP_MAX)]) == 0
    assert (tmp_path / "o.csv").read_text().startswith('"item","n","count","std"')


TOKENIZERS = ("auto", "fast", "treebank", "char-ngrams")


@pytest.mark.parametrize("option", [o for o in READING_OPTIONS if o.tokenizers], ids=lambda o: o.flag)
@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_an_option_the_tokenizer_ignores_is_refused(tmp_path, capsys, option, tokenizer):
    """One rule (``ReadingOption.tokenizers``): --korean with fast, treebank or char-ngrams is refused as
    --char-ngrams with fast or treebank is; where the tokenizer uses it, it is accepted."""
    src = tmp_path / "in.csv"
    src.write_bytes(GOOD_CSV)
    value = {"--korean": "eojeol", "--char-ngrams": "3"}[option.flag]
    argv = ["release", str(src), *MECH, "-o", str(tmp_path / "o.csv"), "--tokenizer", tokenizer, option.flag, value]
    code = cli.main(argv)
    if tokenizer in option.tokenizers:
        assert code == 0 and (tmp_path / "o.csv").exists()
    else:
        assert code == 2 and not (tmp_path / "o.csv").exists()
        assert f"{option.flag} is not used by --tokenizer {tokenizer}" in _one_line(capsys)


def test_exported_command_leaves_out_what_the_tokenizer_ignores():
    from dpsu_core.corpus import LoadOptions
    from dpsu_core.outputs.command import Redo, release_argv

    cal = get_mechanism("policy-gaussian", epsilon=4, delta=1e-6).calibrate()
    opts = LoadOptions(tokenizer="fast", korean="eojeol", char_ngrams=3)
    line = " ".join(release_argv(Redo(cal, "in.csv", opts, output="o.csv", report="r.json")))
    assert "--tokenizer fast" in line and "--korean" not in line and "--char-ngrams" not in line
    line = " ".join(release_argv(Redo(cal, "in.csv", LoadOptions(korean="eojeol"), output="o.csv", report="r.json")))
    assert "--korean eojeol" in line


def test_spark_env_onto_a_folder_names_the_path_given(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "env.tar.gz").mkdir()
    assert cli.main(["spark-env", "env.tar.gz"]) == 2
    line = _one_line(capsys)
    assert "'env.tar.gz' is a folder" in line and ".part" not in line
    assert os.listdir(tmp_path) == ["env.tar.gz"] and os.listdir(tmp_path / "env.tar.gz") == []
