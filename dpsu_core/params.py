"""Every mechanism parameter, declared once, at the bottom of the package (it imports only ``errors`` and
``privacy.validate``, so ``corpus/``, ``mechanisms/``, the CLI, ``compare`` and the app all import it).

The CLI flags, the app's widgets and the validation all read these specs, so a parameter means the same
thing everywhere. Adding a parameter is one ``ParamSpec`` entry in ``PARAMS`` (plus its name in the
``param_names`` of the mechanisms that take it): the CLI flag and the app widget follow from the spec.
Which parameters a mechanism takes, filled and validated: ``Mechanism.params_for``.

``OPTIONS`` holds the rest of a release's inputs the same way: the budget (ε, δ, the session's total and the
custodian's cap), the noisy counts' share and bound (``mechanisms.item_counts``) and the exported tokenizer's
model and size (``outputs.tokenizer_export``). Where the app offers a narrower range than the library takes (a
widget cannot sensibly span 1e-12 to 1e300), the spec holds both: ``minimum``/``maximum`` are what the library
checks, ``widget`` the app's range inside them (``widget_range``). ``tests/test_layout.py`` refuses a widget or a
CLI flag that writes a spec's bound or default again."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import ParameterError
from .privacy.validate import (
    DELTA_MIN,
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
__all__ = ["EPSILON_MAX", "EPSILON_MIN", "MAX_ITEMS_LIMIT", "OPTIONS", "PARAMS", "ParamSpec", "resolve_params"]


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
    open_low: bool = False  # the minimum itself excluded (e.g. the counts' share: 0 < S < 1)
    open_high: bool = False  # the maximum itself excluded (delta < 1)
    widget: tuple[float, float] | None = None  # the app widget's range, inside [minimum, maximum]; None: the same

    def widget_range(self) -> tuple[float, float]:
        """(min_value, max_value) of the app's widget: ``widget``, else the spec's own range."""
        if self.widget is not None:
            return self.widget
        if self.minimum is None or self.maximum is None:
            raise ValueError(f"{self.name} is a choice: it has no range")
        return self.minimum, self.maximum

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
        if self.maximum == math.inf:  # e.g. "x > 0"
            return f"x {'>' if self.open_low else '>='} {self.minimum:g}"
        if self.open_low or self.open_high:  # e.g. "0 < x < 1"
            return f"{self.minimum:g} {'<' if self.open_low else '<='} x {'<' if self.open_high else '<='} {self.maximum:g}"
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
        open_ends = {"open_low": self.open_low, "open_high": self.open_high}
        check_number(v, self.name, low=self.minimum, high=self.maximum, hint=self.help, **open_ends)
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


# A release's inputs that are no mechanism's parameter, declared once: the CLI's flags (``cli``, empty for an input
# only the app has), the app's widgets (``widget_range``), the exported command and the messages read them.
# The app's ranges are its choices inside the library's (``widget``); ``tests/test_layout.py`` refuses a widget or
# flag that writes one again, and ``tests/core/test_params.py`` that the library's checks agree with ``minimum`` and
# ``maximum``.
OPTIONS: dict[str, ParamSpec] = {
    p.name: p
    for p in [
        ParamSpec(
            "epsilon",
            "ε (epsilon) of each release",
            "float",
            3.0,  # the app's starting value (the CLI's -e is required)
            "epsilon",
            "--epsilon",
            minimum=EPSILON_MIN,
            maximum=EPSILON_MAX,
            widget=(0.01, 100.0),
        ),
        ParamSpec(
            "delta",
            "δ (delta) of each release",
            "float",
            1e-6,  # the app's starting value (the CLI's -d is required)
            "delta, well below 1/users",
            "--delta",
            minimum=DELTA_MIN,
            maximum=1.0,
            open_high=True,
            widget=(1e-15, 0.5),
        ),
        # the app's session budget, set apart from each release's (ε, δ) (the spend gate's limit, no flag): about
        # three releases at the default ε composed, and ten at the default δ
        ParamSpec(
            "total_epsilon",
            "Total ε the session may spend",
            "float",
            10.0,
            "the cap on the session's total on the private corpus",
            "",
            minimum=0.01,
            maximum=10_000.0,
        ),
        ParamSpec(
            "total_delta",
            "Total δ the session may spend",
            "float",
            1e-5,
            "the cap on the session's total δ",
            "",
            minimum=1e-15,
            maximum=0.5,  # the range of a release's δ in the app
        ),
        # the custodian's cap on a corpus (``dpsu corpus register/set-budget --epsilon/--delta``; the ledger's store
        # checks epsilon > 0 and 0 < delta < 1), and the one a corpus nobody registered gets on first use
        ParamSpec(
            "cap_epsilon",
            "cap ε",
            "float",
            10.0,
            "the corpus's epsilon cap",
            "--epsilon",
            minimum=0.0,
            maximum=math.inf,
            open_low=True,
            widget=(0.01, 1000.0),
        ),
        ParamSpec(
            "cap_delta",
            "cap δ",
            "float",
            1e-5,
            "the corpus's delta cap",
            "--delta",
            minimum=0.0,
            maximum=1.0,
            open_low=True,
            open_high=True,
            widget=(1e-15, 0.5),  # the range of a release's δ
        ),
        # the noisy counts of the released items (``mechanisms.item_counts``, its "Defaults" for the choices)
        ParamSpec(
            "counts_share",
            "Counts' share of ε and δ",
            "float",
            0.1,  # the set release keeps 90%
            "the counts' share of (epsilon, delta); the set release runs at the rest",
            "--counts-share",
            minimum=0.0,
            maximum=1.0,
            open_low=True,
            open_high=True,
            widget=(0.01, 0.99),
        ),
        ParamSpec(
            "counts_clip",
            "Per-user bound (l2 norm of one user's counts)",
            "float",
            1.0,  # each user a unit vector
            "the l2 bound of one user's vector of counts; 1 is typical",
            "--counts-clip",
            # up to above any user's counts in a file of at most 1 TiB, down to a millionth of one occurrence;
            # inside it sigma, sigma^2 and the zCDP cost stay finite and nonzero at every documented (epsilon, delta)
            minimum=1e-6,
            maximum=1e12,
            widget=(0.01, 1000.0),
        ),
        # the exported Hugging Face tokenizer (``outputs.tokenizer_export``)
        ParamSpec(
            "tokenizer_model",
            "Tokenizer model",
            "choice",
            "wordlevel",
            "the exported tokenizer's model: wordlevel (exactly the released words + special tokens), bpe, "
            "wordpiece or unigram (subwords trained on the released items; their noisy counts as frequencies when the "
            "release has them)",
            "--tokenizer-model",
            choices=("wordlevel", "bpe", "wordpiece", "unigram"),
        ),
        ParamSpec(
            "tokenizer_vocab_size",
            "Vocabulary size (subword models)",
            "int",
            30_000,
            "target vocabulary size of a bpe/wordpiece/unigram tokenizer",
            "--tokenizer-vocab-size",
            minimum=2,
            maximum=10_000_000,
        ),
    ]
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
