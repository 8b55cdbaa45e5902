"""errors.py: every typed error's message is one line of at most MAX_MESSAGE_CHARS; lists are shortened."""

from __future__ import annotations

import pytest

from dpsu_core.errors import (
    MAX_MESSAGE_CHARS,
    ColumnError,
    DpsuError,
    InputError,
    OutputError,
    ParameterError,
    ResourceLimitError,
    cap_message,
    short_name,
    shorten_list,
)


def test_cap_message_cuts_between_words():
    words = " ".join(f"word{i:03d}" for i in range(200))  # 7 characters + a space each
    capped = cap_message(words, limit=50)
    assert capped.endswith("…") and len(capped) <= 50
    kept = capped[:-1].split()
    assert kept == words.split()[: len(kept)]  # whole words only, in order
    assert cap_message("x" * 80, limit=50) == "x" * 49 + "…"  # one word longer than the line: cut inside it


def test_cap_message_one_line_and_capped():
    assert cap_message("a\nb\r\n  c\td") == "a b c d"
    long = "word " * 1000
    capped = cap_message(long)
    assert len(capped) <= MAX_MESSAGE_CHARS and capped.endswith("…")
    assert cap_message("x" * MAX_MESSAGE_CHARS) == "x" * MAX_MESSAGE_CHARS  # exactly at the cap: unchanged


@pytest.mark.parametrize("cls", [DpsuError, InputError, ColumnError, ParameterError, ResourceLimitError, OutputError])
def test_every_typed_error_is_capped(cls):
    exc = cls("bad column " + "y" * 65536 + "\nsecond line")
    text = str(exc)
    assert "\n" not in text and len(text) <= MAX_MESSAGE_CHARS
    assert text.startswith("bad column yyy")
    assert isinstance(exc, DpsuError) and isinstance(exc, ValueError)


def test_shorten_list():
    assert shorten_list([]) == "none"
    assert shorten_list(["a", "b"]) == "a, b"
    names = [f"m{i}.csv" for i in range(20_000)]
    text = shorten_list(names, limit=3)
    assert text == "m0.csv, m1.csv, m2.csv … and 19997 more"
    assert shorten_list(["x" * 500], quote=True) == repr("x" * 59 + "…")
    assert shorten_list(iter(["a", "b", "c"]), limit=2) == "a, b … and 1 more"  # any iterable, read once


def test_short_name():
    assert short_name("a.csv") == "'a.csv'"
    assert short_name("n\nl") == repr("n\nl")  # repr keeps a newline in a name off the message's line
    assert len(short_name("z" * 10_000)) <= 62


# ---- the Python API's boundary: typed errors, never a kernel's or a library's traceback -----------------------
def _good_corpus_fields():
    import numpy as np

    return dict(
        indptr=np.array([0, 2, 3], dtype=np.int64),
        items=np.array([0, 1, 1], dtype=np.int32),
        counts=np.array([1, 2, 1], dtype=np.int32),
        vocab=np.array(["a", "b"], dtype=object),
        ngram_len=np.ones(2, dtype=np.int8),
        gram_tokens=np.arange(2, dtype=np.int32).reshape(-1, 1),
    )


def _bad_corpus_cases():
    import numpy as np

    return [
        ("float ids", dict(items=np.array([0.0, 1.0, 1.0])), "Corpus.items must hold integer vocabulary ids"),
        ("list indptr", dict(indptr=[0, 2, 3]), "Corpus.indptr must be a numpy array .*got list"),
        ("float indptr", dict(indptr=np.array([0.0, 2.0, 3.0])), "Corpus.indptr must hold integer row offsets"),
        ("NaN counts", dict(counts=np.array([1, np.nan, 1])), "Corpus.counts must hold integer occurrence counts"),
        ("2-D items", dict(items=np.zeros((3, 1), dtype=np.int32)), "Corpus.items must have 1 dimension"),
        ("1-D gram_tokens", dict(gram_tokens=np.arange(2, dtype=np.int32)), "Corpus.gram_tokens must have 2 dim"),
        ("gram_tokens rows", dict(gram_tokens=np.zeros((5, 1), dtype=np.int32)), r"must have shape \(2, longest n\)"),
        ("gram_tokens no column", dict(gram_tokens=np.zeros((2, 0), dtype=np.int32)), r"got \(2, 0\)"),
        ("ngram_len length", dict(ngram_len=np.ones(3, dtype=np.int8)), "one entry per vocabulary item"),
        ("vocab list", dict(vocab=["a", "b"]), "Corpus.vocab must be a numpy array"),
        ("n_posts float", dict(n_posts=2.5), "Corpus.n_posts must be a whole number"),
        ("source dict", dict(source={}), "Corpus.source must be a SourceInfo"),
    ]


@pytest.mark.parametrize(
    ("change", "match"), [c[1:] for c in _bad_corpus_cases()], ids=[c[0] for c in _bad_corpus_cases()]
)
def test_a_hand_built_corpus_is_checked_at_the_boundary(change, match):
    from dpsu_core.corpus.model import Corpus, CorpusRowError

    Corpus(**_good_corpus_fields())  # the good one is taken
    with pytest.raises(CorpusRowError, match=match) as info:
        Corpus(**{**_good_corpus_fields(), **change})
    assert isinstance(info.value, DpsuError) and "\n" not in str(info.value)


def test_release_arguments_are_checked_at_the_boundary(tmp_path):
    import numpy as np

    from dpsu_core.corpus.model import Corpus, check_release_call

    corpus = Corpus(**_good_corpus_fields())
    check_release_call(corpus)
    check_release_call(corpus, np.random.default_rng())
    with pytest.raises(
        ParameterError, match=r"got the path 'posts.csv': load it first, release\(load_corpus\(path\)\)"
    ):
        check_release_call("posts.csv")
    with pytest.raises(ParameterError, match="got the path"):
        check_release_call(tmp_path / "posts.csv")
    with pytest.raises(ParameterError, match="takes a Corpus .*got dict"):
        check_release_call({"indptr": [0]})
    with pytest.raises(ParameterError, match="rng must be a numpy Generator .*got int 42; .*seed="):
        check_release_call(corpus, 42)
    with pytest.raises(ParameterError, match="got RandomState"):
        check_release_call(corpus, np.random.RandomState(0))

    # and through the public release itself, before anything is calibrated or drawn
    from dpsu_core.mechanisms.registry import get_mechanism

    mech = get_mechanism("weighted-gaussian", epsilon=1.0, delta=1e-6)
    with pytest.raises(ParameterError, match="got the path"):
        mech.release("path")
    with pytest.raises(ParameterError, match="rng must be a numpy Generator"):
        mech.release(corpus, rng=42)


def _tiny_release():
    from dpsu_core import get_mechanism
    from dpsu_core.corpus.build import corpus_from_token_lists

    users = [["alpha", "beta", "gamma"] for _ in range(200)]
    return get_mechanism("weighted-gaussian", epsilon=8, delta=1e-6).release(corpus_from_token_lists(users))


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (dict(model="bpe", vocab_size=300.0), "vocabulary size must be a whole number, got 300.0"),
        (dict(model="bpe", vocab_size="300"), "vocabulary size must be a whole number, got '300'"),
        (dict(model="bpe", vocab_size=True), "vocabulary size must be a whole number, got True"),
        (dict(special_tokens=("[UNK]", 5)), "special token 2 must be a string, got int 5"),
        (dict(special_tokens=("[UNK]", None)), "special token 2 must be a string, got NoneType"),
        (dict(special_tokens=("[UNK]", "[P\ud800D]")), "special token 2 .* holds a lone surrogate"),
        (dict(special_tokens=b"[UNK]"), "special tokens must be a list of strings"),
    ],
)
def test_tokenizer_export_inputs_are_checked_at_the_boundary(spec, match):
    pytest.importorskip("tokenizers")
    from dpsu_core.outputs.tokenizer_export import TokenizerSpec, build_tokenizer, tokenizer_json

    release = _tiny_release()
    for build in (build_tokenizer, tokenizer_json):
        with pytest.raises(ParameterError, match=match):
            build(release, TokenizerSpec(**spec))


def test_special_token_text_is_checked_at_the_boundary():
    from dpsu_core.outputs.tokenizer_export import parse_special_tokens

    assert parse_special_tokens("[PAD], [CLS]") == ("[UNK]", "[PAD]", "[CLS]")
    with pytest.raises(ParameterError, match="special token 2 must be a string"):
        parse_special_tokens(["[PAD]", 3])
    with pytest.raises(ParameterError, match="special token 1 .* lone surrogate"):
        parse_special_tokens("[PAD]\udc80,[CLS]")
