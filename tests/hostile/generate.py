"""Hostile inputs for the CLI: files a careless or malicious user might hand to ``dpsu release``,
and flag combinations that must be refused.

``CASES`` lists them; ``write_case(case, folder)`` writes one case's files into ``folder`` and
returns the argv after ``dpsu``. Each case says what must happen: "release" (exit 0 with a
release), "error" (exit 2 with one short line), or "either" (one of those two; e.g. a file some
readers accept and others refuse). Run ``python -m tests.hostile.generate DIR`` to write every
file into DIR (to try them by hand).
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

MECH = ("-m", "policy-gaussian", "-e", "4", "-d", "1e-6")
N_USERS = 60
WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")


def good_rows(n_users: int = N_USERS) -> list[tuple[str, str]]:
    """(user, text) rows: every user writes the same common words, so a release is never empty by chance."""
    return [(f"u{i:03d}", " ".join(WORDS) + f" post{i % 7}") for i in range(n_users)]


def csv_bytes(rows, header=("author", "body"), delimiter=",") -> bytes:
    import csv

    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    if header:
        w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode("utf-8")


GOOD_CSV = csv_bytes(good_rows())


def _zip(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _zip_stream_of(name: str, chunk: bytes, repeats: int) -> bytes:
    """A zip holding ``chunk * repeats`` (written in pieces: the test never holds the whole bomb)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open(name, "w", force_zip64=True) as fh:
            for _ in range(repeats):
                fh.write(chunk)
    return buf.getvalue()


def _gzip_stream_of(chunk: bytes, repeats: int) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        for _ in range(repeats):
            gz.write(chunk)
    return buf.getvalue()


def _bad_crc_zip() -> bytes:
    data = bytearray(_zip({"posts.csv": GOOD_CSV}, method=zipfile.ZIP_STORED))
    i = data.find(b"alpha")
    data[i] = ord("A")  # stored (not compressed): the change survives, only the CRC notices
    return bytes(data)


def _encrypted_zip() -> bytes:
    """A zip whose member is flagged encrypted (bit 0 of the flags, in the local and central headers)."""
    data = bytearray(_zip({"posts.csv": GOOD_CSV}))
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = data.find(sig)
        data[i + off] |= 0x01
    return bytes(data)


def _parquet(table: pa.Table, **kw) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


def _good_parquet() -> bytes:
    rows = good_rows()
    return _parquet(pa.table({"author": [u for u, _ in rows], "body": [t for _, t in rows]}))


def _parquet_bomb() -> bytes:
    """Dictionary-encoded and compressed: a few KB on disk, ~200 MB once decoded."""
    n = 400_000
    text = "alpha beta gamma " * 30
    return _parquet(
        pa.table({"author": pa.array([f"u{i % 50}" for i in range(n)]), "body": pa.array([text] * n)}),
        compression="zstd",
        row_group_size=n,
    )


def _deep_json(depth: int) -> bytes:
    return b'{"user": "a", "text": ' + b"[" * depth + b"]" * depth + b"}\n"


def _jsonl(records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")


GOOD_JSONL = _jsonl([{"user": u, "text": t} for u, t in good_rows()])


def _special_rows(tokens: list[str]) -> bytes:
    rows = [(u, t + " " + " ".join(tokens)) for u, t in good_rows()]
    return csv_bytes(rows)


@dataclass(frozen=True)
class Case:
    """One hostile input. ``make(folder)`` writes its files and returns the argv after ``dpsu``."""

    name: str
    expect: str  # "release", "error" or "either"
    make: Callable[[Path], list[str]] = field(repr=False)
    isolate: bool = False  # run in its own process: a crash, a hang or a memory blow-up must not hide


def _release(path: Path, *extra: str) -> list[str]:
    folder = path.parent
    return ["release", str(path), *MECH, "-o", str(folder / "out.csv"), "--report", str(folder / "report.json"), *extra]


def file_case(name: str, expect: str, data: bytes | Callable[[], bytes], *extra: str, isolate: bool = False) -> Case:
    def make(folder: Path) -> list[str]:
        path = folder / name
        path.write_bytes(data() if callable(data) else data)
        return _release(path, *extra)

    return Case(name, expect, make, isolate)


def flag_case(label: str, expect: str, argv: Callable[[Path, Path], list[str]], isolate: bool = False) -> Case:
    """A good corpus file with hostile flags: ``argv(input_path, folder)``."""

    def make(folder: Path) -> list[str]:
        path = folder / "corpus.csv"
        path.write_bytes(GOOD_CSV)
        return argv(path, folder)

    return Case(label, expect, make, isolate)


def _fifo_case(folder: Path) -> list[str]:
    path = folder / "pipe.csv"
    os.mkfifo(path)
    return _release(path)


def _symlink_zero(folder: Path) -> list[str]:
    path = folder / "zero.csv"
    path.symlink_to("/dev/zero")
    return _release(path)


def _folder_case(folder: Path) -> list[str]:
    path = folder / "afolder.csv"
    path.mkdir()
    return _release(path)


def _out_is_input_other_spelling(path: Path, folder: Path) -> list[str]:
    (folder / "sub").mkdir()
    other = folder / "sub" / ".." / "." / path.name
    return ["release", str(path), *MECH, "-o", str(other)]


def _out_is_hard_link(path: Path, folder: Path) -> list[str]:
    link = folder / "hardlink.csv"
    os.link(path, link)
    return ["release", str(path), *MECH, "-o", str(link)]


def _out_is_symlink(path: Path, folder: Path) -> list[str]:
    link = folder / "symlink.csv"
    link.symlink_to(path.name)
    return ["release", str(path), *MECH, "-o", str(link)]


def _tokenizer_onto_symlink(path: Path, folder: Path) -> list[str]:
    (folder / "tok.json").symlink_to(path.name)
    return _release(path, "--export-tokenizer", str(folder / "tok.json"))


def _tokenizer_onto_hard_link(path: Path, folder: Path) -> list[str]:
    os.link(path, folder / "tok.json")
    return _release(path, "--export-tokenizer", str(folder / "tok.json"))


def _policy_sips(path: Path, folder: Path, *extra: str) -> list[str]:
    return ["release", str(path), "-m", "policy-sips", "-e", "4", "-d", "1e-6", "-o", str(folder / "o.csv"), *extra]


def _rel(path: Path, folder: Path, *extra: str) -> list[str]:
    return _release(path, *extra)


def _flags(*extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda path, folder: _rel(path, folder, *extra)


def _calibrate(*extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda path, folder: ["calibrate", *MECH, *extra]


ANSI = "\x1b[31mred\x1b[0m"
RTL = ["\u202eevil\u202c", "zero\u200bwidth", "join\u200dme", "\ufeffbom", "\u2066iso\u2069"]
FORMULAS = ["=SUM(A1:A9)", "+cmd", "-2+3", "@HYPERLINK(x)", '=HYPERLINK("http://x")']
MARKUP = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "**bold**", "[link](javascript:x)", "$x$"]

CASES: list[Case] = [
    # ---- nothing there, or not text ----
    file_case("empty.csv", "error", b""),
    file_case("whitespace.csv", "error", b"   \n\n\t \n"),
    file_case("binary.bin", "error", bytes(range(256)) * 64),
    file_case("png_named.csv", "error", b"\x89PNG\r\n\x1a\n" + b"\x00" * 2048),
    file_case("nul_in_middle.csv", "error", GOOD_CSV[:200] + b"\x00" + GOOD_CSV[200:]),
    file_case("elf.txt", "error", b"\x7fELF\x02\x01\x01" + bytes(4096)),
    # ---- encodings ----
    file_case("utf16le_bom.csv", "release", codecs.BOM_UTF16_LE + GOOD_CSV.decode().encode("utf-16-le")),
    file_case("utf16be_bom.csv", "release", codecs.BOM_UTF16_BE + GOOD_CSV.decode().encode("utf-16-be")),
    file_case("utf16_no_bom.csv", "error", GOOD_CSV.decode().encode("utf-16-le")),
    file_case("utf16_broken.csv", "error", codecs.BOM_UTF16_LE + b"a\x00b\x00\x00\xd8"),
    file_case("utf8_bom.csv", "release", codecs.BOM_UTF8 + GOOD_CSV),
    file_case("latin1.csv", "release", GOOD_CSV.decode().replace("alpha", "alphé").encode("latin-1")),
    file_case("cp1252.csv", "release", GOOD_CSV.decode().replace("beta", "beta\u2019s").encode("cp1252")),
    file_case("mixed_encodings.csv", "release", GOOD_CSV + "u999,caf\u00e9 na\u00efve\n".encode("latin-1")),
    file_case("ansi_escapes.csv", "either", _special_rows([ANSI])),
    # ---- delimited structure ----
    file_case("ragged_rows.csv", "release", GOOD_CSV + b"u900\nu901,a,b,c,d\n,,,\n"),
    file_case("duplicate_headers.csv", "error", csv_bytes(good_rows(), header=("author", "body", "body"))),
    file_case("duplicate_user_headers.csv", "error", csv_bytes(good_rows(), header=("author", "author"))),
    file_case(
        "columns_5000.csv",
        "release",
        csv_bytes(
            [(u, t, *("x" for _ in range(4998))) for u, t in good_rows()],
            header=("author", "body", *(f"c{i}" for i in range(4998))),
        ),
    ),
    file_case("long_column_name.csv", "error", ("x" * 65536 + ",y\n").encode() + b"a,b\n" * 5),
    file_case("header_only.csv", "error", b"author,body\n"),
    file_case("one_user.csv", "error", csv_bytes([("same", t) for _, t in good_rows()])),
    file_case("no_user_column.csv", "error", b"body\nhello world\nanother post\n"),
    file_case("only_delimiters.csv", "error", b",,,\n,,,\n,,,\n"),
    file_case("semicolons.csv", "release", csv_bytes(good_rows(), delimiter=";")),
    file_case("tabs.tsv", "release", csv_bytes(good_rows(), delimiter="\t")),
    file_case("crlf.csv", "release", GOOD_CSV.replace(b"\n", b"\r\n")),
    file_case("cr_only.csv", "either", GOOD_CSV.replace(b"\n", b"\r")),
    file_case("unterminated_quote.csv", "either", GOOD_CSV[:300] + b'u500,"never closed\n' + GOOD_CSV[300:]),
    file_case("quotes_everywhere.csv", "either", b'"author","body"\n' + b'"u1","a ""b"" c"\n' * 3 + b'"u2"x,"y\n'),
    file_case("huge_line.csv", "release", GOOD_CSV + b"u777," + b"word " * 400_000 + b"\n"),
    file_case("huge_token.csv", "release", GOOD_CSV + b"u778," + b"z" * 2_000_000 + b"\n"),
    file_case("many_tiny_rows.csv", "release", csv_bytes([(f"u{i}", "alpha beta") for i in range(50_000)])),
    file_case("numeric_users.csv", "release", csv_bytes([(str(i), t) for i, (_, t) in enumerate(good_rows())])),
    file_case(
        "nan_users.csv",
        "release",
        GOOD_CSV + b"NaN,alpha\nnan,beta\n,gamma\nnull,delta\nNone,eta\n   ,theta\n",
    ),
    file_case("all_users_blank.csv", "error", csv_bytes([("", t) for _, t in good_rows()])),
    file_case("all_removed.csv", "error", csv_bytes([(u, "[removed]") for u, _ in good_rows()])),
    file_case("only_symbols.csv", "error", csv_bytes([(u, "!!! ??? ...") for u, _ in good_rows()])),
    # ---- hostile tokens (must be released safely) ----
    file_case("formula_tokens.csv", "release", _special_rows(FORMULAS), "--keep-symbols"),
    file_case("markup_tokens.csv", "release", _special_rows(MARKUP), "--keep-symbols"),
    file_case("rtl_zero_width.csv", "release", _special_rows(RTL)),
    file_case("emoji_and_astral.csv", "release", _special_rows(["😀", "𝔘𝔫𝔦", "👩‍👩‍👧", "\U0010ffff"])),
    file_case("control_chars.csv", "either", _special_rows(["a\x01b", "c\x7fd", "e\x0bf"])),
    # ---- archives ----
    file_case("good.zip", "release", _zip({"posts.csv": GOOD_CSV})),
    file_case("broken.zip", "error", _zip({"posts.csv": GOOD_CSV})[:100]),
    file_case("bad_crc.zip", "error", _bad_crc_zip()),
    file_case("encrypted.zip", "error", _encrypted_zip()),
    file_case("empty.zip", "error", _zip({})),
    file_case("two_members.zip", "error", _zip({"a.csv": GOOD_CSV, "b.csv": GOOD_CSV})),
    file_case("many_members.zip", "error", lambda: _zip({f"m{i:05d}_{'x' * 40}.csv": b"a" for i in range(3000)})),
    file_case("nested.zip", "error", lambda: _zip({"inner.zip": _zip({"posts.csv": GOOD_CSV})})),
    file_case(
        "zip_bomb_zeros.zip", "error", lambda: _zip_stream_of("posts.csv", b"\x00" * (1 << 20), 96), isolate=True
    ),
    file_case(
        "zip_bomb_text.zip", "error", lambda: _zip_stream_of("posts.csv", b"u1,alpha beta\n" * 75_000, 96), isolate=True
    ),
    file_case("zip_named_txt.txt", "release", _zip({"posts.csv": GOOD_CSV})),
    file_case("good.csv.gz", "release", gzip.compress(GOOD_CSV), isolate=True),
    file_case("broken.csv.gz", "error", gzip.compress(GOOD_CSV)[:60]),
    file_case("gzip_bomb.csv.gz", "error", lambda: _gzip_stream_of(b"u1,alpha beta\n" * 75_000, 96), isolate=True),
    file_case("gzip_two_members.csv.gz", "release", gzip.compress(GOOD_CSV) + gzip.compress(b"u900,more words\n")),
    file_case("gzip_trailing_garbage.csv.gz", "either", gzip.compress(GOOD_CSV) + b"garbage"),
    file_case("not_really.gz", "either", GOOD_CSV),
    # ---- Parquet ----
    file_case("good.parquet", "release", _good_parquet),
    file_case("broken.parquet", "error", b"PAR1" + bytes(range(200)) + b"PAR1"),
    file_case("truncated.parquet", "error", lambda: _good_parquet()[:-40]),
    file_case("parquet_int_columns.parquet", "either", lambda: _parquet(pa.table({"user": [1, 2], "text": [3, 4]}))),
    file_case("parquet_no_text.parquet", "error", lambda: _parquet(pa.table({"author": ["a", "b"], "x": ["c", "d"]}))),
    file_case("parquet_bomb.parquet", "error", _parquet_bomb, isolate=True),
    # ---- JSON ----
    file_case("good.jsonl", "release", GOOD_JSONL),
    file_case("truncated.jsonl", "error", GOOD_JSONL[:-20] + b'{"user": "x", "te'),
    file_case("deep_200k.jsonl", "error", _deep_json(200_000), isolate=True),
    file_case("deep_5k.jsonl", "error", GOOD_JSONL + _deep_json(5_000), isolate=True),
    file_case("deep_array.json", "error", b"[" * 100_000 + b"]" * 100_000, isolate=True),
    file_case("json_scalars.jsonl", "error", b"1\n2\n3\n"),
    file_case("json_array_of_scalars.json", "error", b"[1, 2, 3]"),
    file_case("json_mixed_types.jsonl", "either", GOOD_JSONL + b'{"user": 5, "text": {"a": [1, 2]}}\n'),
    file_case("json_huge_number.jsonl", "either", GOOD_JSONL + b'{"user": "z", "text": 1e999}\n'),
    file_case("json_nan.jsonl", "either", GOOD_JSONL + b'{"user": NaN, "text": "alpha"}\n'),
    file_case("json_no_fields.jsonl", "error", b"{}\n{}\n"),
    # ---- plain text and sequences ----
    file_case("blank_lines.txt", "error", b"\n" * 1000),
    file_case("user_tab_text.txt", "release", b"".join(f"{u}\t{t}\n".encode() for u, t in good_rows())),
    file_case("sequences_garbage.seq", "either", b"% Sequences\n1 2 3\nfoo bar\n\x01\x02\n"),
    file_case("sequences_header_only.seq", "error", b"% header\n% Sequences\n"),
    # ---- paths that are not regular files ----
    Case("fifo.csv", "error", _fifo_case, isolate=True),
    Case("symlink_to_dev_zero.csv", "error", _symlink_zero, isolate=True),
    Case("folder.csv", "error", _folder_case),
    Case("dev_zero", "error", lambda folder: _release(Path("/dev/zero")), isolate=True),
    Case("missing_file.csv", "error", lambda folder: _release(folder / "does_not_exist.csv")),
    file_case("name\nwith newline.csv", "release", GOOD_CSV),
    file_case("x" * 200 + ".csv", "release", GOOD_CSV),
    # ---- outputs that would clobber inputs ----
    flag_case("out_is_input", "error", lambda p, f: ["release", str(p), *MECH, "-o", str(p)], isolate=True),
    flag_case("out_is_input_other_spelling", "error", _out_is_input_other_spelling),
    flag_case("out_is_hard_link_of_input", "error", _out_is_hard_link),
    flag_case("out_is_symlink_to_input", "error", _out_is_symlink),
    flag_case(
        "report_is_input", "error", lambda p, f: ["release", str(p), *MECH, "-o", str(f / "o.csv"), "--report", str(p)]
    ),
    flag_case(
        "out_is_report",
        "error",
        lambda p, f: ["release", str(p), *MECH, "-o", str(f / "s.csv"), "--report", str(f / "s.csv")],
    ),
    flag_case(
        "out_in_missing_folder", "error", lambda p, f: ["release", str(p), *MECH, "-o", str(f / "nope" / "o.csv")]
    ),
    flag_case("out_is_folder", "error", lambda p, f: ["release", str(p), *MECH, "-o", str(f)]),
    flag_case(
        "public_corpus_is_input",
        "error",
        lambda p, f: [
            "release",
            str(p),
            "-m",
            "gw-kt",
            "-e",
            "4",
            "-d",
            "1e-6",
            "--public-corpus",
            str(p),
            "-o",
            str(f / "o.csv"),
        ],
    ),
    # ---- two files joined together, each with its header (the second after a byte-order mark) ----
    file_case("joined_with_bom.csv", "release", GOOD_CSV + codecs.BOM_UTF8 + csv_bytes(good_rows()[:5])),
    file_case("joined_no_bom.tsv", "release", csv_bytes(good_rows(), delimiter="\t") * 2),
    # ---- flags a run would ignore ----
    flag_case("tune_users_without_tuned_split", "error", lambda p, f: _policy_sips(p, f, "--tune-users", "5")),
    flag_case(
        "tune_users_with_half_split",
        "error",
        lambda p, f: _policy_sips(p, f, "--tune-users", "5", "--delta-split", "half"),
    ),
    flag_case("char_ngrams_with_fast", "error", _flags("--tokenizer", "fast", "--char-ngrams", "3")),
    flag_case("char_ngrams_with_treebank", "error", _flags("--tokenizer", "treebank", "--char-ngrams", "2")),
    flag_case("char_ngrams_huge", "error", _flags("--tokenizer", "char-ngrams", "--char-ngrams", "9" * 30)),
    # ---- outputs: a tokenizer export onto the input ----
    flag_case("export_tokenizer_is_symlink_to_input", "error", _tokenizer_onto_symlink),
    flag_case("export_tokenizer_is_hard_link_of_input", "error", _tokenizer_onto_hard_link),
    # ---- flags out of range ----
    flag_case("seed_negative", "error", _flags("--seed", "-1")),
    flag_case("seed_text", "error", _flags("--seed", "abc")),
    flag_case("max_items_1e24_text", "error", _flags("--max-items", "1e24")),
    flag_case("max_items_1e12", "error", _flags("--max-items", "1000000000000")),
    flag_case("max_items_zero", "error", _flags("--max-items", "0")),
    flag_case("max_n_zero", "error", _flags("--max-n", "0")),
    flag_case("max_n_huge", "error", _flags("--max-n", "99999999999")),
    flag_case(
        "epsilon_nan",
        "error",
        lambda p, f: ["release", str(p), "-m", "policy-gaussian", "-e", "nan", "-d", "1e-6", "-o", str(f / "o.csv")],
    ),
    flag_case(
        "epsilon_inf",
        "error",
        lambda p, f: ["release", str(p), "-m", "policy-gaussian", "-e", "inf", "-d", "1e-6", "-o", str(f / "o.csv")],
    ),
    flag_case(
        "delta_one",
        "error",
        lambda p, f: ["release", str(p), "-m", "policy-gaussian", "-e", "1", "-d", "1", "-o", str(f / "o.csv")],
    ),
    flag_case("user_col_out_of_range", "error", _flags("--user-col", "99")),
    flag_case("text_col_missing", "error", _flags("--text-col", "nosuchcolumn" * 50)),
    flag_case("format_parquet_on_csv", "error", _flags("--format", "parquet")),
    flag_case("max_unpacked_negative", "error", _flags("--max-unpacked-mb", "-1")),
    flag_case("max_unpacked_1e300", "error", _flags("--max-unpacked-mb", "1e300")),
    flag_case("max_unpacked_nan", "error", _flags("--max-unpacked-mb", "nan")),
    flag_case("max_file_1e300", "error", _flags("--max-file-mb", "1e300")),
    flag_case("max_file_inf", "error", _flags("--max-file-mb", "inf")),
    flag_case("alpha_1e300", "error", _flags("--alpha", "1e300")),
    flag_case(
        "tokenizer_vocab_size_huge",
        "error",
        _flags("--tokenizer-model", "bpe", "--tokenizer-vocab-size", "9" * 40, "--export-tokenizer", "t.json"),
    ),  # fmt: skip
    flag_case("max_file_tiny", "error", _flags("--max-file-mb", "0.0001")),
    flag_case("calibrate_max_items_1e24", "error", _calibrate("--max-items", "1" + "0" * 24)),
    flag_case(
        "calibrate_kbar_huge",
        "error",
        lambda p, f: ["calibrate", "-m", "pcr", "-e", "1", "-d", "1e-6", "--kbar", "1" + "0" * 30],
    ),
    flag_case(
        "unknown_mechanism",
        "error",
        lambda p, f: ["release", str(p), "-m", "nope", "-e", "1", "-d", "1e-6", "-o", str(f / "o.csv")],
    ),
]


def write_all(folder: Path) -> dict[str, list[str]]:
    """Write every case into its own subfolder of ``folder``; case name -> argv after ``dpsu``."""
    out = {}
    for i, case in enumerate(CASES):
        sub = folder / f"case{i:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        out[case.name] = case.make(sub)
    return out


if __name__ == "__main__":  # pragma: no cover
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile_inputs")
    for name, argv in write_all(target).items():
        print(f"{name!r}: dpsu {' '.join(argv)}")
