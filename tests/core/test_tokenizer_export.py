"""Tokenizer export: a tokenizer.json (or a directory ``transformers`` loads) built from a release alone; every
vocabulary entry of every model is a released item, a substring of one, or a named special token; every model
decodes back to the normalised text; the normaliser is the release's own, code point by code point."""

from __future__ import annotations

import csv
import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from dpsu_core import get_mechanism
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.corpus.tokenize import Preprocessing, tokenize
from dpsu_core.errors import DpsuError, ParameterError
from dpsu_core.interfaces.cli import main
from dpsu_core.outputs.tokenizer_export import (
    DIRECTORY_FILES,
    METASPACE,
    MODELS,
    TokenizerSpec,
    build_tokenizer,
    check_spec,
    parse_special_tokens,
    tokenizer_files,
    tokenizer_json,
)

SPECIALS = ("[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]")
SUBWORD = [m for m in MODELS if m != "wordlevel"]


def _release(users: list[list[str]], mechanism: str = "policy-laplace", max_n: int = 1, **params):
    corpus = corpus_from_token_lists([[u] for u in users], max_n=max_n)
    extra = {"max_n": max_n} if max_n > 1 else {}
    return get_mechanism(mechanism, epsilon=5.0, delta=1e-3, **extra, **params).release(corpus)


def _entries_ok(tok: Tokenizer, items: list[str], specials: tuple[str, ...]) -> list[str]:
    """The vocabulary entries that are neither a special token nor a substring of a released item."""
    bad = []
    for entry in tok.get_vocab():
        if entry in specials:
            continue
        piece = entry[2:] if entry.startswith("##") and len(entry) > 2 else entry  # WordPiece's continuation mark
        piece = piece.removeprefix(METASPACE)  # a word start (bpe, unigram): the piece begins a word of an item
        if not any(piece in item for item in items):
            bad.append(entry)
    return bad


WORD = st.text(alphabet="abcdeéñ'北京天安门ภาษาไทย", min_size=1, max_size=8).filter(
    lambda w: w.strip("'") == w and "''" not in w
)


@pytest.mark.parametrize("mechanism", ["dpsu-all", "pcr"])  # n-grams up to 2; noisy counts
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(WORD, min_size=3, max_size=12, unique=True), seed=st.integers(0, 2**32 - 1))
def test_every_vocabulary_entry_comes_from_the_release(mechanism, words, seed):
    rng = np.random.default_rng(seed)
    users = [list(rng.choice(words, size=int(rng.integers(1, 4)))) for _ in range(400)]
    release = _release(users, mechanism, max_n=2 if mechanism == "dpsu-all" else 1)
    items = [str(s) for s in release.items.tolist()]
    for model in MODELS:
        tok, info = build_tokenizer(
            release,
            TokenizerSpec(model=model, special_tokens=SPECIALS, vocab_size=200 if model in SUBWORD else None),
        )
        assert _entries_ok(tok, items, SPECIALS) == [], model
        assert info["model"] == model and info["vocabulary_size"] == tok.get_vocab_size()
        if model == "wordlevel":
            assert set(tok.get_vocab()) == set(SPECIALS) | {w for w, n in zip(items, release.ngram_len) if n == 1}


def _words(tok: Tokenizer, text: str) -> list[str]:
    """The tokens of ``text`` without the word-start and continuation marks."""
    return [t.removeprefix(METASPACE).removeprefix("##") for t in tok.encode(text).tokens]


def test_round_trip_through_tokenizers_encodes_released_words(tmp_path):
    users = [["the", "quick", "brown", "fox", "don't", "北京"]] * 300 + [["canary"]]
    # alpha 20: each word's weight reaches rho + 20/epsilon, so a word falls below rho only if its Laplace noise
    # (scale 1/5) is below -4, probability e^-20 / 2 (at alpha 3 it is e^-3 / 2 per word, and one of the six
    # words was missing in about one run in seven)
    release = _release(users, alpha=20.0)
    assert set(users[0]) <= set(release.items.tolist()) and "canary" not in release.items
    for model in MODELS:
        path = tmp_path / f"{model}.json"
        body, _ = tokenizer_json(release, TokenizerSpec(model=model))
        path.write_bytes(body)
        tok = Tokenizer.from_file(str(path))
        text = "The QUICK brown fox, don’t! 北京"
        assert tok.decode(tok.encode(text).ids) == "the quick brown fox don't 北京", model
        if model != "unigram":  # six words seen once each: unigram keeps characters, the others whole words
            assert _words(tok, text) == ["the", "quick", "brown", "fox", "don't", "北京"], model
        if model == "wordlevel":
            assert tok.encode("canary").tokens == ["[UNK]"]


def _normalised(text: str, strip_symbols: bool = True) -> str:
    """The release tokenizer's words of ``text`` (fast rule), joined by single spaces."""
    fast = tokenize(pa.array([text]), tokenizer="fast", prep=Preprocessing(strip_symbols=strip_symbols))
    return " ".join(fast.unigrams[fast.codes].tolist())


@pytest.fixture(scope="module")
def demo_release():
    """The demo corpus's first users released with noisy counts (the subword models train on them)."""
    from dpsu_core.corpus.demo import load_demo
    from dpsu_core.mechanisms.item_counts import mechanism_with_counts, release_with_counts

    corpus = load_demo()
    mech, cc = mechanism_with_counts("policy-gaussian", epsilon=8.0, delta=1e-5)
    return release_with_counts(mech, cc, corpus)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("strip_symbols", [True, False])
def test_every_model_decodes_to_the_normalised_text(demo_release, model, strip_symbols):
    """decode(encode(text)) is the release tokenizer's words joined by spaces, for the demo corpus's own posts
    (wordlevel: made of released words; the subword models: any post over the released characters)."""

    from dpsu_core.corpus.demo import DEMO_CSV

    with open(DEMO_CSV, encoding="utf-8") as f:
        posts = [row["body"] for _, row in zip(range(400), csv.DictReader(f))]
    tok, _ = build_tokenizer(
        demo_release,
        TokenizerSpec(model=model, strip_symbols=strip_symbols, vocab_size=2000 if model in SUBWORD else None),
    )
    released = set(demo_release.items.tolist())
    alphabet = set("".join(released))
    checked = 0
    for post in posts + ["The flight was delayed again!", "İt's a   café, isn’t it?"]:
        want = _normalised(post, strip_symbols)
        ok = set(want.split()) <= released if model == "wordlevel" else set(want.replace(" ", "")) <= alphabet
        if ok and want:
            assert tok.decode(tok.encode(post).ids) == want, post
            checked += 1
    assert checked >= 20  # the test sees real posts, not only the hand-written ones


def test_bpe_keeps_the_spaces_of_the_issue():
    release = _release([["the", "flight", "was", "delayed", "again"]] * 300, alpha=20.0)
    tok, _ = build_tokenizer(release, TokenizerSpec(model="bpe", vocab_size=100))
    assert tok.decode(tok.encode("the flight was delayed again").ids) == "the flight was delayed again"


def test_turkish_dotted_i_is_folded_as_the_release_folds_it(tmp_path):
    """İstanbul and MAİL are released as istanbul and mail (Arrow's one-to-one lower case); the tokenizer must give
    the same tokens, not i̇stanbul ([UNK] for a word-level model)."""
    from dpsu_core.corpus import load_corpus

    src = tmp_path / "tr.csv"
    src.write_text("user,text\n" + "".join(f"u{i},İstanbul MAİL Iğdır ΟΔΟΣ\n" for i in range(300)), encoding="utf-8")
    corpus = load_corpus(src)
    release = get_mechanism("policy-laplace", epsilon=5.0, delta=1e-3, alpha=20.0).release(corpus)
    want = "istanbul mail iğdır οδοσ"  # one code point to one: I is i, Σ is σ even at a word's end
    assert set(release.items.tolist()) == set(want.split())
    for model in MODELS:
        tok, _ = build_tokenizer(release, TokenizerSpec(model=model, vocab_size=300 if model in SUBWORD else None))
        enc = tok.encode("İstanbul MAİL Iğdır ΟΔΟΣ")
        assert "[UNK]" not in enc.tokens, (model, enc.tokens)
        assert tok.decode(enc.ids) == want, model


@pytest.mark.parametrize("strip_symbols", [True, False])
def test_normaliser_is_the_releases_for_every_code_point(strip_symbols):
    """Every Unicode scalar value c, inside a word and alone ("AcB c"): the exported normalizer and pre-tokenizer
    give exactly the release tokenizer's words (case folding, word / space / ignored / symbol classes)."""
    release = _release([["hello"]] * 300)
    tok, _ = build_tokenizer(release, TokenizerSpec(strip_symbols=strip_symbols))
    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    chunks = [cps[i : i + 512] for i in range(0, len(cps), 512)]
    texts = [" ".join(f"A{chr(c)}B {chr(c)}" for c in chunk) for chunk in chunks]
    fast = tokenize(pa.array(texts), tokenizer="fast", prep=Preprocessing(strip_symbols=strip_symbols))
    words, ptr = fast.unigrams[fast.codes], fast.post_ptr
    bad = []
    for j, text in enumerate(texts):
        mine = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(text))]
        if mine != words[ptr[j] : ptr[j + 1]].tolist():
            bad.append(f"U+{chunks[j][0]:04X}..U+{chunks[j][-1]:04X}")
    assert bad == []


SENTENCES = [
    "Hello, World! Don't 'quote' rock'n'roll it’s e-mail_me #tag 3.14",
    "Visit https://example.com/a?b=1 and www.foo.org NOW",
    "naïve café ÅNGSTRÖM straße — (x1) 42... foo-bar",
    "Привет мир; γειά σου; שלום; مرحبا",
    "zero\u200bwidth soft\u00adhyphen wo\u2060rd \ufeffbom emoji 😀 👍🏽 ok",
    # a zero width space next to Thai or Chinese is a break, so the exported tokenizer cuts there too
    "ภาษา\u200bไทย ok\u200bไทย ภาษา\u200b\u200bok 日本\u200b語 a\u200b\u00ad\u200bb",
]


@pytest.mark.parametrize("strip_symbols", [True, False])
def test_pre_tokenizer_splits_like_the_fast_tokenizer(strip_symbols):
    release = _release([["hello", "world"]] * 300)
    prep = Preprocessing(strip_symbols=strip_symbols)
    tok, _ = build_tokenizer(release, TokenizerSpec(strip_symbols=strip_symbols))
    for text in SENTENCES:
        fast = tokenize(pa.array([text]), tokenizer="fast", prep=prep)
        expected = fast.unigrams[fast.codes].tolist()
        pieces = [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(text))]
        assert pieces == expected, text


def test_special_tokens_and_checks():
    assert parse_special_tokens("[PAD], [CLS],[PAD],,") == ("[UNK]", "[PAD]", "[CLS]")
    assert parse_special_tokens(None) == ("[UNK]", "[PAD]")
    with pytest.raises(ParameterError, match="only for the subword models"):
        check_spec(TokenizerSpec(vocab_size=100))
    with pytest.raises(ParameterError, match="unknown tokenizer model"):
        check_spec(TokenizerSpec(model="sentencepiece"))


@pytest.mark.parametrize(
    "specials, message",
    [
        ([1], "must be a string"),
        (["[CLS]", None], "must be a string"),
        (["\ud800x"], "lone surrogate"),
        (["a\nb"], "control character"),
        (["x" * 101], "at most 100"),
        (3.5, "a list of strings or comma-separated text"),
    ],
)
def test_bad_special_tokens_are_one_line_errors(specials, message):
    with pytest.raises(DpsuError, match=message) as err:
        parse_special_tokens(specials)
    assert "\n" not in str(err.value)
    with pytest.raises(DpsuError):  # also when the spec is built by hand
        check_spec(
            TokenizerSpec(special_tokens=("[UNK]", "[PAD]", *(specials if isinstance(specials, list) else [specials])))
        )


@pytest.mark.parametrize("model", MODELS)
def test_directory_loads_in_transformers_with_padding_and_batching(tmp_path, demo_release, model):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    spec = TokenizerSpec(
        model=model,
        special_tokens=parse_special_tokens("[CLS],[SEP],[MASK]"),
        vocab_size=2000 if model in SUBWORD else None,
    )
    files, info = tokenizer_files(demo_release, spec)
    folder = tmp_path / "tok"
    folder.mkdir()
    for name, body in files.items():
        (folder / name).write_bytes(body)
    for tok in (AutoTokenizer.from_pretrained(str(folder)), PreTrainedTokenizerFast.from_pretrained(str(folder))):
        assert (tok.unk_token, tok.pad_token, tok.cls_token, tok.sep_token, tok.mask_token) == SPECIALS
        texts = ["I think the weather was good", "thank you", "a lot of the time I have been here"]
        batch = tok(texts, padding=True)
        lengths = {len(ids) for ids in batch["input_ids"]}
        assert len(lengths) == 1  # padded to one length
        pad = tok.pad_token_id
        short = batch["input_ids"][1]
        assert short[-1] == pad and batch["attention_mask"][1][-1] == 0
        assert batch["input_ids"][0][0] == tok.cls_token_id  # [CLS] text [SEP]
        assert tok.batch_decode(batch["input_ids"], skip_special_tokens=True) == [_normalised(t) for t in texts]
    assert info["special_token_roles"]["pad_token"] == "[PAD]"


def _write_corpus(path):
    rows = ["user,text"] + [f"u{i},我爱北京天安门 hello world" for i in range(300)] + ["u999,uniquecanary"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize("model", MODELS)
def test_cli_exports_a_tokenizer_and_the_report_says_how(tmp_path, capsys, model):
    src = tmp_path / "c.csv"
    _write_corpus(src)
    tok_path, rep = tmp_path / "tokenizer.json", tmp_path / "rep.json"
    argv = ["release", str(src), "-m", "pcr", "-e", "3", "-d", "1e-4", "-o", str(tmp_path / "o.csv")]
    argv += ["--report", str(rep), "--export-tokenizer", str(tok_path), "--tokenizer-model", model]
    argv += ["--special-tokens", "[PAD],[CLS]"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, err
    tok = Tokenizer.from_file(str(tok_path))
    assert tok.decode(tok.encode("北京 天安门 Hello").ids) == "北京 天安门 hello"
    if model != "unigram":
        assert _words(tok, "北京 天安门 Hello") == ["北京", "天安门", "hello"]
    assert {"[UNK]", "[PAD]", "[CLS]"} <= set(tok.get_vocab())
    built = json.loads(rep.read_text())["tokenizer"]
    assert built["model"] == model and built["special_tokens"] == ["[UNK]", "[PAD]", "[CLS]"]
    assert "jieba" in built["pre_tokenizer"] and "released" in built["trained_on"]
    assert f"tokenizer ({model}," in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--tokenizer-model", "bpe"], "--tokenizer-model is for the exported tokenizer"),
        (["--export-tokenizer", "t.json", "--tokenizer-vocab-size", "100"], "only for the subword models"),
        (["--export-tokenizer", "t.json", "--special-tokens", "[CLS],a\x01"], "control character"),
        (["--counts-share", "0.3"], "--counts-share is for --with-counts"),
        (["--with-counts"], "pcr already releases noisy counts"),
    ],
)
def test_cli_tokenizer_flag_errors_are_one_line(tmp_path, capsys, extra, message):
    src = tmp_path / "c.csv"
    _write_corpus(src)
    argv = ["release", str(src), "-m", "pcr", "-e", "3", "-d", "1e-4", "-o", str(tmp_path / "o.csv"), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_cli_writes_a_directory_with_counts_and_states_their_cost_first(tmp_path, capsys):
    from transformers import AutoTokenizer

    src = tmp_path / "c.csv"
    _write_corpus(src)
    out_dir, rep = tmp_path / "tok", tmp_path / "rep.json"
    argv = ["release", str(src), "-m", "policy-gaussian", "-e", "3", "-d", "1e-4", "-o", str(tmp_path / "o.csv")]
    argv += ["--report", str(rep), "--export-tokenizer", str(out_dir), "--tokenizer-model", "bpe"]
    argv += ["--with-counts", "--counts-share", "0.25", "--special-tokens", "<s>,</s>"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(DIRECTORY_FILES)
    tok = AutoTokenizer.from_pretrained(str(out_dir))
    assert (tok.pad_token, tok.bos_token, tok.eos_token) == ("[PAD]", "<s>", "</s>")
    assert tok.batch_decode(tok(["hello world", "北京"], padding=True)["input_ids"], skip_special_tokens=True) == [
        "hello world",
        "北京",
    ]
    report = json.loads(rep.read_text())
    counts = report["calibration"]["details"]["item_counts"]
    assert counts["share"] == 0.25 and counts["epsilon"] == pytest.approx(0.75)
    assert report["epsilon"] == pytest.approx(2.25)  # the items' part; the guarantee names the whole
    assert "(3, 0.0001)-differentially private" in report["guarantee"]
    assert "their released noisy counts" in report["tokenizer"]["trained_on"]
    whole = report["tokenizer"]["released_words_whole"]  # the released words the exported tokenizer keeps whole
    with (tmp_path / "o.csv").open(encoding="utf-8", newline="") as f:
        words = [r["item"] for r in csv.DictReader(f) if r["n"] == "1"]
    assert report["tokenizer"]["released_words"] == len(words) > 0
    assert whole == sum(len(tok(w, add_special_tokens=False)["input_ids"]) == 1 for w in words)
    line = next(line for line in err.splitlines() if line.startswith("tokenizer (bpe"))
    n = len(words)
    assert (f"Every released word ({n:,})" if whole == n else f"{whole:,} of the {n:,} released words") in line
    lines = err.splitlines()
    before = next(i for i, line in enumerate(lines) if line.startswith("before the run: noisy counts"))
    assert before < next(i for i, line in enumerate(lines) if line.startswith("privacy spent by this run"))
    assert "0.25 of the budget" in lines[before]


def test_cli_refuses_a_file_where_the_tokenizer_directory_goes(tmp_path, capsys):
    src = tmp_path / "c.csv"
    _write_corpus(src)
    (tmp_path / "tok").write_text("x")
    argv = ["release", str(src), "-m", "policy-gaussian", "-e", "3", "-d", "1e-4", "-o", str(tmp_path / "o.csv")]
    assert main([*argv, "--export-tokenizer", str(tmp_path / "tok")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a file, not a folder" in err[0]
    assert not (tmp_path / "o.csv").exists()


def test_exported_command_and_script_redo_the_counts_and_the_tokenizer(tmp_path, capsys):
    """The app's command (and script) carry --with-counts and --export-tokenizer with the app's choices, defaults
    left out (one set of defaults): run as they are, they make the same kind of release and tokenizer folder."""
    import runpy

    from dpsu_core.corpus import LoadOptions, load_corpus
    from dpsu_core.mechanisms.item_counts import mechanism_with_counts, release_with_counts
    from dpsu_core.outputs.command import Redo, release_argv, release_script

    src = tmp_path / "c.csv"
    _write_corpus(src)
    corpus = load_corpus(src)
    mech, cc = mechanism_with_counts("policy-gaussian", epsilon=3.0, delta=1e-4, share=0.3)
    rel = release_with_counts(mech, cc, corpus)
    spec = TokenizerSpec(model="unigram", special_tokens=parse_special_tokens("[CLS],[SEP]"), vocab_size=500)
    kw = {"output": str(tmp_path / "o.csv"), "report": str(tmp_path / "r.json"), "tokenizer": spec}
    argv = release_argv(Redo(rel.calibration, str(src), LoadOptions(), tokenizer_path=str(tmp_path / "tok"), **kw))
    assert argv[argv.index("-e") + 1] == "3.0" and argv[argv.index("-d") + 1] == "0.0001"  # the whole budget
    assert argv[argv.index("--counts-share") + 1] == "0.3" and "--counts-clip" not in argv  # clip at its default
    assert argv[argv.index("--special-tokens") + 1] == "[CLS],[SEP]"  # [UNK], [PAD]: the defaults, left out
    assert main(argv[1:]) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["calibration"]["details"]["item_counts"]["share"] == 0.3
    assert report["tokenizer"]["model"] == "unigram" and (tmp_path / "tok" / "tokenizer_config.json").is_file()

    script = release_script(Redo(rel.calibration, str(src), LoadOptions(), tokenizer_path=str(tmp_path / "tok2"), **kw))
    path = tmp_path / "redo.py"
    path.write_text(script)
    runpy.run_path(str(path), run_name="__main__")
    config = json.loads((tmp_path / "tok2" / "tokenizer_config.json").read_text())
    assert (config["cls_token"], config["sep_token"], config["pad_token"]) == ("[CLS]", "[SEP]", "[PAD]")


def test_one_set_of_defaults():
    """The CLI's, the app's and the command's tokenizer defaults are these constants: a spec at its defaults
    gives no tokenizer flag at all."""
    from dpsu_core.outputs.tokenizer_export import DEFAULT_MODEL, DEFAULT_SPECIAL_TOKENS, tokenizer_flags

    assert TokenizerSpec().model == DEFAULT_MODEL and TokenizerSpec().special_tokens == DEFAULT_SPECIAL_TOKENS
    assert parse_special_tokens("") == DEFAULT_SPECIAL_TOKENS == ("[UNK]", "[PAD]")
    assert tokenizer_flags(TokenizerSpec()) == []
    assert tokenizer_flags(TokenizerSpec(model="bpe", vocab_size=30_000)) == ["--tokenizer-model", "bpe"]


def test_directory_zip_is_the_folder_and_the_same_bytes_each_time(tmp_path):
    import io
    import zipfile

    from transformers import AutoTokenizer

    from dpsu_core.outputs.tokenizer_export import directory_zip
    from tests.clock import wait_for_the_clock_to_tick

    files, _ = tokenizer_files(_release([["hello", "world"]] * 300), TokenizerSpec())
    first = directory_zip(files, "tok")
    wait_for_the_clock_to_tick(2)  # a zip's dates have a two-second resolution: a rebuilt zip would differ now
    assert directory_zip(files, "tok") == first
    zipfile.ZipFile(io.BytesIO(first)).extractall(tmp_path)
    tok = AutoTokenizer.from_pretrained(str(tmp_path / "tok"))
    assert tok.decode(tok("hello world")["input_ids"]) == "hello world"


def test_training_frequencies_are_counts_in_units_of_their_noise():
    from dpsu_core.outputs.tokenizer_export import training_frequencies

    sigma = 4.0
    counts = np.array([-3.0, 0.0, 0.4 * sigma, 2.2 * sigma, 2.3 * sigma, 9.0 * sigma, 100.0 * sigma])
    std = np.full(counts.shape[0], sigma)
    assert training_frequencies(counts, std).tolist() == [1, 1, 1, 1, 2, 3, 10]
    # exact counts (no noise): their unit is one occurrence
    assert training_frequencies(np.array([9.0, 49.0]), None).tolist() == [3, 7]
    # a huge text is scaled down, every item still named once
    big = training_frequencies(np.array([1e18, 1e18, 0.0]), None)
    assert big.sum() <= 20_000_001 and big[2] == 1 and big[0] == big[1]


@pytest.mark.parametrize("model", ["bpe", "unigram"])  # WordPiece's trainer breaks ties differently run to run
def test_counts_within_their_noise_give_the_set_only_tokenizer(model):
    """When the noise exceeds every count, the counts are ignored: the very tokenizer of the set alone."""
    import dataclasses

    from dpsu_core.outputs.tokenizer_export import _training_text, training_frequencies

    rel = _release([["flight", "delayed", "again"], ["flight", "late"], ["again", "flight"]] * 30)
    assert rel.n_released > 0
    n = rel.n_released
    noisy = dataclasses.replace(rel, noisy_counts=np.linspace(0.0, 0.9, n) * 50, count_std=np.full(n, 50.0))
    spec = TokenizerSpec(model=model, vocab_size=60)
    items = rel.items.tolist()
    reps = training_frequencies(noisy.noisy_counts, noisy.count_std)  # every subword model's training text
    assert list(_training_text(items, reps)) == list(_training_text(items, None))

    def made(release):  # the vocabulary and each item's tokens (ids: the trainers number ties in any order)
        tok = build_tokenizer(release, spec)[0]
        words = [[w] for w in rel.items.tolist()]
        return set(tok.get_vocab()), [e.tokens for e in tok.encode_batch(words, is_pretokenized=True)]

    assert made(noisy) == made(rel)
    if model == "bpe":  # counts standing above their noise change its merges (bpe numbers them in a fixed order)
        loud = dataclasses.replace(noisy, count_std=np.full(n, 0.01))
        assert build_tokenizer(loud, spec)[0].to_str() != build_tokenizer(rel, spec)[0].to_str()


def test_given_frequencies_train_as_the_counts_rule_would():
    """``frequencies=`` (the benchmark's non-private reference) is the same training as counts giving them."""
    import dataclasses

    rel = _release([["flight", "delayed", "again"], ["flight", "late"], ["again", "flight"]] * 30)
    n = rel.n_released
    reps = np.arange(1, n + 1)
    spec = TokenizerSpec(model="bpe", vocab_size=40)
    tok, info = build_tokenizer(rel, spec, frequencies=reps)
    counted = dataclasses.replace(rel, noisy_counts=(reps.astype(float) ** 2) * 3.0, count_std=np.full(n, 3.0))
    assert tok.to_str() == build_tokenizer(counted, spec)[0].to_str()
    assert "the given frequencies" in info["trained_on"]
    assert tok.to_str() != build_tokenizer(rel, spec)[0].to_str()


def test_the_note_names_the_segmenters_in_use_that_the_file_cannot_hold():
    """The Export page's note on an ``auto`` corpus named jieba, SudachiPy and newmm after the compiled segmenters
    replaced them: it names the ones this installation uses (issue 29)."""
    from dpsu_core.corpus.segmenters import CANDIDATES, chosen
    from dpsu_core.outputs.tokenizer_export import pipeline_text

    text = pipeline_text(TokenizerSpec(tokenizer="auto"))
    for language in CANDIDATES:
        c = chosen(language)
        if c is not None:
            assert f"{language} ({c.name})" in text
    assert "fast" in pipeline_text(TokenizerSpec(tokenizer="fast")) and "segmenters" not in pipeline_text(
        TokenizerSpec(tokenizer="fast")
    )


def test_an_ngrams_count_is_not_added_to_its_words_own_counts():
    """Every 'flight delayed' is already a 'flight' and a 'delayed': beside single words, an n-gram trains once,
    whatever its noisy count; a release of n-grams alone keeps their counts (its only ones)."""
    import dataclasses

    from dpsu_core.outputs.tokenizer_export import _training_text, words_counted_once

    rel = _release([["flight", "delayed", "again"], ["flight", "delayed"]] * 60, "dpsu-all", max_n=2)
    lens = np.asarray(rel.ngram_len)
    assert (lens == 1).any() and (lens == 2).any()
    n = rel.n_released
    counted = dataclasses.replace(rel, noisy_counts=np.full(n, 400.0), count_std=np.full(n, 1.0))
    reps = words_counted_once(np.full(n, 20), lens)
    assert reps.tolist() == [1 if k > 1 else 20 for k in lens.tolist()]
    text = " ".join(_training_text(rel.items.tolist(), reps)).split()
    singles = {w for w, k in zip(rel.items.tolist(), lens.tolist()) if k == 1}
    ngrams = [w for w, k in zip(rel.items.tolist(), lens.tolist()) if k > 1]
    for w in singles:  # its own 20, plus once for each released n-gram holding it
        assert text.count(w) == 20 + sum(g.split().count(w) for g in ngrams)
    spec = TokenizerSpec(model="bpe", vocab_size=40)
    fixed = dataclasses.replace(rel, noisy_counts=np.where(lens > 1, 0.0, 400.0), count_std=np.full(n, 1.0))
    assert build_tokenizer(counted, spec)[0].to_str() == build_tokenizer(fixed, spec)[0].to_str()
    alone = np.full(3, 7)
    assert words_counted_once(alone, np.array([2, 2, 3])).tolist() == [7, 7, 7]


def test_the_build_record_counts_the_released_words_kept_whole(demo_release):
    """``released_words_whole``: the released single words the tokenizer encodes as one token, counted word by
    word here; a word-level model keeps them all, a subword vocabulary smaller than the release cannot, a large
    one holds them all; the sentence the Export page shows says which."""
    from dpsu_core.outputs.tokenizer_export import whole_words_text

    words = [str(w) for w, n in zip(demo_release.items.tolist(), demo_release.ngram_len) if n == 1]
    assert len(words) > 100
    seen = {}
    for model, size in (("wordlevel", None), ("bpe", 120), ("bpe", 20_000), ("unigram", 120), ("wordpiece", 120)):
        spec = TokenizerSpec(model=model, special_tokens=SPECIALS, vocab_size=size)
        tok, info = build_tokenizer(demo_release, spec)
        whole = sum(len(tok.encode(w, add_special_tokens=False).ids) == 1 for w in words)
        assert (info["released_words"], info["released_words_whole"]) == (len(words), whole)
        seen[(model, size)] = whole
        text = whole_words_text(info)
        if whole == len(words):
            assert text.startswith(f"Every released word ({len(words):,})")
        else:
            assert text.startswith(f"{whole:,} of the {len(words):,} released words") and "split" in text
    assert seen[("wordlevel", None)] == len(words) == seen[("bpe", 20_000)]
    assert seen[("bpe", 120)] < len(words)
