"""``load_corpus``: the one entry point from a file to a ``Corpus``.

file -> readers.read_table (user, text rows) -> drop rows without user/text and
removal placeholders (counted) -> tokenize.tokenize -> build.build_corpus.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EmptyCorpusError
from .build import build_corpus
from .intern import Interner
from .model import Corpus, SourceInfo
from .readers import read_table
from .tokenize import Preprocessing, TokenStream, blank_and_removed, check_tokenizer


def load_corpus(
    source,
    *,
    format: str = "auto",
    user_col=None,
    text_col=None,
    has_header: bool | None = None,
    max_n: int = 1,
    tokenizer: str = "fast",
    lowercase: bool = True,
    strip_urls: bool = True,
    drop_removed: bool = True,
    strip_symbols: bool = True,
    name: str | None = None,
) -> Corpus:
    """Read a corpus file into a user x n-gram ``Corpus``.

    source        a path (str/Path), raw bytes, or a binary file object (an upload) with optional ``.name``.
    format        one of ``FORMATS``; "auto" detects from the extension, then the content.
    user_col,     the user-id and text columns: names, or positions (0, 1, ... or "0", "1", ...).
    text_col      When not given they are guessed from common names and the choice is recorded.
    has_header    whether a CSV/TSV has a header row; None: yes, unless both columns are given by
                  position and the first row holds no common column name.
    max_n         n-grams of length 1..max_n, formed within a post, never across posts.
    tokenizer     "fast" (default) or "treebank" (nltk's TreebankWordTokenizer).
    lowercase, strip_urls, drop_removed, strip_symbols: see ``Preprocessing`` (ignored for sequences).
    name          a display name for the corpus (default: the file name).

    Raises a DpsuError subclass naming the problem and the fix for every bad input.
    """
    check_tokenizer(tokenizer)
    max_n = _check_max_n(max_n)
    prep = Preprocessing(
        lowercase=lowercase, strip_urls=strip_urls, drop_removed=drop_removed, strip_symbols=strip_symbols
    )
    table = read_table(source, format=format, user_col=user_col, text_col=text_col, has_header=has_header, stream=True)
    tok, post_user, n_users, rows_read, dropped = _tokenize_rows(table, tokenizer, prep)
    n_posts = int(post_user.shape[0])
    if n_posts == 0:
        raise EmptyCorpusError(
            f"no usable rows: {rows_read} rows read, {dropped['no_user']} without a user id, "
            f"{dropped['no_text']} without text, {dropped['removed']} '[removed]'/'[deleted]'; "
            "check the user and text columns"
        )
    if tok.n_tokens == 0:
        raise EmptyCorpusError(
            f"the corpus has no tokens after preprocessing ({n_posts} posts read); check that the text column "
            f"({table.text_column or 'text'}) holds the posts, or switch off 'strip symbols'"
        )

    notes = list(table.notes)
    if dropped["no_user"]:
        notes.append(f"{dropped['no_user']} rows without a user id were dropped")
    if dropped["no_text"]:
        notes.append(f"{dropped['no_text']} rows without text were dropped")
    if dropped["removed"]:
        notes.append(f"{dropped['removed']} posts that were exactly '[removed]' or '[deleted]' were dropped")
    if not table.pretokenized:
        notes.append(f"preprocessing: {prep.describe()}; tokenizer: {tokenizer}")
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
        notes=tuple(notes),
    )
    corpus = build_corpus(tok.codes, tok.post_ptr, post_user, tok.unigrams, max_n=max_n, n_users=n_users, source=info)
    empty_users = n_users - corpus.n_users
    if empty_users:
        info = _with_note(info, f"{empty_users} users had no tokens after preprocessing and are not in the corpus")
        corpus = _replace_source(corpus, info)
    if corpus.n_users < 2:
        raise EmptyCorpusError(
            f"the corpus has {corpus.n_users} user with tokens; user-level differential privacy hides each user, so "
            "with a single user nothing can be released. Check the user column (does every row have the same "
            "user id?) or add more users"
        )
    return corpus


def _tokenize_rows(table, tokenizer: str, prep: Preprocessing):
    """Tokenize the table's batches as they are parsed, dropping rows without a user or text and removal
    placeholders (counted). Users get ids in order of first appearance (white space trimmed).

    Returns (Tokenized, int32 user of each post, number of users, rows read, dropped counts).
    """
    dropped = {"no_user": 0, "no_text": 0, "removed": 0}
    rows_read = 0
    users_seen = Interner(1 << 16)
    post_users: list[np.ndarray] = []
    n_posts = 0
    saw_users = False
    with TokenStream(
        "whitespace" if table.pretokenized else tokenizer, prep, expected_bytes=table.size_bytes
    ) as stream:
        for users, texts in table.batches():
            rows = len(texts)
            rows_read += rows
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
                saw_users = True
                post_users.append(users_seen.add_strings(pc.utf8_trim_whitespace(users)))
            n_posts += len(texts)
            stream.submit(texts)  # tokenized in the workers while the next batch is parsed
        tok = stream.finish()
    table.stream = table.texts = table.users = None  # read once: let the file's bytes go before the build
    if not saw_users:  # no user column: every post is its own user
        post_user = np.arange(n_posts, dtype=np.int32)
        n_users = n_posts
    else:
        post_user = np.concatenate(post_users) if post_users else np.zeros(0, np.int32)
        n_users = len(users_seen)
    return tok, post_user, n_users, rows_read, dropped


def _check_max_n(max_n) -> int:
    from ..mechanisms.params import PARAMS  # the one declaration of max_n (lazy: avoids an import cycle)

    return int(PARAMS["max_n"].check(max_n))


def _source_name(source) -> str:
    if isinstance(source, (str, PurePath)):
        return PurePath(source).name
    return PurePath(str(getattr(source, "name", "") or "")).name or "uploaded data"


def _with_note(info: SourceInfo, note: str) -> SourceInfo:
    return replace(info, notes=info.notes + (note,))


def _replace_source(corpus: Corpus, info: SourceInfo) -> Corpus:
    return replace(corpus, source=info)
