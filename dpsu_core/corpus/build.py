"""Build a Corpus from tokenized posts, all in vectorised numpy/pandas.

Input is the flat form every reader/tokenizer produces:
  tokens      int32 ids into ``unigrams`` for every token of every post, posts concatenated
  post_ptr    int64 offsets (n_posts + 1): post j is tokens[post_ptr[j]:post_ptr[j+1]]
  post_user   int64 user index (0..n_users-1) of each post
n-grams of length 1..max_n are formed inside a post, never across posts.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import EmptyCorpusError
from .model import Corpus, SourceInfo


def build_corpus(
    tokens: np.ndarray,
    post_ptr: np.ndarray,
    post_user: np.ndarray,
    unigrams: Sequence[str] | np.ndarray,
    *,
    max_n: int = 1,
    n_users: int | None = None,
    source: SourceInfo | None = None,
    joiner: str = " ",
    drop_empty_users: bool = True,
) -> Corpus:
    tokens = np.asarray(tokens, dtype=np.int32)
    post_ptr = np.asarray(post_ptr, dtype=np.int64)
    post_user = np.asarray(post_user, dtype=np.int64)
    unigrams = np.asarray(unigrams, dtype=object)
    if max_n < 1:
        raise ValueError("max_n must be >= 1")
    n_posts = int(post_ptr.shape[0] - 1)
    if n_users is None:
        n_users = int(post_user.max()) + 1 if n_posts else 0
    if tokens.size == 0:
        raise EmptyCorpusError(
            "the corpus has no tokens after preprocessing; check the text column, or switch off 'strip symbols'/'drop [removed]'"
        )

    # Drop unigrams that no token uses (readers may hand over a larger table) and renumber densely.
    # O(n) bincount remap; gives exactly np.unique(tokens, return_inverse=True) without its sort.
    if tokens.min() < 0 or tokens.max() >= unigrams.shape[0]:
        raise ValueError("token ids must index into unigrams")
    used_mask = np.bincount(tokens, minlength=unigrams.shape[0]) > 0
    used = np.flatnonzero(used_mask)
    if used.shape[0] == unigrams.shape[0]:
        tok = tokens
    else:
        tok = (np.cumsum(used_mask, dtype=np.int64) - 1).astype(np.int32)[tokens]
    uni_vocab = unigrams[used]
    n_uni = int(used.shape[0])

    post_len = np.diff(post_ptr)
    pos_post = np.repeat(np.arange(n_posts, dtype=np.int64), post_len)
    pos_end = np.repeat(post_ptr[1:], post_len)  # exclusive end of each token's post
    pos_user = post_user[pos_post]
    positions = np.arange(tok.shape[0], dtype=np.int64)

    level_ids = [tok.astype(np.int64)]  # ids of the k-gram starting at each valid position
    level_pos = [positions]
    vocab_parts = [uni_vocab]
    gram_parts = [tok_unique_rows(n_uni, max_n)]
    offset = n_uni
    prev_ids, prev_pos = level_ids[0], positions
    prev_gram = gram_parts[0]
    prev_offset = 0
    for k in range(2, max_n + 1):
        valid = prev_pos + (k - 1) < pos_end[prev_pos]
        p = prev_pos[valid]
        if p.size == 0:
            break
        local_prev = prev_ids[valid] - prev_offset
        last = tok[p + k - 1].astype(np.int64)
        key = local_prev * n_uni + last
        codes, uniq = pd.factorize(key, sort=True)
        pre = (uniq // n_uni).astype(np.int64)
        lst = (uniq % n_uni).astype(np.int32)
        gram = prev_gram[pre].copy()
        gram[:, k - 1] = lst
        strings = vocab_parts[-1][pre].astype(object) + joiner + uni_vocab[lst].astype(object)
        ids = codes.astype(np.int64) + offset
        level_ids.append(ids)
        level_pos.append(p)
        vocab_parts.append(np.asarray(strings, dtype=object))
        gram_parts.append(gram)
        prev_ids, prev_pos, prev_gram, prev_offset = ids, p, gram, offset
        offset += uniq.shape[0]

    n_items = offset
    all_ids = np.concatenate(level_ids)
    all_users = pos_user[np.concatenate(level_pos)]
    key = all_users * np.int64(n_items) + all_ids
    uniq_key, cnt = np.unique(key, return_counts=True)
    users = uniq_key // n_items
    items = (uniq_key % n_items).astype(np.int32)
    row_len = np.bincount(users, minlength=n_users)
    if drop_empty_users:
        row_len = row_len[row_len > 0]
    indptr = np.zeros(row_len.shape[0] + 1, dtype=np.int64)
    np.cumsum(row_len, out=indptr[1:])

    vocab = np.concatenate(vocab_parts).astype(object)
    ngram_len = np.concatenate([np.full(v.shape[0], i + 1, dtype=np.int8) for i, v in enumerate(vocab_parts)])
    gram_tokens = np.concatenate(gram_parts, axis=0)
    return Corpus(
        indptr=indptr,
        items=items,
        counts=cnt.astype(np.int32),
        vocab=vocab,
        ngram_len=ngram_len,
        gram_tokens=gram_tokens,
        n_posts=n_posts,
        n_tokens=int(tok.shape[0]),
        source=source or SourceInfo(),
    )


def tok_unique_rows(n_uni: int, max_n: int) -> np.ndarray:
    g = np.full((n_uni, max_n), -1, dtype=np.int32)
    g[:, 0] = np.arange(n_uni, dtype=np.int32)
    return g


def corpus_from_token_lists(
    user_posts: Sequence[Sequence[Sequence[str]]] | Sequence[Sequence[str]],
    *,
    max_n: int = 1,
    posts_per_user: bool = True,
    source: SourceInfo | None = None,
) -> Corpus:
    """Small-data convenience (tests, examples): a list of users, each a list of posts, each a list of tokens.

    With ``posts_per_user=False`` each user is a single post (a list of tokens).
    Not for large corpora: readers build the flat arrays directly.
    """
    if not posts_per_user:
        user_posts = [[p] for p in user_posts]
    posts = [p for u in user_posts for p in u]
    post_user = np.repeat(np.arange(len(user_posts), dtype=np.int64), [len(u) for u in user_posts])
    lens = np.fromiter((len(p) for p in posts), dtype=np.int64, count=len(posts))
    post_ptr = np.zeros(len(posts) + 1, dtype=np.int64)
    np.cumsum(lens, out=post_ptr[1:])
    flat = [str(t) for p in posts for t in p]
    if not flat:
        raise EmptyCorpusError("the corpus has no tokens; give at least one non-empty post")
    codes, uniques = pd.factorize(np.asarray(flat, dtype=object))
    return build_corpus(codes.astype(np.int32), post_ptr, post_user, np.asarray(uniques, dtype=object),
                        max_n=max_n, n_users=len(user_posts), source=source)
