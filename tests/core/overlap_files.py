"""Files for the content check of public files (issue 27.1): a private CSV and the copies of it that a byte
comparison lets through (line endings changed, rows shuffled, one row added, JSON Lines), a public file sharing 5%
of its posts, and the private file as a folder of part files (as Spark writes one)."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau".split()


def private_rows(n: int = 3000, users: int = 300, seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(f"u{i % users}", " ".join(rng.choice(WORDS) for _ in range(8)) + f" {i}") for i in range(n)]


def csv_bytes(rows: list[tuple[str, str]], newline: str = "\r\n") -> bytes:
    return ("author,body" + newline + "".join(f'{u},"{t}"' + newline for u, t in rows)).encode()


def jsonl_bytes(rows: list[tuple[str, str]]) -> bytes:
    return "".join(json.dumps({"author": u, "body": t}) + "\n" for u, t in rows).encode()


def copies(rows: list[tuple[str, str]]) -> dict[str, bytes]:
    """The private file's content under other bytes: each must be refused as public data."""
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    return {
        "lf.csv": csv_bytes(rows, "\n"),
        "shuffled.csv": csv_bytes(shuffled),
        "one_more.csv": csv_bytes([*rows, ("newcomer", "a brand new post")]),
        "same.jsonl": jsonl_bytes(rows),
    }


def five_percent(rows: list[tuple[str, str]], n: int = 2000, seed: int = 3) -> bytes:
    """A public file of ``n`` distinct posts, 5% of them the private corpus's posts under other user names."""
    rng = random.Random(seed)
    shared = n // 20
    own = [(f"p{i % 200}", " ".join(rng.choice(WORDS) for _ in range(8)) + f" public {i}") for i in range(n - shared)]
    return csv_bytes(own + [(f"p{i % 200}", rows[i][1]) for i in range(shared)], "\n")


def write_all(folder: Path, rows: list[tuple[str, str]]) -> dict[str, Path]:
    """The private file, its copies, the 5% file and the private file as a folder of parts: their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {"private.csv": folder / "private.csv"}
    out["private.csv"].write_bytes(csv_bytes(rows))
    for name, data in {**copies(rows), "five.csv": five_percent(rows)}.items():
        out[name] = folder / name
        out[name].write_bytes(data)
    parts = folder / "private_parts.csv"
    parts.mkdir(exist_ok=True)
    half = len(rows) // 2
    (parts / "part-00000.csv").write_bytes(csv_bytes(rows[:half], "\n"))
    (parts / "part-00001.csv").write_bytes(csv_bytes(rows[half:], "\n"))
    (parts / "_SUCCESS").write_bytes(b"")
    (parts / ".part-00000.csv.crc").write_bytes(b"\x00\x01")
    out["private_parts.csv"] = parts
    return out
