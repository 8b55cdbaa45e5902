"""Every mechanism parameter, declared once, at the bottom of the package (it imports only ``errors`` and
``privacy.validate``, so ``corpus/``, ``mechanisms/``, the CLI, ``compare`` and the app all import it).

The CLI flags, the app's widgets and the validation all read these specs, so a parameter means the same
thing everywhere. Adding a parameter is one ``ParamSpec`` entry in ``PARAMS`` (plus its name in the
``param_names`` of the mechanisms that take it): the CLI flag and the app widget follow from the spec.
Which parameters a mechanism takes, filled and validated: ``Mechanism.params_for``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ParameterError
from .privacy.validate import (
    EPSILON_MAX,
    EPSILON_MIN,
    check_alpha,
    check_choice,
    check_fraction,
    check_number,
    check_positive_int,
)

# The budget's own bounds: epsilon in [EPSILON_MIN, EPSILON_MAX] (1e-12 to 1e300: every calibration, PCR's filter
# included, stays finite and every update proven inside it; ``privacy.validate.check_epsilon``), delta in (0, 1)
# (``check_delta``).
__all__ = ["EPSILON_MAX", "EPSILON_MIN", "MAX_ITEMS_LIMIT", "PARAMS", "ParamSpec", "resolve_params"]


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its name (the keyword argument), widget label, kind, default, help text, CLI flag and range."""

    name: str
    label: str
    kind: str  # "int", "float", "choice"
    default: Any
    help: str
    cli: str  # the CLI flag
    choices: tuple[str, ...] = ()
    minimum: float | None = None  # every numeric parameter has both bounds (see ``range_text``)
    maximum: float | None = None
    only_with: tuple[str, str] | None = None  # (parameter, value): used only when that parameter has that value

    def unused(self, values: dict[str, Any]) -> bool:
        """True when ``values`` (a mechanism's parameters, unset ones at their default) make this parameter unused:
        the CLI refuses its flag then, and a redo command leaves it out."""
        if self.only_with is None:
            return False
        other, wanted = self.only_with
        value = values.get(other)
        return (PARAMS[other].default if value is None else value) != wanted

    def range_text(self) -> str:
        """The documented range, e.g. "1 to 1e+06" (empty for a choice)."""
        if self.kind == "choice":
            return ""
        return f"{self.minimum:g} to {self.maximum:g}"

    def check(self, value: Any) -> Any:
        if self.kind == "choice":
            return check_choice(value, self.name, self.choices)
        if self.kind == "int":
            zero = self.minimum == 0 and not isinstance(value, bool) and value == 0  # 0 allowed: "chosen for me"
            hint = f"0 is allowed too; {self.help}" if self.minimum == 0 else self.help
            v: float = 0 if zero else check_positive_int(value, self.name, hint)
        else:
            v = check_number(value, self.name, hint=self.help)
        check_number(v, self.name, low=self.minimum, high=self.maximum, hint=self.help)
        return v


# Delta0's upper bound: no corpus needs more distinct items per user, and memory for thresholds must stay small.
MAX_ITEMS_LIMIT = 1_000_000

PARAMS: dict[str, ParamSpec] = {
    p.name: p
    for p in [
        ParamSpec(
            "max_items",
            "Δ0 (max items per user)",
            "int",
            100,
            "each user contributes at most this many distinct items; e.g. 100",
            "--max-items",
            minimum=1,
            maximum=MAX_ITEMS_LIMIT,
        ),
        ParamSpec(
            "alpha",
            "α (cutoff above ρ, in noise units)",
            "float",
            5.0,
            "Gamma = rho + alpha * noise scale; 3 to 5 works best",
            "--alpha",
            minimum=0.0,
            maximum=100.0,
        ),
        ParamSpec(
            "max_n", "longest n-gram T", "int", 1, "n-grams of length 1..T; e.g. 3", "--max-n", minimum=1, maximum=10
        ),
        ParamSpec(
            "eta",
            "η (tolerated spurious fraction)",
            "float",
            0.01,
            "share of spurious n-grams DPNE tolerates per level, in (0, 1); e.g. 0.01",
            "--eta",
            minimum=1e-9,
            maximum=0.999999,
        ),
        ParamSpec(
            "pruning",
            "valid n-gram pruning",
            "choice",
            "both",
            "both-side or single-side pruning of candidate n-grams",
            "--pruning",
            choices=("both", "single"),
        ),
        ParamSpec(
            "schedule",
            "noise schedule",
            "choice",
            "equal",
            "how DPNE splits its Gaussian budget over the n-gram lengths (sum_k 1/sigma_k^2 = 1/sigma^2): "
            "'equal' is the paper's sigma_k = sqrt(T) sigma; 'geometric' sets sigma_k = c sigma_(k-1) and with the "
            "default c = 0.8 released the most n-grams on MSNBC (about 8,550 against 7,750 for equal, T = 6; benchmarks/RESULTS.md)",
            "--schedule",
            choices=("equal", "geometric"),
        ),
        ParamSpec(
            "schedule_ratio",
            "geometric ratio c",
            "float",
            0.8,
            "geometric schedule: sigma_k = c * sigma_(k-1); c < 1 moves budget to the longer n-grams; 0.8 was best "
            "on MSNBC; e.g. 0.8",
            "--schedule-ratio",
            minimum=1e-3,
            maximum=1e3,
        ),
        ParamSpec(
            "rounds",
            "I (DP-SIPS rounds)",
            "int",
            3,
            "DP-SIPS (and Policy DP-SIPS) run this many rounds, each without the items already released; e.g. 3",
            "--rounds",
            minimum=1,
            maximum=20,
        ),
        ParamSpec(
            "ratio",
            "r (DP-SIPS budget ratio)",
            "float",
            0.3,
            "DP-SIPS gives round i the share r^(I-i) of the budget (the last round the most), in (0, 1]; e.g. 0.3",
            "--ratio",
            minimum=1e-6,
            maximum=1.0,
        ),
        ParamSpec(
            "round_ratio",
            "r (Policy DP-SIPS budget ratio)",
            "float",
            0.02,
            "Policy DP-SIPS gives round i the share r^(I-i) of the budget, in (0, 1]; a small r makes the first "
            "rounds cheap passes that release the most common items, so the last round's users spend their Δ0 "
            "and budget on the rest; 0.02 released the most on synthetic-200k (benchmarks/RESULTS.md)",
            "--round-ratio",
            minimum=1e-6,
            maximum=1.0,
        ),
        ParamSpec(
            "delta_split",
            "δ split (noise / threshold)",
            "choice",
            "half",
            "how delta is shared between the Gaussian noise and the threshold: 'half' gives each delta/2; 'tuned' "
            "picks the share that maximises the chance of release of an item held by k users (k below), from the "
            "parameters alone (privacy unchanged)",
            "--delta-split",
            choices=("half", "tuned"),
        ),
        ParamSpec(
            "tune_users",
            "k (users the tuned δ split is for)",
            "int",
            0,
            "with delta_split 'tuned': the number of users holding an item whose chance of release the split "
            "maximises (each holder with Δ0 items); 0 = the item at the margin, the k with half the highest "
            "chance under the halves. k must be a public figure (a guess, or from public data): never count it "
            "on the private corpus, or the calibration would depend on the data and the guarantee would not hold",
            "--tune-users",
            minimum=0,
            maximum=10_000_000,
            only_with=("delta_split", "tuned"),
        ),
        ParamSpec(
            "only_n",
            "the one n-gram length (DPSU-single)",
            "int",
            1,
            "DPSU-single spends the whole budget on this length",
            "--only-n",
            minimum=1,
            maximum=10,
        ),
        ParamSpec(
            "kbar",
            "k̄ (candidates per Gumbel step)",
            "int",
            10_000,
            "PCR looks at the top k̄ counts in each step",
            "--kbar",
            minimum=1,
            maximum=1e8,
        ),
        ParamSpec(
            "rel_error",
            "r (target relative error)",
            "float",
            0.1,
            "target relative error of released counts, in (0, 1); e.g. 0.1",
            "--rel-error",
            minimum=1e-6,
            maximum=0.999999,
        ),
        ParamSpec(
            "eps_star",
            "ε* (first Gumbel step)",
            "float",
            0.0005,
            "initial epsilon of each Gumbel step",
            "--eps-star",
            minimum=1e-9,
            maximum=100.0,
        ),
        ParamSpec(
            "delta_star",
            "δ* (per Gumbel step; 0 = derived from δ)",
            "float",
            0.0,
            "delta spent by each Gumbel step, in [0, 0.5]; 0 (default) derives it from delta: the Gumbel steps' "
            "delta divided by the most steps a release can need (10,001,100), so delta does not stop the filter "
            "and the count noise does not grow with epsilon",
            "--delta-star",
            minimum=0.0,
            maximum=0.5,
        ),
        ParamSpec(
            "use_threshold",
            "relative-error threshold",
            "choice",
            "yes",
            "bounded-counts: drop noisy counts below T = (2 + r) s / r",
            "--threshold",
            choices=("yes", "no"),
        ),
    ]
}


@dataclass(frozen=True)
class WidgetRange:
    """The range an app widget offers for a value the CLI takes more widely (a choice of the app, declared once)."""

    minimum: float
    maximum: float


# The app's widgets read these bounds; tests/test_layout.py refuses a widget that writes one of them again.
APP_RANGES: dict[str, WidgetRange] = {
    "epsilon": WidgetRange(0.01, 100.0),  # the sidebar's ε of each release
    "delta": WidgetRange(1e-15, 0.5),  # the sidebar's δ of each release
    "total_epsilon": WidgetRange(0.01, 10_000.0),  # the sidebar's session budget: total ε the session may spend
    "total_delta": WidgetRange(1e-15, 0.5),  # ... and total δ (the range of a release's δ)
    "cap_epsilon": WidgetRange(0.01, 1000.0),  # the custodian's cap on a corpus's ε
    "cap_delta": WidgetRange(1e-15, 0.5),  # ... and on its δ (the range of a release's δ)
    "counts_share": WidgetRange(0.01, 0.99),  # the Release page's share of (ε, δ) for the counts (CLI: 0 < S < 1)
    "counts_clip": WidgetRange(0.01, 1000.0),  # the Release page's l2 bound per user (CLI: --counts-clip's range)
}


def resolve_params(mechanism: str, names: tuple[str, ...], given: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults, reject unknown names, validate every value through its spec."""
    unknown = sorted(set(given) - set(names))
    # A caller may pass a shared set of options (CLI/app); silently accept None for unrelated ones only.
    unknown = [u for u in unknown if given[u] is not None]
    if unknown:
        raise ParameterError(
            f"mechanism {mechanism!r} takes no parameter {', '.join(unknown)}; it takes: {', '.join(names) or 'none'}"
        )
    out: dict[str, Any] = {}
    for n in names:
        v = given.get(n)
        out[n] = PARAMS[n].check(PARAMS[n].default if v is None else v)
    if "alpha" in out:
        out["alpha"] = check_alpha(out["alpha"])
    for frac in ("eta", "rel_error"):
        if frac in out:
            out[frac] = check_fraction(out[frac], frac)
    return out
