"""The data custodian's page: register corpora with their caps, change a cap, see every corpus's spend (in total
and per analyst), every ledger entry, release and refusal; export the ledger and verify its hash chain.

Only custodians have this page in their navigation (app.py), the page refuses anyone else, and every action goes
through ``dpsu_core.accounting.custodian``, which checks the role again on the server when the action runs."""

import pandas as pd
import streamlit as st

from dpsu_core.accounting import custodian
from dpsu_core.accounting.custodian import CorpusSpend
from dpsu_core.accounting.identity import Identity
from dpsu_core.accounting.store import LedgerStore
from dpsu_core.errors import DpsuError
from dpsu_core.params import OPTIONS
from pages import _account, _auth, _ui, _workspace
from pages._format import escape_markdown
from pages._state import app_state
from pages._text import DEFAULT_DELTA

_ui.require_app()

st.title("Custodian")
who = _auth.current_identity()
if not who.is_custodian:
    st.error("This page is the data custodian's only.", icon=_ui.ICONS["error"])
    st.stop()

try:
    store = _auth.ledger_store()
except Exception as exc:  # a bad $DPSU_LEDGER, an unreachable database: one line, never a traceback
    _ui.show_error(exc, "the ledger cannot be opened")
    st.stop()
st.caption(
    escape_markdown(f"The ledger: {store.backend} at {store.location}. You act as {who.actor}; ")
    + "every registration and cap change is recorded in the corpus's hash chain with your name."
)


def _cap_inputs(prefix: str, epsilon: float, delta: float) -> tuple[float, float]:
    c1, c2 = st.columns(2)
    (lo_e, hi_e), (lo_d, hi_d) = OPTIONS["cap_epsilon"].widget_range(), OPTIONS["cap_delta"].widget_range()
    e = c1.number_input(  # a cap outside the widget's range (DPSU_DEFAULT_CAP) is shown at the nearest end
        OPTIONS["cap_epsilon"].label,
        **_ui.bounds("cap_epsilon"),
        value=min(max(epsilon, lo_e), hi_e),
        step=0.5,
        key=prefix + "_eps",
    )
    d = c2.number_input(
        OPTIONS["cap_delta"].label,
        **_ui.bounds("cap_delta"),
        value=min(max(delta, lo_d), hi_d),
        step=1e-6,
        format="%.2e",
        key=prefix + "_delta",
    )
    return float(e), float(d)


def register_section(store: LedgerStore, who: Identity) -> None:
    st.subheader("Register a corpus")
    state = app_state()
    acc = _account.account(state)  # the private corpus loaded in this session, as the ledger knows it
    if acc is not None and acc.registered:
        st.caption(
            escape_markdown(
                f"The corpus loaded in this session is corpus '{acc.name}' of the ledger (cap ε = {acc.epsilon_cap:g}, "
                f"δ = {acc.delta_cap:.2g}): change its cap below. Type another name to register a corpus by name only "
                "(a Spark input, which is known by its name)."
            )
        )
    else:
        st.caption(
            "Load the corpus on the Corpus page first: it is registered with its fingerprint (its users' words as dpsu "
            "reads them), so every later upload or command-line input of the same users is charged to it. Without a "
            "loaded corpus, a name alone registers a corpus known by its name (a Spark input)."
        )
    new = acc is not None and not acc.registered
    with st.form("custodian_register"):
        name = st.text_input("corpus name", value="" if state.corpus is None else _workspace.private_name(state))
        e, d = _cap_inputs("custodian_register", float(OPTIONS["cap_epsilon"].default), float(DEFAULT_DELTA))
        if st.form_submit_button("Register", type="primary"):
            try:
                if new and acc is not None:
                    registered = custodian.register_loaded(who, acc, name, e, d)
                    state.ledger.attach(_workspace.private_work(state).dataset_key, registered)
                    c = store.corpus(registered.corpus_id)
                else:
                    c = custodian.register_corpus(store, who, name, e, d)
                st.success(
                    escape_markdown(f"registered corpus {c.name!r}: cap ε = {c.epsilon_cap:g}, δ = {c.delta_cap:.2g}")
                )
            except DpsuError as exc:
                _ui.show_error(exc, "not registered")


def default_cap_section(store: LedgerStore, who: Identity) -> None:
    e0, d0 = store.default_cap()
    with st.expander(escape_markdown(f"Default cap of a corpus nobody registered: ε = {e0:g}, δ = {d0:.2g}")):
        with st.form("custodian_default"):
            e, d = _cap_inputs("custodian_default", float(e0), float(d0))
            if st.form_submit_button("Change the default cap"):
                try:
                    custodian.set_default_cap(store, who, e, d)
                    st.rerun()
                except DpsuError as exc:
                    _ui.show_error(exc, "default cap not changed")


def corpus_section(store: LedgerStore, who: Identity, s: CorpusSpend) -> None:
    c = s.corpus
    title = f"{c.name}: spent {s.total.headline()} of cap ε = {c.epsilon_cap:g}, δ = {c.delta_cap:.2g}"
    with st.expander(escape_markdown(title), icon=_ui.ICONS["ledger"]):
        st.caption(escape_markdown(f"registered {c.created_utc} UTC by {c.created_by}; {s.total.detail()}"))
        st.markdown("**Spend per analyst**")
        rows = [{"analyst": a, "releases": t.releases, "spent": t.headline()} for a, t in s.by_actor.items()]
        st.dataframe(pd.DataFrame(rows, columns=["analyst", "releases", "spent"]), hide_index=True)
        with st.form(f"custodian_cap_{c.id}"):
            e, d = _cap_inputs(f"custodian_cap_{c.id}", float(c.epsilon_cap), float(c.delta_cap))
            if st.form_submit_button("Change the cap"):
                try:
                    custodian.set_cap(store, who, c.id, e, d)
                    st.rerun()
                except DpsuError as exc:
                    _ui.show_error(exc, "cap not changed")
        releases = custodian.release_list(store, who, c.id)
        st.markdown(f"**Releases kept** ({len(releases):,})")
        st.dataframe(
            pd.DataFrame(
                [{"id": r.id, "when (UTC)": r.created_utc, "items": len(r.items)} for r in releases],
                columns=["id", "when (UTC)", "items"],
            ),
            hide_index=True,
        )
        refusals = custodian.refusal_list(store, who, c.id)
        st.markdown(f"**Refusals** ({len(refusals):,})")
        st.dataframe(
            pd.DataFrame(
                [{"when (UTC)": r.time_utc, "who": r.actor, "tool": r.tool, "why": r.why} for r in refusals],
                columns=["when (UTC)", "who", "tool", "why"],
            ),
            hide_index=True,
        )


def ledger_section(store: LedgerStore, who: Identity) -> None:
    st.subheader("The ledger")
    rows = custodian.audit_rows(store, who)
    shown = ["seq", "corpus", "kind", "time_utc", "actor", "tool", "mechanism", "label", "epsilon", "delta", "hash"]
    st.dataframe(pd.DataFrame(rows, columns=shown), hide_index=True)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Export the ledger (JSON)", custodian.export_ledger(store, who, "json"),
                       file_name="dpsu-ledger.json", mime="application/json")  # fmt: skip
    c2.download_button("Export the ledger (CSV)", custodian.export_ledger(store, who, "csv"),
                       file_name="dpsu-ledger.csv", mime="text/csv")  # fmt: skip
    if c3.button("Verify the hash chain"):
        result = custodian.verify_ledger(store, who)
        if result.ok:
            st.success(f"The hash chain holds: {result.checked:,} entries checked.", icon=_ui.ICONS["ok"])
        else:
            st.error(escape_markdown(f"The hash chain is broken: {result.problem}"), icon=_ui.ICONS["error"])


try:
    register_section(store, who)
    default_cap_section(store, who)
    st.subheader("Corpora")
    spends = custodian.corpus_spend(store, who)
    if not spends:
        st.info("No corpus in the ledger yet.")
    for s in spends:
        corpus_section(store, who, s)
    ledger_section(store, who)
except DpsuError as exc:
    _ui.show_error(exc)
