"""The corpus in use: installing a private corpus, exploring another one beside it and coming back, how a
release names its corpus, and the mechanism parameters the session has set. Each acts on the session's
``AppState`` (``pages._state``)."""

from __future__ import annotations

import streamlit as st

from dpsu_core.accounting.account import CorpusAccount
from dpsu_core.accounting.history import CorpusRef
from dpsu_core.corpus import Corpus, LoadOptions
from dpsu_core.corpus.fingerprint import Content, is_known
from dpsu_core.corpus.load import as_loaded
from pages._state import CANARY_TEXT_KEY, UPLOAD_KEY, WORKSPACE_FIELDS, AppState, Workspace, app_state, set_widget


def _copy(state: AppState) -> Workspace:
    w = Workspace(**{name: getattr(state, name) for name in WORKSPACE_FIELDS})
    w.canaries = list(w.canaries)
    return w


def _restore(state: AppState, w: Workspace) -> None:
    for name in WORKSPACE_FIELDS:
        setattr(state, name, getattr(w, name))
    state.canaries = list(w.canaries)
    state.export_cache = None


def _new_id(state: AppState) -> None:
    state.ids_issued += 1
    state.corpus_id = state.ids_issued


def set_corpus(
    state: AppState,
    corpus: Corpus,
    name: str,
    options: LoadOptions,
    *,
    is_demo: bool,
    canaries: list[str],
    dataset_key: str | None = None,
    input_name: str | None = None,
    fingerprint: Content | None = None,
) -> None:
    """Install a newly loaded PRIVATE corpus with its own canaries (``fingerprint``: its file's content);
    results of the previous one no longer apply, and an exploration in progress ends (its corpus is dropped).
    GW-KT's public corpus goes when it is this file, or holds too much of its content (``fingerprint``)."""
    state.exploring, state.private = False, None
    options = as_loaded(options, corpus.source)  # what the load did (a redo pins it): not what is installed now
    state.corpus, state.corpus_name, state.corpus_options, state.is_demo = corpus, name, options, is_demo
    state.fingerprint, state.content_note = fingerprint, ""
    pub = state.public
    if pub is not None and (
        dataset_key == UPLOAD_KEY + pub.digest
        or (fingerprint is not None and pub.fingerprint is not None and is_known(pub.fingerprint, fingerprint))
    ):
        state.public = None  # now the private data
    _new_id(state)
    state.dataset_key = dataset_key or name
    state.input_name = input_name or name
    state.canaries = list(canaries)
    state.comparison, state.export_cache, state.neighbours = None, None, None


def install_corpus(
    corpus: Corpus,
    name: str,
    options: LoadOptions,
    *,
    is_demo: bool,
    canaries: list[str],
    message: str | None = None,
    dataset_key: str | None = None,
    input_name: str | None = None,
    fingerprint: Content | None = None,
    account: CorpusAccount | None = None,
) -> None:
    """``set_corpus`` on this session plus the widgets that show the corpus (``account``: the durable store's
    account of an uploaded private corpus, attached under its key). The canary text area is reset too,
    else its old text would be parsed back into the canaries on the next run. With a ``message`` (a load
    from the Corpus page) the script reruns at once, so the sidebar, drawn before the page, shows the new
    corpus and its δ guidance; the message is shown once after that rerun."""
    state = app_state()
    set_corpus(
        state,
        corpus,
        name,
        options,
        is_demo=is_demo,
        canaries=canaries,
        dataset_key=dataset_key,
        input_name=input_name,
        fingerprint=fingerprint,
    )
    if account is not None:
        state.ledger.attach(state.dataset_key, account)
        state.ledger_note = (account.note, account.warning)
    set_widget(CANARY_TEXT_KEY, "\n".join(canaries))
    if message is not None:
        state.flash = message
        st.rerun()


def explore(
    state: AppState,
    corpus: Corpus,
    name: str,
    options: LoadOptions | None = None,
    canaries: list[str] | None = None,
    note: str = "",
) -> None:
    """Work on ``corpus`` (the demo, a public file or a simulated corpus) instead of the private corpus
    (``note``: what the content check said of a file). The private corpus and its results are kept aside
    untouched; nothing run now enters the ledger."""
    if not state.exploring:
        state.private = _copy(state)
    state.exploring = True
    _restore(state, Workspace(corpus, name, options or LoadOptions(), is_demo=False, canaries=list(canaries or [])))
    state.content_note = note
    _new_id(state)


def back_to_private(state: AppState) -> None:
    """Return to the private corpus and the results made on it before the exploration."""
    if state.exploring and state.private is not None:
        _restore(state, state.private)
    state.exploring, state.private = False, None


def private_work(state: AppState) -> Workspace:
    """The private corpus's workspace: kept aside while exploring, else the one in use."""
    return state.private if state.exploring and state.private is not None else state


def private_name(state: AppState) -> str:
    """The private corpus's name (also while exploring)."""
    return private_work(state).corpus_name


def private_digest(state: AppState) -> str | None:
    """The content digest of the private corpus's file (None for the bundled demo)."""
    key = private_work(state).dataset_key
    return key.removeprefix(UPLOAD_KEY) if key.startswith(UPLOAD_KEY) else None


def corpus_ref(state: AppState) -> CorpusRef:
    """The corpus in use, as a release names it."""
    return CorpusRef(
        state.corpus_id,
        state.corpus_name,
        state.dataset_key,
        not state.exploring,
        state.input_name if not state.exploring else "",
        state.corpus_options,
    )


def private_ref(state: AppState) -> CorpusRef:
    """The private corpus (also while exploring), as a release or a spend names it."""
    if state.exploring and state.private is not None:
        w = state.private
        return CorpusRef(w.corpus_id, w.corpus_name, w.dataset_key, True, w.input_name, w.corpus_options)
    return corpus_ref(state)


def public_corpus(state: AppState) -> Corpus | None:
    """GW-KT's public frequencies (None: wordfreq)."""
    return None if state.public is None else state.public.corpus


def mechanism_values(state: AppState) -> dict[str, object]:
    """Every mechanism parameter the app has set: the sidebar's Δ0 and α, the Release page's choices and
    GW-KT's public corpus. ``Mechanism.params_for`` takes from it what one mechanism uses."""
    return {
        **state.param_values,
        "max_items": state.budget.max_items,
        "alpha": state.budget.alpha,
        "public_source": public_corpus(state),
    }
