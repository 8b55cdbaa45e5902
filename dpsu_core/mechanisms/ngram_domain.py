"""The domain V_k of valid k-grams in DPNE (Kim et al. 2021), counted and sampled exactly.

A k-gram w = a_1 .. a_k is *valid* given the released sets S_1 and S_(k-1) when

* both-side pruning:   w in (S_(k-1) o S_1) n (S_1 o S_(k-1)), i.e. its (k-1)-prefix and its
  (k-1)-suffix are in S_(k-1) and a_1, a_k are in S_1;
* single-side pruning: w in S_(k-1) o S_1, i.e. its (k-1)-prefix is in S_(k-1) and a_k in S_1.

Both are a *join*: w is a pair (left part L, right part R) that agree on an overlap,
with w = L followed by the last token of R.

* both-side:   L = the prefix (in S_(k-1), first token in S_1), R = the suffix (in S_(k-1),
  last token in S_1), overlap = the middle (k-2)-gram a_2 .. a_(k-1);
* single-side: L = the prefix (in S_(k-1)), R = the 1-gram a_k (in S_1), empty overlap.

The map w <-> (L, R) is a bijection, so grouping L and R by their overlap gives
|V_k| = sum over overlaps m of #L(m) * #R(m) exactly, without listing V_k, and an exact
bijection between the integers 0 .. |V_k|-1 and V_k: a uniform integer is a uniform
valid k-gram, and distinct integers are distinct k-grams. Everything here is a function
of the released sets only (public), and vectorised numpy.

n-grams are handled as int32 token-id rows (unigram ids of the corpus), never as strings
or vocabulary ids, because spurious n-grams released by DPNE need not occur in the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..privacy.validate import check_choice

PRUNING_RULES = ("both", "single")


def row_codes(*blocks: np.ndarray) -> list[np.ndarray]:
    """Dense int64 codes for the rows of several 2-D int arrays with the same number of columns.

    Two rows (in the same or in different blocks) get the same code iff they are equal.
    Rows of zero columns all get code 0. Vectorised: one ``pd.factorize`` per column.
    """
    import pandas as pd  # loads on first use (start-up time)

    arrays = [np.asarray(b) for b in blocks]
    ncols = {a.shape[1] for a in arrays}
    if len(ncols) != 1:  # pragma: no cover - programming error
        raise ValueError("row_codes: blocks must have the same number of columns")
    sizes = [a.shape[0] for a in arrays]
    allrows = np.concatenate(arrays, axis=0) if arrays else np.zeros((0, 0), np.int64)
    code = np.zeros(allrows.shape[0], dtype=np.int64)
    for j in range(allrows.shape[1]):
        col = allrows[:, j].astype(np.int64) + 1  # tokens are >= 0; keep -1 padding distinct and >= 0
        width = int(col.max()) + 1 if col.size else 1
        code, _ = pd.factorize(code * width + col, sort=False)
        code = code.astype(np.int64)
    out, s = [], 0
    for n in sizes:
        out.append(code[s : s + n])
        s += n
    return out


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of a 2-D int array (first occurrences, in order)."""
    rows = np.asarray(rows)
    if rows.shape[0] == 0:
        return rows
    (codes,) = row_codes(rows)
    _, first = np.unique(codes, return_index=True)
    return rows[np.sort(first)]


@dataclass(frozen=True)
class ValidDomain:
    """V_k as a join of left parts and right parts on their overlap (see the module docstring).

    ``left`` (nL, k-1) and ``right`` (nR, r) are sorted by overlap group; group g holds
    left[l_start[g] : l_start[g] + l_count[g]] and right[r_start[g] : r_start[g] + r_count[g]];
    only groups with both counts > 0 are kept. ``v_start[g]`` is the first integer index of group g.
    """

    k: int
    pruning: str
    left: np.ndarray  # int32 (nL, k-1)
    right: np.ndarray  # int32 (nR, r); the k-gram's last token is right[:, -1]
    l_overlap: np.ndarray  # int64 (nL,) overlap code per left row (sorted)
    r_overlap: np.ndarray  # int64 (nR,) overlap code per right row (sorted)
    l_start: np.ndarray  # int64 (G,)
    l_count: np.ndarray  # int64 (G,)
    r_start: np.ndarray  # int64 (G,)
    r_count: np.ndarray  # int64 (G,)
    v_start: np.ndarray  # int64 (G + 1,): cumulative group sizes, v_start[-1] == |V_k|
    group_code: np.ndarray  # int64 (G,) the overlap code of each group

    @property
    def size(self) -> int:
        """|V_k|, exact."""
        return int(self.v_start[-1])

    # ------------------------------------------------------------------ index <-> k-gram
    def decode(self, index: np.ndarray) -> np.ndarray:
        """The k-grams (int32 rows, shape (len(index), k)) with these integer indices in 0 .. |V_k|-1."""
        index = np.asarray(index, dtype=np.int64)
        if index.size and (index.min() < 0 or index.max() >= self.size):
            raise ValueError("decode: index out of range")  # pragma: no cover - programming error
        g = np.searchsorted(self.v_start, index, side="right") - 1
        off = index - self.v_start[g]
        rc = self.r_count[g]
        li = self.l_start[g] + off // rc
        ri = self.r_start[g] + off % rc
        out = np.empty((index.shape[0], self.k), dtype=np.int32)
        out[:, : self.k - 1] = self.left[li]
        out[:, self.k - 1] = self.right[ri, -1]
        return out

    def index_of(self, grams: np.ndarray) -> np.ndarray:
        """Integer index of each k-gram row in V_k, or -1 where the k-gram is not valid."""
        grams = np.asarray(grams, dtype=np.int32).reshape(-1, self.k)
        n = grams.shape[0]
        out = np.full(n, -1, dtype=np.int64)
        if n == 0 or self.size == 0:
            return out
        lq = grams[:, : self.k - 1]
        rq = grams[:, self.k - self.right.shape[1] :]
        lcode_tab, lcode_q = row_codes(self.left, lq)
        rcode_tab, rcode_q = row_codes(self.right, rq)
        lpos = _lookup(lcode_tab, lcode_q)  # position in self.left or -1
        rpos = _lookup(rcode_tab, rcode_q)
        ok = (lpos >= 0) & (rpos >= 0)
        ok[ok] = self.l_overlap[lpos[ok]] == self.r_overlap[rpos[ok]]
        if not ok.any():
            return out
        lp, rp = lpos[ok], rpos[ok]
        g = np.searchsorted(self.group_code, self.l_overlap[lp])
        # a left row whose overlap has no right partner is never ok (checked above), so g is a kept group
        out[ok] = self.v_start[g] + (lp - self.l_start[g]) * self.r_count[g] + (rp - self.r_start[g])
        return out

    def contains(self, grams: np.ndarray) -> np.ndarray:
        return self.index_of(grams) >= 0

    # ------------------------------------------------------------------ sampling
    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` i.i.d. uniform elements of V_k (int32 rows)."""
        if self.size == 0:
            raise ValueError("sample: the domain is empty")  # pragma: no cover - programming error
        return self.decode(rng.integers(0, self.size, size=int(size), dtype=np.int64))

    def sample_distinct_excluding(self, rng: np.random.Generator, count: int, exclude: np.ndarray) -> np.ndarray:
        """A uniformly random set of ``count`` distinct indices of V_k outside ``exclude`` (int64, sorted).

        Rejection sampling on i.i.d. uniform indices: keep each draw that is neither excluded nor
        already kept, in draw order (the first ``count`` such draws are a uniform ``count``-subset of
        the allowed set). When most of the allowed set is wanted, a uniform subset of the explicit
        complement is drawn instead (same distribution, bounded time).
        """
        count = int(count)
        exclude = np.unique(np.asarray(exclude, dtype=np.int64))
        free = self.size - int(exclude.size)
        if count > free:  # pragma: no cover - programming error
            raise ValueError("sample_distinct_excluding: more draws than free elements")
        if count == 0:
            return np.zeros(0, dtype=np.int64)
        if 4 * count >= free and self.size <= 20_000_000:
            allowed = np.setdiff1d(np.arange(self.size, dtype=np.int64), exclude, assume_unique=True)
            return np.sort(rng.choice(allowed, size=count, replace=False))
        kept = np.zeros(0, dtype=np.int64)
        while kept.size < count:
            need = count - kept.size
            # A draw is accepted with probability (free - kept.size) / size. When 4 * count < free this is
            # > (3/4) * free / size, which is small only if ``exclude`` is most of V_k. When 4 * count >= free
            # (here only for |V_k| > 20M) it can be much smaller and the loop slows down like coupon
            # collecting as count nears free; the result stays a uniform subset. Draw a generous batch.
            draws = rng.integers(0, self.size, size=2 * need + 16, dtype=np.int64)
            _, first = np.unique(draws, return_index=True)
            draws = draws[np.sort(first)]  # first occurrences, in draw order
            bad = np.isin(draws, exclude, assume_unique=False) | np.isin(draws, kept)
            kept = np.concatenate([kept, draws[~bad][:need]])
        return np.sort(kept)


def match_rows(table: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Position of each row of ``query`` in ``table`` (whose rows are distinct), or -1 where absent."""
    tc, qc = row_codes(np.asarray(table), np.asarray(query))
    return _lookup(tc, qc)


def _lookup(table_codes: np.ndarray, query_codes: np.ndarray) -> np.ndarray:
    """Position of each query code in ``table_codes`` (whose codes are distinct), or -1."""
    if table_codes.size == 0:
        return np.full(query_codes.shape[0], -1, dtype=np.int64)
    order = np.argsort(table_codes, kind="stable")
    sorted_codes = table_codes[order]
    pos = np.searchsorted(sorted_codes, query_codes)
    pos = np.minimum(pos, sorted_codes.size - 1)
    hit = sorted_codes[pos] == query_codes
    return np.where(hit, order[pos], -1).astype(np.int64)


def valid_domain(s_prev: np.ndarray, s1: np.ndarray, pruning: str = "both") -> ValidDomain:
    """V_k from the released (k-1)-grams ``s_prev`` (int rows, shape (m, k-1)) and 1-grams ``s1`` (token ids).

    ``pruning`` is "both" ((S_(k-1) o S_1) n (S_1 o S_(k-1))) or "single" (S_(k-1) o S_1).
    """
    check_choice(pruning, "pruning", PRUNING_RULES)
    s_prev = unique_rows(np.asarray(s_prev, dtype=np.int32))
    if s_prev.ndim != 2 or s_prev.shape[1] < 1:
        raise ValueError("valid_domain: s_prev must be a 2-D array of (k-1)-gram rows")  # pragma: no cover
    k = s_prev.shape[1] + 1
    s1 = np.unique(np.asarray(s1, dtype=np.int32).ravel())
    if pruning == "single":
        left = s_prev
        right = s1.reshape(-1, 1)
        l_ov = np.zeros((left.shape[0], 0), np.int32)
        r_ov = np.zeros((right.shape[0], 0), np.int32)
    else:
        in_s1 = lambda col: np.isin(col, s1)  # noqa: E731
        left = s_prev[in_s1(s_prev[:, 0])]  # prefix a_1..a_(k-1), with a_1 in S_1
        right = s_prev[in_s1(s_prev[:, -1])]  # suffix a_2..a_k, with a_k in S_1
        l_ov = left[:, 1:]
        r_ov = right[:, :-1]
    lc, rc = row_codes(l_ov, r_ov)
    lo = np.argsort(lc, kind="stable")
    ro = np.argsort(rc, kind="stable")
    left, lc = left[lo], lc[lo]
    right, rc = right[ro], rc[ro]
    lg, l_start, l_count = np.unique(lc, return_index=True, return_counts=True)
    rg, r_start, r_count = np.unique(rc, return_index=True, return_counts=True)
    common, li, ri = np.intersect1d(lg, rg, assume_unique=True, return_indices=True)
    l_start, l_count = l_start[li].astype(np.int64), l_count[li].astype(np.int64)
    r_start, r_count = r_start[ri].astype(np.int64), r_count[ri].astype(np.int64)
    v_start = np.zeros(common.size + 1, dtype=np.int64)
    np.cumsum(l_count * r_count, out=v_start[1:])
    return ValidDomain(
        k=k,
        pruning=pruning,
        left=left,
        right=right,
        l_overlap=lc,
        r_overlap=rc,
        l_start=l_start,
        l_count=l_count,
        r_start=r_start,
        r_count=r_count,
        v_start=v_start,
        group_code=common.astype(np.int64),
    )
