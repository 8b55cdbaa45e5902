"""Running releases and comparisons from the pages: one progress bar, one error box per failure, results
stored in the session's state. The Release, Histogram and Compare pages all run through here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dpsu_core.accounting.spend import SpendPlan
from dpsu_core.analysis.compare import compare_runs
from dpsu_core.corpus import Corpus
from dpsu_core.errors import DpsuError
from dpsu_core.job import ReleaseJob
from dpsu_core.mechanisms import Calibration, Mechanism, Release, get_mechanism, list_mechanisms
from dpsu_core.mechanisms.base import ProgressFn
from dpsu_core.mechanisms.item_counts import (
    CountsCalibration,
    calibrate_counts,
    check_countable,
    mechanism_with_counts,
)
from pages import _account, _workspace
from pages._state import Budget, CountsOption, app_state
from pages._text import TEACHING_SEED
from pages._ui import redraw_ledger, running, show_error, spent_done


def build_mechanism(
    name: str, budget: Budget, values: Mapping[str, object], counts: CountsCalibration | None = None
) -> Mechanism:
    """Mechanism ``name`` at the budget, with the parameters it takes from ``values`` (``params_for``); with
    ``counts``, at the set release's part of the budget (``item_counts.mechanism_with_counts``)."""
    regs = list_mechanisms()
    params = regs[name].params_for(values) if name in regs else {}  # an unknown name: get_mechanism says so
    if counts is not None:
        e, d = counts.total_epsilon, counts.total_delta
        return mechanism_with_counts(name, epsilon=e, delta=d, share=counts.share, clip=counts.clip, **params)[0]
    return get_mechanism(name, epsilon=budget.epsilon, delta=budget.delta, **params)


def counts_calibration(name: str, budget: Budget, option: CountsOption) -> CountsCalibration | None:
    """The noisy counts' calibration at the budget when the option is on (None when off); a ParameterError for a
    count mechanism (it releases its own counts) or a bad share or bound."""
    if not option.on:
        return None
    regs = list_mechanisms()
    if name in regs:
        check_countable(regs[name])
    return calibrate_counts(budget.epsilon, budget.delta, option.share, option.clip)


def make_job(
    name: str,
    budget: Budget,
    values: Mapping[str, object],
    counts: CountsCalibration | None = None,
    *,
    teaching: bool = False,
) -> ReleaseJob:
    """The release job of mechanism ``name`` at the budget (``job.ReleaseJob``): built and priced once here, the
    spend gate plans with its calibration and the runner runs it as charged. Teaching mode fixes the seed;
    otherwise the noise is seeded by the OS."""
    mech = build_mechanism(name, budget, values, counts)
    return ReleaseJob.of(mech, counts, seed=TEACHING_SEED if teaching else None)


def _bar_progress(bar: DeltaGenerator, start: float = 0.0, share: float = 1.0) -> ProgressFn:
    """A progress callback drawing the part [start, start + share] of the bar."""

    def fn(fraction: float, message: str = "") -> None:
        f = start + share * min(max(float(fraction), 0.0), 1.0)
        bar.progress(min(max(f, 0.0), 1.0), text=str(message) if message else None)

    return fn


def run_releases(corpus: Corpus, jobs: list[ReleaseJob], plan: SpendPlan) -> list[Release]:
    """Run each job (built and priced by the page, ``make_job``), one after the other under one progress bar, as
    ``plan`` (from ``pages._account.plan``, passed through the spend gate) said: each job's entries (its items' and, with
    noisy counts, its counts') are charged to the ledger on the private corpus when it is attempted, before its
    noise is drawn (the durable store checks the cap in the same transaction: a refusal runs nothing), then the
    release joins the session's history with the page it came from, and its public output is kept in the store.
    A failure after the charge shows an error box (it still spent) and the others still run."""
    state = app_state()
    source = plan.entries[0].source if plan.entries else "Release"
    bar = st.progress(0.0, text="Starting…")
    group = _account.begin_spend(state, plan)  # the history's entry for this action (None on an exploration corpus)
    with running():
        done = _run_jobs(corpus, jobs, plan, group, source, bar)
    bar.empty()
    spent_done(plan, ok=len(done) == len(jobs))
    return done


def _run_jobs(
    corpus: Corpus, jobs: list[ReleaseJob], plan: SpendPlan, group: Any, source: str, bar: Any
) -> list[Release]:
    """``run_releases``'s loop: charge each job, run it, keep it."""
    state = app_state()
    done: list[Release] = []
    at = 0
    for i, job in enumerate(jobs):
        n = len(job.entries(corpus_id=None, source=source))
        try:
            _account.record_attempt(state, plan.entries[at : at + n], plan, group, job=job)
        except DpsuError as exc:  # the store refused the charge (the cap, reached from another tab or tool)
            show_error(exc, f"{job.label}: refused by the privacy ledger, nothing was run")
            break
        at += n
        redraw_ledger()  # the sidebar shows the spend at once
        try:
            rel = job.run(corpus, progress=_bar_progress(bar, i / len(jobs), 1.0 / len(jobs)))
        except Exception as exc:
            show_error(exc, f"{job.label}: the release failed (its budget is spent all the same)")
            continue
        params = list_mechanisms()[job.calibration.mechanism].params_for(_workspace.mechanism_values(state))
        _account.add_release(state, rel, source, params, group=group)
        done.append(rel)
    return done


def release_on_private(job: ReleaseJob, plan: SpendPlan) -> Release | None:
    """The step after exploring: go back to the private corpus and release there once with the configuration
    chosen while exploring (``plan`` was made for the private corpus; recorded in the ledger)."""
    state = app_state()
    _workspace.back_to_private(state)
    if state.corpus is None:
        return None
    done = run_releases(state.corpus, [job], plan)
    return done[0] if done else None


def run_comparison(corpus: Corpus, names: list[str], runs: int, plan: SpendPlan) -> None:
    """``compare_runs`` at the sidebar budget under a progress bar; each run enters the ledger just before it
    starts and the history (one batch, each run's release kept and exportable) once it is made; the table is
    stored in the session."""
    state = app_state()
    bar = st.progress(0.0, text="Starting…")
    group = _account.begin_spend(state, plan)
    batch = f"{plan.action} (batch {group.number})" if group is not None else ""

    def record(cal: Calibration) -> None:
        _account.record_run(state, cal, plan, group)
        redraw_ledger()

    def keep(rel: Release, params: dict[str, Any]) -> None:
        if group is not None:  # runs on an exploration corpus spend nothing: only the table is kept
            _account.add_release(state, rel, "Compare", params, group=group, batch=batch)

    ok = False
    try:
        with running():  # the sidebar's redraw after each run skips its search over totals
            state.comparison = compare_runs(
                corpus,
                names,
                state.budget.epsilon,
                state.budget.delta,
                compare_params(names, _workspace.mechanism_values(state)),
                runs,
                seed=TEACHING_SEED if state.teaching else None,
                progress=_bar_progress(bar),
                record=record,
                keep=keep,
            )
        ok = True
    except Exception as exc:
        show_error(exc, "the comparison failed")  # the runs attempted before the failure are in the ledger
    bar.empty()
    spent_done(plan, ok)


def compare_params(names: list[str], values: Mapping[str, object]) -> dict[str, Any]:
    """The parameters the chosen mechanisms take, from everything the app has set (compare_runs hands each its own)."""
    regs = list_mechanisms()
    out: dict[str, Any] = {}
    for n in names:
        if n in regs:
            out.update(regs[n].params_for(values))
    return out
