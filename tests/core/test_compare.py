import numpy as np
import pandas as pd
import pytest

from dpsu_core.analysis.compare import compare_runs, summarize
from dpsu_core.corpus.build import corpus_from_token_lists
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import get_mechanism, list_mechanisms

NAMES = ["weighted-gaussian", "policy-gaussian", "count-laplace", "policy-laplace"]
PARAMS = {"max_items": 10, "alpha": 3.0}


@pytest.fixture(scope="module")
def shared_corpus():
    # 600 users all hold the same three words and the bigram "a b": every mechanism releases exactly these
    # (weights far above rho), and the singleton words (one user each) essentially never pass.
    users = [[["a", "b"], ["c"], [f"solo{i}"]] for i in range(600)]
    return corpus_from_token_lists(users, max_n=2)


@pytest.fixture(scope="module")
def zipf_corpus():
    rng = np.random.default_rng(7)
    users = [[[f"w{int(x)}" for x in rng.zipf(1.4, rng.integers(1, 25))]] for _ in range(400)]
    return corpus_from_token_lists(users, max_n=2)


def test_rows_columns_and_per_length_counts(shared_corpus):
    # alpha = 25 puts Gamma 25 noise scales above rho, so an item at Gamma falls below rho with probability
    # about 0.5 e^-25 (Laplace) per run: "exactly these four items" is then certain up to ~1e-10, not ~20%.
    df = compare_runs(shared_corpus, NAMES, 2.0, 1e-6, {**PARAMS, "alpha": 25.0}, runs=3)
    assert list(df.columns) == [
        "mechanism",
        "label",
        "run",
        "released",
        "seconds",
        "recovered_mass",
        "released_n1",
        "released_n2",
    ]
    assert len(df) == len(NAMES) * 3
    assert list(df["mechanism"]) == [n for n in NAMES for _ in range(3)]
    assert list(df["run"]) == [1, 2, 3] * len(NAMES)
    assert list(df["label"]) == [list_mechanisms()[n].label for n in df["mechanism"]]
    # a, b, c and the bigram "a b": 3 unigrams + 1 bigram for every mechanism and run
    assert (df["released_n1"] == 3).all() and (df["released_n2"] == 1).all()
    assert (df["released"] == df["released_n1"] + df["released_n2"]).all()
    assert (df["seconds"] >= 0).all()


def test_released_equals_sum_of_lengths_on_varied_corpus(zipf_corpus):
    df = compare_runs(zipf_corpus, ["weighted-laplace", "count-gaussian"], 1.0, 1e-5, {"max_items": 5}, runs=2)
    length_cols = [c for c in df.columns if c.startswith("released_n")]
    assert (df[length_cols].sum(axis=1) == df["released"]).all()
    assert df[length_cols].dtypes.map(lambda d: np.issubdtype(d, np.integer)).all()


def test_seed_makes_runs_reproducible(zipf_corpus):
    a = compare_runs(zipf_corpus, ["weighted-gaussian", "policy-laplace"], 1.0, 1e-5, PARAMS, runs=4, seed=11)
    b = compare_runs(zipf_corpus, ["weighted-gaussian", "policy-laplace"], 1.0, 1e-5, PARAMS, runs=4, seed=11)
    cols = [c for c in a.columns if c != "seconds"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def test_progress_reaches_one_and_is_monotone(shared_corpus):
    seen = []
    compare_runs(
        shared_corpus,
        ["weighted-gaussian", "count-gaussian"],
        1.0,
        1e-6,
        PARAMS,
        runs=2,
        progress=lambda f, msg: seen.append((f, msg)),
    )
    fracs = [f for f, _ in seen]
    assert fracs[-1] == 1.0 and fracs == sorted(fracs) and len(seen) == 5
    assert all(isinstance(m, str) and m for _, m in seen)


def test_summarize_matches_numpy(zipf_corpus):
    df = compare_runs(zipf_corpus, ["count-laplace", "weighted-gaussian"], 0.5, 1e-6, {"max_items": 20}, runs=5)
    s = summarize(df)
    assert list(s.columns) == ["mechanism", "label", "mean", "sd", "runs", "median_seconds", "recovered_mass"]
    assert list(s["mechanism"]) == ["count-laplace", "weighted-gaussian"]  # input order kept
    for _, row in s.iterrows():
        x = df.loc[df["mechanism"] == row["mechanism"], "released"].to_numpy(dtype=float)
        t = df.loc[df["mechanism"] == row["mechanism"], "seconds"].to_numpy(dtype=float)
        assert row["mean"] == pytest.approx(x.mean())
        assert row["sd"] == pytest.approx(x.std(ddof=1))
        assert row["runs"] == 5
        assert row["median_seconds"] == pytest.approx(np.median(t[1:]))  # the first run left out


def test_summarize_single_run_has_undefined_sd(shared_corpus):
    df = compare_runs(shared_corpus, ["weighted-gaussian"], 1.0, 1e-6, PARAMS, runs=1)
    s = summarize(df)
    assert s["runs"].tolist() == [1] and np.isnan(s["sd"].iloc[0])
    assert s["median_seconds"].iloc[0] == df["seconds"].iloc[0]  # the only run: its time


def test_the_first_run_compiling_is_not_read_as_speed():
    """A first run of 6 s (compiling) and warm runs of about 0.02 s: the summary says 0.02, not the mean 1.2."""
    df = pd.DataFrame(
        {
            "mechanism": ["gw"] * 5 + ["pg"] * 5,
            "label": ["GW"] * 5 + ["PG"] * 5,
            "released": [3] * 10,
            "seconds": [6.0, 0.03, 0.02, 0.025, 0.021, 0.05, 14.0, 0.06, 0.07, 0.065],
            "recovered_mass": [0.5] * 10,
        }
    )
    s = summarize(df).set_index("mechanism")["median_seconds"]
    assert s["gw"] == pytest.approx(0.023) and s["pg"] == pytest.approx(0.0675)  # a late spike barely moves it


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"names": []}, "names is empty"),
        ({"names": "policy-gaussian"}, "list of mechanism names"),
        ({"names": ["nope"]}, "unknown mechanism"),
        ({"names": ["count-laplace", "count-laplace"]}, "twice"),
        ({"runs": 0}, "runs"),
        ({"params": {"alpah": 3}}, "alpah"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"params": {"max_items": 0}}, "max_items"),
    ],
)
def test_bad_input_raises_typed_error(shared_corpus, kwargs, match):
    args = {"names": ["weighted-gaussian"], "epsilon": 1.0, "delta": 1e-6, "params": PARAMS, "runs": 1}
    args.update(kwargs)
    with pytest.raises(ParameterError, match=match):
        compare_runs(shared_corpus, **args)


def test_summarize_rejects_other_tables():
    with pytest.raises(ParameterError, match="compare_runs"):
        summarize(pd.DataFrame({"x": [1]}))


def test_recovered_mass_ledger_callback_cost_and_csv(zipf_corpus):
    import io

    from dpsu_core.analysis.compare import planned_cost, summary_csv
    from dpsu_core.analysis.metrics import missing_mass

    seen = []
    names = ["weighted-laplace", "policy-gaussian"]
    df = compare_runs(zipf_corpus, names, 1.0, 1e-5, {"max_items": 5}, runs=2, seed=3, record=seen.append)
    assert len(seen) == 4 and [c.mechanism for c in seen] == [n for n in names for _ in range(2)]
    # each run's recovered mass is metrics.missing_mass's (the runs redone with the same spawned seeds)
    children = np.random.SeedSequence(3).spawn(4)
    for i, mass in enumerate(df["recovered_mass"]):
        mech = get_mechanism(names[i // 2], epsilon=1.0, delta=1e-5, max_items=5)
        rel = mech.release(zipf_corpus, seed=int(children[i].generate_state(1, np.uint64)[0]))
        mm = missing_mass(zipf_corpus, rel)
        assert mass == pytest.approx(float(mm.loc[mm["n"] == 0, "recovered_mass"].iloc[0]))
    s = summarize(df)
    assert s["recovered_mass"].tolist() == pytest.approx(df.groupby("mechanism", sort=False)["recovered_mass"].mean())
    cost = planned_cost(names, 1.0, 1e-5, {"max_items": 5}, 2)
    assert (
        cost.releases == 4 and cost.basic_epsilon == pytest.approx(4.0) and cost.zcdp_mixed
    )  # Laplace runs: by basic composition inside the zCDP total
    plain = pd.read_csv(io.StringIO(summary_csv(s).decode()), comment="#")  # by default: private outputs only
    assert list(plain.columns) == ["mechanism", "label", "runs", "mean", "sd"]
    raw = summary_csv(s, include_raw=True).decode()
    assert raw.startswith("# dpsu comparison") and "NOT private" in raw.splitlines()[0]
    back = pd.read_csv(io.StringIO(raw), comment="#")
    assert list(back.columns) == ["mechanism", "label", "runs", "mean", "sd", "recovered_mass"]
    assert back["mean"].tolist() == pytest.approx(s["mean"].tolist(), rel=1e-3)
