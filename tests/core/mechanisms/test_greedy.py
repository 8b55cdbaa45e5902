"""GW and GW-KT (Carvalho et al. 2022) in the capped form of docs/algorithms.md §4: calibration, the capped GU
update against Algorithm 2 on each user's first Delta0 items, the candidate set and l1-sensitivity on
coupled neighbouring corpora, the tie-breaking rule, weight-0 candidates, and the lone-user Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import DpsuError, InputError, ParameterError
from dpsu_core.mechanisms.greedy import (
    Gw,
    GwKt,
    count_priority,
    draw_secret,
    frequency_rank,
    greedy_update,
    item_hash_keys,
    public_rank,
    user_visit_order,
)
from dpsu_core.mechanisms.registry import get_mechanism, list_mechanisms
from dpsu_core.mechanisms.sampling import rows_from_lists
from dpsu_core.privacy import rho_greedy, rho_greedy_published
from tests.helpers import exceed_probability, lone_user_release_rate, neighbouring_rows

N_ITEMS = 12
KEYS = item_hash_keys(np.array([f"item{i}" for i in range(N_ITEMS)], dtype=object))


# --------------------------------------------------------------------------- calibration
def test_registered_names_and_labels():
    regs = list_mechanisms()
    assert regs["gw"].label == "GW" and regs["gw-kt"].label == "GW-KT"
    assert regs["gw"].param_names == ("max_items", "alpha") and regs["gw-kt"].param_names == ("max_items", "alpha")


@pytest.mark.parametrize("name", ["gw", "gw-kt"])
@pytest.mark.parametrize("max_items, rho_ref", [(100, 4.6956), (30, 4.4001)])
def test_calibration_matches_spec(name, max_items, rho_ref):
    eps, delta, alpha = 3.0, math.exp(-10), 3.0
    cal = get_mechanism(name, epsilon=eps, delta=delta, alpha=alpha, max_items=max_items).calibrate()
    assert cal.rho == pytest.approx(rho_ref, abs=5e-5)  # docs/algorithms.md §2 reference values
    assert cal.rho == pytest.approx(math.log((math.exp(eps) + max_items - 1) / (2 * delta)) / eps, rel=1e-11)
    assert cal.noise == "laplace"
    assert cal.scale == pytest.approx(1 / 3) and cal.scale >= 1 / 3
    assert cal.gamma == pytest.approx(cal.rho + alpha / eps) and cal.gamma >= cal.rho + alpha * cal.scale
    assert cal.params == {"max_items": max_items, "alpha": alpha}
    # the published threshold is recorded for reference only: 4.1023 (not proven)
    assert cal.details.published_rho_unproven == pytest.approx(4.1023, abs=5e-5)
    assert rho_greedy_published(eps, delta) < cal.rho


def test_default_delta0_is_100_and_there_is_no_user_bound():
    cal = Gw(epsilon=3.0, delta=math.exp(-10)).calibrate()
    assert cal.params["max_items"] == 100
    with pytest.raises(ParameterError, match="max_users"):
        Gw(epsilon=1.0, delta=1e-6, max_users=10)
    # any number of users is accepted (the user bound and its refusal are gone)
    corpus = corpus_from_token_lists([["a", "b"], ["a"], ["b", "c"]] * 50, posts_per_user=False)
    assert Gw(epsilon=1.0, delta=1e-3, max_items=1).release(corpus, seed=1).n_released >= 0


def _cascade_neighbours(k: int, levels: int = 3):
    """Coupled neighbours where adding u makes k items positive that u does not hold (Carvalho et al.'s
    Lemma 2 says only u's items can be new). Gamma = levels + 1/k. Chain j: items a_j and x_{j,0..k-2}
    are pre-filled to Gamma - 1/k; user y_j holds [a_j, x_j..., t_j] in descending own counts, so without
    u its budget of 1 is used up exactly before t_j. u fills every a_j, and each y_j spills 1/k onto t_j."""
    ids: dict[str, int] = {}
    iid = lambda name: ids.setdefault(name, len(ids))  # noqa: E731
    rows, counts = [], []
    for j in range(k):
        for name in [f"a{j}"] + [f"x{j}_{i}" for i in range(k - 1)]:
            for _ in range(levels):
                rows.append([iid(name)])
                counts.append([1])
    position = len(rows)
    for j in range(k):
        rows.append([iid(f"a{j}")] + [iid(f"x{j}_{i}") for i in range(k - 1)] + [iid(f"t{j}")])
        counts.append([k + 2] + [k + 1 - i for i in range(k - 1)] + [1])
    u = [iid(f"a{j}") for j in range(k)]
    d, du = neighbouring_rows(rows, u, position, counts, [1] * k)
    return d, du, ids, set(u), levels + 1.0 / k


@pytest.mark.parametrize("k", [2, 8, 32])  # powers of two: the gaps 1/k are exact in binary
def test_cascades_break_the_published_rho_but_not_the_capped_form(k):
    eps, delta = 1.0, 1e-6
    d, du, ids, held_by_u, gamma = _cascade_neighbours(k)
    keys = item_hash_keys(np.array(sorted(ids, key=ids.get), dtype=object))
    m = k + 1  # every chain user's whole row is its S_i
    kw = dict(max_items=m, budget=1.0)  # budget 1 exactly: the gaps 1/k are exact in binary
    h, cand = greedy_update(d, len(ids), gamma, keys, 12345, counts=d.counts, **kw)
    hu, cand_u = greedy_update(du, len(ids), gamma, keys, 12345, counts=du.counts, **kw)
    assert np.abs(hu - h).sum() <= 1.0 + 1e-12  # Lemma 1 (l1 sensitivity) still holds
    spill = np.flatnonzero((hu > 0) & (h == 0))
    assert len(spill) == k and not set(spill.tolist()) & held_by_u  # k items lifted from 0, none of them u's
    assert hu[spill] == pytest.approx(np.full(k, 1.0 / k))
    # Published form (weight-0 items never candidates, rho = 1 - ln(2 delta)/eps): one of the spilled
    # items is released with probability above delta although D cannot release any of them.
    assert exceed_probability("laplace", 1 / eps, rho_greedy_published(eps, delta), hu[spill]) > delta
    # Capped form: the spilled items were candidates in D already (they are in the chain users' S_i,
    # with weight 0), so they fall under the l1 bound on K(D); the new candidates are u's own only.
    assert cand[spill].all()
    new = np.flatnonzero(cand_u & ~cand)
    assert set(new.tolist()) <= held_by_u and hu[new].sum() <= 1.0
    rho = rho_greedy(eps, delta, m)
    assert exceed_probability("laplace", 1 / eps, rho, np.concatenate([hu[new], np.zeros(m - len(new))])) <= delta


def test_gamma_below_one_is_rejected_with_a_fix():
    # delta > 1/2 makes rho < 1 at Delta0 = 1; with alpha = 0, Gamma = rho < 1 and the proof (Gamma >= 1) fails.
    assert rho_greedy(1.0, 0.9, 1) < 1
    with pytest.raises(ParameterError, match="alpha"):
        Gw(epsilon=1.0, delta=0.9, alpha=0.0, max_items=1)
    with pytest.raises(ParameterError, match="Gamma"):
        GwKt(epsilon=1.0, delta=0.9, alpha=0.0, max_items=1)
    need = 1 - rho_greedy(1.0, 0.9, 1)
    assert Gw(epsilon=1.0, delta=0.9, alpha=need + 1e-9, max_items=1).calibrate().gamma >= 1.0


def test_bad_parameters_are_typed_errors():
    with pytest.raises(ParameterError):
        Gw(epsilon=-1, delta=1e-6)
    with pytest.raises(ParameterError):
        Gw(epsilon=1, delta=1e-6, max_items=0)  # Delta0 must be a positive integer
    with pytest.raises(ParameterError, match="public_source"):
        GwKt(epsilon=1, delta=1e-6, public_source=42)
    with pytest.raises(InputError, match="not found"):
        GwKt(epsilon=1, delta=1e-6, public_source="/nonexistent/public.csv")
    with pytest.raises(ParameterError, match="language"):
        GwKt(epsilon=1, delta=1e-6, lang="xx-nonsense")
    assert issubclass(ParameterError, DpsuError)


def test_gwkt_records_only_a_description_of_its_public_source():
    pub = corpus_from_token_lists([["the", "cat"], ["the", "dog"]], posts_per_user=False)
    d_default = GwKt(epsilon=1, delta=1e-6).calibrate().details
    d_corpus = GwKt(epsilon=1, delta=1e-6, public_source=pub).calibrate().details
    assert d_default.public_frequencies == "wordfreq en"
    assert isinstance(d_corpus.public_frequencies, str)
    assert "cat" not in repr(GwKt(epsilon=1, delta=1e-6, public_source=pub).calibrate().as_dict())


# --------------------------------------------------------------------------- capped GU against Algorithm 2
def _reference_order(items, counts, rank, keys, secret):
    """A user's whole visiting order, written out: primary key, then the keyed hash of the item string."""
    from dpsu_core.mechanisms.greedy import _mix64

    mix = lambda u: int(_mix64(np.uint64(keys[u]) ^ np.uint64(secret)))  # noqa: E731
    if counts is not None:
        prim = {int(u): int(count_priority(np.array([c]))[0]) for u, c in zip(items, counts)}
    else:
        prim = {int(u): int(rank[u]) for u in items}
    return sorted((int(u) for u in items), key=lambda u: (prim[u], mix(u)))


def _reference_capped_gu(rows, n_items, gamma, keys, secret, max_items, rank=None):
    """docs/algorithms.md §4 written out literally: S_i = first Delta0 in order; Algorithm 2 (sets S and O) on S_i;
    candidates = union of the S_i."""
    h = np.zeros(n_items)
    cand = np.zeros(n_items, dtype=bool)
    for r in range(rows.n_rows):
        s, e = rows.indptr[r], rows.indptr[r + 1]
        counts = rows.counts[s:e] if rank is None else None
        s_i = _reference_order(rows.items[s:e], counts, rank, keys, secret)[:max_items]
        cand[s_i] = True
        S = {u for u in s_i if h[u] < gamma}
        O: set[int] = set()
        budget = 1.0
        while budget > 0 and S - O:
            u = min(S - O, key=s_i.index)
            cost = gamma - h[u]
            if cost <= budget:
                h[u] += cost
                budget -= cost
                O.add(u)
            else:
                h[u] += budget
                break
    return h, cand


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    gamma=st.sampled_from([1.0, 1.3, 2.0, 3.7]),
    max_items=st.integers(1, 9),
    kind=st.sampled_from(["gw", "kt"]),
)
def test_capped_greedy_update_is_algorithm_2_on_the_first_delta0_items(data, gamma, max_items, kind):
    rows_l = data.draw(st.lists(st.lists(st.integers(0, N_ITEMS - 1), unique=True, max_size=10), max_size=20))
    counts_l = [data.draw(st.lists(st.integers(1, 4), min_size=len(r), max_size=len(r))) for r in rows_l]
    secret = data.draw(st.integers(0, 2**64 - 1))
    rows = rows_from_lists(rows_l, counts_l)
    if kind == "gw":
        order_kw, rank = {"counts": rows.counts}, None
    else:
        rank = frequency_rank(np.array(data.draw(st.lists(st.integers(1, 3), min_size=N_ITEMS, max_size=N_ITEMS))))
        order_kw = {"rank": rank}
    h, cand = greedy_update(rows, N_ITEMS, gamma, KEYS, secret, max_items=max_items, budget=1.0, **order_kw)
    ref_h, ref_cand = _reference_capped_gu(rows, N_ITEMS, gamma, KEYS, secret, max_items, rank)
    np.testing.assert_allclose(h, ref_h, atol=1e-12)
    np.testing.assert_array_equal(cand, ref_cand)
    for r in range(len(rows_l)):  # the kernel's S_i, in order, is the reference's
        s, e = rows.indptr[r], rows.indptr[r + 1]
        kw = {"counts": rows.counts[s:e]} if kind == "gw" else {"rank": rank}
        got = user_visit_order(rows.items[s:e], KEYS, secret, max_items=max_items, **kw)
        ref = _reference_order(rows.items[s:e], kw.get("counts"), rank, KEYS, secret)[:max_items]
        assert list(got) == ref


# --------------------------------------------------------------------------- candidates and sensitivity
def _neighbour_case(data):
    rows_l = data.draw(st.lists(st.lists(st.integers(0, N_ITEMS - 1), unique=True, max_size=8), max_size=25))
    extra = data.draw(st.lists(st.integers(0, N_ITEMS - 1), unique=True, max_size=N_ITEMS))
    counts_l = [data.draw(st.lists(st.integers(1, 3), min_size=len(r), max_size=len(r))) for r in rows_l]
    extra_c = data.draw(st.lists(st.integers(1, 3), min_size=len(extra), max_size=len(extra)))
    pos = data.draw(st.integers(0, len(rows_l)))
    return neighbouring_rows(rows_l, extra, pos, counts_l, extra_c), extra, extra_c


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    gamma=st.sampled_from([1.0, 1.25, 2.0, 3.5]),
    kind=st.sampled_from(["gw", "kt"]),
    max_items=st.integers(1, 6),
)
def test_new_candidates_are_only_the_added_users_first_delta0_items(data, gamma, kind, max_items):
    (d, du), extra, extra_c = _neighbour_case(data)
    secret = data.draw(st.integers(0, 2**64 - 1))
    if kind == "gw":
        kw, kwu, s_u_kw = {"counts": d.counts}, {"counts": du.counts}, {"counts": np.array(extra_c, dtype=np.int32)}
    else:  # a public frequency per item, with many ties
        freq = np.array(data.draw(st.lists(st.integers(1, 3), min_size=N_ITEMS, max_size=N_ITEMS)), dtype=float)
        rank = frequency_rank(freq)
        kw = kwu = s_u_kw = {"rank": rank}
    h, cand = greedy_update(d, N_ITEMS, gamma, KEYS, secret, max_items=max_items, **kw)
    hu, cand_u = greedy_update(du, N_ITEMS, gamma, KEYS, secret, max_items=max_items, **kwu)
    s_u = set(user_visit_order(np.array(extra, dtype=np.int32), KEYS, secret, max_items=max_items, **s_u_kw).tolist())
    # K(D+u) = K(D) + (S_u minus K(D)): the new candidates are u's first Delta0 items, nothing else
    new = np.flatnonzero(cand_u & ~cand)
    assert set(new.tolist()) <= s_u and len(new) <= max_items
    assert np.array_equal(cand_u, cand | np.isin(np.arange(N_ITEMS), list(s_u)))
    assert hu[new].sum() <= 1.0  # touched by u alone: total weight <= 1
    assert not np.any(h[~cand]) and not np.any(hu[~cand_u])  # weight only ever lands on candidates
    assert np.abs(hu - h).sum() <= 1.0  # l1 sensitivity on the common candidates
    assert h.max(initial=0) <= gamma and hu.max(initial=0) <= gamma
    assert h.sum() <= d.n_rows  # each user spends a budget of at most 1
    # the delta part of the proof: every new candidate (weight 0 included) is noised and, with the capped
    # rho, one of them passes with probability <= delta
    for eps, delta in [(0.5, 1e-3), (1.0, 1e-6), (3.0, 1e-9)]:
        p = exceed_probability("laplace", 1 / eps, rho_greedy(eps, delta, max_items), hu[new])
        assert p <= delta


def test_sensitivity_test_detects_a_broken_update():
    """Power check: the test's coupling does catch an update that spends more than the budget (Count)."""
    d, du = neighbouring_rows([[0, 1], [1, 2]], [0, 1, 2, 3], 1)
    count = lambda rows: np.bincount(rows.items, minlength=N_ITEMS).astype(float)  # noqa: E731
    assert np.abs(count(du) - count(d)).sum() > 1.0


# --------------------------------------------------------------------------- tie-breaking
def test_visit_order_is_by_count_then_keyed_hash():
    items = np.arange(N_ITEMS, dtype=np.int32)
    counts = np.array([1, 5, 3, 3, 3, 1, 1, 2, 5, 1, 1, 1])
    orders = [tuple(user_visit_order(items, KEYS, s, max_items=N_ITEMS, counts=counts)) for s in range(40)]
    for o in orders:
        assert list(counts[list(o)]) == sorted(counts, reverse=True)
    assert len(set(orders)) > 10  # the secret, not the id order, breaks the ties
    assert sum(list(o[:2]) == [1, 8] for o in orders) not in (0, len(orders))
    # S_i is the prefix of that order
    for s in range(10):
        full = user_visit_order(items, KEYS, s, max_items=N_ITEMS, counts=counts)
        assert list(user_visit_order(items, KEYS, s, max_items=5, counts=counts)) == list(full[:5])


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(1, 3), min_size=1, max_size=30),
    secret=st.integers(0, 2**64 - 1),
    max_items=st.integers(1, 31),
)
def test_lazy_selection_quickselect_and_sort_agree(counts, secret, max_items):
    n = len(counts)
    items = np.arange(n, dtype=np.int32)
    keys = item_hash_keys(np.array([f"w{i}" for i in range(n)], dtype=object))
    c = np.array(counts)
    ref = user_visit_order(items, keys, secret, max_items=n, counts=c, lazy=0)
    for lazy in (1, 2, 4, 50):
        assert list(user_visit_order(items, keys, secret, max_items=max_items, counts=c, lazy=lazy)) == list(
            ref[:max_items]
        )


def _unmix64(z: int) -> int:
    """Inverse of splitmix64's finaliser (to build item keys whose ties collide in the top 32 bits)."""
    m = 2**64 - 1

    def unxorshift(y, s):
        x = y
        for _ in range(64 // s + 1):
            x = y ^ (x >> s)
        return x & m

    z = unxorshift(z, 31)
    z = (z * pow(0x94D049BB133111EB, -1, 2**64)) & m
    z = unxorshift(z, 27)
    z = (z * pow(0xBF58476D1CE4E5B9, -1, 2**64)) & m
    return unxorshift(z, 30)


def test_equal_top_bits_are_ordered_by_the_full_tie_not_by_position():
    secret = 0x1234_5678_9ABC_DEF0
    top = 0xCAFEBABE << 32
    ties = [top | 5, top | 1, top | 9, top | 3]  # same top 32 bits, different low bits
    keys = np.array([_unmix64(t) ^ secret for t in ties], dtype=np.uint64)
    items = np.arange(4, dtype=np.int32)
    ones = np.ones(4, dtype=np.int64)
    for lazy in (0, 4):
        order = user_visit_order(items, keys, secret, max_items=4, counts=ones, lazy=lazy)
        assert list(order) == [1, 3, 0, 2]  # ascending low bits of the tie
        rev = user_visit_order(items[::-1].copy(), keys, secret, max_items=4, counts=ones, lazy=lazy)
        assert list(rev) == [1, 3, 0, 2]  # the row's own order does not matter
        # and the quickselect for S_i resolves the same ties the same way
        assert list(user_visit_order(items[::-1].copy(), keys, secret, max_items=2, counts=ones, lazy=lazy)) == [1, 3]


def test_tie_order_depends_only_on_the_users_data_and_the_secret():
    """Same user X in two corpora whose other users differ (so X's vocab ids differ): same order by string."""
    x = ["apple"] * 2 + ["pear", "fig", "kiwi", "plum", "date", "lime"] + ["yam"] * 2
    d1 = corpus_from_token_lists([["zebra", "fig", "quince"], ["lime", "yak"], x], posts_per_user=False)
    d2 = corpus_from_token_lists([["plum", "ant"], x, ["kiwi", "bee", "cow", "dog"], ["eel"]], posts_per_user=False)
    for corpus, row in ((d1, 2), (d2, 1)):
        assert set(corpus.vocab[corpus.items[corpus.indptr[row] : corpus.indptr[row + 1]]]) == set(x)
    ids1 = [d1.vocab[i] for i in range(d1.n_items)]
    ids2 = [d2.vocab[i] for i in range(d2.n_items)]
    assert [ids1.index(w) for w in sorted(set(x))] != [ids2.index(w) for w in sorted(set(x))]
    rng = np.random.default_rng(3)
    for _ in range(10):
        secret = draw_secret(rng)
        orders = []
        for corpus, row in ((d1, 2), (d2, 1)):
            s, e = corpus.indptr[row], corpus.indptr[row + 1]
            o = user_visit_order(
                corpus.items[s:e], item_hash_keys(corpus.vocab), secret, max_items=5, counts=corpus.counts[s:e]
            )
            orders.append(list(corpus.vocab[o]))
        assert orders[0] == orders[1]  # S_i (first 5) and its order
        assert set(orders[0][:2]) == {"apple", "yam"}


# --------------------------------------------------------------------------- weight-0 candidates
def test_every_item_of_the_first_delta0_is_a_noised_candidate_and_nothing_else():
    rng = np.random.default_rng(0)
    words = [f"tok{i}" for i in range(4000)]
    users = [list(rng.choice(words, size=6000)) for _ in range(3)]  # ~3,100 distinct items each
    corpus = corpus_from_token_lists(users, posts_per_user=False)
    assert corpus.row_lengths.min() > 2500
    # eps small -> noise scale 10: a weight-0 candidate passes rho ~ 48 w.p. ~0.004
    mech = Gw(epsilon=0.1, delta=0.4, alpha=1.0, max_items=100)
    cal = mech.calibrate()
    released_weight0 = 0
    for seed in range(20):
        rel = mech.release(corpus, seed=seed)
        h = rel.diagnostics.weights
        cand = rel.diagnostics.extra["candidate_mask"]
        assert 1 <= np.count_nonzero(h) <= 3  # Gamma >= 1: each user spends the whole budget on one item
        assert 100 < cand.sum() <= 300  # the users' first 100 items, overlapping
        assert cand[rel.item_ids].all()  # nothing outside the candidates
        released_weight0 += int(np.count_nonzero(h[rel.item_ids] == 0))
    # weight-0 candidates are noised: 20 runs x ~290 candidates x P[Lap(10) > rho] ~ 23 of them pass
    p0 = exceed_probability("laplace", cal.scale, cal.rho, [0.0])
    assert p0 > 0.003 and released_weight0 > 0


def test_items_outside_every_first_delta0_are_never_released():
    # one user with 3,000 rare words and "the"; Delta0 = 10: exactly 10 candidates, and they are the
    # user's first 10 in its order (GW-KT: "the" first, then keyed-hash order of the rest)
    corpus = corpus_from_token_lists([[f"rare{i}" for i in range(3000)] + ["the"]], posts_per_user=False)
    mech = GwKt(epsilon=0.1, delta=0.4, alpha=1.0, max_items=10)
    the = int(np.flatnonzero(corpus.vocab == "the")[0])
    seen: set[int] = set()
    for seed in range(20):
        rel = mech.release(corpus, seed=seed)
        h = rel.diagnostics.weights
        cand = rel.diagnostics.extra["candidate_mask"]
        assert np.flatnonzero(h > 0).tolist() == [the]
        assert cand.sum() == 10 and cand[the] and cand[rel.item_ids].all()
        seen |= set(np.flatnonzero(cand).tolist())
    assert len(seen) > 100  # different secrets pick different S_i among the tied rare words


def test_gwkt_ranks_are_cached_per_corpus_and_source():
    corpus = corpus_from_token_lists([["the", "cat"], ["the", "zymurgy"]], posts_per_user=False)
    r1 = public_rank(corpus, None, "en")
    assert public_rank(corpus, None, "en") is r1  # the app's re-run reuses it
    pub = corpus_from_token_lists([["zymurgy"], ["zymurgy", "cat"]], posts_per_user=False)
    r2 = public_rank(corpus, pub, "en")
    assert r2 is not r1 and public_rank(corpus, pub, "en") is r2
    z, t = int(np.flatnonzero(corpus.vocab == "zymurgy")[0]), int(np.flatnonzero(corpus.vocab == "the")[0])
    assert r1[t] < r1[z] and r2[z] < r2[t]
    other = corpus_from_token_lists([["the", "cat"], ["the", "zymurgy"]], posts_per_user=False)
    assert public_rank(other, None, "en") is not r1  # per corpus


# --------------------------------------------------------------------------- frequency orders
def test_gw_follows_own_counts_and_gwkt_follows_public_frequency():
    corpus = corpus_from_token_lists([["zymurgy"] * 5 + ["the"]], posts_per_user=False)
    zy = int(np.flatnonzero(corpus.vocab == "zymurgy")[0])
    the = int(np.flatnonzero(corpus.vocab == "the")[0])
    h_gw = Gw(epsilon=1, delta=1e-6).release(corpus, seed=0).diagnostics.weights
    h_kt = GwKt(epsilon=1, delta=1e-6).release(corpus, seed=0).diagnostics.weights
    # (the budget is 1 minus the rounding allowance of privacy.norms.descent_budget)
    assert h_gw[zy] == pytest.approx(1.0) and h_gw[the] == 0.0
    assert h_kt[the] == pytest.approx(1.0) and h_kt[zy] == 0.0


def test_gwkt_with_a_supplied_public_corpus():
    pub = corpus_from_token_lists([["pear"], ["pear", "fig"], ["pear", "fig", "kiwi"]], posts_per_user=False)
    corpus = corpus_from_token_lists([["kiwi"] * 9 + ["fig"] * 3 + ["pear"]], posts_per_user=False)
    h = GwKt(epsilon=1, delta=1e-6, public_source=pub).release(corpus, seed=0).diagnostics.weights
    assert h[int(np.flatnonzero(corpus.vocab == "pear")[0])] == pytest.approx(1.0)
    assert h.sum() == pytest.approx(1.0) and h.sum() <= 1.0


def test_private_counts_never_influence_gwkt_but_do_influence_gw():
    """Same item strings (and ids), different private counts: GW-KT's histogram is identical, GW's is not."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    a = [[w] * (1 + i) for i, w in enumerate(words)]
    b = [[w] * (len(words) - i) for i, w in enumerate(words)]
    users_a = [sum(a, []) for _ in range(4)]
    users_b = [sum(b, []) for _ in range(4)]
    ca = corpus_from_token_lists(users_a, posts_per_user=False)
    cb = corpus_from_token_lists(users_b, posts_per_user=False)
    assert list(ca.vocab) == list(cb.vocab) and not np.array_equal(ca.counts, cb.counts)
    for seed in range(3):
        kt_a = GwKt(epsilon=1, delta=1e-6).release(ca, seed=seed).diagnostics.weights
        kt_b = GwKt(epsilon=1, delta=1e-6).release(cb, seed=seed).diagnostics.weights
        np.testing.assert_array_equal(kt_a, kt_b)
        gw_a = Gw(epsilon=1, delta=1e-6).release(ca, seed=seed).diagnostics.weights
        gw_b = Gw(epsilon=1, delta=1e-6).release(cb, seed=seed).diagnostics.weights
        assert not np.array_equal(gw_a, gw_b)


# --------------------------------------------------------------------------- lone user
EPS, DELTA = 1.0, 0.05


@pytest.mark.parametrize(
    "factory, corpus_kw, n_cand",
    [
        (lambda: Gw(epsilon=EPS, delta=DELTA, alpha=3.0, max_items=30), dict(n_unique=30), 30),
        (
            lambda: Gw(epsilon=EPS, delta=DELTA, alpha=3.0, max_items=10),
            dict(n_unique=10, lone_common=5, unique_counts=[7] * 10),
            10,
        ),
        (lambda: GwKt(epsilon=EPS, delta=DELTA, alpha=3.0, max_items=30), dict(n_unique=40), 30),
    ],
    ids=["gw-30-unique", "gw-unique-most-frequent", "gwkt-40-unique-30-candidates"],
)
def test_lone_user_release_rate_is_at_most_delta(factory, corpus_kw, n_cand):
    mech = factory()
    cal = mech.calibrate()
    est = lone_user_release_rate(mech, 2000, seed=11, **corpus_kw)
    assert est.lower <= DELTA
    # Power: the lone user's first Delta0 unique words are all candidates; one carries weight 1 and the
    # others weight 0, yet every one is noised, so the rate is the capped union bound, close to delta
    # itself (most of it from the weight-0 candidates); a harness that never releases, or that skipped
    # weight-0 candidates, would fail here.
    exact = exceed_probability("laplace", cal.scale, cal.rho, [1.0] + [0.0] * (n_cand - 1))
    assert DELTA / 2 < exact <= DELTA
    assert exact > 2 * exceed_probability("laplace", cal.scale, cal.rho, [1.0])  # weight-0 share matters
    assert est.contains(exact)
