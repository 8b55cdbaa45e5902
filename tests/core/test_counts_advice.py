"""The noisy counts' advice (``counts_advice``): computed from the parameters, against its closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsu_core.analysis.counts_advice import counts_advice, users_for_signal
from dpsu_core.analysis.utility import utility_preview
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms.item_counts import calibrate_counts, mechanism_with_counts
from dpsu_core.mechanisms.registry import get_mechanism
from dpsu_core.outputs.tokenizer_export import MORE_THAN_ONCE_AT, training_frequencies


def test_the_signal_level_is_where_the_training_rule_first_counts_a_word_twice():
    sigma = 7.3
    below, at = np.nextafter(MORE_THAN_ONCE_AT * sigma, 0.0), MORE_THAN_ONCE_AT * sigma
    assert training_frequencies(np.array([below, at]), sigma).tolist() == [1, 2]


@pytest.mark.parametrize("clip", [0.25, 1.0, 3.0])
@pytest.mark.parametrize("m", [1, 4, 10, 35])
def test_users_for_signal_is_the_fewest_users_whose_expected_count_reaches_the_signal(clip, m):
    cc = calibrate_counts(3.0, 1e-5, 0.1, clip)
    per_user, k = users_for_signal(cc.sigma, cc.clip, m)
    # a user with m released words used once each: vector of m ones, norm sqrt(m), scaled to norm <= clip
    assert per_user == pytest.approx(min(1.0, clip / math.sqrt(m)))
    signal = MORE_THAN_ONCE_AT * cc.sigma
    assert k * per_user >= signal * (1 - 1e-12) and (k - 1) * per_user < signal


def test_the_advice_compares_with_the_release_at_its_part_and_the_whole_budget():
    eps, delta, share, m = 3.0, 1e-5, 0.1, 10
    mech, cc = mechanism_with_counts("policy-gaussian", epsilon=eps, delta=delta, share=share)
    whole = get_mechanism("policy-gaussian", epsilon=eps, delta=delta).calibrate()
    a = counts_advice(cc, m, mech.calibrate(), whole)
    assert a.sigma == cc.sigma and a.items_per_user == m
    assert a.users_released == utility_preview(mech.calibrate(), m).users_needed[0.5]
    assert a.users_released_whole == utility_preview(whole, m).users_needed[0.5]
    assert a.users_released >= a.users_released_whole  # less budget: a word needs at least as many users
    assert f"{a.users_for_signal:,} users" in a.text and f"{a.users_released:,} users" in a.text
    assert f"σ = {cc.sigma:.4g}" in a.text


def test_the_advice_follows_epsilon_and_stands_alone_without_a_calibration():
    lo, hi = (counts_advice(calibrate_counts(e, 1e-5), 10) for e in (1.0, 8.0))
    assert lo.sigma > hi.sigma and lo.users_for_signal > hi.users_for_signal
    assert lo.users_released is None and "set release" not in lo.text


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(ParameterError, match="items per user"):
        counts_advice(calibrate_counts(1.0, 1e-5), 0)
    with pytest.raises(ParameterError, match="counts' calibration"):
        counts_advice(None, 10)  # type: ignore[arg-type]
