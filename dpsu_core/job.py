"""One release job: what a release will do, built once, priced once, charged once, and run exactly as charged.

The CLI's flags, the app's widgets and the API all make a ``ReleaseJob`` (``ReleaseJob.build``): the mechanism at
its (epsilon, delta) (the set release's part of it with noisy counts), its calibration computed once, the noisy
counts' calibration, the seed (teaching only) and the engine. The job then

  * states its cost (``entries``: the ledger entries a charge records, the set release's and the counts');
  * names itself for the durable store (``request_key``: identical requests on one corpus share a key, so an
    earlier release's public output is offered before spending again; ``record``: the JSON the store keeps);
  * runs (``run``) with the very mechanism and calibration it was priced with: nothing is rebuilt between the
    charge and the noise, and ``run`` refuses a release whose calibration is not the charged one.

Nothing here looks at data: a job is parameters and calibrations only (public).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .accounting.ledger import LedgerEntry, LedgerTotal, total
from .accounting.spend import counts_entry
from .errors import ParameterError
from .mechanisms import Calibration, Mechanism, Release, get_mechanism, list_mechanisms
from .mechanisms.base import ProgressFn
from .mechanisms.item_counts import (
    CountsCalibration,
    check_countable,
    mechanism_with_counts,
    release_with_counts,
)

ENGINES = ("local", "spark")


@dataclass(frozen=True)
class ReleaseJob:
    """A release configured and priced: run it with ``run`` after its ``entries`` were charged."""

    mechanism: Mechanism
    calibration: Calibration  # the set release's, computed once (``mechanism.calibrate()``)
    counts: CountsCalibration | None = None
    seed: int | None = None  # teaching only: the noise can be recomputed from it
    engine: str = "local"

    @classmethod
    def build(
        cls,
        name: str,
        epsilon: float,
        delta: float,
        values: Mapping[str, object] | None = None,
        *,
        counts: tuple[float, float] | None = None,
        seed: int | None = None,
        engine: str = "local",
        strict: bool = False,
    ) -> ReleaseJob:
        """The job of mechanism ``name`` at (``epsilon``, ``delta``) with the parameters it takes from ``values``
        (``Mechanism.params_for``; ``strict``: a parameter it would ignore is an error, as on the CLI); ``counts``
        (share, clip): noisy counts of the released items take that share of the budget."""
        if engine not in ENGINES:
            raise ParameterError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
        regs = list_mechanisms()
        params = regs[name].params_for(dict(values or {}), strict=strict) if name in regs else {}
        cc = None
        if counts is not None:
            if name in regs:
                check_countable(regs[name])
            share, clip = counts
            mech, cc = mechanism_with_counts(name, epsilon=epsilon, delta=delta, share=share, clip=clip, **params)
        else:
            mech = get_mechanism(name, epsilon=epsilon, delta=delta, **params)
        return cls(mech, mech.calibrate(), cc, seed, engine)

    @classmethod
    def of(cls, mechanism: Mechanism, counts: CountsCalibration | None = None, **kw: Any) -> ReleaseJob:
        """The job of a mechanism already built (priced now, once)."""
        return cls(mechanism, mechanism.calibrate(), counts, **kw)

    # ---- what it costs ---------------------------------------------------------------------------------------
    @property
    def teaching(self) -> bool:
        return self.seed is not None

    @property
    def label(self) -> str:
        return self.calibration.label

    @property
    def epsilon(self) -> float:
        """The whole release's epsilon (with noisy counts: the set's and the counts' together)."""
        return self.calibration.epsilon if self.counts is None else self.counts.total_epsilon

    @property
    def delta(self) -> float:
        return self.calibration.delta if self.counts is None else self.counts.total_delta

    def planned(self) -> list[tuple[Calibration, int]]:
        """(calibration, releases) of the set release, as the spend gate plans it (the counts' step is added to a
        plan by ``spend.plan_with_counts``)."""
        return [(self.calibration, 1)]

    def entries(self, *, corpus_id: Any, source: str) -> tuple[LedgerEntry, ...]:
        """The ledger entries a charge of this job records: the set release's, and the counts' step."""
        first = LedgerEntry.from_calibration(
            self.calibration, corpus_id=corpus_id, source=source, teaching=self.teaching
        )
        if self.counts is None:
            return (first,)
        return first, counts_entry(self.counts, corpus_id=corpus_id, source=source, teaching=self.teaching)

    def cost(self) -> LedgerTotal:
        """What this job alone spends (every composition that applies)."""
        return total(list(self.entries(corpus_id=None, source="preview")))

    # ---- how the store names it --------------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        """The job as the store keeps it (public: parameters and calibrations)."""
        cal = self.calibration
        return {
            "mechanism": cal.mechanism,
            "label": cal.label,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "set_epsilon": cal.epsilon,
            "set_delta": cal.delta,
            "noise": cal.noise,
            "scale": cal.scale,
            "params": {k: _jsonable(v) for k, v in sorted(cal.params.items())},
            "counts": None if self.counts is None else self.counts.as_dict(),
            "seeded": self.teaching,
            "engine": self.engine,
        }

    def request_key(self, corpus_key: str | int) -> str:
        """The identity of this request on a corpus: identical requests (same corpus, mechanism, parameters,
        counts) share it, whatever the seed or engine, so an earlier release can be offered before spending again."""
        rec = {k: v for k, v in self.record().items() if k not in ("seeded", "engine")}
        body = json.dumps([str(corpus_key), rec], sort_keys=True, default=str)
        return hashlib.blake2b(body.encode("utf-8"), digest_size=16).hexdigest()

    # ---- running it --------------------------------------------------------------------------------------------
    def run(self, corpus: Any, *, progress: ProgressFn | None = None) -> Release:
        """The release, with the mechanism and calibration this job was priced with (on the Spark engine:
        ``corpus`` is a ``SparkCorpus``). Refuses to run when the mechanism's calibration is no longer the one
        charged (it cannot change: the mechanism is frozen in the job)."""
        if self.mechanism.calibrate().as_dict() != self.calibration.as_dict():
            raise RuntimeError("the release's calibration is not the one charged; nothing was run")
        if self.engine == "spark":
            if self.counts is not None:
                raise ParameterError("noisy counts run on the local engine only")
            from .engines.spark import spark_release

            return spark_release(self.mechanism, corpus, seed=self.seed)
        if self.counts is not None:
            return release_with_counts(self.mechanism, self.counts, corpus, seed=self.seed, progress=progress)
        return self.mechanism.release(corpus, seed=self.seed, progress=progress)


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)
