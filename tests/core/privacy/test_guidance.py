"""Guidance on delta against 1/(number of users): the app's sidebar and the CLI's warning read it."""

from __future__ import annotations

import pytest

from dpsu_core.privacy import delta_guidance, suggested_delta


@pytest.mark.parametrize("level,delta", [("error", 2e-3), ("warning", 5e-4), ("ok", 1e-7)])
def test_delta_guidance(level, delta):
    g = delta_guidance(delta, 1000)  # 1/n = 1e-3
    assert g.level == level
    assert "1/(number of users)" in g.message
    assert g.suggested <= 1e-5 and g.suggested < 1.0 / (100 * 1000) * 1.0001


def test_suggested_delta_is_well_below_one_over_n():
    for n in [2, 17, 999, 6000, 250_000, 989_818]:
        s = suggested_delta(n)
        assert s <= 1.0 / (100 * n)
        assert s > 1.0 / (1000 * n)  # the largest power of ten that qualifies
        assert delta_guidance(s, n).level == "ok"
