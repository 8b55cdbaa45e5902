"""Mechanisms: one module per family, and ``registry``, the explicit list of their classes.

The registry's names load on first use (PEP 562), so importing ``mechanisms.base`` (the contract) does not
import every family's kernels.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import Calibration, Diagnostics, Mechanism, Release, make_rng

_FROM_REGISTRY = ("MECHANISM_CLASSES", "get_mechanism", "list_mechanisms", "mechanism_class")

__all__ = [
    "MECHANISM_CLASSES",
    "Calibration",
    "Diagnostics",
    "Mechanism",
    "Release",
    "get_mechanism",
    "list_mechanisms",
    "make_rng",
    "mechanism_class",
]

if TYPE_CHECKING:
    from .registry import MECHANISM_CLASSES, get_mechanism, list_mechanisms, mechanism_class


def __getattr__(name: str) -> Any:
    if name not in _FROM_REGISTRY:
        raise AttributeError(f"module 'dpsu_core.mechanisms' has no attribute {name!r}")
    return getattr(importlib.import_module(".registry", __name__), name)
