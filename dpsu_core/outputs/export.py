"""Exports of a release: CSV / JSON / TXT of the released items and a release report.

Only private output leaves through here: ``Release.private_columns()`` (item, n, and for count
mechanisms the noisy count and its noise std), the calibration (a function of the parameters
only) and counts of released items. Never the weights, true counts, user ids, corpus statistics
or anything else in ``Release.diagnostics``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OutputError
from ..mechanisms.base import Release, check_release
from ..privacy.validate import check_path
from .writer import atomic_write as atomic_write  # re-exported: the output files' safety lives in ``outputs``
from .writer import check_output_paths as check_output_paths
from .writer import write_together

TEACHING_WARNING = (
    "fixed seed: NOT for real releases. The noise is reproducible from the seed, so this "
    "release carries no privacy guarantee; use it for teaching only."
)

# OWASP CSV-injection advice: a cell starting with one of these may run as a formula in a spreadsheet.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

REPORT_KEYS = (
    "mechanism",
    "label",
    "epsilon",
    "delta",
    "params",
    "calibration",
    "released_total",
    "released_per_length",
    "date_utc",
    "dpsu_version",
    "guarantee",
    "teaching_mode",
    "privacy_unit",
    "tokenization",
    "tokenizer",
    "warning",
    "session_spent",
    "release",
)
#: keys a report has only when asked for (or, ``warning``, in teaching mode); every other key of REPORT_KEYS is
#: always there. REPORT_KEYS and CALIBRATION_KEYS are the one allow-list: the tests and the docs read them here.
OPTIONAL_REPORT_KEYS = ("warning", "session_spent", "release", "tokenizer")
#: ``rounds``: a rounds mechanism's every round (``round_list``; empty for one threshold), whose last round's T and
#: Gamma are ``rho`` and ``gamma``, as the app and the Markdown report show them
CALIBRATION_KEYS = ("noise", "scale", "rho", "gamma", "details", "rounds")
ROUND_KEYS = ("round", "sigma", "threshold", "gamma", "delta", "share")


def neutralise_cell(value: Any) -> Any:
    """Prefix a single quote to a string cell that a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _private_columns(release: Release) -> dict[str, np.ndarray]:
    cols = check_release(release).private_columns()
    return {c: cols[c] for c in ("item", "n", "count", "std") if c in cols}


TEACHING_TXT_LINE = "# TEACHING RELEASE (fixed seed): NOT for real releases; this line is not an item"
TEACHING_CSV_LINE = (
    "# TEACHING RELEASE (fixed seed): NOT differentially private and NOT for real releases; "
    "this comment line is not a row (pandas: read_csv(..., comment='#'))"
)


def guarantee_text(release: Release) -> str:
    """The guarantee a release carries. A seeded (teaching) release carries none: its noise can be recomputed
    from the seed. The text then says so, and what the same configuration guarantees with fresh randomness."""
    cal = check_release(release).calibration
    if not release.seeded:
        return cal.guarantee
    return (
        "This release is NOT differentially private: its noise came from a fixed seed (teaching mode), so "
        "anyone who knows the seed can recompute the noise and remove it. With fresh randomness (no fixed seed) "
        "the same configuration would give this guarantee: " + cal.guarantee
    )


def to_csv_bytes(release: Release) -> bytes:
    """UTF-8 CSV with a header: item, n (and count, std for count mechanisms). String cells are neutralised.

    A seeded (teaching) release starts with ONE comment line (``TEACHING_CSV_LINE``) before the header, so the file
    itself says it is not for real use, once (not on every row).
    """
    cols = _private_columns(release)
    values = [
        [neutralise_cell(v) for v in col.tolist()] if col.dtype == object else col.tolist() for col in cols.values()
    ]
    buf = io.StringIO()
    if release.seeded:
        buf.write(TEACHING_CSV_LINE + "\n")
    writer = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    writer.writerow(list(cols))
    writer.writerows(zip(*values))
    return buf.getvalue().encode("utf-8")


def _records(release: Release) -> list[dict[str, Any]]:
    cols = {c: v.tolist() for c, v in _private_columns(release).items()}
    return [dict(zip(cols, vals)) for vals in zip(*cols.values())]


def _guarantee_header(release: Release) -> dict[str, Any]:
    cal = release.calibration
    head = {
        "mechanism": cal.mechanism,
        "label": cal.label,
        "epsilon": cal.epsilon,
        "delta": cal.delta,
        "guarantee": guarantee_text(release),
        "teaching_mode": release.seeded,
    }
    if release.seeded:
        head["warning"] = TEACHING_WARNING
    return head


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False).encode("utf-8")


def to_json_bytes(release: Release) -> bytes:
    """JSON: {"guarantee": {...}, "items": [{"item", "n"[, "count", "std"]}, ...]}; strings kept literal."""
    release = check_release(release)
    return _dumps({"guarantee": _guarantee_header(release), "items": _records(release)})


def to_txt_bytes(release: Release) -> bytes:
    """One released item per line, UTF-8. Line breaks inside an item (no tokenizer makes them) become spaces;
    an item a spreadsheet would read as a formula gets a leading quote, as in the CSV (``neutralise_cell``).

    A seeded (teaching) release starts with one ``# TEACHING RELEASE ...`` line that is not an item.
    """
    items = [
        neutralise_cell(str(s).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
        for s in check_release(release).items.tolist()
    ]
    head = TEACHING_TXT_LINE + "\n" if release.seeded else ""
    return (head + "".join(s + "\n" for s in items)).encode("utf-8")


def _finite_or_none(x: Any) -> Any:
    """JSON has no inf/NaN: write them as null (at any depth)."""
    if isinstance(x, dict):
        return {k: _finite_or_none(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite_or_none(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def report_dict(
    release: Release,
    session_spent: dict[str, Any] | None = None,
    release_name: str | None = None,
    tokenizer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What was run and what it guarantees. Keys: ``REPORT_KEYS`` (``warning`` only in teaching mode;
    ``session_spent`` only when the caller passes what the session had spent on the corpus at this release,
    ``ledger_summary`` taken when the release was made (``history.ReleaseRecord.spent``), never a later total;
    ``release`` only when the caller names which release of its session this is, ``ReleaseRecord.title``;
    ``tokenizer`` only when a tokenizer was exported: how it was built, ``tokenizer_export.build_tokenizer``)."""
    from .. import __version__

    release = check_release(release)
    cal = release.calibration.as_dict()
    rep: dict[str, Any] = {
        "mechanism": cal["mechanism"],
        "label": cal["label"],
        "epsilon": cal["epsilon"],
        "delta": cal["delta"],
        "params": _finite_or_none(cal["params"]),
        "calibration": {k: _finite_or_none(cal[k]) for k in CALIBRATION_KEYS if k != "rounds"}
        | {"rounds": _finite_or_none(round_list(release))},
        "released_total": release.n_released,
        "released_per_length": {str(k): v for k, v in release.per_length().items()},
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dpsu_version": __version__,
        "guarantee": guarantee_text(release),
        "teaching_mode": release.seeded,
        "privacy_unit": release.privacy_unit,
        "tokenization": release.tokenization,
    }
    if release.seeded:
        rep["warning"] = TEACHING_WARNING
    if session_spent is not None:
        rep["session_spent"] = session_spent
    if release_name is not None:
        rep["release"] = release_name
    if tokenizer is not None:
        rep["tokenizer"] = tokenizer
    return rep


def report_json(
    release: Release,
    session_spent: dict[str, Any] | None = None,
    release_name: str | None = None,
    tokenizer: dict[str, Any] | None = None,
) -> bytes:
    return _dumps(report_dict(release, session_spent, release_name, tokenizer))


def format_value(v: Any) -> str:
    """A parameter or calibration value as short text: floats to 6 significant digits, lists and dicts
    joined, booleans as yes/no (the release report and the app's calibration table)."""
    if isinstance(v, bool) or v is None:
        return {True: "yes", False: "no", None: "none"}[v]
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    if isinstance(v, dict):
        return ", ".join(f"{k} = {format_value(x)}" for k, x in v.items()) or "none"
    if isinstance(v, (list, tuple)):
        return ", ".join(format_value(x) for x in v)
    return str(v)


def _fmt(v: Any) -> str:
    """``format_value`` for one cell of a Markdown table."""
    return format_value(v).replace("|", "\\|").replace("\n", " ")


def _calibration_view(release: Release):
    """How the release's mechanism shows its calibration (``Mechanism.calibration_view``)."""
    from ..mechanisms.registry import mechanism_class  # the families load on first use (start-up time)

    return mechanism_class(release.calibration.mechanism).calibration_view(release.calibration)


def round_list(release: Release) -> list[dict[str, Any]]:
    """Every round of a rounds mechanism's calibration (keys ``ROUND_KEYS``), first to last; [] for one threshold."""
    return [{k: getattr(r, k) for k in ROUND_KEYS} for r in _calibration_view(release).rounds]


def report_markdown(
    release: Release,
    session_spent: dict[str, Any] | None = None,
    release_name: str | None = None,
    tokenizer: dict[str, Any] | None = None,
) -> str:
    """The report as readable Markdown (no released items in it; those are in the CSV/JSON/TXT)."""
    rep = report_dict(release, session_spent, release_name, tokenizer)
    cal = rep["calibration"]
    lines = [f"# dpsu release report: {rep['label']}", ""]
    if "release" in rep:
        lines += [f"Release {_fmt(rep['release'])}", ""]
    if rep["teaching_mode"]:
        lines += [f"> **WARNING — {rep['warning']}**", ""]
    lines += [
        "## Guarantee",
        "",
        rep["guarantee"],
        "",
        f"Privacy unit (one user of the guarantee): {_fmt(rep['privacy_unit'] or 'not recorded')}.",
        "",
        f"Tokenization: {_fmt(rep['tokenization'] or 'not recorded')}.",
        "",
        "## Parameters",
        "",
        "| parameter | value |",
        "|---|---|",
        f"| mechanism | {_fmt(rep['mechanism'])} |",
        f"| epsilon | {_fmt(rep['epsilon'])} |",
        f"| delta | {_fmt(rep['delta'])} |",
    ]
    lines += [f"| {_fmt(k)} | {_fmt(v)} |" for k, v in rep["params"].items()]
    lines += [
        "",
        "## Calibration (depends on the parameters only)",
        "",
        "| quantity | value |",
        "|---|---|",
        f"| noise | {_fmt(cal['noise'])} |",
        f"| noise scale | {_fmt(cal['scale'])} |",
    ]
    view = _calibration_view(release)
    if view.rounds:  # the headline figures mean the same as other mechanisms' rho and Gamma: the last round's
        lines += [f"| {_fmt(name)} | {_fmt(v)} |" for name, v in view.headline]
    else:
        lines += [f"| threshold rho | {_fmt(cal['rho'])} |", f"| cutoff Gamma | {_fmt(cal['gamma'])} |"]
    lines += [f"| {_fmt(k)} | {_fmt(v)} |" for k, v in (cal["details"] or {}).items()]
    if view.rounds:
        lines += [
            "",
            "### Rounds",
            "",
            view.note,
            "",
            "| round | σᵢ | Tᵢ | Γᵢ | δᵢ | share |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.round} | {_fmt(r.sigma)} | {_fmt(r.threshold)} | {'—' if r.gamma is None else _fmt(r.gamma)} "
            f"| {_fmt(r.delta)} | {_fmt(r.share)} |"
            for r in view.rounds
        ]
    lines += ["", "## Released (private output)", "", f"Items released: {rep['released_total']}", ""]
    if rep["released_per_length"]:
        lines += ["| n-gram length | items released |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in rep["released_per_length"].items()]
        lines.append("")
    if "session_spent" in rep:
        lines += [
            "## Spent on this corpus in the session, up to and including this release",
            "",
            rep["session_spent"]["summary"],
            "",
        ]
    if "tokenizer" in rep:
        lines += ["## Tokenizer (tokenizer.json)", "", "| | |", "|---|---|"]
        lines += [f"| {_fmt(k)} | {_fmt(v)} |" for k, v in rep["tokenizer"].items()]
        lines.append("")
    lines += [f"Generated {rep['date_utc']} by dpsu {rep['dpsu_version']}.", ""]
    return "\n".join(lines)


def write_release(
    release: Release,
    out_csv_path,
    report_path=None,
    tokenizer: tuple[Any, bytes, dict[str, Any]] | None = None,
    extra_files: tuple[tuple[str, Path, bytes], ...] = (),
    folders: tuple[tuple[str, Path], ...] = (),
) -> None:
    """Write the CSV export and, if asked, the report (Markdown for a .md path, JSON otherwise) and a tokenizer
    (``tokenizer`` = (path, tokenizer.json bytes, how it was built), from ``tokenizer_export.tokenizer_json``;
    the report then records how it was built); ``extra_files`` = (flag, path, bytes) written with them (a tokenizer
    folder's configuration files); ``folders`` = (flag, folder) made first if missing (a tokenizer folder).

    Every body is rendered first, then the files are written together (``outputs.OutputSet``): all of them
    appear whole, or none (an ``OutputError`` says so). Check the paths with ``check_output_paths`` before
    reading the corpus.
    """
    release = check_release(release)
    targets = [("-o", check_path(out_csv_path, "out_csv_path"), to_csv_bytes(release))]
    built = tokenizer[2] if tokenizer is not None else None
    if tokenizer is not None:
        targets.append(("--export-tokenizer", check_path(tokenizer[0], "the tokenizer's path"), tokenizer[1]))
    if report_path is not None:
        rp = check_path(report_path, "report_path")
        body = (
            report_markdown(release, tokenizer=built).encode("utf-8")
            if rp.suffix.lower() in (".md", ".markdown")
            else report_json(release, tokenizer=built)
        )
        targets.append(("--report", rp, body))
    write_together([*targets, *extra_files], folders)


# ---- the downloads of one release (the app's Export page) -------------------------------------------
@dataclass(frozen=True)
class ExportFile:
    """One download: its kind (a stable id: csv, json, txt, report_json, report_md), its group ("items":
    the released set, or "report": what was run and its guarantee), label, bytes, file name and MIME type."""

    kind: str
    group: str
    label: str
    data: bytes
    file_name: str
    mime: str


def export_basename(release: Release, number: int | None = None) -> str:
    """File name stem for downloads: mechanism and what the release spent (public), e.g.
    dpsu_policy-gaussian_eps3_delta1e-06; a release with noisy counts spent its items' and its counts' parts, so it
    is named by their total, the (epsilon, delta) the user gave, and ends in ``_counts``; with the release's number
    in the session first (``dpsu_r2_...``: two releases of one configuration download under different names);
    ``_TEACHING`` at the end for a fixed-seed release."""
    from ..mechanisms.item_counts import counts_of

    cal = release.calibration
    counts = counts_of(cal)
    eps, delta = (cal.epsilon, cal.delta) if counts is None else (counts.total_epsilon, counts.total_delta)
    tag = f"r{number}_" if number is not None else ""
    stem = f"dpsu_{tag}{cal.mechanism}_eps{eps:g}_delta{delta:.0e}" + ("" if counts is None else "_counts")
    return stem + ("_TEACHING" if release.seed is not None else "")


def export_files(
    release: Release,
    session_spent: dict[str, Any] | None = None,
    release_name: str | None = None,
    number: int | None = None,
) -> list[ExportFile]:
    """Every download of a release. Build them once per release (the app caches them): the report's date is
    then the date the export was first built, so a file stays the same while the user clicks the buttons.
    ``session_spent`` (``ledger.ledger_summary``) and ``release_name`` go into the reports."""
    release = check_release(release)
    base = export_basename(release, number)
    specs: list[tuple[str, str, str, Callable[[], bytes], str, str]] = [
        ("csv", "items", "Released items (CSV)", lambda: to_csv_bytes(release), f"{base}.csv", "text/csv"),
        ("json", "items", "Released items (JSON)", lambda: to_json_bytes(release), f"{base}.json", "application/json"),
        ("txt", "items", "Released items (TXT)", lambda: to_txt_bytes(release), f"{base}.txt", "text/plain"),
        ("report_json", "report", "Release report (JSON)", lambda: report_json(release, session_spent, release_name),
         f"{base}_report.json", "application/json"),
        ("report_md", "report", "Release report (Markdown)",
         lambda: report_markdown(release, session_spent, release_name).encode("utf-8"), f"{base}_report.md",
         "text/markdown"),
    ]  # fmt: skip
    files = []
    for kind, group, label, build, name, mime in specs:  # every download, or none and the error names which
        try:
            files.append(ExportFile(kind, group, label, build(), name, mime))
        except (ValueError, TypeError) as exc:
            raise OutputError(
                f"could not build the download {label} ({type(exc).__name__}: {exc}); no download was made "
                "(the others are not offered half made): check the release's items, or report it"
            ) from exc
    return files
