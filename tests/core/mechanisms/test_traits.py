"""Mechanism traits: every registered class declares them, the ledger / preview / display / engines read them,
and a new mechanism needs only its own module plus one line in the registry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsu_core.accounting.ledger import cost_of, zcdp_cost
from dpsu_core.analysis.utility import has_preview, utility_preview
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.interfaces.cli import main
from dpsu_core.mechanisms import registry
from dpsu_core.mechanisms.base import Calibration, Diagnostics, Mechanism, ReleaseParts
from dpsu_core.mechanisms.dpsu_step import weighted_gaussian_step
from dpsu_core.mechanisms.registry import MECHANISM_CLASSES, get_mechanism, list_mechanisms, mechanism_class
from dpsu_core.mechanisms.traits import Stages, one_stage
from dpsu_core.privacy.cost import gaussian_cost
from dpsu_core.privacy.thresholds import gaussian_scale, rho_weighted_gaussian

EPS, DELTA = 3.0, 1e-6


def defined_mechanism_classes() -> set[type[Mechanism]]:
    """Every mechanism the modules of ``dpsu_core/mechanisms`` define: a concrete ``Mechanism`` subclass declaring its
    own ``name`` (shared bases such as ``_Greedy`` declare none; the tests' toys live elsewhere)."""
    import importlib
    import inspect
    import pkgutil

    import dpsu_core.mechanisms as pkg

    out: set[type[Mechanism]] = set()
    for info in pkgutil.iter_modules(pkg.__path__):
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        out |= {
            c
            for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, Mechanism)
            and not inspect.isabstract(c)
            and c.__module__ == module.__name__
            and "name" in vars(c)
        }
    return out


@pytest.mark.parametrize("cls", MECHANISM_CLASSES, ids=lambda c: c.name)
def test_every_registered_class_declares_every_trait(cls):
    assert cls.missing_traits() == []
    assert isinstance(cls.order_free, bool)
    cal = cls(epsilon=EPS, delta=DELTA).calibrate()
    quantities = cls.noise_quantities(cal)
    assert quantities and all(isinstance(n, str) and math.isfinite(v) and v > 0 for n, v in quantities)
    stages = cls.preview_stages(cal, 10)
    assert (stages is None) == (cls.no_preview_reason is not None)
    assert stages is None or isinstance(stages, Stages) and stages.stages
    cost = cls.privacy_cost(cal)
    if cls.family == "laplace":
        assert cost is None  # pure-epsilon noise: basic composition only
    else:
        assert cost is not None and cost.rho > 0 and 0 < cost.delta < cal.delta


@pytest.mark.parametrize("cls", [c for c in MECHANISM_CLASSES if c.family != "laplace"], ids=lambda c: c.name)
def test_declared_cost_never_exceeds_the_release_budget(cls):
    """The ledger's best bound for ONE release, from the declared cost alone, is at most the (epsilon, delta) the
    release was calibrated for: a cost declared too small or a delta share too large would show here."""
    cal = cls(epsilon=EPS, delta=DELTA).calibrate()
    t = cost_of(cal, 1)
    assert t.basic_delta == cal.delta
    assert t.epsilon <= cal.epsilon * (1 + 1e-9)
    # and not vacuously: the declared rho is what a Gaussian at the calibration's sigma costs, or PCR's own budget
    assert t.zcdp_epsilon is not None and t.zcdp_epsilon > 0.5 * cal.epsilon


def test_a_class_lacking_a_trait_is_named_and_cannot_be_built():
    class NoCost(Mechanism):
        name, label, family = "no-cost", "No cost", "gaussian"
        param_names = ()

        @classmethod
        def preview_stages(cls, cal, m_kept):
            return None

        @classmethod
        def noise_quantities(cls, cal):
            return []

        def calibrate(self):  # pragma: no cover - never built
            raise NotImplementedError

        def _release(self, corpus, rng, cal, progress):  # pragma: no cover - never built
            raise NotImplementedError

    assert NoCost.missing_traits() == ["order_free", "privacy_cost"]
    with pytest.raises(TypeError, match="privacy_cost"):
        NoCost(epsilon=1.0, delta=1e-6)


def test_order_free_is_the_spark_engines_parallel_choice():
    spark = pytest.importorskip("dpsu_core.engines.spark")
    for name, cls in list_mechanisms().items():
        assert spark.is_parallel(get_mechanism(name, epsilon=EPS, delta=DELTA)) is cls.order_free
    assert list_mechanisms()["dp-sips"].order_free and not list_mechanisms()["policy-gaussian"].order_free


def test_registry_is_an_explicit_list_and_the_package_function_is_not_shadowed():
    import dpsu_core
    import dpsu_core.mechanisms as pkg

    # the count comes from the registry and the family modules, never a number typed here: every concrete mechanism
    # class a family module defines is listed, once
    assert list(list_mechanisms()) == [c.name for c in MECHANISM_CLASSES]
    assert len(MECHANISM_CLASSES) == len(set(MECHANISM_CLASSES)) == len(defined_mechanism_classes())
    assert set(MECHANISM_CLASSES) == defined_mechanism_classes()
    assert dpsu_core.list_mechanisms is registry.list_mechanisms  # a function, not the subpackage
    assert dpsu_core.mechanisms is pkg and not callable(pkg)
    assert mechanism_class("gw") is list_mechanisms()["gw"]
    with pytest.raises(Exception, match="unknown mechanism 'nope'; choose one of: dpne"):
        mechanism_class("nope")


# --------------------------------------------------------------------------- a new mechanism: module + one line
class ToyWeighted(Mechanism):
    """What the next engineer writes: a weighted-Gaussian step under a new name, every trait on its class."""

    name, label, family = "toy-weighted", "Toy weighted Gaussian", "gaussian"
    param_names = ("max_items",)
    order_free = True

    @classmethod
    def privacy_cost(cls, cal):
        return gaussian_cost(cal.scale, cal.delta / 2.0)

    @classmethod
    def preview_stages(cls, cal, m_kept):
        return one_stage(cal, 1.0 / math.sqrt(m_kept), "+1/√m per kept holder")

    @classmethod
    def noise_quantities(cls, cal):
        return [("Toy noise std", cal.scale)]

    def calibrate(self) -> Calibration:
        m = self.params["max_items"]
        return self._calibration(
            "gaussian", gaussian_scale(self.epsilon, self.delta), rho_weighted_gaussian(self.epsilon, self.delta, m)
        )

    def _release(self, corpus, rng, cal, progress):
        ids, h = weighted_gaussian_step(corpus, rng, self.params["max_items"], cal.scale, cal.rho)
        return ReleaseParts(ids, Diagnostics(weights=h))


def test_a_new_mechanism_needs_its_module_and_one_registry_line(monkeypatch, capsys):
    monkeypatch.setattr(registry, "MECHANISM_CLASSES", (*registry.MECHANISM_CLASSES, ToyWeighted))
    assert list_mechanisms("set-union")["toy-weighted"] is ToyWeighted
    toy = get_mechanism("toy-weighted", epsilon=EPS, delta=DELTA, max_items=20)
    cal = toy.calibrate()
    ref = get_mechanism("weighted-gaussian", epsilon=EPS, delta=DELTA, max_items=20).calibrate()
    # the ledger, the preview and the display read the new class without a line changed elsewhere
    assert zcdp_cost(cal) == zcdp_cost(ref)
    assert has_preview("toy-weighted")
    assert utility_preview(cal, 7).users_needed == utility_preview(ref, 7).users_needed
    assert main(["calibrate", "-m", "toy-weighted", "-e", "3", "-d", "1e-6", "--max-items", "20"]) == 0
    assert f"Toy noise std: {cal.scale:.6g}" in capsys.readouterr().out
    spark = pytest.importorskip("dpsu_core.engines.spark")
    assert spark.is_parallel(toy)
    # and it releases: every user holds "a" (released with certainty at this size), nobody holds more
    corpus = corpus_from_token_lists([["a"]] * 400)
    rel = toy.release(corpus)
    assert list(rel.items) == ["a"] and isinstance(rel.diagnostics.weights, np.ndarray)


def test_no_module_outside_the_mechanisms_switches_on_a_mechanism_name():
    """No comparison with a mechanism's name (``== "pcr"``, ``in ("gw", "gw-kt")``) outside dpsu_core/mechanisms/:
    what a mechanism means is read from its class's traits."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    names = set(list_mechanisms())
    files = [root / "app.py", *(root / "pages").glob("*.py")]
    files += [f for f in (root / "dpsu_core").rglob("*.py") if "mechanisms" not in f.relative_to(root).parts]

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(named(e) for e in node.elts)
        return False

    hits = [
        f"{f.relative_to(root)}:{node.lineno}"
        for f in files
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
        if isinstance(node, ast.Compare) and any(named(x) for x in [node.left, *node.comparators])
    ]
    assert hits == []
