"""``load_corpus``: the one entry point from a file to a ``Corpus``.

file -> readers.read_table (user, text rows, in batches for delimited files) -> per batch: the user
pattern, if any; drop rows without user/text and removal placeholders (counted); user ids interned;
the text handed to tokenize.TokenStream (tokenized in worker threads while the next batch is parsed,
then dropped) -> facts and checks of the chosen columns (columns.column_warnings, on the first batch)
-> token filters (clean) -> checks after tokenizing -> build.build_corpus.
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EmptyCorpusError, InputError, ParameterError
from ..params import PARAMS
from ..reading import READING
from ..timings import add, phase
from ..wording import opt
from .build import build_corpus
from .clean import drop_tokens, token_drop_mask
from .columns import (
    ColumnFacts,
    SanityWarning,
    apply_user_pattern,
    check_user_pattern,
    column_warnings,
    load_warnings,
)
from .intern import Interner
from .limits import DEFAULT_LIMITS, ReadLimits
from .model import Corpus, SourceInfo
from .readers import RawFile, Table, guess_columns, peek_columns, read_source, read_table
from .segment import KOREAN_MODES, Detection, tokenization_text
from .tokenize import Preprocessing, Tokenized, TokenStream, blank_and_removed, check_tokenizer


@dataclass(frozen=True)
class LoadOptions:
    """How to read and preprocess a corpus file: the one set of options of ``load_corpus``, the CLI's flags
    and the app's Corpus page (frozen and hashable: the app's corpus cache key).

    format        one of ``FORMATS``; "auto" detects from the extension, then the content.
    user_col,     the user-id and text columns: names, or positions (0, 1, ... or "0", "1", ...).
    text_col      When not given they are taken from known column names (``columns``), never by
                  position; when no name fits a ColumnError lists the columns.
    has_header    whether a CSV/TSV has a header row; None: detected from the first rows (said in the notes).
    row_is_user   each row is its own user (files without a user column).
    user_pattern  a regular expression; the user is its first group in the user column (e.g. '^([^/]+)/'
                  for the folder of an e-mail path). Rows where it does not match are dropped (counted).
    max_n         n-grams of length 1..max_n, formed within a post, never across posts.
    tokenizer     "auto" (default: words segmented by script, ``segment``), "fast", "treebank" (nltk's
                  TreebankWordTokenizer) or "char-ngrams".
    char_ngrams   N of the character n-grams (``char-ngrams``, and ``auto``'s scripts without a segmenter).
    korean        ``auto``'s Korean: "morphemes" (kiwipiepy: particles and endings split from their stems) or
                  "eojeol" (words as written).
    lowercase, strip_urls, drop_removed, strip_symbols, strip_html, email_headers, drop_digits, stop_words:
                  see ``Preprocessing`` (ignored for sequences).
    """

    format: str = "auto"
    user_col: str | int | None = None
    text_col: str | int | None = None
    has_header: bool | None = None
    max_n: int = 1
    tokenizer: str = "auto"
    char_ngrams: int = 2
    korean: str = "morphemes"
    lowercase: bool = True
    strip_urls: bool = True
    drop_removed: bool = True
    strip_symbols: bool = True
    strip_html: bool = True
    email_headers: bool = True
    drop_digits: bool = False
    stop_words: str | None = None
    row_is_user: bool = False
    user_pattern: str | None = None

    def preprocessing(self) -> Preprocessing:
        return Preprocessing(
            lowercase=self.lowercase,
            strip_urls=self.strip_urls,
            drop_removed=self.drop_removed,
            strip_symbols=self.strip_symbols,
            strip_html=self.strip_html,
            email_headers=self.email_headers,
            drop_digits=self.drop_digits,
            stop_words=self.stop_words or None,
            korean=self.korean,
        )


def load_corpus(
    source,
    options: LoadOptions | None = None,
    *,
    name: str | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
    on_batch: Callable[[pa.Array | None, pa.Array], None] | None = None,
    **overrides: Any,
) -> Corpus:
    """Read a corpus file into a user x n-gram ``Corpus``.

    source     a path (str/Path), raw bytes, or a binary file object (an upload) with optional ``.name``.
    options    a ``LoadOptions`` (default: all defaults); keyword ``overrides`` replace single fields of it,
               e.g. ``load_corpus(path, max_n=2)``.
    name       a display name for the corpus (default: the file name).
    limits     bounds on file size, decompressed size and JSON depth (``ReadLimits``; see limits.py).
    on_batch   called with each (users after the user pattern, texts) batch as read, before any row is dropped
               (``overlap.Fingerprinter.add``: the content check of a public file without a second read).

    Raises a DpsuError subclass naming the problem and the fix for every bad input.
    """
    opts = checked_options(options, **overrides)
    tokenizer, max_n, prep = opts.tokenizer, opts.max_n, opts.preprocessing()
    with phase("read"):
        table = read_table(
            source,
            format=opts.format,
            user_col=opts.user_col,
            text_col=opts.text_col,
            has_header=opts.has_header,
            row_is_user=opts.row_is_user,
            limits=limits,
            stream=True,
        )
    has_users = table.user_column is not None
    check_pattern_has_column(opts, table.user_column, table.format)
    rows = _tokenize_rows(table, tokenizer, prep, opts.user_pattern, opts.char_ngrams, on_batch)
    tok, post_user, n_users, rows_read, dropped = rows.tok, rows.post_user, rows.n_users, rows.read, rows.dropped
    facts: list[ColumnFacts] = []
    warns: list[SanityWarning] = []
    if not table.pretokenized and (has_users or opts.row_is_user) and rows.first is not None:
        sample = f"(in the first {len(rows.first[1]):,} rows)" if rows.batches > 1 else ""
        with phase("checks"):
            facts, warns = column_warnings(*rows.first, table.user_column, table.text_column, sample_note=sample)
    n_posts = int(post_user.shape[0])
    check_posts(n_posts, rows_read, dropped)

    drop = (
        None
        if table.pretokenized
        else token_drop_mask(tok.unigrams, drop_digits=prep.drop_digits, stop_language=prep.stop_words)
    )
    if drop is not None and drop.any():
        codes, post_ptr = drop_tokens(tok.codes, tok.post_ptr, drop)
        tok = replace(tok, codes=codes, post_ptr=post_ptr)
    check_tokens(tok.n_tokens, n_posts, table.text_column)
    tokens_per_user = np.bincount(post_user, weights=np.diff(tok.post_ptr), minlength=n_users)
    warns += load_warnings(rows_read, rows_read - n_posts, tokens_per_user)

    notes = list(table.notes) + row_notes(opts, table.user_column, rows.unmatched, dropped, table.pretokenized)
    info = SourceInfo(
        name=name if name is not None else _source_name(source),
        format=table.format,
        encoding=table.encoding,
        encoding_fallback=table.encoding_fallback,
        user_column=table.user_column,
        text_column=table.text_column,
        columns_guessed=table.columns_guessed,
        rows_read=rows_read,
        rows_dropped_no_user=dropped["no_user"],
        rows_dropped_no_text=dropped["no_text"],
        rows_dropped_removed=dropped["removed"],
        tokenizer="as given (pre-tokenized)" if table.pretokenized else tokenizer,
        char_ngrams=opts.char_ngrams,
        tokenization=""
        if table.pretokenized
        else tokenization_text(tokenizer, opts.char_ngrams, opts.korean, rows.detection),
        pinned=rows.detection.pinned(opts.korean) if rows.detection is not None else (),
        detected=tuple(rows.detected),
        notes=tuple(notes),
        header=table.header,
        encoding_fallback_rows=table.encoding_fallback_rows,
        row_is_user=opts.row_is_user,
        user_pattern=opts.user_pattern or None,
        column_facts=tuple(facts),
        warnings=tuple(warns),
    )
    with phase("build"):
        corpus = build_corpus(
            tok.codes,
            tok.post_ptr,
            post_user,
            tok.unigrams,
            max_n=max_n,
            n_users=n_users,
            source=info,
            users_digest=rows.users_digest,
        )
    empty_users = n_users - corpus.n_users
    if empty_users:
        info = _with_note(info, empty_users_note(empty_users))
        corpus = _replace_source(corpus, info)
    check_users(corpus.n_users)
    return corpus


def as_loaded(options: LoadOptions, source: SourceInfo) -> LoadOptions:
    """``options`` with the reading options that pin what the load of ``source`` did (``SourceInfo.pinned``): a
    command or script made from them redoes that segmentation wherever it runs."""
    pinned: dict[str, Any] = dict(source.pinned)
    return replace(options, **pinned) if pinned else options


# ---- shared with the Spark engine (engines.spark): one place for option checks, messages and notes -----
CHAR_NGRAM_TOKENIZERS = READING["char_ngrams"].tokenizers  # the tokenizers that use char_ngrams (declared there)


def checked_options(options: LoadOptions | None = None, **overrides: Any) -> LoadOptions:
    """``options`` with ``overrides``, checked before anything is read (tokenizer, max_n, stop-word language,
    user pattern); max_n as the checked int."""
    opts = replace(options if options is not None else LoadOptions(), **overrides)
    check_tokenizer(opts.tokenizer)
    if not isinstance(opts.char_ngrams, int) or isinstance(opts.char_ngrams, bool) or not 1 <= opts.char_ngrams <= 8:
        raise ParameterError(f"{opt('char_ngrams')} must be a whole number from 1 to 8, got {opts.char_ngrams!r}")
    if opts.korean not in KOREAN_MODES:
        raise ParameterError(f"{opt('korean')} must be one of {', '.join(KOREAN_MODES)}, got {opts.korean!r}")
    opts = replace(opts, max_n=int(PARAMS["max_n"].check(opts.max_n)))  # the one declaration of max_n
    if opts.stop_words:
        from .clean import stop_words

        stop_words(opts.stop_words)  # an unknown language fails before reading the file
    if opts.user_pattern:
        check_user_pattern(opts.user_pattern)
        if opts.row_is_user:
            raise ParameterError(
                f"{opt('user_pattern')} needs a user column; drop {opt('row_is_user')} to use a pattern"
            )
    return opts


def check_pattern_has_column(opts: LoadOptions, user_column: str | None, format: str) -> None:
    if opts.user_pattern and user_column is None:
        raise ParameterError(
            f"{opt('user_pattern')} needs a user column, and this {format} file has none; drop the pattern"
        )


def check_posts(n_posts: int, rows_read: int, dropped: dict[str, int]) -> None:
    """No kept post: say how many rows were read and why each was dropped."""
    if n_posts == 0:
        raise EmptyCorpusError(
            f"no usable rows: {rows_read} rows read, {dropped['no_user']} without a user id, "
            f"{dropped['no_text']} without text, {dropped['removed']} '[removed]'/'[deleted]'; "
            "check the user and text columns"
        )


def check_tokens(n_tokens: int, n_posts: int, text_column: str | None) -> None:
    if n_tokens == 0:
        raise EmptyCorpusError(
            f"the corpus has no tokens after preprocessing ({n_posts} posts read); check that the text column "
            f"({text_column or 'text'}) holds the posts, or switch off {opt('strip_symbols')}"
        )


def check_users(n_users: int) -> None:
    if n_users < 2:
        raise EmptyCorpusError(
            f"the corpus has {n_users} user with tokens; user-level differential privacy hides each user, so "
            "with a single user nothing can be released. Check the user column (does every row have the same "
            "user id?) or add more users"
        )


def row_notes(
    opts: LoadOptions, user_column: str | None, unmatched: int, dropped: dict[str, int], pretokenized: bool = False
) -> list[str]:
    """The notes on the user pattern, the dropped rows and the preprocessing."""
    notes = []
    if opts.user_pattern:
        notes.append(
            f"user = first group of {opts.user_pattern!r} in column {user_column!r}"
            + (f"; {unmatched:,} rows where it does not match have no user" if unmatched else "")
        )
    if dropped["no_user"]:
        notes.append(f"{dropped['no_user']} rows without a user id were dropped")
    if dropped["no_text"]:
        notes.append(f"{dropped['no_text']} rows without text were dropped")
    if dropped["removed"]:
        notes.append(f"{dropped['removed']} posts that were exactly '[removed]' or '[deleted]' were dropped")
    if not pretokenized:
        notes.append(f"preprocessing: {opts.preprocessing().describe()}; tokenizer: {opts.tokenizer}")
    return notes


def empty_users_note(n: int) -> str:
    return f"{n} users had no tokens after preprocessing and are not in the corpus"


@dataclass
class _Rows:
    tok: Tokenized
    post_user: np.ndarray  # int32 user of each post kept
    n_users: int
    read: int  # rows read
    dropped: dict[str, int]
    unmatched: int  # rows where the user pattern did not match
    batches: int
    first: tuple[pa.Array | None, pa.Array] | None  # the first batch (users after the pattern, texts)
    detected: list[str]  # what auto segmentation found and did (raw data)
    detection: Detection | None = None  # the same, as the segmentation's record (auto, char-ngrams)
    users_digest: bytes = b""  # ``intern.set_digest`` of the distinct user ids (b"": no user column)


def _tokenize_rows(
    table: Table,
    tokenizer: str,
    prep: Preprocessing,
    user_pattern: str | None,
    char_ngrams: int = 2,
    on_batch: Callable[[pa.Array | None, pa.Array], None] | None = None,
) -> _Rows:
    """Tokenize the table's batches as they are parsed, dropping rows without a user or text and removal
    placeholders (counted). Users get ids in order of first appearance (white space trimmed); without a
    user column every post is its own user. The table is consumed: its bytes are freed at the end."""
    dropped = {"no_user": 0, "no_text": 0, "removed": 0}
    read = unmatched = n_posts = batches = 0
    first = None
    users_seen = Interner(1 << 16)
    post_users: list[np.ndarray] = []
    parsed = iter(table.batches())
    detected: list[str] = []
    with TokenStream("whitespace" if table.pretokenized else tokenizer, prep, char_ngrams=char_ngrams) as stream:
        while True:
            started = time.perf_counter()  # "read": parsing the batch and sorting out its rows and users
            batch = next(parsed, None)
            if batch is None:
                add("read", time.perf_counter() - started)
                break
            users, texts = batch
            batches += 1
            rows = len(texts)
            read += rows
            if user_pattern and users is not None:
                users, miss = apply_user_pattern(users, user_pattern)
                unmatched += miss
            if first is None:
                first = (users, texts)
            if on_batch is not None:
                on_batch(users, texts)
            no_user = blank_and_removed(users, removed=False)[0] if users is not None else np.zeros(rows, bool)
            no_text, removed = blank_and_removed(texts, removed=prep.drop_removed and not table.pretokenized)
            no_text &= ~no_user
            removed &= ~no_user
            keep = ~(no_user | no_text | removed)
            dropped["no_user"] += int(no_user.sum())
            dropped["no_text"] += int(no_text.sum())
            dropped["removed"] += int(removed.sum())
            if not keep.all():
                mask = pa.array(keep)
                texts = texts.filter(mask)
                users = users.filter(mask) if users is not None else None
            if users is not None:
                post_users.append(users_seen.add_strings(pc.utf8_trim_whitespace(users)))
            n_posts += len(texts)
            add("read", time.perf_counter() - started)
            with phase("tokenize"):
                stream.submit(texts)  # tokenized in the workers while the next batch is parsed
        with phase("tokenize"):
            tok = stream.finish()
        if stream.detection is not None:
            detected = stream.detection.notes(char_ngrams)
    table.stream = table.texts = table.users = None  # read once: let the file's bytes go before the build
    digest = b""
    if table.user_column is None:  # every post is its own user
        post_user, n_users = np.arange(n_posts, dtype=np.int32), n_posts
    else:
        post_user = np.concatenate(post_users) if post_users else np.zeros(0, np.int32)
        n_users = len(users_seen)
        with phase("build"):
            digest = users_seen.digest()  # the ids of the users with a kept post; the ids go with the Interner
    return _Rows(tok, post_user, n_users, read, dropped, unmatched, batches, first, detected, stream.detection, digest)


def _source_name(source) -> str:
    if isinstance(source, (str, PurePath)):
        return PurePath(source).name
    return PurePath(str(getattr(source, "name", "") or "")).name or "uploaded data"


def _with_note(info: SourceInfo, note: str) -> SourceInfo:
    return replace(info, notes=info.notes + (note,))


def _replace_source(corpus: Corpus, info: SourceInfo) -> Corpus:
    return replace(corpus, source=info)


# ---- a file's identity: a "public" file must not be the private one ------------------------------------
def content_digest(raw: RawFile) -> str:
    """The identity of a file's content after unpacking (the same data zipped or not has the same digest)."""
    return hashlib.blake2b(raw.data, digest_size=16).hexdigest()


def refuse_private_copy(digest: str, private_digest: str | None, use: str) -> None:
    """Refuse a file meant as PUBLIC data (``use``: "the exploration corpus", "GW-KT's public corpus") whose
    content is the private corpus's: exploring on it would spend nothing on the private data, and GW-KT's
    proof needs frequencies that do not depend on the private users."""
    if private_digest is not None and digest == private_digest:
        raise InputError(
            f"this file holds exactly the private corpus's data; {use} must be PUBLIC data (never the private "
            "file or a copy of it): upload a public file"
        )


def same_content(a: str | PurePath, b: str | PurePath, limits: ReadLimits = DEFAULT_LIMITS) -> bool:
    """Whether two files hold the same data after unpacking (sizes first: different sizes are read no further
    unless one of them is compressed)."""
    pa_, pb = Path(a), Path(b)
    if pa_.resolve() == pb.resolve():
        return True
    packed = {".zip", ".gz"}
    if pa_.suffix.lower() not in packed and pb.suffix.lower() not in packed and pa_.stat().st_size != pb.stat().st_size:
        return False
    return content_digest(read_source(pa_, limits)) == content_digest(read_source(pb, limits))


# ---- uploads: a file's bytes and its name (the app) -------------------------------------------------
def _upload(data: bytes, name: str) -> io.BytesIO:
    if not isinstance(data, (bytes, bytearray)) or len(data) == 0:
        raise InputError(f"the uploaded file {name!r} is empty; upload a file with at least two users' posts")
    buf = io.BytesIO(bytes(data))
    buf.name = name  # the reader detects the format from the name
    return buf


def read_upload(data: bytes, name: str, limits: ReadLimits = DEFAULT_LIMITS) -> RawFile:
    """An upload's bytes, unpacked (zip/gzip) within ``limits``: do this once per upload and hand the RawFile
    to ``peek_upload`` and ``load_upload`` on every rerun, so a compressed upload is never unpacked twice."""
    return read_source(_upload(data, name), limits)


def peek_upload(
    data: bytes | RawFile, name: str, has_header: bool | None = None, format: str = "auto"
) -> tuple[list[str], str | None, str | None]:
    """(columns, guessed user column, guessed text column) of an uploaded file (its bytes, or the RawFile of
    ``read_upload``); ([], None, None) if it has none."""
    buf = data if isinstance(data, RawFile) else _upload(data, name)
    cols = [str(c) for c in (peek_columns(buf, format=format, has_header=has_header) or [])]
    if not cols:
        return [], None, None
    try:
        user, text = guess_columns(cols)
    except InputError:
        user, text = None, None
    return cols, user, text


def load_upload(
    data: bytes | RawFile,
    name: str,
    options: LoadOptions | None = None,
    on_batch: Callable[[pa.Array | None, pa.Array], None] | None = None,
) -> Corpus:
    """Tokenize an uploaded file (bytes + its name, or the RawFile of ``read_upload``) into a Corpus, in memory
    only (nothing is written to disk); ``on_batch`` as ``load_corpus``'s."""
    return load_corpus(
        data if isinstance(data, RawFile) else _upload(data, name), options, name=name, on_batch=on_batch
    )
