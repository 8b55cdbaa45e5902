"""One SparkSession (local[2], no UI, few shuffle partitions) for every Spark test, and the shared corpora."""

from __future__ import annotations

import csv

import numpy as np
import pytest

EPS, DELTA = 4.0, 1e-4

#: extra parameters per parallel mechanism (enough budget that something is released)
_PARAMS = {
    "weighted-laplace": {"epsilon": 100.0},
    "count-laplace": {"epsilon": 400.0},
    "dpne": {"max_n": 3, "eta": 0.05},
    "dpsu-all": {"max_n": 3},
    "dpsu-even": {"max_n": 3},
    "dpsu-single": {"only_n": 2},
}


def _parallel() -> list[str]:
    from dpsu_core.mechanisms.registry import list_mechanisms

    return [name for name, cls in list_mechanisms().items() if cls.order_free]


#: the mechanisms the Spark engine runs on the executors
PARALLEL = _parallel()


def parallel_mechanism(name: str, max_items: int):
    """The test's instance of parallel mechanism ``name`` with Delta0 = ``max_items``."""
    from dpsu_core.mechanisms.registry import get_mechanism

    return get_mechanism(name, delta=DELTA, max_items=max_items, **{"epsilon": EPS, **_PARAMS.get(name, {})})


@pytest.fixture(scope="session")
def spark():
    from dpsu_core.engines.spark import spark_session

    session = spark_session("local[2]", shuffle_partitions=2)
    yield session
    session.stop()


def corpus_rows(n_users: int = 80, seed: int = 0) -> list[tuple[str, str]]:
    """Posts with the tricky parts of real text: URLs, apostrophes, case, unicode, commas, quotes and
    newlines inside a field, blank and padded user ids, removal placeholders, posts with no tokens."""
    rng = np.random.default_rng(seed)
    words = ["alpha", "Beta", "gamma", "don't", "'quoted'", "naïve", "東京", "x2", "e\u0301t\u00e9", "a,b", "ok!"]
    rows = [
        ("  u1 ", "Hello, world! see https://example.com/a?b=1 and www.x.org"),
        ("u1", " [removed] "),
        ("u2", "[deleted]"),
        ("", "no user here"),
        ("u3", "   "),
        ("late", "!!! ???"),  # this user's first row has no tokens
        ("u2", 'line one\nline two, with a comma and "quotes"'),
    ]
    for _ in range(6 * n_users):
        u = f"user{int(rng.integers(0, n_users))}"
        n = int(rng.integers(0, 14))
        rows.append((u, " ".join(rng.choice(words, size=n).tolist())))
    rows.append(("late", "finally some words beta gamma"))
    return rows


def write_csv(path, rows) -> str:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["user", "text"])
        w.writerows(rows)
    return str(path)


@pytest.fixture(scope="session")
def csv_path(tmp_path_factory):
    return write_csv(tmp_path_factory.mktemp("spark") / "posts.csv", corpus_rows())


@pytest.fixture(scope="session")
def spark_corpus3(spark, csv_path):
    from dpsu_core.engines.spark import load_spark_corpus

    return load_spark_corpus(csv_path, spark=spark, max_n=3)


@pytest.fixture(scope="session")
def local_corpus3(csv_path):
    from dpsu_core.corpus import load_corpus

    return load_corpus(csv_path, max_n=3)
