"""The Corpus page on the fixture files (tests/column_fixtures.py), through AppTest: the app asks when no
column name fits, warns next to the pickers, shows the header decision and lets the user flip it, and
keeps an upload across pages. Expected columns, header decisions, warnings and tokens per fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages import _account
from pages._state import STATE_KEY
from tests.column_fixtures import (
    AIRLINE_ROWS,
    AIRLINE_USERS,
    ANALYST_ROWS,
    ANALYST_STOCKS,
    FIXTURES,
    MAILBOXES,
    airline_tweets,
    analyst_notes,
)

REPO = Path(__file__).resolve().parents[2]
APP = "../../app.py"
PYTHON_NAMES = ("user_col", "text_col", "has_header", "row_is_user", "user_pattern", "load_corpus(", "⟦", "--")


def _state(at: AppTest):
    return at.session_state[STATE_KEY]


def _upload(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload(name, FIXTURES[name](), "text/csv")
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _texts(at: AppTest) -> list[str]:
    return [e.value for kind in (at.warning, at.info, at.error, at.caption) for e in kind]


def _no_python_names(at: AppTest) -> None:
    for t in _texts(at):
        for bad in PYTHON_NAMES:
            assert bad not in str(t), (bad, t)


def _load(at: AppTest):
    assert not at.button(key="load_corpus").disabled
    before = _state(at).corpus_id
    at.button(key="load_corpus").click()
    at.run()
    _ok(at)
    assert _state(at).corpus_id == before + 1, _texts(at)
    return _state(at).corpus


def _vocab(corpus) -> set[str]:
    return set(corpus.vocab[corpus.ngram_len == 1].tolist())


def _warned(at: AppTest, text: str) -> bool:
    return any(text in w.value for w in at.warning)


def _column_warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if "column '" in w.value]


def test_index_column_first_picks_author_id_and_warns_on_the_index():
    at = _upload("index_first.csv")
    assert at.selectbox(key="user_col").value == "author_id"
    assert at.selectbox(key="text_col").value == "text"
    assert any("read as a header" in c.value for c in at.caption)
    assert not _column_warnings(at)
    at.selectbox(key="user_col").set_value("(unnamed column 0)")
    at.run()
    assert _warned(at, "each row will be a user: is that the privacy unit you mean?")
    assert _warned(at, "looks like a row index") and _warned(at, "the 'User id column' picker")
    _no_python_names(at)
    at.selectbox(key="user_col").set_value("author_id")
    at.run()
    assert not _column_warnings(at)
    corpus = _load(at)
    assert corpus.n_users == 30 and corpus.source.user_column == "author_id"


def test_no_user_column_asks_and_loads_nothing_until_chosen():
    at = _upload("reviews.csv")
    demo = _state(at).corpus
    assert at.selectbox(key="user_col").value is None
    assert at.selectbox(key="text_col").value == "review"
    assert at.button(key="load_corpus").disabled
    assert any("'Each row is its own user'" in i.value and "'review'" in i.value for i in at.info)
    _no_python_names(at)
    assert _state(at).corpus is demo
    at.checkbox(key="row_is_user").check()
    at.run()
    corpus = _load(at)
    assert corpus.source.row_is_user and corpus.n_users == 48
    assert not ({"br", "amp", "quot", "mdash"} & _vocab(corpus))
    at.radio(key="corpus_source").set_value("upload")
    at.file_uploader(key="upload").upload("reviews.csv", FIXTURES["reviews.csv"](), "text/csv")
    at.run()
    at.checkbox(key="row_is_user").check()
    at.selectbox(key="text_col").set_value("sentiment")
    at.run()
    assert _warned(at, "only 2 distinct values")


def test_headerless_latin1_tweets_detected_and_flippable():
    at = _upload("tweets_latin1.csv")
    assert any(c.value.startswith("No header row") for c in at.caption)
    assert any("decoded as cp1252" in c.value for c in at.caption)
    assert at.selectbox(key="user_col").value is None and at.button(key="load_corpus").disabled
    assert any("the file has no header row" in i.value for i in at.info)
    _no_python_names(at)
    at.selectbox(key="user_col").set_value("column 4")
    at.selectbox(key="text_col").set_value("column 5")
    at.run()
    corpus = _load(at)
    assert corpus.n_users == 12 and {"café", "naïve", "bientôt"} <= _vocab(corpus)
    assert corpus.source.header.startswith("no header row")
    at.radio(key="corpus_source").set_value("upload")
    at.file_uploader(key="upload").upload("tweets_latin1.csv", FIXTURES["tweets_latin1.csv"](), "text/csv")
    at.run()
    at.button(key="flip_header").click()
    at.run()
    assert at.selectbox(key="has_header").value == "yes"
    assert {"4", "user_00"} <= set(at.selectbox(key="user_col").options)  # the first tweet's cells now name columns


def test_html_reviews_cleaned_and_switchable():
    at = _upload("html_reviews.csv")
    corpus = _load(at)
    assert {"great", "stars"} <= _vocab(corpus) and not ({"br", "amp", "nbsp", "href", "p"} & _vocab(corpus))
    at.file_uploader(key="upload").upload("html_reviews.csv", FIXTURES["html_reviews.csv"](), "text/csv")
    at.run()
    at.toggle(key="pp_strip_html").set_value(False)
    at.run()
    assert {"br", "amp"} <= _vocab(_load(at))


def test_emails_user_from_the_path_and_headers_dropped():
    at = _upload("emails.csv")
    assert at.selectbox(key="user_col").value is None and at.selectbox(key="text_col").value == "message"
    at.selectbox(key="user_col").set_value("file")
    at.run()
    assert _warned(at, "each row will be a user")
    at.text_input(key="user_pattern").input("^([^/]+)/")
    at.run()
    assert not _column_warnings(at)
    corpus = _load(at)
    assert corpus.n_users == len(MAILBOXES) and corpus.source.user_pattern == "^([^/]+)/"
    assert "forecast" in _vocab(corpus) and not ({"javamail", "enron", "charset"} & _vocab(corpus))
    assert "first group of the pattern" in corpus.source.privacy_unit


@pytest.mark.parametrize("strip_symbols", [True, False])
def test_emoji_format_characters_never_in_a_token(strip_symbols):
    at = _upload("emoji.csv")
    at.toggle(key="pp_strip_symbols").set_value(strip_symbols)
    at.run()
    vocab = _vocab(_load(at))
    assert {"love", "cooperate"} <= vocab
    assert not any(ch in w for w in vocab for ch in "\ufe0f\u200d\u200b\u00ad\u200f")
    assert ("\u2764" in vocab) is (not strip_symbols)


def test_one_bad_byte_decodes_one_row():
    at = _upload("one_bad_byte.csv")
    assert any("1 row was not valid UTF-8" in c.value for c in at.caption)
    corpus = _load(at)
    # the kanji-only "日本語" is segmented as Chinese by the auto tokenizer (jieba: 日本 + 語)
    assert {"café", "naïve", "résumé", "日本", "語"} <= _vocab(corpus) and corpus.source.encoding_fallback_rows == 1


def test_upload_survives_a_visit_to_another_page():
    at = _upload("index_first.csv")
    at.switch_page(str(REPO / "pages" / "2_release.py"))
    at.run()
    at.switch_page(str(REPO / "pages" / "1_corpus.py"))
    at.run()
    _ok(at)
    assert at.radio(key="corpus_source").value == "upload"
    assert any("File kept from before: index_first.csv" in i.value for i in at.info)
    assert at.selectbox(key="user_col").value == "author_id"
    corpus = _load(at)
    assert corpus.source.user_column == "author_id" and _state(at).uploads["private"].pending is None


def test_the_loaded_file_is_called_the_file_in_use_not_a_file_not_loaded_yet():
    at = _upload("index_first.csv")
    _load(at)
    at.run()  # the uploader still holds the file: it is the pending upload again
    assert _state(at).uploads["private"].pending is not None
    at.switch_page(str(REPO / "pages" / "2_release.py"))
    at.run()
    at.switch_page(str(REPO / "pages" / "1_corpus.py"))
    at.run()
    _ok(at)
    kept = [i.value for i in at.info if "index_first.csv" in i.value]
    assert kept and all(k.startswith("File in use: index_first.csv") for k in kept), kept


def test_chinese_upload_shows_the_scripts_and_segmenter_as_raw_data():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert at.selectbox(key="tokenizer").value == "auto"
    assert {"auto", "fast", "treebank", "char-ngrams"} == set(at.selectbox(key="tokenizer").options)
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    rows = ["user,text"] + [f"u{i},我爱北京天安门 hello" for i in range(30)]
    at.file_uploader(key="upload").upload("zh.csv", ("\n".join(rows) + "\n").encode(), "text/csv")
    at.run()
    _ok(at)
    corpus = _load(at)
    assert {"北京", "天安门", "hello"} <= _vocab(corpus)
    shown = [c.value.replace("\\", "") for c in at.caption if "word segmentation" in c.value]  # unescaped
    assert len(shown) == 1 and "(raw data, NOT private)" in shown[0]
    assert "Han (Chinese characters) 80.0%, Latin 20.0%" in shown[0] and "jieba" in shown[0]


def test_char_ngrams_choice_reaches_the_loader():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    rows = ["user,text"] + [f"u{i},hello" for i in range(30)]
    at.file_uploader(key="upload").upload("h.csv", ("\n".join(rows) + "\n").encode(), "text/csv")
    at.run()
    at.selectbox(key="tokenizer").set_value("char-ngrams")
    at.number_input(key="char_ngrams").set_value(3)
    at.run()
    corpus = _load(at)
    assert _vocab(corpus) == {"hel", "ell", "llo"}
    assert corpus.source.tokenizer == "char-ngrams"


def test_column_facts_count_the_whole_file_and_a_category_user_is_warned_before_loading():
    """7,200 users over 7,501 readable rows, a malformed row and a post Python's csv refuses within the first 5,000:
    the facts are the whole file's; ``airline`` (6 values) as the user is warned about before loading."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload("airline.csv", airline_tweets(), "text/csv")
    at.run()
    _ok(at)
    assert at.selectbox(key="user_col").value is None  # no known user name: nothing guessed
    at.selectbox(key="user_col").set_value("name")
    at.run()
    (facts,) = [d.value.set_index("column") for d in at.dataframe if "distinct values" in d.value.columns]
    assert facts.loc["name", "distinct values"] == AIRLINE_USERS + 1
    assert facts.loc["airline", "distinct values"] == 6
    assert facts.loc["tweet_id", "distinct values"] == AIRLINE_ROWS + 1
    assert any(f"over all {AIRLINE_ROWS + 1:,} rows of the file" in c.value for c in at.caption)
    assert any("1 malformed rows" in c.value for c in at.caption)
    assert not any("category" in w.value for w in at.warning)
    at.selectbox(key="user_col").set_value("airline")
    at.run()
    few = [w.value for w in at.warning if "distinct values over" in w.value]
    assert len(few) == 1 and "6 distinct values over" in few[0] and "category" in few[0]
    assert "placeholder" not in few[0]
    assert _state(at).corpus_id == 1 and _state(at).is_demo  # nothing loaded yet


def test_a_category_with_many_values_is_warned_before_the_load_button():
    """``stock`` (37 values, about 270 rows each) as the user: a warning box above the load button before anything
    is loaded; ``analyst`` (2,000 people) gets none."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    at.file_uploader(key="upload").upload("analyst.csv", analyst_notes(), "text/csv")
    at.run()
    _ok(at)
    at.selectbox(key="user_col").set_value("stock")
    at.selectbox(key="text_col").set_value("text")
    at.run()
    few = [w.value for w in at.warning if "distinct values over" in w.value]
    assert len(few) == 1 and f"{ANALYST_STOCKS} distinct values over {ANALYST_ROWS:,} rows" in few[0]
    assert "category" in few[0] and "the largest holds 17% of the rows" in few[0]
    assert _state(at).corpus_id == 1 and _state(at).is_demo and not at.button(key="load_corpus").disabled
    at.selectbox(key="user_col").set_value("analyst")
    at.run()
    assert not [w.value for w in at.warning if "distinct values over" in w.value]


def test_korean_content_morphemes_are_said_on_the_release_page_and_reach_the_command():
    """'Korean' set to content: nouns and lemmas are the items, the Release page says so, and the exported
    command asks for them (``--korean content``)."""
    from tests.app.test_pages import _go, _release

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    forms = ["학교에 갔다", "학교는 크다", "학교를 좋아한다"]
    rows = ["user,text"] + [f"u{u},{forms[u % 3]}" for u in range(150)]
    at.file_uploader(key="upload").upload("ko.csv", ("\n".join(rows) + "\n").encode(), "text/csv")
    at.run()
    at.selectbox(key="korean").set_value("content")
    at.run()
    content = _vocab(_load(at))
    assert content == {"학교", "가다", "크다", "좋아하다"}
    _go(at, "2_release")
    said = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Korean items")]
    assert len(said) == 1 and "(content) are content morphemes only" in said[0]
    _release(at, "policy-gaussian")
    items = set(_account.current_release(_state(at)).items.tolist())
    assert items and items <= content
    _go(at, "7_export")
    _ok(at)
    command = next(c.value for c in at.code if c.value.startswith("dpsu release"))
    assert "--korean content" in command


def test_korean_choice_changes_the_items_and_reaches_the_release_and_the_command():
    """The 'Korean' widget (morphemes by default, eojeol: words as written) sets what the loader cuts, what is
    released, the report's tokenization and the exported command (``--korean eojeol``); it is greyed out under a
    tokenizer that does not cut Korean."""
    from tests.app.test_pages import _go, _release

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert at.selectbox(key="korean").value == "morphemes" and not at.selectbox(key="korean").disabled
    at.selectbox(key="tokenizer").set_value("fast")
    at.run()
    assert at.selectbox(key="korean").disabled
    at.selectbox(key="tokenizer").set_value("auto")
    at.radio(key="corpus_source").set_value("upload")
    at.run()
    forms = ["학교에 갔다", "학교는 크다", "학교를 좋아한다"]
    rows = ["user,text"] + [f"u{u},{forms[u % 3]}" for u in range(150)]
    at.file_uploader(key="upload").upload("ko.csv", ("\n".join(rows) + "\n").encode(), "text/csv")
    at.run()
    _ok(at)
    morphemes = _vocab(_load(at))
    assert {"학교", "에", "는", "를"} <= morphemes and not {"학교에", "학교는"} & morphemes
    at.selectbox(key="korean").set_value("eojeol")
    at.run()
    eojeol = _vocab(_load(at))
    assert {"학교에", "학교는", "학교를", "갔다"} <= eojeol and "학교" not in eojeol
    assert _state(at).corpus_options.korean == "eojeol"
    assert "Korean: words as written (eojeol)" in _state(at).corpus.source.tokenization
    _release(at, "policy-gaussian")
    _ok(at)
    items = set(_account.current_release(_state(at)).items.tolist())
    assert items and items <= eojeol and "학교" not in items  # 50 users per form: released as written
    _go(at, "7_export")
    _ok(at)
    command = next(c.value for c in at.code if c.value.startswith("dpsu release"))
    assert "--korean eojeol" in command
