"""The bundled demo corpus: seeded generation, the committed files, loading it with its canaries."""

from __future__ import annotations

import pandas as pd

from dpsu_core.corpus import LoadOptions
from dpsu_core.corpus.demo import DEMO_CSV, generate, load_canaries, load_demo


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
    csv = DEMO_CSV
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
    corpus = load_demo(LoadOptions(max_n=2))
    assert corpus.n_users >= 5000
    assert (corpus.ngram_len == 2).any()
    index = {s: i for i, s in enumerate(corpus.vocab.tolist())}
    for canary in load_canaries():
        assert corpus.user_counts[index[canary]] == 1, canary
