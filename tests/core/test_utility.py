"""Utility preview: closed forms, the search, and the real mechanisms run many times (an independent check)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpsu_core.analysis.utility import has_preview, release_probability, utility_preview
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.privacy.thresholds import gaussian_scale, rho_weighted_gaussian, rho_weighted_laplace
from tests.helpers import rate_estimate


def test_weighted_gaussian_closed_form():
    eps, delta, m = 3.0, 1e-6, 100
    p = utility_preview(get_mechanism("weighted-gaussian", epsilon=eps, delta=delta, max_items=m).calibrate())
    rho, sigma = rho_weighted_gaussian(eps, delta, m), gaussian_scale(eps, delta)
    assert p.users_needed[0.5] == math.ceil(rho * math.sqrt(m))
    assert p.users_needed[0.9] == math.ceil((rho + norm.ppf(0.9) * sigma) * math.sqrt(m))


def test_weighted_laplace_closed_form_and_fewer_items_per_user_need_fewer_users():
    eps, delta, m = 2.0, 1e-7, 50
    cal = get_mechanism("weighted-laplace", epsilon=eps, delta=delta, max_items=m).calibrate()
    rho = rho_weighted_laplace(eps, delta, m)
    p = utility_preview(cal)
    assert p.users_needed[0.5] == math.ceil(rho * m)
    assert p.users_needed[0.9] == math.ceil((rho + math.log(5.0) / eps) * m)  # Laplace 0.9-quantile: lambda ln 5
    p5 = utility_preview(cal, items_per_user=5)
    assert p5.users_needed[0.5] == math.ceil(rho * 5) < p.users_needed[0.5]


def test_smallest_k_is_the_first_k_reaching_the_target():
    cal = get_mechanism("policy-laplace", epsilon=1.0, delta=1e-5, max_items=6, alpha=3).calibrate()
    p = utility_preview(cal, items_per_user=9)  # m > Delta0: binomial sampling path
    probs = [release_probability(p, k) for k in range(1, 400)]
    assert all(b >= a - 1e-12 for a, b in zip(probs, probs[1:]))  # monotone
    for t in (0.5, 0.9):
        assert p.users_needed[t] == 1 + next(i for i, v in enumerate(probs) if v >= t)


def test_cap_gamma_limits_the_policy_release_probability():
    cal = get_mechanism("policy-gaussian", epsilon=3, delta=1e-6, max_items=10, alpha=0.5).calibrate()
    p = utility_preview(cal)
    assert p.ceiling == pytest.approx(norm.cdf(0.5), rel=1e-9)  # weight stuck at Gamma = rho + 0.5 sigma
    assert p.users_needed[0.9] is None and p.users_needed[0.5] is not None
    assert "never exceeds" in p.assumptions


def test_pcr_has_no_preview():
    assert not has_preview("pcr") and has_preview("gw")
    with pytest.raises(ParameterError, match="other items"):
        utility_preview(get_mechanism("pcr", epsilon=3, delta=1e-6).calibrate())


def _holders(k: int, m: int, target_repeats: int = 1) -> list[list[str]]:
    """k users holding the same m items (the target first, repeated for frequency-ordered GW) and 30 others."""
    own = ["target"] * target_repeats + [f"other{j}" for j in range(m - 1)]
    return [list(own) for _ in range(k)] + [[f"solo{i}"] for i in range(30)]


MC_CASES = [
    # name, params, items_per_user m
    ("weighted-gaussian", {"max_items": 4}, 4),
    ("policy-gaussian", {"max_items": 4, "alpha": 3.0}, 4),
    ("policy-laplace", {"max_items": 3, "alpha": 3.0}, 3),
    ("weighted-laplace", {"max_items": 2}, 5),  # m > Delta0: each holder keeps the item with probability 2/5
    ("count-gaussian", {"max_items": 2}, 2),
    ("gw", {"alpha": 3.0, "max_items": 3}, 3),
    ("dp-sips", {"max_items": 4}, 1),  # holders hold only the item: nothing else can be released before it
    ("policy-sips", {"max_items": 4, "alpha": 1.0, "round_ratio": 0.5}, 1),  # ... and each round caps it at Γ_i
]


def test_one_round_policy_sips_previews_as_policy_gaussian():
    a = utility_preview(get_mechanism("policy-gaussian", epsilon=3, delta=1e-6, max_items=50).calibrate(), 20)
    b = utility_preview(get_mechanism("policy-sips", epsilon=3, delta=1e-6, max_items=50, rounds=1).calibrate(), 20)
    assert a.users_needed == b.users_needed and a.ceiling == pytest.approx(b.ceiling, rel=1e-12)
    assert has_preview("policy-sips") and "Γ_i" in b.assumptions


@pytest.mark.parametrize("name,params,m", MC_CASES)
def test_preview_matches_the_real_mechanism(name, params, m):
    """Run the real release 300 times on k holders; the release rate of the item must match P(k)."""
    cal_mech = get_mechanism(name, epsilon=3.0, delta=1e-4, **params)
    p = utility_preview(cal_mech.calibrate(), items_per_user=m)
    k50, k90 = p.users_needed[0.5], p.users_needed[0.9]
    rng = np.random.default_rng(12)
    for k in sorted({max(1, k50 - 2), k50, k90}):
        corpus = corpus_from_token_lists(_holders(k, m, 3 if name == "gw" else 1), posts_per_user=False)
        target = int(np.flatnonzero(corpus.vocab == "target")[0])
        runs = 300
        hits = sum(int(target in cal_mech.release(corpus, rng=rng).item_ids) for _ in range(runs))
        est = rate_estimate(hits, runs, 0.9999)
        assert est.contains(release_probability(p, k)), (name, k, hits, release_probability(p, k))
