"""Tokenizers and text preprocessing (dpsu_core.corpus.tokenize)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus.tokenize import (
    TOKENIZERS,
    Preprocessing,
    blank_mask,
    check_tokenizer,
    removed_mask,
    tokenize,
)
from dpsu_core.errors import ParameterError

NO_PREP = Preprocessing(lowercase=False, strip_urls=False, drop_removed=False, strip_symbols=True)


def posts_of(tok) -> list[list[str]]:
    return [list(tok.unigrams[tok.codes[a:b]]) for a, b in zip(tok.post_ptr[:-1], tok.post_ptr[1:])]


def run(texts, **kw) -> list[list[str]]:
    return posts_of(tokenize(pa.array(texts, type=pa.string()), **kw))


def test_fast_words_keep_inner_apostrophes_only():
    out = run(["Don't 'quote' rock'n'roll ''edge'' it's."], prep=NO_PREP)
    assert out == [["Don't", "quote", "rock'n'roll", "edge", "it's"]]


def test_typographic_apostrophe_is_normalised():
    assert run(["don\u2019t"], prep=NO_PREP) == [["don't"]]


def test_fast_default_preprocessing_lowercases_strips_urls_and_symbols():
    out = run(["Visit https://Example.com/a?b=1 and www.foo.org, NOW! e-mail_me #tag 3.14"])
    assert out == [["visit", "and", "now", "e", "mail", "me", "tag", "3", "14"]]


def test_unicode_letters_digits_and_marks_are_word_characters():
    out = run(["Ünïcode café 日本語 x\u0301y ٣ 😀 \u00a0 ok"], prep=NO_PREP, tokenizer="fast")  # auto: test_segment
    assert out == [["Ünïcode", "café", "日本語", "x\u0301y", "٣", "ok"]]


@pytest.mark.parametrize("tokenizer", ["fast", "treebank", "auto"])
@pytest.mark.parametrize("strip_symbols", [True, False])
def test_invisible_format_characters_inside_a_word_leave_the_plain_word(tokenizer, strip_symbols):
    """A zero width space (U+200B), word joiner (U+2060), byte order mark (U+FEFF) or soft hyphen (U+00AD) inside
    a Latin, Cyrillic or Greek word is no break: the word is the plain word. ZWJ and ZWNJ never break either."""
    prep = dataclasses.replace(NO_PREP, strip_symbols=strip_symbols)
    plain = ["Privacy matters", "приватность важна", "ιδιωτικότητα μετρά"]
    if tokenizer != "treebank":  # nltk's contraction rules see the raw text (a soft hyphen in "do\u00adn't" too)
        plain.append("don't stop")
    for ch in ("\u200b", "\u2060", "\ufeff", "\u00ad", "\u200c", "\u200d"):
        hidden = [" ".join(w[:2] + ch + w[2:] + ch for w in text.split()) for text in plain]
        assert all(ch in h for h in hidden)
        assert run(hidden, prep=prep, tokenizer=tokenizer) == run(plain, prep=prep, tokenizer=tokenizer), ch
    # ... while a real space between them still breaks
    assert run(["a\u200b b"], prep=prep, tokenizer=tokenizer) == [["a", "b"]]


def test_the_scripts_where_a_zero_width_space_breaks_are_those_written_without_spaces():
    """``charclass.UNSPACED`` holds the code points ``scripts.script_of`` calls Thai, Lao, Khmer, Burmese, kana or
    Han: checked at every range's edges and on every 16th code point of the first four planes."""
    from dpsu_core.corpus.charclass import UNSPACED
    from dpsu_core.corpus.scripts import HAN, KANA, KHMER, LAO, MYANMAR, THAI, script_of

    unspaced = {HAN, KANA, KHMER, LAO, MYANMAR, THAI}
    edges = {cp + d for lo, hi in UNSPACED for cp in (lo, hi) for d in (-1, 0, 1)}
    for cp in sorted(edges | set(range(0, 0x40001, 16))):
        assert any(lo <= cp <= hi for lo, hi in UNSPACED) == (script_of(cp) in unspaced), hex(cp)


def test_symbols_kept_as_their_own_tokens_when_not_stripped():
    prep = Preprocessing(lowercase=False, strip_urls=False, strip_symbols=False)
    assert run(["Hi, you! 'x' a-b"], prep=prep) == [["Hi", ",", "you", "!", "'", "x", "'", "a", "-", "b"]]


def test_lowercase_and_urls_are_switchable():
    keep = Preprocessing(lowercase=False, strip_urls=False)
    out = run(["See HTTP://X.org"], prep=keep)
    assert out == [["See", "HTTP", "X", "org"]]
    assert run(["See HTTP://X.org"]) == [["see"]]


def test_posts_never_share_tokens_and_empty_posts_keep_their_slot():
    tok = tokenize(pa.array(["a b", "", "!!!", "b c"]), prep=NO_PREP)
    assert tok.post_ptr.tolist() == [0, 2, 2, 2, 4]
    assert posts_of(tok) == [["a", "b"], [], [], ["b", "c"]]
    assert tok.unigrams.tolist().count("b") == 1  # one id per distinct token


def test_whitespace_tokenizer_takes_tokens_as_given():
    out = run(["1 2  3 ", "A,b\tC's", "\u3000x"], tokenizer="whitespace")
    assert out == [["1", "2", "3"], ["A,b", "C's"], ["x"]]


def test_treebank_splits_contractions_and_punctuation():
    keep = Preprocessing(lowercase=False, strip_urls=False, strip_symbols=False)
    out = run(["They don't know. It's fine!"], tokenizer="treebank", prep=keep)
    assert out == [["They", "do", "n't", "know", ".", "It", "'s", "fine", "!"]]
    stripped = run(["They don't know. It's fine!"], tokenizer="treebank")
    assert stripped == [["they", "do", "n't", "know", "it", "s", "fine"]]


def test_treebank_and_fast_agree_on_plain_words():
    texts = ["the quick brown fox", "jumps over the lazy dog"]
    assert run(texts, tokenizer="treebank") == run(texts, tokenizer="fast")


def test_unknown_tokenizer_is_a_parameter_error():
    with pytest.raises(ParameterError, match="auto, fast, treebank, char-ngrams"):
        check_tokenizer("spacy")
    with pytest.raises(ParameterError):
        tokenize(pa.array(["a"]), tokenizer="nope")
    assert TOKENIZERS == ("auto", "fast", "treebank", "char-ngrams")


def test_removed_and_blank_masks():
    arr = pa.array(["[removed]", " [deleted] ", "[Removed]", "text", None, "  ", ""])
    assert removed_mask(arr).tolist() == [True, True, False, False, False, False, False]
    assert blank_mask(arr).tolist() == [False, False, False, False, True, True, True]


def test_parallel_split_gives_the_same_result_as_one_thread():
    rng = np.random.default_rng(3)
    words = np.array(["alpha", "beta", "Gamma", "don't", "δέλτα", "x1", "..."], dtype=object)
    texts = [" ".join(rng.choice(words, size=rng.integers(0, 30))) for _ in range(40_000)]
    arr = pa.array(texts)
    one = tokenize(arr, workers=1)
    two = tokenize(arr, workers=2)
    assert np.array_equal(one.post_ptr, two.post_ptr)
    assert np.array_equal(one.unigrams[one.codes], two.unigrams[two.codes])


# A slow, obviously-correct reference for the fast tokenizer's word rule.
_WORD_CH = r"[^\W_]|[\u0300-\u036f]"


def reference_words(text: str) -> list[str]:
    text = text.replace("\u2019", "'").replace("\u02bc", "'")
    out = []
    for chunk in re.split(r"(?:(?!" + _WORD_CH + r"|').)+", text, flags=re.S):
        chunk = chunk.strip("'")
        if chunk:
            out.append(chunk)
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("ab'’ -,.\n\t\u00e9\u0301Z9_")), max_size=25), min_size=1, max_size=6
    )
)
def test_fast_tokenizer_matches_reference(texts):
    got = run(texts, prep=NO_PREP)
    assert got == [reference_words(t) for t in texts]
