"""Chinese posts cut over their bytes with one segmenter call per piece of about ``chinese.CHUNK_BYTES`` of runs
(``chinese._cut_lines``): byte for byte what one call over all the runs gives, and per post the words of the
path of one call per run, on a Chinese corpus and on random mixes of Han, Latin, digits, kana and punctuation."""

from __future__ import annotations

import dataclasses
import re

import jieba
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus import chinese, segment, segmenters
from dpsu_core.corpus.intern import string_buffers
from dpsu_core.corpus.tokenize import TokenStream
from tests.core.corpus.test_segment import _by_runs, _language_corpus, _posts

DEFAULT = chinese.CHUNK_BYTES
ONE_CALL = 1 << 40  # CHUNK_BYTES under which every batch's runs go to the segmenter in one call


def _cut(texts: list[str], chunk: int, monkeypatch) -> tuple[list[str], int, int]:
    """``segment_rows`` over all of ``texts`` with pieces of ``chunk`` bytes: the posts, the long runs cut, and the
    number of segmenter calls."""
    seg = segmenters.load("Chinese")
    assert seg is not None and seg.lines is not None
    calls = []

    def lines(text: str) -> str:
        calls.append(len(text))
        assert seg.lines is not None
        return seg.lines(text)

    monkeypatch.setattr(chinese, "CHUNK_BYTES", chunk)
    arr = pa.array(texts, type=pa.string())
    done = chinese.segment_rows(arr, np.arange(len(texts)), lines, segment.MAX_RUN_CHARS)
    assert done is not None
    return done[0].to_pylist(), done[1], len(calls)


def _tokens(texts: list[str], monkeypatch, *, by_runs: bool = False) -> list[list[str]]:
    seg = segmenters.load("Chinese")
    assert seg is not None
    if by_runs:  # the path of one call per run (no byte path)
        monkeypatch.setitem(segmenters._loaded, "Chinese", dataclasses.replace(seg, lines=None))
    try:
        with TokenStream("auto", workers=1) as stream:
            stream.submit(pa.array(texts, type=pa.string()))
            return _posts(stream.finish())
    finally:
        monkeypatch.setitem(segmenters._loaded, "Chinese", seg)


def test_pieces_equal_one_call_on_a_chinese_corpus(monkeypatch):
    long_run = re.sub("[，。]", "", "".join(_language_corpus("zh", 250, seed=11)))
    assert len(long_run) > 2 * segment.MAX_RUN_CHARS
    texts = _language_corpus("zh", 600, seed=5) + [
        long_run,
        "中",
        "",
        "hello",
        "A股和T恤2024年",
        "𠀀𠀁中文",
        "々中国人",
    ]
    one, long_one, calls_one = _cut(texts, ONE_CALL, monkeypatch)
    for chunk in (1, 64, 4096, DEFAULT):
        many, long_many, calls = _cut(texts, chunk, monkeypatch)
        assert many == one and long_many == long_one == 1
        assert calls > calls_one == 1
    assert _cut(texts, 1, monkeypatch)[2] == _gathered(texts).count("\n")  # one call per run (or piece of one)
    # and the words are jieba's, run by run
    monkeypatch.setattr(chinese, "CHUNK_BYTES", 64)
    got = _tokens(texts[:600], monkeypatch)
    assert got == _by_runs(texts[:600], "zh", lambda r: jieba.lcut(r, HMM=True))


def _gathered(texts: list[str]) -> str:
    """The runs ``segment_rows`` hands the segmenter, one per line (pieces of long runs on lines of their own)."""
    data, offsets = string_buffers(pa.array(texts, type=pa.string()))
    out = np.empty(2 * int(offsets[-1]) + 16, dtype=np.uint8)
    used, _ = chinese._gather(data, offsets, np.arange(len(texts), dtype=np.int64), segment.MAX_RUN_CHARS, out)
    return out[:used].tobytes().decode("utf-8")


_HAN = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴切"
_POSTS = st.lists(
    st.text(
        st.one_of(
            st.sampled_from(_HAN),  # common Han: words of two and more characters form
            st.sampled_from("𠀀𠀁々〆ぁカｶ"),  # rare Han outside the BMP, iteration marks, kana
            st.sampled_from("abcXYZ019 ，。！、\n\t-😀é\u0301"),  # Latin, digits, punctuation, emoji, a combining mark
        ),
        max_size=60,
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=80, deadline=None)
@given(texts=_POSTS, chunk=st.integers(1, 96))
def test_pieces_equal_one_call_on_any_mix(texts, chunk):
    with pytest.MonkeyPatch.context() as mp:
        one = _cut(texts, ONE_CALL, mp)
        many = _cut(texts, chunk, mp)
        assert many[:2] == one[:2]
        mp.setattr(chinese, "CHUNK_BYTES", chunk)
        assert _tokens(texts, mp) == _tokens(texts, mp, by_runs=True)
