"""Neighbouring corpora (teaching view): D' construction and the release-probability band."""

from __future__ import annotations

import numpy as np
import pytest

from dpsu_core.analysis.neighbours import add_user, holders, remove_user, run_neighbours, user_items
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.mechanisms.base import ReleaseParts
from dpsu_core.mechanisms.setunion import WeightedLaplace
from tests.helpers import lone_user_corpus


def test_remove_user_keeps_everyone_else_and_the_vocabulary():
    c, uniq = lone_user_corpus(4, n_users=30)
    row = c.n_users - 1
    nb = remove_user(c, row)
    d2 = nb.corpus
    assert d2.n_users == c.n_users - 1 and np.array_equal(d2.vocab, c.vocab)
    for r in range(d2.n_users):
        assert np.array_equal(user_items(d2, r), user_items(c, r))
    assert set(nb.user_items.tolist()) == set(uniq.tolist()) and not nb.added
    assert d2.user_counts[uniq].sum() == 0
    assert holders(c, c.vocab[uniq[0]]).tolist() == [row]
    with pytest.raises(ParameterError, match="row number"):
        remove_user(c, c.n_users)


def test_add_user_with_a_canary_extends_the_vocabulary_and_its_ngrams():
    base = corpus_from_token_lists([["a", "b", "c"], ["b", "c", "d"], ["a", "b"]], max_n=2, posts_per_user=False)
    nb = add_user(base, "B c zzcanary")
    d2 = nb.corpus
    assert d2.n_users == base.n_users + 1 and nb.added
    assert np.array_equal(d2.vocab[: base.n_items], base.vocab)  # D's ids are unchanged
    items = set(d2.vocab[nb.user_items].tolist())
    assert items == {"b", "c", "zzcanary", "b c", "c zzcanary"}
    # n-gram strings are their unigrams joined, through gram_tokens, for old and new items alike
    for i in range(d2.n_items):
        toks = d2.gram_tokens[i][d2.gram_tokens[i] >= 0]
        assert " ".join(d2.vocab[toks].tolist()) == d2.vocab[i]
        assert d2.ngram_len[i] == toks.size
    assert d2.user_counts[list(d2.vocab).index("b c")] == 3  # two old holders and the new user
    with pytest.raises(ParameterError, match="type"):
        add_user(base, "   ")


class _NoNoise(WeightedLaplace):
    """NOT private: releases every item anyone holds. The band check must flag it. (Weighted Laplace's traits and
    calibration, none of its noise.)"""

    name, label, family = "no-noise", "no noise (not private)", "laplace"

    def calibrate(self):
        return get_mechanism("weighted-laplace", epsilon=self.epsilon, delta=self.delta).calibrate()

    def _release(self, corpus, rng, cal, progress):
        return ReleaseParts(np.flatnonzero(corpus.user_counts > 0))


def test_dp_mechanism_stays_inside_the_band_and_a_noiseless_one_does_not():
    c, uniq = lone_user_corpus(3, n_users=60, n_common=8, words_per_user=4, lone_common=2)
    nb = remove_user(c, c.n_users - 1)
    mech = get_mechanism("policy-gaussian", epsilon=3.0, delta=1e-5, max_items=5)
    res = run_neighbours(mech, c, nb, 200, seed=4)
    assert res.all_inside, res.table
    t = res.table
    assert set(t["item"]) == set(c.vocab[nb.user_items].tolist())
    unique_rows = t[t["users_in_D"] == 1]
    assert (unique_rows["p_D2"] == 0).all()  # nobody else holds them
    s = res.loss_summary()
    assert s["share_above_epsilon"] <= 0.05
    bad = run_neighbours(_NoNoise(epsilon=3.0, delta=1e-5), c, nb, 200)  # enough runs to see e^-3 p_D > 0
    assert not bad.all_inside
    assert bad.loss_summary()["share_above_epsilon"] == 1.0  # every run reveals the lone user


def test_fixed_seed_repeats_and_runs_are_checked():
    c, _ = lone_user_corpus(2, n_users=40)
    nb = add_user(c, "zzcanary one")
    mech = get_mechanism("weighted-gaussian", epsilon=2.0, delta=1e-5, max_items=5)
    a = run_neighbours(mech, c, nb, 30, seed=11)
    b = run_neighbours(mech, c, nb, 30, seed=11)
    assert a.table.equals(b.table) and a.seeded
    with pytest.raises(ParameterError, match="runs"):
        run_neighbours(mech, c, nb, 0)
