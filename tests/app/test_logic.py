"""The app's non-Streamlit helpers: demo corpus, uploads of every format from bytes, delta guidance."""

from __future__ import annotations

import io
import json
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsu_core import app_logic as al
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.demo import generate, load_canaries
from dpsu_core.errors import DpsuError, EncodingError, InputError, ParameterError

REPO = Path(__file__).resolve().parents[2]


def test_streamlit_config():
    cfg = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["maxUploadSize"] == 1024
    assert cfg["client"]["showErrorDetails"] == "none"
    assert cfg["browser"]["gatherUsageStats"] is False


def test_demo_generation_is_seeded_and_canaries_single_user():
    a, ca = generate(seed=7, n_users=400, n_canaries=12)
    b, cb = generate(seed=7, n_users=400, n_canaries=12)
    pd.testing.assert_frame_equal(a, b)
    assert ca == cb and len(set(ca)) == 12
    c, _ = generate(seed=8, n_users=400, n_canaries=12)
    assert not a.equals(c)
    assert a["author"].nunique() == 400
    for canary in ca:
        holders = a.loc[a["body"].str.split().apply(lambda toks, c=canary: c in toks), "author"].unique()
        assert len(holders) == 1, canary


def test_committed_demo_corpus_matches_the_brief():
    csv = al.demo_path()
    assert csv.stat().st_size < 5_000_000
    df = pd.read_csv(csv)
    assert df["author"].nunique() >= 5000
    canaries = load_canaries()
    assert 24 <= len(canaries) <= 60
    tokens = df["body"].str.split()
    for canary in canaries:
        holders = df.loc[tokens.apply(lambda t, c=canary: c in t), "author"].unique()
        assert len(holders) == 1, canary
    # phrase structure: some bigrams are used by many users
    bigrams = df.assign(b=tokens.apply(lambda t: [" ".join(p) for p in zip(t, t[1:])])).explode("b")
    users_per_bigram = bigrams.groupby("b")["author"].nunique()
    assert (users_per_bigram >= 100).sum() >= 20


def test_demo_corpus_loads_with_canaries_held_by_one_user():
    corpus = al.load_demo(al.LoadOptions(max_n=2))
    assert corpus.n_users >= 5000
    assert (corpus.ngram_len == 2).any()
    index = {s: i for i, s in enumerate(corpus.vocab.tolist())}
    for canary in al.demo_canaries():
        assert corpus.user_counts[index[canary]] == 1, canary


@pytest.mark.parametrize("level,delta", [("error", 2e-3), ("warning", 5e-4), ("ok", 1e-7)])
def test_delta_guidance(level, delta):
    g = al.delta_guidance(delta, 1000)  # 1/n = 1e-3
    assert g.level == level
    assert "1/(number of users)" in g.message
    assert g.suggested <= 1e-5 and g.suggested < 1.0 / (100 * 1000) * 1.0001


def test_suggested_delta_is_well_below_one_over_n():
    for n in [2, 17, 999, 6000, 250_000, 989_818]:
        s = al.suggested_delta(n)
        assert s <= 1.0 / (100 * n)
        assert s > 1.0 / (1000 * n)  # the largest power of ten that qualifies
        assert al.delta_guidance(s, n).level == "ok"


def test_params_for_and_compare_params_take_only_what_a_mechanism_takes():
    vals = {"max_items": 50, "alpha": 4.0, "eta": 0.01, "max_n": 3}
    assert al.params_for("policy-gaussian", vals) == {"max_items": 50, "alpha": 4.0}
    assert al.params_for("count-laplace", vals) == {"max_items": 50}
    assert al.compare_params(["count-laplace"], vals) == {"max_items": 50}
    for spec in al.extra_param_specs("policy-gaussian"):
        assert spec.name not in al.BUDGET_PARAMS


def test_calibrate_and_rows_come_from_the_core():
    from dpsu_core.privacy import rho_weighted_gaussian

    cal = al.calibrate("policy-gaussian", 3.0, float(np.exp(-10)), {"max_items": 100, "alpha": 5.0})
    assert cal.rho == pytest.approx(rho_weighted_gaussian(3.0, float(np.exp(-10)), 100))
    rows = dict(al.calibration_rows(cal))
    assert float(rows["ρ (threshold)"]) == pytest.approx(6.8237, abs=1e-3)
    with pytest.raises(ParameterError):
        al.calibrate("policy-gaussian", -1.0, 1e-6, {"max_items": 100})


def _small_corpus():
    words = [f"w{i}" for i in range(30)]
    rng = np.random.default_rng(1)
    users = [[list(rng.choice(words, size=8))] for _ in range(400)]
    users[0] = [["secretcanary", "w1"]]
    return corpus_from_token_lists(users, max_n=2)


def test_teaching_release_is_reproducible_and_marked():
    c = _small_corpus()
    a = al.run_release(c, "weighted-laplace", 10.0, 1e-3, {"max_items": 5}, teaching=True)
    b = al.run_release(c, "weighted-laplace", 10.0, 1e-3, {"max_items": 5}, teaching=True)
    assert a.seed == al.TEACHING_SEED and list(a.items) == list(b.items)
    assert al.export_basename(a).endswith("_TEACHING")
    r = al.run_release(c, "weighted-laplace", 10.0, 1e-3, {"max_items": 5}, teaching=False)
    assert r.seed is None and "TEACHING" not in al.export_basename(r)


def test_filter_items_is_plain_substring():
    frame = pd.DataFrame({"item": ["a.b", "axb", "c"], "n": [1, 1, 1]})
    assert al.filter_items(frame, ".").item.tolist() == ["a.b"]  # not a regex
    assert al.filter_items(frame, "A").item.tolist() == ["a.b", "axb"]
    assert len(al.filter_items(frame, "")) == 3


def test_escape_markdown_neutralises_markup():
    s = al.escape_markdown("[x](http://e) **b** <img> :red[x] $x$")
    for ch in "[]()*<>:$":
        assert ch not in s.replace("\\" + ch, "")


# ---- uploads of every format, from bytes (what the page hands over) ---------------------------
POSTS = pd.DataFrame(
    {
        "author": ["ann", "bob", "ann", "cid", "dee", "bob"],
        "body": ["the cat sat", "a dog ran", "the cat ran", "hello world", "the end", "cat and dog"],
    }
)


def _zip(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, data)
    return buf.getvalue()


def _parquet() -> bytes:
    buf = io.BytesIO()
    POSTS.to_parquet(buf, index=False)
    return buf.getvalue()


UPLOADS = {
    "csv": ("posts.csv", POSTS.to_csv(index=False).encode(), 4),
    "tsv": ("posts.tsv", POSTS.to_csv(index=False, sep="\t").encode(), 4),
    "jsonl": ("posts.jsonl", "\n".join(json.dumps(r) for r in POSTS.to_dict("records")).encode(), 4),
    "parquet": ("posts.parquet", _parquet(), 4),
    "txt": ("posts.txt", "\n".join(POSTS["body"]).encode(), 6),  # one post per line: each line a user
    "sequences": ("seqs.seq", b"% Sequences:\r\n1 2 3\r\n2 2 4\r\n\r\n5 1\r\n", 3),
    "zip": ("posts.zip", _zip("posts.csv", POSTS.to_csv(index=False).encode()), 4),
}


@pytest.mark.parametrize("fmt", list(UPLOADS))
def test_upload_every_format_from_bytes(fmt):
    name, data, users = UPLOADS[fmt]
    corpus = al.load_upload(data, name, al.LoadOptions())
    assert corpus.n_users == users
    assert corpus.n_items > 0


def test_peek_upload_guesses_columns():
    name, data, _ = UPLOADS["csv"]
    cols, user, text = al.peek_upload(data, name)
    assert cols == ["author", "body"] and (user, text) == ("author", "body")


@pytest.mark.parametrize(
    "name,data,err",
    [
        ("empty.csv", b"", InputError),
        ("binary.csv", bytes(range(256)) * 40, EncodingError),
    ],
)
def test_bad_uploads_raise_typed_errors(name, data, err):
    with pytest.raises(err) as e:
        al.load_upload(data, name, al.LoadOptions())
    assert isinstance(e.value, DpsuError) and len(str(e.value)) > 20
