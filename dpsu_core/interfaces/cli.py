"""The ``dpsu`` command line: release, calibrate, list.

Bad input prints one line on stderr and exits with status 2. The heavy modules (readers, tokenizer,
mechanisms) are imported where a command needs them, and ``dpsu --help`` builds only the list of
commands, so it answers without loading numba, Arrow or scipy.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..accounting.commands import COMMANDS as LEDGER_COMMANDS
from ..errors import DpsuError, InputError, ParameterError, cap_message, os_error_message
from ..wording import CLI_OPTIONS, speak
from .release_command import MB

if TYPE_CHECKING:
    from ..corpus.load import LoadOptions
    from ..job import ReleaseJob
    from ..params import ParamSpec

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3  # a bug: reported on one line too, and distinct from bad input so tests can tell them apart


class _OneLineParser(argparse.ArgumentParser):
    """argparse prints usage + message on error; the brief asks for one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise DpsuError(f"{message} (see 'dpsu {self.prog.split()[-1]} --help')" if " " in self.prog else message)


def _param_type(spec):
    if spec.kind == "int":
        return int
    if spec.kind == "float":
        return float
    return str


def _add_mechanism_args(p: argparse.ArgumentParser) -> None:
    from ..mechanisms.registry import list_mechanisms
    from ..params import OPTIONS, PARAMS

    p.add_argument("-m", "--mechanism", required=True, help=f"one of: {', '.join(list_mechanisms())}")
    for short, spec in (("-e", OPTIONS["epsilon"]), ("-d", OPTIONS["delta"])):  # required: no default
        p.add_argument(short, spec.cli, type=float, required=True, help=f"{spec.help}, {spec.range_text()}")
    for spec in PARAMS.values():
        rng = f" (range {spec.range_text()})" if spec.range_text() else ""
        kw: dict[str, Any] = {"dest": spec.name, "default": None, "help": f"{spec.label}: {spec.help}{rng}"}
        if spec.kind == "choice":
            kw["choices"] = list(spec.choices)
        else:
            kw["type"] = _param_type(spec)
        p.add_argument(spec.cli, **kw)


def _add_option_arg(p: argparse.ArgumentParser, spec: ParamSpec, help: str, **kw: Any) -> None:
    """The flag of an ``params.OPTIONS`` spec: its type or choices, and its default and range in the help (the flag
    itself defaults to None: "not given", refused where it does not apply)."""
    if spec.kind == "choice":
        kw["choices"] = list(spec.choices)
        shown = f"default {spec.default}"
    else:
        kw["type"] = _param_type(spec)
        shown = f"default {spec.default:g}; {spec.range_text()}"
    p.add_argument(spec.cli, default=None, help=f"{help} ({shown})", **kw)


_COMMANDS = {
    "release": "release a private vocabulary / n-gram set from a corpus file",
    "calibrate": "print the noise scale, rho and Gamma of a mechanism",
    "list": "list the mechanisms",
    "spark-env": "pack this Python environment for a Spark cluster's executors (use it with --spark-archive)",
    **LEDGER_COMMANDS,
}


def _command_parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = _OneLineParser(
        prog="dpsu",
        description="Differentially private set union: release vocabularies "
        "and n-grams under user-level (epsilon, delta)-DP.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    return parser, {name: sub.add_parser(name, help=text) for name, text in _COMMANDS.items()}


def build_parser() -> argparse.ArgumentParser:
    from ..accounting.commands import add_commands as add_ledger_commands
    from ..corpus.limits import DEFAULT_LIMITS
    from ..corpus.readers import FORMATS
    from ..corpus.tokenize import TOKENIZERS
    from ..outputs.tokenizer_export import DEFAULT_SPECIAL_TOKENS
    from ..params import OPTIONS
    from ..reading import READING_OPTIONS

    parser, commands = _command_parsers()
    rel = commands["release"]
    rel.add_argument("input", help="corpus file: csv, tsv, jsonl, parquet, txt or pre-tokenized sequences (.zip ok)")
    _add_mechanism_args(rel)
    _add_reading_args(rel, {"format": list(FORMATS), "tokenizer": list(TOKENIZERS)})
    # None: not given (given, an option is refused where the tokenizer ignores it: ``ReadingOption.unused_by``)
    rel.set_defaults(**{o.field: None for o in READING_OPTIONS if o.tokenizers})
    _add_public_reading_args(rel, {"format": list(FORMATS)})
    rel.add_argument("--strict", action="store_true", help="treat column warnings as errors (exit 2)")
    rel.add_argument(
        "--public-corpus",
        default=None,
        help="GW-KT: a PUBLIC corpus file giving item frequencies (never the private input or a copy)",
    )
    rel.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help="fix the random seed, 0 to 2^128-1 (teaching only: NOT for real releases)",
    )
    rel.add_argument("-o", "--output", required=True, help="output CSV of released items (never the input)")
    rel.add_argument("--report", default=None, help="write the release report (JSON, or Markdown for .md) here")
    rel.add_argument(
        "--export-tokenizer",
        default=None,
        metavar="PATH",
        help="also write a Hugging Face tokenizer built from the released items only: a folder that "
        "transformers' AutoTokenizer.from_pretrained loads (tokenizer.json, tokenizer_config.json, "
        "special_tokens_map.json), or tokenizer.json alone for a path ending in .json",
    )
    _add_option_arg(rel, OPTIONS["tokenizer_model"], OPTIONS["tokenizer_model"].help + "; counts: --with-counts")
    rel.add_argument(
        "--special-tokens",
        default=None,
        metavar="LIST",
        help="comma-separated special tokens of the exported tokenizer besides "
        f"{' and '.join(DEFAULT_SPECIAL_TOKENS)} (always there), e.g. '[CLS],[SEP],[MASK]' or '<s>,</s>'",
    )
    _add_option_arg(rel, OPTIONS["tokenizer_vocab_size"], OPTIONS["tokenizer_vocab_size"].help, metavar="N")
    rel.add_argument(
        "--with-counts",
        action="store_true",
        help="also release noisy counts of the released items in the same run (Gaussian, each user's counts "
        "bounded): --counts-share of (epsilon, delta) goes to them, the rest to the items; subword tokenizers "
        "train on them",
    )
    for spec, metavar in ((OPTIONS["counts_share"], "S"), (OPTIONS["counts_clip"], "C")):
        _add_option_arg(rel, spec, f"with --with-counts: {spec.help}", metavar=metavar)
    rel.add_argument(
        "--max-file-mb",
        type=float,
        default=DEFAULT_LIMITS.max_file_bytes / MB,
        help="refuse input files larger than this many MB (default %(default)g)",
    )
    rel.add_argument(
        "--max-unpacked-mb",
        type=float,
        default=None,
        help="a .zip/.gz input may unpack to at most this many MB (default: 20x its size, at least "
        f"{DEFAULT_LIMITS.unpack_floor_bytes // MB} MB, at most {DEFAULT_LIMITS.unpack_max_bytes // MB} MB)",
    )
    rel.add_argument(
        "--engine",
        default="local",
        choices=["local", "spark"],
        help="spark: read, tokenize and build histograms with Spark (pip install 'dpsu[spark]', Java 17)",
    )
    rel.add_argument("--spark-master", default=None, help="Spark master URL for --engine spark (default local[2])")
    rel.add_argument(
        "--spark-remote", default=None, metavar="sc://HOST:PORT", help="--engine spark through a Spark Connect server"
    )
    rel.add_argument(
        "--spark-archive",
        default=None,
        metavar="ENV.tar.gz",
        help="ship this packed environment (made by 'dpsu spark-env') to the cluster's executors and run their Python "
        "from it",
    )
    rel.add_argument(
        "--spark-table", action="store_true", help="--engine spark: the input is a table name of Spark's catalog"
    )
    rel.add_argument(
        "--ledger",
        default=None,
        metavar="PATH_OR_URL",
        help="the durable privacy ledger every release charges: an SQLite file or a postgresql:// URL (default: "
        "$DPSU_LEDGER, else the per-user data folder)",
    )
    rel.add_argument(
        "--corpus",
        default=None,
        metavar="NAME",
        help="the ledger's name for this corpus: a new corpus is registered under it (default: the file's name); "
        "with --engine spark it says which corpus is charged (the driver never sees the users' tokens)",
    )
    rel.add_argument(
        "--spend-again",
        action="store_true",
        help="release again although an identical release of this corpus is kept in the ledger (its output is "
        "public: 'dpsu ledger export-release ID' hands it back at no cost)",
    )
    rel.add_argument(
        "--timings",
        action="store_true",
        help="print where the time went on stderr: start-up, read, tokenize, build, calibrate, release, write "
        "(seconds; also DPSU_TIMINGS=1)",
    )

    _add_mechanism_args(commands["calibrate"])
    env = commands["spark-env"]
    env.add_argument("output", metavar="OUT.tar.gz", help="the packed environment to write")
    env.add_argument("--prefix", default=None, help="the environment to pack (default: the running one)")
    register = add_ledger_commands(commands)  # ``corpus register`` reads its file as ``release`` would
    _add_reading_args(register, {"format": list(FORMATS), "tokenizer": list(TOKENIZERS)})
    register.set_defaults(char_ngrams=None, max_n=None, only_n=None)
    return parser


def _make_mechanism(args: argparse.Namespace, public_source: Any = None):
    """The mechanism of ``-m`` with the flags it takes; a flag it would ignore is an error (``--max-n`` aside:
    it also sets the corpus's n-gram length)."""
    from ..mechanisms.registry import get_mechanism, list_mechanisms
    from ..params import PARAMS

    cls = list_mechanisms().get(args.mechanism)
    if cls is None:
        raise DpsuError(f"unknown mechanism {args.mechanism!r}; choose one of: {', '.join(list_mechanisms())}")
    for spec in (PARAMS[k] for k in cls.param_names):  # a flag another's value leaves unused
        if spec.only_with is not None and getattr(args, spec.name, None) is not None and spec.unused(vars(args)):
            need = f"{PARAMS[spec.only_with[0]].cli} {spec.only_with[1]}"
            raise DpsuError(f"{spec.cli} is only used with {need}: add {need}, or drop {spec.cli}")
    given = {k: getattr(args, k, None) for k in PARAMS if k != "max_n" or k in cls.param_names}
    params = cls.params_for({**given, "public_source": public_source}, strict=True)
    counts = _counts_args(args)
    if counts is not None:
        from ..mechanisms.item_counts import mechanism_with_counts

        return mechanism_with_counts(args.mechanism, epsilon=args.epsilon, delta=args.delta, **counts, **params)[0]
    return get_mechanism(args.mechanism, epsilon=args.epsilon, delta=args.delta, **params)


def _counts_args(args: argparse.Namespace) -> dict[str, float] | None:
    """share and clip of --with-counts (their defaults filled in), or None without it (its flags alone: an error)."""
    from ..mechanisms.item_counts import DEFAULT_CLIP, DEFAULT_SHARE

    if not getattr(args, "with_counts", False):
        for flag, value in (("--counts-share", getattr(args, "counts_share", None)),
                            ("--counts-clip", getattr(args, "counts_clip", None))):  # fmt: skip
            if value is not None:
                raise DpsuError(f"{flag} is for --with-counts: add --with-counts, or drop it")
        return None
    share = DEFAULT_SHARE if args.counts_share is None else args.counts_share
    clip = DEFAULT_CLIP if args.counts_clip is None else args.counts_clip
    return {"share": share, "clip": clip}


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from ..mechanisms.registry import mechanism_class

    cal = _make_mechanism(args).calibrate()
    cls = mechanism_class(cal.mechanism)
    view = cls.calibration_view(cal)  # one threshold and cutoff, or the rounds with the last round as headline
    lines = [
        f"mechanism: {cal.label} ({cal.mechanism})",
        f"epsilon: {cal.epsilon:g}",
        f"delta: {cal.delta:.6g}",
        f"noise: {cal.noise}",
        *(f"{name}: {v:.6g}" for name, v in cls.noise_quantities(cal)),
    ]
    if view.rounds:
        lines += [f"{name}: {'n/a' if v is None else f'{v:.6g}'}" for name, v in view.headline]
        lines += [
            f"round {r.round}: sigma_i {r.sigma:.6g}, T_i {r.threshold:.6g}, "
            + ("" if r.gamma is None else f"Gamma_i {r.gamma:.6g}, ")
            + f"delta_i {r.delta:.6g}, share {r.share:.4g}"
            for r in view.rounds
        ]
    else:
        lines.append(f"rho: {cal.rho:.6g}" if cal.rho is not None else "rho: n/a")
        lines.append(f"Gamma: {cal.gamma:.6g}" if cal.gamma is not None else "Gamma: n/a")
    for k, v in cal.params.items():
        lines.append(f"{k}: {v}")
    for k, v in cal.details.as_dict().items():  # per-level / per-round values (DPNE sigma_k, DP-SIPS sigma_i, ...)
        if isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
            lines.append(f"{k}: {', '.join(f'{x:.6g}' for x in v)}")
    lines += [f"{name}: {text}" for name, text in cls.calibration_notes(cal)]
    print("\n".join(lines))
    return 0


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: give a whole number from 0 to 2^128 - 1") from None
    from ..privacy.validate import check_seed

    try:
        return check_seed(value)  # type: ignore[return-value]
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_reading_args(parser: argparse.ArgumentParser, choices: dict[str, list[str]]) -> None:
    """The reading options' flags, from their one declaration (``reading.READING_OPTIONS``)."""
    from ..reading import HEADER_FLAGS, HEADER_HELP, READING_OPTIONS

    for o in READING_OPTIONS:
        if o.kind == "value":
            parser.add_argument(
                o.flag,
                dest=o.field,
                default=o.default,
                type=o.type,
                choices=choices.get(o.field),
                metavar=o.metavar,
                help=o.help,
            )
        else:
            parser.add_argument(o.flag, dest=o.field, action="store_true", help=o.help)
    head = parser.add_mutually_exclusive_group()
    for value in (True, False):
        head.add_argument(
            HEADER_FLAGS[value],
            dest=HEADER_FLAGS[value][2:].replace("-", "_"),
            action="store_true",
            help=HEADER_HELP[value],
        )


def _add_public_reading_args(parser: argparse.ArgumentParser, choices: dict[str, list[str]]) -> None:
    """How GW-KT's public corpus file is read: the file options of ``reading`` under --public-... flags."""
    from ..reading import FILE_FIELDS, HEADER_FLAGS, HEADER_HELP, READING, public_flag

    for field in FILE_FIELDS:
        o = READING[field]
        what = f"GW-KT's public corpus: as {o.flag} for the input"
        if o.kind == "value":
            parser.add_argument(
                public_flag(o.flag),
                dest="public_" + field,
                default=o.default,
                choices=choices.get(field),
                metavar=o.metavar,
                help=what,
            )
        else:
            parser.add_argument(public_flag(o.flag), dest="public_" + field, action="store_true", help=what)
    head = parser.add_mutually_exclusive_group()
    for value in (True, False):
        flag = public_flag(HEADER_FLAGS[value])
        head.add_argument(
            flag,
            dest=flag[2:].replace("-", "_"),
            action="store_true",
            help=f"GW-KT's public corpus: {HEADER_HELP[value]}",
        )


def _load_options(args: argparse.Namespace) -> LoadOptions:
    """How ``release`` reads and tokenizes its input (``command.release_argv`` writes the inverse)."""
    from ..corpus.load import LoadOptions
    from ..reading import READING_OPTIONS
    from .release_command import corpus_max_n

    given = vars(args)
    reading: dict[str, Any] = {
        o.field: (not given[o.field]) if o.kind == "off" else given[o.field] for o in READING_OPTIONS
    }
    for o in READING_OPTIONS:
        if not o.tokenizers:
            continue
        if reading[o.field] is None:
            reading[o.field] = o.default
        elif o.unused_by(reading["tokenizer"]):
            raise DpsuError(
                f"{o.flag} is not used by --tokenizer {reading['tokenizer']} (only by {' and '.join(o.tokenizers)}); "
                f"drop it, or choose --tokenizer {o.tokenizers[-1]}"
            )
    return LoadOptions(
        **reading,
        has_header=False if args.no_header else (True if args.header else None),
        max_n=corpus_max_n(args),
    )


def _cmd_release(args: argparse.Namespace) -> int:
    """``dpsu release``: the checks that cost nothing first (flags, the Spark input, GW-KT's public corpus, the
    ledger, the parameters, the outputs' paths), then the read, one charge, the release, and its outputs written
    together (``release_command`` holds the pieces)."""
    from .. import timings
    from . import release_command as rc

    timings.start(args.timings)
    parts = rc.spark_input(args)  # None on the local engine
    public = rc.public_corpus(args)  # (corpus, its fingerprint, the input's) or (None, None, None)
    rc.check_engine_flags(args)
    from ..accounting.store import open_store

    store = open_store(args.ledger)  # a bad ledger location fails before anything is read
    job = _release_job(args, public[0])  # validate parameters before reading a large file
    options = _load_options(args)  # validates --max-n before anything is read
    tok_spec = rc.tokenizer_spec(args, options)
    limits = rc.read_limits(args)
    rc.check_outputs(args)
    corpus = rc.read_corpus(args, options, limits, parts, public)
    account, charged = rc.charge(args, store, job, corpus)  # one transaction, before any noise is drawn
    with timings.phase("spark release" if args.engine == "spark" else "release"):
        release = job.run(corpus)
    if args.engine == "spark":
        print(f"note: {release.calibration.details.engine}", file=sys.stderr)
    with rc.after_noise(release.calibration):  # every output is written, or none and the error says what was spent
        tokenizer = rc.write_outputs(args, release, tok_spec)
    rc.keep(account, charged, release, tokenizer)
    rc.say_released(args, release, account, job, tokenizer)
    timings.report()
    return 0


def _release_job(args: argparse.Namespace, public: Any) -> ReleaseJob:
    """The release job of the flags (``job.ReleaseJob``), priced once before the read so that it runs exactly as
    charged; with --with-counts, the counts' cost said first."""
    from .. import timings
    from ..job import ReleaseJob

    mech = _make_mechanism(args, public)
    counts = _counts_plan(args)
    if counts is not None:
        from ..mechanisms.item_counts import cost_line

        if args.engine == "spark":
            raise DpsuError("--with-counts runs on the local engine only; drop --engine spark or --with-counts")
        print(f"before the run: {cost_line(counts)}", file=sys.stderr)
    with timings.phase("calibrate"):
        return ReleaseJob.of(mech, counts, seed=args.seed, engine=args.engine)


def _counts_plan(args: argparse.Namespace):
    """The counts' calibration (``mechanisms.item_counts``) for --with-counts, or None."""
    counts = _counts_args(args)
    if counts is None:
        return None
    from ..mechanisms.item_counts import calibrate_counts

    return calibrate_counts(args.epsilon, args.delta, counts["share"], counts["clip"])


def _cmd_spark_env(args: argparse.Namespace) -> int:
    from ..engines.spark_env import pack_environment

    print(pack_environment(args.output, args.prefix))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from ..mechanisms.registry import list_mechanisms

    for name, cls in list_mechanisms().items():
        print(f"{name:20s} {cls.label:20s} {cls.summary}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; ``argv`` None: this process's arguments, and the process ends with the command
    (without the interpreter's tear-down, which frees a large corpus object by object: a third of a
    second at 200k users). Given ``argv`` (tests, scripts), it returns the exit status."""
    from . import signals

    with signals.policy(restore=argv is not None):  # SIGINT and SIGTERM: one line, exit 130 / 143 (``signals``)
        try:
            code = _main(list(sys.argv[1:] if argv is None else argv))
        except KeyboardInterrupt as exc:
            signals.finish()
            code = _fail(f"{signals.describe(exc)} (outputs are written whole or not at all)", signals.exit_code(exc))
    if argv is None:
        signals.exiting(code)
    if argv is None and _FAST_EXIT["ok"]:
        for stream in (sys.stdout, sys.stderr):  # None: the process started with that stream closed
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):  # a closed pipe (dpsu list | head): nothing more to say
                pass
        os._exit(code)  # every output is already written and closed (export writes whole files)
    return code


_FAST_EXIT = {"ok": False}  # set when a command without Spark succeeded: no thread or child outlives it


def _main(argv: list[str]) -> int:
    _FAST_EXIT["ok"] = False
    try:
        if not argv or argv[0] in ("-h", "--help"):  # the overview: the commands only, nothing heavy loaded
            _command_parsers()[0].parse_args(argv)
        args = build_parser().parse_args(argv)
        from ..accounting.commands import run as run_ledger_command

        commands = {
            "release": _cmd_release,
            "calibrate": _cmd_calibrate,
            "list": _cmd_list,
            "spark-env": _cmd_spark_env,
            **dict.fromkeys(LEDGER_COMMANDS, run_ledger_command),
        }
        if getattr(args, "action", None) == "register":  # the file is read as ``dpsu release`` reads it
            args.load_options = _load_options(args)
        code = commands[args.command](args)
        _FAST_EXIT["ok"] = getattr(args, "engine", "local") == "local"  # Spark's JVM stops in the exit hooks
        return code
    except Exception as exc:
        from . import signals

        stopped = signals.stopped_by(exc)
        if stopped is not None:  # a library turned our signal into an error of its own: the signal stopped the run
            raise stopped from None
        return _error_exit(exc)


def _error_exit(exc: Exception) -> int:
    """The one line and exit status of an error that ended a command."""
    if isinstance(exc, DpsuError):
        return _fail(speak(str(exc), CLI_OPTIONS))
    if isinstance(exc, OSError):
        return _fail(f"{os_error_message(exc)}; check the path and that the file is readable")
    if isinstance(exc, MemoryError):
        return _fail(
            "out of memory: the corpus or the parameters need more memory than this machine has; "
            "use a smaller file, a smaller --max-n or --max-items"
        )
    if isinstance(exc, RecursionError):
        return _fail(str(InputError("the input is nested too deeply to read; check the file's structure")))
    # a bug, not bad input: still one line, never a traceback
    return _fail(
        f"internal error ({type(exc).__name__}: {exc}); please report it with the command you ran", EXIT_INTERNAL
    )


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    print(f"dpsu: error: {cap_message(message)}", file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
