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

from dpsu_core.cli import _load_options, build_parser
from dpsu_core.command import release_argv, release_command, release_script
from dpsu_core.corpus import load_corpus
from dpsu_core.errors import ParameterError
from dpsu_core.export import report_dict
from dpsu_core.mechanisms import get_mechanism

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}

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
    argv = release_argv(release.calibration, "posts.csv", full, output="o.csv", report="r.json")
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
    cmd = release_command(release.calibration, src.name, full, output="redo.csv", report="redo.json")
    argv = shlex.split(cmd)
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.cli", *argv[1:]],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
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
    script = release_script(release.calibration, src.name, full, output="s.csv", report="s.json")
    assert "seed" not in script.replace("No seed", "")
    (tmp_path / "redo.py").write_text(script, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "redo.py"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    redo = json.loads((tmp_path / "s.json").read_text())
    orig = report_dict(release)
    for key in ("mechanism", "epsilon", "delta", "params", "calibration"):
        assert redo[key] == orig[key], key


def test_unknown_reading_option_is_refused(tmp_path):
    cal = get_mechanism("gw", epsilon=1, delta=1e-6).calibrate()
    with pytest.raises(ParameterError, match="spell_check"):
        release_argv(cal, "x.csv", {"spell_check": True}, output="o.csv", report="r.json")


def test_public_corpus_is_passed_for_gw_kt():
    cal = get_mechanism("gw-kt", epsilon=1, delta=1e-6).calibrate()
    argv = release_argv(cal, "x.csv", {}, output="o.csv", report="r.json", public_corpus="public.txt")
    assert argv[argv.index("--public-corpus") + 1] == "public.txt"
    assert "public_source='public.txt'" in release_script(
        cal, "x.csv", {}, output="o", report="r", public_corpus="public.txt"
    )


def test_the_public_corpus_columns_round_trip_and_the_script_reads_it_so(tmp_path):
    from dpsu_core.cli import _public_options
    from dpsu_core.corpus import LoadOptions

    cal = get_mechanism("gw-kt", epsilon=1, delta=1e-6).calibrate()
    how = LoadOptions(user_col="handle", text_col="said", has_header=True)
    argv = release_argv(cal, "x.csv", {}, output="o.csv", report="r.json", public_corpus="pub.csv", public_options=how)
    assert argv[argv.index("--public-user-col") + 1] == "handle" and "--public-header" in argv
    assert _public_options(build_parser().parse_args(argv[1:])) == how
    script = release_script(cal, "x.csv", {}, output="o", report="r", public_corpus="pub.csv", public_options=how)
    assert "public = load_corpus('pub.csv', user_col='handle', text_col='said', has_header=True, max_n=1)" in script
    assert "public_source=public" in script
    compile(script, "redo.py", "exec")  # valid Python
