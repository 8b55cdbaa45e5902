"""Command export: the exact CLI line and Python script redo a release's parameters (run for real here)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from dpsu_core.corpus import LoadOptions, load_corpus
from dpsu_core.errors import ParameterError
from dpsu_core.interfaces.cli import _load_options, build_parser
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.outputs.command import Redo, release_argv, release_command, release_script
from dpsu_core.outputs.export import report_dict
from tests.helpers import run_displayed

REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    """This process's environment at the call (the test's own DPSU_LEDGER: never the user's store)."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


CASES = [
    ("policy-gaussian", 3.0, 1e-6, {"max_items": 7, "alpha": 4.5}, {"max_n": 1}),
    ("gw", 2.5, 1e-7, {"alpha": 3.0, "max_items": 50}, {"max_n": 1, "lowercase": False, "strip_urls": False}),
    (
        "dpne",
        4.0,
        1e-5,
        {"max_items": 9, "max_n": 2, "eta": 0.02, "schedule": "geometric", "schedule_ratio": 0.7},
        {"max_n": 2},
    ),
    ("bounded-counts", 3.0, 1e-6, {"max_items": 5, "rel_error": 0.2, "use_threshold": "no"}, {"max_n": 1}),
    ("pcr", 3.0, 1e-6, {"kbar": 50, "eps_star": 0.01}, {"tokenizer": "treebank", "max_n": 1}),
    (
        "policy-gaussian",
        3.0,
        1e-6,
        {"max_items": 7},
        {
            "max_n": 1,
            "strip_html": False,
            "email_headers": False,
            "drop_digits": True,
            "stop_words": "english",
            "user_pattern": "^(u[0-9])",
        },
    ),
]


def _write_posts(path: Path) -> Path:
    rows = ["author,body"] + [f"u{i},the cat sat on mat number {i % 7} Again" for i in range(120)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _original(tmp_path, name, eps, delta, params, load):
    src = _write_posts(tmp_path / "posts.csv")
    full = {"format": "csv", "user_col": "author", "text_col": "body", **load}
    corpus = load_corpus(src, **full)
    release = get_mechanism(name, epsilon=eps, delta=delta, **params).release(corpus, seed=5)
    return src, full, release


@pytest.mark.parametrize("name,eps,delta,params,load", CASES)
def test_command_round_trips_through_the_cli_parser(tmp_path, name, eps, delta, params, load):
    src, full, release = _original(tmp_path, name, eps, delta, params, load)
    argv = release_argv(Redo(release.calibration, "posts.csv", full, output="o.csv", report="r.json"))
    assert argv[:2] == ["dpsu", "release"] and "--seed" not in argv  # a seeded release still exports no seed
    args = build_parser().parse_args(argv[1:])
    assert asdict(_load_options(args)) == {
        **asdict(
            _load_options(build_parser().parse_args(["release", "x", "-m", "gw", "-e", "1", "-d", "1e-6", "-o", "o"]))
        ),
        **full,
        "has_header": None,
    }
    assert (args.mechanism, args.epsilon, args.delta) == (name, eps, delta)
    for k, v in params.items():
        assert getattr(args, k) == v


@pytest.mark.parametrize("name,eps,delta,params,load", CASES[:3])
def test_running_the_command_reproduces_the_parameters_in_its_report(tmp_path, name, eps, delta, params, load):
    src, full, release = _original(tmp_path, name, eps, delta, params, load)
    cmd = release_command(Redo(release.calibration, src.name, full, output="redo.csv", report="redo.json"))
    proc = run_displayed(cmd, tmp_path, _env(), timeout=120)  # as shown: lines continued, run by a shell
    assert proc.returncode == 0, proc.stderr
    assert "fixed seed" not in proc.stderr  # no seed: a real release
    redo = json.loads((tmp_path / "redo.json").read_text())
    orig = report_dict(release)
    for key in ("mechanism", "epsilon", "delta", "params", "calibration"):
        assert redo[key] == orig[key], key
    assert redo["teaching_mode"] is False


def test_running_the_script_reproduces_the_parameters_in_its_report(tmp_path):
    name, eps, delta, params, load = CASES[2]
    src, full, release = _original(tmp_path, name, eps, delta, params, load)
    script = release_script(Redo(release.calibration, src.name, full, output="s.csv", report="s.json"))
    assert "seed" not in script.replace("No seed", "")
    (tmp_path / "redo.py").write_text(script, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "redo.py"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    redo = json.loads((tmp_path / "s.json").read_text())
    orig = report_dict(release)
    for key in ("mechanism", "epsilon", "delta", "params", "calibration"):
        assert redo[key] == orig[key], key


def test_unknown_reading_option_is_refused(tmp_path):
    cal = get_mechanism("gw", epsilon=1, delta=1e-6).calibrate()
    with pytest.raises(ParameterError, match="spell_check"):
        release_argv(Redo(cal, "x.csv", {"spell_check": True}, output="o.csv", report="r.json"))


def test_public_corpus_is_passed_for_gw_kt():
    cal = get_mechanism("gw-kt", epsilon=1, delta=1e-6).calibrate()
    argv = release_argv(Redo(cal, "x.csv", {}, output="o.csv", report="r.json", public_corpus="public.txt"))
    assert argv[argv.index("--public-corpus") + 1] == "public.txt"
    assert "public_source='public.txt'" in release_script(
        Redo(cal, "x.csv", {}, output="o", report="r", public_corpus="public.txt")
    )


def test_the_public_corpus_columns_round_trip_and_the_script_reads_it_so(tmp_path):
    from dpsu_core.corpus import LoadOptions
    from dpsu_core.interfaces.release_command import public_options

    cal = get_mechanism("gw-kt", epsilon=1, delta=1e-6).calibrate()
    how = LoadOptions(user_col="handle", text_col="said", has_header=True)
    argv = release_argv(
        Redo(cal, "x.csv", {}, output="o.csv", report="r.json", public_corpus="pub.csv", public_options=how)
    )
    assert argv[argv.index("--public-user-col") + 1] == "handle" and "--public-header" in argv
    assert public_options(build_parser().parse_args(argv[1:])) == how
    script = release_script(Redo(cal, "x.csv", {}, output="o", report="r", public_corpus="pub.csv", public_options=how))
    assert "public = load_corpus('pub.csv', user_col='handle', text_col='said', has_header=True, max_n=1)" in script
    assert "public_source=public" in script
    compile(script, "redo.py", "exec")  # valid Python


def _lines_tokens(command: str) -> list[list[str]]:
    """The displayed command's lines, each read by shlex on its own (the line continuation taken off): a line
    that cut a token would leave a quote open (ValueError) or split the token in two."""
    lines = command.split("\n")
    assert all(line.endswith(" \\") for line in lines[:-1]) and not lines[-1].endswith("\\"), lines
    return [shlex.split(line[:-2] if i < len(lines) - 1 else line) for i, line in enumerate(lines)]


HOSTILE_LOAD = {
    "format": "csv",
    "user_col": "who wrote it",  # a name with spaces
    "text_col": "-body's text",  # a quote, and a leading "-" argparse would take for a flag
    "has_header": True,
    "user_pattern": "^(u [0-9]+) --x",
    "max_n": 1,
}


@pytest.mark.parametrize("load", [c[4] for c in CASES] + [HOSTILE_LOAD])
def test_the_displayed_command_breaks_lines_only_between_arguments(load):
    from dpsu_core.outputs.tokenizer_export import TokenizerSpec

    cal = get_mechanism("policy-gaussian", epsilon=3.0, delta=1e-6, max_items=7).calibrate()
    spec = TokenizerSpec.from_options(LoadOptions(**load), model="bpe", special_tokens=("[CLS]",), vocab_size=900)
    kw = {"output": "my out.csv", "report": "r.json", "tokenizer": spec, "tokenizer_path": "tok dir"}
    command = release_command(Redo(cal, "my posts.csv", load, **kw))
    per_line = _lines_tokens(command)
    argv = release_argv(Redo(cal, "my posts.csv", load, **kw))
    assert [t for line in per_line for t in line] == argv  # no token cut across lines, none lost
    assert per_line[0] == ["dpsu", "release", "my posts.csv"]
    for line in per_line[1:]:  # one flag per line, with its value
        assert line[0].startswith("-") and len(line) <= 2, line
    args = build_parser().parse_args(argv[1:])  # argparse takes every value as given (a "-" value included)
    assert (args.user_col, args.text_col) == (load.get("user_col"), load.get("text_col"))


def test_a_line_cut_inside_a_token_is_caught():
    cal = get_mechanism("gw", epsilon=1, delta=1e-6).calibrate()
    command = release_command(Redo(cal, "x.csv", HOSTILE_LOAD, output="o.csv", report="r.json"))
    cut = command.replace("'who wrote it'", "'who wr \\\n  ote it'")  # what a soft wrap inside the token does
    with pytest.raises((ValueError, AssertionError)):
        assert [t for line in _lines_tokens(cut) for t in line] == release_argv(
            Redo(cal, "x.csv", HOSTILE_LOAD, output="o.csv", report="r.json")
        )


def test_a_header_file_is_named_by_its_column_names_and_the_cli_reads_the_same_columns(tmp_path):
    """The app records a picked column by its header name (``column_spec``); the command carries the name, and
    the CLI run with it reads the columns the app read (the same privacy unit, the same corpus)."""
    from dpsu_core.corpus.columns import column_spec
    from dpsu_core.corpus.preview import preview, survey

    rows = ["id,lang,handle,said,likes"] + [
        f"{i},en,u{i % 30},the cat sat on mat number {i % 7},{i}" for i in range(150)
    ]
    src = tmp_path / "posts.csv"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pv = preview(survey(src, format="csv"), user_col=2, text_col=3)
    assert pv.has_header and (pv.user_col, pv.text_col) == (2, 3)
    load = {"format": "csv", "user_col": column_spec(pv.columns, 2, True), "text_col": column_spec(pv.columns, 3, True)}
    assert load == {"format": "csv", "user_col": "handle", "text_col": "said"}
    corpus = load_corpus(src, **load)
    release = get_mechanism("policy-gaussian", epsilon=3.0, delta=1e-6, max_items=7).release(corpus)
    command = release_command(Redo(release.calibration, src.name, load, output="redo.csv", report="redo.json"))
    assert "  --user-col handle \\\n" in command and "  --text-col said \\\n" in command
    assert "--user-col 2" not in command and "--text-col 3" not in command
    proc = run_displayed(command, tmp_path, _env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    redo = json.loads((tmp_path / "redo.json").read_text())
    assert redo["privacy_unit"] == release.privacy_unit == "the user is the value of column 'handle'"
    argv = shlex.split(command.replace(" \\\n", " "))
    again = load_corpus(src, _load_options(build_parser().parse_args(argv[1:])))  # as the CLI read it
    assert (again.n_users, again.n_posts, list(again.vocab)) == (corpus.n_users, corpus.n_posts, list(corpus.vocab))
    assert again.source.user_column == "handle" and again.source.text_column == "said"


def test_a_column_is_named_by_position_without_a_header_or_when_its_name_is_not_its_own():
    from dpsu_core.corpus.columns import column_spec, resolve

    assert column_spec(["a", "b"], 1, False) == 1  # no header: positions
    assert column_spec(["x", "x", "y"], 1, True) == 1  # two columns named x
    assert column_spec(["", "y"], 0, True) == 0  # unnamed
    assert column_spec(["a", "b"], None, True) is None
    for cols in (["id", "7", "text"], ["3", "2", "1", "0"], [" pad ", "pad"]):
        for i in range(len(cols)):  # a name the CLI resolves back to the same column, digits included
            assert resolve(column_spec(cols, i, True), cols, "user", True) == i
