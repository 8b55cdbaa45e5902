"""Every exported redo runs: the Export page's ``.sh`` (``command.command_file``) and ``.py`` (``release_script``)
of a release of every registered mechanism, as a set only, with noisy counts and with a tokenizer folder, are run
for real (``sh`` with ``dpsu`` on the PATH, ``python``) on a small corpus file, and the reports they write give
the original release's calibration, parameters and budget."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dpsu_core.corpus import LoadOptions, load_corpus
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import get_mechanism
from dpsu_core.mechanisms.item_counts import (
    DEFAULT_CLIP,
    DEFAULT_SHARE,
    check_countable,
    mechanism_with_counts,
    release_with_counts,
)
from dpsu_core.mechanisms.registry import list_mechanisms
from dpsu_core.outputs.command import Redo, command_file, release_script
from dpsu_core.outputs.export import report_dict

REPO = Path(__file__).resolve().parents[2]
MODES = ("set only", "counts", "tokenizer folder")


def _cases() -> list[tuple[str, str]]:
    cases = []
    for name, cls in list_mechanisms().items():
        for mode in MODES:
            if mode == "counts":
                try:
                    check_countable(cls)
                except ParameterError:  # a count mechanism releases counts of its own: the CLI refuses --with-counts
                    continue
            cases.append((name, mode))
    return cases


def _corpus_file(folder: Path) -> Path:
    words = "the cat sat on a mat and then the dog ran off to the park again".split()
    rows = ["author,body"]
    for i in range(160):
        rows.append(f"u{i % 80},{' '.join(words[(i + k) % len(words)] for k in range(6))} {words[i % 5]}")
    path = folder / "posts.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _dpsu_on_path(folder: Path) -> dict[str, str]:
    """A ``dpsu`` executable (this checkout's CLI) first on the PATH, as after ``pip install``."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "dpsu"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m dpsu_core.interfaces.cli "$@"\n', encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def _original(src: Path, name: str, mode: str):
    """The release as the app makes it: the mechanism's default parameters, the corpus read with the n-gram length
    they need, noisy counts at the default share and bound when asked for."""
    params = list_mechanisms()[name].params_for({})
    max_n = max(int(params.get("max_n") or 1), int(params.get("only_n") or 1))
    options = LoadOptions(format="csv", user_col="author", text_col="body", max_n=max_n)
    corpus = load_corpus(src, options)
    if mode == "counts":
        mech, counts = mechanism_with_counts(
            name, epsilon=3.0, delta=1e-6, share=DEFAULT_SHARE, clip=DEFAULT_CLIP, **params
        )
        return release_with_counts(mech, counts, corpus), options
    return get_mechanism(name, epsilon=3.0, delta=1e-6, **params).release(corpus), options


@pytest.mark.parametrize(("name", "mode"), _cases())
def test_every_exported_command_and_script_runs_and_redoes_the_calibration(tmp_path, name, mode):
    src = _corpus_file(tmp_path)
    release, options = _original(src, name, mode)
    redo: dict = {}
    if mode == "tokenizer folder":
        pytest.importorskip("tokenizers")
        from dpsu_core.outputs.tokenizer_export import TokenizerSpec, parse_special_tokens

        specials = parse_special_tokens("[CLS]")  # as the Export page reads its field
        spec = TokenizerSpec.from_options(options, model="bpe", special_tokens=specials, vocab_size=60)
        redo = {"tokenizer": spec}
    env = _dpsu_on_path(tmp_path)
    kinds = {
        "sh": (command_file, ["sh", "redo.sh"], "redo.sh"),
        "py": (release_script, [sys.executable, "redo.py"], "redo.py"),
    }
    orig = json.loads(json.dumps(report_dict(release)))  # as the app's JSON report holds it
    for kind, (make, argv, file_name) in kinds.items():
        out = f"{kind}.csv"
        text = make(
            Redo(
                release.calibration,
                src.name,
                options,
                output=out,
                report=f"{kind}_report.json",
                tokenizer_path=f"{kind}_tokenizer",
                **redo,
            )
        )
        (tmp_path / file_name).write_text(text, encoding="utf-8")
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{kind}: {proc.stderr.strip().splitlines()[-1:]}"
        rep = json.loads((tmp_path / f"{kind}_report.json").read_text(encoding="utf-8"))
        for key in ("mechanism", "epsilon", "delta", "params", "calibration", "tokenization", "privacy_unit"):
            assert rep[key] == orig[key], (kind, key)
        assert rep["teaching_mode"] is False
        assert (tmp_path / out).is_file()
        if mode == "counts":
            header = (tmp_path / out).read_text(encoding="utf-8").splitlines()[0]
            assert "count" in header and "std" in header, header  # the noisy counts were released again
        if mode == "tokenizer folder":
            folder = tmp_path / f"{kind}_tokenizer"
            built = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
            assert built["model"]["type"] == "BPE" and (folder / "tokenizer_config.json").is_file()
            assert "[CLS]" in {t["content"] for t in built["added_tokens"]}
