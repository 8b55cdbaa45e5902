"""Neighbouring corpora, for teaching: see the definition of differential privacy hold.

D is the corpus as loaded; D' differs from it by one user's whole data (that user removed, or a new user with
typed words added). A mechanism runs many times on each; for every item of that user we estimate the release
probability under D and under D'. (epsilon, delta)-DP promises, for the event "this item is released",
    P_D'  <=  e^epsilon * P_D + delta     and     P_D  <=  e^epsilon * P_D' + delta,
so P_D' lies in the band [(P_D - delta) e^-epsilon, e^epsilon P_D + delta]. The empirical privacy loss of a run
is ln(P_with(o) / P_without(o)) for its outcome o (which of the user's items were released), estimated item by item
from the release rates (``_privacy_loss`` says how).

EVERYTHING here is computed from raw data (the user's items, per-item release rates on the private corpus): it is a
NON-PRIVATE teaching view, never part of a release. Each run is a real release and spends (epsilon, delta).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..corpus.model import Corpus
from ..errors import ParameterError
from ..mechanisms.base import Mechanism, ProgressFn
from ..privacy.validate import check_positive_int

MAX_RUNS = 5000
CONFIDENCE = 0.99  # two-sided Clopper-Pearson intervals shown with each probability


@dataclass(frozen=True)
class Neighbour:
    """D' and the user that tells D and D' apart. Item ids of ``user_items`` index both corpora's vocabularies
    (D' keeps D's vocabulary as a prefix), so per-item results line up."""

    corpus: Corpus  # D'
    user_items: np.ndarray  # int64 vocabulary ids of the differing user's items
    added: bool  # True: D' = D + user; False: D' = D - user
    description: str


def user_items(corpus: Corpus, row: int) -> np.ndarray:
    """The distinct items of user ``row`` (vocabulary ids). Raw data: NOT private."""
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not 0 <= row < corpus.n_users:
        raise ParameterError(f"user must be a row number from 0 to {corpus.n_users - 1}, got {row!r}")
    return corpus.items[corpus.indptr[row] : corpus.indptr[row + 1]].astype(np.int64)


def holders(corpus: Corpus, item: str) -> np.ndarray:
    """Rows of the users holding ``item`` (exact string). Raw data: NOT private."""
    hit = np.flatnonzero(corpus.vocab == item)
    if hit.size == 0:
        return np.zeros(0, dtype=np.int64)
    pos = np.flatnonzero(corpus.items == hit[0])
    return np.unique(np.searchsorted(corpus.indptr, pos, side="right") - 1).astype(np.int64)


def remove_user(corpus: Corpus, row: int) -> Neighbour:
    """D' = D without user ``row`` (the vocabulary is kept, so ids line up)."""
    items = user_items(corpus, row)
    if corpus.n_users < 2:
        raise ParameterError("the corpus has one user; removing it leaves nothing to release from")
    d2 = corpus.without_user(row)
    return Neighbour(d2, items, False, f"D′ = D without user #{row} ({items.size} distinct items)")


def add_user(corpus: Corpus, text: str, tokenizer: str | None = None) -> Neighbour:
    """D' = D plus one new user whose text is ``text`` (tokenized like the corpus; n-grams up to its max_n).

    Items the corpus never had (a canary, say) are appended to the vocabulary."""
    import pyarrow as pa

    from ..corpus.build import corpus_from_token_lists
    from ..corpus.tokenize import tokenize

    if not isinstance(text, str) or not text.strip():
        raise ParameterError("type the new user's words (for example a canary sentence) before adding the user")
    src = corpus.source
    tok = tokenize(pa.array([text]), tokenizer=tokenizer or src.tokenizer or "auto", char_ngrams=src.char_ngrams)
    words = tok.unigrams[tok.codes].tolist()
    if not words:
        raise ParameterError(f"no words left in {text[:60]!r} after tokenizing; type letters or digits")
    new = corpus_from_token_lists([words], max_n=max(1, corpus.max_n), posts_per_user=False)
    # map the new user's unigrams first (n-grams refer to them), then every item, into D's vocabulary
    index = pd.Index(corpus.vocab)
    found = index.get_indexer(new.vocab)
    is_new = found < 0
    # ids of D' = D's ids, then the new strings in the order of the new user's vocabulary
    new_ids = np.where(is_new, corpus.n_items + np.cumsum(is_new) - 1, found).astype(np.int64)
    vocab = np.concatenate([corpus.vocab, new.vocab[is_new]]).astype(object)
    ngram_len = np.concatenate([corpus.ngram_len, new.ngram_len[is_new].astype(corpus.ngram_len.dtype)])
    width = corpus.gram_tokens.shape[1]
    nt = new.gram_tokens[is_new][:, :width]
    nt = np.where(nt >= 0, new_ids[np.maximum(nt, 0)], -1).astype(np.int32)
    gram_tokens = np.concatenate([corpus.gram_tokens, nt])
    row_items = np.sort(new_ids[new.items]).astype(np.int32)
    order = np.argsort(new_ids[new.items], kind="stable")
    d2 = Corpus(
        indptr=np.concatenate([corpus.indptr, [corpus.nnz + row_items.size]]).astype(np.int64),
        items=np.concatenate([corpus.items, row_items]),
        counts=np.concatenate([corpus.counts, new.counts[order]]).astype(np.int32),
        vocab=vocab,
        ngram_len=ngram_len,
        gram_tokens=gram_tokens,
        n_posts=corpus.n_posts + 1,
        n_tokens=corpus.n_tokens + len(words),
        source=corpus.source,
    )
    return Neighbour(
        d2,
        row_items.astype(np.int64),
        True,
        f"D′ = D plus a new user with {row_items.size} distinct items ({int(is_new.sum())} new to the corpus)",
    )


@dataclass(frozen=True)
class NeighbourRuns:
    """Per item of the differing user: release rates under D and D'. NOT private (a teaching diagnostic)."""

    epsilon: float
    delta: float
    runs: int
    added: bool
    table: (
        pd.DataFrame
    )  # item, users_in_D, p_D, p_D_low, p_D_high, p_D2, p_D2_low, p_D2_high, band_low, band_high, inside
    loss: np.ndarray  # privacy loss of each run on the corpus WITH the user (see ``_privacy_loss``)
    seeded: bool

    @property
    def all_inside(self) -> bool:
        return bool(self.table["inside"].all())

    def loss_summary(self) -> dict[str, float]:
        return {
            "runs": float(self.loss.size),
            "share_above_epsilon": float(np.mean(self.loss > self.epsilon)),
            "median": float(np.median(self.loss)),
            "max": float(self.loss.max()),
        }


def _cp(hits: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper-Pearson interval at ``CONFIDENCE`` (vectorised with the beta quantiles)."""
    a = (1 - CONFIDENCE) / 2
    low = np.where(hits > 0, stats.beta.ppf(a, hits, n - hits + 1), 0.0)
    high = np.where(hits < n, stats.beta.ppf(1 - a, hits + 1, n - hits), 1.0)
    return low, high


def _outcomes(
    mech: Mechanism,
    corpus: Corpus,
    strings: np.ndarray,
    runs: int,
    seeds: list[int | None],
    progress: ProgressFn | None,
    done: float,
) -> np.ndarray:
    """(runs x items) booleans: was each of the user's items released in each run (matched by string, so a
    DPNE n-gram drawn as spurious counts too)."""
    out = np.zeros((runs, strings.size), dtype=bool)
    for r in range(runs):  # one real, vectorised release per run
        rel = mech.release(corpus, seed=seeds[r])
        out[r] = np.isin(strings, rel.items.astype(str))
        if progress and r % 10 == 0:
            progress(done + 0.5 * r / runs, f"run {r + 1} of {runs}")
    return out


def _privacy_loss(with_user: np.ndarray, without: np.ndarray) -> np.ndarray:
    """Privacy loss ln(P_with(o) / P_without(o)) of each run WITH the user, o = which of the user's items it released.

    The runs are too few to estimate the probability of a whole outcome pattern (with a few uncertain items
    almost every pattern is new), so the loss is the sum over items of the per-item log ratios: exact when items
    are released independently given the weights (the noise is independent per item), an approximation when the
    weights themselves vary between runs. Rates use the Jeffreys (add-1/2) estimate, so no ratio is 0 or inf.
    """
    n1, n2 = with_user.shape[0], without.shape[0]
    p = (with_user.sum(axis=0) + 0.5) / (n1 + 1.0)
    q = (without.sum(axis=0) + 0.5) / (n2 + 1.0)
    on = np.log(p) - np.log(q)
    off = np.log1p(-p) - np.log1p(-q)
    return with_user.astype(np.float64) @ on + (~with_user).astype(np.float64) @ off


def run_neighbours(
    mech: Mechanism,
    d: Corpus,
    neighbour: Neighbour,
    runs: int,
    *,
    seed: int | None = None,
    progress: ProgressFn | None = None,
) -> NeighbourRuns:
    """Release ``runs`` times on D and on D'. Without ``seed`` every run is seeded from the OS; with one (teaching)
    each run gets its own child seed, so the whole experiment repeats exactly."""
    runs = check_positive_int(runs, "runs", f"e.g. 200 (at most {MAX_RUNS})")
    if runs > MAX_RUNS:
        raise ParameterError(f"runs must be at most {MAX_RUNS}, got {runs}; 200 to 1000 shows the picture")
    ids = neighbour.user_items
    if ids.size == 0:
        raise ParameterError("the chosen user has no items; pick another user")
    strings = neighbour.corpus.vocab[ids].astype(str)
    if seed is not None:
        kids = np.random.SeedSequence(seed).spawn(2 * runs)
        seeds: list[int | None] = [int(k.generate_state(1, np.uint64)[0]) for k in kids]
    else:
        seeds = [None] * (2 * runs)
    on_d = _outcomes(mech, d, strings, runs, seeds[:runs], progress, 0.0)
    on_d2 = _outcomes(mech, neighbour.corpus, strings, runs, seeds[runs:], progress, 0.5)
    eps, delta = mech.epsilon, mech.delta
    h1, h2 = on_d.sum(axis=0), on_d2.sum(axis=0)
    p1, p2 = h1 / runs, h2 / runs
    l1, u1 = _cp(h1, runs)
    l2, u2 = _cp(h2, runs)
    band_low = np.maximum((p1 - delta) * np.exp(-eps), 0.0)
    band_high = np.minimum(np.exp(eps) * p1 + delta, 1.0)
    # consistent with DP within sampling error: D' interval meets the band of D's interval
    inside = (l2 <= np.minimum(np.exp(eps) * u1 + delta, 1.0)) & (u2 >= np.maximum((l1 - delta) * np.exp(-eps), 0.0))
    in_d = np.concatenate([d.user_counts, np.zeros(max(0, neighbour.corpus.n_items - d.n_items), np.int64)])[ids]
    table = pd.DataFrame(
        {
            "item": strings,
            "users_in_D": in_d,
            "p_D": p1,
            "p_D_low": l1,
            "p_D_high": u1,
            "p_D2": p2,
            "p_D2_low": l2,
            "p_D2_high": u2,
            "band_low": band_low,
            "band_high": band_high,
            "inside": inside,
        }
    ).sort_values(["users_in_D", "item"], ascending=[False, True], ignore_index=True)
    with_user, without = (on_d2, on_d) if neighbour.added else (on_d, on_d2)
    if progress:
        progress(1.0, "done")
    return NeighbourRuns(eps, delta, runs, neighbour.added, table, _privacy_loss(with_user, without), seed is not None)
