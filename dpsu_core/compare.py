"""Run several mechanisms several times on one corpus and summarise how many items each releases.

Each row of ``compare_runs`` is one private release reduced to its counts (total and per
n-gram length), which are post-processing of the private output. ``seconds`` is wall time
(a property of the machine, not a privacy claim). Nothing from the raw data (weights, true
counts) is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .corpus.model import Corpus
from .errors import ParameterError
from .mechanisms import Mechanism, get_mechanism, mechanisms
from .mechanisms.base import ProgressFn
from .privacy.validate import check_positive_int

SUMMARY_COLUMNS = ["mechanism", "label", "mean", "sd", "runs", "mean_seconds"]


def check_known_params(params: Mapping[str, Any] | None, classes: Iterable[type[Mechanism]] | None = None) -> None:
    """Reject parameter names that no registered mechanism takes (a typo would otherwise be dropped silently)."""
    classes = list(mechanisms().values()) if classes is None else list(classes)
    known = set().union(*(c.accepted_params() for c in classes)) if classes else set()
    unknown = sorted(k for k in (params or {}) if k not in known)
    if unknown:
        raise ParameterError(
            f"no mechanism takes the parameter(s) {', '.join(unknown)}; known parameters: {', '.join(sorted(known))}"
        )


def _check_names(names: Any) -> list[str]:
    if isinstance(names, str) or not isinstance(names, Iterable):
        raise ParameterError(f"names must be a list of mechanism names, got {names!r}; e.g. ['policy-gaussian']")
    names = list(names)
    if not names:
        raise ParameterError("names is empty; give at least one mechanism name, e.g. ['policy-gaussian']")
    regs = mechanisms()
    unknown = [n for n in names if n not in regs]
    if unknown:
        raise ParameterError(f"unknown mechanism(s) {', '.join(map(repr, unknown))}; choose from: {', '.join(regs)}")
    if len(set(names)) != len(names):
        raise ParameterError(f"names lists a mechanism twice ({names!r}); list each mechanism once")
    return names


def _length_column(n: int) -> str:
    return f"released_n{n}"


def compare_runs(
    corpus: Corpus,
    names: list[str],
    epsilon: float,
    delta: float,
    params: dict | None,
    runs: int,
    seed: int | None = None,
    progress: ProgressFn | None = None,
) -> pd.DataFrame:
    """Release with every mechanism in ``names`` ``runs`` times; one row per (mechanism, run).

    Columns: mechanism, label, run (1-based), released, seconds, then ``released_n<k>`` for every
    n-gram length k of the corpus (and any other length a release contains). Each mechanism gets
    only the parameters it takes. With ``seed`` set, every (mechanism, run) draws from its own
    Generator spawned from that seed (teaching: reproducible); otherwise each release is OS-seeded.
    """
    names = _check_names(names)
    runs = check_positive_int(runs, "runs", "give the number of repetitions per mechanism, e.g. 5")
    regs = mechanisms()
    check_known_params(params)
    mechs = [get_mechanism(n, epsilon=epsilon, delta=delta, **regs[n].params_for(params)) for n in names]
    children = np.random.SeedSequence(seed).spawn(len(mechs) * runs) if seed is not None else None

    rows: list[dict[str, Any]] = []
    total = len(mechs) * runs
    for j, mech in enumerate(mechs):
        for r in range(runs):
            i = j * runs + r
            if progress:
                progress(i / total, f"{mech.label}: run {r + 1} of {runs}")
            # a seed per (mechanism, run), spawned from the user's seed: the release records it (teaching flag)
            run_seed = int(children[i].generate_state(1, np.uint64)[0]) if children is not None else None
            rel = mech.release(corpus, seed=run_seed)
            row = {
                "mechanism": mech.name,
                "label": mech.label,
                "run": r + 1,
                "released": rel.n_released,
                "seconds": float(rel.elapsed_seconds),
            }
            row.update({_length_column(k): c for k, c in rel.per_length().items()})
            rows.append(row)
    if progress:
        progress(1.0, "done")

    lengths = set(range(1, int(corpus.max_n) + 1))
    for row in rows:
        lengths.update(int(c[len("released_n") :]) for c in row if c.startswith("released_n"))
    cols = ["mechanism", "label", "run", "released", "seconds"] + [_length_column(k) for k in sorted(lengths)]
    df = pd.DataFrame(rows).reindex(columns=cols)
    for c in cols[3:]:
        if c != "seconds":
            df[c] = df[c].fillna(0).astype(np.int64)
    return df


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per mechanism: mean and sample standard deviation (ddof 1; NaN for a single run) of released items.

    Columns: mechanism, label, mean, sd, runs, mean_seconds; mechanisms in their order in ``df``.
    """
    need = {"mechanism", "label", "released", "seconds"}
    if not isinstance(df, pd.DataFrame) or not need <= set(df.columns):
        raise ParameterError(
            f"summarize needs the table from compare_runs (columns {sorted(need)}); call compare_runs first"
        )
    g = df.groupby(["mechanism", "label"], sort=False)
    out = g.agg(
        mean=("released", "mean"), sd=("released", "std"), runs=("released", "size"), mean_seconds=("seconds", "mean")
    ).reset_index()
    out["runs"] = out["runs"].astype(np.int64)
    return out[SUMMARY_COLUMNS]
