"""The reading options, declared once: how a corpus file is read (header, columns, row-is-user, user pattern) and
cleaned (the preprocessing flags). Each is a field of ``corpus.LoadOptions``; this table says how the CLI spells it
(``cli`` adds its flags from here and reads them back), how the command export writes it (``command``), how a core
message names it (``wording``) and what the app's widget is called (the Corpus page and ``pages._text``).
No imports from the rest of the package: everything may import this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

# value: the flag takes a value (None or the default: not written); off: the option is on by default and the flag
# switches it off; on: the option is off by default and the flag switches it on.
Kind = Literal["value", "off", "on"]


@dataclass(frozen=True)
class ReadingOption:
    field: str  # the ``LoadOptions`` field (and the key a core message names it by, ``wording.opt``)
    flag: str  # the CLI's flag
    kind: Kind
    help: str  # the CLI's help
    label: str  # the app's widget label
    app: str  # how an app message names the widget
    neutral: str  # how a message names it elsewhere
    metavar: str | None = None
    default: str | int | None = None  # a value option's default (written only when it differs)
    type: Callable[[str], object] = str  # how the CLI parses a value option
    key: str = ""  # the Corpus page's widget key (its cleaning options, ``CLEANING_FIELDS``); "" elsewhere
    app_help: str = ""  # the Corpus page widget's help
    minimum: int | None = None  # an int option's bounds (the widget's; the loader checks the same)
    maximum: int | None = None
    tokenizers: tuple[str, ...] = ()  # the tokenizers that use it (empty: every one); given to another, it is refused

    def unused_by(self, tokenizer: str) -> bool:
        """Whether ``tokenizer`` ignores this option (the CLI refuses it then; the exported command leaves it out)."""
        return bool(self.tokenizers) and tokenizer not in self.tokenizers


# What the ``auto`` tokenizer makes of a Korean word (``--korean``, the app's 'Korean' choice, the exported
# command): the mode, and what the items of a release then are (the CLI's and the widget's help, the Release page).
KOREAN_MODES: dict[str, str] = {
    "morphemes": "each word cut into its morphemes by kiwipiepy, particles and endings split from their stems, so "
    "학교에, 학교는 and 학교를 count as 학교 (and 에, 는, 를); an ending that is a lone jamo (ᆫ, ᆯ, ᆫ다) is dropped",
    "content": "content morphemes only: nouns, and verb and adjective stems as their lemma (갔다 gives 가다, "
    "좋아한다 gives 좋아하다), foreign words and numbers; particles and endings are not items",
    "all-morphemes": "every morpheme as kiwipiepy cuts it, endings that are a lone jamo (ᆫ, ᆯ, ᆫ다) included",
    "eojeol": "words as written (eojeol): 학교에 and 학교는 are two items, as the fast tokenizer makes them",
}
KOREAN_DEFAULT = "morphemes"

READING_OPTIONS: tuple[ReadingOption, ...] = (
    ReadingOption(
        "format",
        "--format",
        "value",
        "the file's format (default: detected from its name, then its content)",
        "Format",
        "a 'Format'",
        "the format",
        default="auto",
    ),
    ReadingOption(
        "user_col",
        "--user-col",
        "value",
        "user-id column (name or 0-based position); taken from known names (author_id, author, user, ...) "
        "when not given, never by position",
        "User id column",
        "the 'User id column' picker",
        "the user column",
    ),
    ReadingOption(
        "text_col",
        "--text-col",
        "value",
        "text column (name or 0-based position)",
        "Text column",
        "the 'Text column' picker",
        "the text column",
    ),
    ReadingOption(
        "row_is_user",
        "--row-is-user",
        "on",
        "each row is its own user (for files without a user column)",
        "Each row is its own user",
        "'Each row is its own user'",
        "the 'each row is its own user' option",
    ),
    ReadingOption(
        "user_pattern",
        "--user-pattern",
        "value",
        "the user is the first group of REGEX in --user-col, e.g. --user-col file --user-pattern '^([^/]+)/'",
        "User pattern",
        "the 'User pattern' box",
        "the user pattern",
        metavar="REGEX",
    ),
    ReadingOption(
        "tokenizer",
        "--tokenizer",
        "value",
        "auto (default): words segmented by script (Chinese rjieba, Japanese fugashi+unidic-lite, Thai nlpo3, "
        "Korean kiwipiepy morphemes, Khmer khmer-nltk, Lao laonlp, Burmese character n-grams, other scripts as "
        "fast); fast: runs of letters and digits; "
        "treebank: NLTK's Treebank tokenizer; char-ngrams: each word cut into character n-grams",
        "Tokenizer",
        "the 'Tokenizer'",
        "the tokenizer",
        default="auto",
        key="tokenizer",
        app_help="auto: words by script (Chinese rjieba, Japanese fugashi+unidic-lite, Thai nlpo3, Korean kiwipiepy "
        "morphemes, Khmer khmer-nltk, Lao laonlp; Burmese as character n-grams; other scripts as fast). fast: runs of letters and digits (quick). treebank: NLTK's "
        "Treebank tokenizer (slower). char-ngrams: every word cut into character n-grams.",
    ),
    ReadingOption(
        "char_ngrams",
        "--char-ngrams",
        "value",
        "N of the character n-grams (--tokenizer char-ngrams, and auto's scripts without a segmenter)",
        "Character n-gram length",
        "the 'Character n-gram length' box",
        "the character n-gram length",
        metavar="N",
        default=2,
        type=int,
        key="char_ngrams",
        app_help="N of the character n-grams: the char-ngrams tokenizer, and auto's scripts without a word segmenter.",
        minimum=1,
        maximum=8,
        tokenizers=("auto", "char-ngrams"),
    ),
    ReadingOption(
        "korean",
        "--korean",
        "value",
        "auto's Korean words: "
        + "; ".join(f"{m}: {d}" for m, d in KOREAN_MODES.items())
        + f" (default: {KOREAN_DEFAULT})",
        "Korean",
        "the 'Korean' choice",
        "the Korean option",
        metavar="{" + ",".join(KOREAN_MODES) + "}",
        default=KOREAN_DEFAULT,
        key="korean",
        app_help="Korean words under the auto tokenizer (other languages are not affected). "
        + " ".join(f"**{m}**{' (default)' if m == KOREAN_DEFAULT else ''}: {d}." for m, d in KOREAN_MODES.items()),
        tokenizers=("auto",),
    ),
    ReadingOption(
        "lowercase",
        "--keep-case",
        "off",
        "do not lowercase",
        "Lowercase",
        "'Lowercase'",
        "the lowercase option",
        key="pp_lowercase",
    ),
    ReadingOption(
        "strip_urls",
        "--keep-urls",
        "off",
        "do not strip URLs",
        "Strip URLs",
        "'Strip URLs'",
        "the URL option",
        key="pp_strip_urls",
    ),
    ReadingOption(
        "drop_removed",
        "--keep-removed",
        "off",
        "keep [removed]/[deleted] posts",
        "Drop [removed]/[deleted]",
        "'Drop [removed]/[deleted]'",
        "the 'drop [removed]/[deleted]' option",
        key="pp_drop_removed",
    ),
    ReadingOption(
        "strip_symbols",
        "--keep-symbols",
        "off",
        "do not strip symbols",
        "Strip symbols",
        "'Strip symbols'",
        "the 'strip symbols' option",
        key="pp_strip_symbols",
    ),
    ReadingOption(
        "strip_html",
        "--keep-html",
        "off",
        "do not remove HTML tags nor decode entities",
        "Strip HTML",
        "'Strip HTML'",
        "the 'strip HTML' option",
        key="pp_strip_html",
        app_help="Remove tags; decode &amp; and the like.",
    ),
    ReadingOption(
        "email_headers",
        "--keep-email-headers",
        "off",
        "keep the header block of posts that are e-mails",
        "Drop e-mail headers",
        "'Drop e-mail headers'",
        "the 'drop e-mail headers' option",
        key="pp_email_headers",
        app_help="Posts that are whole e-mails (RFC 822) keep only their body.",
    ),
    ReadingOption(
        "drop_digits",
        "--drop-digits",
        "on",
        "drop tokens made only of digits",
        "Drop numbers",
        "'Drop numbers'",
        "the 'drop numbers' option",
        key="pp_drop_digits",
        app_help="Drop tokens made only of digits.",
    ),
    ReadingOption(
        "stop_words",
        "--stop-words",
        "value",
        "drop the stop words of LANGUAGE (e.g. english; lists from the stop-words package)",
        "Stop words",
        "a 'Stop words' list",
        "the stop-word list",
        metavar="LANGUAGE",
        key="pp_stop_words",
        app_help="Drop the stop words of a language (lists from the stop-words package).",
    ),
)
READING: dict[str, ReadingOption] = {o.field: o for o in READING_OPTIONS}

# has_header is three-valued (detected, yes, no): two flags, and one widget with three choices
HEADER_FLAGS = {True: "--header", False: "--no-header"}
HEADER_HELP = {
    True: "the first row is a header (default: detected)",
    False: "the file has no header row (default: detected)",
}
HEADER_LABEL = "Header row"
HEADER_APP = {"header": "'yes' under 'Header row'", "no_header": "'no' under 'Header row'"}
HEADER_NEUTRAL = {
    "header": "the header choice (the first row is a header)",
    "no_header": "the header choice (the file has no header row)",
}

# How a file is read (its layout and columns), as opposed to how its posts are cleaned: GW-KT's public corpus takes
# these too, under --public-... flags (``public_flag``), and is cleaned as the private corpus is by default.
FILE_FIELDS: tuple[str, ...] = ("format", "user_col", "text_col", "row_is_user", "user_pattern")
# How the posts are cleaned and cut into tokens: the Corpus page's widgets (each option's ``key``), in its order.
TOKENIZING_FIELDS: tuple[str, ...] = ("tokenizer", "char_ngrams", "korean")
CLEANING_FIELDS: tuple[str, ...] = tuple(o.field for o in READING_OPTIONS if o.key and o.field not in TOKENIZING_FIELDS)


def public_flag(flag: str) -> str:
    """The CLI flag of a reading option for GW-KT's public corpus: --user-col -> --public-user-col."""
    return "--public-" + flag.removeprefix("--")
