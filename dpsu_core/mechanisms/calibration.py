"""What a mechanism fixes before it sees data: ``Calibration`` and the base of its typed ``details``.

Every mechanism family declares its own frozen details dataclass (a subclass of ``Details``) beside its update
rule: ``setunion.SetUnionDetails``, ``sips.RoundsDetails``, ``dpne.LevelsDetails``, ``pcr.PcrDetails``,
``pcr.BoundedCountsDetails``, ``greedy.GreedyDetails``. Code that needs a family's fields narrows with
``RoundsDetails.of(cal)`` (a clear error on the wrong family), so mypy checks every field it reads.
Exports read ``Details.as_dict()``: the field names are the report's keys (fields a family's other members
do not set are left out, as before the dataclasses).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Self

import numpy as np

#: a field only some members of a family set: left out of ``as_dict`` when it is None
OPTIONAL = {"optional": True}


def optional() -> Any:
    """A details field only some of a family's mechanisms set (None, and absent from the export, for the rest)."""
    return field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class Details:
    """Public, per-mechanism values of a calibration (no data). ``engine``: set by an engine that ran the release
    (the Spark engine says where the pass ran); ``item_counts``: the count step's calibration, when it ran."""

    engine: str | None = optional()
    #: set by ``item_counts.with_counts`` when noisy counts of the released items were released in the same run
    item_counts: dict[str, Any] | None = optional()

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, JSON-able, without the optional ones left unset (``engine`` last)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name != "engine" and not (v is None and f.metadata.get("optional")):
                out[f.name] = v
        if self.engine is not None:
            out["engine"] = self.engine
        return jsonable(out)

    @classmethod
    def of(cls, cal: Calibration) -> Self:
        """``cal.details`` as this family's dataclass (a programming error when the mechanism is of another)."""
        d = cal.details
        if not isinstance(d, cls):
            raise TypeError(f"{cal.mechanism}'s calibration details are {type(d).__name__}, not {cls.__name__}")
        return d


@dataclass(frozen=True)
class Calibration:
    """Everything the mechanism fixes before it sees data. Safe to publish."""

    mechanism: str
    label: str
    epsilon: float
    delta: float
    noise: str  # "laplace", "gaussian", "gumbel+gaussian"
    scale: float  # lambda (Laplace) or sigma (Gaussian); for multi-level mechanisms, the overall sigma
    rho: float | None
    gamma: float | None
    params: dict[str, Any]
    guarantee: str
    details: Details = field(default_factory=Details)

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["details"] = self.details.as_dict()
        return jsonable(out)


def jsonable(obj: Any) -> Any:
    """``obj`` with dicts, lists, tuples, numpy arrays and scalars turned into plain JSON-able values."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj
