"""The ``dpsu`` command line: release, calibrate, list.

Bad input prints one line on stderr and exits with status 2. The heavy modules (readers, tokenizer,
mechanisms) are imported where a command needs them, and ``dpsu --help`` builds only the list of
commands, so it answers without loading numba, Arrow or scipy.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..accounting.commands import COMMANDS as LEDGER_COMMANDS
from ..errors import DpsuError, InputError, OutputError, ParameterError, cap_message, os_error_message
from ..wording import CLI_OPTIONS, speak

if TYPE_CHECKING:
    from ..corpus.limits import ReadLimits
    from ..corpus.load import LoadOptions
    from ..params import ParamSpec

EXIT_BAD_INPUT = 2
MB = 1 << 20
EXIT_INTERNAL = 3  # a bug: reported on one line too, and distinct from bad input so tests can tell them apart


class _OneLineParser(argparse.ArgumentParser):
    """argparse prints usage + message on error; the brief asks for one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise DpsuError(f"{message} (see 'dpsu {self.prog.split()[-1]} --help')" if " " in self.prog else message)


def empty_release_reason(cal) -> str:
    """Why a release came back empty, from the parameters alone (the utility preview, public), as the app says it."""
    from ..analysis.utility import has_preview, utility_preview

    fix = "raise --epsilon, lower --max-items (if users hold few items), or use a corpus with more users"
    if not has_preview(cal.mechanism):
        return (
            "note: nothing was released: at this budget no item had enough users to pass the threshold; raise "
            "--epsilon or use a corpus with more users"
        )
    k50 = utility_preview(cal).users_needed[0.5]
    need = "more users than any corpus has" if k50 is None else f"about {k50:,} users"
    return (
        f"note: nothing was released: at this budget an item needs {need} for an even chance of release (utility "
        f"preview, from the parameters alone); {fix}"
    )


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


def _read_limits(args: argparse.Namespace) -> ReadLimits:
    """The read limits from --max-file-mb and --max-unpacked-mb (an explicit cap replaces the 20x rule)."""
    from ..corpus.limits import ReadLimits, TiB

    def size(flag: str, mb: float) -> int:
        if not 0 < mb <= TiB // MB:  # NaN fails too; the range is checked before any conversion
            raise ParameterError(f"{flag} must be more than 0 and at most {TiB // MB:,} MB (1 TiB), got {mb:g}")
        return max(1, int(mb * MB))

    max_file = size("--max-file-mb", args.max_file_mb)
    if args.max_unpacked_mb is None:
        return ReadLimits(max_file_bytes=max_file)
    cap = size("--max-unpacked-mb", args.max_unpacked_mb)  # floor = ceiling = cap: the 20x rule no longer applies
    return ReadLimits(max_file_bytes=max_file, unpack_floor_bytes=cap, unpack_max_bytes=cap)


def _corpus_max_n(args: argparse.Namespace) -> int:
    """The longest n-gram the corpus needs: --max-n when given (validated: 0 is an error, not 'not given')."""
    from ..params import PARAMS

    n = PARAMS["max_n"].check(args.max_n) if args.max_n is not None else 1
    if getattr(args, "only_n", None) is not None:
        n = max(n, PARAMS["only_n"].check(args.only_n))
    return n


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


def _public_options(args: argparse.Namespace) -> LoadOptions | None:
    """How GW-KT's public corpus is read (None: no --public-... reading flag given: known column names)."""
    from ..corpus.load import LoadOptions
    from ..reading import FILE_FIELDS

    given = {field: getattr(args, "public_" + field) for field in FILE_FIELDS}
    header = False if args.public_no_header else (True if args.public_header else None)
    opts = LoadOptions(**given, has_header=header)
    return None if opts == LoadOptions() else opts


def _load_public(args: argparse.Namespace, options: LoadOptions | None, on_batch: Any = None):
    """GW-KT's public corpus, read now with its columns as given (n-grams as long as the input's; ``on_batch``:
    its content check, ``overlap.Fingerprinter.add``); a problem with it is named as the public corpus's, with its
    --public-... flags."""
    from dataclasses import replace

    from ..corpus import LoadOptions, load_corpus
    from ..reading import FILE_FIELDS, HEADER_FLAGS, READING, public_flag
    from ..wording import CLI_OPTIONS

    names = {
        **CLI_OPTIONS,
        **{f: public_flag(READING[f].flag) for f in FILE_FIELDS},
        "header": public_flag(HEADER_FLAGS[True]),
        "no_header": public_flag(HEADER_FLAGS[False]),
    }
    try:
        opts = replace(options or LoadOptions(), max_n=_corpus_max_n(args))
        return load_corpus(args.public_corpus, opts, limits=_read_limits(args), on_batch=on_batch)
    except DpsuError as exc:
        raise type(exc)(f"the public corpus {Path(args.public_corpus).name}: {speak(str(exc), names)}") from None


def _check_public(args: argparse.Namespace, public: Any, public_print: Any, corpus: Any, private_print: Any) -> None:
    """Refuse GW-KT's public corpus when it is the input's data (``fingerprint.check_content``: its users' token
    sets, and its posts as read; one line, exit 2); say how much it shares when it shares less."""
    from ..corpus.fingerprint import check_content, content

    key, name = public_print.key, Path(args.public_corpus).name
    try:
        said = check_content(
            content(public, public_print.finish(), key), content(corpus, private_print.finish(), key), _PUBLIC_USE
        )
    except InputError as exc:
        raise InputError(f"--public-corpus {name}: {exc}") from None
    if said:
        print(f"warning (raw data, not private): --public-corpus {name}: {said}", file=sys.stderr)


_PUBLIC_USE = "GW-KT's public corpus"


def _judge_public(args: argparse.Namespace, found: Any) -> None:
    """Act on the ``overlap.Overlap`` of GW-KT's public corpus with the input (the Spark engine's check, made in
    the executors' pass over the input)."""
    use = _PUBLIC_USE
    name = Path(args.public_corpus).name
    if found.refused:
        raise InputError(f"--public-corpus {name}: {found.refusal(use)}")
    if found.any:
        print(f"warning (raw data, not private): --public-corpus {name}: {found.warning(use)}", file=sys.stderr)


def _load_options(args: argparse.Namespace) -> LoadOptions:
    """How ``release`` reads and tokenizes its input (``command.release_argv`` writes the inverse)."""
    from ..corpus.load import LoadOptions
    from ..reading import READING_OPTIONS

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
        max_n=_corpus_max_n(args),
    )


def _cmd_release(args: argparse.Namespace) -> int:
    from .. import timings
    from . import signals

    timings.start(args.timings)
    from ..accounting.ledger import spent_line
    from ..corpus import load_corpus
    from ..outputs.export import write_release
    from ..outputs.writer import check_output_paths
    from ..privacy.guidance import delta_guidance

    spark_input = None
    if args.engine == "spark":  # the input's parts, checked before Spark starts (engines.spark_inputs)
        from ..engines.spark_inputs import check_paths, resolve_input, table_input

        if args.spark_master and args.spark_remote:
            raise DpsuError("--spark-master and --spark-remote both say where Spark runs; give one of them")
        if args.spark_table:
            spark_input = table_input(args.input)
        else:
            with timings.phase("spark check input"):
                spark_input = resolve_input(args.input, args.format, _read_limits(args))
        check_paths(spark_input, _outputs(args), args.public_corpus)
    public = None
    if args.public_corpus:
        from ..mechanisms.registry import list_mechanisms

        takers = [n for n, c in list_mechanisms().items() if c.takes_public_corpus]
        if args.mechanism not in takers:
            raise DpsuError(
                f"--public-corpus is only used by {', '.join(takers)}; drop it or choose -m {' or -m '.join(takers)}"
            )
        from ..corpus.load import same_content

        if Path(args.public_corpus).is_file() and Path(args.input).is_file():
            if same_content(args.public_corpus, args.input):
                raise DpsuError(
                    "--public-corpus holds the same data as the private input; GW-KT's frequencies must come "
                    "from PUBLIC data: give a public corpus, or drop the flag to use the built-in wordfreq list"
                )
        public = args.public_corpus
    public_options = _public_options(args)
    if public_options is not None and not args.public_corpus:
        raise DpsuError("the --public-... reading flags describe --public-corpus: add it, or drop them")
    public_print = private_print = None
    if public is not None:  # its content is checked against the input's (``overlap``): hashed as both are read
        from ..corpus.overlap import Fingerprinter, new_key

        key = new_key()  # this run's, never written anywhere
        public_print, private_print = Fingerprinter(key), Fingerprinter(key)
        public = _load_public(args, public_options, public_print.add)
    for flag in ("spark_master", "spark_remote", "spark_archive", "spark_table"):
        if getattr(args, flag) and args.engine != "spark":
            name = "--" + flag.replace("_", "-")
            raise DpsuError(f"{name} is only used with --engine spark; add --engine spark or drop it")
    if args.strict and args.engine == "spark":
        raise DpsuError(
            "--strict needs the columns' sanity checks, which the Spark engine does not compute; "
            "drop --strict, or check a sample with the local engine first"
        )
    from ..accounting.store import open_store
    from ..job import ReleaseJob

    store = open_store(args.ledger)  # a bad ledger location fails before anything is read
    mech = _make_mechanism(args, public)  # validate parameters before reading a large file
    counts = _counts_plan(args)
    if counts is not None:
        from ..mechanisms.item_counts import cost_line

        counts_line = cost_line(counts)
        if args.engine == "spark":
            raise DpsuError("--with-counts runs on the local engine only; drop --engine spark or --with-counts")
        print(f"before the run: {counts_line}", file=sys.stderr)
    with timings.phase("calibrate"):  # priced once, before the read: the job runs exactly as charged
        job = ReleaseJob.of(mech, counts, seed=args.seed, engine=args.engine)
    options = _load_options(args)  # validates --max-n before anything is read
    tok_spec = _tokenizer_spec(args, options)
    limits = _read_limits(args)
    # Outputs (every file of a tokenizer folder too) must not overwrite an input or each other, and their folder
    # must be writable: checked now, before the corpus is read and any noise drawn, so a bad path costs nothing.
    check_output_paths(_outputs(args), {"the input": args.input, "the public corpus": args.public_corpus})
    corpus: Any  # a Corpus, or with --engine spark a SparkCorpus (rows on the executors)
    if args.engine == "spark":
        from ..engines.spark import load_spark_corpus, spark_session

        with timings.phase("spark JVM and session"):
            spark = spark_session(args.spark_master, remote=args.spark_remote, archive=args.spark_archive)
        signals.adopt()  # the SparkContext's SIGINT handler runs inside ours (``signals``)
        # the public corpus's content is checked in the executors' pass over the input (no read of its own)
        check: dict[str, Any] = {}
        if public_print is not None:
            check = {"public": public_print.finish(), "on_overlap": partial(_judge_public, args)}
        corpus = load_spark_corpus(spark_input or args.input, options, spark=spark, **check)
    else:
        from .warm import PREPARING_NOTE, cold

        if cold():  # a fresh install's first run compiles the kernels: said, so it is not read as the speed
            print(f"note: {PREPARING_NOTE}", file=sys.stderr)
        on_batch = None if private_print is None else private_print.add
        corpus = load_corpus(args.input, options, limits=limits, on_batch=on_batch)
        if public_print is not None and private_print is not None:
            _check_public(args, public, public_print, corpus, private_print)
    _report_source(corpus.source, strict=args.strict)
    guidance = delta_guidance(args.delta, corpus.n_users)
    if guidance.level == "error":  # delta >= 1/n: one user's data could be published outright
        print(f"warning: {guidance.message}", file=sys.stderr)
    account, charged = _charge(args, store, job, corpus)  # one transaction, before any noise is drawn
    with timings.phase("spark release" if args.engine == "spark" else "release"):
        release = job.run(corpus)
    if args.engine == "spark":
        print(f"note: {release.calibration.details.engine}", file=sys.stderr)
    tokenizer = None
    with _after_noise(release.calibration):  # every output is written, or none and the error says what was spent
        extra: tuple[tuple[str, Path, bytes], ...] = ()
        folders: tuple[tuple[str, Path], ...] = ()
        if tok_spec is not None:
            from ..outputs.tokenizer_export import directory_files, tokenizer_json

            body, built = tokenizer_json(release, tok_spec)
            folder = _tokenizer_dir(args)
            files = {Path(args.export_tokenizer): body}
            if folder is not None:  # the folder's configuration files go in the same transaction as the rest
                files = {Path(folder) / name: data for name, data in directory_files(body, built).items()}
                folders = (("--export-tokenizer", Path(folder)),)
            (tok_path, tok_body), *rest = files.items()
            tokenizer = (tok_path, tok_body, built)
            extra = tuple(("--export-tokenizer", path, data) for path, data in rest)
        with timings.phase("write"), signals.held():  # written together, and then the run has finished
            write_release(release, args.output, args.report, tokenizer, extra, folders)
    _keep(account, charged, release, tokenizer)
    per = ", ".join(f"{n}-grams: {c}" for n, c in release.per_length().items())
    _say(
        f"released {release.n_released} items{f' ({per})' if per else ''} with {release.calibration.label} "
        f"at epsilon={args.epsilon:g}, delta={args.delta:.3g} -> {args.output}"
    )
    print(spent_line(release.calibration), file=sys.stderr)
    print(f"ledger: {account.refreshed().status()}", file=sys.stderr)
    if release.n_released == 0:
        print(empty_release_reason(release.calibration), file=sys.stderr)
    if counts is not None:
        print(f"also spent by this run: {counts_line}", file=sys.stderr)
    if tokenizer is not None:
        from ..outputs.tokenizer_export import whole_words_text

        built = tokenizer[2]
        print(
            f"tokenizer ({built['model']}, {built['vocabulary_size']} entries, from the released items only) "
            f"-> {args.export_tokenizer}; splits new text by {built['pre_tokenizer']}. {whole_words_text(built)}",
            file=sys.stderr,
        )
    if args.seed is not None:
        print("warning: fixed seed (teaching mode): this release is NOT for real use", file=sys.stderr)
    timings.report()
    return 0


def _charge(args: argparse.Namespace, store: Any, job: Any, corpus: Any) -> tuple[Any, Any]:
    """The corpus's account in the durable store (recognised by its fingerprint; on Spark, by --corpus or the
    input's name) and the job's charge to it, in one transaction before any noise is drawn. An identical request
    released before is refused unless --spend-again (its output is public and kept)."""
    from ..accounting.account import charge as charge_job
    from ..accounting.account import local_actor, named, recognise, refuse_identical

    actor = local_actor()
    name = args.corpus or Path(str(args.input)).name
    if args.engine == "spark":
        account = named(store, name, by=actor)
    else:
        account = recognise(store, corpus, name, by=actor)
    print(f"ledger: {account.note}", file=sys.stderr)
    if account.warning:
        print(f"warning (raw data, not private): {account.warning}", file=sys.stderr)
    refuse_identical(
        account,
        job,
        spend_again=args.spend_again,
        get_it="get it at no cost with 'dpsu ledger export-release {id} -o FILE'",
        again="add --spend-again",
    )
    tool = "spark" if args.engine == "spark" else "cli"
    return charge_job(account, job, actor=actor, tool=tool, source="dpsu release")


def _keep(account: Any, charged: Any, release: Any, tokenizer: Any) -> None:
    """Keep the release's public output with its charge (a failure here loses no output: it is written)."""
    from ..accounting.account import keep
    from ..outputs.export import report_json

    keep(
        account, charged.charge_id, release, report_json(release, tokenizer=None if tokenizer is None else tokenizer[2])
    )


def _say(text: str) -> None:
    """A line on standard output once the outputs are written: a reader that went away (``dpsu release ... | head
    -0``) does not make the finished run a failure; what is left to say goes nowhere."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


@contextlib.contextmanager
def _after_noise(cal: Any) -> Iterator[None]:
    """Outputs of a release whose noise is drawn: a failure says whether anything of it was published. The
    outputs are written together (``outputs.OutputSet``), so a failure while building or writing them leaves
    none and nothing was published; a failure while renaming them into place may have shown one: spent."""
    from ..accounting.ledger import spent_line
    from ..errors import OutputCommitError

    try:
        yield
    except OutputCommitError as exc:
        raise OutputCommitError(f"{spent_line(cal)}, yet writing the outputs failed: {exc}") from None
    except (DpsuError, OSError, MemoryError) as exc:
        what = os_error_message(exc) if isinstance(exc, OSError) else str(exc) or type(exc).__name__
        error = type(exc) if isinstance(exc, DpsuError) else OutputError
        none = "" if "no output was written" in what else "no output was written; "
        raise error(
            f"{what}; {none}the noise was drawn, but nothing of this release was published: fix this and run again"
        ) from None
    except Exception as exc:  # a bug: still says that nothing was published (the internal-error line)
        raise RuntimeError(
            f"{type(exc).__name__}: {exc}; no output was written, nothing of this release was published"
        ) from exc


def _counts_plan(args: argparse.Namespace):
    """The counts' calibration (``mechanisms.item_counts``) for --with-counts, or None."""
    counts = _counts_args(args)
    if counts is None:
        return None
    from ..mechanisms.item_counts import calibrate_counts

    return calibrate_counts(args.epsilon, args.delta, counts["share"], counts["clip"])


def _outputs(args: argparse.Namespace) -> dict[str, Any]:
    """Every output of ``release`` for ``outputs.check_output_paths``: -o, --report, and --export-tokenizer's file
    or folder (with every file the exporter writes in it)."""
    from ..outputs.tokenizer_export import output_target

    tok = args.export_tokenizer
    return {
        "-o": args.output,
        "--report": args.report,
        "--export-tokenizer": None if tok is None else output_target(tok),
    }


def _tokenizer_dir(args: argparse.Namespace) -> str | None:
    """--export-tokenizer as a folder (any path not ending in .json), or None."""
    from ..outputs.tokenizer_export import is_directory_target

    p = args.export_tokenizer
    return p if p is not None and is_directory_target(p) else None


def _tokenizer_spec(args: argparse.Namespace, options: LoadOptions):
    """The exported tokenizer's spec (checked before the corpus is read), or None without --export-tokenizer."""
    given = [f for f, v in (("--tokenizer-model", args.tokenizer_model), ("--special-tokens", args.special_tokens),
                            ("--tokenizer-vocab-size", args.tokenizer_vocab_size)) if v is not None]  # fmt: skip
    if args.export_tokenizer is None:
        if given:
            raise DpsuError(f"{given[0]} is for the exported tokenizer: add --export-tokenizer PATH, or drop it")
        return None
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        raise DpsuError("--export-tokenizer needs the tokenizers package: pip install 'dpsu[export]'") from None
    from ..outputs.tokenizer_export import DEFAULT_MODEL, TokenizerSpec, check_spec, parse_special_tokens

    spec = TokenizerSpec.from_options(
        options,
        model=args.tokenizer_model or DEFAULT_MODEL,
        special_tokens=parse_special_tokens(args.special_tokens),
        vocab_size=args.tokenizer_vocab_size,
    )
    return check_spec(spec)


def _report_source(src, *, strict: bool) -> None:
    """What the reader did, the chosen columns' facts and the warnings, on stderr (raw data, not private)."""
    for note in src.notes:
        print(f"note (raw data, not private): {speak(note, CLI_OPTIONS)}", file=sys.stderr)
    for line in src.detected:
        print(f"segmentation (raw data, not private): {line}", file=sys.stderr)
    roles = ["user", "text"] if len(src.column_facts) == 2 else ["text"]
    for role, facts in zip(roles, src.column_facts):
        print(f"column (raw data, not private): {facts.describe(role)}", file=sys.stderr)
    print(f"privacy unit: {src.privacy_unit}", file=sys.stderr)
    for w in src.warnings:
        print(f"warning: {speak(str(w), CLI_OPTIONS)}", file=sys.stderr)
    if strict and src.warnings:
        raise DpsuError(
            f"{len(src.warnings)} warning{'s' if len(src.warnings) > 1 else ''} about the input and --strict is set; "
            "fix the columns or options as the warnings say, or drop --strict"
        )


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
    except DpsuError as exc:
        return _fail(speak(str(exc), CLI_OPTIONS))
    except OSError as exc:
        return _fail(f"{os_error_message(exc)}; check the path and that the file is readable")
    except MemoryError:
        return _fail(
            "out of memory: the corpus or the parameters need more memory than this machine has; "
            "use a smaller file, a smaller --max-n or --max-items"
        )
    except RecursionError:
        return _fail(str(InputError("the input is nested too deeply to read; check the file's structure")))
    except Exception as exc:  # a bug, not bad input: still one line, never a traceback
        return _fail(
            f"internal error ({type(exc).__name__}: {exc}); please report it with the command you ran",
            EXIT_INTERNAL,
        )


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    print(f"dpsu: error: {cap_message(message)}", file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
