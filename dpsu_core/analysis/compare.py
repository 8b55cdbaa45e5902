"""Run several mechanisms several times on one corpus and summarise how many items each releases.

Each row of ``compare_runs`` is one private release reduced to its counts (total and per
n-gram length), which are post-processing of the private output. ``seconds`` is wall time
(a property of the machine, not a privacy claim). Nothing from the raw data (weights, true
counts) is kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..accounting.ledger import LedgerEntry, LedgerTotal
from ..accounting.ledger import total as ledger_total
from ..corpus.model import Corpus
from ..errors import ParameterError
from ..mechanisms import Calibration, Mechanism, Release, get_mechanism, list_mechanisms
from ..mechanisms.base import Diagnostics, ProgressFn
from ..privacy.validate import check_positive_int
from .metrics import missing_mass

SUMMARY_COLUMNS = ["mechanism", "label", "mean", "sd", "runs", "median_seconds", "recovered_mass"]
# A mechanism's first run compiles its numba kernels (once per process, seconds): its time is left out of
# median_seconds, the median of the warm runs (runs 2 and on; the first run's only when it is the only one).
SECONDS_NOTE = (
    "median seconds: the median wall time of the warm runs, the first run of each mechanism left out (it may "
    "include compiling the mechanism's code, once per app start); a single run's time may include it"
)
CSV_COLUMNS = ["mechanism", "label", "runs", "mean", "sd"]  # private outputs only
RAW_CSV_COLUMNS = ["recovered_mass"]  # computed from the raw data: only when asked for
CSV_NOTE = "# dpsu comparison. mean and sd: items released per run (private outputs)."
RAW_CSV_NOTE = (
    " recovered_mass: share of all (user, item) pairs whose item was released, mean over runs: computed from the "
    "raw data, NOT private."
)


def check_known_params(params: Mapping[str, Any] | None, classes: Iterable[type[Mechanism]] | None = None) -> None:
    """Reject parameter names that no registered mechanism takes (a typo would otherwise be dropped silently)."""
    classes = list(list_mechanisms().values()) if classes is None else list(classes)
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
    regs = list_mechanisms()
    unknown = [n for n in names if n not in regs]
    if unknown:
        raise ParameterError(f"unknown mechanism(s) {', '.join(map(repr, unknown))}; choose from: {', '.join(regs)}")
    if len(set(names)) != len(names):
        raise ParameterError(f"names lists a mechanism twice ({names!r}); list each mechanism once")
    return names


def _length_column(n: int) -> str:
    return f"released_n{n}"


def _mechanisms(names: Any, epsilon: float, delta: float, params: dict | None) -> list[Mechanism]:
    names = _check_names(names)
    regs = list_mechanisms()
    check_known_params(params)
    return [get_mechanism(n, epsilon=epsilon, delta=delta, **regs[n].params_for(params)) for n in names]


def planned_entries(
    names: list[str], epsilon: float, delta: float, params: dict | None, runs: int
) -> list[LedgerEntry]:
    """The ledger entries ``compare_runs`` with these arguments will make (every run is a release)."""
    runs = check_positive_int(runs, "runs", "give the number of repetitions per mechanism, e.g. 5")
    return [
        LedgerEntry.from_calibration(m.calibrate(), corpus_id=None, source="Compare", releases=runs)
        for m in _mechanisms(names, epsilon, delta, params)
    ]


def planned_cost(names: list[str], epsilon: float, delta: float, params: dict | None, runs: int) -> LedgerTotal:
    """What ``compare_runs`` with these arguments will spend, before it runs."""
    return ledger_total(planned_entries(names, epsilon, delta, params, runs))


def compare_runs(
    corpus: Corpus,
    names: list[str],
    epsilon: float,
    delta: float,
    params: dict | None,
    runs: int,
    seed: int | None = None,
    progress: ProgressFn | None = None,
    record: Callable[[Calibration], None] | None = None,
    keep: Callable[[Release, dict[str, Any]], None] | None = None,
) -> pd.DataFrame:
    """Release with every mechanism in ``names`` ``runs`` times; one row per (mechanism, run).

    Columns: mechanism, label, run (1-based), released, seconds, recovered_mass, then ``released_n<k>`` for
    every n-gram length k of the corpus (and any other length a release contains). ``recovered_mass``
    (docs/algorithms.md §9, ``metrics.missing_mass``) compares the release with the raw data: NOT private. Each mechanism
    gets only the parameters it takes. With ``seed`` set, every (mechanism, run) draws from its own
    Generator spawned from that seed (teaching: reproducible); otherwise each release is OS-seeded.
    ``record`` is called with each run's calibration just before the run starts (a privacy ledger: an attempt
    spends, even if it fails part-way). ``keep`` is called with each run's release (its weights dropped: they are
    raw-data diagnostics) and the parameters it took, for a session's history.
    """
    mechs = _mechanisms(names, epsilon, delta, params)
    runs = check_positive_int(runs, "runs", "give the number of repetitions per mechanism, e.g. 5")
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
            if record is not None:
                record(mech.calibrate())
            rel = mech.release(corpus, seed=run_seed)
            mass = missing_mass(corpus, rel)
            if keep is not None:
                keep(dataclasses.replace(rel, diagnostics=Diagnostics()), dict(mech.params))
            row = {
                "mechanism": mech.name,
                "label": mech.label,
                "run": r + 1,
                "released": rel.n_released,
                "seconds": float(rel.elapsed_seconds),
                "recovered_mass": float(mass.loc[mass["n"] == 0, "recovered_mass"].iloc[0]),
            }
            row.update({_length_column(k): c for k, c in rel.per_length().items()})
            rows.append(row)
    if progress:
        progress(1.0, "done")

    lengths = set(range(1, int(corpus.max_n) + 1))
    for row in rows:
        lengths.update(int(c[len("released_n") :]) for c in row if c.startswith("released_n"))
    cols = ["mechanism", "label", "run", "released", "seconds", "recovered_mass"]
    cols += [_length_column(k) for k in sorted(lengths)]
    df = pd.DataFrame(rows).reindex(columns=cols)
    for c in cols[3:]:
        if c not in ("seconds", "recovered_mass"):
            df[c] = df[c].fillna(0).astype(np.int64)
    return df


def warm_median(seconds: pd.Series) -> float:
    """The median of a mechanism's run times in run order, its first run left out (``SECONDS_NOTE``) unless it
    is the only one."""
    t = seconds.to_numpy(dtype=float)
    return float(np.median(t[1:] if t.size > 1 else t))


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per mechanism: mean and sample standard deviation (ddof 1; NaN for a single run) of released items.

    Columns: mechanism, label, mean, sd, runs, median_seconds (``warm_median``), recovered_mass (mean over runs;
    NOT private); mechanisms in their order in ``df``.
    """
    need = {"mechanism", "label", "released", "seconds", "recovered_mass"}
    if not isinstance(df, pd.DataFrame) or not need <= set(df.columns):
        raise ParameterError(
            f"summarize needs the table from compare_runs (columns {sorted(need)}); call compare_runs first"
        )
    g = df.groupby(["mechanism", "label"], sort=False)
    out = g.agg(
        mean=("released", "mean"),
        sd=("released", "std"),
        runs=("released", "size"),
        median_seconds=("seconds", warm_median),
        recovered_mass=("recovered_mass", "mean"),
    ).reset_index()
    out["runs"] = out["runs"].astype(np.int64)
    return out[SUMMARY_COLUMNS]


def summary_csv(summary: pd.DataFrame, *, include_raw: bool = False) -> bytes:
    """The comparison table as CSV (runs, mean and sd of released items per mechanism: private outputs), one note
    line first. The recovered mass (computed from the raw data, NOT private) only with ``include_raw``; timings
    never. Numbers in one format: 4 significant digits."""
    import csv
    import io

    if not isinstance(summary, pd.DataFrame) or not set(CSV_COLUMNS) <= set(summary.columns):
        raise ParameterError("summary_csv needs the table from summarize(compare_runs(...))")
    buf = io.StringIO()
    cols = CSV_COLUMNS + (RAW_CSV_COLUMNS if include_raw else [])
    buf.write(CSV_NOTE + (RAW_CSV_NOTE if include_raw else "") + "\n")
    summary[cols].to_csv(buf, index=False, float_format="%.4g", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    return buf.getvalue().encode("utf-8")
