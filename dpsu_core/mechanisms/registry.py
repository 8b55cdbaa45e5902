"""The registry of mechanisms: the CLI's names, the app's drop-down and the tests all read it."""

from __future__ import annotations

from typing import Any

from ..errors import ParameterError
from .base import Mechanism

_REGISTRY: dict[str, type[Mechanism]] = {}


def register(cls: type[Mechanism]) -> type[Mechanism]:
    if cls.name in _REGISTRY:
        raise RuntimeError(f"mechanism {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    # Importing a module registers its mechanisms. Each family lives in one module.
    from . import (
        dpne,  # noqa: F401  DPNE and the DPSU-all / -even / -single baselines
        greedy,  # noqa: F401  GW, GW-KT
        pcr,  # noqa: F401  PCR and the bounded-counts baseline
        policy_sips,  # noqa: F401  Policy DP-SIPS (iterated policy-Gaussian rounds)
        setunion,  # noqa: F401  count / weighted / policy, Laplace and Gaussian
        sips,  # noqa: F401  DP-SIPS (iterated weighted-Gaussian rounds)
    )


def mechanisms(*kinds: str) -> dict[str, type[Mechanism]]:
    """All mechanisms by CLI name, in registration order; only those of the given kinds if any are given
    ("set-union", "ngram", "count")."""
    _load_all()
    return {n: cls for n, cls in _REGISTRY.items() if not kinds or cls.kind in kinds}


def get_mechanism(name: str, *, epsilon: float, delta: float, **params: Any) -> Mechanism:
    regs = mechanisms()
    if name not in regs:
        raise ParameterError(f"unknown mechanism {name!r}; choose one of: {', '.join(regs)}")
    return regs[name](epsilon=epsilon, delta=delta, **params)
