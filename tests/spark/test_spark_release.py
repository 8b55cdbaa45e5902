"""Releases on the Spark engine: identical to the local engine's when the noise and sampling streams are
fixed for the test, and the privacy properties of each parallel mechanism hold on Spark's histograms."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from dpsu_core.engines.keyed import SaltSource, sample_rows, string_keys
from dpsu_core.engines.spark import load_spark_corpus, spark_release
from dpsu_core.interfaces.cli import main
from dpsu_core.mechanisms.base import make_rng, noisy_threshold
from dpsu_core.mechanisms.dpsu_step import weighted_update
from dpsu_core.mechanisms.registry import get_mechanism
from dpsu_core.mechanisms.sampling import OrderedRows

from .conftest import DELTA, EPS, PARALLEL, corpus_rows, parallel_mechanism, write_csv

POWER = {"count": 0.0, "weighted-laplace": 1.0, "weighted-gaussian": 0.5}


def _user_keys(spark_corpus):
    """The users' BLAKE2b digests in the local engine's user order (first read position)."""
    tab = spark_corpus.rows.orderBy("ufirst").select("ukey").toArrow()
    return tab.column("ukey").to_numpy().view(np.uint64)


def _core_update(corpus, update, kept_ptr, kept):
    rows = OrderedRows(kept_ptr, kept.astype(np.int32), np.ones(kept.shape[0], dtype=np.int32))
    return weighted_update(rows, corpus.n_items, POWER[update])


@pytest.mark.parametrize("name", PARALLEL)
def test_parallel_release_identical_to_local(spark_corpus3, local_corpus3, name):
    """No row is longer than Delta0, so neither engine samples: same H (up to the order of float sums), and
    with the same noise stream the same release, item for item."""
    mech = parallel_mechanism(name, int(np.diff(local_corpus3.indptr).max()) + 1)
    got = spark_release(mech, spark_corpus3, seed=11)
    want = mech.release(local_corpus3, seed=11)
    assert got.n_released > 0
    assert got.items.tolist() == want.items.tolist()
    assert np.array_equal(got.ngram_len, want.ngram_len)
    h_got, h_want = got.diagnostics.weights, want.diagnostics.weights
    if name.startswith("count-"):
        assert np.array_equal(h_got, h_want)
    else:
        np.testing.assert_allclose(h_got, h_want, rtol=1e-12, atol=1e-12)
    assert "Spark executors" in got.calibration.details.engine
    assert got.seeded  # a fixed seed is flagged as teaching mode


@pytest.mark.parametrize("update", ["count", "weighted-gaussian"])
def test_sampled_histogram_and_release_match_the_core_on_the_same_keys(spark_corpus3, local_corpus3, update):
    """Rows longer than Delta0 = 3 are sampled: Spark's H is the core update over the keyed samples of the local
    corpus (same salt), and the release is the core's noisy threshold of that H with the same noise stream."""
    c = local_corpus3
    assert int(np.diff(c.indptr).max()) > 3
    ptr, kept = sample_rows(
        c.indptr, c.items, _user_keys(spark_corpus3), string_keys(c.vocab), SaltSource(seed=5).next(), 3
    )
    want = _core_update(c, update, ptr, kept)
    got = spark_corpus3.histogram(max_items=3, power=POWER[update], salt=SaltSource(seed=5).next())
    np.testing.assert_array_equal(got, want)  # the same integer grid units, summed exactly: identical
    name = "count-gaussian" if update == "count" else update
    mech = get_mechanism(name, epsilon=EPS, delta=DELTA, max_items=3)
    rel = spark_release(mech, spark_corpus3, seed=5)
    cal = mech.calibrate()
    ids = noisy_threshold(want, make_rng(5), cal.noise, cal.scale, cal.rho)
    assert sorted(rel.items.tolist()) == sorted(c.vocab[ids].tolist())


def test_weight_zero_items_are_never_candidates(spark_corpus3, local_corpus3):
    """H > 0 exactly on the eligible items somebody holds: items outside the mask (DPNE's invalid k-grams,
    DP-SIPS's released ones) and items nobody holds get weight 0, and only H > 0 is ever noised."""
    c = local_corpus3
    eligible = (c.ngram_len == 1) | ((c.ngram_len == 2) & (np.arange(c.n_items) % 2 == 0))
    held = np.zeros(c.n_items, dtype=bool)
    held[c.items] = True
    whole = int(np.diff(c.indptr).max())
    h = spark_corpus3.histogram(max_items=whole, power=0.5, salt=SaltSource().next(), eligible=eligible)
    assert np.array_equal(h > 0, eligible & held)
    h = spark_corpus3.histogram(max_items=2, power=0.0, salt=SaltSource().next(), eligible=eligible)
    assert not np.any((h > 0) & ~(eligible & held)) and np.any(h > 0)


def test_neighbouring_corpora_differ_by_one_bounded_user(spark, tmp_path):
    """Adding one user (more items than Delta0) changes Spark's H by l2 <= 1 (weighted Gaussian), l1 <= 1
    (weighted Laplace), l2 <= sqrt(Delta0) (count), with the same salt coupling everyone else's samples."""
    rows = corpus_rows(n_users=25, seed=3)
    d = load_spark_corpus(write_csv(tmp_path / "d.csv", rows), spark=spark)
    extra = [("newcomer", "alpha gamma zzz1 zzz2 zzz3 zzz4 zzz5 zzz6 naïve x2")]
    d2 = load_spark_corpus(write_csv(tmp_path / "d2.csv", rows + extra), spark=spark)
    salt = SaltSource().next()
    for update, norm, bound in [("weighted-gaussian", 2, 1.0), ("weighted-laplace", 1, 1.0), ("count", 2, 3**0.5)]:
        h = dict(zip(d.vocabulary.vocab, d.histogram(max_items=3, power=POWER[update], salt=salt)))
        h2 = dict(zip(d2.vocabulary.vocab, d2.histogram(max_items=3, power=POWER[update], salt=salt)))
        diff = np.array([h2[k] - h.get(k, 0.0) for k in h2])
        assert diff.min() >= -1e-12
        assert 0 < np.linalg.norm(diff, ord=norm) <= bound + 1e-9


def test_sequential_mechanism_runs_on_the_driver_and_says_so(spark_corpus3, local_corpus3):
    mech = get_mechanism("policy-gaussian", epsilon=EPS, delta=DELTA, max_items=4)
    got = spark_release(mech, spark_corpus3, seed=2)
    want = mech.release(local_corpus3, seed=2)
    assert got.items.tolist() == want.items.tolist()
    assert "ran on the driver" in got.calibration.details.engine


def test_cli_engine_spark_matches_local_and_exports_no_raw_values(spark, csv_path, tmp_path, capsys):
    outs = {}
    for engine in ("local", "spark"):
        out, rep = tmp_path / f"{engine}.csv", tmp_path / f"{engine}.json"
        argv = ["release", csv_path, "-m", "weighted-gaussian", "-e", "4", "-d", "1e-4", "--max-items", "500"]
        code = main(argv + ["--seed", "9", "-o", str(out), "--report", str(rep), "--engine", engine])
        err = capsys.readouterr().err
        assert code == 0, err
        outs[engine] = (out.read_text(encoding="utf-8"), json.loads(rep.read_text(encoding="utf-8")), err)
    (csv_local, _, _), (csv_spark, report, err) = outs["local"], outs["spark"]
    assert csv_spark == csv_local
    header = next(csv.reader(line for line in csv_spark.splitlines() if not line.startswith("#")))
    assert set(header) <= {"item", "n", "teaching_warning"}  # no weights, no true counts
    assert "Spark executors" in report["calibration"]["details"]["engine"]
    assert "note: spark:" in err and "not private" in err
    code = main(
        ["release", csv_path, "-m", "count-gaussian", "-e", "1", "-d", "1e-5", "-o", str(tmp_path / "x.csv")]
        + ["--spark-master", "local[1]"]
    )
    assert code == 2 and "--engine spark" in capsys.readouterr().err
