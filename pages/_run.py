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


def run_releases(corpus: Corpus, names: list[str], source: str) -> list[Release]:
    """Release with each mechanism at the sidebar budget and parameters, one after the other under one progress
    bar; each release is stored in the session and entered into the ledger (on the private corpus) with the page
    it came from, ``source``. A failure shows an error box and the others still run."""
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
        state.record(rel, source)
        done.append(rel)
    bar.empty()
    if done and len(done) == len(names) and not state.exploring:
        st.rerun()  # the sidebar (drawn before the page) then shows what the ledger holds now
    return done


def release_on_private(name: str) -> Release | None:
    """The step after exploring: go back to the private corpus and release there once with the configuration
    chosen while exploring (recorded in the ledger)."""
    state = app_state()
    state.back_to_private()
    if state.corpus is None:
        return None
    done = run_releases(state.corpus, [name], "Release (after exploring)")
    return done[0] if done else None


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
            record=lambda rel: state.record(rel, "Compare"),  # each run spends, even if a later one fails
        )
    except Exception as exc:
        bar.empty()
        show_error(exc, "the comparison failed")  # the runs made before the failure are in the ledger
        return
    bar.empty()
    if not state.exploring:
        st.rerun()  # the sidebar then shows the comparison's cost


def compare_params(names: list[str], values: dict[str, Any]) -> dict[str, Any]:
    """The parameters the chosen mechanisms take, from everything the app has set (compare_runs hands each its own)."""
    regs = mechanisms()
    out: dict[str, Any] = {}
    for n in names:
        if n in regs:
            out.update(regs[n].params_for(values))
    return out
