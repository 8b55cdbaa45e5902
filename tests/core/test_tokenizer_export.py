"""Tokenizer export: a tokenizer.json built from a release alone, loadable by ``tokenizers``; every vocabulary
entry of every model is a released item, a substring of one, or a named special token."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from dpsu_core import get_mechanism
from dpsu_core.cli import main
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.corpus.tokenize import Preprocessing, tokenize
from dpsu_core.errors import ParameterError
from dpsu_core.tokenizer_export import (
    MODELS,
    TokenizerSpec,
    build_tokenizer,
    check_spec,
    parse_special_tokens,
    tokenizer_json,
)

SPECIALS = ("[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]")


def _release(users: list[list[str]], mechanism: str = "policy-laplace", max_n: int = 1, **params):
    corpus = corpus_from_token_lists([[u] for u in users], max_n=max_n)
    extra = {"max_n": max_n} if max_n > 1 else {}
    return get_mechanism(mechanism, epsilon=5.0, delta=1e-3, **extra, **params).release(corpus)


def _entries_ok(tok: Tokenizer, items: list[str], specials: tuple[str, ...]) -> list[str]:
    """The vocabulary entries that are neither a special token nor a substring of a released item."""
    bad = []
    for entry in tok.get_vocab():
        if entry in specials:
            continue
        piece = entry[2:] if entry.startswith("##") and len(entry) > 2 else entry  # WordPiece's continuation mark
        if not any(piece in item for item in items):
            bad.append(entry)
    return bad


WORD = st.text(alphabet="abcdeéñ'北京天安门ภาษาไทย", min_size=1, max_size=8).filter(
    lambda w: w.strip("'") == w and "''" not in w
)


@pytest.mark.parametrize("mechanism", ["dpsu-all", "pcr"])  # n-grams up to 2; noisy counts
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(WORD, min_size=3, max_size=12, unique=True), seed=st.integers(0, 2**32 - 1))
def test_every_vocabulary_entry_comes_from_the_release(mechanism, words, seed):
    rng = np.random.default_rng(seed)
    users = [list(rng.choice(words, size=int(rng.integers(1, 4)))) for _ in range(400)]
    release = _release(users, mechanism, max_n=2 if mechanism == "dpsu-all" else 1)
    items = [str(s) for s in release.items.tolist()]
    for model in MODELS:
        tok, info = build_tokenizer(
            release,
            TokenizerSpec(model=model, special_tokens=SPECIALS, vocab_size=200 if model != "wordlevel" else None),
        )
        assert _entries_ok(tok, items, SPECIALS) == [], model
        assert info["model"] == model and info["vocabulary_size"] == tok.get_vocab_size()
        if model == "wordlevel":
            assert set(tok.get_vocab()) == set(SPECIALS) | {w for w, n in zip(items, release.ngram_len) if n == 1}


def test_round_trip_through_tokenizers_encodes_released_words(tmp_path):
    users = [["the", "quick", "brown", "fox", "don't", "北京"]] * 300 + [["canary"]]
    # alpha 20: each word's weight reaches rho + 20/epsilon, so a word falls below rho only if its Laplace noise
    # (scale 1/5) is below -4, probability e^-20 / 2 (at alpha 3 it is e^-3 / 2 per word, and one of the six
    # words was missing in about one run in seven)
    release = _release(users, alpha=20.0)
    assert set(users[0]) <= set(release.items.tolist()) and "canary" not in release.items
    for model in MODELS:
        path = tmp_path / f"{model}.json"
        body, _ = tokenizer_json(release, TokenizerSpec(model=model))
        path.write_bytes(body)
        tok = Tokenizer.from_file(str(path))
        assert tok.encode("The QUICK brown fox, don’t! 北京").tokens == [
            "the",
            "quick",
            "brown",
            "fox",
            "don't",
            "北京",
        ]
        if model == "wordlevel":
            assert tok.encode("canary").tokens == ["[UNK]"]


SENTENCES = [
    "Hello, World! Don't 'quote' rock'n'roll it’s e-mail_me #tag 3.14",
    "Visit https://example.com/a?b=1 and www.foo.org NOW",
    "naïve café ÅNGSTRÖM straße — (x1) 42... foo-bar",
    "Привет мир; γειά σου; שלום; مرحبا",
    "zero\u200bwidth soft\u00adhyphen emoji 😀 👍🏽 ok",
]


@pytest.mark.parametrize("strip_symbols", [True, False])
def test_pre_tokenizer_splits_like_the_fast_tokenizer(strip_symbols):
    release = _release([["hello", "world"]] * 300)
    prep = Preprocessing(strip_symbols=strip_symbols)
    tok, _ = build_tokenizer(release, TokenizerSpec(strip_symbols=strip_symbols))
    for text in SENTENCES:
        fast = tokenize(pa.array([text]), tokenizer="fast", prep=prep)
        expected = fast.unigrams[fast.codes].tolist()
        pieces = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(text))]
        assert pieces == expected, text


def test_special_tokens_and_checks():
    assert parse_special_tokens("[PAD], [CLS],[PAD],,") == ("[UNK]", "[PAD]", "[CLS]")
    assert parse_special_tokens(None) == ("[UNK]",)
    with pytest.raises(ParameterError, match="only for the bpe and wordpiece"):
        check_spec(TokenizerSpec(vocab_size=100))
    with pytest.raises(ParameterError, match="unknown tokenizer model"):
        check_spec(TokenizerSpec(model="unigram"))


def _write_corpus(path):
    rows = ["user,text"] + [f"u{i},我爱北京天安门 hello world" for i in range(300)] + ["u999,uniquecanary"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize("model", MODELS)
def test_cli_exports_a_tokenizer_and_the_report_says_how(tmp_path, capsys, model):
    src = tmp_path / "c.csv"
    _write_corpus(src)
    tok_path, rep = tmp_path / "tokenizer.json", tmp_path / "rep.json"
    argv = ["release", str(src), "-m", "pcr", "-e", "3", "-d", "1e-4", "-o", str(tmp_path / "o.csv")]
    argv += ["--report", str(rep), "--export-tokenizer", str(tok_path), "--tokenizer-model", model]
    argv += ["--special-tokens", "[PAD],[CLS]"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, err
    tok = Tokenizer.from_file(str(tok_path))
    assert tok.encode("北京 天安门 Hello").tokens == ["北京", "天安门", "hello"]
    assert {"[UNK]", "[PAD]", "[CLS]"} <= set(tok.get_vocab())
    built = json.loads(rep.read_text())["tokenizer"]
    assert built["model"] == model and built["special_tokens"] == ["[UNK]", "[PAD]", "[CLS]"]
    assert "jieba" in built["pre_tokenizer"] and "released" in built["trained_on"]
    assert f"tokenizer ({model}," in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--tokenizer-model", "bpe"], "--tokenizer-model is for the exported tokenizer"),
        (["--export-tokenizer", "t.json", "--tokenizer-vocab-size", "100"], "only for the bpe and wordpiece"),
    ],
)
def test_cli_tokenizer_flag_errors_are_one_line(tmp_path, capsys, extra, message):
    src = tmp_path / "c.csv"
    _write_corpus(src)
    argv = ["release", str(src), "-m", "pcr", "-e", "3", "-d", "1e-4", "-o", str(tmp_path / "o.csv"), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
