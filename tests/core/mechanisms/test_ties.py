"""Ties at the threshold: every release rule is the strict event ``weight + noise > threshold``, the event each
threshold's delta was derived for (docs/algorithms.md §2). The noise is continuous, so a tie has probability 0
and the strict and non-strict events have the same probability; the tests pin the rule itself with noise of
scale 0 (numpy's generators return the location exactly), so a later change to ``>=`` or a discrete noise would
show here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

from dpsu_core.mechanisms.base import noisy_threshold
from dpsu_core.mechanisms.greedy import noisy_candidates
from dpsu_core.privacy.thresholds import gaussian_scale, rho_weighted_gaussian


def _around(rho: float) -> np.ndarray:
    """Weights just below, exactly at and just above rho."""
    return np.array([math.nextafter(rho, -math.inf), rho, math.nextafter(rho, math.inf)])


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_dpsu_step_releases_strictly_above_the_threshold(noise):
    """The rule of Count / Weighted / Policy, every DPNE level and DPSU baseline, every DP-SIPS round and the
    bounded-counts selection (all go through ``noisy_threshold``)."""
    rho = 6.8237
    released = noisy_threshold(_around(rho), np.random.default_rng(), noise, 0.0, rho)
    assert released.tolist() == [2]  # the weight AT rho is not released


def test_greedy_candidates_release_strictly_above_the_threshold():
    rho = 4.6956
    h = np.concatenate([_around(rho), [0.0]])
    cand = np.ones(4, dtype=bool)  # weight 0 included: a capped-GW candidate
    assert noisy_candidates(h, cand, np.random.default_rng(), 0.0, rho).tolist() == [2]


def test_the_threshold_event_probability_is_the_strict_one():
    """A lone user's item with weight 1/sqrt(t) crosses rho with probability P(N(0, sigma^2) > rho - 1/sqrt(t)):
    the probability rho was derived for (including a tie would add nothing: the Gaussian has no atom). Sampled
    with the real rule at a threshold lowered so the event is frequent, against the closed form."""
    sigma = gaussian_scale(3.0, 1e-6)
    rho = rho_weighted_gaussian(3.0, 1e-6, 10) - 3.0 * sigma  # frequent enough to sample
    w = np.full(200_000, 1.0)
    hits = noisy_threshold(w, np.random.default_rng(), "gaussian", sigma, rho).size
    p = float(ndtr(-(rho - 1.0) / sigma))
    sd = math.sqrt(p * (1 - p) / w.size)
    assert abs(hits / w.size - p) < 6 * sd
