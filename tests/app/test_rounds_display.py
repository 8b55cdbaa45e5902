"""Rounds mechanisms shown as rounds (issue 27.2): the Release page's per-round table and headline figures, the
Histogram fill's per-round shares, each against the round's own threshold. AppTest on the real app and core."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm
from streamlit.testing.v1 import AppTest

from dpsu_core.privacy import analytic_gaussian_sigma
from pages import _account
from pages._state import STATE_KEY

REPO = Path(__file__).resolve().parents[2]
APP = "../../app.py"
TIMEOUT = 120


def _go(at: AppTest, page: str) -> AppTest:
    at.switch_page(str(REPO / "pages" / f"{page}.py"))
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _metric(at: AppTest, label: str) -> str:
    for m in at.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"no metric {label!r}: {[m.label for m in at.metric]}")


def _last_round_threshold(epsilon: float, delta: float, max_items: int, rounds: int, ratio: float) -> float:
    """T_I from the closed form (docs/policy_sips.md), independently of the calibration code: sigma for
    (epsilon, delta/2), the last round's share f_I = 1 / sum_j r^j, sigma_I = sigma / sqrt(f_I), delta_I = f_I delta/2,
    T_I = max_{t <= Delta0} [1/sqrt(t) + sigma_I Phi^-1((1 - delta_I)^(1/t))]."""
    sigma = analytic_gaussian_sigma(epsilon, delta / 2)
    f_last = 1.0 / sum(ratio**j for j in range(rounds))
    s, d = sigma / math.sqrt(f_last), f_last * delta / 2
    t = np.arange(1, max_items + 1, dtype=np.float64)
    return float(np.max(1 / np.sqrt(t) + s * norm.isf(-np.expm1(np.log1p(-d) / t))))


@pytest.fixture(scope="module")
def policy_sips_page():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.sidebar.number_input(key="epsilon").set_value(3.0)
    at.sidebar.number_input(key="delta").set_value(1e-6)
    at.sidebar.number_input(key="max_items").set_value(100)
    at.run()
    _go(at, "2_release")
    at.selectbox(key="mechanism").set_value("policy-sips")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_policy_sips_release_page_shows_the_rounds_with_the_last_round_as_headline(policy_sips_page):
    at = policy_sips_page
    expected = _last_round_threshold(3.0, 1e-6, 100, rounds=3, ratio=0.02)
    assert expected == pytest.approx(9.3, abs=0.05)  # the figure the issue quotes (round 1's is 556.6)
    assert float(_metric(at, "Threshold T₃ (last round)")) == pytest.approx(expected, rel=1e-3)
    # the per-round table: three rounds, thresholds falling to the headline, every column the issue names
    (table,) = [d.value for d in at.dataframe if "Tᵢ" in d.value.columns]
    assert list(table.columns) == ["round", "σᵢ", "Tᵢ", "Γᵢ", "δᵢ", "share"]
    assert list(table["round"]) == [1, 2, 3]
    assert table["Tᵢ"].iloc[-1] == pytest.approx(expected, rel=1e-6)
    assert table["Tᵢ"].iloc[0] > 500 and np.all(np.diff(table["Tᵢ"]) < 0)
    assert table["share"].sum() == pytest.approx(1.0) and table["δᵢ"].sum() <= 1e-6 / 2
    np.testing.assert_allclose(table["Γᵢ"], table["Tᵢ"] + 5.0 * table["σᵢ"], rtol=1e-9)  # Γ_i = T_i + α σ_i
    # the headline cutoff and noise are the same round's: no round-1 figure beside the last round's
    assert float(_metric(at, "Cutoff Γ₃ (last round)")) == pytest.approx(table["Γᵢ"].iloc[-1], rel=1e-3)
    assert float(_metric(at, "Noise std σ₃ (last round)")) == pytest.approx(table["σᵢ"].iloc[-1], rel=1e-3)
    assert not any(m.label in ("Threshold ρ", "Cutoff Γ") for m in at.metric)


def test_a_single_threshold_mechanism_keeps_its_one_threshold(policy_sips_page):
    at = policy_sips_page
    at.selectbox(key="mechanism").set_value("policy-gaussian")
    at.run()
    assert not at.exception
    assert float(_metric(at, "Threshold ρ")) > 0 and float(_metric(at, "Cutoff Γ")) > 0
    assert not [d for d in at.dataframe if "Tᵢ" in d.value.columns]
    at.selectbox(key="mechanism").set_value("policy-sips")
    at.run()


def test_histogram_fill_reads_each_round_against_its_own_threshold(policy_sips_page):
    at = policy_sips_page
    for cb in at.checkbox:  # the spend gate's explicit yes, when the page asks for one
        if cb.key and cb.key.startswith("spend_yes_"):
            cb.check()
            at.run()
    at.button(key="run_release").click()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    rel = _account.current_release(at.session_state[STATE_KEY])
    assert rel.calibration.mechanism == "policy-sips" and rel.n_released > 0
    _go(at, "4_histogram")
    (rounds,) = [d.value for d in at.dataframe if "Tᵢ" in d.value.columns]
    hs = rel.diagnostics.extra["round_weights"]
    thresholds = rel.calibration.details.threshold_i
    assert len(rounds) == len(hs) == 3
    for i, (h, t) in enumerate(zip(hs, thresholds)):
        assert rounds["Tᵢ"].iloc[i] == t
        assert rounds["share_above_rho"].iloc[i] == pytest.approx((h > t).sum() / (h > 0).sum())
    # the headline row is the last round's: its share above T_3, not H_1 against T_1 (which is near 0)
    (head,) = [d.value for d in at.dataframe if "share_above_rho" in d.value.columns and "Tᵢ" not in d.value.columns]
    assert head["share_above_rho"].iloc[0] == pytest.approx(rounds["share_above_rho"].iloc[-1])
    assert _metric(at, "Share above ρ") == f"{rounds['share_above_rho'].iloc[-1]:.1%}"
