"""Noisy counts of the released items (``mechanisms.item_counts``): calibration against the closed form and
dp-accounting, l2 sensitivity on coupled neighbours, the budget split, and the cost in the ledger."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.accounting.ledger import Ledger, LedgerEntry, total
from dpsu_core.accounting.spend import counts_entry
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.corpus.model import Corpus
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms.item_counts import (
    DETAILS_KEY,
    calibrate_counts,
    clipped_sums,
    clipped_units,
    counts_of,
    mechanism_with_counts,
    release_with_counts,
    split_budget,
    unit_of,
)
from dpsu_core.privacy.gaussian import gaussian_delta, gaussian_delta_exact
from tests.helpers import coupled_neighbours


def _corpus(rows: list[list[int]], counts: list[list[int]], n_items: int) -> Corpus:
    """A corpus straight from rows of item ids (each row's ids distinct) and their occurrence counts."""
    order = [np.argsort(r, kind="stable") for r in rows]
    items = np.concatenate([np.asarray(r, np.int32)[o] for r, o in zip(rows, order)] or [np.zeros(0, np.int32)])
    cnts = np.concatenate([np.asarray(c, np.int32)[o] for c, o in zip(counts, order)] or [np.zeros(0, np.int32)])
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    return Corpus(
        indptr=indptr,
        items=items.astype(np.int32),
        counts=cnts.astype(np.int32),
        vocab=np.array([f"w{i}" for i in range(n_items)], dtype=object),
        ngram_len=np.ones(n_items, dtype=np.int8),
        gram_tokens=np.arange(n_items, dtype=np.int32).reshape(-1, 1),
    )


@pytest.mark.parametrize("eps,delta,share,clip", [(3.0, 1e-5, 0.2, 1.0), (1.0, 1e-6, 0.5, 3.0), (8.0, 1e-7, 0.1, 0.5)])
def test_sigma_is_the_analytic_gaussian_of_the_share_and_matches_dp_accounting(eps, delta, share, clip):
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    cc = calibrate_counts(eps, delta, share, clip)
    assert (cc.epsilon, cc.delta) == (eps * share, delta * share)
    # closed form (Balle & Wang, Thm 8): delta(sigma) at the counts' epsilon is the counts' delta, tightly
    assert gaussian_delta_exact(cc.sigma, cc.epsilon, clip) <= cc.delta  # exact arithmetic (60 digits)
    assert gaussian_delta(cc.sigma, cc.epsilon, clip) == pytest.approx(cc.delta, rel=1e-6)
    assert gaussian_delta(cc.sigma * (1 - 1e-6), cc.epsilon, clip) > cc.delta  # the smallest such sigma
    # dp-accounting's PLD accountant on the same Gaussian event (noise multiplier sigma / C)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-5)
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=cc.sigma / clip))
    assert acc.get_epsilon(cc.delta) == pytest.approx(cc.epsilon, abs=2e-3)
    # the cost: exactly a Gaussian mechanism, C^2 / (2 sigma^2), no delta of its own
    assert cc.cost.rho == pytest.approx(clip**2 / (2 * cc.sigma**2), rel=1e-15)
    assert cc.cost.delta == 0.0 and cc.cost.gaussian_mu_sq == pytest.approx(2 * cc.cost.rho, rel=1e-15)


@pytest.mark.parametrize("eps,delta,share", [(3.0, 1e-5, 0.2), (0.1, 1e-9, 0.3), (1e3, 0.3, 0.7)])
def test_split_never_spends_more_than_the_whole(eps, delta, share):
    (e1, d1), (e2, d2) = split_budget(eps, delta, share)
    assert Fraction(e1) + Fraction(e2) <= Fraction(eps) and Fraction(d1) + Fraction(d2) <= Fraction(delta)
    assert e1 + e2 == pytest.approx(eps, rel=1e-12) and d1 + d2 == pytest.approx(delta, rel=1e-12)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, float("nan"), "x"])
def test_share_outside_zero_one_is_refused(bad):
    with pytest.raises(ParameterError, match="share"):
        calibrate_counts(3.0, 1e-5, bad)


@settings(max_examples=200, deadline=None)
@given(case=coupled_neighbours(), data=st.data())
def test_one_user_moves_the_sums_by_at_most_the_clip_in_l2(case, data):
    """Coupled neighbours D and D + u (u inserted anywhere, every other user unchanged): the clipped sums over
    any released set differ by a vector of l2 norm <= C (the Gaussian mechanism's sensitivity)."""
    n_items, _, rows, extra, pos, gamma = case
    clip = float(gamma)  # a spread of bounds from 0.05 to 4
    counts = [data.draw(st.lists(st.integers(1, 50), min_size=len(r), max_size=len(r))) for r in rows]
    extra_counts = data.draw(st.lists(st.integers(1, 50), min_size=len(extra), max_size=len(extra)))
    released = data.draw(st.lists(st.integers(0, n_items - 1), unique=True, min_size=1))
    released_ids = np.array(released + [-1], dtype=np.int64)  # -1: an item the corpus never held (DPNE)
    d = _corpus(rows, counts, n_items)
    du = _corpus(rows[:pos] + [extra] + rows[pos:], counts[:pos] + [extra_counts] + counts[pos:], n_items)
    a, b = clipped_sums(d, released_ids, clip), clipped_sums(du, released_ids, clip)
    assert a[-1] == 0.0 and b[-1] == 0.0
    assert float(np.linalg.norm(b - a)) <= clip * (1 + 1e-12)
    # exactly, on the integer sums the noise is added to: at most 2^20 units in l2
    ua, ub = clipped_units(d, released_ids, clip), clipped_units(du, released_ids, clip)
    assert sum((int(y) - int(x)) ** 2 for x, y in zip(ua, ub)) <= 2**40
    # and it is the extra user's vector, scaled down only when its norm passes the bound
    w = np.array([dict(zip(extra, extra_counts)).get(x, 0) for x in released], dtype=np.float64)
    norm = float(np.linalg.norm(w))
    expected = w * (min(1.0, clip / norm) if norm > 0 else 0.0)
    np.testing.assert_allclose((b - a)[:-1], expected, rtol=1e-9, atol=unit_of(clip))  # less than one unit down


def _sq_units(u: np.ndarray) -> int:
    return sum(int(x) ** 2 for x in u)


def test_a_norm_equal_to_the_clip_in_floats_but_above_it_exactly_is_scaled():
    """clip = fl(sqrt 3) is below sqrt 3: counts (1, 1, 1) have norm sqrt 3 > clip, so they must be scaled (a float
    norm would compare equal and leave them whole, 3.5e-16 over the bound in ||w||^2)."""
    clip = math.sqrt(3.0)
    assert Fraction(clip) ** 2 < 3
    for bits in (20, 52):  # the release's grid, and one fine enough to show any relative excess
        u = clipped_units(_corpus([[0, 1, 2]], [[1, 1, 1]], 3), np.array([0, 1, 2]), clip, bits)
        assert _sq_units(u) <= 4**bits  # ||w|| <= clip: the units' norm <= 2^bits


def test_a_float_sum_of_squares_that_loses_the_small_counts_does_not_understate_the_norm():
    """One count of 94,906,267 (its square 9.0e15 > 2^53) beside 10^6 ones: each +1 vanishes in a float sum of
    squares, which understated the norm (||w||^2 / C^2 - 1 = 1.1e-10). The sum is now exact or rounded up."""
    n = 10**6 + 1
    d = _corpus([list(range(n))], [[94_906_267] + [1] * (n - 1)], n)
    for clip in (1.0, 1e6):
        u = clipped_units(d, np.arange(n), clip, 52)  # 2^52 units: the 10^6 small parts are seen too
        assert _sq_units(u) <= 4**52
        assert _sq_units(u) > 4**52 * (1 - 1e-9)  # scaled to the bound, not far below


@settings(max_examples=300, deadline=None)
@given(
    counts=st.lists(st.integers(1, 2**31 - 1) | st.integers(1, 3), min_size=1, max_size=40),
    clip=st.floats(1e-3, 1e12) | st.sampled_from([1.0, math.sqrt(2.0), math.sqrt(3.0), math.sqrt(5.0), 5.0]),
)
def test_every_clipped_vector_has_exact_norm_at_most_the_clip(counts, clip):
    """One user's vector (a one-user corpus: its sums are its own units): ||w_u||_2 <= C exactly (its units'
    norm <= 2^bits), for any whole counts up to 2^31 - 1 and any bound, on the release's grid and a 2^52 one."""
    n = len(counts)
    d = _corpus([list(range(n))], [counts], n)
    for bits in (20, 52):
        u = clipped_units(d, np.arange(n), clip, bits)
        assert _sq_units(u) <= 4**bits
        if sum(Fraction(c) ** 2 for c in counts) <= Fraction(clip) ** 2:  # within the bound: the counts themselves
            for x, c in zip(u, counts):  # lowered by the 2^-40 margin and the floor only
                exact = Fraction(c) / Fraction(clip) * 2**bits
                assert exact * (1 - Fraction(1, 2**39)) - 1 <= int(x) <= exact


def test_sums_are_the_users_occurrence_counts_scaled_to_the_bound():
    # user 0: counts 3 and 4 of items 0, 1 (norm 5) -> (0.6, 0.8); user 1: count 1 of item 1 (norm 1, kept)
    # item 2 is not released: it neither counts nor enters a norm
    d = _corpus([[0, 1, 2], [1]], [[3, 4, 100], [1]], 3)
    np.testing.assert_allclose(clipped_sums(d, np.array([0, 1]), 1.0), [0.6, 1.8], atol=2 * unit_of(1.0))
    np.testing.assert_allclose(clipped_sums(d, np.array([0, 1]), 10.0), [3.0, 5.0], atol=2 * unit_of(10.0))


def test_counted_release_spends_the_given_budget_in_two_ledger_entries():
    users = [["the", "cat", "sat"]] * 200 + [["the", "dog"]] * 200
    corpus = corpus_from_token_lists([[u] for u in users])
    mech, cc = mechanism_with_counts("policy-gaussian", epsilon=3.0, delta=1e-5, share=0.25)
    assert (mech.epsilon, mech.delta) == pytest.approx((2.25, 0.75e-5))
    rel = release_with_counts(mech, cc, corpus)
    assert {"the", "cat", "sat", "dog"} <= set(rel.items.tolist())
    assert rel.noisy_counts is not None and np.all(rel.noisy_counts >= 0)
    assert np.all(rel.count_std == cc.sigma)
    the = rel.noisy_counts[rel.items.tolist().index("the")]
    assert abs(the - (200 / math.sqrt(3) + 200 / math.sqrt(2))) < 6 * cc.sigma  # unit vectors per user
    assert counts_of(rel.calibration) == cc and DETAILS_KEY in rel.calibration.details.as_dict()
    assert "(3, 1e-05)-differentially private" in rel.calibration.guarantee

    led = Ledger()
    led.record(rel.calibration, corpus_id="c", source="Release")
    led.add([counts_entry(cc, corpus_id="c", source="Release")])
    t = led.total("c")
    assert t.releases == 2
    assert t.basic_epsilon == pytest.approx(3.0) and t.basic_delta == pytest.approx(1e-5)
    # both parts are Gaussian mechanisms: the Gaussian-DP total is at most the basic one
    assert t.gdp_epsilon is not None and t.epsilon <= 3.0
    assert t.zcdp_rho == pytest.approx(led.entries[0].zcdp.rho + cc.cost.rho)


def test_count_mechanisms_are_refused():
    with pytest.raises(ParameterError, match="already releases noisy counts"):
        mechanism_with_counts("pcr", epsilon=3.0, delta=1e-5)


def test_counts_entry_is_a_plain_ledger_entry():
    cc = calibrate_counts(3.0, 1e-5)
    e = counts_entry(cc, corpus_id=7, source="CLI", teaching=True)
    assert isinstance(e, LedgerEntry) and e.zcdp == cc.cost and e.teaching
    assert not total([e]).guaranteed


def test_the_spend_gate_shows_the_counts_share_and_their_cost():
    from dpsu_core.accounting.spend import plan_spend, plan_with_counts

    mech, cc = mechanism_with_counts("policy-gaussian", epsilon=3.0, delta=1e-5, share=0.25)
    spent = [Ledger().record(mech.calibrate(), corpus_id="c", source="Release")]  # one earlier release

    def gate(limit: float):
        base = plan_spend(
            "Release (Policy Gaussian)",
            [(mech.calibrate(), 1)],
            spent,
            corpus_id="c",
            corpus_name="posts.csv",
            limit_epsilon=limit,
            on_private=True,
            teaching=False,
        )
        return base, plan_with_counts(base, cc, spent)

    base, plan = gate(100.0)
    assert plan.after.epsilon > base.after.epsilon
    assert len(plan.entries) == 2 and plan.entries[1].mechanism == "item-counts"
    assert plan.cost.basic_epsilon == pytest.approx(3.0) and plan.cost.basic_delta == pytest.approx(1e-5)
    assert plan.after.basic_epsilon == pytest.approx(2.25 + 3.0)
    text = plan.cost_text()
    assert "with noisy counts (0.25 of the budget" in text and "2 releases" in text
    assert plan.key != base.key  # a yes for the plain release does not carry over
    base, plan = gate((base.after.epsilon + plan.after.epsilon) / 2)
    assert plan.over_budget and not base.over_budget  # only the counts take the session past its budget


_SHARES = (0.01, 0.1, 0.99)  # the app's and the CLI's range of the counts' share
_CLIPS = (0.01, 1.0, 1000.0)  # ... and of the per-user bound


@pytest.mark.parametrize("name", ["policy-gaussian", "dpne", "policy-sips"])
@pytest.mark.parametrize("eps", [1e-12, 1.0, 1e300])
@pytest.mark.parametrize("delta", [1e-300, 1e-6, 0.5])
def test_counted_releases_at_the_corners_never_publish_a_lone_word(name, eps, delta):
    """The counts option at the corners of its documented ranges (share, bound) and of (epsilon, delta), on the
    canary corpus (400 users sharing 7 words, each with one word of its own): no lone word among the items at a
    small delta (at delta 0.5, no more than each lone word's chance delta allows, as the corner sweep bounds it), a
    noisy count for each released item only, or one clear refusal (a part of the budget below its range)."""
    from dpsu_core.errors import DpsuError
    from tests.corners import CANARY_USERS, canary_corpus, lone_items

    corpus = canary_corpus(max_n=1)
    ran = 0
    for share in _SHARES:
        for clip in _CLIPS:
            try:
                mech, cc = mechanism_with_counts(name, epsilon=eps, delta=delta, share=share, clip=clip)
                rel = release_with_counts(mech, cc, corpus)
            except DpsuError as e:
                assert "\n" not in str(e) and len(str(e)) <= 500
                continue
            lone = lone_items(rel.items)
            if delta <= 1e-6:
                assert not lone, (share, clip, lone[:5])
            else:
                assert len(lone) <= CANARY_USERS * delta + 6 * math.sqrt(CANARY_USERS * delta * (1 - delta))
            assert rel.noisy_counts is not None and rel.noisy_counts.shape == rel.items.shape
            assert np.isfinite(cc.sigma) and cc.sigma > 0
            ran += 1
    assert ran > 0 or eps < 1e-11 or delta < 1e-299  # at the smallest epsilon or delta every split is below it


@pytest.mark.parametrize(
    ("eps", "delta", "fix"),
    [(1.0, 1e-300, "delta (1e-300) to at least 1e-299"), (1e-12, 1e-6, "epsilon (1e-12) to at least 1e-11")],
)
def test_a_split_below_the_smallest_budget_is_refused_naming_the_counts(eps, delta, fix):
    """At the smallest epsilon or delta a share of it is below the documented range: one line says that the counts'
    split is the cause and what to raise (before, a part's own figure, e.g. "got 8.999999999999999e-301")."""
    with pytest.raises(ParameterError) as err:
        mechanism_with_counts("policy-gaussian", epsilon=eps, delta=delta, share=0.1)
    assert "with noisy counts at a share of 0.1" in str(err.value) and fix in str(err.value)
    assert "release without counts" in str(err.value)
