"""Issue 26 on the Spark engine (a CI-sized subset of tests/core/test_corner_sweep.py): the canary corpus loaded by
Spark's readers, every parallel mechanism at the ends of epsilon and of its numeric parameters together, and the
rounds mechanisms (run on the corpus collected to the driver) at the most rounds and the smallest ratio. No lone
word may come out; a corner the mechanism cannot serve is refused with one line."""

from __future__ import annotations

import csv

import pytest

from dpsu_core.errors import DpsuError
from dpsu_core.mechanisms.registry import mechanism_class
from dpsu_core.params import PARAMS
from tests.corners import EPSILON_MIN, SMALL_DELTA, canary_lines, lone_items
from tests.spark.conftest import PARALLEL

EPSILON_ENDS = (EPSILON_MIN, 1e300)


@pytest.fixture(scope="module")
def canary_spark(spark, tmp_path_factory):
    from dpsu_core.engines.spark import load_spark_corpus

    path = tmp_path_factory.mktemp("canary") / "base.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["user", "text"])
        w.writerows(canary_lines())
    return load_spark_corpus(str(path), spark=spark, max_n=10)


def _ends_together(cls) -> tuple[dict, dict]:
    """Every numeric parameter at its minimum together, and every one at its maximum together."""
    numeric = [PARAMS[n] for n in cls.param_names if PARAMS[n].kind != "choice"]
    ends: list[dict] = [{}, {}]
    for s in numeric:
        for d, v in zip(ends, (s.minimum, s.maximum)):
            d[s.name] = int(v) if s.kind == "int" else v
    return ends[0], ends[1]


def _check(cls, canary_spark, eps, params) -> bool:
    """True when the corner released (and no lone word came out), False when it was refused in one line."""
    from dpsu_core.engines.spark import spark_release

    try:
        rel = spark_release(cls(epsilon=eps, delta=SMALL_DELTA, **params), canary_spark, seed=26)
    except DpsuError as e:
        assert "\n" not in str(e)
        return False
    assert not lone_items(rel.items), (cls.name, eps, params, lone_items(rel.items)[:3])
    return True


@pytest.mark.parametrize("name", PARALLEL)
def test_parallel_mechanisms_at_their_corners_release_no_lone_word(canary_spark, name):
    cls = mechanism_class(name)
    low, high = _ends_together(cls)
    ran = [
        _check(cls, canary_spark, EPSILON_ENDS[0], high),  # the smallest epsilon, the largest Delta0 and n
        _check(cls, canary_spark, EPSILON_ENDS[1], low),  # the largest epsilon, the smallest Delta0
    ]
    assert any(ran), f"{name}: every corner was refused, so nothing was checked"  # as the core sweep requires


@pytest.mark.parametrize("name, ratio_name", [("policy-sips", "round_ratio"), ("dp-sips", "ratio")])
def test_rounds_mechanisms_at_twenty_rounds_release_no_lone_word(canary_spark, name, ratio_name):
    assert _check(mechanism_class(name), canary_spark, 3.0, {"rounds": 20, ratio_name: 1e-6}), f"{name} was refused"
