"""GW-KT's public corpus checked against a Spark input folder inside the executors' own pass over the posts
(``load_spark_corpus(public=..., on_overlap=...)``, issue 27.1): no read of the input besides Spark's, and the same
figures as the standalone check (``overlap.compare`` of the two files' fingerprints), so the same one-line
refusals and warnings."""

from __future__ import annotations

import pytest

from dpsu_core.corpus.load import LoadOptions
from dpsu_core.corpus.overlap import Overlap, compare, fingerprint, new_key
from dpsu_core.engines.spark import load_spark_corpus
from tests.core.overlap_files import private_rows, write_all


class Stop(Exception):
    """Raised by the test's ``on_overlap``: the load stops there, before the posts are tokenized."""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("spark_overlap"), private_rows())


def _in_pass(spark, folder, candidate, **options) -> Overlap:
    seen: list[Overlap] = []

    def judge(found: Overlap) -> None:
        seen.append(found)
        raise Stop

    with pytest.raises(Stop):  # raised from inside the load: the refusal comes before anything is built
        load_spark_corpus(
            str(folder), LoadOptions(format="csv", **options), spark=spark, public=candidate, on_overlap=judge
        )
    (found,) = seen
    return found


@pytest.mark.parametrize("name", ["lf.csv", "shuffled.csv", "five.csv"])
def test_the_in_pass_check_of_a_folder_gives_the_standalone_figures(spark, files, name):
    key = new_key()
    candidate = fingerprint(files[name], key)
    found = _in_pass(spark, files["private_parts.csv"], candidate)
    assert found == compare(candidate, fingerprint(files["private_parts.csv"], key))  # both read by the reader
    if name == "five.csv":  # accepted, with its figure
        assert not found.refused and found.figures().startswith("5.0% of its distinct posts (100 of 2,000)")
    else:  # the private folder's content under other bytes: refused
        assert found.refused and found.shared_posts == found.posts == 3000 and found.shared_pairs == 3000


def test_a_user_pattern_and_rows_as_users_are_hashed_as_the_local_check_hashes_them(spark, files):
    key = new_key()
    candidate = fingerprint(files["shuffled.csv"], key, user_pattern="^(u[0-9])")
    found = _in_pass(spark, files["private_parts.csv"], candidate, user_pattern="^(u[0-9])")
    assert found == compare(candidate, fingerprint(files["private_parts.csv"], key, user_pattern="^(u[0-9])"))
    found = _in_pass(spark, files["private_parts.csv"], candidate, row_is_user=True)
    assert found == compare(candidate, fingerprint(files["private_parts.csv"], key, row_is_user=True))
    assert found.shared_posts == 3000 and found.shared_pairs == 0  # no user column: no pairs to share


def test_an_accepted_public_file_leaves_the_corpus_as_loaded_without_a_check(spark, files):
    """The pass's bitmaps travel as extra rows of the shuffle: none of them may reach the corpus."""
    candidate = fingerprint(files["five.csv"], new_key())
    seen: list[Overlap] = []
    opts = LoadOptions(format="csv")
    checked = load_spark_corpus(
        str(files["private_parts.csv"]), opts, spark=spark, public=candidate, on_overlap=seen.append
    )
    plain = load_spark_corpus(str(files["private_parts.csv"]), opts, spark=spark)
    assert len(seen) == 1 and not seen[0].refused and seen[0].shared_posts == 100
    a, b = checked.to_corpus(), plain.to_corpus()
    assert (a.n_users, a.n_posts, a.n_tokens, list(a.vocab)) == (b.n_users, b.n_posts, b.n_tokens, list(b.vocab))
    assert checked.source.notes == plain.source.notes and checked.source.rows_read == plain.source.rows_read
