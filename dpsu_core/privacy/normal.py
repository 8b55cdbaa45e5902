"""The standard normal quantile Phi^-1 in numpy, so a threshold needs no scipy at run time.

``ndtri(p)`` evaluates Wichura's algorithm AS241 (PPND16; Applied Statistics 37(3), 1988, 477-484):
three rational approximations of degree 7/7, one for |p - 1/2| <= 0.425 in q = p - 1/2 and two in
r = sqrt(-ln min(p, 1-p)) for the tails (r <= 5 and 5 < r <= 27), each accurate to about 1e-16 relative
in exact arithmetic. Evaluated in floats (Horner, positive coefficients), the result stays within
1e-14 relative of the exact quantile: ``tests/core/privacy/test_normal.py`` checks that against mpmath
at 60 digits on a dense grid of p down to 1e-300 and across the branch boundaries. The thresholds
(``thresholds.RHO_MARGIN`` = 1e-12) are raised by far more than that.

Below p = 1e-300 (only for deltas near the smallest floats) the values go to scipy's ``ndtri``
(imported then, and only then).
"""

from __future__ import annotations

import numpy as np

_TINY = 1e-300  # below: scipy

# AS241 coefficients, highest degree first (numerator, denominator)
_CENTRAL = (
    (
        2.5090809287301226727e3,
        3.3430575583588128105e4,
        6.7265770927008700853e4,
        4.5921953931549871457e4,
        1.3731693765509461125e4,
        1.9715909503065514427e3,
        1.3314166789178437745e2,
        3.3871328727963666080e0,
    ),
    (
        5.2264952788528545610e3,
        2.8729085735721942674e4,
        3.9307895800092710610e4,
        2.1213794301586595867e4,
        5.3941960214247511077e3,
        6.8718700749205790830e2,
        4.2313330701600911252e1,
        1.0,
    ),
)
_NEAR = (
    (
        7.7454501427834140764e-4,
        2.2723844989269184583e-2,
        2.4178072517745061177e-1,
        1.2704582524523683826e0,
        3.6478483247632045605e0,
        5.7694972214606914055e0,
        4.6303378461565452959e0,
        1.4234371107496835773e0,
    ),
    (
        1.0507500716444168432e-9,
        5.4759380849953449460e-4,
        1.5198666563616457197e-2,
        1.4810397642748007459e-1,
        6.8976733498510000455e-1,
        1.6763848301838038494e0,
        2.0531916266377588219e0,
        1.0,
    ),
)
_FAR = (
    (
        2.0103343992922881327e-7,
        2.7115555687434875782e-5,
        1.2426609473880784386e-3,
        2.6532189526576123093e-2,
        2.9656057182850489123e-1,
        1.7848265399172913358e0,
        5.4637849111641143699e0,
        6.6579046435011037772e0,
    ),
    (
        2.0442631033899397856e-15,
        1.4215117583164458887e-7,
        1.8463183175100546818e-5,
        7.8686913114561329059e-4,
        1.4875361290850614852e-2,
        1.3692988092273580531e-1,
        5.9983220655588793769e-1,
        1.0,
    ),
)


def _ratio(coef: tuple[tuple[float, ...], tuple[float, ...]], x: np.ndarray) -> np.ndarray:
    num, den = np.zeros_like(x), np.zeros_like(x)
    for a, b in zip(*coef):
        num = num * x + a
        den = den * x + b
    return num / den


def ndtri(p: np.ndarray | float) -> np.ndarray:
    """Phi^-1(p) for 0 < p < 1, elementwise (float64); -inf at 0, +inf at 1, nan outside [0, 1]."""
    p = np.asarray(p, dtype=np.float64)
    flat = np.atleast_1d(p).ravel()
    out = np.full(flat.shape, np.nan)
    q = flat - 0.5
    central = np.abs(q) <= 0.425
    if central.any():
        qc = q[central]
        out[central] = qc * _ratio(_CENTRAL, 0.180625 - qc * qc)
    tail_p = np.where(q < 0.0, flat, 1.0 - flat)  # the smaller of p and 1 - p
    tail = ~central & (tail_p >= _TINY) & (tail_p <= 0.5)
    if tail.any():
        r = np.sqrt(-np.log(tail_p[tail]))
        near = r <= 5.0
        x = np.empty_like(r)
        x[near] = _ratio(_NEAR, r[near] - 1.6)
        x[~near] = _ratio(_FAR, r[~near] - 5.0)
        out[tail] = np.where(q[tail] < 0.0, -x, x)
    rest = ~central & ~tail & (flat >= 0.0) & (flat <= 1.0)
    if rest.any():
        from scipy.special import ndtri as scipy_ndtri

        out[rest] = scipy_ndtri(flat[rest])
    return out.reshape(p.shape)
