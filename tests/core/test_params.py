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


# ---- params.OPTIONS: a release's other inputs, declared once (issue 40) ----------------------------------------
def _library_checks(monkeypatch) -> dict:
    """For each option the library checks: a function of one value that raises ParameterError outside its range."""
    from dpsu_core.accounting.store import env_default_cap
    from dpsu_core.mechanisms.item_counts import check_clip, check_share
    from dpsu_core.outputs.tokenizer_export import TokenizerSpec, check_spec
    from dpsu_core.privacy.validate import check_budget

    def cap(text: str):
        monkeypatch.setenv("DPSU_DEFAULT_CAP", text)
        return env_default_cap()

    return {
        "epsilon": lambda v: check_budget(v, 1e-6),
        "delta": lambda v: check_budget(1.0, v),
        "cap_epsilon": lambda v: cap(f"{v!r},1e-5"),
        "cap_delta": lambda v: cap(f"1.0,{v!r}"),
        "counts_share": check_share,
        "counts_clip": check_clip,
        "tokenizer_vocab_size": lambda v: check_spec(TokenizerSpec(model="bpe", vocab_size=int(v))),
    }


def _accepts(check, value) -> bool:
    try:
        check(value)
    except ParameterError:
        return False
    return True


def test_each_option_range_is_the_one_the_library_checks(monkeypatch):
    """``minimum``/``maximum`` (and which ends are excluded) are what the library's own check accepts: each end
    in or out as the spec says, and one step beyond refused."""
    import math

    from dpsu_core.params import OPTIONS

    checks = _library_checks(monkeypatch)
    assert set(checks) == {n for n, s in OPTIONS.items() if s.kind != "choice" and s.cli}  # every flag's option
    for name, check in checks.items():
        s = OPTIONS[name]
        lo, hi = float(s.minimum), float(s.maximum)
        out_lo = lo - 1 if s.kind == "int" else math.nextafter(lo, -math.inf)
        in_lo = lo + 1 if s.kind == "int" else math.nextafter(lo, math.inf)
        assert _accepts(check, lo) is not s.open_low, f"{name}: minimum {lo:g}"
        assert _accepts(check, in_lo) and not _accepts(check, out_lo), f"{name}: around its minimum {lo:g}"
        if math.isfinite(hi):
            out_hi = hi + 1 if s.kind == "int" else math.nextafter(hi, math.inf)
            in_hi = hi - 1 if s.kind == "int" else math.nextafter(hi, -math.inf)
            assert _accepts(check, hi) is not s.open_high, f"{name}: maximum {hi:g}"
            assert _accepts(check, in_hi) and not _accepts(check, out_hi), f"{name}: around its maximum {hi:g}"
        assert _accepts(check, s.default), f"{name}: its default {s.default!r}"


def test_each_widget_range_lies_inside_the_library_range_and_holds_the_default():
    from dpsu_core.params import OPTIONS

    for s in OPTIONS.values():
        if s.kind == "choice":
            assert s.default in s.choices
            continue
        lo, hi = s.widget_range()
        assert (lo > s.minimum if s.open_low else lo >= s.minimum) and lo < hi, s.name
        assert hi < s.maximum if s.open_high else hi <= s.maximum, s.name
        assert lo <= s.default <= hi, f"{s.name}: default {s.default} outside the widget's {lo:g} to {hi:g}"


def test_the_library_names_read_the_options():
    """The names the code imports (defaults, choices, ranges) are the specs' values, not copies of them."""
    from dpsu_core.accounting.store import DEFAULT_DELTA_CAP, DEFAULT_EPSILON_CAP
    from dpsu_core.mechanisms import item_counts
    from dpsu_core.outputs import tokenizer_export as tok
    from dpsu_core.params import OPTIONS

    assert (item_counts.DEFAULT_SHARE, item_counts.DEFAULT_CLIP) == (
        OPTIONS["counts_share"].default,
        OPTIONS["counts_clip"].default,
    )
    assert (item_counts.CLIP_MIN, item_counts.CLIP_MAX) == (
        OPTIONS["counts_clip"].minimum,
        OPTIONS["counts_clip"].maximum,
    )
    assert (tok.MODELS, tok.DEFAULT_MODEL) == (OPTIONS["tokenizer_model"].choices, OPTIONS["tokenizer_model"].default)
    assert tok.DEFAULT_VOCAB_SIZE == OPTIONS["tokenizer_vocab_size"].default
    assert (DEFAULT_EPSILON_CAP, DEFAULT_DELTA_CAP) == (OPTIONS["cap_epsilon"].default, OPTIONS["cap_delta"].default)


def test_the_cli_flags_of_the_options_read_their_specs():
    """``dpsu release``: each option's flag takes the spec's choices, defaults to "not given" and names its range
    and default in its help (what ``dpsu release --help`` prints)."""
    from dpsu_core.interfaces.cli import build_parser
    from dpsu_core.params import OPTIONS

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    flags = {o: a for a in sub.choices["release"]._actions for o in a.option_strings}
    for name in ("counts_share", "counts_clip", "tokenizer_model", "tokenizer_vocab_size"):
        s, action = OPTIONS[name], flags[OPTIONS[name].cli]
        assert action.default is None and action.dest == name, name
        if s.kind == "choice":
            assert action.choices == list(s.choices) and f"default {s.default}" in action.help
        else:
            assert f"default {s.default:g}; {s.range_text()}" in action.help, action.help
    for name in ("epsilon", "delta"):
        assert OPTIONS[name].range_text() in flags[OPTIONS[name].cli].help
