"""The clean-up before tokenizing finds the posts each step can change in one compiled pass (issue 20); the
texts it gives are exactly those of running each step's own byte scan on the text the step before left."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus import clean
from dpsu_core.corpus.tokenize import (
    _URL,
    Preprocessing,
    _may_hold_url,
    _on_rows,
    preprocess,
    row_flags,
    rows_with_bytes,
)

PIECES = [
    "From: a@b.org\nSubject: hi\n\n", "To: x@y.z\n", "plain words", "\n", "<b>bold</b>", "&amp;", "&#58;//",
    "http", "://", "WWW.", "www.example.com", "wW", "w", ".", "https://x.org/a?b=c", "http&#58;//hidden.org",
    '&lt;a href="www.z.org"&gt;', "δέλτα", "😀", " ", ":", "/", "<", "&", "Ww.", "\r\n",
]  # fmt: skip


def _old_preprocess(texts: pa.Array, prep: Preprocessing) -> pa.Array:
    """The previous clean-up: one byte scan per step, each on the text the step before left."""
    if prep.email_headers:
        texts = _on_rows(texts, rows_with_bytes(texts, b"\n"), lambda t: clean.drop_email_headers(t)[0])
    if prep.strip_html:
        texts = _on_rows(texts, rows_with_bytes(texts, b"<&"), clean.strip_html)
    if prep.strip_urls:
        texts = _on_rows(
            texts, _may_hold_url(texts), lambda t: pc.replace_substring_regex(t, pattern=_URL, replacement=" ")
        )
    return texts


texts_strategy = st.lists(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(texts_strategy, st.booleans(), st.booleans(), st.booleans())
def test_one_pass_clean_up_equals_the_step_by_step_scans(texts, headers, html, urls):
    prep = Preprocessing(email_headers=headers, strip_html=html, strip_urls=urls)
    arr = pa.array(texts, type=pa.string())
    assert preprocess(arr, prep).to_pylist() == _old_preprocess(arr, prep).to_pylist()


@settings(max_examples=200, deadline=None)
@given(texts_strategy)
def test_row_flags_are_the_three_scans(texts):
    arr = pa.array(texts, type=pa.large_string()).slice(1)  # an offset into the buffers too
    flags = row_flags(arr)
    assert np.array_equal(flags[0], rows_with_bytes(arr, b"\n"))
    assert np.array_equal(flags[1], rows_with_bytes(arr, b"<&"))
    assert np.array_equal(flags[2], _may_hold_url(arr))


@pytest.mark.parametrize(
    "text, expected",
    [("a http&#58;//x.org b", "a   b"), ("From: a@b.org\nSubject: s\n\n<i>www.q.org</i> ok", "  ok")],
)
def test_a_link_made_by_an_earlier_step_is_still_removed(text, expected):
    got = preprocess(pa.array([text]), Preprocessing()).to_pylist()[0]
    assert got.split() == expected.split()
