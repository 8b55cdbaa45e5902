"""The corners of every mechanism's documented parameter ranges, read from the registry and ``params.PARAMS``
(a new mechanism or parameter is swept without editing a test), and the canary corpus they are swept on.

``corner_grid(cls)``: (epsilon, delta, params) for epsilon and delta at both ends of their documented ranges (and
one typical value), crossed with: the defaults, each parameter alone at each end of its range (each choice of a
choice parameter), every numeric parameter at its minimum together, and every one at its maximum together; and
every two numeric parameters at their ends together (``pair_params``) at the smallest and a typical epsilon.

``canary_corpus()``: 400 users who share seven words, each also holding one word of its own (``uniqN``): the
release of any ``uniq`` word at a small delta is the privacy bug the sweep looks for.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.corpus.model import Corpus
from dpsu_core.mechanisms.base import Mechanism
from dpsu_core.params import EPSILON_MAX, EPSILON_MIN, PARAMS, ParamSpec
from dpsu_core.privacy.validate import DELTA_MIN

SHARED_WORDS = ("the", "common", "shared", "words", "alpha", "beta", "gamma")
CANARY_USERS = 400
LONE_PREFIX = "uniq"

EPSILONS = (EPSILON_MIN, 1.0, EPSILON_MAX)
#: delta at its documented lower end, a typical value, and the largest the app offers (0.5)
DELTAS = (DELTA_MIN, 1e-6, 0.5)
#: at or below this delta a lone word must never come out of a swept release (400 lone words: chance <= 400 delta)
SMALL_DELTA = 1e-6


def canary_lines() -> list[tuple[str, str]]:
    """(user, post) rows of the canary corpus: ``u0,the common shared words alpha beta gamma uniq0`` and so on."""
    return [(f"u{i}", " ".join([*SHARED_WORDS, f"{LONE_PREFIX}{i}"])) for i in range(CANARY_USERS)]


@functools.cache
def canary_corpus(max_n: int = 10) -> Corpus:
    return corpus_from_token_lists([p.split() for _, p in canary_lines()], posts_per_user=False, max_n=max_n)


def lone_items(items) -> list[str]:
    """The released items (words or n-grams) that contain a lone user's word."""
    return [str(x) for x in items if LONE_PREFIX in str(x)]


def _ends(spec: ParamSpec) -> list[Any]:
    if spec.kind == "choice":
        return list(spec.choices)
    assert spec.minimum is not None and spec.maximum is not None, f"{spec.name} has no documented range"
    ends = [spec.minimum, spec.maximum]
    return [int(v) for v in ends] if spec.kind == "int" else [float(v) for v in ends]


def corner_params(cls: type[Mechanism]) -> list[dict[str, Any]]:
    """The parameter corners of one mechanism (see the module docstring)."""
    specs = [PARAMS[n] for n in cls.param_names]
    out: list[dict[str, Any]] = [{}]
    out += [{s.name: v} for s in specs for v in _ends(s)]
    numeric = [s for s in specs if s.kind != "choice"]
    if len(numeric) > 1:
        out.append({s.name: _ends(s)[0] for s in numeric})
        out.append({s.name: _ends(s)[1] for s in numeric})
    return out


def pair_params(cls: type[Mechanism]) -> list[dict[str, Any]]:
    """Every two numeric parameters at an end of their ranges together (e.g. the most rounds at the smallest
    ratio), the others at their defaults."""
    numeric = [PARAMS[n] for n in cls.param_names if PARAMS[n].kind != "choice"]
    return [
        {a.name: va, b.name: vb}
        for i, a in enumerate(numeric)
        for b in numeric[i + 1 :]
        for va in _ends(a)
        for vb in _ends(b)
    ]


#: the budgets the pairs are crossed with: the smallest epsilon, and a typical one, at a typical delta
PAIR_BUDGETS = ((EPSILON_MIN, 1e-6), (1.0, 1e-6))


def corner_grid(cls: type[Mechanism]) -> Iterator[tuple[float, float, dict[str, Any]]]:
    for eps in EPSILONS:
        for delta in DELTAS:
            for params in corner_params(cls):
                yield eps, delta, params
    for eps, delta in PAIR_BUDGETS:
        for params in pair_params(cls):
            yield eps, delta, params
