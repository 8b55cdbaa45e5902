"""Word segmentation by script: the ``auto`` and ``char-ngrams`` tokenizers.

``auto`` (the default) lets the ``fast`` tokenizer's kernel cut every post, after this module has put
spaces between the words of the runs of text written without spaces, then cuts some words further:

  Chinese   (Han without kana in the post)  runs cut by rjieba (jieba's words), else jieba
  Japanese  (Han or kana, kana in the post) runs cut by fugashi + unidic-lite, else SudachiPy (mode C)
  Thai                                      runs cut by nlpo3 (newmm's words), else PyThaiNLP newmm
  Korean    (``korean="morphemes"``)        each word cut into its morphemes by kiwipiepy, so 학교에,
                                            학교는, 학교를 all give 학교 (``korean="eojeol"``: words as written)
  Khmer, Lao                                each word cut by khmer-nltk, laonlp
  Burmese, and any script whose segmenter is not installed: character n-grams of each word
                                            (``--char-ngrams N``, default 2)

(``segmenters`` says which package each language uses and why.) A compiled scan (``scripts.post_scripts``)
finds the posts that hold a run of two or more characters of Chinese, Japanese or Thai (a run of one character
is one word whatever the segmenter): only those posts are touched, and a segmenter is imported only when such a
post is found, so a few lone CJK characters in an English file cost nothing, and every other post (English,
Russian, ...) goes to the fast kernel untouched. Korean, Khmer and Lao words are cut after the kernel, once per
distinct word (a compiled pass then replaces the token ids). Case folding, symbols, numbers, URLs and the other
cleaning steps are the kernel's and ``tokenize.preprocess``'s, as for ``fast``: the segmenters only decide where
words end. When a pure-Python segmenter runs (a fall-back) on a large share of such text (at least
``PROCESS_MIN_BYTES``) the posts are segmented in two worker processes, batch by batch (they hold the GIL; the
compiled ones run in the tokenizer's threads: measured, two processes cost them more in copies than they gain).
Chinese posts go to rjieba over their bytes (``chinese.segment_rows``: jieba cuts each block of Han on its own, so
a call on many runs of a batch, one per line, gives each run its own words; rjieba cuts without the GIL,
so the tokenizer's two threads cut in parallel); a Chinese post with Thai in it takes the path of one call per
batch over Python strings (``Segmenter.batch``). A post with Hangul starts loading Kiwi in a background thread
(``segmenters.prefetch``), so its second of start-up runs beside the tokenizing. The workers are forked (they inherit the
segmenters already loaded, and a spawned worker would re-run the caller's main script, which a script without
a ``__main__`` guard cannot survive); they get plain strings.

Bounded work: a run or word given to a segmenter is cut into pieces of at most ``MAX_RUN_CHARS`` characters
(after a sentence end when the piece has one), each segmented on its own, and a character for the n-grams holds
at most ``ngrams.MAX_CLUSTER_CHARS`` code points; both cuts are counted and said in the notes. So the work on a
post is linear in its length, whatever it holds.

``char-ngrams`` is script-agnostic: every word of the fast tokenizer becomes its character n-grams (words of
at most N characters stay whole).

Segmentation is a function of one post's own text (which segmenter runs depends on the post and on what is
installed, never on the other posts), so the sensitivity arguments are unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from .. import reading
from . import segmenters
from .intern import string_buffers
from .ngrams import char_ngrams_counted, replace_tokens
from .scripts import (
    HAN,
    HANGUL,
    KANA,
    KHMER,
    LAO,
    MYANMAR,
    RUN_CJK,
    RUN_THAI,
    SCRIPT_NAMES,
    THAI,
    post_scripts,
    token_scripts,
    tokens_per_script,
)
from .tokens import Tokenized

DEFAULT_CHAR_NGRAMS = 2
KOREAN_MODES = tuple(reading.KOREAN_MODES)  # declared once, with what each makes of a word, in ``reading``
# kiwipiepy's tags of the content morphemes (``korean="content"``): nouns, pronouns and numerals, roots, foreign
# words, Chinese characters and numbers; verb and adjective stems, given as their lemma (stem + 다)
CONTENT_TAGS = frozenset({"NNG", "NNP", "NR", "NP", "XR", "SL", "SH", "SN"})
LEMMA_TAGS = frozenset({"VV", "VA"})
# Hangul jamo (conjoining, compatibility, extended A and B): a piece that starts with one is an ending cut from a
# syllable's final consonant (ᆫ, ᆯ, ᆫ다), never an item unless asked for (``korean="all-morphemes"``)
_JAMO = re.compile("^[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff]")
# A script below this share of the tokens barely reaches a release (its items are few and rare): the notes do
# not ask to install its missing segmenter, and say Korean 'eojeol' would skip Kiwi's start-up.
SCRIPT_MATTERS_SHARE = 0.01
KOREAN_FEW_SHARE = SCRIPT_MATTERS_SHARE
PROCESS_MIN_BYTES = 1_000_000  # at least this much text to segment: two worker processes
_CHUNK_BYTES = 256_000  # posts per task of the worker processes (about)
# A run (Chinese, Japanese, Thai) or word (Korean, Khmer, Lao) longer than this is segmented in pieces of at
# most this many characters: a sentence is far shorter, and a bounded piece bounds each segmenter call (so
# a post's work is linear in its length; SudachiPy also refuses inputs over 49,149 bytes).
MAX_RUN_CHARS = 4000

_CJK = (
    "\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_THAI_RUN = re.compile("[\u0e00-\u0e7f]+")
_PIECE_END = re.compile("[。！？!?\n]")
_RUN_GROUPS = {r: re.compile(f"({r.pattern})") for r in (_CJK_RUN, _THAI_RUN)}  # for re.split: the runs kept

_RUN_LANGUAGES = ("Chinese", "Japanese", "Thai")  # segmented in the text, before the kernel
_WORD_SCRIPTS = {HANGUL: "Korean", KHMER: "Khmer", LAO: "Lao"}  # segmented word by word, after it
_LANGUAGE_SCRIPTS = {
    "Chinese": (HAN,),
    "Japanese": (HAN, KANA),
    "Thai": (THAI,),
    **{language: (code,) for code, language in _WORD_SCRIPTS.items()},
}


def pieces(run: str, limit: int = MAX_RUN_CHARS) -> list[str]:
    """``run`` cut into pieces of at most ``limit`` characters, each after the last sentence end it holds
    (if any): linear in the run's length."""
    if len(run) <= limit:
        return [run]
    out = []
    start = 0
    while len(run) - start > limit:
        end = start + limit
        ends = [m.end() for m in _PIECE_END.finditer(run, start, end)]
        cut = ends[-1] if ends and ends[-1] < end else end
        out.append(run[start:cut])
        start = cut
    out.append(run[start:])
    return out


@dataclass
class Cuts:
    """Work cut short to keep it linear (counted for the notes)."""

    runs: int = 0  # runs or words longer than MAX_RUN_CHARS, segmented in pieces
    clusters: int = 0  # characters of more than MAX_CLUSTER_CHARS code points, cut

    def add(self, other: Cuts) -> None:
        self.runs += other.runs
        self.clusters += other.clusters

    def notes(self) -> list[str]:
        from .ngrams import MAX_CLUSTER_CHARS

        out = []
        if self.runs:
            out.append(
                f"{self.runs:,} run(s) of text without spaces longer than {MAX_RUN_CHARS:,} characters were "
                f"segmented in pieces of at most {MAX_RUN_CHARS:,} (a word across a cut is split)"
            )
        if self.clusters:
            out.append(
                f"{self.clusters:,} character(s) with more than {MAX_CLUSTER_CHARS} combining marks or subscripts "
                f"were cut after {MAX_CLUSTER_CHARS} code points for the character n-grams"
            )
        return out


def _spaced(run_re: re.Pattern, cut: Callable[[str], str], text: str, cuts: Cuts) -> str:
    def one(m: re.Match) -> str:
        run = m.group()
        if len(run) == 1:  # one character is one word, whatever the segmenter
            return f" {run} "
        parts = pieces(run)
        cuts.runs += len(parts) > 1
        return " " + " ".join(cut(p) for p in parts) + " "

    return run_re.sub(one, text)


_POST_SEP = "\x00"  # between posts in ``_spaced_batch`` (a post holding one takes the path of one call per post)


def _spaced_batch(run_re: re.Pattern, seg: segmenters.Segmenter, texts: list[str], cuts: Cuts) -> list[str]:
    """``_spaced`` for many posts with one segmenter call, for a segmenter whose runs are independent
    (``Segmenter.batch``, which returns each run's words with a space on both sides): the posts are joined, the
    runs found by one C-level split and put back by one join, so there is no Python work per run or per post."""
    joined = _POST_SEP.join(texts)
    if joined.count(_POST_SEP) != len(texts) - 1:  # a post holds the separator itself: one call per post
        return [_spaced_runs(run_re, seg, t, cuts) for t in texts]
    return _spaced_runs(run_re, seg, joined, cuts).split(_POST_SEP)


def _spaced_runs(run_re: re.Pattern, seg: segmenters.Segmenter, text: str, cuts: Cuts) -> str:
    assert seg.batch is not None
    parts = run_re.split(text)  # run_re has one group: [text, run, text, run, ..., text]
    runs = parts[1::2]
    if not runs:
        return text
    long = max(map(len, runs)) > MAX_RUN_CHARS
    units = [p for r in runs for p in pieces(r)] if long else runs
    done = seg.batch(units)
    if long:  # the pieces of a run back together
        cuts.runs += sum(len(r) > MAX_RUN_CHARS for r in runs)
        it = iter(done)
        done = [" ".join(next(it) for _ in range(len(pieces(r)))) for r in runs]
    parts[1::2] = done
    return "".join(parts)


def segment_texts(texts: list[str], masks: list[int]) -> tuple[list[str], set[str], Cuts]:
    """Each post with its words separated by spaces, the languages segmented and the cuts. A post with kana is
    Japanese (its Han and kana runs are segmented as Japanese), one with Han and no kana Chinese; Thai runs
    are Thai. A run is set apart by spaces in any case; a post whose runs are all one character long needs no
    segmenter (none is loaded for it). Languages whose segmenter is not installed keep their runs whole
    (n-grams later)."""
    out, used, cuts = list(texts), set(), Cuts()
    han_kana, kana = (1 << HAN) | (1 << KANA), 1 << KANA
    rows = {
        "Chinese": [i for i, m in enumerate(masks) if m & han_kana and not m & kana],
        "Japanese": [i for i, m in enumerate(masks) if m & kana],
        "Thai": [i for i, m in enumerate(masks) if m & (1 << THAI)],  # after the CJK runs, as before
    }
    for language, idx in rows.items():
        thai = language == "Thai"
        run_re, run_bit = (_THAI_RUN, 1 << RUN_THAI) if thai else (_CJK_RUN, 1 << RUN_CJK)
        need = [i for i in idx if masks[i] & run_bit]
        seg = segmenters.load(language) if need else None
        if seg is None or seg.cut is None:
            need = []
        done = set(need)
        for i in idx:
            if i not in done:
                out[i] = run_re.sub(r" \g<0> ", out[i])
        if not need:
            continue
        used.add(language)
        if seg is not None and seg.batch is not None:
            new = _spaced_batch(_RUN_GROUPS[run_re], seg, [out[i] for i in need], cuts)
        else:
            assert seg is not None and seg.cut is not None
            new = [_spaced(run_re, seg.cut, out[i], cuts) for i in need]
        for i, text in zip(need, new):
            out[i] = text
    return out, used, cuts


def tokenization_text(
    tokenizer: str, n: int = DEFAULT_CHAR_NGRAMS, korean: str = "morphemes", detection: Detection | None = None
) -> str:
    """How ``tokenizer`` cut words, as a method (nothing about the data beyond which scripts needed a segmenter):
    the release report's line, with the segmenter of each language and its version. With the load's ``detection``
    it says what that load did (the segmenter that ran, with the version imported; a segmenter that was missing
    and what was done instead; "none in the text"), whatever is importable later; without it (the Spark engine,
    whose executors segment) what is installed here would do."""
    if tokenizer == "auto":
        named = [
            f"{language}: {_language_text(language, n, korean) if detection is None else _ran(language, n, korean, detection)}"
            for language in segmenters.LANGUAGES
        ]
        ran = detection is None or "Burmese" in detection.ngram_scripts
        burmese = f"character {n}-grams" if ran else "none in the text"
        return (
            f"auto: words segmented by script ({'; '.join(named)}; Burmese: {burmese}; other scripts: "
            "the fast tokenizer)"
        )
    if tokenizer == "char-ngrams":
        return f"char-ngrams: each word of the fast tokenizer cut into its character {n}-grams"
    return tokenizer


def _language_text(language: str, n: int, korean: str) -> str:
    """What ``auto`` does with ``language`` here: its first installed segmenter, or what it does without one."""
    if language == "Korean" and korean == "eojeol":
        return "words as written (eojeol)"
    cand = segmenters.chosen(language)
    if cand is not None:
        return cand.label() + (_korean_mode(korean) if language == "Korean" else "")
    missing = "did not start" if segmenters.failure(language) else "not installed"
    return f"{missing}, words as written (eojeol)" if language == "Korean" else f"{missing}, character {n}-grams"


def _korean_mode(korean: str) -> str:
    return "" if korean == reading.KOREAN_DEFAULT else f", Korean mode {korean}"


def _ran(language: str, n: int, korean: str, detection: Detection) -> str:
    """What one load did with ``language`` (its ``detection``)."""
    names = " or ".join(c.name for c in segmenters.CANDIDATES[language])
    if language in detection.segmented:
        seg = segmenters.load(language)  # loaded by this load: the one that ran
        mode = _korean_mode(korean) if language == "Korean" else ""
        return (seg.candidate.label() if seg is not None else "segmented") + mode
    if language == "Korean" and korean == "eojeol":
        return "words as written (eojeol)"
    if language in detection.missing:
        instead = "words as written (eojeol)" if language == "Korean" else f"character {n}-grams"
        if segmenters.failure(language):  # installed, but it failed on a sample: why is in the load's notes
            return f"did not start, {instead}"
        return f"{instead}: {names} was not installed"
    return "none in the text"


@dataclass
class Detection:
    """What ``auto`` (or ``char-ngrams``) found and did, for the notes (raw data: NOT private)."""

    segmented: set[str] = field(default_factory=set)  # languages a word segmenter ran on
    missing: set[str] = field(default_factory=set)  # languages found whose segmenter is not installed
    ngram_scripts: set[str] = field(default_factory=set)  # scripts split into character n-grams
    script_tokens: dict[str, int] = field(default_factory=dict)  # tokens per script
    cuts: Cuts = field(default_factory=Cuts)

    def share(self, language: str) -> float:
        """The share of the tokens in ``language``'s scripts (1.0 when no token was counted: unknown)."""
        total = sum(self.script_tokens.values())
        if not total:
            return 1.0
        return sum(self.script_tokens.get(SCRIPT_NAMES[code], 0) for code in _LANGUAGE_SCRIPTS[language]) / total

    def pinned(self, korean: str) -> tuple[tuple[str, str], ...]:
        """Reading options a redo needs to do what this load did, whatever is installed where it runs: Korean found
        while its segmenter was missing was kept as written, so a redo reads it with ``korean="eojeol"``."""
        return (("korean", "eojeol"),) if korean != "eojeol" and "Korean" in self.missing else ()

    def notes(self, n: int) -> list[str]:
        out = []
        total = sum(self.script_tokens.values())
        if total:
            shares = sorted(self.script_tokens.items(), key=lambda kv: -kv[1])
            out.append(
                "scripts detected (share of tokens): "
                + ", ".join(f"{name} {count / total:.1%}" for name, count in shares if count)
            )
        for language in sorted(self.segmented):
            seg = segmenters.load(language)
            if seg is not None:
                out.append(f"{language} text segmented into words with {seg.describe()}")
        korean = self.script_tokens.get(SCRIPT_NAMES[HANGUL], 0)
        if "Korean" in self.segmented and total and korean < KOREAN_FEW_SHARE * total:
            out.append(
                f"Korean words are {korean / total:.2%} of the tokens, yet loading Kiwi for them takes about a second "
                "or two: Korean 'eojeol' (--korean eojeol) keeps them as written and skips it"
            )
        for language in sorted(self.missing):
            instead = "kept as written" if language == "Korean" else f"character {n}-grams"
            share = self.share(language)
            if share < SCRIPT_MATTERS_SHARE:  # too little to matter: no call to install anything
                out.append(f"{language} text is {share:.2%} of the tokens: its words are {instead}")
                continue
            names = " or ".join(c.name for c in segmenters.CANDIDATES[language])
            failed = segmenters.failure(language)
            out.append(
                f"{language} text found but its segmenter ({names}) is not installed: its words are {instead} "
                "instead; install it with pip install 'dpsu[languages]'"
                if not failed
                else f"{language} text found but its segmenter did not start ({failed}): its words are {instead} "
                "instead; reinstall it with pip install 'dpsu[languages]'"
            )
        for script in sorted(self.ngram_scripts):
            why = segmenters.NO_SEGMENTER.get(script, "no word segmenter here")
            out.append(f"{script} text has no word segmenter ({why}): its words are character {n}-grams")
        return out + self.cuts.notes()


def segment_posts(
    texts: pa.Array, detection: Detection, pool: Callable[[], Executor] | None = None, korean: str = "morphemes"
) -> tuple[pa.Array, np.ndarray]:
    """``texts`` with spaces between the words of their Chinese, Japanese and Thai runs, and each post's
    script mask. Posts without such runs are not touched (not even copied when there are none). A post with
    Hangul starts loading the Korean segmenter (``korean`` not "eojeol") beside the tokenizing: ``finish`` needs it."""
    masks = post_scripts(texts)
    if korean != "eojeol" and (masks & (1 << HANGUL)).any():
        segmenters.prefetch("Korean")
    todo = masks & ((1 << HAN) | (1 << KANA) | (1 << THAI))
    texts = _chinese_rows(texts, masks, todo, detection)
    rows = np.flatnonzero(todo)
    if rows.size == 0:
        return texts, masks
    sel = masks[rows]
    need = {
        "Chinese": bool(((sel & (1 << RUN_CJK)) & ~(sel & (1 << KANA))).any()),
        "Japanese": bool(((sel & (1 << RUN_CJK)) & (sel & (1 << KANA))).any()),
        "Thai": bool((sel & (1 << RUN_THAI)).any()),
    }
    slow = False  # a pure-Python segmenter will run: worth two processes on a large share of text
    for language, present in need.items():
        seg = segmenters.load(language) if present else None
        if present and seg is None:
            detection.missing.add(language)
        slow |= seg is not None and not seg.candidate.compiled
    sub = texts.take(pa.array(rows))
    _, offs = string_buffers(sub)
    size = int(offs[-1] - offs[0])
    if pool is not None and slow and size >= PROCESS_MIN_BYTES:
        cuts = np.searchsorted(offs, offs[0] + np.arange(_CHUNK_BYTES, size, _CHUNK_BYTES))
        bounds = np.unique(np.concatenate([[0], cuts, [len(sub)]]))
        executor = pool()
        # the tasks carry Python strings: a pickled Arrow slice would carry its whole parent buffer, and the
        # forked workers then never touch Arrow or numba (whose locks another thread may hold at the fork)
        futures = [
            executor.submit(segment_texts, sub.slice(int(a), int(b - a)).to_pylist(), sel[a:b].tolist())
            for a, b in zip(bounds[:-1], bounds[1:])
            if b > a
        ]
        parts = [f.result() for f in futures]
        done = pa.array([t for p, _, _ in parts for t in p], type=pa.string())
        for _, used, cut in parts:
            detection.segmented |= used
            detection.cuts.add(cut)
    else:
        out, used, cut = segment_texts(sub.to_pylist(), sel.tolist())
        done = pa.array(out, type=pa.string())
        detection.segmented |= used
        detection.cuts.add(cut)
    return _put_rows(texts, rows, done), masks


def _chinese_rows(texts: pa.Array, masks: np.ndarray, todo: np.ndarray, detection: Detection) -> pa.Array:
    """``texts`` with the Chinese posts (Han, no kana, no Thai) segmented over the bytes in one segmenter call
    (``chinese.segment_rows``) when the segmenter allows it (``Segmenter.lines``) and a post holds a run of two
    characters or more; their rows cleared in ``todo``. Otherwise ``texts`` as given."""
    chinese = ((masks >> HAN) & 1).astype(np.bool_) & ((masks & ((1 << KANA) | (1 << THAI))) == 0)
    if not (masks[chinese] & (1 << RUN_CJK)).any():
        return texts
    seg = segmenters.load("Chinese")
    if seg is None or seg.lines is None:
        return texts
    from .chinese import segment_rows

    rows = np.flatnonzero(chinese)
    done = segment_rows(texts, rows, seg.lines, MAX_RUN_CHARS)
    if done is None:  # pragma: no cover - the words did not spell the runs: run by run instead
        return texts
    detection.segmented.add("Chinese")
    detection.cuts.runs += done[1]
    todo[rows] = 0
    return done[0]


def _put_rows(texts: pa.Array, rows: np.ndarray, new: pa.Array) -> pa.Array:
    """``texts`` with the posts at ``rows`` replaced by ``new``."""
    if rows.size == len(texts):  # all of them (a corpus in one language): nothing to put back
        return new.cast(texts.type)
    order = np.arange(len(texts), dtype=np.int64)
    order[rows] = len(texts) + np.arange(rows.size)
    both = pa.concat_arrays([texts.cast(pa.large_string()), new.cast(pa.large_string())])
    return both.take(pa.array(order)).cast(texts.type)


# ---- after the kernel: words cut further, per distinct token ------------------------------------------------
def korean_items(detected: Sequence[str], korean: str) -> str:
    """What the Korean items of a corpus loaded with ``korean`` are, in one sentence for the Release page, from
    its load's notes (``SourceInfo.detected``): "" when it holds no Korean."""
    if not any("Hangul" in d for d in detected):
        return ""
    if any(d.startswith("Korean text") and "kept as written" in d for d in detected):  # no segmenter ran
        return f"Korean items are {reading.KOREAN_MODES['eojeol']} (no Korean segmenter was installed at the load)."
    return f"Korean items ({korean}) are {reading.KOREAN_MODES[korean]}."


def korean_pieces(tagged: list[tuple[str, str]], korean: str) -> list[str]:
    """The items ``korean`` (a ``KOREAN_MODES`` mode but eojeol) makes of one word's (morpheme, tag) pairs."""
    if korean == "all-morphemes":
        return [form for form, _ in tagged]
    if korean == "content":
        out = []
        for form, tag in tagged:
            base = tag.split("-")[0]  # VV-I, VA-R: an irregular stem, given in its base form
            if base in LEMMA_TAGS:
                out.append(form + "다")
            elif base in CONTENT_TAGS:
                out.append(form)
        return out
    return [form for form, _ in tagged if not _JAMO.match(form)]


def _word_pieces(words: list[str], seg: segmenters.Segmenter, cuts: Cuts, korean: str) -> list[list[str]]:
    """The segmenter's pieces of each word (a word over ``MAX_RUN_CHARS`` characters segmented in pieces); Korean's
    as ``korean`` says (``korean_pieces``)."""
    parts = [pieces(w) for w in words]
    cuts.runs += sum(len(p) > 1 for p in parts)
    flat = [p for ps in parts for p in ps]
    if seg.tagged is not None:
        done = [korean_pieces(t, korean) for t in seg.tagged(flat)] if flat else []
    else:
        assert seg.words is not None
        done = seg.words(flat) if flat else []
    out, i = [], 0
    for ps in parts:
        out.append([w for piece in done[i : i + len(ps)] for w in piece])
        i += len(ps)
    return out


def finish(
    tok: Tokenized,
    n: int,
    detection: Detection,
    *,
    auto: bool,
    korean: str = "morphemes",
    strings: pa.Array | None = None,
) -> Tokenized:
    """The fast kernel's tokens of an ``auto`` (``auto=True``) or ``char-ngrams`` stream, with words cut further:
    for ``char-ngrams`` every word into its character n-grams; for ``auto`` Korean (``korean`` not "eojeol"),
    Khmer and Lao words by their segmenters, Burmese words and those of a language whose segmenter is not
    installed into n-grams, and the tokens per script counted into ``detection``.
    ``strings``: ``tok.unigrams`` as an Arrow array when the caller has one (building it from Python strings
    would import pandas through pyarrow's shim, a fixed cost the release path avoids)."""
    words = tok.unigrams.tolist()
    if not auto:
        new: list[list[str]] = []
        for w in words:
            grams, cut = char_ngrams_counted(w, n)
            detection.cuts.clusters += cut
            new.append(grams)
        return replace_tokens(tok, new)
    scripts = token_scripts(strings if strings is not None else pa.array(tok.unigrams, type=pa.string()))
    ngram_codes = [MYANMAR]
    if "Chinese" in detection.missing or "Japanese" in detection.missing:
        ngram_codes += [HAN, KANA]
    if "Thai" in detection.missing:
        ngram_codes.append(THAI)
    todo: dict[int, list[int]] = {}  # script -> the unigrams to cut
    for code in [*ngram_codes, *_WORD_SCRIPTS]:
        if code == HANGUL and korean == "eojeol":
            continue
        found = np.flatnonzero(scripts == code)
        if found.size:
            todo[code] = found.tolist()
    if not todo:
        count_scripts(tok.codes, scripts, detection)
        return tok
    cut_words: list[Sequence[str]] = list(zip(words))  # each word as itself (one-tuples: built in C)
    for code, idx in todo.items():
        language = _WORD_SCRIPTS.get(code)
        seg = segmenters.load(language) if language else None
        if seg is not None:
            detection.segmented.add(seg.language)
            for i, got in zip(idx, _word_pieces([words[i] for i in idx], seg, detection.cuts, korean)):
                cut_words[i] = got
            continue
        if code == HANGUL:  # no Korean segmenter: words as written, as with korean="eojeol"
            detection.missing.add("Korean")
            continue
        if language:
            detection.missing.add(language)
        elif code == MYANMAR:
            detection.ngram_scripts.add(SCRIPT_NAMES[code])
        for i in idx:
            cut_words[i], cut = char_ngrams_counted(words[i], n)
            detection.cuts.clusters += cut
    tok = replace_tokens(tok, cut_words)
    count_scripts(tok.codes, token_scripts(pa.array(tok.unigrams, type=pa.string())), detection)
    return tok


def count_scripts(codes: np.ndarray, scripts: np.ndarray, detection: Detection) -> None:
    """Tokens per script (``scripts``: each token's script, by its first letter) into ``detection.script_tokens``."""
    if len(scripts) == 0:
        return
    per_script = tokens_per_script(codes, scripts, len(SCRIPT_NAMES))
    detection.script_tokens = {SCRIPT_NAMES[s]: int(c) for s, c in enumerate(per_script) if c}
