"""The auto tokenizer: words by script (rjieba, fugashi + unidic-lite, nlpo3; jieba, SudachiPy and PyThaiNLP
newmm as fall-backs; khmer-nltk, laonlp; character n-grams), identical to each reference segmenter on a corpus of
its language, the fast tokenizer's exact tokens on space-separated text, the char-ngrams tokenizer, and what is
reported."""

from __future__ import annotations

import csv
import dataclasses
import re
import sys

import fugashi
import jieba
import numpy as np
import pyarrow as pa
import pytest
import unidic_lite
import wordfreq
from hypothesis import given, settings
from hypothesis import strategies as st
from pythainlp.corpus import thai_words
from pythainlp.tokenize import word_tokenize
from sudachipy import Dictionary, SplitMode

from dpsu_core.corpus import segment, segmenters
from dpsu_core.corpus import tokenize as tk
from dpsu_core.corpus.ngrams import char_ngrams, clusters
from dpsu_core.corpus.tokenize import Preprocessing, TokenStream, tokenize
from dpsu_core.interfaces.cli import main

CHINESE = ["我爱北京天安门", "今天天气很好", "研究生命的起源", "他来到了网易杭研大厦", "小明硕士毕业于中国科学院计算所"]
JAPANESE = ["東京都に住んでいます", "今日はいい天気ですね", "外国人参政権について議論した", "すもももももももものうち"]
THAI = ["ภาษาไทยง่ายนิดเดียว", "ฉันรักประเทศไทย", "วันนี้อากาศดีมาก"]
SPACED = [
    "Alpha", "beta", "don't", "'quoted'", "ΔΈΛΤΑ", "straße", "İstanbul", "ǅemal", "ﬁne", "naïve", "nai\u0308ve",
    "😀", "👍🏽", "x1", "42", "...", "foo-bar", "ÅNGSTRÖM", "עברית", "العربية", "한국어", "сегодня", "हिन्दी",
    "zero\u200bwidth", "it’s", "<b>bold</b>", "&amp;", "http://x.org/a", "www.y.com",
]  # fmt: skip


def _posts(tok) -> list[list[str]]:
    return [list(tok.unigrams[tok.codes[a:b]]) for a, b in zip(tok.post_ptr[:-1], tok.post_ptr[1:])]


def run(texts, **kw) -> list[list[str]]:
    return _posts(tokenize(pa.array(texts, type=pa.string()), **kw))


def _random_posts(words, n, seed):
    """``n`` posts of 0 to 19 random words, each followed by a random separator (drawn in bulk)."""
    rng = np.random.default_rng(seed)
    seps = [" ", "  ", "\t", "\n", ", ", "—", " (", ") ", "。", "！"]
    lengths = rng.integers(0, 20, size=n)
    picks, gaps = rng.integers(0, len(words), size=(2, int(lengths.sum())))
    pieces = [str(words[w]) + seps[g % len(seps)] for w, g in zip(picks.tolist(), gaps.tolist())]
    ends = np.cumsum(lengths)
    return ["".join(pieces[a:b]) for a, b in zip((ends - lengths).tolist(), ends.tolist())]


_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")  # a post with kana is Japanese
_RUNS = {"zh": segment._CJK_RUN, "ja": segment._CJK_RUN, "th": segment._THAI_RUN}


def _language_corpus(lang: str, n_posts: int = 300, seed: int = 0) -> list[str]:
    """Posts of words drawn by frequency from the language's list, written without spaces, with the script's
    punctuation now and then (so a post has several runs)."""
    if lang == "th":
        words = [w for w in sorted(thai_words())[::7] if _RUNS[lang].fullmatch(w)]  # a few hold spaces
        freq = 1.0 / np.arange(1, len(words) + 1)
    else:
        top = sorted(wordfreq.get_frequency_dict(lang).items(), key=lambda kv: -kv[1])[:20000]
        top = [(w, f) for w, f in top if _RUNS[lang].fullmatch(w) and (lang == "ja" or not _KANA.search(w))]
        words, freq = [w for w, _ in top], np.array([f for _, f in top])
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(words), size=(n_posts, 30), p=freq / freq.sum())
    punct = {"zh": "，。", "ja": "、。", "th": "  "}[lang]
    return [
        "".join(words[i] + (punct[int(rng.integers(2))] if rng.random() < 0.15 else "") for i in row) for row in picks
    ]


def _by_runs(texts: list[str], lang: str, reference) -> list[list[str]]:
    """The reference segmenter's words of each run of each post, in order."""
    return [[w for m in _RUNS[lang].finditer(t) for w in reference(m.group())] for t in texts]


def test_chinese_words_are_rjiebas_and_jiebas_on_a_corpus():
    assert segmenters.load("Chinese").candidate.name == "rjieba"
    texts = _language_corpus("zh")
    got = run(texts)
    assert got == _by_runs(texts, "zh", lambda r: jieba.lcut(r, HMM=True))  # the reference: jieba itself
    assert sum(map(len, got)) > 5000 and run(["我爱北京天安门"]) == [["我", "爱", "北京", "天安门"]]


def test_japanese_words_are_mecab_unidic_lite_surfaces_on_a_corpus():
    assert segmenters.load("Japanese").candidate.name == "fugashi"
    tagger = fugashi.Tagger(f'-r /dev/null -d "{unidic_lite.DICDIR}"')
    texts = _language_corpus("ja")
    got = run(texts, prep=Preprocessing(lowercase=False))
    assert got == _by_runs(texts, "ja", lambda r: [w.surface for w in tagger(r)])
    assert sum(map(len, got)) > 5000
    assert run(["東京は日本の首都です"]) == [["東京", "は", "日本", "の", "首都", "です"]]


def test_thai_words_are_newmms_on_a_corpus():
    assert segmenters.load("Thai").candidate.name == "nlpo3"
    texts = _language_corpus("th")
    got = run(texts)
    assert got == _by_runs(texts, "th", lambda r: word_tokenize(r, engine="newmm", keep_whitespace=False))
    assert sum(map(len, got)) > 5000
    assert run(THAI) == [word_tokenize(s, engine="newmm", keep_whitespace=False) for s in THAI]


@pytest.mark.parametrize("hidden, fallback", [("rjieba", "jieba"), ("nlpo3", "pythainlp"), ("fugashi", "sudachipy")])
def test_pure_python_fallback_when_the_compiled_one_is_missing(monkeypatch, hidden, fallback):
    monkeypatch.setitem(sys.modules, hidden, None)  # import raises ImportError: as if not installed
    monkeypatch.setattr(segmenters.Candidate, "installed", lambda self: self.name != hidden)
    segmenters.forget()
    try:
        texts = {"rjieba": CHINESE, "nlpo3": THAI, "fugashi": JAPANESE}[hidden]
        with TokenStream("auto", Preprocessing(), workers=1) as stream:
            stream.submit(pa.array(texts))
            got = _posts(stream.finish())
            notes = stream.detection.notes(2)
        if fallback == "jieba":
            assert got == [jieba.lcut(t) for t in texts]  # the same words, slower
        if fallback == "sudachipy":
            sudachi = Dictionary(dict="core").tokenizer(mode=SplitMode.C)
            assert got == [[m.surface() for m in sudachi.tokenize(t)] for t in texts]
        if fallback == "pythainlp":
            assert got == [word_tokenize(t, engine="newmm", keep_whitespace=False) for t in texts]
        line = [n for n in notes if "segmented into words" in n]
        assert len(line) == 1 and "pure Python, the compiled segmenter is not installed" in line[0]
        package = next(c for cs in segmenters.CANDIDATES.values() for c in cs if c.name == fallback).packages[0]
        assert f"{package} " in segment.tokenization_text("auto")  # the report names the one that ran
    finally:
        segmenters.forget()


def test_khmer_and_lao_words_are_their_segmenters_burmese_ngrams():
    from khmernltk import word_tokenize as khmer_words
    from laonlp.tokenize import word_tokenize as lao_words

    khmer, lao = "ខ្ញុំស្រឡាញ់ប្រទេសកម្ពុជា", "ພາສາລາວໃນປັດຈຸບັນ"
    words = run([khmer, lao, "မြန်မာ"])
    assert words[0] == khmer_words(khmer) == ["ខ្ញុំ", "ស្រឡាញ់", "ប្រទេស", "កម្ពុជា"]
    assert words[1] == lao_words(lao) == ["ພາສາລາວ", "ໃນ", "ປັດຈຸບັນ"]
    assert words[2] == char_ngrams("မြန်မာ", 2)
    assert clusters("ខ្ញុំ") == ["ខ្ញុំ"]  # a letter, its subscript and its vowel sign are one character
    assert run(["မြန်မာ"], char_ngrams=3) == [char_ngrams("မြန်မာ", 3)]


def test_a_zero_width_space_in_thai_khmer_lao_burmese_chinese_is_the_word_break_its_writer_put():
    """In a script written without spaces a zero width space is the optional break between words: the segmenters
    then cut each piece (the same words as with a space there), and a break the segmenter would not make is kept."""
    from khmernltk import word_tokenize as khmer_words
    from laonlp.tokenize import word_tokenize as lao_words

    newmm = [word_tokenize(t, engine="newmm", keep_whitespace=False) for t in THAI]
    hinted = ["\u200b".join(words) for words in newmm]  # each word followed by a zero width space
    assert all("\u200b" in h for h in hinted)
    assert run(hinted) == newmm == run([" ".join(words) for words in newmm])
    assert run(hinted, tokenizer="fast") == newmm  # without a segmenter, the breaks are the writer's
    # a break the segmenter would not make: ภาษาไทย is one newmm word, cut where the writer cut it
    assert run(["ภาษา\u200bไทย"]) == [["ภาษา", "ไทย"]] and run(["ภาษาไทย"]) == [["ภาษาไทย"]]
    khmer, lao = ["ខ្ញុំ", "ស្រឡាញ់", "ប្រទេស", "កម្ពុជា"], lao_words("ພາສາລາວໃນປັດຈຸບັນ")
    assert khmer_words("".join(khmer)) == khmer
    assert run(["\u200b".join(khmer), "\u200b".join(lao)]) == [khmer, lao]
    assert run(["မြန်\u200bမာ"]) == [char_ngrams("မြန်", 2) + char_ngrams("မာ", 2)]
    assert run(["北京\u200b天安门", "ok\u200b北京"], tokenizer="fast") == [["北京", "天安门"], ["ok", "北京"]]
    # between Latin letters it is no break (as a soft hyphen): ignored, in a post with Thai too
    assert run(["zero\u200bwidth ภาษา\u200bไทย"]) == [["zerowidth", "ภาษา", "ไทย"]]


def test_lone_characters_load_no_segmenter(monkeypatch):
    """A run of one character is one word whatever the segmenter: a few lone CJK characters in an English
    file load nothing (no start-up cost) and give the fast tokenizer's tokens."""
    monkeypatch.setattr(segmenters, "_loaded", {})
    texts = ["I love 中 food", "the 日 rises", "hello เ world"]
    assert run(texts) == run(texts, tokenizer="fast")
    assert segmenters._loaded == {}


@pytest.mark.parametrize("prep", [Preprocessing(), Preprocessing(lowercase=False, strip_symbols=False)])
def test_space_separated_text_is_tokenized_exactly_as_fast(prep):
    texts = _random_posts(SPACED, 3000, seed=7)
    assert run(texts, prep=prep) == run(texts, prep=prep, tokenizer="fast")


def test_char_ngrams_tokenizer_cuts_every_fast_word():
    texts = ["Hello world, it's 2024", "北京天安门"]
    fast = run(texts, tokenizer="fast")
    got = run(texts, tokenizer="char-ngrams", char_ngrams=3)
    assert got == [[g for w in post for g in char_ngrams(w, 3)] for post in fast]
    assert got[0][:3] == ["hel", "ell", "llo"] and "it'" in got[0] and got[1][0] == "北京天"


@pytest.mark.parametrize("workers, batches", [(2, 1), (2, 3)])
def test_streamed_parallel_auto_equals_one_thread(monkeypatch, workers, batches):
    monkeypatch.setattr(tk, "_PARALLEL_MIN_BYTES", 1)
    texts = _random_posts(SPACED + CHINESE + JAPANESE + THAI + ["ខ្ញុំស្រឡាញ់"], 2000, seed=batches)
    whole = pa.array(texts, type=pa.string())
    reference = tokenize(whole, workers=1)
    with TokenStream("auto", Preprocessing(), workers=workers) as stream:
        for part in np.array_split(np.arange(len(texts)), batches):
            stream.submit(whole.slice(int(part[0]), len(part)))
        got = stream.finish()
    assert _posts(got) == _posts(reference)


@pytest.mark.parametrize("hide", [None, "rjieba"])
def test_worker_processes_give_the_same_words(monkeypatch, hide):
    """Two worker processes run only for a pure-Python segmenter (here jieba, rjieba hidden)."""
    if hide:
        monkeypatch.setitem(sys.modules, hide, None)
    segmenters.forget()
    monkeypatch.setattr(segment, "PROCESS_MIN_BYTES", 1)
    monkeypatch.setattr(segment, "_CHUNK_BYTES", 2000)  # several tasks for the two processes
    texts = _random_posts(CHINESE + JAPANESE + THAI + SPACED, 400, seed=3)
    try:
        monkeypatch.setattr(segment, "PROCESS_MIN_BYTES", 10**12)
        in_process = run(texts, workers=1)
        monkeypatch.setattr(segment, "PROCESS_MIN_BYTES", 1)
        with TokenStream("auto", Preprocessing(), workers=1) as stream:
            stream.submit(pa.array(texts, type=pa.string()))
            got = _posts(stream.finish())
            assert (stream._processes is not None) == bool(hide)  # the two worker processes did run
    finally:
        segmenters.forget()
    assert got == in_process


def test_detection_shares_and_segmenters():
    with TokenStream("auto", Preprocessing(), workers=1) as stream:
        stream.submit(pa.array(["我爱北京天安门", "東京は日本の首都です", "hello world", "ภาษาไทย"]))
        tok = stream.finish()
        det = stream.detection
    assert det.segmented == {"Chinese", "Japanese", "Thai"} and not det.missing
    assert sum(det.script_tokens.values()) == tok.n_tokens == 4 + 6 + 2 + 1
    assert det.script_tokens["Latin"] == 2 and det.script_tokens["Thai"] == 1
    notes = det.notes(2)
    assert notes[0].startswith("scripts detected (share of tokens): ") and "Latin 15.4%" in notes[0]
    zh = [n for n in notes if n.startswith("Chinese text segmented into words with rjieba ")]
    assert len(zh) == 1 and "jieba's dictionary" in zh[0]
    report = segment.tokenization_text("auto")
    for name in ("rjieba", "fugashi", "unidic-lite", "nlpo3", "kiwipiepy", "khmer-nltk", "laonlp"):
        assert f"{name} " in report  # the segmenter and its version
    assert "Korean: words as written" in segment.tokenization_text("auto", korean="eojeol")


def test_missing_segmenter_falls_back_to_ngrams_and_says_so(monkeypatch):
    for name in ("rjieba", "jieba"):  # import raises ImportError: as if not installed
        monkeypatch.setitem(sys.modules, name, None)
    segmenters.forget()
    try:
        with TokenStream("auto", Preprocessing(), workers=1) as stream:
            stream.submit(pa.array(["我爱北京", "hello"]))
            got = _posts(stream.finish())
            notes = stream.detection.notes(2)
    finally:
        segmenters.forget()
    assert got == [["我爱", "爱北", "北京"], ["hello"]]
    assert any("Chinese text found but its segmenter (rjieba or jieba) is not installed" in n for n in notes)


def test_cli_releases_chinese_words_and_reports_detection(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = ["user,text"]
    for u in range(300):
        rows.append(f"u{u},{''.join(rng.choice(CHINESE, 3))}")
    src = tmp_path / "zh.csv"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    # a fixed seed (a teaching release): with fresh noise one word in ~40 runs falls short of its threshold
    argv = ["release", str(src), "-m", "policy-laplace", "-e", "3", "-d", "1e-4", "--seed", "7", "-o", str(out)]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, err
    with out.open(encoding="utf-8", newline="") as f:
        items = {row["item"] for row in csv.DictReader(line for line in f if not line.startswith("#"))}
    assert {"北京", "天安门", "今天天气", "中国科学院"} <= items
    assert (
        "segmentation (raw data, not private): scripts detected (share of tokens): Han (Chinese characters) 100.0%"
        in err
    )
    assert "segmentation (raw data, not private): Chinese text segmented into words with rjieba" in err


def test_worker_processes_run_from_a_script_without_a_main_guard(tmp_path):
    """The generated release script has no ``if __name__ == "__main__"``: the workers must not re-run it."""
    import subprocess
    from pathlib import Path

    script = tmp_path / "unguarded.py"
    script.write_text(
        "import sys\n"
        "sys.modules['rjieba'] = None  # jieba, pure Python: the worker processes run\n"
        "import pyarrow as pa\n"
        "from dpsu_core.corpus import segment\n"
        "from dpsu_core.corpus.tokenize import Preprocessing, TokenStream\n"
        "segment.PROCESS_MIN_BYTES = 1\n"
        "with TokenStream('auto', Preprocessing(), workers=1) as s:\n"
        "    s.submit(pa.array(['我爱北京天安门'] * 50))\n"
        "    tok = s.finish()\n"
        "    assert s._processes is not None\n"
        "print(sorted(set(tok.unigrams.tolist())))\n",
        encoding="utf-8",
    )
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=repo,
        env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(sorted(["我", "爱", "北京", "天安门"]))


def test_cli_bad_char_ngrams_is_one_line(tmp_path, capsys):
    src = tmp_path / "c.csv"
    src.write_text("user,text\na,hello\nb,world\n", encoding="utf-8")
    argv = [
        "release",
        str(src),
        "-m",
        "pcr",
        "-e",
        "1",
        "-d",
        "1e-3",
        "-o",
        str(tmp_path / "o.csv"),
        "--char-ngrams",
        "0",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["dpsu: error: --char-ngrams must be a whole number from 1 to 8, got 0"]


_SEGMENTED = "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\ua9e0-\ua9ff\uaa60-\uaa7f\U00020000-\U0003ffff]"


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        st.text(st.characters(codec="utf-8"), max_size=40).filter(lambda t: not re.search(_SEGMENTED, t)),
        min_size=1,
        max_size=8,
    )
)
def test_auto_equals_fast_on_any_text_without_unspaced_scripts(texts):
    """Korean too with --korean eojeol (today's behaviour): its words as written."""
    eojeol = Preprocessing(korean="eojeol")
    for prep in (eojeol, Preprocessing(lowercase=False, strip_symbols=False, strip_urls=False, korean="eojeol")):
        assert run(texts, prep=prep) == run(texts, prep=prep, tokenizer="fast")
    if not re.search("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]", "".join(texts)):  # no Hangul: the default too
        assert run(texts) == run(texts, tokenizer="fast")


def test_chinese_posts_go_to_rjieba_in_one_call_and_back():
    """The posts of a batch are joined by NUL for one rjieba call (the runs are independent): a post that holds a
    NUL itself takes one call per post, with the same words."""
    texts = ["我爱北京\x00天安门", "今天天气很好，研究生命的起源", "他来到了网易杭研大厦2024年"]
    expected = _by_runs(texts, "zh", lambda r: jieba.lcut(r, HMM=True))
    expected[2].insert(-1, "2024")
    assert run(texts) == expected
    assert run(texts[1:]) == expected[1:]


def test_chinese_posts_over_the_bytes_equal_run_by_run(monkeypatch):
    """The Chinese posts of a batch go to rjieba in one call over their bytes (``chinese.segment_rows``): per post
    the same words as the run-by-run path, long runs cut in the same pieces and counted, other posts untouched."""
    from dpsu_core.corpus import chinese

    long_run = "".join(_language_corpus("zh", 200, seed=7))  # one run of over 2 * MAX_RUN_CHARS characters
    long_run = re.sub("[，。]", "", long_run)
    assert len(long_run) > 2 * segment.MAX_RUN_CHARS
    texts = _language_corpus("zh", 400, seed=3) + [
        "𠀀𠀁中文abc", "々中国人", "中", "x 中 y", "泰国ภาษาไทย中文", "日本語です", "emoji😀中文字", "", "hello", long_run,
        "A股和T恤", "ａｂｃ中文ＡＢＣ", "中\u0301文",
    ]  # fmt: skip
    used = []
    real = chinese.segment_rows

    def spy(*args, **kw):
        got = real(*args, **kw)
        used.append(got is not None)
        return got

    monkeypatch.setattr(chinese, "segment_rows", spy)

    def tokens(texts):
        with TokenStream("auto", workers=1) as stream:
            stream.submit(pa.array(texts, type=pa.string()))
            return _posts(stream.finish()), stream.detection

    fast, detection = tokens(texts)
    assert used == [True] and detection.cuts.runs == 1
    seg = segmenters.load("Chinese")
    monkeypatch.setitem(segmenters._loaded, "Chinese", dataclasses.replace(seg, lines=None))
    slow, slow_detection = tokens(texts)
    assert used == [True] and slow_detection.cuts.runs == 1
    assert fast == slow
    assert fast[-3][:2] == ["a", "股"] and fast[400][-1] == "abc" and "".join(fast[400][:-1]) == "𠀀𠀁中文"
    assert fast[405] == ["日本", "語", "です"] and fast[408] == ["hello"] and "ภาษาไทย" in "".join(fast[404])
    assert fast[:400] == _by_runs(texts[:400], "zh", lambda r: jieba.lcut(r, HMM=True))


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_chinese_byte_path_on_a_slice_keeps_every_post(kind):
    """A worker's share of a batch is a slice of it (an offset into the buffers): every post comes back, in order,
    the chosen ones with their runs spaced by their words, the others as they were, in the input's type."""
    from dpsu_core.corpus import chinese

    base = pa.array(["x", "我爱北京天安门", "hello 今天天气很好", "abc", "中"] * 3).cast(kind)
    part = base.slice(2, 9)
    rows = np.array([0, 2, 4, 5, 7])  # the posts with Han in the slice
    out, long_runs = chinese.segment_rows(part, rows, segmenters.load("Chinese").lines, segment.MAX_RUN_CHARS)
    assert out.type == kind and long_runs == 0 and len(out) == 9
    got = [t.split() for t in out.to_pylist()]
    assert got[:4] == [["hello", "今天天气", "很", "好"], ["abc"], ["中"], ["x"]]
    assert got[4] == ["我", "爱", "北京", "天安门"] and got[5:] == got[:4]


def test_a_missing_segmenter_is_worth_an_install_note_only_when_its_script_matters(monkeypatch):
    """English posts with one Han and one Hangul word: no call to install the Chinese or Korean segmenter (their
    share is below SCRIPT_MATTERS_SHARE), only what became of those words; Chinese posts still get it."""
    from dpsu_core.corpus.segment import SCRIPT_MATTERS_SHARE

    for name in ("rjieba", "jieba", "kiwipiepy"):  # import raises ImportError: as if not installed
        monkeypatch.setitem(sys.modules, name, None)
    segmenters.forget()
    english = [f"the flight {i} was late again and the crew was kind" for i in range(30)]
    try:
        with TokenStream("auto", Preprocessing(), workers=1) as stream:
            stream.submit(pa.array([*english, "北京 hello", "학교에 hello"]))
            stream.finish()
            few = stream.detection.notes(2)
        with TokenStream("auto", Preprocessing(), workers=1) as stream:
            stream.submit(pa.array(["我爱北京", "今天天气很好", "hello"]))
            stream.finish()
            many = stream.detection.notes(2)
    finally:
        segmenters.forget()
    assert 2 / 300 < SCRIPT_MATTERS_SHARE
    assert not [n for n in few if "not installed" in n or "pip install" in n], few
    assert any(n.startswith("Chinese text is 0.") and "character 2-grams" in n for n in few), few
    assert any(n.startswith("Korean text is 0.") and "kept as written" in n for n in few), few
    assert any("Chinese text found but its segmenter (rjieba or jieba) is not installed" in n for n in many), many
