"""Simulated exploration corpora: built from typed public numbers only."""

from __future__ import annotations

import numpy as np
import pytest

from dpsu_core.corpus.synthetic import SimulationSpec, simulated_corpus, user_sizes
from dpsu_core.errors import ParameterError


@pytest.mark.parametrize("dist", ["constant", "uniform", "log-uniform", "geometric"])
def test_sizes_follow_the_distribution(dist):
    rng = np.random.default_rng(1)
    s = user_sizes(rng, 20_000, dist, 30)
    assert s.min() >= 1
    if dist == "constant":
        assert (s == 30).all()
    elif dist == "uniform":
        assert s.max() == 30 and abs(s.mean() - 15.5) < 0.3
    elif dist == "log-uniform":
        assert s.max() <= 30 and abs(np.log(s + 1).mean() - np.log(31) / 2) < 0.3
    else:
        assert abs(s.mean() - 30) < 1.0


def test_simulated_corpus_shape_and_zipf():
    spec = SimulationSpec(users=3000, words_per_user=20, distribution="constant", vocabulary=1000, zipf_exponent=1.0)
    c = simulated_corpus(spec, seed=3)
    assert c.n_users == 3000 and c.n_items <= 1000 and c.source.format == "simulated"
    assert (c.row_lengths <= 20).all() and (c.row_lengths >= 1).all()
    assert c.counts.sum() == 3000 * 20  # every drawn word is counted
    uc = c.user_counts
    # Zipf(1): the most frequent word ("w0") is held by more users than word rank 100
    assert uc[list(c.vocab).index("w0")] > uc[list(c.vocab).index("w100")]
    fresh = simulated_corpus(spec)  # OS-seeded by default
    assert fresh.n_users == 3000


@pytest.mark.parametrize(
    "spec,needle",
    [
        (SimulationSpec(users=0), "users"),
        (SimulationSpec(vocabulary=-3), "vocabulary"),
        (SimulationSpec(zipf_exponent=float("nan")), "Zipf"),
        (SimulationSpec(distribution="normal"), "distribution"),
        (SimulationSpec(users=10**6, words_per_user=10**3), "above"),
    ],
)
def test_bad_numbers_are_named(spec, needle):
    with pytest.raises(ParameterError, match=needle):
        simulated_corpus(spec)


def test_sets_variant_has_the_same_rows_with_unit_counts():
    """``keep_counts=False`` (synthetic-200k's definition: users hold sets) changes only C_i[u]."""
    from dpsu_core.corpus.synthetic import zipf_corpus

    texty = zipf_corpus(2000, 500, 60, seed=9)
    sets = zipf_corpus(2000, 500, 60, seed=9, keep_counts=False)
    assert (texty.counts > 1).any()  # Zipf draws repeat the head words
    assert (sets.counts == 1).all()
    np.testing.assert_array_equal(sets.indptr, texty.indptr)
    np.testing.assert_array_equal(sets.items, texty.items)
    assert list(sets.vocab) == list(texty.vocab)
