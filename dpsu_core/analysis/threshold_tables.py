"""Calibration tables for every set-union mechanism: rho, Gamma and the noise scale against epsilon or Delta0.

Public data only: a calibration depends on the parameters, never on the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..mechanisms import list_mechanisms
from ..privacy.thresholds import laplace_scale, rho_greedy_published
from ..privacy.validate import check_max_items

COLUMNS = ["mechanism", "label", "family", "epsilon", "scale", "rho", "gamma"]


def _values(values: Any, name: str, example: str) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        values = [values]
    out = list(values)
    if not out:
        raise ParameterError(f"{name} is empty; give at least one value, e.g. {example}")
    return out


def _set_union_classes():
    return list(list_mechanisms("set-union").values())


def _row(cls, epsilon: float, delta: float, params: dict[str, Any]) -> dict[str, Any]:
    cal = cls(epsilon=epsilon, delta=delta, **cls.params_for(params)).calibrate()
    view = cls.calibration_view(cal)  # rounds (DP-SIPS): the last round's threshold and cutoff, the ones most cross
    return {
        "mechanism": cls.name,
        "label": cls.label,
        "family": cls.family,
        "epsilon": cal.epsilon,
        "scale": cal.scale,
        "rho": np.nan if view.threshold is None else view.threshold,
        "gamma": np.nan if view.cutoff is None else view.cutoff,
    }


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=columns)
    for c in ("epsilon", "scale", "rho", "gamma"):
        df[c] = df[c].astype(np.float64)
    return df


PUBLISHED_GW = "gw-published"
PUBLISHED_GW_LABEL = "GW as published (unproven reference)"


def _published_gw_row(epsilon: float, delta: float) -> dict[str, Any]:
    """Carvalho et al.'s rho = 1 - ln(2 delta)/eps, shown as an unproven reference line only: its proof misses
    spill-over to other users' items (``privacy.thresholds.rho_greedy_published``); no mechanism uses it."""
    return {
        "mechanism": PUBLISHED_GW,
        "label": PUBLISHED_GW_LABEL,
        "family": "laplace",
        "epsilon": float(epsilon),
        "scale": laplace_scale(epsilon),
        "rho": rho_greedy_published(epsilon, delta),
        "gamma": np.nan,
    }


def thresholds_vs_epsilon(
    epsilons,
    delta: float,
    max_items: int,
    alpha: float,
    *,
    include_published_gw: bool = False,
) -> pd.DataFrame:
    """One row per (set-union mechanism, epsilon): columns mechanism, label, family, epsilon, scale, rho, gamma.

    gamma is NaN for mechanisms without a cutoff. Each mechanism receives only the parameters it takes
    (GW/GW-KT take Delta0 too: their capped threshold grows with ln(e^eps + Delta0 - 1)).
    ``include_published_gw`` adds the published, unproven GW threshold as a reference row (``PUBLISHED_GW``).
    """
    eps = _values(epsilons, "epsilons", "[0.5, 1, 2, 4]")
    params = {"max_items": max_items, "alpha": alpha}
    rows = [_row(cls, e, delta, params) for cls in _set_union_classes() for e in eps]
    if include_published_gw:
        rows += [_published_gw_row(e, delta) for e in eps]
    return _frame(rows, COLUMNS)


def thresholds_vs_max_items(
    max_items_list,
    epsilon: float,
    delta: float,
    alpha: float,
    *,
    include_published_gw: bool = False,
) -> pd.DataFrame:
    """One row per (set-union mechanism, Delta0): the columns of ``thresholds_vs_epsilon`` plus max_items."""
    ms = [check_max_items(m) for m in _values(max_items_list, "max_items_list", "[1, 10, 100, 300]")]
    rows = []
    for cls in _set_union_classes():
        for m in ms:
            row = _row(cls, epsilon, delta, {"max_items": m, "alpha": alpha})
            row["max_items"] = m
            rows.append(row)
    if include_published_gw:
        rows += [{**_published_gw_row(epsilon, delta), "max_items": m} for m in ms]
    df = _frame(rows, COLUMNS + ["max_items"])
    df["max_items"] = df["max_items"].astype(np.int64)
    return df
