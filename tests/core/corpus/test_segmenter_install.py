"""An extra installed while a process runs (the app's server after ``pip install 'dpsu[languages]'``): the next
corpus load uses it, with no restart (issue 39, item 11).

A real Python process starts without site-packages (``-S``) and with a folder of its own as its site folder, holding
every entry of this interpreter's site-packages but kiwipiepy's. It loads a Korean file (no Korean segmenter:
words as written), then kiwipiepy's entries are added to that folder, as pip would add them, and the same process
loads the file again: Korean morphemes, and the notes name Kiwi.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SITE = Path(sysconfig.get_paths()["purelib"])
KIWI = ("kiwipiepy", "_kiwipiepy")

SCRIPT = r"""
import json, os, site, sys
from pathlib import Path
own, real, path = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
site.addsitedir(str(own))
from dpsu_core.corpus import load_corpus

def load():
    c = load_corpus(path, user_col="user", text_col="text")
    return {"items": sorted(set(c.vocab[c.ngram_len == 1].tolist())), "detected": list(c.source.detected)}

before = load()
for entry in real.iterdir():  # "pip install": kiwipiepy's entries appear in the site folder
    if entry.name.startswith(("kiwipiepy", "_kiwipiepy")):
        (own / entry.name).symlink_to(entry)
after = load()
print(json.dumps({"before": before, "after": after}))
"""


def test_a_segmenter_installed_while_running_is_used_at_the_next_load(tmp_path):
    pytest.importorskip("kiwipiepy")
    own = tmp_path / "site"
    own.mkdir()
    for entry in SITE.iterdir():
        if not entry.name.startswith(KIWI):
            (own / entry.name).symlink_to(entry)
    forms = ["학교에 갔다", "학교는 크다", "학교를 좋아한다"]
    src = tmp_path / "ko.csv"
    src.write_text("user,text\n" + "".join(f"u{u},{forms[u % 3]}\n" for u in range(60)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-S", "-c", SCRIPT, str(own), str(SITE), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.splitlines()[-1])
    before, after = got["before"], got["after"]
    assert {"학교에", "학교는", "학교를"} <= set(before["items"]) and "학교" not in before["items"]
    assert any("Korean" in d and "not installed" in d for d in before["detected"]), before["detected"]
    assert "학교" in after["items"] and not {"학교에", "학교는"} & set(after["items"])
    assert any("Korean text segmented into words with kiwipiepy" in d for d in after["detected"]), after["detected"]
    assert not any("not installed" in d for d in after["detected"])
