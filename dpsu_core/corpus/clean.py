"""Cleaning before and after tokenizing: HTML, e-mail headers, digit-only tokens, stop words.

Column-wise with Arrow's compute kernels; Python runs per post only where a library does the work
and only on the posts that need it: ``email`` on posts that look like RFC 822 messages (option on),
``html.unescape`` on posts holding an entity other than the common five. Token filters act on the
vocabulary (one check per distinct token) and drop the tokens with one numpy mask.

Unicode format and control characters (categories Cf, Cc) and variation selectors are handled by the
tokenizer's character table (``tokenize.char_classes``): never part of a token, never a token, and no
break inside a word (a zero width space is one only next to Thai, Chinese, ...: ``charclass``).

Stop words come from the ``stop-words`` package (maintained lists for 30+ languages, shipped inside
the package: nltk's lists need a data download, which a fresh machine may not be able to do).
"""

from __future__ import annotations

import html
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ParameterError
from ..wording import opt

# RE2 (Arrow) patterns.
_TAG = r"(?s)<(?:!--.*?--|/?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?|![A-Za-z][^<>]*|\?[^<>]*\?)>"
_ENTITY = r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
# Common entities, decoded by Arrow; "&amp;" last so that "&amp;lt;" becomes "&lt;" (decoded once).
_COMMON = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"), ("&#34;", '"'), ("&apos;", "'"))
_NBSP = "&nbsp;"
_AMP = "&amp;"
# A post that starts with an RFC 822 header field and has a blank line after the header block.
_EMAIL_START = (
    r"(?i)^(?:message-id|from|to|subject|date|received|return-path|mime-version|content-type|"
    r"delivered-to|reply-to|cc|sender|x-[a-z0-9-]+)[ \t]*:[^\n]*\r?\n"
)
_EMAIL_BLANK = r"\r?\n\r?\n"


def _mask(values: pa.Array, pattern: str) -> pa.Array:
    return pc.fill_null(pc.match_substring_regex(values, pattern), False)


def _where(values: pa.Array, mask: pa.Array, fn) -> pa.Array:
    """``values`` with ``fn`` (Python, per post) applied to the posts where ``mask`` holds."""
    idx = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
    if idx.size == 0:
        return values
    changed = pa.array([fn(v) for v in values.take(pa.array(idx)).to_pylist()], type=values.type)
    return pc.replace_with_mask(values, mask, changed)


def email_body(message: str) -> str:
    """The body of an RFC 822 message (its text part for MIME), headers dropped, by Python's ``email``."""
    import email
    import email.policy

    msg = email.message_from_string(message, policy=email.policy.default)
    part = msg.get_body(preferencelist=("plain", "html")) if msg.is_multipart() else msg
    if part is None:
        return ""
    try:
        body = part.get_content()
    except (LookupError, ValueError, AttributeError):
        body = part.get_payload()
    return body if isinstance(body, str) else ""


def drop_email_headers(texts: pa.Array) -> tuple[pa.Array, int]:
    """Posts that look like RFC 822 messages replaced by their bodies; how many there were."""
    mask = pc.and_(_mask(texts, _EMAIL_START), _mask(texts, _EMAIL_BLANK))
    n = int(pc.sum(mask).as_py() or 0)
    return (_where(texts, mask, email_body) if n else texts), n


def strip_html(texts: pa.Array) -> pa.Array:
    """HTML tags removed (each becomes a space: ``a<br />b`` -> ``a b``) and entities decoded."""
    texts = pc.replace_substring_regex(texts, pattern=_TAG, replacement=" ")
    has_amp = pc.fill_null(pc.match_substring(texts, "&"), False)
    if not pc.any(has_amp).as_py():
        return texts
    # Posts with an entity beyond the common ones: html.unescape (the full HTML5 table), on those only.
    common = texts
    for ent, _ in (*_COMMON, (_NBSP, ""), (_AMP, "")):
        common = pc.replace_substring(common, pattern=ent, replacement="")
    rare = _mask(common, _ENTITY)
    out = texts
    for ent, ch in _COMMON:
        out = pc.replace_substring(out, pattern=ent, replacement=ch)
    out = pc.replace_substring(out, pattern=_NBSP, replacement="\u00a0")
    out = pc.replace_substring(out, pattern=_AMP, replacement="&")
    if pc.any(rare).as_py():
        decoded = _where(texts, rare, html.unescape)
        out = pc.if_else(rare, decoded, out)
    return out


# ---- token filters ----------------------------------------------------------------------------


def stop_word_languages() -> tuple[str, ...]:
    from stop_words import AVAILABLE_LANGUAGES

    return tuple(sorted(AVAILABLE_LANGUAGES))


@lru_cache(maxsize=8)
def stop_words(language: str) -> frozenset[str]:
    """The ``stop-words`` package's list for ``language`` (e.g. "english"), lower-cased."""
    from stop_words import StopWordError, get_stop_words

    try:
        words = get_stop_words(language)
    except StopWordError:
        raise ParameterError(
            f"no stop-word list for {language!r}; choose {opt('stop_words')} among: {', '.join(stop_word_languages())}"
        ) from None
    return frozenset(w.lower() for w in words)


def token_drop_mask(unigrams: np.ndarray, *, drop_digits: bool, stop_language: str | None) -> np.ndarray | None:
    """True for every distinct token to drop (digit-only, or a stop word); None when nothing is dropped."""
    if not drop_digits and not stop_language:
        return None
    vocab = pa.array(unigrams.tolist(), type=pa.string())
    drop = np.zeros(len(vocab), dtype=bool)
    if drop_digits:
        drop |= pc.fill_null(pc.utf8_is_digit(vocab), False).to_numpy(zero_copy_only=False)
    if stop_language:
        words = pa.array(sorted(stop_words(stop_language)), type=pa.string())
        drop |= pc.fill_null(pc.is_in(pc.utf8_lower(vocab), value_set=words), False).to_numpy(zero_copy_only=False)
    return drop


def drop_tokens(codes: np.ndarray, post_ptr: np.ndarray, drop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` without the tokens whose unigram is marked in ``drop``, and the new post offsets."""
    keep = ~drop[codes]
    kept_before = np.zeros(codes.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    return codes[keep], kept_before[post_ptr]
