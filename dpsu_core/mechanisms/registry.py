"""The registry of mechanisms: the CLI's names, the app's drop-down and the tests all read it.

``MECHANISM_CLASSES`` is an explicit list: a new mechanism is its own module (its class declares every trait,
``Mechanism.missing_traits``) plus one line here. Nothing registers itself on import, and the families never
import this module, so there is no import circle.
"""

from __future__ import annotations

from typing import Any

from ..errors import ParameterError
from .base import Mechanism
from .dpne import DPNE, DPSUAll, DPSUEven, DPSUSingle
from .greedy import Gw, GwKt
from .pcr import BoundedCounts, PrivateCountRelease
from .policy_sips import PolicySips
from .setunion import (
    CountGaussian,
    CountLaplace,
    PolicyGaussian,
    PolicyLaplace,
    WeightedGaussian,
    WeightedLaplace,
)
from .sips import DpSips

#: every mechanism, in the order the CLI, the app and the comparisons list them
MECHANISM_CLASSES: tuple[type[Mechanism], ...] = (
    DPNE,
    DPSUAll,
    DPSUEven,
    DPSUSingle,
    Gw,
    GwKt,
    PrivateCountRelease,
    BoundedCounts,
    CountLaplace,
    CountGaussian,
    WeightedLaplace,
    WeightedGaussian,
    PolicyLaplace,
    PolicyGaussian,
    DpSips,
    PolicySips,
)


def list_mechanisms(*kinds: str) -> dict[str, type[Mechanism]]:
    """All mechanisms by CLI name, in ``MECHANISM_CLASSES`` order; only those of the given kinds if any are given
    ("set-union", "ngram", "count")."""
    out: dict[str, type[Mechanism]] = {}
    for cls in MECHANISM_CLASSES:
        if cls.name in out:
            raise RuntimeError(f"mechanism {cls.name!r} listed twice")
        if not kinds or cls.kind in kinds:
            out[cls.name] = cls
    return out


def mechanism_class(name: str) -> type[Mechanism]:
    """The class of the mechanism called ``name``; a clear error naming the choices otherwise."""
    regs = list_mechanisms()
    if name not in regs:
        raise ParameterError(f"unknown mechanism {name!r}; choose one of: {', '.join(regs)}")
    return regs[name]


def get_mechanism(name: str, *, epsilon: float, delta: float, **params: Any) -> Mechanism:
    """The mechanism called ``name``, set up with (epsilon, delta) and its parameters."""
    return mechanism_class(name)(epsilon=epsilon, delta=delta, **params)
