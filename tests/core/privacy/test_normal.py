"""``privacy.normal.ndtri`` (AS241 in numpy) against the exact normal quantile (mpmath, 60 digits).

The thresholds' margin (1e-12 relative) relies on ndtri staying within 1e-14 of the exact quantile; the
reference here is the root of Phi(x) = p found by mpmath's own solver, independent of AS241.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from dpsu_core.privacy.normal import ndtri

BOUND = 1e-14  # relative; the module docstring's promise


def _exact_quantile(p: float) -> mp.mpf:
    """The root of ln Phi(x) = ln p (lower half; the upper half by symmetry, 1 - p being exact there)."""
    with mp.workdps(60):
        lower = mp.mpf(p) if p < 0.5 else 1 - mp.mpf(p)  # exact: p and 1 - p (p >= 1/2) are exact
        if lower == mp.mpf(0.5):
            return mp.mpf(0)
        x0 = -mp.sqrt(2 * -mp.log(lower)) if lower < 1e-3 else mp.sqrt(2) * mp.erfinv(2 * lower - 1)
        x = mp.findroot(lambda x: mp.log(mp.ncdf(x)) - mp.log(lower), x0)
        return x if p < 0.5 else -x


def _grid() -> np.ndarray:
    tails = 10.0 ** -np.linspace(0.31, 300, 181)  # lower tail to 1e-300
    # the branch boundaries: |p - 1/2| = 0.425 and r = sqrt(-ln p) = 5, a hair either side
    edges = [0.075, 0.925, float(np.exp(-25.0))]
    edges = [x for e in edges for x in (np.nextafter(e, 0), e, np.nextafter(e, 1))]
    central = np.linspace(0.0751, 0.9249, 41)
    upper = 1.0 - 10.0 ** -np.linspace(0.31, 15.5, 31)
    return np.concatenate([tails, edges, central, upper])


@pytest.mark.parametrize("p", _grid().tolist())
def test_ndtri_is_within_its_bound_of_the_exact_quantile(p):
    got = float(ndtri(p))
    exact = _exact_quantile(p)
    with mp.workdps(60):
        assert abs(mp.mpf(got) - exact) <= BOUND * abs(exact)


def test_the_check_can_fail():
    # power: a quantile off by 1e-13 relative is caught by the same comparison
    p = 1e-9
    exact = _exact_quantile(p)
    with mp.workdps(60):
        off = mp.mpf(float(ndtri(p)) * (1 + 1e-13))
        assert abs((off - exact) / exact) > BOUND


def test_vector_shapes_and_edges():
    ps = np.array([[0.0, 1e-320, 0.5], [1.0, 2.0, -0.1]])
    out = ndtri(ps)
    assert out.shape == ps.shape
    assert out[0, 0] == -np.inf and out[1, 0] == np.inf and out[0, 2] == 0.0
    assert np.isnan(out[1, 1]) and np.isnan(out[1, 2])
    assert -40 < out[0, 1] < -38  # below 1e-300: scipy's value, finite and in the right place
    assert ndtri(0.975).shape == ()
