"""GW and GW-KT (Carvalho et al. 2022): calibration, the GU update against Algorithm 2, its
l1-sensitivity on coupled neighbouring corpora, the tie-breaking rule, weight-0 items, and the
lone-user Monte Carlo."""

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
    user_visit_order,
)
from dpsu_core.mechanisms.registry import get_mechanism, mechanisms
from dpsu_core.mechanisms.sampling import rows_from_lists
from dpsu_core.privacy import rho_greedy
from tests.helpers import exceed_probability, lone_user_release_rate, neighbouring_rows

N_ITEMS = 12
KEYS = item_hash_keys(np.array([f"item{i}" for i in range(N_ITEMS)], dtype=object))


# --------------------------------------------------------------------------- calibration
def test_registered_names_and_labels():
    regs = mechanisms()
    assert regs["gw"].label == "GW" and regs["gw-kt"].label == "GW-KT"
    assert regs["gw"].param_names == ("alpha", "max_users") and regs["gw-kt"].param_names == ("alpha", "max_users")


@pytest.mark.parametrize("name", ["gw", "gw-kt"])
def test_calibration_matches_spec(name):
    eps, delta, alpha = 3.0, math.exp(-10), 3.0
    # N = 1 is the paper's threshold (spec section 2 reference value)
    cal1 = get_mechanism(name, epsilon=eps, delta=delta, alpha=alpha, max_users=1).calibrate()
    assert cal1.rho == pytest.approx(4.1023, abs=5e-5)
    assert cal1.rho == pytest.approx(1 - math.log(2 * delta) / eps)
    # the corrected threshold for a public bound of N users (default 10^6)
    cal = get_mechanism(name, epsilon=eps, delta=delta, alpha=alpha).calibrate()
    n = 1_000_000
    assert cal.noise == "laplace"
    assert cal.scale == pytest.approx(1 / 3)
    assert cal.rho == pytest.approx(math.log((math.exp(eps) + n - 1) / (2 * delta)) / eps, rel=1e-12)
    assert cal.gamma == pytest.approx(cal.rho + alpha / eps)
    assert cal.params == {"alpha": alpha, "max_users": n}
    assert "max_items" not in cal.params


def test_corpus_with_more_users_than_max_users_is_refused():
    corpus = corpus_from_token_lists([["a", "b"], ["a"], ["b", "c"]], posts_per_user=False)
    with pytest.raises(ParameterError, match="max_users"):
        Gw(epsilon=1.0, delta=1e-3, max_users=2).release(corpus, seed=1)
    assert Gw(epsilon=1.0, delta=1e-3, max_users=3).release(corpus, seed=1).n_released >= 0


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
def test_published_rho_fails_on_cascades_and_the_corrected_rho_holds(k):
    eps, delta = 1.0, 1e-6
    d, du, ids, held_by_u, gamma = _cascade_neighbours(k)
    keys = item_hash_keys(np.array(sorted(ids, key=ids.get), dtype=object))
    h = greedy_update(d, len(ids), gamma, count_priority(d.counts), keys, 12345)
    hu = greedy_update(du, len(ids), gamma, count_priority(du.counts), keys, 12345)
    assert np.abs(hu - h).sum() <= 1.0 + 1e-12  # Lemma 1 (l1 sensitivity) still holds
    new = np.flatnonzero((hu > 0) & (h == 0))
    assert len(new) == k and not set(new.tolist()) & held_by_u  # k new items, none of them u's
    assert hu[new] == pytest.approx(np.full(k, 1.0 / k))
    # With the published rho (N = 1) one of them is released with probability above delta ...
    assert exceed_probability("laplace", 1 / eps, rho_greedy(eps, delta, 1), hu[new]) > delta
    # ... with the corrected rho for N = number of users of the larger corpus it is at most delta.
    assert exceed_probability("laplace", 1 / eps, rho_greedy(eps, delta, du.n_rows), hu[new]) <= delta


def test_gamma_below_one_is_rejected_with_a_fix():
    # delta > 1/2 makes rho < 1; with alpha = 0, Gamma = rho < 1 and the proof (Gamma >= 1) fails.
    assert rho_greedy(1.0, 0.9) < 1
    with pytest.raises(ParameterError, match="alpha"):
        Gw(epsilon=1.0, delta=0.9, alpha=0.0, max_users=1)
    with pytest.raises(ParameterError, match="Gamma"):
        GwKt(epsilon=1.0, delta=0.9, alpha=0.0, max_users=1)
    need = (1 - rho_greedy(1.0, 0.9)) * 1.0
    assert Gw(epsilon=1.0, delta=0.9, alpha=need + 1e-9, max_users=1).calibrate().gamma >= 1.0


def test_bad_parameters_are_typed_errors():
    with pytest.raises(ParameterError):
        Gw(epsilon=-1, delta=1e-6)
    with pytest.raises(ParameterError):
        Gw(epsilon=1, delta=1e-6, max_items=10)  # GW has no Delta0
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
    assert d_default["public_frequencies"] == "wordfreq en"
    assert isinstance(d_corpus["public_frequencies"], str)
    assert "cat" not in repr(GwKt(epsilon=1, delta=1e-6, public_source=pub).calibrate().as_dict())


# --------------------------------------------------------------------------- GU against Algorithm 2
def _reference_gu(rows, n_items, gamma, primary, keys, secret):
    """Algorithm 2 written out literally (sets S and O, argmax by the visiting order), per user."""
    h = np.zeros(n_items)
    for r in range(rows.n_rows):
        s, e = rows.indptr[r], rows.indptr[r + 1]
        items = rows.items[s:e]
        order = list(user_visit_order(items, primary[s:e], keys, secret, np.zeros(n_items), gamma))
        rank = {u: k for k, u in enumerate(order)}  # with h = 0 every item is in S: the full order
        S = {int(u) for u in items if h[u] < gamma}
        O: set[int] = set()
        budget = 1.0
        while budget > 0 and S - O:
            u = min(S - O, key=lambda x: rank[x])
            cost = gamma - h[u]
            if cost <= budget:
                h[u] += cost
                budget -= cost
                O.add(u)
            else:
                h[u] += budget
                break
    return h


@settings(max_examples=150, deadline=None)
@given(data=st.data(), gamma=st.sampled_from([1.0, 1.3, 2.0, 3.7]))
def test_greedy_update_is_algorithm_2(data, gamma):
    rows_l = data.draw(st.lists(st.lists(st.integers(0, N_ITEMS - 1), unique=True, max_size=8), max_size=20))
    counts_l = [data.draw(st.lists(st.integers(1, 4), min_size=len(r), max_size=len(r))) for r in rows_l]
    secret = data.draw(st.integers(0, 2**64 - 1))
    rows = rows_from_lists(rows_l, counts_l)
    primary = count_priority(rows.counts)
    h = greedy_update(rows, N_ITEMS, gamma, primary, KEYS, secret)
    ref = _reference_gu(rows, N_ITEMS, gamma, primary, KEYS, secret)
    np.testing.assert_allclose(h, ref, atol=1e-12)


# --------------------------------------------------------------------------- sensitivity
def _neighbour_case(data):
    rows_l = data.draw(st.lists(st.lists(st.integers(0, N_ITEMS - 1), unique=True, max_size=8), max_size=25))
    extra = data.draw(st.lists(st.integers(0, N_ITEMS - 1), unique=True, max_size=N_ITEMS))
    counts_l = [data.draw(st.lists(st.integers(1, 3), min_size=len(r), max_size=len(r))) for r in rows_l]
    extra_c = data.draw(st.lists(st.integers(1, 3), min_size=len(extra), max_size=len(extra)))
    pos = data.draw(st.integers(0, len(rows_l)))
    return neighbouring_rows(rows_l, extra, pos, counts_l, extra_c)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), gamma=st.sampled_from([1.0, 1.25, 2.0, 3.5]), kind=st.sampled_from(["gw", "kt"]))
def test_gu_l1_sensitivity_on_coupled_neighbours(data, gamma, kind):
    d, du = _neighbour_case(data)
    secret = data.draw(st.integers(0, 2**64 - 1))
    if kind == "gw":
        p, pu = count_priority(d.counts), count_priority(du.counts)
    else:  # a public frequency per item, with many ties
        freq = np.array(data.draw(st.lists(st.integers(1, 3), min_size=N_ITEMS, max_size=N_ITEMS)), dtype=float)
        rank = frequency_rank(freq)
        p, pu = rank[d.items], rank[du.items]
    h = greedy_update(d, N_ITEMS, gamma, p, KEYS, secret)
    hu = greedy_update(du, N_ITEMS, gamma, pu, KEYS, secret)
    assert np.abs(hu - h).sum() <= 1.0 + 1e-9
    assert h.max(initial=0) <= gamma + 1e-12 and hu.max(initial=0) <= gamma + 1e-12
    assert h.sum() <= d.n_rows + 1e-9  # each user spends a budget of at most 1
    assert np.all(hu >= h - 1e-12)  # property P1 of the proof
    # The delta part of the proof: items only D+u can release (T) number at most one per user, carry
    # total weight <= 1, and with rho for N = |D+u| users their release probability is <= delta.
    new = np.flatnonzero((hu > 0) & (h == 0))
    assert len(new) <= du.n_rows
    assert hu[new].sum() <= 1.0 + 1e-9
    for eps, delta in [(0.5, 1e-3), (1.0, 1e-6), (3.0, 1e-9)]:
        p = exceed_probability("laplace", 1 / eps, rho_greedy(eps, delta, max(du.n_rows, 1)), hu[new])
        assert p <= delta * (1 + 1e-9)


def test_sensitivity_test_detects_a_broken_update():
    """Power check: the test's coupling does catch an update that spends more than the budget (Count)."""
    d, du = neighbouring_rows([[0, 1], [1, 2]], [0, 1, 2, 3], 1)
    count = lambda rows: np.bincount(rows.items, minlength=N_ITEMS).astype(float)  # noqa: E731
    assert np.abs(count(du) - count(d)).sum() > 1.0


# --------------------------------------------------------------------------- tie-breaking
def test_visit_order_is_by_count_then_keyed_hash():
    items = np.arange(N_ITEMS, dtype=np.int32)
    counts = np.array([1, 5, 3, 3, 3, 1, 1, 2, 5, 1, 1, 1])
    prim = count_priority(counts)
    h = np.zeros(N_ITEMS)
    orders = [tuple(user_visit_order(items, prim, KEYS, s, h, 2.0)) for s in range(40)]
    for o in orders:
        assert list(counts[list(o)]) == sorted(counts, reverse=True)
    assert len(set(orders)) > 10  # the secret, not the id order, breaks the ties
    assert sum(list(o[:2]) == [1, 8] for o in orders) not in (0, len(orders))


def test_visit_order_skips_items_at_gamma_and_keeps_the_rest_in_order():
    items = np.arange(N_ITEMS, dtype=np.int32)
    prim = count_priority(np.arange(N_ITEMS) + 1)
    h = np.zeros(N_ITEMS)
    full = user_visit_order(items, prim, KEYS, 7, h, 2.0)
    h[[3, 5]] = 2.0
    part = user_visit_order(items, prim, KEYS, 7, h, 2.0)
    assert list(part) == [u for u in full if u not in (3, 5)]


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(1, 3), min_size=1, max_size=30), secret=st.integers(0, 2**64 - 1))
def test_lazy_selection_and_sort_agree(counts, secret):
    n = len(counts)
    items = np.arange(n, dtype=np.int32)
    keys = item_hash_keys(np.array([f"w{i}" for i in range(n)], dtype=object))
    prim = count_priority(np.array(counts))
    h = np.zeros(n)
    ref = user_visit_order(items, prim, keys, secret, h, 1.0, lazy=0)
    for lazy in (1, 2, 4, 50):
        assert list(user_visit_order(items, prim, keys, secret, h, 1.0, lazy=lazy)) == list(ref)


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
    prim = count_priority(np.ones(4, dtype=np.int64))
    for lazy in (0, 4):
        order = user_visit_order(items, prim, keys, secret, np.zeros(4), 1.0, lazy=lazy)
        assert list(order) == [1, 3, 0, 2]  # ascending low bits of the tie
        rev = user_visit_order(items[::-1].copy(), prim, keys, secret, np.zeros(4), 1.0, lazy=lazy)
        assert list(rev) == [1, 3, 0, 2]  # the row's own order does not matter


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
                corpus.items[s:e],
                count_priority(corpus.counts[s:e]),
                item_hash_keys(corpus.vocab),
                secret,
                np.zeros(corpus.n_items),
                5.0,
            )
            orders.append(list(corpus.vocab[o]))
        assert orders[0] == orders[1]
        assert set(orders[0][:2]) == {"apple", "yam"}


# --------------------------------------------------------------------------- weight-0 items
def test_thousands_of_items_per_user_put_weight_on_few_and_only_those_can_be_released():
    rng = np.random.default_rng(0)
    words = [f"tok{i}" for i in range(4000)]
    users = [list(rng.choice(words, size=6000)) for _ in range(3)]  # ~3,100 distinct items each
    corpus = corpus_from_token_lists(users, posts_per_user=False)
    assert corpus.row_lengths.min() > 2500
    # eps small -> noise scale 10: a weight-0 item would pass rho w.p. ~0.36, i.e. ~1,000 releases per run
    mech = Gw(epsilon=0.1, delta=0.4, alpha=1.0)
    for seed in range(5):
        rel = mech.release(corpus, seed=seed)
        h = rel.diagnostics.weights
        assert 1 <= np.count_nonzero(h) <= 3  # Gamma >= 1: each user spends the whole budget on one item
        assert np.all(np.isin(rel.item_ids, np.flatnonzero(h > 0)))
        assert rel.n_released <= 3


def test_gwkt_never_touches_weight_zero_items_either():
    corpus = corpus_from_token_lists([[f"rare{i}" for i in range(3000)] + ["the"]], posts_per_user=False)
    rel = GwKt(epsilon=0.1, delta=0.4, alpha=1.0).release(corpus, seed=1)
    h = rel.diagnostics.weights
    assert np.flatnonzero(h > 0).tolist() == [int(np.flatnonzero(corpus.vocab == "the")[0])]
    assert rel.n_released <= 1


# --------------------------------------------------------------------------- frequency orders
def test_gw_follows_own_counts_and_gwkt_follows_public_frequency():
    corpus = corpus_from_token_lists([["zymurgy"] * 5 + ["the"]], posts_per_user=False)
    zy = int(np.flatnonzero(corpus.vocab == "zymurgy")[0])
    the = int(np.flatnonzero(corpus.vocab == "the")[0])
    h_gw = Gw(epsilon=1, delta=1e-6).release(corpus, seed=0).diagnostics.weights
    h_kt = GwKt(epsilon=1, delta=1e-6).release(corpus, seed=0).diagnostics.weights
    assert h_gw[zy] == 1.0 and h_gw[the] == 0.0
    assert h_kt[the] == 1.0 and h_kt[zy] == 0.0


def test_gwkt_with_a_supplied_public_corpus():
    pub = corpus_from_token_lists([["pear"], ["pear", "fig"], ["pear", "fig", "kiwi"]], posts_per_user=False)
    corpus = corpus_from_token_lists([["kiwi"] * 9 + ["fig"] * 3 + ["pear"]], posts_per_user=False)
    h = GwKt(epsilon=1, delta=1e-6, public_source=pub).release(corpus, seed=0).diagnostics.weights
    assert h[int(np.flatnonzero(corpus.vocab == "pear")[0])] == 1.0
    assert h.sum() == 1.0


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


N_LONE = 101  # lone_user_corpus: 100 common users + the lone user; max_users is its tightest valid value


@pytest.mark.parametrize(
    "factory, corpus_kw",
    [
        (lambda: Gw(epsilon=EPS, delta=DELTA, alpha=3.0, max_users=N_LONE), dict(n_unique=30)),
        (
            lambda: Gw(epsilon=EPS, delta=DELTA, alpha=3.0, max_users=N_LONE),
            dict(n_unique=10, lone_common=5, unique_counts=[7] * 10),
        ),
        (lambda: GwKt(epsilon=EPS, delta=DELTA, alpha=3.0, max_users=N_LONE), dict(n_unique=30)),
    ],
    ids=["gw-30-unique", "gw-unique-most-frequent", "gwkt-30-unique"],
)
def test_lone_user_release_rate_is_at_most_delta(factory, corpus_kw):
    mech = factory()
    cal = mech.calibrate()
    est = lone_user_release_rate(mech, 2000, seed=11, **corpus_kw)
    assert est.lower <= DELTA
    # Power: the lone user puts exactly weight 1 on one unique word (30 unique words do not make it 30
    # times more likely), so the rate is exactly (1/2) e^{-eps (rho - 1)} = delta e^eps / (e^eps + N - 1);
    # a harness that never releases would fail here.
    exact = exceed_probability("laplace", cal.scale, cal.rho, [1.0])
    assert exact == pytest.approx(DELTA * math.exp(EPS) / (math.exp(EPS) + N_LONE - 1))
    assert est.contains(exact)
