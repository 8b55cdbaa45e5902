"""The dpsu command line, end to end on real files."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from dpsu_core.interfaces.cli import main
from dpsu_core.outputs.export import OPTIONAL_REPORT_KEYS, REPORT_KEYS
from dpsu_core.privacy import gaussian_scale, rho_weighted_gaussian


def _write_corpus(path, n_users=400, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"word{i}" for i in range(40)]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["author", "body"])
        for u in range(n_users):
            for _ in range(2):
                w.writerow([f"user{u}", " ".join(rng.choice(words, size=8))])
        w.writerow(["lonely", "=cmd|calc uniquecanary42"])
    return path


def _run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_calibrate_prints_closed_forms(capsys):
    d = math.exp(-10)
    code, out, err = _run(
        ["calibrate", "-m", "policy-gaussian", "-e", "3", "-d", repr(d), "--max-items", "100", "--alpha", "5"], capsys
    )
    assert code == 0 and err == ""
    vals = dict(line.split(": ", 1) for line in out.strip().splitlines())
    sigma = gaussian_scale(3, d)
    rho = rho_weighted_gaussian(3, d, 100)
    assert float(vals["Noise std (σ)"]) == pytest.approx(sigma, rel=1e-5)
    assert float(vals["rho"]) == pytest.approx(rho, rel=1e-5)
    assert float(vals["Gamma"]) == pytest.approx(rho + 5 * sigma, rel=1e-5)


def test_calibrate_names_pcr_noise_and_the_delta_star_used(capsys):
    code, out, err = _run(["calibrate", "-m", "pcr", "-e", "1", "-d", "1e-10"], capsys)
    assert code == 0 and err == ""
    vals = dict(line.split(": ", 1) for line in out.strip().splitlines())
    assert float(vals["Gumbel scale (1/ε*)"]) == pytest.approx(2000)
    assert float(vals["Count noise std (1st step)"]) > 18  # its own quantity, not the Gumbel scale
    assert "Noise std (σ)" not in vals and "scale" not in vals
    assert "derived" in vals["delta_star used"] and float(vals["delta_star used"].split()[0]) < 1e-11
    code, out, _ = _run(["calibrate", "-m", "pcr", "-e", "1", "-d", "1e-10", "--delta-star", "1e-11"], capsys)
    vals = dict(line.split(": ", 1) for line in out.strip().splitlines())
    assert code == 0 and vals["delta_star used"] == "1e-11 (given)"


def test_calibrate_states_the_tuned_delta_split(capsys):
    argv = ["calibrate", "-m", "policy-sips", "-e", "3", "-d", "1e-6", "--delta-split", "tuned", "--tune-users", "120"]
    code, out, err = _run(argv, capsys)
    assert code == 0 and err == ""
    vals = dict(line.split(": ", 1) for line in out.strip().splitlines())
    assert "held by 120 users" in vals["delta split"] and "α is not chosen" in vals["delta split"]
    code, out, _ = _run(argv[:-4], capsys)
    vals = dict(line.split(": ", 1) for line in out.strip().splitlines())
    assert code == 0 and vals["delta split"].startswith("δ split: the halves")
    code, _, err = _run([*argv[:-1], "-5"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "0 is allowed too" in err


def test_release_end_to_end(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv")
    out_csv, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, out, err = _run(
        [
            "release",
            str(src),
            "-m",
            "policy-gaussian",
            "-e",
            "3",
            "-d",
            "1e-4",
            "--max-items",
            "20",
            "-o",
            str(out_csv),
            "--report",
            str(report),
        ],
        capsys,
    )
    assert code == 0, err
    assert "released" in out
    with open(out_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"item", "n"}
    items = {r["item"] for r in rows}
    assert items <= {f"word{i}" for i in range(40)}
    assert "uniquecanary42" not in items
    rep = json.loads(report.read_text())
    text = json.dumps(rep)
    assert rep["epsilon"] == 3 and rep["delta"] == pytest.approx(1e-4)
    assert rep["released_total"] == len(rows)
    # export's one allow-list; a CLI release without a tokenizer carries no session's keys
    assert set(rep) <= set(REPORT_KEYS) - {"session_spent", "release", "tokenizer"}
    assert set(REPORT_KEYS) - set(rep) <= set(OPTIONAL_REPORT_KEYS)
    assert rep["tokenization"].startswith("auto: words segmented by script")  # a method: no data in it
    # nothing computed from the raw data: no weights, no corpus sizes (401 users, 40 words)
    assert "weight" not in text and "401" not in text


def test_seeded_release_is_reproducible_and_flagged(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv")
    outs = []
    for i in range(2):
        o = tmp_path / f"o{i}.csv"
        code, _, err = _run(
            ["release", str(src), "-m", "weighted-gaussian", "-e", "1", "-d", "1e-3", "--seed", "7", "-o", str(o)],
            capsys,
        )
        assert code == 0
        assert "NOT for real use" in err
        outs.append(o.read_text())
    assert outs[0] == outs[1]


def test_ngram_release_reports_lengths(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv")
    out_csv, report = tmp_path / "out.csv", tmp_path / "r.json"
    code, out, err = _run(
        [
            "release",
            str(src),
            "-m",
            "dpne",
            "-e",
            "5",
            "-d",
            "1e-3",
            "--max-n",
            "2",
            "--max-items",
            "20",
            "-o",
            str(out_csv),
            "--report",
            str(report),
        ],
        capsys,
    )
    assert code == 0, err
    with open(out_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {int(r["n"]) for r in rows} <= {1, 2}


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["calibrate", "-m", "policy-gaussian", "-e", "0", "-d", "1e-6"], "epsilon"),
        (["calibrate", "-m", "policy-gaussian", "-e", "1", "-d", "1.5"], "delta"),
        (["calibrate", "-m", "nope", "-e", "1", "-d", "1e-6"], "unknown mechanism"),
        (["calibrate", "-m", "count-laplace", "-e", "1", "-d", "1e-6", "--alpha", "3"], "--alpha"),
        (["calibrate", "-m", "policy-laplace", "-e", "1", "-d", "1e-6", "--max-items", "0"], "max_items"),
        (["calibrate", "-m", "policy-laplace", "-e", "1", "-d", "1e-6", "--alpha", "-1"], "alpha"),
        (["calibrate", "-m", "policy-laplace"], "required"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_parameters_one_line_exit_2(argv, needle, capsys):
    code, out, err = _run(argv, capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err


def test_bad_files_one_line_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(bytes(range(256)) * 40)
    nocol = tmp_path / "nocol.csv"
    nocol.write_text("a,b\n1,2\n3,4\n")
    for path, extra in [
        (tmp_path / "missing.csv", []),
        (empty, []),
        (binary, []),
        (nocol, ["--user-col", "author", "--text-col", "body"]),
    ]:
        code, out, err = _run(
            ["release", str(path), "-m", "gw", "-e", "1", "-d", "1e-6", "-o", str(tmp_path / "o.csv"), *extra], capsys
        )
        assert code == 2, (path, err)
        assert len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "o.csv").exists()


def test_plain_text_format_by_its_cli_name(tmp_path, capsys):
    src = tmp_path / "posts.log"  # an extension that does not give the format away
    src.write_text("".join(f"word{i % 7} common words here\n" for i in range(300)), encoding="utf-8")
    out_csv = tmp_path / "o.csv"
    code, out, err = _run(
        [
            "release",
            str(src),
            "--format",
            "txt",
            "-m",
            "weighted-gaussian",
            "-e",
            "3",
            "-d",
            "1e-4",
            "-o",
            str(out_csv),
        ],
        capsys,
    )
    assert code == 0, err
    assert "common" in out_csv.read_text()


def test_public_corpus_cannot_be_the_private_input(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv")
    code, out, err = _run(
        [
            "release",
            str(src),
            "-m",
            "gw-kt",
            "-e",
            "1",
            "-d",
            "1e-6",
            "--public-corpus",
            str(src),
            "-o",
            str(tmp_path / "o.csv"),
        ],
        capsys,
    )
    assert code == 2 and "PUBLIC" in err and not (tmp_path / "o.csv").exists()
    copy = tmp_path / "copy.csv"  # a copy under another name holds the same users: refused too
    copy.write_bytes(src.read_bytes())
    args = ["release", str(src), "-m", "gw-kt", "-e", "1", "-d", "1e-6", "-o", str(tmp_path / "o.csv")]
    code, out, err = _run([*args, "--public-corpus", str(copy)], capsys)
    assert code == 2 and "same data as the private input" in err and not (tmp_path / "o.csv").exists()
    assert len(err.strip().splitlines()) == 1
    code, out, err = _run(
        [
            "release",
            str(src),
            "-m",
            "gw",
            "-e",
            "1",
            "-d",
            "1e-6",
            "--public-corpus",
            str(src),
            "-o",
            str(tmp_path / "o.csv"),
        ],
        capsys,
    )
    assert code == 2 and "gw-kt" in err


def test_reader_notes_are_labelled_as_raw_data(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv")
    code, out, err = _run(
        ["release", str(src), "-m", "gw", "-e", "1", "-d", "1e-6", "-o", str(tmp_path / "o.csv")], capsys
    )
    assert code == 0
    notes = [line for line in err.splitlines() if line.startswith("note")]
    assert notes and all(line.startswith("note (raw data, not private): ") for line in notes)


def test_console_entry_point_runs_as_a_process(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "list"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    for name in ["count-laplace", "policy-gaussian", "gw-kt", "dpne", "pcr"]:
        assert name in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "calibrate", "-m", "gw", "-e", "-2", "-d", "0.1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_release_prints_what_it_spent_on_one_stderr_line(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv")
    code, _, err = _run(
        ["release", str(src), "-m", "weighted-gaussian", "-e", "2", "-d", "1e-5", "-o", str(tmp_path / "o.csv")],
        capsys,
    )
    assert code == 0, err
    spent = [line for line in err.splitlines() if line.startswith("privacy spent by this run")]
    assert len(spent) == 1 and "epsilon = 2, delta = 1e-05" in spent[0] and "rho" in spent[0]


def test_release_warns_on_stderr_when_delta_is_at_least_one_over_n(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv", n_users=50)  # 51 users: 1/n ~ 0.02
    argv = ["release", str(src), "-m", "weighted-laplace", "-e", "1", "-o", str(tmp_path / "o.csv")]
    code, out, err = _run([*argv, "-d", "0.5"], capsys)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "δ = 0.5 is at least 1/(number of users) = 0.02" in warnings[0], err
    assert "Use δ ≤ 1e-04" in warnings[0]
    # a ledger of its own: after δ = 0.5, the corpus's δ cap leaves no room for another release (refused)
    code, out, err = _run([*argv, "-d", "1e-6", "--ledger", str(tmp_path / "other.sqlite")], capsys)
    assert code == 0 and "warning:" not in err, err


def test_public_corpus_columns_are_given_with_public_flags(tmp_path, capsys):
    src = _write_corpus(tmp_path / "posts.csv")
    pub = tmp_path / "public.csv"
    pub.write_text("handle,said\n" + "".join(f"p{i % 50},word{i % 40} word{(i * 7) % 40}\n" for i in range(500)))
    args = ["release", str(src), "-m", "gw-kt", "-e", "3", "-d", "1e-6", "--public-corpus", str(pub)]
    code, out, err = _run([*args, "-o", str(tmp_path / "o.csv")], capsys)
    # no known name: the public corpus's columns are asked for, with its own flags, in one line
    assert code == 2 and "handle" in err and "--public-user-col" in err and len(err.strip().splitlines()) == 1
    out_csv = tmp_path / "o2.csv"
    code, out, err = _run(
        [
            *args,
            "--public-user-col",
            "handle",
            "--public-text-col",
            "said",
            "--report",
            str(tmp_path / "r.json"),
            "-o",
            str(out_csv),
        ],
        capsys,
    )
    assert code == 0, err
    assert (
        json.loads((tmp_path / "r.json").read_text())["calibration"]["details"]["public_frequencies"]
        == "public corpus public.csv"
    )
    code, out, err = _run(
        ["release", str(src), "-m", "gw-kt", "-e", "3", "-d", "1e-6", "--public-user-col", "x", "-o", str(out_csv)],
        capsys,
    )
    assert code == 2 and "--public-corpus" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-m", "policy-sips", "--tune-users", "5"], "--tune-users is only used with --delta-split tuned"),
        (["-m", "policy-sips", "--tune-users", "0", "--delta-split", "half"], "add --delta-split tuned"),
        (["--tokenizer", "fast", "--char-ngrams", "3"], "--char-ngrams is not used by --tokenizer fast"),
        (["--tokenizer", "treebank", "--char-ngrams", "2"], "--char-ngrams is not used by --tokenizer treebank"),
        (["--max-unpacked-mb", "1e300"], "--max-unpacked-mb must be more than 0 and at most 1,048,576 MB"),
        (["--max-unpacked-mb", "nan"], "--max-unpacked-mb must be more than 0"),
        (["--max-file-mb", "1e300"], "--max-file-mb must be more than 0 and at most 1,048,576 MB"),
        (["--max-file-mb=-inf"], "--max-file-mb must be more than 0"),
    ],
)
def test_ignored_or_absurd_flags_are_refused_before_reading(tmp_path, capsys, argv, message):
    """A flag the run would ignore, or a number out of its range, is one line and exit 2 before the corpus is
    read (the input here is not a corpus at all: reading it would fail otherwise)."""
    src = tmp_path / "in.csv"
    src.write_bytes(b"\x00" * 64)
    mech = [] if "-m" in argv else ["-m", "policy-gaussian"]
    code, out, err = _run(["release", str(src), *mech, "-e", "1", "-d", "1e-6", "-o", str(tmp_path / "o.csv"), *argv],
                          capsys)  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err and "internal error" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_tune_users_with_the_tuned_split_and_char_ngrams_where_used_are_taken(capsys):
    code, out, err = _run(
        ["calibrate", "-m", "policy-sips", "-e", "1", "-d", "1e-6", "--delta-split", "tuned", "--tune-users", "5"],
        capsys,
    )
    assert code == 0 and "held by 5 users" in out, err


def test_char_ngrams_given_with_its_tokenizers(tmp_path, capsys):
    src = _write_corpus(tmp_path / "in.csv", n_users=60)
    for tok in ("char-ngrams", "auto"):
        out_csv = tmp_path / f"{tok}.csv"
        argv = ["release", str(src), "-m", "policy-gaussian", "-e", "8", "-d", "1e-6", "-o", str(out_csv)]
        code, _, err = _run([*argv, "--tokenizer", tok, "--char-ngrams", "3"], capsys)
        assert code == 0, err
    items = [row[0] for row in csv.reader(open(tmp_path / "char-ngrams.csv", encoding="utf-8"))][1:]
    assert items and all(len(i) <= 3 for i in items)  # the 3-grams were used, not the default 2


def test_joined_csvs_note_the_dropped_header_row(tmp_path, capsys):
    one = _write_corpus(tmp_path / "one.csv", n_users=60).read_bytes()
    src = tmp_path / "joined.csv"
    src.write_bytes(one + b"\xef\xbb\xbf" + one.replace(b"user", b"other"))
    code, out, err = _run(
        ["release", str(src), "-m", "policy-gaussian", "-e", "4", "-d", "1e-6", "-o", str(tmp_path / "o.csv")], capsys
    )
    assert code == 0, err
    assert "note (raw data, not private): 1 row repeating the header ('author', 'body') was dropped" in err
    assert "user column 'author': 121 distinct values in 242 rows" in err  # 2 x (60 users + 'lonely'), no 'author'


@pytest.mark.parametrize("tokenizer", ["fast", "treebank", "auto", "char-ngrams"])
def test_the_apps_command_never_carries_a_char_ngrams_the_cli_refuses(tmp_path, capsys, tokenizer):
    """The app keeps its 'Character n-gram length' box whatever the tokenizer: the exported command leaves the
    length out where the tokenizer ignores it (the CLI refuses it there), and the command runs."""
    from dpsu_core import get_mechanism
    from dpsu_core.corpus import LoadOptions
    from dpsu_core.outputs.command import Redo, release_argv

    src = _write_corpus(tmp_path / "in.csv", n_users=60)
    cal = get_mechanism("policy-gaussian", epsilon=4, delta=1e-6).calibrate()
    opts = LoadOptions(tokenizer=tokenizer, char_ngrams=3)
    argv = release_argv(Redo(cal, str(src), opts, output=str(tmp_path / "o.csv"), report=str(tmp_path / "r.json")))
    assert ("--char-ngrams" in argv) == (tokenizer in ("auto", "char-ngrams"))
    code, _, err = _run(argv[1:], capsys)
    assert code == 0, err


def test_an_empty_release_says_why_as_the_app_does(tmp_path, capsys):
    """Issue 27: "released 0 items ()" with no reason; now the line has no empty brackets and a note gives the
    utility preview's figure (users needed for an even chance, from the parameters alone) and what to change."""
    from dpsu_core.analysis.utility import utility_preview
    from dpsu_core.mechanisms import get_mechanism

    src = tmp_path / "tiny.csv"
    # 6 users: "hello" weighs 6/sqrt(3) against rho 47.9, sigma 8.35 at epsilon 0.5 (5.3 sigma: chance about 1e-7)
    src.write_text("user,text\n" + "".join(f"u{i},hello world {i}\n" for i in range(6)))
    code, out, err = _run(
        ["release", str(src), "-o", str(tmp_path / "o.csv"), "--user-col", "user", "--text-col", "text"]
        + ["-m", "policy-gaussian", "-e", "0.5", "-d", "1e-6"],
        capsys,
    )
    assert code == 0 and out.startswith("released 0 items with Policy Gaussian") and "()" not in out
    cal = get_mechanism("policy-gaussian", epsilon=0.5, delta=1e-6).calibrate()
    k50 = utility_preview(cal).users_needed[0.5]
    assert f"nothing was released: at this budget an item needs about {k50:,} users for an even chance" in err
    assert "raise --epsilon" in err
