"""Public frequencies for GW-KT: wordfreq default, public corpora (in memory or a file), missing items
count 1, and independence from the private corpus."""

from __future__ import annotations

import numpy as np
import pytest
import wordfreq

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import InputError, ParameterError
from dpsu_core.publicfreq import (
    MISSING,
    corpus_frequencies,
    describe_source,
    public_frequencies,
    wordfreq_frequencies,
)


def _v(*words):
    return np.array(words, dtype=object)


# --------------------------------------------------------------------------- wordfreq default
def test_wordfreq_default_gives_a_sensible_order():
    f = public_frequencies(_v("the", "house", "aardvark", "zymurgy", "xqzzyvw"))
    assert f[0] > f[1] > f[2] > f[4]
    assert f[3] <= f[2]  # "zymurgy" is at most as frequent as "aardvark" (absent from the list: counts 1)
    assert f[0] == pytest.approx(wordfreq.word_frequency("the", "en") * 1e9, rel=0.01)


def test_missing_items_count_one_and_every_listed_word_ranks_above_them():
    f = public_frequencies(_v("xqzzyvw", "blorptastic", "", "the"))
    assert f[0] == MISSING and f[1] == MISSING
    assert f[3] > MISSING
    table = wordfreq.get_frequency_dict("en", wordlist="best")
    rarest = min(table, key=table.get)
    assert public_frequencies(_v(rarest))[0] > MISSING


def test_lookup_is_case_insensitive_like_wordfreq():
    f = public_frequencies(_v("The", "THE", "the"))
    assert f[0] == f[1] == f[2]


def test_ngrams_use_wordfreqs_phrase_rule():
    f = public_frequencies(_v("of the", "of", "the", "of xqzzyvw", "new york"))
    assert f[0] == pytest.approx(1.0 / (1.0 / f[1] + 1.0 / f[2]))
    assert f[0] < min(f[1], f[2])
    assert f[3] == MISSING  # any missing word makes the n-gram missing
    assert f[4] == pytest.approx(wordfreq.word_frequency("new york", "en") * 1e9, rel=0.01)


def test_wordfreq_table_is_cached_and_the_result_deterministic():
    v = _v("the", "cat", "sat")
    a = wordfreq_frequencies(v)
    b = wordfreq_frequencies(v.copy())
    np.testing.assert_array_equal(a, b)
    from dpsu_core.publicfreq import _wordfreq_table

    assert _wordfreq_table.cache_info().currsize >= 1


def test_unknown_language_is_a_parameter_error():
    with pytest.raises(ParameterError, match="language"):
        public_frequencies(_v("the"), lang="xx-nonsense")


def test_empty_vocab():
    assert public_frequencies(_v()).shape == (0,)


# --------------------------------------------------------------------------- public corpus
PUBLIC_USERS = [["pear", "fig"], ["pear", "pear", "kiwi"], ["pear", "fig", "fig", "fig"]]


def test_supplied_public_corpus_user_and_occurrence_counts():
    pub = corpus_from_token_lists(PUBLIC_USERS, posts_per_user=False)
    v = _v("fig", "pear", "kiwi", "mango")
    np.testing.assert_array_equal(public_frequencies(v, pub), [2.0, 3.0, 1.0, MISSING])
    np.testing.assert_array_equal(public_frequencies(v, pub, count="occurrences"), [4.0, 4.0, 1.0, MISSING])
    with pytest.raises(ParameterError, match="count"):
        corpus_frequencies(v, pub, count="bogus")


def test_public_corpus_matches_ngrams_by_string():
    pub = corpus_from_token_lists(PUBLIC_USERS, posts_per_user=False, max_n=2)
    f = public_frequencies(_v("pear fig", "fig fig", "fig pear", "pear"), pub)
    np.testing.assert_array_equal(f, [2.0, 1.0, MISSING, 3.0])


def test_public_corpus_from_a_file(tmp_path):
    path = tmp_path / "public.csv"
    lines = ["user,text"] + [f"u{i},{' '.join(toks)}" for i, toks in enumerate(PUBLIC_USERS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    f = public_frequencies(_v("fig", "pear", "kiwi", "mango", "pear fig"), path)
    np.testing.assert_array_equal(f, [2.0, 3.0, 1.0, MISSING, 2.0])  # n-grams read up to the vocab's length
    assert describe_source(path) == "public corpus public.csv"


def test_bad_sources_are_typed_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        public_frequencies(_v("the"), tmp_path / "nope.csv")
    with pytest.raises(ParameterError, match="public_source"):
        public_frequencies(_v("the"), 3.5)


# --------------------------------------------------------------------------- independence from private data
@pytest.mark.parametrize("source", ["wordfreq", "corpus"])
def test_private_corpus_never_influences_public_frequencies(source):
    """Two private corpora with the same item strings but different users and counts: identical output."""
    pub = None if source == "wordfreq" else corpus_from_token_lists(PUBLIC_USERS, posts_per_user=False)
    words = ["the", "fig", "pear", "zymurgy", "of", "house"]
    a = corpus_from_token_lists([words * 3, ["the"] * 9 + words], posts_per_user=False)
    b = corpus_from_token_lists([words, words, words, ["zymurgy"] * 20 + words], posts_per_user=False)
    assert list(a.vocab) == list(b.vocab)
    assert a.n_users != b.n_users and not np.array_equal(a.user_counts, b.user_counts)
    fa = public_frequencies(a.vocab, pub)
    fb = public_frequencies(b.vocab, pub)
    np.testing.assert_array_equal(fa, fb)
    # and each item's value depends on its own string only: reordering the vocabulary just reorders it
    perm = np.random.default_rng(0).permutation(a.n_items)
    np.testing.assert_array_equal(public_frequencies(a.vocab[perm], pub), fa[perm])
