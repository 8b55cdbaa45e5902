import csv
import io
import json
import math
import string
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsu_core
from dpsu_core import get_mechanism
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import DpsuError, ParameterError
from dpsu_core.mechanisms.base import Diagnostics, make_release
from dpsu_core.outputs.export import (
    CALIBRATION_KEYS,
    OPTIONAL_REPORT_KEYS,
    REPORT_KEYS,
    TEACHING_CSV_LINE,
    neutralise_cell,
    report_dict,
    report_json,
    report_markdown,
    to_csv_bytes,
    to_json_bytes,
    to_txt_bytes,
    write_release,
)

HOSTILE = ['=HYPERLINK("x")', "+1", "-2", "@SUM(A1)", "\tcmd", "\rcr"]
PLAIN = ["apple", "a,b", 'say "hi"', "NA", "x'y"]


@pytest.fixture(scope="module")
def corpus():
    # 400 users share every hostile and plain token (and hence the bigram of neighbours): all are released.
    # Each user also has a private token with a varying number of extra words, so weights are non-integral.
    rng = np.random.default_rng(3)
    users = []
    for i in range(400):
        extra = [f"own{i}_{j}" for j in range(int(rng.integers(0, 4)))]
        users.append([HOSTILE + PLAIN, extra or [f"own{i}"]])
    return corpus_from_token_lists(users, max_n=2)


@pytest.fixture(scope="module")
def release(corpus):  # not seeded (rng given explicitly): a "real" release as far as exports are concerned
    mech = get_mechanism("weighted-gaussian", epsilon=2.0, delta=1e-6, max_items=40)
    return mech.release(corpus, rng=np.random.default_rng(5))


@pytest.fixture(scope="module")
def seeded(corpus):
    return get_mechanism("policy-laplace", epsilon=2.0, delta=1e-6, max_items=40, alpha=3).release(corpus, seed=9)


def test_release_fixture_contains_the_hostile_items(release):
    assert release.seed is None
    assert set(HOSTILE + PLAIN) <= set(release.items.tolist())


def test_csv_columns_neutralised_and_round_trip(release):
    raw = to_csv_bytes(release)
    back = pd.read_csv(io.BytesIO(raw), keep_default_na=False, dtype={"item": str})
    assert list(back.columns) == ["item", "n"]
    items = back["item"].tolist()
    for h in HOSTILE:
        assert "'" + h in items and h not in items
    for p in PLAIN:
        assert p in items
    assert all(not s.startswith(("=", "+", "-", "@", "\t", "\r")) for s in items)
    restored = [s[1:] if s.startswith("'") and s[1:2] in ("=", "+", "-", "@", "\t", "\r") else s for s in items]
    assert restored == release.items.tolist()
    assert back["n"].tolist() == release.ngram_len.tolist()


def test_json_keeps_items_literal_and_only_allowed_keys(release):
    doc = json.loads(to_json_bytes(release).decode("utf-8"))
    assert set(doc) == {"guarantee", "items"}
    assert [r["item"] for r in doc["items"]] == release.items.tolist()
    assert all(set(r) == {"item", "n"} for r in doc["items"])
    assert set(HOSTILE) <= {r["item"] for r in doc["items"]}
    head = doc["guarantee"]
    assert head["epsilon"] == 2.0 and head["delta"] == 1e-6 and head["teaching_mode"] is False
    assert "warning" not in head and "differentially private" in head["guarantee"]


def test_txt_one_item_per_line_formulas_neutralised(release):
    lines = to_txt_bytes(release).decode("utf-8").split("\n")
    assert lines[-1] == ""
    items = [s.replace("\r", " ") for s in release.items.tolist()]  # a CR inside an item would split a line
    assert lines[:-1] == [neutralise_cell(s) for s in items]
    # formula-like items get the same leading quote as in the CSV; every other item is written as is
    assert {'\'=HYPERLINK("x")', "'+1", "'-2", "'@SUM(A1)", "'\tcmd"} <= set(lines)
    assert not {'=HYPERLINK("x")', "+1", "-2", "@SUM(A1)", "\tcmd"} & set(lines)
    assert {s for s in items if not s.startswith(("=", "+", "-", "@", "\t", "\r"))} <= set(lines)


def _numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield float(obj)


def _keys(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + k
            yield from _keys(v, prefix + k + ".")


def test_report_has_allowed_keys_and_no_diagnostic_number(release):
    rep = report_dict(release)
    # export's one allow-list; asked for none of the optional parts, the report has none but ``warning``
    assert set(rep) <= set(REPORT_KEYS) - {"session_spent", "release", "tokenizer"}
    assert set(REPORT_KEYS) - set(rep) <= set(OPTIONAL_REPORT_KEYS)
    assert set(rep["calibration"]) == set(CALIBRATION_KEYS)
    assert set(rep["params"]) == {"max_items"}
    w = release.diagnostics.weights
    frac = w[(w > 0) & (w != np.round(w))]
    assert frac.size > 10  # the check below is meaningful
    numbers = list(_numbers(rep))
    assert not any(np.isclose(x, frac, rtol=1e-9, atol=0).any() for x in numbers)
    for text in (
        report_json(release).decode(),
        report_markdown(release),
        to_json_bytes(release).decode(),
        to_csv_bytes(release).decode(),
    ):
        for v in frac[:200]:
            assert repr(float(v)) not in text and f"{v:.6g}" not in text
    assert not any(k in ("weights", "true_count", "user", "users", "diagnostics") for k in _keys(rep))


def test_report_contents(release):
    rep = report_dict(release)
    cal = release.calibration
    assert rep["mechanism"] == "weighted-gaussian" and rep["label"] == cal.label
    assert rep["epsilon"] == 2.0 and rep["delta"] == 1e-6 and rep["params"] == {"max_items": 40}
    assert rep["calibration"]["rho"] == cal.rho and rep["calibration"]["scale"] == cal.scale
    assert rep["calibration"]["gamma"] is None and rep["calibration"]["noise"] == "gaussian"
    assert rep["calibration"]["rounds"] == []  # one threshold: no rounds
    assert rep["released_total"] == release.n_released
    assert rep["released_per_length"] == {str(k): v for k, v in release.per_length().items()}
    assert sum(rep["released_per_length"].values()) == release.n_released
    assert rep["dpsu_version"] == dpsu_core.__version__
    when = datetime.strptime(rep["date_utc"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - when).total_seconds()) < 600
    assert rep["guarantee"] == cal.guarantee
    assert rep["teaching_mode"] is False and "warning" not in rep
    assert json.loads(report_json(release)) == rep | {"date_utc": json.loads(report_json(release))["date_utc"]}


def test_teaching_warning_iff_seeded(release, seeded):
    assert seeded.seed == 9
    rep = report_dict(seeded)
    assert rep["teaching_mode"] is True and "NOT for real releases" in rep["warning"]
    assert "fixed seed" in rep["warning"]
    assert "NOT for real releases" in report_markdown(seeded)
    assert "NOT for real releases" in json.loads(to_json_bytes(seeded))["guarantee"]["warning"]
    assert "seed" not in rep and "9" not in json.dumps(rep["params"])  # the seed value itself is not published
    assert rep["calibration"]["gamma"] == pytest.approx(seeded.calibration.gamma)
    assert set(rep["params"]) == {"max_items", "alpha"}
    # the guarantee itself says the release is NOT differentially private, then what fresh randomness would give
    for g in (rep["guarantee"], json.loads(to_json_bytes(seeded))["guarantee"]["guarantee"]):
        assert g.startswith("This release is NOT differentially private")
        assert g.endswith(seeded.calibration.guarantee)
    assert "NOT differentially private" in report_markdown(seeded)
    # the item files say it too, ONCE: a first comment line in the CSV and in the TXT, not a column on every row
    raw = to_csv_bytes(seeded).decode()
    assert raw.startswith("# TEACHING RELEASE") and raw.count("TEACHING") == 1
    csv_df = pd.read_csv(io.BytesIO(to_csv_bytes(seeded)), comment="#")
    assert list(csv_df.columns) == ["item", "n"] and len(csv_df) == seeded.n_released
    txt = to_txt_bytes(seeded).decode().split("\n")
    assert txt[0].startswith("# TEACHING RELEASE") and txt[-1] == "" and len(txt) - 2 == seeded.n_released
    for text in (
        report_markdown(release),
        report_json(release).decode(),
        to_json_bytes(release).decode(),
        to_csv_bytes(release).decode(),
        to_txt_bytes(release).decode(),
    ):
        assert "NOT for real" not in text and "fixed seed" not in text and "TEACHING" not in text


def test_markdown_is_readable(release):
    md = report_markdown(release)
    assert md.startswith("# dpsu release report: Weighted Gaussian")
    assert release.calibration.guarantee in md
    assert f"Items released: {release.n_released}" in md
    assert "| max_items | 40 |" in md
    assert "<" not in md  # no HTML


def _count_release(corpus):
    # A count mechanism's release (noisy counts with their std) assembled with the real make_release.
    mech = get_mechanism("count-gaussian", epsilon=1.0, delta=1e-6, max_items=5)
    cal = mech.calibrate()
    ids = np.array([corpus.vocab.tolist().index(s) for s in ["-2", "apple", '=HYPERLINK("x")']])
    true = corpus.user_counts[ids].astype(float)
    noisy = np.round(true + np.array([-3.2, 4.4, 1.6]))
    diag = Diagnostics(weights=None, extra={"true_counts": true})
    return make_release(
        cal, corpus, ids, diag, seed=None, elapsed=0.0, noisy_counts=noisy, count_std=np.full(3, 2.5)
    ), true


def test_count_release_exports_count_and_std_only(corpus):
    rel, true = _count_release(corpus)
    back = pd.read_csv(io.BytesIO(to_csv_bytes(rel)), keep_default_na=False, dtype={"item": str})
    assert list(back.columns) == ["item", "n", "count", "std"]
    assert back["count"].tolist() == rel.noisy_counts.tolist() and (back["std"] == 2.5).all()
    assert "'-2" in back["item"].tolist()
    doc = json.loads(to_json_bytes(rel))
    assert all(set(r) == {"item", "n", "count", "std"} for r in doc["items"])
    assert "-2" in [r["item"] for r in doc["items"]]
    assert "true_counts" not in report_json(rel).decode()
    assert not set(true.tolist()) & set(back["count"].tolist())


def _pandas_csv(rel) -> bytes:
    """The same columns written by pandas' CSV writer (formula cells neutralised first): the oracle."""
    df = rel.private_frame()
    df["item"] = df["item"].map(neutralise_cell)
    head = TEACHING_CSV_LINE + "\n" if rel.seeded else ""
    return (head + df.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")).encode()


def test_csv_bytes_are_what_pandas_writes(corpus, release, seeded):
    count_rel, _ = _count_release(corpus)
    noisy = np.array([-3.0, 0.1, 1e-5])  # floats whose text differs between formatters, if any does
    odd = make_release(
        count_rel.calibration,
        corpus,
        np.arange(3),
        Diagnostics(),
        seed=None,
        elapsed=0.0,
        noisy_counts=noisy,
        count_std=np.array([2.5, 1 / 3, 1e17]),
    )
    for rel in (release, seeded, count_rel, odd):
        assert to_csv_bytes(rel) == _pandas_csv(rel)
    assert b"=HYPERLINK" in to_csv_bytes(release) and b"\"'=HYPERLINK" in to_csv_bytes(release)


def test_write_release(tmp_path, release):
    csv_path, md_path, js_path = tmp_path / "out.csv", tmp_path / "r.md", tmp_path / "r.json"
    write_release(release, csv_path, md_path)
    assert csv_path.read_bytes() == to_csv_bytes(release)
    assert md_path.read_text(encoding="utf-8").startswith("# dpsu release report")
    write_release(release, str(csv_path), str(js_path))
    assert json.loads(js_path.read_bytes())["mechanism"] == "weighted-gaussian"
    write_release(release, tmp_path / "only.csv")
    assert (tmp_path / "only.csv").exists() and not (tmp_path / "only.json").exists()
    with pytest.raises(ParameterError, match="writable"):
        write_release(release, tmp_path / "missing_dir" / "out.csv")


def test_non_release_is_a_typed_error():
    for fn in (to_csv_bytes, to_json_bytes, to_txt_bytes, report_dict, report_markdown):
        with pytest.raises(DpsuError, match="Release"):
            fn({"items": ["a"]})


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.printable + "é€", max_size=12))
def test_neutralise_cell_property(s):
    out = neutralise_cell(s)
    if s[:1] in ("=", "+", "-", "@", "\t", "\r"):
        assert out == "'" + s
    else:
        assert out == s
    assert neutralise_cell(3) == 3 and neutralise_cell(-2.5) == -2.5 and math.isnan(neutralise_cell(float("nan")))
