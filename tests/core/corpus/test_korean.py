"""Korean under the auto tokenizer: each word cut into its morphemes by kiwipiepy (particles and endings split
from their stems, so 학교에/학교는/학교를 are one item for the users who wrote them); --korean eojeol keeps the
words as written (the fast tokenizer's)."""

from __future__ import annotations

import csv

import numpy as np
import pyarrow as pa
from kiwipiepy import Kiwi

from dpsu_core.corpus import LoadOptions, load_corpus
from dpsu_core.corpus.tokenize import Preprocessing, TokenStream, tokenize
from dpsu_core.interfaces.cli import main
from dpsu_core.reading import KOREAN_MODES

NOUNS = ["학교", "친구", "음악", "영화", "커피", "도서관", "시장", "회사"]
PARTICLES = ["에", "는", "를", "가", "의", "에서", "도", ""]


def _posts(texts, **kw) -> list[list[str]]:
    tok = tokenize(pa.array(texts, type=pa.string()), **kw)
    return [list(tok.unigrams[tok.codes[a:b]]) for a, b in zip(tok.post_ptr[:-1], tok.post_ptr[1:])]


def test_particles_are_split_from_their_stems():
    got = _posts(["학교에 갔다", "학교는 크다", "학교를 좋아한다"])
    assert all(post[0] == "학교" for post in got)
    assert [post[1] for post in got] == ["에", "는", "를"]
    assert _posts(["BTS의 노래"])[0][:2] == ["bts", "의"]  # a particle on a Latin word too


def test_words_are_kiwis_morphemes_word_by_word_on_a_corpus():
    rng = np.random.default_rng(0)
    eojeols = [n + p for n in NOUNS for p in PARTICLES] + ["갔다", "좋아한다", "먹었어요", "했습니다"]
    texts = [" ".join(rng.choice(eojeols, 12)) for _ in range(200)]
    kiwi = Kiwi()
    every = [[t.form for w in text.split() for t in kiwi.tokenize(w)] for text in texts]
    assert _posts(texts, prep=Preprocessing(korean="all-morphemes")) == every
    # the default: the same morphemes but the endings that are a lone jamo (좋아한다: 좋아하 + ᆫ다)
    assert any("ᆫ다" in post for post in every)
    assert _posts(texts) == [[f for f in post if not ("\u1100" <= f[0] <= "\u11ff")] for post in every]


def test_eojeol_keeps_the_words_as_written():
    texts = ["학교에 갔다", "학교는 크다 hello"]
    eojeol = Preprocessing(korean="eojeol")
    assert (
        _posts(texts, prep=eojeol)
        == _posts(texts, tokenizer="fast")
        == [["학교에", "갔다"], ["학교는", "크다", "hello"]]
    )


def test_one_item_for_the_users_of_its_forms(tmp_path):
    """Every user writes the noun with another particle: as morphemes the noun reaches all of them."""
    src = tmp_path / "ko.csv"
    rows = ["user,text"] + [f"u{u},{NOUNS[0]}{PARTICLES[u % 3]} 좋다" for u in range(30)]
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    morph = load_corpus(src)
    eojeol = load_corpus(src, LoadOptions(korean="eojeol"))
    vocab = list(morph.vocab)
    assert "학교" in vocab and morph.user_counts[vocab.index("학교")] == 30
    assert {"학교에", "학교는", "학교를"} <= set(eojeol.vocab) and "학교" not in set(eojeol.vocab)
    assert "Korean: kiwipiepy " in morph.source.tokenization
    assert "Korean: words as written" in eojeol.source.tokenization


def test_cli_korean_flag(tmp_path, capsys):
    src = tmp_path / "ko.csv"
    src.write_text("user,text\n" + "".join(f"u{u},학교에 갔다\n" for u in range(200)), encoding="utf-8")
    out = tmp_path / "out.csv"
    base = ["release", str(src), "-m", "policy-laplace", "-e", "3", "-d", "1e-4", "-o", str(out)]
    assert main([*base, "--korean", "eojeol"]) == 0
    with out.open(encoding="utf-8", newline="") as f:
        assert {row["item"] for row in csv.DictReader(f)} == {"학교에", "갔다"}
    capsys.readouterr()
    assert main([*base, "--korean", "words"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"dpsu: error: --korean must be one of {', '.join(KOREAN_MODES)}, got 'words'"]


def test_kiwi_is_loaded_beside_the_tokenizing_only_for_morphemes():
    """A post with Hangul starts loading Kiwi in the background when its morphemes are wanted; with eojeol Kiwi is
    never loaded (nor prefetched)."""
    from dpsu_core.corpus import segmenters

    segmenters.forget()
    try:
        assert _posts(["학교에 갔다", "hello"], prep=Preprocessing(korean="eojeol")) == [["학교에", "갔다"], ["hello"]]
        assert "Korean" not in segmenters._loaded and "Korean" not in segmenters._prefetched
        assert _posts(["학교에 갔다", "hello"]) == [["학교", "에", "가", "었", "다"], ["hello"]]
        assert "Korean" in segmenters._prefetched and segmenters._loaded["Korean"] is not None
    finally:
        segmenters.forget()


def test_a_few_korean_words_say_that_eojeol_skips_kiwi():
    """Korean under 1% of the tokens: the notes (raw data) say that eojeol skips Kiwi's start-up; not above."""
    from dpsu_core.corpus.segment import KOREAN_FEW_SHARE

    def notes(texts):
        with TokenStream("auto", Preprocessing(), workers=1) as stream:
            stream.submit(pa.array(texts, type=pa.string()))
            stream.finish()
            return [n for n in stream.detection.notes(2) if "--korean eojeol" in n]

    english = "the quick brown fox jumps over the lazy dog " * 30  # 270 tokens
    few = notes([english, "학교에"])  # 2 of 272 tokens
    assert len(few) == 1 and few[0].startswith(f"Korean words are {2 / 272:.2%} of the tokens")
    assert 2 / 272 < KOREAN_FEW_SHARE and notes(["hello 학교에 갔다"]) == []


def test_content_morphemes_are_nouns_and_lemmas_and_lone_jamo_only_when_asked_for():
    texts = ["학교에 갔다", "학교를 좋아한다", "책을 읽는다", "BTS의 노래 3곡"]
    content = _posts(texts, prep=Preprocessing(korean="content"))
    assert content == [["학교", "가다"], ["학교", "좋아하다"], ["책", "읽다"], ["bts", "노래", "3", "곡"]]
    morphemes = {w for post in _posts(texts) for w in post}
    assert {"에", "를", "을", "의"} <= morphemes and not any("\u1100" <= w[0] <= "\u11ff" for w in morphemes)
    every = {w for post in _posts(texts, prep=Preprocessing(korean="all-morphemes")) for w in post}
    assert "ᆫ다" in every and morphemes < every


def test_the_cli_releases_content_morphemes_and_the_release_page_says_what_the_items_are(tmp_path, capsys):
    from dpsu_core.corpus.segment import korean_items

    forms = ["학교에 갔다", "학교는 크다", "학교를 좋아한다"]
    src = tmp_path / "ko.csv"
    src.write_text("user,text\n" + "".join(f"u{u},{forms[u % 3]}\n" for u in range(600)), encoding="utf-8")
    out, rep = tmp_path / "out.csv", tmp_path / "r.json"
    argv = ["release", str(src), "-m", "policy-gaussian", "-e", "3", "-d", "1e-5", "--korean", "content"]
    assert main([*argv, "-o", str(out), "--report", str(rep)]) == 0, capsys.readouterr().err
    with out.open(encoding="utf-8", newline="") as f:
        items = {row["item"] for row in csv.DictReader(line for line in f if not line.startswith("#"))}
    assert {"학교", "가다", "크다", "좋아하다"} <= items and not {"에", "는", "를", "다"} & items
    import json

    assert "Korean mode content" in json.loads(rep.read_text())["tokenization"]
    c = load_corpus(src, LoadOptions(korean="content"))
    assert korean_items(c.source.detected, "content") == f"Korean items (content) are {KOREAN_MODES['content']}."
    assert korean_items(load_corpus(b"user,text\nu1,hello world\nu2,hello there\n").source.detected, "content") == ""
