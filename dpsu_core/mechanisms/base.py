"""The contract every mechanism follows: validate -> calibrate() -> release(corpus) -> Release.

* ``Calibration`` is public: it depends only on the parameters, never on data.
* ``Release`` holds the private output (released items, and for count mechanisms the
  noisy counts with their standard deviation) plus a separate ``Diagnostics`` object
  of NON-PRIVATE values computed from the raw data (weights H, true counts, ...).
  Exports read only the private fields; see ``Release.private_frame``.
"""

from __future__ import annotations

import abc
import inspect
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..corpus.model import check_release_call
from ..errors import ParameterError
from ..params import PARAMS, ParamSpec, resolve_params
from ..privacy.norms import check_descent_range
from ..privacy.validate import check_budget, check_seed
from .calibration import Calibration, Details
from .seam import EngineCorpus, rows_here
from .traits import CalibrationView, Stages, single_view

if TYPE_CHECKING:
    from ..privacy.cost import LaplaceCost, ZcdpCost

ProgressFn = Callable[[float, str], None]


@dataclass(frozen=True)
class Diagnostics:
    """Values computed from the raw data. NOT differentially private: never export them."""

    weights: np.ndarray | None = None  # H over the corpus vocabulary (float64), or None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Release:
    """The private output (``items``, ``ngram_len`` and, for count mechanisms, ``noisy_counts`` with
    ``count_std``) plus bookkeeping that is NOT private and never exported: ``item_ids`` (links into the
    corpus vocabulary, whose ids follow the raw file's order), ``elapsed_seconds`` (a timing of the pass
    over the raw data) and ``diagnostics``. Exports read ``private_frame()`` only."""

    calibration: Calibration
    item_ids: np.ndarray  # int64 ids into corpus.vocab; -1 for a released item the corpus never contained
    items: np.ndarray  # object array of str
    ngram_len: np.ndarray  # int16
    noisy_counts: np.ndarray | None = None  # released (rounded) noisy counts, count mechanisms only
    count_std: np.ndarray | None = None  # standard deviation of each released count's noise
    seed: int | None = None  # set only when the caller fixed a seed (teaching): not for real releases
    elapsed_seconds: float = 0.0
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    privacy_unit: str = ""  # who one user of the guarantee is (from the corpus: SourceInfo.privacy_unit)
    tokenization: str = ""  # how words were cut, as a method (SourceInfo.tokenization): no data in it

    @property
    def n_released(self) -> int:
        return int(self.items.shape[0])

    def per_length(self) -> dict[int, int]:
        if self.ngram_len.size == 0:
            return {}
        ks, cs = np.unique(self.ngram_len, return_counts=True)
        return {int(k): int(c) for k, c in zip(ks, cs)}

    @property
    def seeded(self) -> bool:
        return self.seed is not None

    def private_columns(self) -> dict[str, np.ndarray]:
        """The released output by column: item, n, and for count mechanisms count and std. Nothing else."""
        data = {"item": self.items.astype(object), "n": self.ngram_len.astype(np.int64)}
        if self.noisy_counts is not None:
            data["count"] = np.asarray(self.noisy_counts)
            data["std"] = np.asarray(self.count_std, dtype=np.float64)
        return data

    def private_frame(self):
        """``private_columns`` as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.private_columns())


def check_release(release: Any) -> Release:
    """A ``Release`` at an API boundary (exports, the tokenizer): anything else is a ParameterError saying so."""
    if not isinstance(release, Release):
        raise ParameterError(
            f"expected a Release (from mechanism.release(corpus)), got {type(release).__name__}; "
            "run a mechanism first and export its result"
        )
    return release


@dataclass(frozen=True)
class ReleaseParts:
    """What a mechanism's ``_release`` hands back; only ``Mechanism.release`` turns it into a ``Release``.

    ``ids``: released item ids into corpus.vocab. ``extra_items`` / ``extra_len``: released strings the
    corpus never contained (DPNE's spurious n-grams). ``noisy_counts`` / ``count_std``: count mechanisms,
    aligned with ``ids``.
    """

    ids: np.ndarray
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    extra_items: np.ndarray | None = None
    extra_len: np.ndarray | None = None
    noisy_counts: np.ndarray | None = None
    count_std: np.ndarray | None = None


class Mechanism(abc.ABC):
    """Base class. Subclasses set the class variables and implement ``calibrate`` and ``_release``;
    ``release`` (the same for every mechanism) draws the randomness, times the pass over the data and
    builds the ``Release``.

    Traits: what other modules need to know about a mechanism is declared here, on its class, and nowhere else
    (no other module switches on mechanism names or on keys of ``Calibration.details``). Every class must
    declare (``missing_traits`` lists what a class lacks; a test runs it over the registry):

    * ``param_names``: the parameters it takes (their specs: ``params.PARAMS``);
    * ``order_free``: True when its only pass over the users is an order-free DPSU step
      (``dpsu_step.weighted_histogram``), so it runs as it stands with that pass on Spark executors;
    * ``privacy_cost(cal)``: its cost as approximate zCDP for the ledger, or None (pure-epsilon / Laplace);
    * ``preview_stages(cal, m_kept)``: its release rule for the utility preview, or None with
      ``no_preview_reason`` saying why;
    * ``noise_quantities(cal)``: its noise, each quantity under its own name, for display.

    Optional, with defaults: ``preview_max_items`` (Δ0 the preview samples with), ``preview_first_in_order``
    (the preview's item comes first in every holder's order, so it is never sampled out: GW),
    ``calibration_view(cal)`` (how the app, the CLI and the report show the calibration: one threshold and
    cutoff, or a table of rounds), ``takes_public_corpus`` (its constructor takes a public corpus: GW-KT).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    family: ClassVar[str]  # "laplace" or "gaussian" (or "gumbel" for PCR)
    kind: ClassVar[str] = "set-union"  # "set-union", "ngram" or "count"
    param_names: ClassVar[tuple[str, ...]]
    summary: ClassVar[str] = ""
    #: what the guarantee sentence calls the output
    output_noun: ClassVar[str] = "set of released items"
    #: parallel: the only pass over the users is an order-free DPSU step (runs on Spark executors)
    order_free: ClassVar[bool]
    #: why there is no utility preview (``preview_stages`` returns None), or None when there is one
    no_preview_reason: ClassVar[str | None] = None
    #: the previewed item comes first in each holder's order (never sampled out)
    preview_first_in_order: ClassVar[bool] = False
    #: the constructor takes a public corpus (``public_source``) the analyst may upload (GW-KT)
    takes_public_corpus: ClassVar[bool] = False

    # ---- traits: what the ledger, the utility preview, the display and the engines read
    @classmethod
    @abc.abstractmethod
    def privacy_cost(cls, cal: Calibration) -> ZcdpCost | None:
        """One release's cost as approximate zCDP (public: from the calibration), or None when the mechanism is
        not zCDP-accounted (Laplace family, GW): the ledger then composes it by basic composition only."""

    @classmethod
    def laplace_cost(cls, cal: Calibration) -> LaplaceCost | None:
        """One release as a Laplace mechanism plus a threshold event (the ledger's privacy-loss-distribution
        composition), or None (the default): a release that is neither this nor a Gaussian mechanism enters that
        composition through its own stated (epsilon, delta) bound."""
        return None

    @classmethod
    @abc.abstractmethod
    def preview_stages(cls, cal: Calibration, m_kept: int) -> Stages | None:
        """The noisy thresholds one item must pass when each kept holder has ``m_kept`` kept items (the utility
        preview's model, ``utility``), or None when the release rule cannot be previewed from parameters alone."""

    @classmethod
    @abc.abstractmethod
    def noise_quantities(cls, cal: Calibration) -> list[tuple[str, float]]:
        """(name, value) of the noise, each under its own name (a Gumbel scale is not a standard deviation)."""

    @classmethod
    def preview_max_items(cls, cal: Calibration) -> int:
        """The per-user cap Δ0 the utility preview samples with (0: no cap)."""
        return int(cal.params.get("max_items") or 0)

    @classmethod
    def calibration_notes(cls, cal: Calibration) -> list[tuple[str, str]]:
        """(name, text) lines the CLI's ``calibrate`` adds after the calibration's values (none by default)."""
        return []

    @classmethod
    def calibration_view(cls, cal: Calibration) -> CalibrationView:
        """How its calibration is displayed (Release, Thresholds, Histogram fill, Coverage, ``dpsu calibrate``, the
        report): by default one noise scale, one threshold rho and one cutoff Gamma; rounds mechanisms show a
        table of rounds with the last round's figures as the headline (``traits.rounds_view``)."""
        return single_view(cls.noise_quantities(cal), cal)

    @classmethod
    def missing_traits(cls) -> list[str]:
        """The traits this class does not declare (empty for a complete mechanism)."""
        missing = [t for t in ("name", "label", "family") if not isinstance(getattr(cls, t, None), str)]
        if not isinstance(getattr(cls, "param_names", None), tuple):
            missing.append("param_names")
        if not isinstance(getattr(cls, "order_free", None), bool):
            missing.append("order_free")
        missing += sorted(getattr(cls, "__abstractmethods__", ()))
        return missing

    def __init__(self, *, epsilon: float, delta: float, **params: Any) -> None:
        self.epsilon, self.delta = check_budget(epsilon, delta)
        self.params = resolve_params(self.name, self.param_names, params)

    # ---- which parameters the mechanism takes: the CLI flags, the app's widgets and compare read these
    @classmethod
    def param_specs(cls) -> list[ParamSpec]:
        """The ``ParamSpec`` of every declared parameter (``param_names``), in that order."""
        return [PARAMS[n] for n in cls.param_names]

    @classmethod
    def accepted_params(cls) -> tuple[str, ...]:
        """Every keyword argument besides epsilon and delta: the declared parameters (``param_names``) plus
        any keyword-only argument the constructor adds (e.g. GW-KT's ``public_source``)."""
        extra = [
            p.name
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in ("epsilon", "delta")
        ]
        return tuple(dict.fromkeys([*cls.param_names, *extra]))

    @classmethod
    def params_for(cls, values: Mapping[str, Any] | None, *, strict: bool = False) -> dict[str, Any]:
        """The keyword arguments this mechanism takes, from a shared set of values (CLI flags, app widgets,
        a comparison's parameters): every declared parameter filled with its default when unset (None) and
        validated through its spec; constructor-only arguments (``public_source``) passed on when set.

        With ``strict``, a value set for a parameter the mechanism does not take is an error (the CLI: a
        flag that would be ignored); otherwise such values are left out.
        """
        given = {k: v for k, v in (values or {}).items() if v is not None}
        accepted = cls.accepted_params()
        if strict:
            unused = [k for k in given if k not in accepted]
            if unused:
                raise ParameterError(
                    f"mechanism {cls.name!r} does not take {', '.join(_describe(k) for k in unused)}; "
                    f"it takes: {', '.join(_describe(k) for k in cls.param_names) or 'no extra parameters'}"
                )
        out = resolve_params(cls.name, cls.param_names, {k: given.get(k) for k in cls.param_names})
        out.update({k: given[k] for k in accepted if k not in out and k in given})
        return out

    @abc.abstractmethod
    def calibrate(self) -> Calibration:
        """Noise kind and scale, rho, Gamma where it has one. Depends on parameters only."""

    @abc.abstractmethod
    def _release(
        self, corpus: EngineCorpus, rng: np.random.Generator, cal: Calibration, progress: ProgressFn | None
    ) -> ReleaseParts:
        """One pass over the raw data: the released ids (and for DPNE/count mechanisms their extras)."""

    def release(
        self,
        corpus: EngineCorpus,
        *,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        progress: ProgressFn | None = None,
    ) -> Release:
        check_release_call(corpus, rng)
        cal = self.calibrate()
        if not type(self).order_free:  # it visits the users one by one: their rows must be here
            rows_here(corpus, self.label)
        rng = rng if rng is not None else make_rng(seed)
        t0 = time.perf_counter()
        parts = self._release(corpus, rng, cal, progress)
        elapsed = time.perf_counter() - t0
        return make_release(
            cal,
            corpus,
            parts.ids,
            parts.diagnostics,
            seed=seed,
            elapsed=elapsed,
            extra_items=parts.extra_items,
            extra_len=parts.extra_len,
            noisy_counts=parts.noisy_counts,
            count_std=parts.count_std,
        )

    def _calibration(
        self,
        noise: str,
        scale: float,
        rho: float | None = None,
        gamma: float | None = None,
        /,
        *,
        guarantee: str | None = None,
        details: Details = Details(),  # frozen: one shared default is safe
    ) -> Calibration:
        """The mechanism's ``Calibration``: its name, budget and parameters filled in; its family's ``details``.
        ``guarantee`` defaults to the standard (epsilon, delta) sentence about ``output_noun``.

        Every value is checked where it is made: a noise scale positive and finite, a threshold finite, a
        cutoff Gamma inside the range where the descent updates are proven (``privacy.norms``); otherwise
        ``ParameterError``, and nothing runs."""
        if not (math.isfinite(float(scale)) and float(scale) > 0.0):
            raise ParameterError(f"the noise scale {float(scale):.4g} is not a positive finite number; raise epsilon")
        if rho is not None and not math.isfinite(float(rho)):
            raise ParameterError(f"the threshold rho {float(rho):.4g} is not finite; raise epsilon or delta")
        if gamma is not None:
            check_descent_range(int(self.params.get("max_items", 1)), gamma)
        return Calibration(
            mechanism=self.name,
            label=self.label,
            epsilon=self.epsilon,
            delta=self.delta,
            noise=noise,
            scale=float(scale),
            rho=None if rho is None else float(rho),
            gamma=None if gamma is None else float(gamma),
            params=dict(self.params),
            guarantee=guarantee or guarantee_sentence(self.epsilon, self.delta, self.output_noun),
            details=details,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon}, delta={self.delta}, {self.params})"


def progress_step(progress: ProgressFn | None, fraction: float, message: str) -> None:
    """Report progress if the caller asked for it."""
    if progress is not None:
        progress(fraction, message)


def _describe(name: str) -> str:
    """A parameter by name and, for a declared one, its CLI flag: ``alpha (--alpha)``."""
    spec = PARAMS.get(name)
    return f"{name} ({spec.cli})" if spec is not None else name


def make_rng(seed: int | None = None) -> np.random.Generator:
    """A numpy Generator seeded by the OS; a fixed seed only when the caller asks (teaching)."""
    return np.random.default_rng(check_seed(seed))


def canonical_order(items: np.ndarray, ngram_len: np.ndarray) -> np.ndarray:
    """Order released items by (length, string): a function of the released set only.

    Ordering by item id would leak the order of first appearance in the raw file.
    """
    if items.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.lexsort((items.astype(str), ngram_len))


def make_release(
    cal: Calibration,
    corpus: EngineCorpus,
    ids: np.ndarray,
    diag: Diagnostics,
    *,
    seed: int | None,
    elapsed: float,
    extra_items: np.ndarray | None = None,
    extra_len: np.ndarray | None = None,
    noisy_counts: np.ndarray | None = None,
    count_std: np.ndarray | None = None,
) -> Release:
    """Assemble a Release from vocab ids (plus, for DPNE, released strings the corpus never contained)."""
    ids = np.asarray(ids, dtype=np.int64)
    items = corpus.vocab[ids].astype(object) if ids.size else np.zeros(0, dtype=object)
    lens = corpus.ngram_len[ids].astype(np.int16) if ids.size else np.zeros(0, dtype=np.int16)
    if extra_items is not None and len(extra_items):
        items = np.concatenate([items, np.asarray(extra_items, dtype=object)])
        lens = np.concatenate([lens, np.asarray(extra_len, dtype=np.int16)])
        ids = np.concatenate([ids, np.full(len(extra_items), -1, dtype=np.int64)])
    order = canonical_order(items, lens)
    return Release(
        privacy_unit=corpus.source.privacy_unit,
        tokenization=corpus.source.tokenization,
        calibration=cal,
        item_ids=ids[order],
        items=items[order],
        ngram_len=lens[order],
        noisy_counts=None if noisy_counts is None else np.asarray(noisy_counts)[order],
        count_std=None if count_std is None else np.asarray(count_std)[order],
        seed=seed,
        elapsed_seconds=elapsed,
        diagnostics=diag,
    )


def noisy_threshold(weights: np.ndarray, rng: np.random.Generator, noise: str, scale: float, rho: float) -> np.ndarray:
    """Step 3 of the common frame: noise every item with weight > 0 and keep those above rho.

    Items of weight 0 are never candidates (docs/algorithms.md §10: noising them inflates delta).
    Returns the selected ids (int64).
    """
    cand = np.flatnonzero(weights > 0)
    if cand.size == 0:
        return cand.astype(np.int64)
    if noise == "laplace":
        z = rng.laplace(0.0, scale, size=cand.size)
    elif noise == "gaussian":
        z = rng.normal(0.0, scale, size=cand.size)
    else:  # pragma: no cover - programming error
        raise ValueError(f"unknown noise {noise!r}")
    return cand[weights[cand] + z > rho].astype(np.int64)


def guarantee_sentence(epsilon: float, delta: float, what: str = "set of released items") -> str:
    return (
        f"The {what} is ({epsilon:g}, {delta:.3g})-differentially private at the user level: adding or "
        f"removing all of one user's text changes the probability of any output by at most a factor "
        f"e^{epsilon:g}, except with probability {delta:.3g}."
    )
