"""Linear work per post, whatever it holds: the inputs that used to hang (a 2-million-character word of combining
marks under char-ngrams, a long Khmer coeng chain under auto) finish, with their cuts counted and said. The
assertions are on the work done (pieces handed to a segmenter, characters cut), not on wall time."""

from __future__ import annotations

import pyarrow as pa

from dpsu_core.corpus import segment, segmenters
from dpsu_core.corpus.ngrams import MAX_CLUSTER_CHARS, char_ngrams_counted, cluster_starts, clusters
from dpsu_core.corpus.segment import MAX_RUN_CHARS, pieces
from dpsu_core.corpus.tokenize import Preprocessing, TokenStream

COENG = "\u17d2"


def _stream(texts, tokenizer="auto"):
    with TokenStream(tokenizer, Preprocessing(), workers=1) as stream:
        stream.submit(pa.array(texts, type=pa.string()))
        tok = stream.finish()
        return tok, stream.detection


def test_clusters_are_capped_and_cut_counted():
    word = "a" + "\u0301" * 100  # a letter with 100 acute accents
    got = clusters(word)
    assert "".join(got) == word and all(len(c) <= MAX_CLUSTER_CHARS for c in got)
    assert len(got) == -(-101 // MAX_CLUSTER_CHARS) and cluster_starts(word)[1] == len(got) - 1
    chain = "ក" + (COENG + "ក") * 3 + "ុំ"  # a real stack stays one character
    assert clusters(chain) == [chain] and cluster_starts(chain)[1] == 0
    assert clusters("naïve") == ["n", "a", "ï", "v", "e"] and clusters("nai\u0308ve")[2] == "i\u0308"


def test_two_million_combining_marks_under_char_ngrams():
    n = 2_000_000
    word = "\u0301" * n
    grams, cut = char_ngrams_counted(word, 2)
    n_clusters = n // MAX_CLUSTER_CHARS
    assert cut == n_clusters - 1 and len(grams) == n_clusters - 1  # linear: one pass, one cut per 16 marks
    tok, det = _stream(["x " + word, "hello"], tokenizer="char-ngrams")
    assert det.cuts.clusters == n_clusters - 1
    assert int(tok.post_ptr[1]) == 1 + n_clusters - 1  # "x" and the bigrams of the 125,000 capped characters
    assert any(f"more than {MAX_CLUSTER_CHARS} combining marks" in line for line in det.notes(2))


def test_long_khmer_coeng_chain_under_auto_is_segmented_in_bounded_pieces(monkeypatch):
    seg = segmenters.load("Khmer")
    assert seg is not None and seg.words is not None
    handed: list[int] = []
    real = seg.words

    def counting(batch: list[str]) -> list[list[str]]:  # the real segmenter, with the lengths it is handed
        handed.extend(len(t) for t in batch)
        return real(batch)

    monkeypatch.setitem(segmenters._loaded, "Khmer", segmenters.Segmenter("Khmer", seg.candidate, words=counting))
    n = 200_001
    chain = "ក" + (COENG + "ក") * (n // 2)
    tok, det = _stream([chain, "ខ្ញុំស្រឡាញ់"])
    assert sum(handed) == n + len("ខ្ញុំស្រឡាញ់") and max(handed) <= MAX_RUN_CHARS
    assert len(handed) == -(-n // MAX_RUN_CHARS) + 1 and det.cuts.runs == 1
    assert "".join(tok.unigrams[tok.codes[: tok.post_ptr[1]]]) == chain  # nothing lost, only cut
    assert any(f"longer than {MAX_RUN_CHARS:,} characters" in line for line in det.notes(2))


def test_long_chinese_run_is_segmented_in_pieces():
    run = "我爱北京天安门" * 3000  # 21,000 characters, no punctuation
    parts = pieces(run)
    assert "".join(parts) == run and max(map(len, parts)) <= MAX_RUN_CHARS and len(parts) == 6
    tok, det = _stream([run])
    assert det.cuts.runs == 1 and "".join(tok.unigrams[tok.codes]) == run
    ends = pieces("。".join(["我爱北京"] * 2000))  # cut after a sentence end when the piece has one
    assert all(p.endswith("。") for p in ends[:-1])


def test_pieces_are_linear_in_the_run():
    run = "中" * 1_000_000
    parts = pieces(run)
    assert len(parts) == 1_000_000 // MAX_RUN_CHARS and "".join(parts) == run
    assert segment.pieces("short") == ["short"]
