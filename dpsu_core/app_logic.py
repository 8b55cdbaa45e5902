"""Small helpers behind the Streamlit pages. No Streamlit here: pages call these and only lay out.

Everything a page shows as a number comes from dpsu_core; this module only glues the pieces
(load an upload from bytes, guidance text for delta, which parameters a mechanism takes, the
teaching seed, the demo corpus).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .corpus import FORMATS, TOKENIZERS  # noqa: F401  re-exported for the pages
from .corpus.model import Corpus
from .errors import InputError
from .mechanisms import get_mechanism, mechanisms
from .mechanisms.base import Calibration, ProgressFn, Release
from .mechanisms.params import PARAMS, ParamSpec

TEACHING_SEED = 20240601  # fixed seed of teaching mode: the class sees the same results, NOT for real releases
DEFAULT_EPSILON = 3.0
DEFAULT_DELTA = 1e-6
DEFAULT_MECHANISM = "policy-gaussian"
BUDGET_PARAMS = ("max_items", "alpha")  # shown in the sidebar; every other parameter on the Release page


# ---- demo corpus ---------------------------------------------------------------------------
def demo_path() -> Path:
    from .demo import DEMO_CSV

    return DEMO_CSV


def demo_canaries() -> list[str]:
    from .demo import load_canaries

    return load_canaries()


# ---- loading ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadOptions:
    """The reader and preprocessing choices of the Corpus page (hashable: the corpus cache key)."""

    format: str = "auto"
    user_col: str | None = None
    text_col: str | None = None
    has_header: bool | None = None
    max_n: int = 1
    tokenizer: str = "fast"
    lowercase: bool = True
    strip_urls: bool = True
    drop_removed: bool = True
    strip_symbols: bool = True

    def kwargs(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _check_upload(data: bytes, name: str) -> None:
    if not isinstance(data, (bytes, bytearray)) or len(data) == 0:
        raise InputError(f"the uploaded file {name!r} is empty; upload a file with at least two users' posts")


def peek_upload(
    data: bytes, name: str, has_header: bool | None = None, format: str = "auto"
) -> tuple[list[str], str | None, str | None]:
    """(columns, guessed user column, guessed text column) of an uploaded file; ([], None, None) if it has none."""
    from .corpus import guess_columns, peek_columns

    _check_upload(data, name)
    buf = io.BytesIO(bytes(data))
    buf.name = name
    cols = [str(c) for c in (peek_columns(buf, format=format, has_header=has_header) or [])]
    if not cols:
        return [], None, None
    try:
        user, text = guess_columns(cols)
    except InputError:
        user, text = None, None
    return cols, user, text


def load_upload(data: bytes, name: str, options: LoadOptions = LoadOptions()) -> Corpus:
    """Tokenize an uploaded file (bytes + its name) into a Corpus, in memory only (nothing is written to disk)."""
    from .corpus import load_corpus

    _check_upload(data, name)
    buf = io.BytesIO(bytes(data))
    buf.name = name
    return load_corpus(buf, name=name, **options.kwargs())


def load_demo(options: LoadOptions = LoadOptions()) -> Corpus:
    from .corpus import load_corpus

    return load_corpus(demo_path(), name="demo corpus (synthetic)", **options.kwargs())


# ---- delta guidance -------------------------------------------------------------------------
@dataclass(frozen=True)
class Guidance:
    level: str  # "ok", "warning" or "error"
    message: str
    suggested: float


def suggested_delta(n_users: int) -> float:
    """A power of ten at or below 1/(100 n): well below the 1/n at which one user could be exposed."""
    n = max(int(n_users), 1)
    return float(10.0 ** math.floor(math.log10(1.0 / (100.0 * n))))


def delta_guidance(delta: float, n_users: int) -> Guidance:
    """Is delta well below 1/n? delta is the probability that the epsilon guarantee fails."""
    n = max(int(n_users), 1)
    sug = suggested_delta(n)
    if delta >= 1.0 / n:
        return Guidance(
            "error",
            f"δ = {delta:.2g} is at least 1/(number of users) = {1.0 / n:.2g}: a mechanism "
            f"with this δ could publish one user's data outright. Use δ ≤ {sug:.0e}.",
            sug,
        )
    if delta > 0.1 / n:
        return Guidance(
            "warning", f"δ = {delta:.2g} is not well below 1/(number of users) = {1.0 / n:.2g}. Use δ ≤ {sug:.0e}.", sug
        )
    return Guidance("ok", f"δ = {delta:.2g} is well below 1/(number of users) = {1.0 / n:.2g}.", sug)


# ---- mechanisms and their parameters -------------------------------------------------------
def mechanism_labels() -> dict[str, str]:
    """name -> 'Label (kind)' for the drop-down, in registry order."""
    return {name: f"{cls.label} ({cls.kind})" for name, cls in mechanisms().items()}


def extra_param_specs(name: str) -> list[ParamSpec]:
    """The parameter specs of a mechanism beyond the sidebar ones (ε, δ, Δ0, α)."""
    cls = mechanisms()[name]
    return [PARAMS[p] for p in cls.param_names if p not in BUDGET_PARAMS]


def all_extra_param_specs() -> list[ParamSpec]:
    """Every parameter some mechanism takes beyond the sidebar ones, in PARAMS order."""
    used = {p for cls in mechanisms().values() for p in cls.param_names}
    return [spec for n, spec in PARAMS.items() if n in used and n not in BUDGET_PARAMS]


def params_for(name: str, values: dict[str, Any]) -> dict[str, Any]:
    """Only the parameters mechanism ``name`` takes (``compare.params_for``), dropping unset ones."""
    from .compare import params_for as _params_for

    return {k: v for k, v in _params_for(mechanisms()[name], values).items() if v is not None}


def takes_public_source(name: str) -> bool:
    """Does the mechanism order items by a public frequency source (GW-KT)?"""
    from .compare import accepted_params

    return "public_source" in accepted_params(mechanisms()[name])


def default_param_value(spec: ParamSpec, corpus: Corpus | None = None) -> Any:
    """Widget default: the spec's default, except n-gram lengths follow the loaded corpus."""
    if corpus is not None and spec.name == "max_n":
        return max(1, corpus.max_n)
    return spec.default


def calibrate(name: str, epsilon: float, delta: float, values: dict[str, Any]) -> Calibration:
    return get_mechanism(name, epsilon=epsilon, delta=delta, **params_for(name, values)).calibrate()


def run_release(
    corpus: Corpus,
    name: str,
    epsilon: float,
    delta: float,
    values: dict[str, Any],
    *,
    teaching: bool,
    progress: ProgressFn | None = None,
) -> Release:
    """One release. Teaching mode fixes the seed; otherwise the noise is seeded by the OS."""
    mech = get_mechanism(name, epsilon=epsilon, delta=delta, **params_for(name, values))
    return mech.release(corpus, seed=TEACHING_SEED if teaching else None, progress=progress)


def calibration_rows(cal: Calibration) -> list[tuple[str, str]]:
    """(quantity, value) rows for display: the public calibration, nothing from data."""
    scale_name = "λ (Laplace scale)" if cal.noise == "laplace" else "σ (noise std)"
    rows = [("noise", cal.noise), (scale_name, f"{cal.scale:.6g}")]
    if cal.rho is not None:
        rows.append(("ρ (threshold)", f"{cal.rho:.6g}"))
    if cal.gamma is not None:
        rows.append(("Γ (cutoff)", f"{cal.gamma:.6g}"))
    for k, v in cal.details.items():
        rows.append((str(k), _fmt(v)))
    return rows


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, (int, float)) for x in v):
        return ", ".join(f"{x:.4g}" for x in v)
    return str(v)


# ---- canaries -------------------------------------------------------------------------------
def parse_canaries(text: str) -> list[str]:
    """One canary per line (blank lines ignored)."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


# ---- sidebar summary --------------------------------------------------------------------------
def budget_summary(epsilon: float, delta: float, max_items: int, alpha: float) -> str:
    return f"ε = {epsilon:g}, δ = {delta:.1e}, Δ0 = {int(max_items)}, α = {alpha:g}"


def teaching_note() -> str:
    return (
        f"Teaching mode: the random seed is fixed ({TEACHING_SEED}) so everyone sees the same results. "
        "Releases made this way are NOT private in practice and not for real use."
    )


def released_table(release: Release):
    """The released items as a DataFrame (the private output only), optionally filtered later by the page."""
    return release.private_frame()


def filter_items(frame, query: str):
    """Rows whose item contains ``query`` (plain substring, case-insensitive)."""
    if not query:
        return frame
    mask = frame["item"].astype(str).str.contains(query, case=False, regex=False)
    return frame[np.asarray(mask, dtype=bool)]


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:&\"'=")


def escape_markdown(text: str) -> str:
    """Backslash-escape Markdown/HTML punctuation so user-supplied text (file names, column names,
    error messages quoting them) is shown literally in Streamlit elements that render Markdown."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


# ---- thresholds page ---------------------------------------------------------------------------
EPSILON_GRID = [0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
MAX_ITEMS_GRID = [1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 1000]
THRESHOLDS_EXPLANATION = """
**GW as published, and why dpsu does not use it.** A threshold ρ must stop items that only one of two
neighbouring corpora can release. In GW each user gives the full gap up to Γ ≥ 1 to one item at a time, so the
added user can start at most one new item: Carvalho et al. take that case, ρ = 1 − ln(2δ)/ε, flat in Δ0 (the
"GW as published (unproven reference)" line). The argument forgets the other users: once the added user fills
items that later users also hold, those users spend their leftover budget on their own items that had weight 0
without the added user, so items nobody could release before become releasable. The published ρ is not proven.

**dpsu's GW threshold (the capped form).** Each user's greedy update runs on its first Δ0 items only (in its own
order), and every item in some user's first Δ0 is a candidate that gets noise, weight 0 included. Other users'
spill-over then lands on items that were candidates already, and the only new candidates are the added user's
own first Δ0 items, carrying total weight ≤ 1: ρ = ln((e^ε + Δ0 − 1)/(2δ))/ε. It grows with ln Δ0, needs no
bound on the number of users, and at Δ0 = 1 equals the published value.

**Why Count thresholds explode with Δ0.** Count adds +1 to every kept item, so one user can move up to Δ0
weights by 1 each: the l1-sensitivity is Δ0 (Laplace scale Δ0/ε) and the l2-sensitivity √Δ0. Both the noise and
ρ scale with Δ0 (or √Δ0), so with Δ0 = 100 an item needs hundreds of users before it can be released.
"""


def weighted_mechanism_names() -> list[str]:
    """Mechanisms that build a weighted histogram H (set-union and n-gram kinds)."""
    return [n for n, cls in mechanisms().items() if cls.kind in ("set-union", "ngram")]


K_GRID = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]


COMPARE_DEFAULT = ["weighted-laplace", "weighted-gaussian", "policy-laplace", "policy-gaussian", "gw"]


def compare_params(names: list[str], values: dict[str, Any]) -> dict[str, Any]:
    """The parameters the chosen mechanisms take, from everything the app has set (compare_runs hands each its own)."""
    out: dict[str, Any] = {}
    for n in names:
        out.update(params_for(n, values))
    return out


def export_basename(release: Release) -> str:
    """File name stem for downloads: mechanism and budget (public), e.g. dpsu_policy-gaussian_eps3_delta1e-06."""
    cal = release.calibration
    stem = f"dpsu_{cal.mechanism}_eps{cal.epsilon:g}_delta{cal.delta:.0e}"
    return stem + ("_TEACHING" if release.seed is not None else "")


# ---- export page ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportFile:
    """One download: what the button says, the bytes, the file name, the MIME type, the widget key."""

    group: str  # "items" (the released set) or "report" (what was run and its guarantee)
    label: str
    data: bytes
    file_name: str
    mime: str
    key: str


def export_files(release: Release) -> list[ExportFile]:
    """Every download of a release, built ONCE per release (the page caches them): the report's date is then
    the date the export was first built, not the time of the latest rerun, so a file's URL stays the same
    while the user clicks the buttons. Only the private output goes in (``dpsu_core.export``)."""
    from .export import report_json, report_markdown, to_csv_bytes, to_json_bytes, to_txt_bytes

    base = export_basename(release)
    return [
        ExportFile("items", "Released items (CSV)", to_csv_bytes(release), f"{base}.csv", "text/csv", "dl_csv"),
        ExportFile(
            "items", "Released items (JSON)", to_json_bytes(release), f"{base}.json", "application/json", "dl_json"
        ),
        ExportFile("items", "Released items (TXT)", to_txt_bytes(release), f"{base}.txt", "text/plain", "dl_txt"),
        ExportFile(
            "report",
            "Release report (JSON)",
            report_json(release),
            f"{base}_report.json",
            "application/json",
            "dl_report_json",
        ),
        ExportFile(
            "report",
            "Release report (Markdown)",
            report_markdown(release).encode("utf-8"),
            f"{base}_report.md",
            "text/markdown",
            "dl_report_md",
        ),
    ]


# ---- compare page ----------------------------------------------------------------------------------
SD_UNDEFINED = "–"


def compare_summary_display(summary):
    """``compare.summarize`` for display: the sd as text, "–" where it is undefined (a single run has no
    sample standard deviation), instead of a bare None/NaN cell."""
    out = summary.copy()
    sd = out["sd"].astype(float)
    out["sd"] = [f"{v:.1f}" if np.isfinite(v) else SD_UNDEFINED for v in sd]
    return out
