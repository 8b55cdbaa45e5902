"""Redo a release in batch: the exact ``dpsu release ...`` command line and a short Python script.

Both carry every parameter of the release (mechanism, epsilon, delta, the mechanism's parameters, and how the
corpus was read and tokenized) and NO seed: each rerun draws fresh noise from the OS, as a real release must.
Nothing here reads data: the inputs are the public calibration of a release and the reading options.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict
from typing import Any

from .corpus import LoadOptions
from .corpus.load import CHAR_NGRAM_TOKENIZERS
from .errors import ParameterError
from .mechanisms.base import Calibration
from .params import PARAMS
from .reading import FILE_FIELDS, HEADER_FLAGS, READING, READING_OPTIONS, public_flag

# load_corpus keyword -> how the CLI says it (declared in ``reading``). A boolean preprocessing default of True is
# switched off by a --keep-... flag; the others take a value. ``cli._load_options`` is the inverse (tests check the
# round trip).
_FLAG_IF_FALSE = {o.field: o.flag for o in READING_OPTIONS if o.kind == "off"}
_FLAG_IF_TRUE = {o.field: o.flag for o in READING_OPTIONS if o.kind == "on"}
_VALUE_FLAGS = {o.field: (o.flag, o.default) for o in READING_OPTIONS if o.kind == "value" and o.default is not None}
_COLUMN_FLAGS = {o.field: o.flag for o in READING_OPTIONS if o.kind == "value" and o.default is None}
LOAD_OPTIONS = (*_VALUE_FLAGS, *_COLUMN_FLAGS, "has_header", "max_n", *_FLAG_IF_FALSE, *_FLAG_IF_TRUE)


def _check_options(load_options: LoadOptions | dict[str, Any]) -> dict[str, Any]:
    """The reading options as a dict. A ``LoadOptions`` field the CLI has no flag for is fine at its default
    (the CLI then does the same) and an error otherwise: the command would not redo the release."""
    if isinstance(load_options, LoadOptions):
        defaults = asdict(LoadOptions())
        load_options = {
            k: v for k, v in asdict(load_options).items() if k in LOAD_OPTIONS or v != defaults.get(k, object())
        }
    unknown = sorted(set(load_options) - set(LOAD_OPTIONS))
    if unknown:
        raise ParameterError(
            f"cannot write a command for reading option(s) {', '.join(unknown)}: the CLI has no flag for them "
            f"(known: {', '.join(LOAD_OPTIONS)})"
        )
    return dict(load_options)


def _corpus_max_n(cal: Calibration, load_options: dict[str, Any]) -> int:
    p = cal.params
    return max(int(load_options.get("max_n") or 1), int(p.get("max_n") or 1), int(p.get("only_n") or 1))


def release_argv(
    cal: Calibration,
    input_name: str,
    load_options: LoadOptions | dict[str, Any],
    *,
    output: str,
    report: str,
    public_corpus: str | None = None,
    public_options: LoadOptions | None = None,
) -> list[str]:
    """The argument list of ``dpsu release`` that redoes this release's configuration (no --seed)."""
    opts = _check_options(load_options)
    argv = ["dpsu", "release", str(input_name), "-m", cal.mechanism, "-e", repr(cal.epsilon), "-d", repr(cal.delta)]
    for name, value in cal.params.items():
        if name not in PARAMS or value is None:
            continue
        argv += [PARAMS[name].cli, repr(value) if isinstance(value, float) else str(value)]
    max_n = _corpus_max_n(cal, opts)
    if "max_n" not in cal.params and max_n > 1:
        argv += ["--max-n", str(max_n)]
    for key, (flag, default) in _VALUE_FLAGS.items():
        if key == "char_ngrams" and opts.get("tokenizer", "auto") not in CHAR_NGRAM_TOKENIZERS:
            continue  # unused by this tokenizer: the CLI refuses it
        if opts.get(key, default) != default:
            argv += [flag, str(opts[key])]
    for key, flag in _COLUMN_FLAGS.items():
        if opts.get(key) is not None:
            argv += [flag, str(opts[key])]
    if opts.get("has_header") is not None:
        argv.append(HEADER_FLAGS[bool(opts["has_header"])])
    argv += [flag for key, flag in _FLAG_IF_FALSE.items() if opts.get(key, True) is False]
    argv += [flag for key, flag in _FLAG_IF_TRUE.items() if opts.get(key, False) is True]
    if public_corpus is not None:
        argv += ["--public-corpus", str(public_corpus)]
        argv += _public_flags(public_options)
    argv += ["-o", output, "--report", report]
    return argv


def _public_file_options(public_options: LoadOptions | None) -> dict[str, Any]:
    """How GW-KT's public corpus file is read, where it differs from the defaults (known column names)."""
    if public_options is None:
        return {}
    default = LoadOptions()
    keys = (*FILE_FIELDS, "has_header")
    return {k: getattr(public_options, k) for k in keys if getattr(public_options, k) != getattr(default, k)}


def _public_flags(public_options: LoadOptions | None) -> list[str]:
    flags: list[str] = []
    for key, value in _public_file_options(public_options).items():
        if key == "has_header":
            flags.append(public_flag(HEADER_FLAGS[bool(value)]))
        elif READING[key].kind == "value":
            flags += [public_flag(READING[key].flag), str(value)]
        elif value:
            flags.append(public_flag(READING[key].flag))
    return flags


def release_command(cal: Calibration, input_name: str, load_options: LoadOptions | dict[str, Any], **kw: Any) -> str:
    """The command line as one shell-quoted string."""
    return shlex.join(release_argv(cal, input_name, load_options, **kw))


def release_script(
    cal: Calibration,
    input_name: str,
    load_options: LoadOptions | dict[str, Any],
    *,
    output: str,
    report: str,
    public_corpus: str | None = None,
    public_options: LoadOptions | None = None,
) -> str:
    """A short Python script (public API only) that redoes the release with fresh randomness."""
    opts = _check_options(load_options)
    opts["max_n"] = _corpus_max_n(cal, opts)
    load_args = "".join(f",\n    {k}={opts[k]!r}" for k in LOAD_OPTIONS if k in opts)
    params: dict[str, Any] = {k: repr(v) for k, v in cal.params.items() if v is not None}
    public_load = ""
    if public_corpus is not None:
        public_args = {**_public_file_options(public_options), "max_n": opts["max_n"]}
        if public_options is None:
            params["public_source"] = repr(public_corpus)
        else:  # read as in the app, with its columns as chosen
            kw = "".join(f", {k}={v!r}" for k, v in public_args.items())
            public_load = f"public = load_corpus({str(public_corpus)!r}{kw})  # a PUBLIC corpus\n"
            params["public_source"] = "public"
    mech_args = "".join(f", {k}={v}" for k, v in params.items())
    return (
        f'"""Redo a dpsu release: {cal.label} at epsilon={cal.epsilon!r}, delta={cal.delta!r}.\n\n'
        "No seed: every run draws fresh noise from the operating system, so each run is a new release\n"
        "and spends (epsilon, delta) of the corpus's privacy budget again.\n"
        '"""\n\n'
        "from dpsu_core import get_mechanism, load_corpus\n"
        "from dpsu_core.export import write_release\n\n"
        f"corpus = load_corpus(\n    {str(input_name)!r}{load_args},\n)\n"
        f"{public_load}"
        f"mechanism = get_mechanism({cal.mechanism!r}, epsilon={cal.epsilon!r}, delta={cal.delta!r}{mech_args})\n"
        "release = mechanism.release(corpus)\n"
        f"write_release(release, {output!r}, {report!r})\n"
        'print(f"released {release.n_released} items")\n'
    )
