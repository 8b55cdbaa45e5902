"""A Hugging Face ``tokenizers`` tokenizer (``tokenizer.json``) built from a release, and from nothing else.

Models:
  wordlevel  (default) the vocabulary is exactly the released single-word items plus the special tokens the
             user names (``[UNK]`` always); longer n-grams are left out (a word-level model cannot produce
             them: the pre-tokenizer cuts text into single words), and said so.
  bpe        byte-pair merges trained on the released items only;
  wordpiece  WordPiece trained on the released items only.
For ``bpe`` and ``wordpiece`` each item counts once, or, for the count mechanisms (pcr, bounded-counts,
count-laplace, ...), as often as its released noisy count (scaled so the training text stays small).
Either way the tokenizer is post-processing of the private output: no raw text or raw count is read.

The normalizer and pre-tokenizer repeat the corpus's preprocessing where ``tokenizers`` can express it: case
folding, typographic apostrophes, link removal, and the fast tokenizer's word rule (runs of letters, digits and
marks with inner apostrophes; symbols dropped, or kept as tokens of their own). What a tokenizer.json cannot
hold: a dictionary word segmenter (jieba, SudachiPy, newmm: the ``auto`` tokenizer's Chinese, Japanese and
Thai words), HTML and e-mail header removal, and the treebank and char-ngrams tokenizers. For such text the file
expects words already separated by spaces: segment first (``dpsu_core.corpus.tokenize.tokenize`` gives the
same words as the release) or call ``encode(words, is_pretokenized=True)``; ``bpe`` and ``wordpiece`` still
cut unsegmented text into released subwords.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError

MODELS: tuple[str, ...] = ("wordlevel", "bpe", "wordpiece")
UNK = "[UNK]"
DEFAULT_VOCAB_SIZE = 30_000
_TRAINING_TOKENS = 2_000_000  # at most this many words of training text from noisy counts
_WORD = r"\p{L}\p{N}\p{M}"
_URL = r"(?i)(?:\b[a-z][a-z0-9+.\-]*://|\bwww\.)\S+"  # as tokenize._URL
_IGNORED = "[\u00ad\u200c-\u200f\u2060-\u2064\ufeff\ufe00-\ufe0f\u180b-\u180f]"  # format characters, selectors


def check_special_tokens(names: object) -> None:
    """Special tokens at the API boundary: strings that are valid Unicode (no lone surrogate), or a ParameterError
    naming the bad one (never an error from inside ``tokenizers``)."""
    if isinstance(names, (bytes, bytearray)) or not isinstance(names, (str, Sequence)):
        raise ParameterError(
            f"special tokens must be a list of strings or comma-separated text, got {type(names).__name__}"
        )
    for i, name in enumerate([names] if isinstance(names, str) else names):
        if not isinstance(name, str):
            raise ParameterError(f"special token {i + 1} must be a string, got {type(name).__name__} {name!r:.40}")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise ParameterError(
                f"special token {i + 1} ({name.encode('utf-8', 'backslashreplace').decode()[:40]!r}) holds a lone "
                "surrogate, which is not valid Unicode text; remove it"
            ) from None


@dataclass(frozen=True)
class TokenizerSpec:
    """How to build the tokenizer; ``lowercase``, ``strip_urls``, ``strip_symbols`` and ``tokenizer`` are the
    corpus's reading options (``LoadOptions``), so new text is split the way the release was counted."""

    model: str = "wordlevel"
    special_tokens: tuple[str, ...] = (UNK,)
    vocab_size: int | None = None  # bpe/wordpiece: the target size (default DEFAULT_VOCAB_SIZE)
    lowercase: bool = True
    strip_urls: bool = True
    strip_symbols: bool = True
    tokenizer: str = "auto"

    @classmethod
    def from_options(cls, options: Any, **kw: Any) -> TokenizerSpec:
        return cls(
            lowercase=options.lowercase,
            strip_urls=options.strip_urls,
            strip_symbols=options.strip_symbols,
            tokenizer=options.tokenizer,
            **kw,
        )


def parse_special_tokens(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``[UNK]`` first, then the named special tokens (comma-separated text or a list), without repeats."""
    if text is not None:
        check_special_tokens(text)
    names = text.split(",") if isinstance(text, str) else list(text or ())
    out = [UNK]
    for name in (n.strip() for n in names):
        if name and name not in out:
            out.append(name)
    return tuple(out)


def check_spec(spec: TokenizerSpec) -> TokenizerSpec:
    if not isinstance(spec, TokenizerSpec):
        raise ParameterError(f"expected a TokenizerSpec, got {type(spec).__name__}")
    check_special_tokens(spec.special_tokens)
    size = spec.vocab_size
    if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer))):
        raise ParameterError(f"the tokenizer vocabulary size must be a whole number, got {size!r:.40}")
    if spec.model not in MODELS:
        raise ParameterError(f"unknown tokenizer model {spec.model!r}; choose one of {', '.join(MODELS)}")
    if spec.vocab_size is not None and (spec.model == "wordlevel" or not 2 <= spec.vocab_size <= 10_000_000):
        if spec.model == "wordlevel":
            raise ParameterError(
                "the vocabulary size is only for the bpe and wordpiece models (wordlevel keeps exactly the released "
                "items); drop it or choose a subword model"
            )
        raise ParameterError(f"the tokenizer vocabulary size must be 2 to 10,000,000, got {spec.vocab_size}")
    if UNK not in spec.special_tokens:
        raise ParameterError(f"the special tokens must include {UNK} (parse_special_tokens adds it)")
    return spec


def build_tokenizer(release: Any, spec: TokenizerSpec) -> tuple[Any, dict[str, Any]]:
    """(a ``tokenizers.Tokenizer``, how it was built: the release report's ``tokenizer`` entry)."""
    from tokenizers import Tokenizer, decoders, models, trainers

    spec = check_spec(spec)
    items = [str(s) for s in release.items.tolist()]
    lens = np.asarray(release.ngram_len)
    specials = list(spec.special_tokens)
    if spec.model == "wordlevel":
        words = [w for w, n in zip(items, lens.tolist()) if n == 1 and w not in specials]
        vocab = {tok: i for i, tok in enumerate(specials + words)}
        tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
        _set_pipeline(tok, spec)
        trained_on = f"exactly the {len(words):,} released single-word items"
        skipped = int((lens > 1).sum())
        if skipped:
            trained_on += (
                f" ({skipped:,} released n-grams of 2 or more words left out: a word-level model cannot produce them)"
            )
    else:
        size = spec.vocab_size or DEFAULT_VOCAB_SIZE
        if spec.model == "bpe":
            tok = Tokenizer(models.BPE(unk_token=UNK))
            trainer: Any = trainers.BpeTrainer(vocab_size=size, special_tokens=specials, show_progress=False)
            tok.decoder = decoders.BPEDecoder()
        else:
            tok = Tokenizer(models.WordPiece(unk_token=UNK))
            trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=specials, show_progress=False)
            tok.decoder = decoders.WordPiece()
        _set_pipeline(tok, spec)
        counts = release.noisy_counts
        tok.train_from_iterator(_training_text(items, counts), trainer=trainer)
        weights = "their released noisy counts as frequencies" if counts is not None else "each once"
        trained_on = f"the {len(items):,} released items only ({weights}), target vocabulary size {size:,}"
    info = {
        "model": spec.model,
        "vocabulary_size": tok.get_vocab_size(),
        "special_tokens": specials,
        "trained_on": trained_on,
        "pre_tokenizer": pipeline_text(spec),
        "post_processing": "built from the released items alone: post-processing of the private output",
    }
    return tok, info


def tokenizer_json(release: Any, spec: TokenizerSpec) -> tuple[bytes, dict[str, Any]]:
    """The tokenizer.json bytes and the build record."""
    tok, info = build_tokenizer(release, spec)
    return tok.to_str().encode("utf-8"), info


def _training_text(items: list[str], counts: Any) -> Iterator[str]:
    """Each item once, or about its noisy count times (scaled so all of it is at most _TRAINING_TOKENS words)."""
    if counts is None:
        yield from items
        return
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    scale = min(1.0, _TRAINING_TOKENS / max(float(c.sum()), 1.0))
    reps = np.maximum(1, np.rint(c * scale)).astype(np.int64)
    for item, k in zip(items, reps.tolist()):
        yield " ".join([item] * k)


def _set_pipeline(tok: Any, spec: TokenizerSpec) -> None:
    from tokenizers import Regex, normalizers, pre_tokenizers

    norm: list[Any] = [normalizers.Replace("\u200b", " "), normalizers.Replace(Regex(_IGNORED), "")]
    if spec.lowercase:
        norm.append(normalizers.Lowercase())
    norm += [normalizers.Replace("\u2019", "'"), normalizers.Replace("\u02bc", "'")]
    if spec.strip_urls:
        norm.append(normalizers.Replace(Regex(_URL), " "))
    if spec.strip_symbols:
        norm.append(normalizers.Replace(Regex(f"[^{_WORD}'\\s]"), " "))
        edges = pre_tokenizers.Split(Regex("^'+|'+$"), behavior="removed")
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), edges])
    else:
        symbols = pre_tokenizers.Split(Regex(f"[^{_WORD}'\\s]|^'+|'+$"), behavior="isolated")
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), symbols])
    tok.normalizer = normalizers.Sequence(norm)


def pipeline_text(spec: TokenizerSpec) -> str:
    """What the file's normalizer and pre-tokenizer do, and what they cannot do for this corpus's tokenizer."""
    steps = ["lower case" if spec.lowercase else "case kept", "typographic apostrophes as '"]
    if spec.strip_urls:
        steps.append("links removed")
    steps.append(
        "words = runs of letters, digits and marks with inner apostrophes; symbols dropped"
        if spec.strip_symbols
        else "words = runs of letters, digits and marks with inner apostrophes; every symbol a token of its own"
    )
    text = "the fast tokenizer's rule: " + ", ".join(steps)
    if spec.tokenizer == "auto":
        text += (
            ". Not in the file: the word segmenters of Chinese (jieba), Japanese (SudachiPy) and Thai (newmm), "
            "which a tokenizer.json cannot hold: give such text with its words separated by spaces (segment it "
            "first, e.g. with dpsu_core.corpus.tokenize.tokenize, or encode(words, is_pretokenized=True)); "
            "Khmer, Lao and Burmese character n-grams are not in the file either"
        )
    elif spec.tokenizer in ("treebank", "char-ngrams"):
        text += f". The corpus used the {spec.tokenizer} tokenizer, which a tokenizer.json cannot express: new text is split by the fast rule instead"
    return text
