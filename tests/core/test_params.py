"""The parameter API: ParamSpecs declared once (dpsu_core.params) and Mechanism.params_for, which the CLI
flags, the app's widgets and compare all read."""

from __future__ import annotations

import pytest

from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import Mechanism, list_mechanisms
from dpsu_core.params import PARAMS as SPECS

PARAMS = {"max_items": 10, "alpha": 3.0}


def test_each_mechanism_gets_only_its_params():
    regs = list_mechanisms()
    assert regs["weighted-gaussian"].params_for(PARAMS) == {"max_items": 10}
    assert regs["policy-gaussian"].params_for(PARAMS) == PARAMS


def test_extra_keyword_only_constructor_argument_is_accepted():
    class WithSource(Mechanism):
        name, label, family = "with-source", "With source", "laplace"
        param_names = ("max_items",)

        def __init__(self, *, epsilon, delta, public_source=None, **params):
            super().__init__(epsilon=epsilon, delta=delta, **params)
            self.public_source = public_source

        def calibrate(self):  # pragma: no cover - not used
            raise NotImplementedError

        def _release(self, corpus, rng, cal, progress):  # pragma: no cover - not used
            raise NotImplementedError

    assert WithSource.accepted_params() == ("max_items", "public_source")
    assert WithSource.params_for({"max_items": 3, "alpha": 1, "public_source": "x"}) == {
        "max_items": 3,
        "public_source": "x",
    }


def test_params_for_fills_defaults_and_validates():
    cls = list_mechanisms()["policy-gaussian"]
    assert cls.params_for({}) == {"max_items": SPECS["max_items"].default, "alpha": SPECS["alpha"].default}
    assert cls.params_for({"max_items": None, "alpha": 4}) == {"max_items": SPECS["max_items"].default, "alpha": 4.0}
    with pytest.raises(ParameterError, match="max_items"):
        cls.params_for({"max_items": 0})
    # a value for a parameter it does not take is left out, or an error when strict (the CLI)
    assert cls.params_for({"eta": 0.5}) == cls.params_for({})
    with pytest.raises(ParameterError, match=r"does not take eta \(--eta\); it takes: max_items \(--max-items\)"):
        cls.params_for({"eta": 0.5}, strict=True)


def test_every_declared_parameter_has_a_spec_and_a_distinct_flag():
    for cls in list_mechanisms().values():
        assert [s.name for s in cls.param_specs()] == list(cls.param_names)
    flags = [s.cli for s in SPECS.values()]
    assert len(set(flags)) == len(flags) and all(f.startswith("--") for f in flags)
    assert "public_source" in list_mechanisms()["gw-kt"].accepted_params()


def test_tune_users_help_warns_that_k_must_not_come_from_the_private_corpus():
    from dpsu_core.params import PARAMS

    assert "never count it on the private corpus" in PARAMS["tune_users"].help
