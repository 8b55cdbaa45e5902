"""Redo a release in batch: the exact ``dpsu release ...`` command line and a short Python script.

Both carry every parameter of the release (mechanism, epsilon, delta, the mechanism's parameters, and how the
corpus was read and tokenized) and NO seed: each rerun draws fresh noise from the OS, as a real release must.
Nothing here reads data: the inputs are the public calibration of a release and the reading options.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..corpus import LoadOptions
from ..errors import ParameterError
from ..mechanisms.base import Calibration
from ..params import PARAMS
from ..reading import FILE_FIELDS, HEADER_FLAGS, READING, READING_OPTIONS, public_flag

# load_corpus keyword -> how the CLI says it (declared in ``reading``). A boolean preprocessing default of True is
# switched off by a --keep-... flag; the others take a value. ``cli._load_options`` is the inverse (tests check the
# round trip).
_FLAG_IF_FALSE = {o.field: o.flag for o in READING_OPTIONS if o.kind == "off"}
_FLAG_IF_TRUE = {o.field: o.flag for o in READING_OPTIONS if o.kind == "on"}
_VALUE_FLAGS = {o.field: (o.flag, o.default) for o in READING_OPTIONS if o.kind == "value" and o.default is not None}
_COLUMN_FLAGS = {o.field: o.flag for o in READING_OPTIONS if o.kind == "value" and o.default is None}
LOAD_OPTIONS = (*_VALUE_FLAGS, *_COLUMN_FLAGS, "has_header", "max_n", *_FLAG_IF_FALSE, *_FLAG_IF_TRUE)


@dataclass(frozen=True)
class Redo:
    """What redoes one release, written as ``release_argv`` / ``release_groups`` (the argument list),
    ``release_command`` (shell lines), ``command_file`` (a ``.sh``) or ``release_script`` (a ``.py``): its public
    calibration, the input file's name and how it was read (``load_options``: a ``LoadOptions`` or the dict of the
    fields that differ), the outputs the redo writes, GW-KT's public corpus and how it is read, and the exported
    tokenizer (a ``tokenizer_export.TokenizerSpec``) with its folder."""

    calibration: Calibration
    input_name: str
    load_options: LoadOptions | Mapping[str, Any]
    output: str
    report: str
    public_corpus: str | None = None
    public_options: LoadOptions | None = None
    tokenizer: Any = None
    tokenizer_path: str = "tokenizer"


def _check_options(load_options: LoadOptions | Mapping[str, Any]) -> dict[str, Any]:
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


def release_argv(redo: Redo) -> list[str]:
    """The argument list of ``dpsu release`` that redoes this release's configuration (no --seed), with its noisy
    counts (``--with-counts``) when it had them, and ``--export-tokenizer tokenizer_path`` when ``tokenizer`` (a
    ``tokenizer_export.TokenizerSpec``) is given."""
    return [token for group in release_groups(redo) for token in group]


def release_groups(redo: Redo) -> list[list[str]]:
    """``release_argv`` as its arguments: ``["dpsu", "release", input]``, then each flag with its value (one
    token ``--flag=value`` when the value starts with "-", which argparse would take for a flag)."""
    from ..mechanisms.item_counts import counts_flags

    cal, opts = redo.calibration, _check_options(redo.load_options)
    eps, delta, counts = _budget(cal)
    groups = [["dpsu", "release", str(redo.input_name)], ["-m", cal.mechanism], ["-e", repr(eps)], ["-d", repr(delta)]]
    for name, value in redo_params(cal).items():
        if name in PARAMS:
            groups.append(_arg(PARAMS[name].cli, repr(value) if isinstance(value, float) else str(value)))
    max_n = _corpus_max_n(cal, opts)
    if "max_n" not in cal.params and max_n > 1:
        groups.append(_arg("--max-n", str(max_n)))
    for key, (flag, default) in _VALUE_FLAGS.items():
        if READING[key].unused_by(str(opts.get("tokenizer", READING["tokenizer"].default))):
            continue  # unused by this tokenizer: the CLI refuses it
        if opts.get(key, default) != default:
            groups.append(_arg(flag, str(opts[key])))
    for key, flag in _COLUMN_FLAGS.items():
        if opts.get(key) is not None:
            groups.append(_arg(flag, str(opts[key])))
    if opts.get("has_header") is not None:
        groups.append([HEADER_FLAGS[bool(opts["has_header"])]])
    groups += [[flag] for key, flag in _FLAG_IF_FALSE.items() if opts.get(key, True) is False]
    groups += [[flag] for key, flag in _FLAG_IF_TRUE.items() if opts.get(key, False) is True]
    if redo.public_corpus is not None:
        groups.append(_arg("--public-corpus", str(redo.public_corpus)))
        groups += _split(_public_flags(redo.public_options))
    if counts is not None:
        groups += _split(counts_flags(counts))
    if redo.tokenizer is not None:
        from .tokenizer_export import tokenizer_flags

        groups.append(_arg("--export-tokenizer", str(redo.tokenizer_path)))
        groups += _split(tokenizer_flags(redo.tokenizer))
    groups += [_arg("-o", redo.output), _arg("--report", redo.report)]
    # a redo is a deliberate new release of the same request: it spends again (the kept one is free to download)
    groups.append(["--spend-again"])
    return groups


def redo_params(cal: Calibration) -> dict[str, Any]:
    """The release's parameters a redo passes on: the set ones, less those another's value leaves unused
    (``ParamSpec.unused``: e.g. ``tune_users`` with the halves' delta split, a flag the CLI refuses)."""
    return {k: v for k, v in cal.params.items() if v is not None and not (k in PARAMS and PARAMS[k].unused(cal.params))}


def _arg(flag: str, value: str) -> list[str]:
    """A flag and its value: two tokens, or ``--flag=value`` when argparse would read the value as a flag."""
    if value.startswith("-"):
        return [f"{flag}={value}"] if flag.startswith("--") else [f"{flag}{value}"]
    return [flag, value]


def _split(flags: list[str]) -> list[list[str]]:
    """A flat list of ``--flag [value]`` as groups (the values these helpers write never start with "--")."""
    groups: list[list[str]] = []
    i = 0
    while i < len(flags):
        if i + 1 < len(flags) and not flags[i + 1].startswith("--"):
            groups.append(_arg(flags[i], flags[i + 1]))
            i += 2
        else:
            groups.append([flags[i]])
            i += 1
    return groups


def _budget(cal: Calibration) -> tuple[float, float, Any]:
    """(epsilon, delta) the user gave and the counts' calibration: a release with noisy counts (``item_counts``)
    ran its items at a share of them."""
    from ..mechanisms.item_counts import counts_of

    counts = counts_of(cal)
    if counts is None:
        return cal.epsilon, cal.delta, None
    return counts.total_epsilon, counts.total_delta, counts


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


def release_command(redo: Redo) -> str:
    """The command as shell lines broken only between arguments: ``dpsu release INPUT`` and then one flag and
    its value per line, each line but the last ending in `` \\`` (the shell's line continuation), every token
    shell-quoted. The Export page shows it in a code block that does not wrap, so no token is ever cut."""
    return shell_lines(release_groups(redo))


def command_file(redo: Redo) -> str:
    """The command as a shell script (the Export page's ``.sh`` download): ``release_command`` under a
    ``#!/bin/sh`` line and a comment saying that each run spends again."""
    return (
        "#!/bin/sh\n# Redo the dpsu release (no seed: fresh noise; spends the budget again)\n"
        + release_command(redo)
        + "\n"
    )


def shell_lines(groups: list[list[str]]) -> str:
    """Groups of arguments as one shell command: a line per group, continued with `` \\``, indented after the
    first."""
    lines = [("" if i == 0 else "  ") + shlex.join(g) for i, g in enumerate(groups)]
    return " \\\n".join(lines)


def release_script(redo: Redo) -> str:
    """A short Python script (public API only) that redoes the release with fresh randomness (and its noisy counts,
    and the tokenizer directory when ``tokenizer`` is given, as ``release_argv``)."""
    cal, opts = redo.calibration, _check_options(redo.load_options)
    opts["max_n"] = _corpus_max_n(cal, opts)
    load_args = "".join(f",\n    {k}={opts[k]!r}" for k in LOAD_OPTIONS if k in opts)
    params: dict[str, Any] = {k: repr(v) for k, v in redo_params(cal).items()}
    public_load = ""
    if redo.public_corpus is not None:
        public_args = {**_public_file_options(redo.public_options), "max_n": opts["max_n"]}
        if redo.public_options is None:
            params["public_source"] = repr(redo.public_corpus)
        else:  # read as in the app, with its columns as chosen
            kw = "".join(f", {k}={v!r}" for k, v in public_args.items())
            public_load = f"public = load_corpus({str(redo.public_corpus)!r}{kw})  # a PUBLIC corpus\n"
            params["public_source"] = "public"
    mech_args = "".join(f", {k}={v}" for k, v in params.items())
    eps, delta, counts = _budget(cal)
    imports = "from dpsu_core import get_mechanism, load_corpus\n"
    if counts is None:
        run = (
            f"mechanism = get_mechanism({cal.mechanism!r}, epsilon={eps!r}, delta={delta!r}{mech_args})\n"
            "release = mechanism.release(corpus)\n"
        )
    else:
        imports = (
            "from dpsu_core import load_corpus\n"
            "from dpsu_core.mechanisms.item_counts import mechanism_with_counts, release_with_counts\n"
        )
        run = (
            f"mechanism, counts = mechanism_with_counts(\n    {cal.mechanism!r}, epsilon={eps!r}, delta={delta!r}, "
            f"share={counts.share!r}, clip={counts.clip!r}{mech_args}\n)\n"
            "release = release_with_counts(mechanism, counts, corpus)  # the items, then their noisy counts\n"
        )
    tok, tokenizer = "", redo.tokenizer
    if tokenizer is not None:
        imports += "from dpsu_core.outputs.tokenizer_export import TokenizerSpec, tokenizer_files, write_directory\n"
        spec = {"model": tokenizer.model, "special_tokens": tuple(tokenizer.special_tokens)}
        if tokenizer.vocab_size is not None:
            spec["vocab_size"] = tokenizer.vocab_size
        spec_args = ", ".join(f"{k}={v!r}" for k, v in spec.items())
        tok = (
            f"spec = TokenizerSpec.from_options(corpus_options, {spec_args})\n"
            "files, built = tokenizer_files(release, spec)\n"
            f"write_directory({str(redo.tokenizer_path)!r}, files)  # AutoTokenizer.from_pretrained loads it\n"
        )
    options = ""
    if tokenizer is not None:
        imports += "from dpsu_core.corpus import LoadOptions\n"
        options = f"corpus_options = LoadOptions({', '.join(f'{k}={opts[k]!r}' for k in LOAD_OPTIONS if k in opts)})\n"
    return (
        f'"""Redo a dpsu release: {cal.label} at epsilon={eps!r}, delta={delta!r}.\n\n'
        "No seed: every run draws fresh noise from the operating system, so each run is a new release\n"
        "and spends (epsilon, delta) of the corpus's privacy budget again.\n"
        '"""\n\n'
        f"{imports}"
        "from dpsu_core.outputs.export import write_release\n\n"
        f"corpus = load_corpus(\n    {str(redo.input_name)!r}{load_args},\n)\n"
        f"{options}"
        f"{public_load}"
        f"{run}"
        f"write_release(release, {redo.output!r}, {redo.report!r})\n"
        f"{tok}"
        'print(f"released {release.n_released} items")\n'
    )
