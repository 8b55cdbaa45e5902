"""Quality and coverage metrics of a release (docs/algorithms.md §9).

EVERY value here is computed from the raw corpus (true user counts, weights H, ...): these are
NON-PRIVATE diagnostics for the analyst who already holds the data. Never publish them with a release.

Tables have a column ``n``: the n-gram length, and n = 0 for all lengths together. All functions are
vectorised over the CSR / vocabulary arrays (no Python loop per user or per item).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..corpus.model import Corpus
from ..errors import ParameterError
from ..mechanisms.base import Release
from ..privacy.validate import check_number, check_positive, check_positive_int

GAMMA_TOLERANCE = 1e-9  # relative floating-point slack at Gamma when no noise scale is given
GAMMA_SCALE_FRACTION = 1e-3  # "at Gamma": within this fraction of the noise scale (see histogram_fill)


# --------------------------------------------------------------------------- helpers
def _check_ks(ks: Iterable[int]) -> np.ndarray:
    hint = "give a non-empty list of positive integers, e.g. [1, 5, 10]"
    try:
        values = list(ks)
    except TypeError:
        raise ParameterError(f"ks must be a list of positive integers, got {ks!r}; e.g. [1, 5, 10]") from None
    if not values:
        raise ParameterError(f"ks must be a non-empty list of positive integers, got {ks!r}; e.g. [1, 5, 10]")
    return np.array([check_positive_int(k, "each k in ks", hint) for k in values], dtype=np.int64)


def _released_ids(corpus: Corpus, release: Release) -> np.ndarray:
    """Release item ids, checked against the corpus (-1 kept: a released string the corpus never had)."""
    ids = np.asarray(release.item_ids, dtype=np.int64)
    bad = (ids >= corpus.n_items) | (ids < -1)
    known = ids >= 0
    if np.any(bad) or (
        np.any(known) and not np.array_equal(corpus.vocab[ids[known]], np.asarray(release.items)[known])
    ):
        raise ParameterError(
            "the release does not belong to this corpus; compute metrics with the corpus it was made from"
        )
    return ids


def _lengths(corpus: Corpus, release: Release | None = None) -> list[int]:
    ns = set(np.unique(corpus.ngram_len).astype(int).tolist())
    if release is not None:
        ns |= set(np.unique(release.ngram_len).astype(int).tolist())
    return sorted(ns)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _groups(lengths: list[int]) -> list[int]:
    return lengths + [0]


def _in_group(ngram_len: np.ndarray, n: int) -> np.ndarray:
    return np.ones(ngram_len.shape[0], dtype=bool) if n == 0 else ngram_len == n


def _count_at_least(sorted_counts: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """|{c >= k}| for each k, given ascending counts."""
    return sorted_counts.shape[0] - np.searchsorted(sorted_counts, ks, side="left")


# --------------------------------------------------------------------------- k-anonymity sets
def kanon_sets_sizes(corpus: Corpus, ks: Sequence[int], by_length: bool = True) -> pd.DataFrame:
    """|S_k| = number of items used by at least k distinct users. Columns [n, k, s_k]."""
    ks_arr = _check_ks(ks)
    uc = corpus.user_counts
    groups = _groups(_lengths(corpus)) if by_length else [0]
    frames = []
    for n in groups:
        c = np.sort(uc[_in_group(corpus.ngram_len, n)])
        frames.append(pd.DataFrame({"n": n, "k": ks_arr, "s_k": _count_at_least(c, ks_arr).astype(np.int64)}))
    return pd.concat(frames, ignore_index=True)


def coverage_table(corpus: Corpus, release: Release, ks: Sequence[int]) -> pd.DataFrame:
    """Columns [n, k, s_k, released, size_ratio, recall]: size_ratio = |S| / |S_k| (Gopi et al., may exceed 1),
    recall = |S intersect S_k| / |S_k| (Kim et al.). NaN where |S_k| = 0."""
    ks_arr = _check_ks(ks)
    ids = _released_ids(corpus, release)
    uc = corpus.user_counts
    rel_counts = np.where(ids >= 0, uc[np.maximum(ids, 0)], 0) if ids.size else np.zeros(0, np.int64)
    rel_len = np.asarray(release.ngram_len)
    frames = []
    for n in _groups(_lengths(corpus, release)):
        s_k = _count_at_least(np.sort(uc[_in_group(corpus.ngram_len, n)]), ks_arr)
        mine = _in_group(rel_len, n)
        released = int(np.count_nonzero(mine))
        hits = _count_at_least(np.sort(rel_counts[mine & (ids >= 0)]), ks_arr)
        frames.append(
            pd.DataFrame(
                {
                    "n": n,
                    "k": ks_arr,
                    "s_k": s_k.astype(np.int64),
                    "released": released,
                    "size_ratio": _ratio(np.full(ks_arr.shape, released), s_k),
                    "recall": _ratio(hits, s_k),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def matching_k(corpus: Corpus, release: Release, n: int = 0) -> int | None:
    """The smallest k >= 1 with |S_k| <= |S| (items of length n; n = 0: all lengths). None if nothing of
    that length was released."""
    ids = _released_ids(corpus, release)
    size = int(np.count_nonzero(_in_group(np.asarray(release.ngram_len), n))) if ids.size else 0
    if size == 0:
        return None
    c = corpus.user_counts[_in_group(corpus.ngram_len, n)]
    c = np.sort(c[c > 0])[::-1]  # descending
    if size >= c.shape[0]:
        return 1
    # |S_k| <= size  <=>  the (size+1)-th largest count is below k
    return int(c[size]) + 1


# --------------------------------------------------------------------------- mass and spurious items
def missing_mass(corpus: Corpus, release: Release) -> pd.DataFrame:
    """Columns [n, pairs, recovered_pairs, recovered_mass, missing_mass]: the share of all (user, item) pairs
    whose item was (recovered) or was not (missing) released (Dick, Joseph, Raman)."""
    ids = _released_ids(corpus, release)
    uc = corpus.user_counts
    released = np.zeros(corpus.n_items, dtype=bool)
    released[ids[ids >= 0]] = True
    rows = []
    for n in _groups(_lengths(corpus)):
        g = _in_group(corpus.ngram_len, n)
        pairs = int(uc[g].sum())
        rec = int(uc[g & released].sum())
        frac = rec / pairs if pairs else np.nan
        rows.append(
            {
                "n": n,
                "pairs": pairs,
                "recovered_pairs": rec,
                "recovered_mass": frac,
                "missing_mass": 1.0 - frac if pairs else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=["n", "pairs", "recovered_pairs", "recovered_mass", "missing_mass"])


def spurious_fraction(corpus: Corpus, release: Release) -> pd.DataFrame:
    """Columns [n, released, spurious, fraction]: released n-grams that no user has (not in the vocabulary,
    or in it with zero users)."""
    ids = _released_ids(corpus, release)
    uc = corpus.user_counts
    spurious = (ids < 0) | (uc[np.maximum(ids, 0)] == 0) if ids.size else np.zeros(0, bool)
    rel_len = np.asarray(release.ngram_len)
    rows = []
    for n in _groups(_lengths(corpus, release)):
        g = _in_group(rel_len, n)
        r, s = int(np.count_nonzero(g)), int(np.count_nonzero(g & spurious))
        rows.append({"n": n, "released": r, "spurious": s, "fraction": s / r if r else np.nan})
    return pd.DataFrame(rows, columns=["n", "released", "spurious", "fraction"])


# --------------------------------------------------------------------------- histogram fill
@dataclass(frozen=True)
class HistogramFill:
    """How the weighted histogram H sits relative to rho and Gamma. NOT private."""

    n_positive: int
    share_above_rho: float  # among items with H > 0
    share_at_gamma: float | None  # among items with H > 0; None without a cutoff Gamma
    total_weight: float
    weight_beyond_rho_need: float  # sum of max(H - rho, 0)
    gamma_tol: float | None = None  # |H - Gamma| <= gamma_tol counts as "at Gamma"; None without a Gamma

    def as_dict(self) -> dict:
        return asdict(self)


def _gamma_tol(gamma: float, scale, tol) -> float:
    if tol is not None:
        return check_number(tol, "tol", low=0.0, hint="e.g. 1e-3 times the noise scale")
    if scale is not None:
        hint = "pass Release.calibration.scale (the mechanism's noise scale)"
        return GAMMA_SCALE_FRACTION * check_positive(scale, "scale", hint)
    return GAMMA_TOLERANCE * max(1.0, abs(float(gamma)))


def histogram_fill(
    weights: np.ndarray, rho: float, gamma: float | None, *, scale: float | None = None, tol: float | None = None
) -> HistogramFill:
    """Shares of the positive weights above rho and at the cutoff Gamma.

    "At Gamma" means |H - Gamma| <= tol. The l2 descent of Policy Gaussian approaches Gamma geometrically and
    rarely lands on it exactly, so an exact comparison would report almost nothing as filled. The rule: with the
    mechanism's noise ``scale`` (sigma or lambda), tol = GAMMA_SCALE_FRACTION * scale = 0.001 * scale: the
    release probability of such an item differs from that of an item exactly at Gamma by less than 0.001 * scale
    times the noise density (< 0.04% for Gaussian noise, < 0.05% for Laplace), i.e. it is filled for every
    practical purpose. An explicit absolute ``tol`` overrides; with neither, only floating-point rounding is
    forgiven (1e-9 * max(1, Gamma)).
    """
    if weights is None or rho is None:
        raise ParameterError(
            "this release has no weighted histogram and threshold rho; histogram fill needs a "
            "set-union mechanism (or bounded-counts)"
        )
    h = np.asarray(weights, dtype=np.float64)
    pos = h > 0
    n_pos = int(np.count_nonzero(pos))
    above = int(np.count_nonzero(h > rho))
    tol_g = None if gamma is None else _gamma_tol(gamma, scale, tol)
    at_gamma = None if gamma is None else int(np.count_nonzero(pos & (np.abs(h - gamma) <= tol_g)))
    return HistogramFill(
        n_positive=n_pos,
        share_above_rho=above / n_pos if n_pos else float("nan"),
        share_at_gamma=None if at_gamma is None else (at_gamma / n_pos if n_pos else float("nan")),
        total_weight=float(h[pos].sum()),
        weight_beyond_rho_need=float(np.maximum(h - rho, 0.0).sum()),
        gamma_tol=tol_g,
    )


# --------------------------------------------------------------------------- count mechanisms
def relative_errors(corpus: Corpus, release: Release) -> pd.DataFrame:
    """Columns [item, true_count, noisy_count, rel_error] with rel_error = |noisy - true| / true
    (inf when the true count is 0). Count mechanisms only."""
    if release.noisy_counts is None:
        raise ParameterError(
            "this release has no noisy counts; relative errors need a count mechanism (pcr, bounded-counts)"
        )
    ids = _released_ids(corpus, release)
    true = (
        np.where(ids >= 0, corpus.user_counts[np.maximum(ids, 0)], 0).astype(np.int64)
        if ids.size
        else np.zeros(0, np.int64)
    )
    noisy = np.asarray(release.noisy_counts, dtype=np.float64)
    err = np.abs(noisy - true)
    rel = np.full(err.shape, np.inf)
    np.divide(err, true, out=rel, where=true > 0)
    return pd.DataFrame(
        {
            "item": np.asarray(release.items, dtype=object),
            "true_count": true,
            "noisy_count": np.asarray(release.noisy_counts),
            "rel_error": rel,
        }
    )


def share_within(rel, r: float) -> float:
    """Share of released counts whose relative error is at most r. ``rel``: the ``relative_errors`` frame or
    an array of relative errors. NaN if nothing was released."""
    r = check_number(r, "r", low=0.0, hint="e.g. 0.1 for 10%")
    vals = rel["rel_error"].to_numpy() if isinstance(rel, pd.DataFrame) else np.asarray(rel, dtype=np.float64)
    return float(np.mean(vals <= r)) if vals.size else float("nan")


# --------------------------------------------------------------------------- canaries
def canaries_released(release: Release, canaries: list[str]) -> list[str]:
    """The canary strings (planted test phrases) that the release exposes, in the order given: released as
    an item, or, for a single-token canary, as a token inside any released n-gram (a released
    "is acct123" leaks "acct123" too). Whitespace inside a canary is normalised to single spaces, as
    n-grams are joined."""
    if not canaries or release.n_released == 0:
        return []
    items = np.asarray(release.items, dtype=object)
    released = set(items.tolist())
    multi = np.asarray(release.ngram_len) > 1
    tokens = set(" ".join(items[multi].tolist()).split()) if multi.any() else set()
    out = []
    for c in canaries:  # the analyst's short list of canaries, not the corpus
        norm = " ".join(str(c).split())
        if norm in released or (" " not in norm and norm in tokens):
            out.append(c)
    return out
