"""Files for the corpus fingerprint (issue 36.2): a private corpus (a sixth of the demo corpus's users) and the
edits of it that dpsu's tokenizer ignores, a file where 5% of the users are the private corpus's and a different
corpus of the same language and kind (other users of the demo corpus)."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import defaultdict
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo_corpus.csv"

Rows = list[tuple[str, str]]


def demo_split(share: int = 6) -> tuple[Rows, Rows]:
    """The demo corpus's rows split by user: (the users whose number is a multiple of ``share``, the others)."""
    with DEMO.open(encoding="utf-8", newline="") as f:
        rows = [(r["author"], r["body"]) for r in csv.DictReader(f)]
    users = sorted({u for u, _ in rows})
    mine = {u for i, u in enumerate(users) if i % share == 0}
    return [r for r in rows if r[0] in mine], [r for r in rows if r[0] not in mine]


def csv_bytes(rows: Rows, newline: str = "\r\n") -> bytes:
    out = io.StringIO()
    w = csv.writer(out, lineterminator=newline)
    w.writerow(["author", "body"])
    w.writerows(rows)
    return out.getvalue().encode()


def jsonl_bytes(rows: Rows) -> bytes:
    return "".join(json.dumps({"author": u, "body": t}, ensure_ascii=False) + "\n" for u, t in rows).encode()


def _inside(word: str, mark: str) -> str:
    return word[:2] + mark + word[2:] if len(word) >= 4 else word


def _per_word(text: str, mark: str) -> str:
    return " ".join(_inside(w, mark) for w in text.split())


def users_posts(rows: Rows) -> dict[str, list[str]]:
    by: dict[str, list[str]] = defaultdict(list)
    for u, t in rows:
        by[u].append(t)
    return by


def turkish(rows: Rows) -> Rows:
    """The private rows as written with capitals, some users' posts naming Turkish cities (dotted capital I)."""
    return [(u, t.title() + (" İstanbul İzmir" if i % 3 == 0 else "")) for i, (u, t) in enumerate(rows)]


def edits(rows: Rows, others: Rows) -> dict[str, bytes]:
    """Each edit of the private rows that the tokenizer ignores, as a file: every one is the private corpus."""
    rng = random.Random(5)
    shuffled = rows[:]
    rng.shuffle(shuffled)
    halves = []
    for u, t in rows:
        w = t.split()
        cut = max(1, len(w) // 2)
        halves += [(u, " ".join(w[:cut])), (u, " ".join(w[cut:]))]
    renamed = {u: f"someone{i:05d}" for i, u in enumerate(sorted(users_posts(rows)))}
    padding = [(f"other_{u}", t) for u, t in others]
    while len(padding) < 4.5 * len(rows):
        padding += [(f"again{len(padding)}_{u}", " ".join(rng.sample(t.split(), len(t.split())))) for u, t in others]
    padded = [(renamed[u], t) for u, t in rows] + padding[: int(4.5 * len(rows))]
    rng.shuffle(padded)
    return {
        "bang.csv": csv_bytes([(u, t + "!!") for u, t in rows]),
        "html.csv": csv_bytes([(u, f"<p>{t}</p>") for u, t in rows]),
        "quoted.csv": csv_bytes([(u, f'"{t}"') for u, t in rows]),
        "numbered.csv": csv_bytes([(u, f"{i} {t}") for i, (u, t) in enumerate(rows)]),
        "halves.csv": csv_bytes(halves),
        "merged.csv": csv_bytes([(u, " ".join(ts)) for u, ts in users_posts(rows).items()]),
        "words_shuffled.csv": csv_bytes([(u, " ".join(rng.sample(t.split(), len(t.split())))) for u, t in rows]),
        "soft_hyphens.csv": csv_bytes([(u, _per_word(t, "\u00ad")) for u, t in rows]),
        "zero_width.csv": csv_bytes([(u, _per_word(t, "\u200b")) for u, t in rows]),
        "rows_shuffled.csv": csv_bytes(shuffled),
        "lf.csv": csv_bytes(rows, "\n"),
        "one_more.csv": csv_bytes([*rows, ("newcomer", "a brand new post about nothing at all")]),
        "same.jsonl": jsonl_bytes(rows),
        "renamed_padded.csv": csv_bytes(padded),
    }


def five_percent(rows: Rows, others: Rows) -> bytes:
    """A file of other people in which 5% of the users are the private corpus's (their posts copied, renamed)."""
    mine, theirs = users_posts(rows), users_posts(others)
    n = len(mine)
    copied = sorted(mine)[: n // 20]
    out = [(f"copied{i}", t) for i, u in enumerate(copied) for t in mine[u]]
    out += [(u, t) for u in sorted(theirs)[: n - len(copied)] for t in theirs[u]]
    return csv_bytes(out)


def different(others: Rows, n_users: int) -> bytes:
    """Another corpus of the same language and kind: ``n_users`` other users of the demo corpus."""
    theirs = users_posts(others)
    return csv_bytes([(u, t) for u in sorted(theirs)[:n_users] for t in theirs[u]])


def write_all(folder: Path) -> dict[str, Path]:
    """The private file, the Turkish private file and its lower-cased copy, every edit, the 5% file and the
    different corpus: their paths by name."""
    rows, others = demo_split()
    files = {
        "private.csv": csv_bytes(rows),
        "private_tr.csv": csv_bytes(turkish(rows)),
        "lower_tr.csv": csv_bytes([(u, t.lower()) for u, t in turkish(rows)]),
        **edits(rows, others),
        "five.csv": five_percent(rows, others),
        "different.csv": different(others, len(users_posts(rows))),
    }
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, data in files.items():
        out[name] = folder / name
        out[name].write_bytes(data)
    return out
