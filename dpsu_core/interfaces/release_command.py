"""The pieces of ``dpsu release`` (``cli._cmd_release`` puts them in order): the checks that cost nothing (the
flags that conflict, the Spark input's parts, GW-KT's public corpus, the output paths), the read on either engine,
the charge to the durable ledger, and the outputs written together with what the run says about them.

Every check here runs before the corpus is read and any noise is drawn, except ``after_noise`` and what follows it.
Bad input raises a ``DpsuError`` (one line, exit 2: ``cli._main``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DpsuError, InputError, OutputError, ParameterError, os_error_message
from ..wording import CLI_OPTIONS, speak

if TYPE_CHECKING:
    from ..corpus.limits import ReadLimits
    from ..corpus.load import LoadOptions

MB = 1 << 20
PUBLIC_USE = "GW-KT's public corpus"
SPARK_ONLY = ("spark_master", "spark_remote", "spark_archive", "spark_table")


# --------------------------------------------------------------------------- checks before the read
def spark_input(args: argparse.Namespace) -> Any:
    """--engine spark: the input's parts, checked before Spark starts (``engines.spark_inputs``), or None on the
    local engine."""
    if args.engine != "spark":
        return None
    from .. import timings
    from ..engines.spark_inputs import check_paths, resolve_input, table_input

    if args.spark_master and args.spark_remote:
        raise DpsuError("--spark-master and --spark-remote both say where Spark runs; give one of them")
    if args.spark_table:
        parts = table_input(args.input)
    else:
        with timings.phase("spark check input"):
            parts = resolve_input(args.input, args.format, read_limits(args))
    check_paths(parts, output_paths(args), args.public_corpus)
    return parts


def public_corpus(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """GW-KT's public corpus read now (its flags checked first), with the two ``overlap.Fingerprinter`` that check
    its content against the input's as both are read; (None, None, None) without --public-corpus."""
    if args.public_corpus:
        from ..corpus.load import same_content
        from ..mechanisms.registry import list_mechanisms

        takers = [n for n, c in list_mechanisms().items() if c.takes_public_corpus]
        if args.mechanism not in takers:
            raise DpsuError(
                f"--public-corpus is only used by {', '.join(takers)}; drop it or choose -m {' or -m '.join(takers)}"
            )
        if Path(args.public_corpus).is_file() and Path(args.input).is_file():
            if same_content(args.public_corpus, args.input):
                raise DpsuError(
                    "--public-corpus holds the same data as the private input; GW-KT's frequencies must come "
                    "from PUBLIC data: give a public corpus, or drop the flag to use the built-in wordfreq list"
                )
    options = public_options(args)
    if options is not None and not args.public_corpus:
        raise DpsuError("the --public-... reading flags describe --public-corpus: add it, or drop them")
    if not args.public_corpus:
        return None, None, None
    from ..corpus.overlap import Fingerprinter, new_key

    key = new_key()  # this run's, never written anywhere
    public_print, private_print = Fingerprinter(key), Fingerprinter(key)
    return load_public(args, options, public_print.add), public_print, private_print


def check_engine_flags(args: argparse.Namespace) -> None:
    """The flags that only the Spark engine uses, and --strict, which it cannot honour."""
    for flag in SPARK_ONLY:
        if getattr(args, flag) and args.engine != "spark":
            name = "--" + flag.replace("_", "-")
            raise DpsuError(f"{name} is only used with --engine spark; add --engine spark or drop it")
    if args.strict and args.engine == "spark":
        raise DpsuError(
            "--strict needs the columns' sanity checks, which the Spark engine does not compute; "
            "drop --strict, or check a sample with the local engine first"
        )


def check_outputs(args: argparse.Namespace) -> None:
    """Outputs (every file of a tokenizer folder too) must not overwrite an input or each other, and their folder
    must be writable: checked before the corpus is read and any noise drawn, so a bad path costs nothing."""
    from ..outputs.writer import check_output_paths

    check_output_paths(output_paths(args), {"the input": args.input, "the public corpus": args.public_corpus})


# --------------------------------------------------------------------------- the read
def read_corpus(
    args: argparse.Namespace, options: LoadOptions, limits: ReadLimits, parts: Any, public: tuple[Any, Any, Any]
) -> Any:
    """The input read on its engine (a ``Corpus``, or with --engine spark a ``SparkCorpus``: rows on the
    executors), its content checked against GW-KT's public corpus (``public``: as ``public_corpus`` returns it),
    and what the reader did said on stderr."""
    from ..privacy.guidance import delta_guidance

    if args.engine == "spark":
        corpus = _read_on_spark(args, options, parts, public[1])
    else:
        corpus = _read_locally(args, options, limits, public)
    report_source(corpus.source, strict=args.strict)
    guidance = delta_guidance(args.delta, corpus.n_users)
    if guidance.level == "error":  # delta >= 1/n: one user's data could be published outright
        print(f"warning: {guidance.message}", file=sys.stderr)
    return corpus


def _read_on_spark(args: argparse.Namespace, options: LoadOptions, parts: Any, public_print: Any) -> Any:
    from .. import timings
    from ..engines.spark import load_spark_corpus, spark_session
    from . import signals

    with timings.phase("spark JVM and session"):
        spark = spark_session(args.spark_master, remote=args.spark_remote, archive=args.spark_archive)
    signals.adopt()  # the SparkContext's SIGINT handler runs inside ours (``signals``)
    # the public corpus's content is checked in the executors' pass over the input (no read of its own)
    check: dict[str, Any] = {}
    if public_print is not None:
        check = {"public": public_print.finish(), "on_overlap": partial(judge_public, args)}
    return load_spark_corpus(parts or args.input, options, spark=spark, **check)


def _read_locally(
    args: argparse.Namespace, options: LoadOptions, limits: ReadLimits, public: tuple[Any, Any, Any]
) -> Any:
    from ..corpus import load_corpus
    from .warm import PREPARING_NOTE, cold

    public_data, public_print, private_print = public
    if cold():  # a fresh install's first run compiles the kernels: said, so it is not read as the speed
        print(f"note: {PREPARING_NOTE}", file=sys.stderr)
    on_batch = None if private_print is None else private_print.add
    corpus = load_corpus(args.input, options, limits=limits, on_batch=on_batch)
    if public_print is not None and private_print is not None:
        check_public(args, public_data, public_print, corpus, private_print)
    return corpus


# --------------------------------------------------------------------------- after the noise
def write_outputs(args: argparse.Namespace, release: Any, tok_spec: Any) -> tuple[Path, bytes, dict] | None:
    """-o, --report and the exported tokenizer (its folder's files too) written together (``outputs.OutputSet``);
    the tokenizer as (path, tokenizer.json, what was built), or None without --export-tokenizer."""
    from .. import timings
    from ..outputs.export import write_release
    from . import signals

    extra: tuple[tuple[str, Path, bytes], ...] = ()
    folders: tuple[tuple[str, Path], ...] = ()
    tokenizer = None
    if tok_spec is not None:
        from ..outputs.tokenizer_export import directory_files, tokenizer_json

        body, built = tokenizer_json(release, tok_spec)
        folder = tokenizer_dir(args)
        files = {Path(args.export_tokenizer): body}
        if folder is not None:  # the folder's configuration files go in the same transaction as the rest
            files = {Path(folder) / name: data for name, data in directory_files(body, built).items()}
            folders = (("--export-tokenizer", Path(folder)),)
        (tok_path, tok_body), *rest = files.items()
        tokenizer = (tok_path, tok_body, built)
        extra = tuple(("--export-tokenizer", path, data) for path, data in rest)
    with timings.phase("write"), signals.held():  # written together, and then the run has finished
        write_release(release, args.output, args.report, tokenizer, extra, folders)
    return tokenizer


def say_released(args: argparse.Namespace, release: Any, account: Any, job: Any, tokenizer: Any) -> None:
    """What the finished run released (stdout), spent and wrote (stderr)."""
    from ..accounting.ledger import spent_line

    per = ", ".join(f"{n}-grams: {c}" for n, c in release.per_length().items())
    say(
        f"released {release.n_released} items{f' ({per})' if per else ''} with {release.calibration.label} "
        f"at epsilon={args.epsilon:g}, delta={args.delta:.3g} -> {args.output}"
    )
    print(spent_line(release.calibration), file=sys.stderr)
    print(f"ledger: {account.refreshed().status()}", file=sys.stderr)
    if release.n_released == 0:
        print(empty_release_reason(release.calibration), file=sys.stderr)
    if job.counts is not None:
        from ..mechanisms.item_counts import cost_line

        print(f"also spent by this run: {cost_line(job.counts)}", file=sys.stderr)
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


# --------------------------------------------------------------------------- helpers
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


def read_limits(args: argparse.Namespace) -> ReadLimits:
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


def corpus_max_n(args: argparse.Namespace) -> int:
    """The longest n-gram the corpus needs: --max-n when given (validated: 0 is an error, not 'not given')."""
    from ..params import PARAMS

    n = PARAMS["max_n"].check(args.max_n) if args.max_n is not None else 1
    if getattr(args, "only_n", None) is not None:
        n = max(n, PARAMS["only_n"].check(args.only_n))
    return n


def public_options(args: argparse.Namespace) -> LoadOptions | None:
    """How GW-KT's public corpus is read (None: no --public-... reading flag given: known column names)."""
    from ..corpus.load import LoadOptions
    from ..reading import FILE_FIELDS

    given = {field: getattr(args, "public_" + field) for field in FILE_FIELDS}
    header = False if args.public_no_header else (True if args.public_header else None)
    opts = LoadOptions(**given, has_header=header)
    return None if opts == LoadOptions() else opts


def load_public(args: argparse.Namespace, options: LoadOptions | None, on_batch: Any = None):
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
        opts = replace(options or LoadOptions(), max_n=corpus_max_n(args))
        return load_corpus(args.public_corpus, opts, limits=read_limits(args), on_batch=on_batch)
    except DpsuError as exc:
        raise type(exc)(f"the public corpus {Path(args.public_corpus).name}: {speak(str(exc), names)}") from None


def check_public(args: argparse.Namespace, public: Any, public_print: Any, corpus: Any, private_print: Any) -> None:
    """Refuse GW-KT's public corpus when it is the input's data (``fingerprint.check_content``: its users' token
    sets, and its posts as read; one line, exit 2); say how much it shares when it shares less."""
    from ..corpus.fingerprint import check_content, content

    key, name = public_print.key, Path(args.public_corpus).name
    try:
        said = check_content(
            content(public, public_print.finish(), key), content(corpus, private_print.finish(), key), PUBLIC_USE
        )
    except InputError as exc:
        raise InputError(f"--public-corpus {name}: {exc}") from None
    if said:
        print(f"warning (raw data, not private): --public-corpus {name}: {said}", file=sys.stderr)


def judge_public(args: argparse.Namespace, found: Any) -> None:
    """Act on the ``overlap.Overlap`` of GW-KT's public corpus with the input (the Spark engine's check, made in
    the executors' pass over the input)."""
    use = PUBLIC_USE
    name = Path(args.public_corpus).name
    if found.refused:
        raise InputError(f"--public-corpus {name}: {found.refusal(use)}")
    if found.any:
        print(f"warning (raw data, not private): --public-corpus {name}: {found.warning(use)}", file=sys.stderr)


def charge(args: argparse.Namespace, store: Any, job: Any, corpus: Any) -> tuple[Any, Any]:
    """The corpus's account in the durable store (recognised by its fingerprint; on Spark, by --corpus or the
    input's name) and the job's charge to it, in one transaction before any noise is drawn. An identical request
    released before is refused unless --spend-again (its output is public and kept)."""
    from ..accounting.account import charge as charge_job
    from ..accounting.account import name_of_file, named, recognise, refuse_identical
    from ..accounting.identity import local_actor

    actor = local_actor()
    name = args.corpus or name_of_file(Path(str(args.input)).name)
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


def keep(account: Any, charged: Any, release: Any, tokenizer: Any) -> None:
    """Keep the release's public output with its charge (a failure here loses no output: it is written)."""
    from ..accounting.account import keep
    from ..outputs.export import report_json

    keep(
        account, charged.charge_id, release, report_json(release, tokenizer=None if tokenizer is None else tokenizer[2])
    )


def say(text: str) -> None:
    """A line on standard output once the outputs are written: a reader that went away (``dpsu release ... | head
    -0``) does not make the finished run a failure; what is left to say goes nowhere."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


@contextlib.contextmanager
def after_noise(cal: Any) -> Iterator[None]:
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


def output_paths(args: argparse.Namespace) -> dict[str, Any]:
    """Every output of ``release`` for ``outputs.check_output_paths``: -o, --report, and --export-tokenizer's file
    or folder (with every file the exporter writes in it)."""
    from ..outputs.tokenizer_export import output_target

    tok = args.export_tokenizer
    return {
        "-o": args.output,
        "--report": args.report,
        "--export-tokenizer": None if tok is None else output_target(tok),
    }


def tokenizer_dir(args: argparse.Namespace) -> str | None:
    """--export-tokenizer as a folder (any path not ending in .json), or None."""
    from ..outputs.tokenizer_export import is_directory_target

    p = args.export_tokenizer
    return p if p is not None and is_directory_target(p) else None


def tokenizer_spec(args: argparse.Namespace, options: LoadOptions):
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


def report_source(src, *, strict: bool) -> None:
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
