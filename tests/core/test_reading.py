"""The reading options are declared once (dpsu_core.reading): every LoadOptions field the user sets is there, and
the CLI, the command export, the core's wording and the app all take their names from it."""

from __future__ import annotations

from dataclasses import fields

from dpsu_core.corpus import LoadOptions
from dpsu_core.interfaces.cli import _load_options, build_parser
from dpsu_core.outputs.command import LOAD_OPTIONS
from dpsu_core.reading import HEADER_FLAGS, READING, READING_OPTIONS
from dpsu_core.wording import CLI_OPTIONS, NEUTRAL
from pages._text import APP_OPTIONS

BASE = ["release", "x.csv", "-m", "gw", "-e", "1", "-d", "1e-6", "-o", "o.csv"]


def test_every_reading_field_is_declared_once_and_known_everywhere():
    assert {f.name for f in fields(LoadOptions)} == set(READING) | {"has_header", "max_n"}
    assert len({o.flag for o in READING_OPTIONS}) == len(READING_OPTIONS)
    assert set(LOAD_OPTIONS) == set(READING) | {"has_header", "max_n"}
    assert set(NEUTRAL) == set(CLI_OPTIONS) == set(APP_OPTIONS)
    for o in READING_OPTIONS:
        assert CLI_OPTIONS[o.field] == o.flag and APP_OPTIONS[o.field] == o.app and NEUTRAL[o.field] == o.neutral


def test_each_flag_sets_its_field_and_nothing_else():
    default = _load_options(build_parser().parse_args(BASE))
    assert default == LoadOptions()
    for o in READING_OPTIONS:
        argv = [*BASE, o.flag] + (
            []
            if o.kind != "value"
            else [{"format": "csv", "tokenizer": "treebank", "char_ngrams": "3"}.get(o.field, "v")]
        )
        got = _load_options(build_parser().parse_args(argv))
        changed = {f.name for f in fields(LoadOptions) if getattr(got, f.name) != getattr(default, f.name)}
        assert changed == {o.field}, (o.flag, changed)
    for value, flag in HEADER_FLAGS.items():
        assert _load_options(build_parser().parse_args([*BASE, flag])).has_header is value
