"""A Hugging Face tokenizer built from a release, and from nothing else: a ``tokenizer.json`` file, or a directory
that ``transformers.AutoTokenizer.from_pretrained`` loads as it is.

Models:
  wordlevel  (default) the vocabulary is exactly the released single-word items plus the special tokens
             (``[UNK]`` and ``[PAD]`` always); longer n-grams are left out (a word-level model cannot produce
             them: the pre-tokenizer cuts text into single words), and said so.
  bpe        byte-pair merges trained on the released items only (sentencepiece-style ``▁`` word starts);
  wordpiece  WordPiece trained on the released items only (``##`` continuations);
  unigram    a Unigram language model trained on the released items only (as sentencepiece LMs use; ``▁``).
For the subword models each item counts once, or, when the release carries noisy counts (the count mechanisms,
or a set release with ``--with-counts``, ``mechanisms.item_counts``), as often as ``training_frequencies`` says:
the square root of its noisy count in units of its own noise's standard deviation (public), so a count within
the noise counts once and a release whose noise exceeds every count trains exactly the set-only tokenizer; an
n-gram beside single words trains once (``words_counted_once``: its occurrences are inside its words' counts). Either way the tokenizer is
post-processing of the private output: no raw text or raw count is read. Every model decodes ``decode(encode(text))`` back to the normalised text
(the words of the release's tokenizer, separated by single spaces).

The normalizer and pre-tokenizer are the corpus's preprocessing wherever ``tokenizers`` can express it, built from
the release tokenizer's own tables (``corpus.charclass``): its case folding (Arrow's one-to-one lower case, so
``İstanbul`` is ``istanbul`` as in the release, not ``i̇stanbul``), its character classes (word, space, apostrophe,
ignored), link removal (the release's own pattern, ``corpus.tokenize.URL_PATTERN``) and the fast tokenizer's word
rule (runs of word characters with inner apostrophes; symbols dropped, or kept as tokens of their own). What a
tokenizer.json cannot hold: a dictionary word segmenter (jieba, SudachiPy, newmm: the ``auto`` tokenizer's Chinese,
Japanese and Thai words), HTML and e-mail header removal, and the treebank and char-ngrams tokenizers. For such
text the file expects words already separated by spaces: segment first (``dpsu_core.corpus.tokenize.tokenize``
gives the same words as the release) or call ``encode(words, is_pretokenized=True)``; the subword models still
cut unsegmented text into released subwords.
"""

from __future__ import annotations

import functools
import io
import json
import unicodedata
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..mechanisms.base import check_release
from ..params import OPTIONS

#: the model and the subword models' vocabulary size: declared once in ``params.OPTIONS`` (the CLI's flags, the
#: Export page's widgets, the exported command and the messages read them)
MODEL, VOCAB_SIZE = OPTIONS["tokenizer_model"], OPTIONS["tokenizer_vocab_size"]
MODELS: tuple[str, ...] = MODEL.choices
DEFAULT_MODEL: str = MODEL.default
UNK, PAD = "[UNK]", "[PAD]"
#: the special tokens every exported tokenizer has (CLI, app and the exported command: one set of defaults)
DEFAULT_SPECIAL_TOKENS: tuple[str, ...] = (UNK, PAD)
DEFAULT_VOCAB_SIZE: int = VOCAB_SIZE.default
METASPACE = "\u2581"  # ▁: a word start in the bpe and unigram models (sentencepiece's marker)
_MAX_TRAINING_WORDS = 20_000_000  # the training text from counts is at most about this many words
_MAX_SPECIAL_LEN = 100
#: the role ``transformers`` gives a special token, by its usual name; other names are additional special tokens
ROLES: dict[str, str] = {
    "[UNK]": "unk_token",
    "<unk>": "unk_token",
    "[PAD]": "pad_token",
    "<pad>": "pad_token",
    "[CLS]": "cls_token",
    "[SEP]": "sep_token",
    "[MASK]": "mask_token",
    "<mask>": "mask_token",
    "[BOS]": "bos_token",
    "<s>": "bos_token",
    "[EOS]": "eos_token",
    "</s>": "eos_token",
}
#: the files of a tokenizer directory, in ``directory_files``' order (the output check reads them from here)
DIRECTORY_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def check_special_tokens(names: object) -> None:
    """Special tokens at the API boundary: comma-separated text or a list of strings, each checked by
    ``_check_special`` (a ParameterError naming the bad one, never an error from inside ``tokenizers``)."""
    if isinstance(names, (bytes, bytearray)) or not isinstance(names, (str, Sequence)):
        raise ParameterError(
            f"special tokens must be a list of strings or comma-separated text, got {type(names).__name__}"
        )
    entries = [n for n in names.split(",") if n.strip()] if isinstance(names, str) else list(names)
    for i, name in enumerate(entries):
        _check_special(i + 1, name)


@dataclass(frozen=True)
class TokenizerSpec:
    """How to build the tokenizer; ``lowercase``, ``strip_urls``, ``strip_symbols`` and ``tokenizer`` are the
    corpus's reading options (``LoadOptions``), so new text is split the way the release was counted."""

    model: str = DEFAULT_MODEL
    special_tokens: tuple[str, ...] = DEFAULT_SPECIAL_TOKENS
    vocab_size: int | None = None  # subword models: the target size (default DEFAULT_VOCAB_SIZE)
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


def _check_special(i: int, name: Any) -> str:
    """Special token number ``i``: a short string of valid Unicode with no control characters."""
    if not isinstance(name, str):
        raise ParameterError(
            f"special token {i} must be a string, got {type(name).__name__} {name!r:.40}; give names such as '[CLS]'"
        )
    if not name:
        raise ParameterError(f"special token {i} is empty; give names such as '[CLS]' or leave the list out")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ParameterError(
            f"special token {i} ({name.encode('utf-8', 'backslashreplace').decode()[:40]!r}) holds a lone "
            "surrogate, which is not valid Unicode text; remove it"
        ) from None
    bad = [c for c in name if unicodedata.category(c) == "Cc"]
    if bad:
        raise ParameterError(f"special token {i} ({name!r:.60}) holds a control character {bad[0]!r}; remove it")
    if len(name) > _MAX_SPECIAL_LEN:
        raise ParameterError(
            f"special token {i} ({name[:20]!r}...) is {len(name)} characters long; at most {_MAX_SPECIAL_LEN}"
        )
    if could_be_in_a_word(name):
        raise ParameterError(
            f"special token {i} ({name!r:.40}) is made of letters, digits or apostrophes, so it could be part of a "
            "released word, which would then no longer encode to itself (with 'a': 'alpha' -> 'a', '[UNK]', 'a'); "
            f"put a symbol in it, e.g. '<{name[:40]}>'"
        )
    return name


def could_be_in_a_word(text: str) -> bool:
    """Whether ``text`` could be part of a word of the release's tokenizer: every character a word character or an
    apostrophe (``corpus.charclass``, with case: a special token is matched in the text before case folding).
    A special token is cut out of the text wherever it occurs, before words are found, so such a token would cut
    the released words holding it (no ``tokenizers`` option keeps it whole next to a word's inner apostrophe);
    a token with any other character (``[CLS]``, ``<s>``) never occurs inside a released word."""
    from ..corpus.charclass import APOS, WORD, char_classes

    cls = char_classes()
    return all(c == "'" or int(cls[ord(c)]) in (WORD, APOS) for c in text)


def parse_special_tokens(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``[UNK]`` and ``[PAD]`` first, then the named special tokens (comma-separated text or a list of strings),
    without repeats; each checked (``check_special_tokens``: a string, valid Unicode, no control characters)."""
    if text is not None:
        check_special_tokens(text)
    names = text.split(",") if isinstance(text, str) else list(text or ())
    out = list(DEFAULT_SPECIAL_TOKENS)
    for raw in names:
        name = raw.strip()
        if name and name not in out:  # "[PAD],,": an empty entry between commas
            out.append(name)
    return tuple(out)


def special_roles(specials: Sequence[str]) -> dict[str, Any]:
    """``transformers``' special-token map: each role (``ROLES``) its first token; the rest additional tokens."""
    roles: dict[str, Any] = {}
    extra = []
    for name in specials:
        role = ROLES.get(name)
        if role is not None and role not in roles:
            roles[role] = name
        else:
            extra.append(name)
    if extra:
        roles["additional_special_tokens"] = extra
    return roles


def tokenizer_flags(spec: TokenizerSpec) -> list[str]:
    """The CLI flags that rebuild this tokenizer, defaults left out (``command.release_argv``; the reading options
    come from the corpus's own flags)."""
    flags: list[str] = []
    if spec.model != DEFAULT_MODEL:
        flags += [MODEL.cli, spec.model]
    extra = [t for t in spec.special_tokens if t not in DEFAULT_SPECIAL_TOKENS]
    if extra:
        flags += ["--special-tokens", ",".join(extra)]
    if spec.vocab_size is not None and spec.vocab_size != DEFAULT_VOCAB_SIZE:
        flags += [VOCAB_SIZE.cli, str(spec.vocab_size)]
    return flags


def check_spec(spec: TokenizerSpec) -> TokenizerSpec:
    if not isinstance(spec, TokenizerSpec):
        raise ParameterError(f"expected a TokenizerSpec, got {type(spec).__name__}")
    check_special_tokens(spec.special_tokens)
    size = spec.vocab_size
    if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer))):
        raise ParameterError(f"the tokenizer vocabulary size must be a whole number, got {size!r:.40}")
    if spec.model not in MODELS:
        raise ParameterError(f"unknown tokenizer model {spec.model!r}; choose one of {', '.join(MODELS)}")
    if spec.vocab_size is not None:
        if spec.model == "wordlevel":
            raise ParameterError(
                "the vocabulary size is only for the subword models (bpe, wordpiece, unigram; wordlevel keeps "
                "exactly the released items); drop it or choose a subword model"
            )
        if isinstance(spec.vocab_size, bool) or not isinstance(spec.vocab_size, (int, np.integer)):
            raise ParameterError(f"the tokenizer vocabulary size must be a whole number, got {spec.vocab_size!r}")
        low, high = VOCAB_SIZE.minimum or 0, VOCAB_SIZE.maximum or 0
        if not low <= spec.vocab_size <= high:
            raise ParameterError(
                f"the tokenizer vocabulary size must be {low:,.0f} to {high:,.0f}, got {spec.vocab_size}"
            )
    if not isinstance(spec.special_tokens, (tuple, list)):
        raise ParameterError("the special tokens must be a tuple of strings (parse_special_tokens makes one)")
    for must in DEFAULT_SPECIAL_TOKENS:
        if must not in spec.special_tokens:
            raise ParameterError(f"the special tokens must include {must} (parse_special_tokens adds it)")
    return spec


def build_tokenizer(
    release: Any, spec: TokenizerSpec, *, frequencies: np.ndarray | None = None
) -> tuple[Any, dict[str, Any]]:
    """(a ``tokenizers.Tokenizer``, how it was built: the release report's ``tokenizer`` entry). ``frequencies``:
    whole training frequencies given outright instead of ``training_frequencies`` of the release's counts; only
    the tokenizer benchmark's NON-private reference uses it (trained on true word frequencies, as on raw text)."""
    from tokenizers import Tokenizer, decoders, models, trainers

    spec = check_spec(spec)  # a bad spec is refused before the release is looked at
    release = check_release(release)
    items = [str(s) for s in release.items.tolist()]
    lens = np.asarray(release.ngram_len)
    specials = list(spec.special_tokens)
    words = [w for w, n in zip(items, lens.tolist()) if n == 1 and w not in specials]  # the released single words
    if spec.model == "wordlevel":
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
        trainer: Any
        if spec.model == "bpe":
            tok = Tokenizer(models.BPE(unk_token=UNK, fuse_unk=True))
            trainer = trainers.BpeTrainer(vocab_size=size, special_tokens=specials, show_progress=False)
            tok.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always", split=True)
        elif spec.model == "unigram":
            tok = Tokenizer(models.Unigram())
            trainer = trainers.UnigramTrainer(
                vocab_size=size, special_tokens=specials, unk_token=UNK, show_progress=False
            )
            tok.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always", split=True)
        else:
            tok = Tokenizer(models.WordPiece(unk_token=UNK))
            trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=specials, show_progress=False)
            tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
        _set_pipeline(tok, spec)
        counts = release.noisy_counts
        reps = None if counts is None else words_counted_once(training_frequencies(counts, release.count_std), lens)
        if frequencies is not None:
            reps = np.maximum(1, np.asarray(frequencies, dtype=np.int64))
        tok.train_from_iterator(_training_text(items, reps), trainer=trainer)
        weights = (
            f"their released noisy counts as frequencies ({FREQUENCY_RULE})"
            if counts is not None
            else "each once"
            if frequencies is None
            else "the given frequencies"
        )
        trained_on = f"the {len(items):,} released items only ({weights}), target vocabulary size {size:,}"
    tok.add_special_tokens(specials)
    roles = special_roles(specials)
    _set_post_processor(tok, roles)
    info = {
        "model": spec.model,
        "vocabulary_size": tok.get_vocab_size(),
        "released_words": len(words),
        "released_words_whole": words_whole(tok, words),
        "special_tokens": specials,
        "special_token_roles": roles,
        "trained_on": trained_on,
        "pre_tokenizer": pipeline_text(spec),
        "post_processing": "built from the released items alone: post-processing of the private output",
    }
    return tok, info


def words_whole(tok: Any, words: list[str]) -> int:
    """How many of ``words`` (the released single words) ``tok`` encodes as one token each: all of them for a
    word-level model; for a subword model, those its vocabulary holds whole (the rest are split into pieces)."""
    if not words:
        return 0
    return sum(len(e.ids) == 1 for e in tok.encode_batch(words, add_special_tokens=False))


def whole_words_text(info: dict[str, Any]) -> str:
    """One sentence on ``build_tokenizer``'s record: how many released words have a token of their own, and what
    that means for noisy counts (they can only choose which words stay whole when not every word fits)."""
    n, whole = int(info.get("released_words", 0)), int(info.get("released_words_whole", 0))
    if n == 0:
        return "The release holds no single words."
    if whole == n:
        text = f"Every released word ({n:,}) is one token of this tokenizer"
        if info.get("model") != "wordlevel":
            text += (
                ": the vocabulary holds them all whole, so noisy counts (if the release has them) did not choose "
                "which words stay whole"
            )
        return text + "."
    return (
        f"{whole:,} of the {n:,} released words are one token each; the other {n - whole:,} are split into pieces "
        "(a larger vocabulary size keeps more whole; noisy counts, if the release has them, choose which)."
    )


def tokenizer_json(release: Any, spec: TokenizerSpec) -> tuple[bytes, dict[str, Any]]:
    """The tokenizer.json bytes and the build record."""
    tok, info = build_tokenizer(release, spec)
    return tok.to_str().encode("utf-8"), info


def tokenizer_files(release: Any, spec: TokenizerSpec) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The files of a tokenizer directory (``DIRECTORY_FILES``: what ``AutoTokenizer.from_pretrained`` reads) and
    the build record. ``special_tokens_map.json`` names each special token's role (unk and pad always; cls, sep,
    mask, bos, eos where the user named them), so padding and batching work as loaded."""
    body, info = tokenizer_json(release, spec)
    return directory_files(body, info), info


def directory_files(body: bytes, info: dict[str, Any]) -> dict[str, bytes]:
    """tokenizer.json ``body`` with the two configuration files ``transformers`` reads beside it."""
    roles = info["special_token_roles"]
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,  # decode gives the normalised text back, spaces as they were
        "padding_side": "right",
        "model_input_names": ["input_ids", "attention_mask"],
        **roles,
    }

    def dump(obj: Any) -> bytes:
        return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    return dict(zip(DIRECTORY_FILES, (body, dump(config), dump(roles)), strict=True))


def is_directory_target(path: Any) -> bool:
    """``--export-tokenizer PATH``: a path ending in .json is the single tokenizer.json (as before); any other
    path is a directory ``AutoTokenizer.from_pretrained`` loads."""
    return not str(path).lower().endswith(".json")


def output_target(path: Any) -> Any:
    """What ``--export-tokenizer PATH`` writes, for ``outputs.check_output_paths``: the file PATH (ending in .json),
    or the folder PATH with every file ``directory_files`` writes (``DIRECTORY_FILES``), made if missing."""
    from .writer import FolderOutput

    if not is_directory_target(path):
        return path
    return FolderOutput(
        path,
        DIRECTORY_FILES,
        hint="give a folder path (its files are written there) or a path ending in .json for tokenizer.json alone",
    )


def write_directory(path: Any, files: dict[str, bytes]) -> None:
    """Make the directory (if needed) and write each file whole or not at all (``export.atomic_write``)."""
    from .export import atomic_write

    p = Path(path)
    p.mkdir(exist_ok=True)
    for name, body in files.items():
        atomic_write(p / name, body)


def directory_zip(files: dict[str, bytes], folder: str = "tokenizer") -> bytes:
    """The directory's files in one zip (the app's download): unzip and pass the folder to from_pretrained. The same
    files give the same bytes (a fixed date inside), so a rerun of the page keeps its download."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in files.items():
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, body)
    return buf.getvalue()


#: how noisy counts become training frequencies (``training_frequencies``), as the report says
FREQUENCY_RULE = "sqrt(count / sigma) rounded, at least 1; n-grams once beside single words"
#: count / sigma from which ``training_frequencies`` gives a word more than once: sqrt(x) rounds to 2 from 1.5
MORE_THAN_ONCE_AT = 2.25


def training_frequencies(counts: Any, std: Any) -> np.ndarray:
    """How often each released item appears in the subword trainer's text: the square root of its noisy count in
    units of its noise's standard deviation (``std``, public: the calibration's sigma; None for exact counts, whose
    unit is one occurrence), rounded, at least 1 (a released item is named at least once; a count at or below 0 is
    noise). So a count within the noise (below 2.25 sigma) weighs as an item seen once, and when the noise exceeds
    every count the training text is the set-only one: counts help where they stand above their noise and are
    ignored where they do not. The rule reads the public sigma only, never raw data.

    Why the square root, and why in sigma units rather than scaled to a fixed size: the subword trainers learn from
    the released words what must also spell the words that were not released; frequencies dominated by a few head
    words leave that tail letter by letter. Unigram suffers most: its EM prunes the pieces the head does not use, and
    the more text it sees the harder (the former rule, counts scaled to 200,000 words, cost it about one token per
    word). Measured on the tokenizer benchmark's first half only (its users split again, the held-out half never
    looked at: ``python -m benchmarks.run tokenizer_tuning``), at the default share, medians over independent
    draws at a vocabulary that binds, for BPE and Unigram at epsilon 1, 3, 8 on the demo corpus and at epsilon 3 on
    synthetic-200k: for BPE the square root was best or within 0.5% of count / sigma (which was 2.4% behind it on
    synthetic-200k); for Unigram it beat count / sigma in all four, while counts ignored were ahead of it by up to
    2.0%; the scaling to 200,000 words cost Unigram 15 to 32% (``benchmarks/RESULTS.md``).
    The text is scaled down (each item at least once) if it would pass ``_MAX_TRAINING_WORDS``. Post-processing of
    the released counts."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    s = np.ones_like(c) if std is None else np.broadcast_to(np.asarray(std, dtype=np.float64), c.shape)
    units = np.sqrt(c / np.where(s > 0, s, 1.0))
    total = float(units.sum())
    if total > _MAX_TRAINING_WORDS:
        units = units * (_MAX_TRAINING_WORDS / total)
    return np.maximum(1, np.rint(units)).astype(np.int64)


def words_counted_once(reps: np.ndarray, lens: Any) -> np.ndarray:
    """Training frequencies with every multi-word item (an n-gram) once when the release holds single words: an
    n-gram's occurrences are already inside its words' own counts (every ``new york`` is a ``new`` and a ``york``),
    and the trainers see words, never n-grams, so its count added to theirs would count those words twice. A
    release of n-grams alone keeps them (they are its only counts)."""
    lens = np.asarray(lens)
    if not (lens == 1).any():
        return reps
    return np.where(lens > 1, 1, reps)


def _training_text(items: list[str], reps: np.ndarray | None) -> Iterator[str]:
    """Each item once, or ``reps`` times (``training_frequencies``)."""
    if reps is None:
        yield from items
        return
    for item, k in zip(items, reps.tolist()):
        yield " ".join([item] * k)


@functools.lru_cache(maxsize=1)
def _classes() -> dict[str, str]:
    """Regex character classes (Oniguruma syntax) of the release tokenizer's table (``charclass.char_classes``):
    its word, space and ignored characters exactly, and the typographic apostrophes."""
    from ..corpus.charclass import APOS, IGNORED, SPACE, UNSPACED, WORD, char_classes

    cls = char_classes()

    def ranges(kind: int, drop: tuple[int, ...] = ()) -> str:
        m = (cls == kind).astype(np.int8)
        for cp in drop:
            m[cp] = 0
        d = np.diff(np.concatenate([[0], m, [0]]))
        starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1
        return "".join(
            f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in zip(starts.tolist(), ends.tolist())
        )

    return {
        "word": ranges(WORD),
        "space": ranges(SPACE),
        "ignored": ranges(IGNORED),
        "apostrophes": ranges(APOS, (ord("'"),)),
        "unspaced": "".join(f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in UNSPACED),
    }


@functools.lru_cache(maxsize=1)
def _case_fixes() -> tuple[tuple[str, str], ...]:
    """(code point, the release's lower case) where ``tokenizers``' Lowercase (Unicode's full lower case, as
    ``str.lower``) differs from the release's one-to-one table (``charclass.lower_table``, Arrow's): the Turkish
    dotted İ (U+0130) is ``i`` in the release, ``i̇`` (two code points) in Unicode's full mapping. Applied before
    Lowercase, so the exported tokenizer folds case exactly as the release did."""
    from ..corpus.charclass import lower_table

    table = lower_table()
    changed = np.flatnonzero(table != np.arange(table.shape[0]))
    out = []
    for cp in changed.tolist():
        c = chr(cp)
        if c.lower() != chr(int(table[cp])):
            out.append((c, chr(int(table[cp]))))
    return tuple(out)


def _set_pipeline(tok: Any, spec: TokenizerSpec) -> None:
    from tokenizers import Regex, normalizers, pre_tokenizers

    from ..corpus.charclass import ZWSP
    from ..corpus.tokenize import URL_PATTERN

    k = _classes()
    norm: list[Any] = []
    if spec.strip_urls:  # first, on the text as given (the release removes links before it folds case)
        norm.append(normalizers.Replace(Regex(URL_PATTERN), " "))
    if spec.lowercase:
        norm += [normalizers.Replace(a, b) for a, b in _case_fixes()]
        norm.append(normalizers.Lowercase())
    # a zero width space next to a letter of a script written without spaces is a word break (charclass.UNSPACED)
    hint = f"\\x{{{ZWSP:X}}}"
    norm.append(normalizers.Replace(Regex(f"(?<=[{k['unspaced']}]){hint}|{hint}(?=[{k['unspaced']}])"), " "))
    norm.append(normalizers.Replace(Regex(f"[{k['ignored']}]"), ""))
    norm.append(normalizers.Replace(Regex(f"[{k['apostrophes']}]"), "'"))
    norm.append(normalizers.Replace(Regex(f"[{k['space']}]"), " "))
    word = k["word"]
    if spec.strip_symbols:
        norm.append(normalizers.Replace(Regex(f"[^{word}' ]"), " "))
        pieces = [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex("^'+|'+$"), behavior="removed")]
    else:
        symbols = pre_tokenizers.Split(Regex(f"[^{word}' ]|^'+|'+$"), behavior="isolated")
        pieces = [pre_tokenizers.WhitespaceSplit(), symbols]
    if spec.model in ("bpe", "unigram"):  # each word starts with ▁: the decoder turns it back into a space
        pieces.append(pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always", split=True))
    tok.normalizer = normalizers.Sequence(norm)
    tok.pre_tokenizer = pre_tokenizers.Sequence(pieces)


def _set_post_processor(tok: Any, roles: dict[str, Any]) -> None:
    """[CLS] text [SEP] (or <s> text </s>) around every encoded text when both tokens were asked for."""
    from tokenizers import processors

    for first, last in (("cls_token", "sep_token"), ("bos_token", "eos_token")):
        a, b = roles.get(first), roles.get(last)
        if a is not None and b is not None:
            ids = [(a, tok.token_to_id(a)), (b, tok.token_to_id(b))]
            tok.post_processor = processors.TemplateProcessing(
                single=f"{a} $A {b}", pair=f"{a} $A {b} $B:1 {b}:1", special_tokens=ids
            )
            return


def pipeline_text(spec: TokenizerSpec) -> str:
    """What the file's normalizer and pre-tokenizer do, and what they cannot do for this corpus's tokenizer."""
    steps = ["lower case as the release folds it" if spec.lowercase else "case kept", "typographic apostrophes as '"]
    if spec.strip_urls:
        steps.append("links removed")
    steps.append(
        "words = runs of letters, digits and marks with inner apostrophes; symbols dropped"
        if spec.strip_symbols
        else "words = runs of letters, digits and marks with inner apostrophes; every symbol a token of its own"
    )
    text = "the fast tokenizer's rule: " + ", ".join(steps)
    if spec.tokenizer == "auto":
        from ..corpus.segmenters import CANDIDATES, chosen

        found = [(language, chosen(language)) for language in CANDIDATES]
        names = ", ".join(f"{language} ({c.name})" for language, c in found if c is not None)
        which = f"the word segmenters ({names})" if names else "the word segmenters of the auto tokenizer"
        text += (
            f". Not in the file: {which}, which a tokenizer.json cannot hold: give such text "
            "with its words separated by spaces (segment it first, e.g. with dpsu_core.corpus.tokenize.tokenize, "
            "or encode(words, is_pretokenized=True)); character n-grams (Burmese, or a language whose segmenter "
            "is not installed) are not in the file either"
        )
    elif spec.tokenizer in ("treebank", "char-ngrams"):
        text += f". The corpus used the {spec.tokenizer} tokenizer, which a tokenizer.json cannot express: new text is split by the fast rule instead"
    return text
