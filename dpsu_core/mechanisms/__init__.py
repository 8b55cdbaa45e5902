"""Mechanisms: one module per family, a registry that the CLI, the app and the tests read."""

from .base import Calibration, Diagnostics, Mechanism, Release, make_rng
from .registry import get_mechanism, mechanisms

__all__ = ["Calibration", "Diagnostics", "Mechanism", "Release", "get_mechanism", "make_rng", "mechanisms"]
