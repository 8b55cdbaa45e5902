"""Privacy at every corner of the documented parameter space (issue 26).

Every registered mechanism (``MECHANISM_CLASSES``: a new one is swept without editing this file) is released at
every corner of its parameters' documented ranges (``tests/corners.py``) on the canary corpus: 400 users sharing
seven words, each holding one word of its own. A corner either runs and releases no lone word (at delta <= 1e-6:
none at all; at delta = 0.5, the app's largest, no more than a lone word's chance of at most delta allows), or is
refused with one line (a ``DpsuError``). Nothing else: a crash, a traceback or a warning fails the sweep.

The Monte Carlo at each mechanism's hardest corner (most rounds, smallest ratio, largest alpha, the smallest
epsilon the docs call typical) checks the lone-user release rate against delta with an exact binomial bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsu_core.errors import DpsuError
from dpsu_core.mechanisms.registry import MECHANISM_CLASSES
from dpsu_core.params import PARAMS
from tests.corners import CANARY_USERS, SMALL_DELTA, canary_corpus, corner_grid, lone_items
from tests.helpers import lone_user_release_rate


@pytest.mark.parametrize("cls", MECHANISM_CLASSES, ids=lambda c: c.name)
def test_no_lone_word_at_any_corner(cls):
    corpus = canary_corpus()
    rng = np.random.default_rng(2026)  # test data and a reproducible sweep; releases in the product seed from the OS
    ran, refused, typical_ran = 0, 0, False
    for eps, delta, params in corner_grid(cls):
        where = f"{cls.name} epsilon={eps:g} delta={delta:g} {params}"
        try:
            rel = cls(epsilon=eps, delta=delta, **params).release(corpus, rng=rng)
        except DpsuError as e:  # a corner the mechanism cannot serve: one clear line
            msg = str(e)
            assert msg and "\n" not in msg and "Traceback" not in msg, where
            refused += 1
            continue
        ran += 1
        typical_ran |= (eps, delta, params) == (1.0, SMALL_DELTA, {})
        lone = lone_items(rel.items)
        if delta <= SMALL_DELTA:
            assert not lone, f"{where}: released {len(lone)} lone words, e.g. {lone[:3]}"
        else:
            # each lone word comes out with probability <= delta: far fewer than all of them, in any corner
            bound = CANARY_USERS * delta + 6 * math.sqrt(CANARY_USERS * delta * (1 - delta))
            assert len(lone) <= bound, f"{where}: released {len(lone)} lone words"
    # the sweep releases: at least the defaults at a typical budget run (PCR refuses many corners of eps_star and
    # delta_star that its epsilon and delta cannot pay for, each with one line)
    assert typical_ran and ran > 0, f"{cls.name}: {refused} of {ran + refused} corners refused"


def _hardest_corner(cls) -> dict:
    """Most rounds, smallest round ratio, largest alpha; everything else at its default."""
    out = {}
    for name in cls.param_names:
        spec = PARAMS[name]
        if name in ("rounds", "alpha"):
            out[name] = int(spec.maximum) if spec.kind == "int" else spec.maximum
        elif name in ("ratio", "round_ratio"):
            out[name] = spec.minimum
    return out


TYPICAL_SMALLEST_EPSILON = 0.1  # "typical values are 0.1 to 10" (privacy.validate.check_epsilon)
DELTA_MC = 0.05


@pytest.mark.parametrize("cls", MECHANISM_CLASSES, ids=lambda c: c.name)
def test_lone_user_rate_at_the_hardest_corner_is_at_most_delta(cls):
    params = _hardest_corner(cls)

    def factory():
        return cls(epsilon=TYPICAL_SMALLEST_EPSILON, delta=DELTA_MC, **params)

    est = lone_user_release_rate(factory, 600, n_unique=5, n_users=120, seed=7)
    assert est.lower <= DELTA_MC, (cls.name, params, est)
