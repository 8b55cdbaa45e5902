"""Page 2: pick a mechanism, see its calibration, run it, inspect the released set."""

import pandas as pd
import streamlit as st

from dpsu_core.accounting.history import RELEASE_PAGE
from dpsu_core.analysis.charts import item_user_distribution_chart, utility_curve_chart
from dpsu_core.analysis.counts_advice import counts_advice
from dpsu_core.analysis.metrics import canaries_released
from dpsu_core.analysis.utility import has_preview, utility_preview
from dpsu_core.corpus import LoadOptions
from dpsu_core.corpus.segment import korean_items
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import list_mechanisms, mechanism_class
from dpsu_core.mechanisms.item_counts import cost_line, counts_of
from dpsu_core.outputs.export import guarantee_text
from dpsu_core.params import OPTIONS
from dpsu_core.privacy import delta_guidance
from dpsu_core.wording import count_text
from pages import _account, _run, _ui, _workspace
from pages._format import (
    ROUND_FORMATS,
    calibration_rows,
    escape_markdown,
    filter_items,
    mechanism_labels,
    rounds_frame,
)
from pages._state import CountsOption, app_state
from pages._text import BUDGET_PARAMS
from pages._upload import content_note, load_flow, upload_section

_ui.require_app()

TINY_RELEASE = 10  # a release this small gets the utility preview as its explanation


def utility_section(cal, max_items: int):
    """The utility preview of the calibration (public), or None for a mechanism without one (PCR)."""
    st.subheader("Utility preview (public: from the parameters only)")
    if not has_preview(cal.mechanism):
        try:
            utility_preview(cal)
        except ParameterError as exc:  # says why this mechanism has no preview
            st.info(escape_markdown(str(exc)))
        return None
    m = st.number_input(
        "Assume each user holding an item has this many distinct items",
        **_ui.bounds("max_items"),  # the same range as Δ0's widget: the preview follows any Δ0 the sidebar takes
        value=int(max_items),
        step=1,
        key="preview_items_per_user",
        help="Fewer items per user means more weight per item. Δ0 is the worst case the calibration is built for.",
    )
    try:
        p = utility_preview(cal, int(m))
    except Exception as exc:
        _ui.show_error(exc, "no utility preview")
        return None
    k50, k90 = p.users_needed[0.5], p.users_needed[0.9]
    c = st.columns(3)
    c[0].metric("Users for a 50% chance", "never" if k50 is None else f"{k50:,}")
    c[1].metric("Users for a 90% chance", "never" if k90 is None else f"{k90:,}")
    c[2].metric("Highest chance", f"{p.ceiling:.1%}")
    st.caption(p.assumptions)
    with st.expander("Chance of release by number of users"):
        st.altair_chart(utility_curve_chart(p.curve(), p.users_needed), width="stretch")
    return p


def counts_section(name: str, cls, budget):
    """The noisy counts option (``mechanisms.item_counts``): its share of the budget and per-user bound, and its
    cost stated before it runs. Returns the counts' calibration, or None when the option is off."""
    st.subheader("Noisy counts (optional)")
    if cls.kind == "count":
        st.caption(f"{cls.label} releases noisy counts of its own.")
        return None
    opt = state.counts
    on = st.checkbox(
        "Also release noisy counts of the released items",
        value=opt.on,
        key="with_counts",
        help="A second private step in the same run: each user's counts of the released items, scaled to an l2 "
        "norm of at most the bound, summed, plus Gaussian noise. It takes its share of ε and δ; the items get the "
        "rest. The Export page's subword tokenizers (BPE, WordPiece, Unigram) train on these counts.",
    )
    share, clip = opt.share, opt.clip
    if on:
        c1, c2 = st.columns(2)
        share = c1.number_input(
            OPTIONS["counts_share"].label,
            **_ui.bounds("counts_share"),
            value=float(opt.share),
            step=0.05,
            format="%.2f",
            key="counts_share",
            help="The counts run at this share of (ε, δ), the set release at the rest (basic composition).",
        )
        clip = c2.number_input(
            OPTIONS["counts_clip"].label,
            **_ui.bounds("counts_clip"),
            value=float(opt.clip),
            step=0.5,
            format="%.2f",
            key="counts_clip",
            help="Each user's vector of counts is scaled down to this l2 norm; the noise grows with it. At 1 every "
            "user holding a released item adds a unit vector (their share of each word): no user weighs more.",
        )
    state.counts = CountsOption(bool(on), float(share), float(clip))
    try:
        cc = _run.counts_calibration(name, budget, state.counts)
    except Exception as exc:
        _ui.show_error(exc, "the noisy counts' parameters are not valid")
        st.stop()
    if cc is not None:
        st.info(escape_markdown("Before it runs: " + cost_line(cc) + "."), icon=_ui.ICONS["ledger"])
    return cc


def explain_small_release(n: int, p, corpus) -> None:
    """Why a release came back empty or tiny: the preview next to the corpus's (NOT private) item-user counts."""
    k50 = p.users_needed[0.5]
    have = int((corpus.user_counts >= k50).sum()) if k50 is not None else 0
    st.warning(
        f"Only {n} item{'s' if n != 1 else ''} released. At this budget an item needs about "
        + ("more users than any corpus has" if k50 is None else f"{k50:,} users")
        + f" for an even chance of release (utility preview, public). In this corpus {have:,} items have that many "
        "users (raw count, NOT private). Raise ε, lower Δ0 (if users hold few items), or use a corpus with more "
        "users.",
        icon=_ui.ICONS["warning"],
    )
    st.altair_chart(item_user_distribution_chart(corpus.user_counts, p.users_needed), width="stretch")


state = app_state()
st.title("2 · Release")
st.caption(
    "Choose a mechanism and its parameters. Only the released set (and, for count mechanisms, the noisy "
    "counts) is private; the calibration depends on the parameters only, never on the data."
)

corpus = _ui.get_corpus()
if corpus is None:
    st.stop()
korean = korean_items(corpus.source.detected, state.corpus_options.korean)
if korean:  # what the items of a Korean corpus are (the Corpus page's 'Korean' choice)
    st.caption(escape_markdown(korean))

regs = list_mechanisms()
labels = mechanism_labels()
names = list(regs)
prev = state.mechanism
name = str(
    st.selectbox(
        "Mechanism",
        names,
        index=names.index(prev) if prev in names else 0,
        format_func=lambda n: labels[n],
        key="mechanism",
    )
)
state.mechanism = name
cls = regs[name]
st.caption(cls.summary)

b = state.budget
m = st.columns(4)
m[0].metric("ε", f"{b.epsilon:g}")
m[1].metric("δ", f"{b.delta:.1e}")
m[2].metric("Δ0 (max items per user)", count_text(b.max_items) if "max_items" in cls.param_names else "not used")
m[3].metric("α", f"{b.alpha:g}" if "alpha" in cls.param_names else "not used")
g = delta_guidance(b.delta, corpus.n_users)
{"ok": st.success, "warning": st.warning, "error": st.error}[g.level](g.message)
st.caption("ε, δ, Δ0 and α are set in the sidebar.")

# Mechanism-specific parameters, generated from the ParamSpecs.
extra = [spec for spec in cls.param_specs() if spec.name not in BUDGET_PARAMS]
if extra:
    st.subheader("Parameters")
    _ui.param_widgets(extra, corpus)
if cls.takes_public_corpus:
    st.markdown(
        "**Public frequencies for GW-KT.** By default the public English word list of `wordfreq`; "
        "or upload a PUBLIC corpus (never the private one)."
    )
    pub = upload_section("public", "Public corpus (optional)", corpus.max_n)
    if state.uploads["public"].pending is None:  # no file (or removed): wordfreq
        state.public = None
    load = None  # the public file's options, once its button is pressed
    if pub is not None and (state.public is None or state.public.key != (pub.upload.digest, pub.upload.name)):
        if st.button("Use this public corpus", key="public_use"):
            load = pub.options(LoadOptions(max_n=corpus.max_n))
    load_flow("public", pub, load)  # loads it; or asks "Load it anyway?" and waits
    if state.public is not None:
        st.caption(f"GW-KT's frequencies come from {escape_markdown(state.public.name)} (public).")
        content_note(state.public.note)
    else:
        st.caption("GW-KT's frequencies come from wordfreq's English list.")

cc = counts_section(name, cls, b)

st.subheader("Calibration (public: depends on the parameters only)")
if cc is not None:
    st.caption(f"The set release's calibration, at its part of the budget (ε = {cc.total_epsilon - cc.epsilon:.4g}).")
try:  # the release job: built and priced once; the spend gate plans with it and the runner runs it as charged
    job = _run.make_job(name, b, _workspace.mechanism_values(state), cc, teaching=state.teaching)
    cal = job.calibration
except Exception as exc:
    _ui.show_error(exc, "these parameters are not valid")
    st.stop()
view = mechanism_class(cal.mechanism).calibration_view(cal)  # one threshold, or rounds (headline: the last)
shown = [(label, "—" if v is None else f"{v:.4g}") for label, v in view.headline]
for col, (label, text) in zip(st.columns(len(shown)), shown):
    col.metric(label, text)
rounds = rounds_frame(cal)
if rounds is not None:
    st.caption(view.note)
    formats = {c: st.column_config.NumberColumn(format=f) for c, f in ROUND_FORMATS.items() if c in rounds}
    st.dataframe(rounds, hide_index=True, key="rounds_table", column_config=formats)
with st.expander("Full calibration"):
    st.dataframe(
        pd.DataFrame(calibration_rows(cal), columns=["quantity", "value"]), hide_index=True, key="calibration_table"
    )

preview = utility_section(cal, b.max_items)
if cc is not None:  # the counts' worth, from the parameters: the preview's items per user, this and the whole budget
    try:
        whole = _run.build_mechanism(name, b, _workspace.mechanism_values(state)).calibrate()
        advice = counts_advice(cc, preview.items_per_user if preview else b.max_items, cal, whole)
    except Exception as exc:
        _ui.show_error(exc, "no advice on the noisy counts")
    else:
        st.info(escape_markdown("Are the counts worth it? " + advice.text))

label = cls.label


def with_counts(plan):
    """The plan with the noisy counts' step (its ledger entry, the cost) when the option is on."""
    return plan if cc is None else _account.plan_counts(state, plan, cc)


if state.exploring:
    st.caption(
        f"Exploring on {escape_markdown(state.corpus_name)}: **Run release** here spends nothing. When the "
        f"configuration is right, **Release on the private corpus** runs it once on {escape_markdown(_workspace.private_name(state))}."
    )
    explore_plan = with_counts(_account.plan(state, f"Release ({label})", [(cal, 1)], RELEASE_PAGE))
    private_plan = with_counts(
        _account.plan_on(
            state,
            f"Release ({label})",
            [(cal, 1)],
            RELEASE_PAGE,
            on_private=True,
            corpus_name=_workspace.private_name(state),
        )
    )
    go = _ui.spend_gate(private_plan)
    c1, c2 = st.columns(2)
    if c1.button("Run release (exploration corpus)", key="run_release", width="stretch"):
        _run.run_releases(corpus, [job], explore_plan)
    if (
        c2.button(
            "Release on the private corpus", type="primary", key="release_private", width="stretch", disabled=not go
        )
        and go
    ):
        if _run.release_on_private(job, private_plan) is not None:
            st.rerun()
else:
    again = _ui.identical_offer(job)  # an identical release kept in the ledger: offered first, at no cost
    plan = with_counts(_account.plan(state, f"Release ({label})", [(cal, 1)], RELEASE_PAGE))
    go = _ui.spend_gate(plan)
    run_label = "Run release again (spends the budget again)" if again else "Run release"
    if st.button(run_label, type="primary", key="run_release", disabled=not go) and go:
        _run.run_releases(corpus, [job], plan)

record = state.history.last(state.corpus_id, RELEASE_PAGE)  # a release made on another page never replaces it
if record is None:
    st.info("Press **Run release** to draw a private release.")
    st.stop()

rel = record.release
rcal = rel.calibration
st.subheader("Released set (private)" if record.corpus.private else "Released set (exploration corpus)")
st.caption(
    f"Showing release {escape_markdown(record.title())}: the last made on this page"
    + (f" ({count_text(len(state.history))} in the session; Export lists them all)." if len(state.history) > 1 else ".")
    + (" OS-seeded noise." if rel.seed is None else f" Seed {rel.seed} (teaching).")
)
canaries = state.canaries
try:
    leaked = canaries_released(rel, canaries) if record.corpus.id == state.corpus_id else []
except Exception as exc:
    leaked = []
    _ui.show_error(exc, "could not check the canaries")
r = st.columns(3)
r[0].metric("Items released", f"{rel.n_released:,}")
r[1].metric("Canaries released", f"{count_text(len(leaked))} of {count_text(len(canaries))}")
r[2].metric(
    "Time",
    f"{rel.elapsed_seconds:.2f} s",
    help="Wall-clock time of the release. It depends on the corpus size: a raw-data diagnostic, not "
    "private, and never exported.",
)
if rel.seeded:
    st.error(escape_markdown(guarantee_text(rel)), icon=_ui.ICONS["warning"])
else:
    st.info(escape_markdown(guarantee_text(rel)), icon=_ui.ICONS["guarantee"])
if preview is not None and rel.n_released < TINY_RELEASE and rcal.mechanism == cal.mechanism:
    explain_small_release(rel.n_released, preview, corpus)
if leaked:
    st.warning(
        f"{count_text(len(leaked))} canaries were released. They are part of the differentially private output, but a "
        "release that exposes single-user strings means the budget is far too loose (ε too large or δ too "
        "close to 1/users).",
        icon=_ui.ICONS["warning"],
    )
    st.dataframe(pd.DataFrame({"released canary": leaked}), hide_index=True, key="leaked_canaries")

per_length = rel.per_length()
if len(per_length) > 1 or cls.kind == "ngram":
    st.dataframe(
        pd.DataFrame({"n": list(per_length), "released": list(per_length.values())}),
        hide_index=True,
        key="per_length_table",
    )
    try:
        from dpsu_core.analysis.charts import released_per_length_chart

        st.altair_chart(released_per_length_chart(per_length), width="stretch")
    except ImportError:
        pass

released_counts = counts_of(rcal)
if released_counts is not None:
    st.markdown("**Noisy counts (private)**")
    st.caption(
        escape_markdown(
            f"The “noisy count” column is NOT how often the words occur: each user's counts of the released items "
            f"were scaled to l2 norm at most {released_counts.clip:g}, summed, and Gaussian noise of σ = "
            f"{released_counts.sigma:.4g} added (rounded, below 0 shown as 0). Released at ε = "
            f"{released_counts.epsilon:.4g}, δ = {released_counts.delta:.3g}; the Export page's subword tokenizers "
            "train on them."
        )
    )
query = st.text_input("Search released items", key="item_search", placeholder="substring, e.g. the")
frame = filter_items(rel.private_frame(), query)
if released_counts is not None:
    frame = frame.rename(columns={"count": "noisy count", "std": "noise σ"})
st.caption(f"{len(frame):,} of {rel.n_released:,} items shown")
st.dataframe(frame, hide_index=True, width="stretch", key="released_table")
