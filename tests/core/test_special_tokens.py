"""Special tokens never cut a released word: a special token made of letters, digits or apostrophes (it could be
part of a released word: ``--special-tokens a,the`` made 'alpha' encode to a, [UNK], a) is refused in one line
before anything is read; every other special token leaves each released word encoding to itself, on every model
(``tokenizer_export.could_be_in_a_word``)."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsu_core import get_mechanism
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.interfaces.cli import main
from dpsu_core.outputs.tokenizer_export import MODELS, TokenizerSpec, build_tokenizer, parse_special_tokens

WORDS = ["alpha", "the", "theme", "data", "don't", "cls", "sep", "mask", "s", "a", "aa", "北京", "ภาษา"]
SYMBOL_SPECIALS = "[CLS],[SEP],[MASK],<s>,</s>,<mask>,<a>,a-b,x y"


def _round_trips(tok, word: str, model: str) -> bool:
    """``word`` encodes to itself: one token for the word-level model; for a subword model, no special token and no
    [UNK] among its pieces, and the pieces decode back to it."""
    enc = tok.encode(word, add_special_tokens=False)
    if model == "wordlevel":
        return enc.tokens == [word]
    specials = {tok.token_to_id(t) for t in ("[UNK]", "[PAD]")} | {
        i for i, t in tok.get_added_tokens_decoder().items() if t.special
    }
    return not specials & set(enc.ids) and tok.decode(enc.ids) == word


@pytest.mark.parametrize("names", ["a,the", "the", "don't", "'s", "Alpha", "北京", "x,[CLS]"])
def test_a_special_token_that_could_be_part_of_a_word_is_refused_in_one_line(names):
    with pytest.raises(ParameterError, match="could be part of a released word") as err:
        parse_special_tokens(names)
    assert "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="could be part of a released word"):  # a spec built by hand too
        build_tokenizer(None, TokenizerSpec(special_tokens=("[UNK]", "[PAD]", *names.split(","))))


def test_cli_refuses_word_specials_before_reading_and_writes_nothing(tmp_path, capsys):
    src = tmp_path / "c.csv"
    src.write_text("user,text\n" + "".join(f"u{i},alpha the theme data\n" for i in range(300)), encoding="utf-8")
    out, rep, tok = tmp_path / "o.csv", tmp_path / "r.json", tmp_path / "tok"
    argv = ["release", str(src), "-m", "policy-gaussian", "-e", "3", "-d", "1e-6", "-o", str(out)]
    argv += ["--report", str(rep), "--export-tokenizer", str(tok), "--special-tokens", "a,the"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "special token" in err[0] and "('a')" in err[0], err
    assert "privacy spent" not in err[0]  # refused before the noise
    assert not out.exists() and not rep.exists() and not tok.exists()


@pytest.mark.parametrize("model", MODELS)
def test_every_released_word_encodes_to_itself_with_the_cli_s_tokenizer_folder(tmp_path, capsys, model):
    from transformers import AutoTokenizer

    src = tmp_path / "c.csv"
    rows = [f"u{i}," + " ".join(WORDS) for i in range(400)]
    src.write_text("user,text\n" + "\n".join(rows) + "\n", encoding="utf-8")
    out, folder = tmp_path / "o.csv", tmp_path / "tok"
    argv = ["release", str(src), "-m", "policy-gaussian", "-e", "8", "-d", "1e-5", "-o", str(out)]
    argv += ["--export-tokenizer", str(folder), "--tokenizer-model", model, "--special-tokens", SYMBOL_SPECIALS]
    if model != "wordlevel":
        argv += ["--tokenizer-vocab-size", "300"]
    code = main(argv)
    assert code == 0, capsys.readouterr().err
    with out.open(encoding="utf-8", newline="") as f:
        released = [r["item"] for r in csv.DictReader(f) if r["n"] == "1"]
    assert {"alpha", "the", "theme", "cls", "mask", "s"} <= set(released)
    tok = AutoTokenizer.from_pretrained(str(folder))
    for word in released:
        ids = tok(word, add_special_tokens=False)["input_ids"]
        assert not set(ids) & set(tok.all_special_ids), (model, word, tok.convert_ids_to_tokens(ids))
        assert tok.decode(ids) == word, (model, word)
        if model == "wordlevel":
            assert tok.convert_ids_to_tokens(ids) == [word]


SPECIAL = st.text(alphabet="as'[]<>-/ ", min_size=1, max_size=4).filter(lambda s: s.strip() == s)
WORD = st.text(alphabet="asb'", min_size=1, max_size=6).filter(lambda w: w.strip("'") == w and "''" not in w)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    specials=st.lists(SPECIAL, min_size=1, max_size=4, unique=True),
    words=st.lists(WORD, min_size=2, max_size=8, unique=True),
)
def test_any_accepted_special_token_leaves_every_released_word_whole(specials, words):
    """Drawn from letters, apostrophes and symbols: either the special tokens are refused, or on every model
    each released word encodes to itself."""
    try:
        names = parse_special_tokens(specials)
    except ParameterError as e:
        assert "could be part of a released word" in str(e)
        return
    users = [[[w for w in words]] for _ in range(300)]
    corpus = corpus_from_token_lists(users, max_n=1)
    release = get_mechanism("policy-laplace", epsilon=5.0, delta=1e-3, alpha=20.0).release(corpus)
    released = [str(w) for w in release.items.tolist() if str(w) not in names]
    assert released
    for model in MODELS:
        size = None if model == "wordlevel" else 200
        tok, _ = build_tokenizer(release, TokenizerSpec(model=model, special_tokens=names, vocab_size=size))
        bad = [w for w in released if not _round_trips(tok, w, model)]
        assert bad == [], (model, names, bad)
    assert np.all(release.ngram_len == 1)
