"""Running releases and comparisons from the pages: one progress bar, one error box per failure, results
stored in the session's state. The Release, Histogram and Compare pages all run through here."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dpsu_core.compare import compare_runs
from dpsu_core.corpus import Corpus
from dpsu_core.mechanisms import Mechanism, Release, get_mechanism, mechanisms
from dpsu_core.mechanisms.base import ProgressFn
from pages._state import Budget, app_state
from pages._text import TEACHING_SEED
from pages._ui import show_error


def build_mechanism(name: str, budget: Budget, values: dict[str, Any]) -> Mechanism:
    """Mechanism ``name`` at the budget, with the parameters it takes from ``values`` (``params_for``)."""
    regs = mechanisms()
    params = regs[name].params_for(values) if name in regs else {}  # an unknown name: get_mechanism says so
    return get_mechanism(name, epsilon=budget.epsilon, delta=budget.delta, **params)


def release(
    corpus: Corpus,
    name: str,
    budget: Budget,
    values: dict[str, Any],
    *,
    teaching: bool,
    progress: ProgressFn | None = None,
) -> Release:
    """One release. Teaching mode fixes the seed; otherwise the noise is seeded by the OS."""
    mech = build_mechanism(name, budget, values)
    return mech.release(corpus, seed=TEACHING_SEED if teaching else None, progress=progress)


def _bar_progress(bar, start: float = 0.0, share: float = 1.0) -> ProgressFn:
    """A progress callback drawing the part [start, start + share] of the bar."""

    def fn(fraction: float, message: str = "") -> None:
        f = start + share * min(max(float(fraction), 0.0), 1.0)
        bar.progress(min(max(f, 0.0), 1.0), text=str(message) if message else None)

    return fn


def run_releases(corpus: Corpus, names: list[str]) -> list[Release]:
    """Release with each mechanism at the sidebar budget and parameters, one after the other under one progress
    bar; each release is stored in the session. A failure shows an error box and the others still run."""
    state = app_state()
    labels = {n: cls.label for n, cls in mechanisms().items()}
    bar = st.progress(0.0, text="Starting…")
    done: list[Release] = []
    for i, name in enumerate(names):
        try:
            rel = release(
                corpus,
                name,
                state.budget,
                state.mechanism_values(),
                teaching=state.teaching,
                progress=_bar_progress(bar, i / len(names), 1.0 / len(names)),
            )
        except Exception as exc:
            show_error(exc, f"{labels.get(name, name)}: the release failed")
            continue
        state.store_release(name, rel)
        done.append(rel)
    if len(done) == len(names) == 1:
        bar.progress(1.0, text=f"Done in {done[0].elapsed_seconds:.2f} s")
    else:
        bar.empty()
    return done


def run_comparison(corpus: Corpus, names: list[str], runs: int) -> None:
    """``compare_runs`` at the sidebar budget under a progress bar; the table is stored in the session."""
    state = app_state()
    bar = st.progress(0.0, text="Starting…")
    try:
        state.comparison = compare_runs(
            corpus,
            names,
            state.budget.epsilon,
            state.budget.delta,
            compare_params(names, state.mechanism_values()),
            runs,
            seed=TEACHING_SEED if state.teaching else None,
            progress=_bar_progress(bar),
        )
    except Exception as exc:
        show_error(exc, "the comparison failed")
    bar.empty()


def compare_params(names: list[str], values: dict[str, Any]) -> dict[str, Any]:
    """The parameters the chosen mechanisms take, from everything the app has set (compare_runs hands each its own)."""
    regs = mechanisms()
    out: dict[str, Any] = {}
    for n in names:
        if n in regs:
            out.update(regs[n].params_for(values))
    return out
