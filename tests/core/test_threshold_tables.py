import math

import numpy as np
import pytest

from dpsu_core.analysis.threshold_tables import PUBLISHED_GW, thresholds_vs_epsilon, thresholds_vs_max_items
from dpsu_core.errors import ParameterError
from dpsu_core.mechanisms import Mechanism, list_mechanisms, registry

COLUMNS = ["mechanism", "label", "family", "epsilon", "scale", "rho", "gamma"]
DELTA_REF = math.exp(-10)


def set_union_names():
    return [n for n, c in list_mechanisms().items() if c.kind == "set-union"]


def test_columns_and_one_row_per_mechanism_and_epsilon():
    eps = [0.5, 1.0, 3.0]
    df = thresholds_vs_epsilon(eps, 1e-6, 100, 4.0)
    assert list(df.columns) == COLUMNS
    names = set_union_names()
    assert len(df) == len(names) * len(eps)
    assert set(df["mechanism"]) == set(names)
    for _name, g in df.groupby("mechanism"):
        assert sorted(g["epsilon"]) == eps
        assert g["label"].nunique() == 1 and g["family"].iloc[0] in ("laplace", "gaussian")


def test_spec_reference_values_eps3_delta_e10():
    # docs/algorithms.md §2, epsilon = 3, delta = e^-10, Delta0 = 100.
    df = thresholds_vs_epsilon([3.0], DELTA_REF, 100, 5.0).set_index("mechanism")
    assert df.loc["weighted-laplace", "rho"] == pytest.approx(4.6473, abs=1e-4)
    assert df.loc["policy-laplace", "rho"] == pytest.approx(4.6473, abs=1e-4)
    assert df.loc["weighted-gaussian", "rho"] == pytest.approx(6.8237, abs=1e-4)
    assert df.loc["policy-gaussian", "rho"] == pytest.approx(6.8237, abs=1e-4)
    assert df.loc["weighted-gaussian", "scale"] == pytest.approx(1.3327913, abs=1e-6)
    assert df.loc["count-laplace", "scale"] == pytest.approx(100 / 3, abs=1e-3)
    assert df.loc["count-laplace", "rho"] == pytest.approx(464.73, abs=1e-2)
    assert df.loc["count-gaussian", "scale"] == pytest.approx(13.3279, abs=1e-4)
    assert df.loc["count-gaussian", "rho"] == pytest.approx(68.237, abs=1e-3)
    # GW/GW-KT in the capped form: 4.6956 at Delta0 = 100, 4.4001 at Delta0 = 30 (docs/algorithms.md §4)
    df30 = thresholds_vs_epsilon([3.0], DELTA_REF, 30, 5.0).set_index("mechanism")
    for greedy in ("gw", "gw-kt"):
        assert df.loc[greedy, "rho"] == pytest.approx(4.6956, abs=1e-4)
        assert df30.loc[greedy, "rho"] == pytest.approx(4.4001, abs=1e-4)
        assert df.loc[greedy, "rho"] == pytest.approx(math.log((math.exp(3) + 100 - 1) / (2 * DELTA_REF)) / 3)


def test_published_gw_reference_rows():
    df = thresholds_vs_epsilon([1.0, 3.0], DELTA_REF, 100, 5.0, include_published_gw=True)
    pub = df[df["mechanism"] == PUBLISHED_GW].set_index("epsilon")
    assert list(pub.index) == [1.0, 3.0]
    assert pub.loc[3.0, "rho"] == pytest.approx(4.1023, abs=1e-4)
    assert pub["gamma"].isna().all()
    assert "gw-published" not in list_mechanisms()  # a reference line, never a mechanism
    dm = thresholds_vs_max_items([1, 100], 3.0, DELTA_REF, 5.0, include_published_gw=True)
    assert (dm[dm["mechanism"] == PUBLISHED_GW]["rho"] == pub.loc[3.0, "rho"]).all()
    # the capped GW threshold grows with Delta0 and equals the published one at Delta0 = 1
    gw = dm[dm["mechanism"] == "gw"].set_index("max_items")["rho"]
    assert gw.loc[1] == pytest.approx(pub.loc[3.0, "rho"]) and gw.loc[100] > gw.loc[1]
    assert PUBLISHED_GW not in set(thresholds_vs_epsilon([3.0], DELTA_REF, 100, 5.0)["mechanism"])


def test_gamma_is_rho_plus_alpha_scale_for_policies_and_nan_otherwise():
    alpha = 3.5
    df = thresholds_vs_epsilon([0.7, 2.0], 1e-7, 50, alpha)
    for _, row in df.iterrows():
        cls = list_mechanisms()[row["mechanism"]]
        if "alpha" in cls.param_names:
            # rounds (Policy DP-SIPS): rho and gamma are the last round's (the headline), so gamma adds sigma_I
            cal = cls(
                epsilon=row["epsilon"], delta=1e-7, **cls.params_for({"max_items": 50, "alpha": alpha})
            ).calibrate()
            view = cls.calibration_view(cal)
            assert row["rho"] == view.threshold and row["scale"] == cal.scale
            rounds = cal.details.as_dict().get("sigma_i")
            assert row["rho"] == (cal.details.threshold_i[-1] if rounds else cal.rho)
            sigma = rounds[-1] if rounds else row["scale"]
            assert row["gamma"] == pytest.approx(row["rho"] + alpha * sigma)
        else:
            assert np.isnan(row["gamma"])


def test_rho_decreases_with_epsilon():
    df = thresholds_vs_epsilon([0.25, 0.5, 1, 2, 4, 8], 1e-6, 100, 5)
    for _, g in df.groupby("mechanism"):
        rho = g.sort_values("epsilon")["rho"].to_numpy()
        assert np.all(np.diff(rho) < 0)


def test_vs_max_items_reference_table_and_count_growth():
    ms = [1, 10, 50, 100, 200, 300]
    df = thresholds_vs_max_items(ms, 3.0, DELTA_REF, 5.0)
    assert list(df.columns) == COLUMNS + ["max_items"]
    assert len(df) == len(set_union_names()) * len(ms)
    wl = df[df["mechanism"] == "weighted-laplace"].set_index("max_items")["rho"]
    wg = df[df["mechanism"] == "weighted-gaussian"].set_index("max_items")["rho"]
    for m, lap, gau in [
        (1, 4.1023, 6.4353),
        (10, 4.1023, 6.4353),
        (50, 4.4263, 6.6862),
        (100, 4.6473, 6.8237),
        (200, 4.8734, 6.9689),
        (300, 5.0069, 7.0561),
    ]:
        assert wl[m] == pytest.approx(lap, abs=1e-4)
        assert wg[m] == pytest.approx(gau, abs=1e-4)
    cl = df[df["mechanism"] == "count-laplace"].sort_values("max_items")["rho"].to_numpy()
    assert np.all(np.diff(cl) > 0) and cl[-1] > 50 * cl[0]


class _FakeGreedy(Mechanism):
    """A GW-like mechanism that takes alpha but not max_items (the published GW rho, docs/algorithms.md §4)."""

    name, label, family = "fake-greedy", "Fake greedy", "laplace"
    param_names = ("alpha",)
    order_free = False

    @classmethod
    def privacy_cost(cls, cal):
        return None

    @classmethod
    def preview_stages(cls, cal, m_kept):
        return None

    @classmethod
    def noise_quantities(cls, cal):
        return [("Noise scale (λ)", cal.scale)]

    def calibrate(self):
        rho = 1 - math.log(2 * self.delta) / self.epsilon
        return self._calibration("laplace", 1 / self.epsilon, rho, rho + self.params["alpha"] / self.epsilon)

    def _release(self, corpus, rng, cal, progress):  # pragma: no cover - not used here
        raise NotImplementedError


def test_mechanism_with_other_params_gets_only_its_own(monkeypatch):
    monkeypatch.setattr(registry, "MECHANISM_CLASSES", (*registry.MECHANISM_CLASSES, _FakeGreedy))
    df = thresholds_vs_max_items([1, 100, 300], 3.0, DELTA_REF, 2.0)
    fake = df[df["mechanism"] == "fake-greedy"]
    assert len(fake) == 3
    assert fake["rho"].to_numpy() == pytest.approx([4.1023] * 3, abs=1e-4)  # published GW rho, docs/algorithms.md §4
    assert fake["gamma"].to_numpy() == pytest.approx(fake["rho"].to_numpy() + 2.0 / 3.0)
    e = thresholds_vs_epsilon([1.0, 3.0], DELTA_REF, 100, 2.0)
    assert (e["mechanism"] == "fake-greedy").sum() == 2


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: thresholds_vs_epsilon([], 1e-6, 100, 5), "epsilons is empty"),
        (lambda: thresholds_vs_epsilon([1, -1], 1e-6, 100, 5), "epsilon"),
        (lambda: thresholds_vs_epsilon([1], 1.5, 100, 5), "delta"),
        (lambda: thresholds_vs_epsilon([1], 1e-6, 0, 5), "max_items"),
        (lambda: thresholds_vs_epsilon([1], 1e-6, 100, -1), "alpha"),
        (lambda: thresholds_vs_max_items([], 1, 1e-6, 5), "max_items_list is empty"),
        (lambda: thresholds_vs_max_items([10, 2.5], 1, 1e-6, 5), "positive integer"),
    ],
)
def test_bad_input_raises_typed_error(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
