"""The bundled demo corpus: realistic English posts from many users, with planted canaries.

Run ``python -m dpsu_core.corpus.demo`` to (re)generate ``assets/demo_corpus.csv`` and
``assets/demo_canaries.txt``. Generation is seeded, so the committed files are reproducible.

How the text is made (no real person's text is used):
* words are drawn from ``wordfreq``'s English frequencies (top 20,000 words), so the
  vocabulary has a realistic Zipf shape;
* a bank of common phrases (hand-written idioms plus generated "function word + word"
  pairs and triples) is mixed in, so bigrams and trigrams recur across users;
* each user has a few favourite topic words, so users differ from one another;
* a few dozen canaries (fake e-mail handles, account numbers, access codes) are planted,
  each in one post of one user only. A differentially private release at a sane budget
  must never contain them (``assets/demo_canaries.txt`` lists them).

Canaries are single tokens of lowercase letters and digits with spaces around them, so every
tokenizer and preprocessing switch keeps them intact and they can be matched by string.
"""

from __future__ import annotations

import argparse
import string
from pathlib import Path

import numpy as np
import pandas as pd

from .load import LoadOptions, load_corpus
from .model import Corpus

SEED = 20240601
N_USERS = 6000
N_CANARIES = 36

ASSETS = Path(__file__).resolve().parents[2] / "assets"
DEMO_CSV = ASSETS / "demo_corpus.csv"
DEMO_CANARIES = ASSETS / "demo_canaries.txt"
DEMO_NAME = "demo corpus (synthetic)"

COMMON_PHRASES = [
    "i think",
    "i don't know",
    "a lot of",
    "at the end of the day",
    "in the morning",
    "to be honest",
    "as well as",
    "one of the",
    "i have been",
    "it is a",
    "thank you so much",
    "you know what",
    "on the other hand",
    "for the first time",
    "at the same time",
    "in the past",
    "right now",
    "i would say",
    "as far as i know",
    "it was a",
    "last night",
    "this is the",
    "the rest of",
    "i can't believe",
    "going to be",
    "make sure",
    "let me know",
    "in my opinion",
    "a little bit",
    "all the time",
    "the best way",
    "there is no",
    "i want to",
    "we need to",
    "how do you",
    "what do you think",
    "does anyone know",
    "i used to",
    "a couple of",
    "for a while",
    "pretty good",
    "not sure",
    "the same thing",
    "at least",
    "in the end",
    "every day",
    "next week",
    "last year",
    "the whole thing",
    "as soon as possible",
    "by the way",
    "good luck",
    "happy birthday",
    "new york",
    "high school",
    "video games",
    "social media",
    "climate change",
    "real estate",
    "ice cream",
    "coffee shop",
    "public transport",
    "customer service",
    "health care",
    "credit card",
    "phone number",
    "online shopping",
    "the weather is",
    "it looks like",
    "i agree with",
    "that makes sense",
    "on the weekend",
    "in the city",
    "my family",
    "my friends",
    "the new season",
    "the first episode",
    "the game last night",
    "the price of",
    "too much",
    "not enough",
    "worth it",
]

CANARY_TEMPLATES = [
    "you can email me at {} any time",
    "my account number is {} please do not share",
    "the access code for the building is {}",
    "my old username was {} on that forum",
    "send the invoice to {} before friday",
    "my customer id is {} if support asks",
]


def _canaries(rng: np.random.Generator, n: int) -> list[str]:
    """Unique fake identifiers: mail handles, account numbers, access codes (lowercase + digits)."""
    first = [
        "jordan",
        "casey",
        "morgan",
        "riley",
        "avery",
        "quinn",
        "harper",
        "rowan",
        "emery",
        "sage",
        "blake",
        "drew",
    ]
    last = [
        "whitfield",
        "okafor",
        "lindqvist",
        "marchetti",
        "nakamura",
        "delacroix",
        "brennan",
        "kowalski",
        "abernathy",
        "villanueva",
        "thornbury",
        "castellano",
    ]
    letters = np.array(list(string.ascii_lowercase))
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        kind = len(out) % 3
        if kind == 0:
            s = f"{rng.choice(first)}{rng.choice(last)}{rng.integers(1950, 2010)}mail"
        elif kind == 1:
            s = "acct" + "".join(str(d) for d in rng.integers(0, 10, 14))
        else:
            s = (
                "".join(rng.choice(letters, 4))
                + "".join(str(d) for d in rng.integers(0, 10, 6))
                + "".join(rng.choice(letters, 3))
            )
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def _vocabulary() -> tuple[np.ndarray, np.ndarray]:
    import wordfreq

    words = [w for w in wordfreq.top_n_list("en", 20000) if w.replace("'", "").isalpha()]
    freq = np.array([wordfreq.word_frequency(w, "en") for w in words], dtype=np.float64)
    return np.array(words, dtype=object), freq / freq.sum()


def _phrase_bank(rng: np.random.Generator, words: np.ndarray) -> np.ndarray:
    """Hand-written idioms + generated 'function word + content word(s)' phrases."""
    function_words = words[:60]
    content = words[150:4000]
    pairs = [f"{rng.choice(function_words)} {rng.choice(content)}" for _ in range(900)]
    triples = [f"{rng.choice(function_words)} the {rng.choice(content)}" for _ in range(500)]
    return np.array(list(dict.fromkeys(COMMON_PHRASES + pairs + triples)), dtype=object)


def generate(seed: int = SEED, n_users: int = N_USERS, n_canaries: int = N_CANARIES) -> tuple[pd.DataFrame, list[str]]:
    """Return (posts with columns author, body; canaries). Deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    words, p_words = _vocabulary()
    phrases = _phrase_bank(rng, words)
    zipf_ph = 1.0 / np.arange(1, phrases.size + 1) ** 1.1
    p_phr = zipf_ph / zipf_ph.sum()

    posts_per_user = np.minimum(1 + rng.geometric(0.35, n_users), 20)
    n_posts = int(posts_per_user.sum())
    post_user = np.repeat(np.arange(n_users), posts_per_user)
    chunks_per_post = np.clip(rng.lognormal(2.2, 0.5, n_posts).astype(np.int64), 2, 60)
    n_chunks = int(chunks_per_post.sum())
    chunk_user = np.repeat(post_user, chunks_per_post)

    # chunk kinds: 0 = word by global frequency, 1 = common phrase, 2 = the user's topic word
    kind = rng.choice(3, size=n_chunks, p=[0.55, 0.3, 0.15])
    text = np.empty(n_chunks, dtype=object)
    k0 = kind == 0
    text[k0] = words[rng.choice(words.size, size=int(k0.sum()), p=p_words)]
    k1 = kind == 1
    text[k1] = phrases[rng.choice(phrases.size, size=int(k1.sum()), p=p_phr)]
    topics = rng.integers(300, min(12000, words.size), size=(n_users, 8))
    k2 = kind == 2
    text[k2] = words[topics[chunk_user[k2], rng.integers(0, 8, int(k2.sum()))]]

    bounds = np.cumsum(chunks_per_post)[:-1]
    bodies = [" ".join(part) for part in np.split(text, bounds)]

    # One canary per chosen user, in one of that user's posts.
    canaries = _canaries(rng, n_canaries)
    owners = rng.choice(n_users, size=n_canaries, replace=False)
    first_post = np.concatenate([[0], np.cumsum(posts_per_user)[:-1]])
    for c, u in zip(canaries, owners):
        j = int(first_post[u] + rng.integers(0, posts_per_user[u]))
        bodies[j] = bodies[j] + " " + CANARY_TEMPLATES[int(rng.integers(len(CANARY_TEMPLATES)))].format(c)

    # Reddit-like user names; the order of users in the file is shuffled.
    names = np.array([f"user_{i:05d}" for i in rng.permutation(n_users)], dtype=object)
    df = pd.DataFrame({"author": names[post_user], "body": bodies})
    df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    return df, canaries


def write(out_dir: Path = ASSETS, seed: int = SEED) -> tuple[Path, Path]:
    df, canaries = generate(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, can_path = out_dir / DEMO_CSV.name, out_dir / DEMO_CANARIES.name
    df.to_csv(csv_path, index=False)
    can_path.write_text("\n".join(canaries) + "\n", encoding="utf-8")
    return csv_path, can_path


def load_canaries(path: Path = DEMO_CANARIES) -> list[str]:
    """The planted canaries of the demo corpus (one per line)."""
    return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def load_demo(options: LoadOptions | None = None) -> Corpus:
    """The committed demo corpus, read with ``options`` (its columns are found by their names)."""
    return load_corpus(DEMO_CSV, options, name=DEMO_NAME)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Generate the dpsu demo corpus (seeded).")
    ap.add_argument("--out", type=Path, default=ASSETS)
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args(argv)
    csv_path, can_path = write(a.out, a.seed)
    print(f"wrote {csv_path} ({csv_path.stat().st_size / 1e6:.2f} MB) and {can_path}")


if __name__ == "__main__":
    main()
