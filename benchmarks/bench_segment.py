"""Word segmentation by script, side by side in one run (issue 29):

1. ``throughput``: MB/s of ``load_corpus`` with the ``auto`` tokenizer on Chinese, Japanese, Thai and Korean
   corpora with the new segmenter (rjieba, fugashi + unidic-lite, nlpo3, kiwipiepy morphemes), the old one
   (jieba, SudachiPy mode C, PyThaiNLP newmm; Korean: words as written, ``--korean eojeol``) and ``fast``;
   SudachiPy is also the measured alternative for Japanese (the faster of the two comes first). Chinese also
   with rjieba run by run (the path before ``chinese.segment_rows`` cut the posts over their bytes).
2. ``whole_release``: ``dpsu release`` (the CLI in a fresh process, policy-gaussian) on a Chinese corpus and on
   an English corpus of the same bytes, in turn, three rounds; the ratio of their wall times per round, its median
   and range (target <= 1.5), and the 1-minute load average (the machine may be shared). The Chinese corpus also
   without its few Korean words (the Korean segmenter's load is a fixed cost of any file with Korean in it).
3. ``startup``: loading an English file with a few Chinese and Japanese words in a fresh process, ``auto``
   against ``fast``, seven pairs (target: median <= 0.3 s over ``fast``); and the same with a few Korean words
   (kiwipiepy's model load).
4. ``dictionary``: items released (policy-gaussian, epsilon 3, delta 1e-6) from Chinese, Japanese, Thai and Korean
   corpora built from each segmenter's own dictionary, and the share of them that are dictionary words.

Run ``python -m benchmarks.run segment``. The corpora are synthetic and seeded: words drawn by frequency
(wordfreq's lists for Chinese, Japanese, English; PyThaiNLP's word list, Zipf-weighted, for Thai; Korean nouns
with particles), written without spaces in Chinese, Japanese and Thai, with spaces in English and Korean;
posts of about 40 words, users with a heavy-tailed number of posts. Sizes (MB of text) can be set with
DPSU_BENCH_SEGMENT_MB="zh=4,ja=2,th=2,ko=1,release=7,dictionary=3".
"""

from __future__ import annotations

import dataclasses
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from dpsu_core.corpus import load_corpus, segmenters

SIZES = {"zh": 4.0, "ja": 2.0, "th": 2.0, "ko": 1.0, "release": 7.0, "dictionary": 3.0}  # MB of text
SPACED = {"en", "ko"}
PUNCT = {"zh": ("，", "。"), "ja": ("、", "。"), "th": (" ", " "), "en": (",", "."), "ko": (",", ".")}
LANGUAGE = {"zh": "Chinese", "ja": "Japanese", "th": "Thai", "ko": "Korean"}
# (label, segmenter forced for the language or None, korean mode, tokenizer)
VARIANTS = {
    "zh": [
        ("new rjieba", "rjieba"),
        ("old jieba", "jieba"),
        ("rjieba run by run (before the byte path)", "rjieba-runs"),
    ],
    "ja": [("new fugashi+unidic-lite", "fugashi"), ("old SudachiPy mode C", "sudachipy")],
    "th": [("new nlpo3", "nlpo3"), ("old PyThaiNLP newmm", "pythainlp")],
    "ko": [("new kiwipiepy morphemes", "kiwipiepy"), ("old eojeol (as written)", None)],
}
_HAN_ONLY = re.compile("[\u4e00-\u9fff]+")
_JA = re.compile("[\u3005-\u3007\u3040-\u30ff\u4e00-\u9fff]+")
_HANGUL = re.compile("[\uac00-\ud7af]+")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
PARTICLES = ["", "", "에", "는", "은", "를", "을", "가", "이", "의", "에서", "도", "로", "와"]


def _sizes() -> dict[str, float]:
    sizes = dict(SIZES)
    for part in filter(None, os.environ.get("DPSU_BENCH_SEGMENT_MB", "").split(",")):
        lang, mb = part.split("=")
        sizes[lang.strip()] = float(mb)
    return sizes


def _wordfreq(lang: str, keep: re.Pattern | None, top: int = 30000) -> tuple[np.ndarray, np.ndarray]:
    import wordfreq

    pairs = sorted(wordfreq.get_frequency_dict(lang).items(), key=lambda kv: -kv[1])[:top]
    pairs = [(w, f) for w, f in pairs if keep is None or keep.fullmatch(w)]
    return np.array([w for w, _ in pairs], dtype=object), np.array([f for _, f in pairs])


_HANGUL_WORD = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]+")


def vocabulary(lang: str) -> tuple[np.ndarray, np.ndarray]:
    """Words and their probabilities for the throughput corpora."""
    if lang == "th":
        words = np.array(sorted(_thai_dictionary()), dtype=object)
        np.random.default_rng(1).shuffle(words)
        freq = 1.0 / np.arange(1, words.shape[0] + 1)  # Zipf over a shuffled list
    elif lang == "ko":
        nouns, nf = _korean_nouns()
        rng = np.random.default_rng(1)
        words = np.array([n + PARTICLES[int(rng.integers(len(PARTICLES)))] for n in nouns], dtype=object)
        freq = nf
    elif lang == "zh":  # wordfreq's Chinese list holds a few Japanese (kana) and Korean (Hangul) words: a Chinese
        words, freq = _wordfreq(lang, None)  # corpus has none (Korean's segmenter start-up is measured on its own)
        keep = np.array([not (_KANA.search(w) or _HANGUL_WORD.search(w)) for w in words.tolist()])
        words, freq = words[keep], freq[keep]
    else:
        words, freq = _wordfreq(lang, None)
    return words, freq / freq.sum()


def make_posts(lang: str, mb: float, seed: int = 0, vocab: tuple[np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """About ``mb`` MB of text (UTF-8) in ``lang``, as a frame with columns author, body."""
    rng = np.random.default_rng(seed)
    words, freq = vocab if vocab is not None else vocabulary(lang)
    freq = freq / freq.sum()
    avg_bytes = float((freq * np.array([len(w.encode()) for w in words])).sum()) + (1 if lang in SPACED else 0.3)
    n_words = int(mb * 1_000_000 / avg_bytes)
    idx = rng.choice(words.shape[0], size=n_words, p=freq)
    comma, stop = PUNCT[lang]
    punct = rng.choice(np.array(["", comma, stop], dtype=object), size=n_words, p=[0.85, 0.08, 0.07])
    tok = words[idx] + punct
    sep = " " if lang in SPACED else ""
    lens = np.maximum(1, rng.lognormal(3.2, 0.9, size=n_words // 10).astype(np.int64))
    ends = np.cumsum(lens)
    ends = np.concatenate([ends[ends < n_words], [n_words]])
    starts = np.concatenate([[0], ends[:-1]])
    bodies = np.array([sep.join(tok[s:e]) for s, e in zip(starts, ends)], dtype=object)
    n_posts = bodies.shape[0]
    n_users = max(2, n_posts // 8)
    user = (rng.zipf(1.6, n_posts) + rng.integers(0, n_users, n_posts)) % n_users
    return pd.DataFrame({"author": np.char.add("user_", user.astype(str)).astype(object), "body": bodies})


def _write(posts: pd.DataFrame, path: Path) -> float:
    posts.to_csv(path, index=False)
    return float(posts["body"].str.encode("utf-8").str.len().sum()) / 1e6


@contextmanager
def forced(language: str, name: str | None) -> Iterator[None]:
    """``language`` segmented with candidate ``name`` for the duration (None: as ``load`` chooses)."""
    segmenters._loaded.pop(language, None)
    if name is not None:
        runs = name == "rjieba-runs"  # rjieba without its byte path (``chinese.segment_rows``): run by run
        name = "rjieba" if runs else name
        cand = next(c for c in segmenters.CANDIDATES[language] if c.name == name)
        made = segmenters._MAKERS[name](language, cand)
        segmenters._loaded[language] = dataclasses.replace(made, lines=None) if runs else made
    try:
        yield
    finally:
        segmenters._loaded.pop(language, None)


def _timed_load(path: Path, **options) -> tuple[float, object]:
    t0 = time.perf_counter()
    corpus = load_corpus(path, **options)
    return time.perf_counter() - t0, corpus


def throughput(tmp: Path, sizes: dict[str, float]) -> dict:
    out: dict = {}
    for lang in ("zh", "ja", "th", "ko"):
        path = tmp / f"{lang}.csv"
        text_mb = _write(make_posts(lang, sizes[lang]), path)
        row: dict = {"text_mb": round(text_mb, 2)}
        runs = [(label, name, "morphemes", "auto") for label, name in VARIANTS[lang]]
        if lang == "ko":
            runs[1] = (runs[1][0], None, "eojeol", "auto")
        runs.append(("fast", None, "morphemes", "fast"))
        for label, name, korean, tokenizer in runs:
            with forced(LANGUAGE[lang], name):
                _timed_load(tmp / "warm.csv", tokenizer=tokenizer, korean=korean)  # the segmenter loaded, kernels
                seconds, corpus = _timed_load(path, tokenizer=tokenizer, korean=korean)
            row[label] = {
                "mb_per_s": round(text_mb / seconds, 2),
                "seconds": round(seconds, 2),
                "vocabulary": int(corpus.n_items),
                "tokens": int(corpus.n_tokens),
            }
        new, old = VARIANTS[lang][0][0], VARIANTS[lang][1][0]
        row["new_over_old_speed"] = round(row[new]["mb_per_s"] / row[old]["mb_per_s"], 2)
        if len(VARIANTS[lang]) > 2:
            before = VARIANTS[lang][2][0]
            row["new_over_before_speed"] = round(row[new]["mb_per_s"] / row[before]["mb_per_s"], 2)
        row["fast_over_new_time"] = round(row[new]["seconds"] / row["fast"]["seconds"], 2)
        out[lang] = row
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cli(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, all its threads) of one CLI release in a fresh process."""
    t0, c0 = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "dpsu_core.interfaces.cli", "release", *args], capture_output=True, text=True, cwd=cwd
    )
    seconds, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return seconds, cpu


def _release_args(path: Path, out: Path, *extra: str) -> list[str]:
    return [str(path), "-m", "policy-gaussian", "-e", "3", "-d", "1e-6", "-o", str(out), *extra]


def _spread(values: list[float]) -> dict:
    return {"median": round(float(np.median(values)), 2), "min": round(min(values), 2), "max": round(max(values), 2)}


def whole_release(tmp: Path, sizes: dict[str, float], pairs: int = 3) -> dict:
    """The CLI's whole release (start, read, segment, tokenize, build, release, write) on the same bytes: Chinese
    and English in turn, ``pairs`` times (a shared machine's load hits both of a pair); the ratio per pair, its
    median and range. ``korean_words_in_zh`` checks that the Chinese corpus holds no Korean (wordfreq's Chinese list
    has a few Hangul words, dropped in ``vocabulary``: a Korean word would load Kiwi, measured under start-up)."""
    repo = Path(__file__).resolve().parents[1]
    posts = {"zh": make_posts("zh", sizes["release"], seed=5), "en": make_posts("en", sizes["release"], seed=5)}
    hangul = int(posts["zh"]["body"].str.count(_HANGUL_WORD.pattern).sum())
    paths, mbs = {}, {}
    for lang, frame in posts.items():
        paths[lang] = tmp / f"release_{lang}.csv"
        mbs[lang] = _write(frame, paths[lang])
    seconds: dict[str, list[float]] = {lang: [] for lang in paths}
    cpu: dict[str, list[float]] = {lang: [] for lang in paths}
    load = [os.getloadavg()[0]]
    for _ in range(pairs):
        for lang, path in paths.items():
            wall, used = _cli(_release_args(path, tmp / f"out_{lang}.csv"), repo)
            seconds[lang].append(wall)
            cpu[lang].append(used)
        load.append(os.getloadavg()[0])

    def ratios(times: dict[str, list[float]], lang: str) -> dict:
        return _spread([z / e for z, e in zip(times[lang], times["en"])])

    return {
        "text_mb": {lang: round(mb, 2) for lang, mb in mbs.items()},
        "korean_words_in_zh": hangul,
        "seconds": {lang: _spread(s) for lang, s in seconds.items()},
        "cpu_seconds": {lang: _spread(s) for lang, s in cpu.items()},
        "zh_over_en": ratios(seconds, "zh"),
        "cpu_zh_over_en": ratios(cpu, "zh"),
        "load_average_1min": _spread(load),
        "target": "zh_over_en median <= 1.5",
        "timed": f"python -m dpsu_core.interfaces.cli release ... -m policy-gaussian -e 3 -d 1e-6 in a fresh process, {pairs} "
        "rounds of zh, zh without Korean, en in turn; ratios per round (wall, and CPU: user + system of all threads)",
    }


_LOAD_TIMED = (
    "import sys, time\n"
    "t, c = time.perf_counter(), time.process_time()\n"
    "from dpsu_core.corpus import load_corpus\n"
    "load_corpus(sys.argv[1], tokenizer=sys.argv[2])\n"
    "print(time.perf_counter() - t, time.process_time() - c)\n"
)


def _fresh_load(path: Path, tokenizer: str, cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (all threads) of importing the loader and loading ``path`` in a fresh process (every
    start-up cost in it)."""
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_TIMED, str(path), tokenizer], capture_output=True, text=True, cwd=cwd
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def startup(tmp: Path, repeats: int = 7) -> dict:
    """A few CJK (or Korean) words in an English file: loading it in a fresh process with auto against fast."""
    repo = Path(__file__).resolve().parents[1]
    english = make_posts("en", 2.0, seed=9)
    out: dict = {"text_mb": round(float(english["body"].str.encode("utf-8").str.len().sum()) / 1e6, 2)}
    extras = {
        "cjk": ["我爱北京天安门", "東京に住んでいます", "今天天气很好", "中文", "日本語を話します"],
        "korean": ["학교에 갔다", "BTS의 노래", "안녕하세요"],
    }
    for name, few in extras.items():
        posts = english.copy()
        for i, text in enumerate(few):
            posts.loc[i * 997, "body"] = f"{posts.loc[i * 997, 'body']} {text}"
        path = tmp / f"startup_{name}.csv"
        posts.to_csv(path, index=False)
        times: dict[str, list[float]] = {"auto": [], "fast": []}
        cpu: dict[str, list[float]] = {"auto": [], "fast": []}
        load = [os.getloadavg()[0]]
        for _ in range(repeats):
            for tokenizer in times:
                wall, used = _fresh_load(path, tokenizer, repo)
                times[tokenizer].append(wall)
                cpu[tokenizer].append(used)
            load.append(os.getloadavg()[0])
        out[name] = {
            "added_posts_text": few,
            "auto_seconds": _spread(times["auto"]),
            "fast_seconds": _spread(times["fast"]),
            "auto_minus_fast_seconds": _spread([a - f for a, f in zip(times["auto"], times["fast"])]),
            "auto_minus_fast_cpu_seconds": _spread([a - f for a, f in zip(cpu["auto"], cpu["fast"])]),
            "load_average_1min": _spread(load),
        }
    out["target"] = "cjk: auto_minus_fast_seconds median <= 0.3"
    out["timed"] = (
        f"a fresh process imports dpsu_core.corpus and runs load_corpus (tokenizer auto or fast), timed inside it; "
        f"{repeats} pairs (auto then fast), the difference per pair (wall; CPU: user + system of all threads)"
    )
    return out


# ---- corpora from each segmenter's own dictionary --------------------------------------------------------
def _thai_dictionary() -> set[str]:
    path = segmenters.thai_dictionary()
    with open(path, encoding="utf-8") as f:
        return {w for w in (line.strip() for line in f) if w and " " not in w}


def _jieba_dictionary() -> tuple[np.ndarray, np.ndarray]:
    import importlib.util

    spec = importlib.util.find_spec("jieba")
    assert spec is not None and spec.submodule_search_locations
    words, freq = [], []
    with open(Path(list(spec.submodule_search_locations)[0]) / "dict.txt", encoding="utf-8") as f:
        for line in f:
            w, n, *_ = line.split()
            if _HAN_ONLY.fullmatch(w):
                words.append(w)
                freq.append(float(n))
    return np.array(words, dtype=object), np.array(freq)


def _fugashi_tagger():
    import fugashi
    import unidic_lite

    return fugashi.Tagger(f'-r /dev/null -d "{unidic_lite.DICDIR}"')


def _kiwi():
    from kiwipiepy import Kiwi

    return Kiwi(load_typo_dict=False, load_multi_dict=False)


def _known_ja(words: list[str]) -> list[bool]:
    tagger = _fugashi_tagger()
    out = []
    for w in words:
        parsed = tagger(w)
        out.append(len(parsed) == 1 and parsed[0].surface == w and not parsed[0].is_unk)
    return out


def _known_ko(words: list[str]) -> list[bool]:
    kiwi = _kiwi()
    return [len(toks) == 1 and toks[0].form == w for w, toks in zip(words, kiwi.tokenize(words))]


def _korean_nouns() -> tuple[np.ndarray, np.ndarray]:
    """Korean nouns Kiwi's dictionary holds (wordfreq's list, kept where Kiwi reads the word alone as one
    common or proper noun)."""
    words, freq = _wordfreq("ko", _HANGUL, top=20000)
    kiwi = _kiwi()
    keep = [
        len(toks) == 1 and toks[0].form == w and toks[0].tag in ("NNG", "NNP") and len(w) >= 2
        for w, toks in zip(words.tolist(), kiwi.tokenize(words.tolist()))
    ]
    mask = np.array(keep)
    return words[mask], freq[mask]


def dictionary(tmp: Path, sizes: dict[str, float]) -> dict:
    """Items released from corpora built from each segmenter's own dictionary, and their share of dictionary
    words (the items that are words of that dictionary; digits and punctuation never occur here)."""
    from dpsu_core import get_mechanism

    out: dict = {}
    for lang in ("zh", "ja", "th", "ko"):
        if lang == "zh":
            vocab = _jieba_dictionary()
        elif lang == "ja":
            words, freq = _wordfreq("ja", _JA)
            known = np.array(_known_ja(words.tolist()))
            vocab = (words[known], freq[known])
        elif lang == "th":
            vocab = vocabulary("th")
        else:
            vocab = vocabulary("ko")
        path = tmp / f"dict_{lang}.csv"
        _write(make_posts(lang, sizes["dictionary"], seed=3, vocab=vocab), path)
        corpus = load_corpus(path)
        release = get_mechanism("policy-gaussian", epsilon=3.0, delta=1e-6).release(corpus)
        items = [str(s) for s in release.items.tolist()]
        if lang == "zh":
            inside = set(_jieba_dictionary()[0].tolist())
            known = [w in inside for w in items]
        elif lang == "ja":
            known = _known_ja(items)
        elif lang == "th":
            inside = _thai_dictionary()
            known = [w in inside for w in items]
        else:
            known = _known_ko(items)
        seg = segmenters.chosen(LANGUAGE[lang])
        out[lang] = {
            "segmenter": seg.label() if seg else None,
            "users": int(corpus.n_users),
            "released_items": len(items),
            "dictionary_word_share": round(float(np.mean(known)) if known else 0.0, 4),
            "not_in_dictionary_sample": [w for w, k in zip(items, known) if not k][:10],
            "released_sample": items[:12],
        }
    out["how"] = (
        "Chinese: words of jieba's dict.txt (rjieba's dictionary) by frequency; Japanese: wordfreq's words that "
        "MeCab + unidic-lite reads alone as one known word; Thai: PyThaiNLP's words_th.txt (nlpo3's dictionary); "
        "Korean: nouns Kiwi reads alone as one noun, with particles. A released item is a dictionary word when it "
        "is in that list (zh, th) or the segmenter reads it alone as one known word (ja, ko: particles and "
        "endings are morphemes of Kiwi's dictionary). policy-gaussian, epsilon 3, delta 1e-6, fresh OS noise."
    )
    return out


def run() -> dict:
    sizes = _sizes()
    out: dict = {"cpus": os.cpu_count(), "load_average_before": round(os.getloadavg()[0], 2), "sizes_mb": sizes}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        warm = pd.DataFrame(
            {"author": ["a", "b"], "body": ["我爱北京 東京は日本 ภาษาไทย 학교에 hello", "ខ្ញុំស្រឡាញ់ ພາສາລາວ hello"]}
        )
        warm.to_csv(tmp / "warm.csv", index=False)
        for tokenizer in ("auto", "fast", "char-ngrams"):  # compile the kernels once (numba's cache)
            _timed_load(tmp / "warm.csv", tokenizer=tokenizer)
        out["throughput"] = throughput(tmp, sizes)
        out["whole_release"] = whole_release(tmp, sizes)
        out["startup"] = startup(tmp)
        out["dictionary"] = dictionary(tmp, sizes)
    out["segmenters"] = {
        language: (c.label() if (c := segmenters.chosen(language)) else None) for language in segmenters.LANGUAGES
    }
    out["timed"] = (
        "throughput: load_corpus end to end (read, clean, segment, tokenize, build), text MB / seconds, each "
        "segmenter loaded beforehand on a two-post file"
    )
    out["load_average_after"] = round(os.getloadavg()[0], 2)
    return out


if __name__ == "__main__":  # pragma: no cover
    print(run())
