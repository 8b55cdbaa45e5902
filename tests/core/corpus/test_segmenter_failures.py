"""A compiled word segmenter that fails (a Rust panic is a ``BaseException``, not an ``Exception``) never reaches
the user as a traceback (``corpus.segmenters``): failing to start, the next candidate runs (its pure-Python
fall-back) or the words become character n-grams, with a note; failing later, on the text, the run is refused in
one line. Each case through the real CLI in a subprocess, the segmenter made to fail for real: a PyThaiNLP without
its word list on the path (nlpo3 panics reading it), or a stand-in ``rjieba`` package ahead of the real one."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import jieba

ROOT = Path(__file__).resolve().parents[3]

THAI = ["ภาษาไทยง่ายนิดเดียว สวัสดีครับ", "ฉันรักภาษาไทย"]
CHINESE = ["我爱北京天安门", "今天天气很好"]

# a stand-in for rjieba's compiled module that panics as pyo3 does (its PanicException derives from BaseException)
PANICKING_RJIEBA = """
class PanicException(BaseException):
    pass


def cut(text, hmm=True):
    {body}
"""


def _release(tmp_path: Path, posts: list[str], path_dirs: list[Path]) -> subprocess.CompletedProcess:
    src = tmp_path / "posts.csv"
    src.write_text("user,text\n" + "".join(f"u{i},{posts[i % len(posts)]}\n" for i in range(60)), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, path_dirs), str(ROOT)]))
    argv = [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", str(src), "-m", "policy-gaussian", "-e", "8"]
    argv += ["-d", "1e-5", "-o", str(tmp_path / "out.csv"), "--report", str(tmp_path / "report.json")]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)


def _items(tmp_path: Path) -> list[str]:
    with (tmp_path / "out.csv").open(encoding="utf-8", newline="") as f:
        return [r["item"] for r in csv.DictReader(f)]


def _no_traceback(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr and "panicked" not in done.stderr, done.stderr[-2000:]


def test_thai_with_a_pythainlp_without_its_word_list_falls_back_to_character_ngrams(tmp_path):
    fake = tmp_path / "site"
    (fake / "pythainlp").mkdir(parents=True)
    (fake / "pythainlp" / "__init__.py").write_text("")  # no corpus/words_th.txt: nlpo3 panics loading it
    done = _release(tmp_path, THAI, [fake])
    _no_traceback(done)
    assert done.returncode == 0, done.stderr[-2000:]
    note = [line for line in done.stderr.splitlines() if "Thai text found" in line]
    assert len(note) == 1 and "nlpo3 failed to start (PanicException" in note[0], done.stderr[-2000:]
    assert "character 2-grams instead" in note[0]
    items = _items(tmp_path)
    bases = [sum(not unicodedata.category(c).startswith("M") for c in item) for item in items]
    assert items and max(bases) == 2  # character 2-grams (a vowel or tone mark goes with its letter)
    method = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["tokenization"]
    assert "Thai: did not start, character 2-grams" in method and "nlpo3" not in method


def test_a_compiled_segmenter_that_panics_at_start_gives_way_to_its_pure_python_fallback(tmp_path):
    fake = tmp_path / "site"
    (fake / "rjieba").mkdir(parents=True)
    body = "raise PanicException('called `Option::unwrap()` on a `None` value')"
    (fake / "rjieba" / "__init__.py").write_text(PANICKING_RJIEBA.format(body=body))
    done = _release(tmp_path, CHINESE, [fake])
    _no_traceback(done)
    assert done.returncode == 0, done.stderr[-2000:]
    note = [line for line in done.stderr.splitlines() if "Chinese text segmented into words" in line]
    assert len(note) == 1 and "rjieba failed to start (PanicException" in note[0], done.stderr[-2000:]
    assert "so jieba ran instead" in note[0]
    items = set(_items(tmp_path))
    words = {w for post in CHINESE for w in jieba.lcut(post, HMM=True)}
    assert items and items <= words  # jieba's words, not character n-grams
    method = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["tokenization"]
    assert "Chinese: jieba " in method and "rjieba" not in method  # the report names the one that ran


def test_a_segmenter_that_panics_on_the_text_is_refused_in_one_line(tmp_path):
    fake = tmp_path / "site"
    (fake / "rjieba").mkdir(parents=True)
    body = (
        "if '天' in text:\n        raise PanicException('byte index 3 is not a char boundary')\n    return list(text)"
    )
    (fake / "rjieba" / "__init__.py").write_text(PANICKING_RJIEBA.format(body=body))
    done = _release(tmp_path, CHINESE, [fake])
    _no_traceback(done)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "the Chinese word segmenter rjieba failed while segmenting the text (PanicException" in lines[0]
    assert not (tmp_path / "out.csv").exists()
