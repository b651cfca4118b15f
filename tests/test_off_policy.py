"""recframe.off_policy: single-slot off-policy estimators from logged feedback (issue 61), by
hand, against a slow reference (reference_off_policy), by simulation against a known true value,
on every backend, and its refusals."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
import pytest
import reference_off_policy as reference
from conftest import BACKENDS, assert_values_close, to_polars
from hypothesis import given, settings
from hypothesis import strategies as st

import recframe
from recframe import _off_policy as op
from recframe.errors import RecframeError

ALL = ["ips", "snips", "clipped_ips", "dm", "dr", "sndr", "switch_dr"]
Z95 = NormalDist().inv_cdf(0.975)

# four logged rows: w = target / propensity = 2, 0, 2, 2
LOGS = pl.DataFrame(
    {
        "context_id": [1, 2, 3, 4],
        "item_id": ["a", "b", "a", "c"],
        "position": [1, 1, 1, 1],
        "propensity": [0.5, 0.25, 0.5, 0.25],
        "reward": [1.0, 0.0, 0.0, 1.0],
        "target": [1.0, 0.0, 1.0, 0.5],
        "q": [0.5, 0.5, 0.5, 0.0],
        "qe": [0.4, 0.1, 0.4, 0.2],
    }
)
DIRECT = dict(target="target", predicted="q", target_predicted="qe")


def _values(out: Any) -> dict[str, dict[str, Any]]:
    return {row["estimator"]: row for row in to_polars(out).iter_rows(named=True)}


def test_ips_and_snips_by_hand() -> None:
    got = _values(recframe.off_policy(LOGS, ["ips", "snips"], target="target"))
    assert got["ips"]["value"] == pytest.approx((1 / 0.5 * 1 + 0 + 1 / 0.5 * 0 + 0.5 / 0.25 * 1) / 4)
    assert got["snips"]["value"] == pytest.approx((2 * 1 + 0 + 2 * 0 + 2 * 1) / (2 + 0 + 2 + 2))
    # the IPS values per row are 2, 0, 0, 2: mean 1, sample variance 4/3
    assert got["ips"]["se"] == pytest.approx(math.sqrt(4 / 3 / 4))
    assert got["ips"]["lo"] == pytest.approx(1 - Z95 * math.sqrt(1 / 3))
    assert got["ips"]["hi"] == pytest.approx(1 + Z95 * math.sqrt(1 / 3))
    # SNIPS: psi = w (r - 2/3) / (6/4) = 4/9, 0, -8/9, 4/9
    psi = [2 * (1 - 2 / 3) / 1.5, 0.0, 2 * (0 - 2 / 3) / 1.5, 2 * (1 - 2 / 3) / 1.5]
    assert got["snips"]["se"] == pytest.approx(math.sqrt(sum(x * x for x in psi) / (4 * 3)))
    for row in got.values():
        assert (row["n"], row["on_policy"], row["ess"], row["largest_weight"], row["supported"]) == (4, 0.5, 36 / 12, 2.0, 0.75)
    assert got["ips"]["lift"] == pytest.approx(1.0 / 0.5 - 1)


def test_model_based_estimators_by_hand() -> None:
    got = _values(recframe.off_policy(LOGS, ALL, **DIRECT, max_weight=1.5, switch_threshold=1.0))
    assert got["clipped_ips"]["value"] == pytest.approx((1.5 * 1 + 0 + 1.5 * 0 + 1.5 * 1) / 4)
    assert got["dm"]["value"] == pytest.approx((0.4 + 0.1 + 0.4 + 0.2) / 4)
    dr = [0.4 + 2 * (1 - 0.5), 0.1 + 0 * (0 - 0.5), 0.4 + 2 * (0 - 0.5), 0.2 + 2 * (1 - 0)]
    assert got["dr"]["value"] == pytest.approx(sum(dr) / 4)
    assert got["sndr"]["value"] == pytest.approx(1.1 / 4 + (2 * 0.5 + 0 + 2 * -0.5 + 2 * 1) / 6)
    # every weight (2) exceeds the threshold 1 but the unsupported row's (0): switch-DR is DM
    assert got["switch_dr"]["value"] == pytest.approx(got["dm"]["value"])
    assert list(got) == ALL


def test_the_default_estimators_follow_the_inputs_given() -> None:
    assert list(_values(recframe.off_policy(LOGS, target="target"))) == ["ips", "snips"]
    assert list(_values(recframe.off_policy(LOGS, **DIRECT))) == ["ips", "snips", "dm", "dr", "sndr"]
    both = recframe.off_policy(LOGS, **DIRECT, max_weight=5, switch_threshold=3)
    assert list(_values(both)) == ["ips", "snips", "clipped_ips", "dm", "dr", "sndr", "switch_dr"]


def test_the_namespace_forwards() -> None:
    assert LOGS.recmetrics.off_policy(["ips"], target="target").equals(recframe.off_policy(LOGS, ["ips"], target="target"))


def _random_logs(seed: int, n: int, groups: int = 2) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    target = rng.random(n)
    target[rng.random(n) < 0.3] = 0.0
    return pl.DataFrame(
        {
            "g": rng.integers(0, groups, n),
            "context_id": np.arange(n),
            "propensity": rng.uniform(0.05, 1.0, n),
            "reward": rng.random(n).round(1),
            "target": target,
            "q": rng.random(n),
            "qe": rng.random(n),
        }
    )


def _reference(logs: pl.DataFrame, by: str | None, **settings: float) -> list[dict[str, Any]]:
    out = []
    keys = sorted(set(logs.get_column(by).to_list())) if by else [None]
    for key in keys:
        rows = logs.filter(pl.col(by) == key) if by else logs
        w = [t / p for t, p in zip(rows["target"], rows["propensity"])]
        r, q, qe = rows["reward"].to_list(), rows["q"].to_list(), rows["qe"].to_list()
        for name in ALL:
            values = reference.estimate(name, w, r, q, qe, settings["max_weight"], settings["switch_threshold"])
            out.append({**({by: key} if by else {}), "estimator": name, **values, **reference.diagnostics(w, r)})
    return out


def _close(got: pl.DataFrame, want: list[dict[str, Any]]) -> None:
    assert got.height == len(want)
    for g, w in zip(got.iter_rows(named=True), want):
        assert g["estimator"] == w["estimator"]
        for column in ("value", "on_policy", "ess", "largest_weight", "supported"):
            assert_values_close([g[column]], [w[column]], rel=1e-9, abs=1e-9, label=f"{w['estimator']} {column}")
        # a variance from sums loses digits to cancellation: compared as squares, scaled
        if w["se"] is None or g["se"] is None:
            assert g["se"] is None and w["se"] is None, (g, w)
        else:
            scale = 1 + w["largest_weight"] ** 2 / max(w["ess"], 1e-300) * 4 + abs(w["value"] or 0) ** 2
            assert abs(g["se"] ** 2 - w["se"] ** 2) <= 1e-9 * scale, (w["estimator"], g["se"], w["se"])
            assert (g["lo"], g["hi"]) == pytest.approx((g["value"] - Z95 * g["se"], g["value"] + Z95 * g["se"]))


SETTINGS = dict(max_weight=3.0, switch_threshold=2.0)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_every_backend_agrees_with_the_reference(backend: str) -> None:
    logs = _random_logs(7, 60)
    frame = BACKENDS[backend](logs)
    got = recframe.off_policy(frame, ALL, **DIRECT, position=None, by="g", **SETTINGS)
    assert type(got) is type(frame)
    _close(to_polars(got), _reference(logs, "g", **SETTINGS))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 25),
    seed=st.integers(0, 2**31),
    max_weight=st.sampled_from([0.5, 2.0, 100.0]),
    switch_threshold=st.sampled_from([0.0, 1.0, 1e6]),
)
def test_property_against_the_reference(n: int, seed: int, max_weight: float, switch_threshold: float) -> None:
    logs = _random_logs(seed, n, groups=2)
    config = dict(max_weight=max_weight, switch_threshold=switch_threshold)
    got = recframe.off_policy(logs, ALL, **DIRECT, position=None, by="g", **config)
    _close(got, _reference(logs, "g", **config))


def test_the_parts_of_two_halves_add_up_to_the_whole() -> None:
    """The parts of disjoint sets of contexts add (sums add, maxima take the larger); finishing
    the added parts gives the estimate of the whole log."""
    import narwhals as nw

    logs = _random_logs(3, 80, groups=1).with_columns((pl.col("target") / pl.col("propensity")).alias(op.WEIGHT))
    rows = logs.rename({"reward": op.REWARD, "q": op.PREDICTED, "qe": op.TARGET_PREDICTED})
    chosen = [op.ESTIMATORS[name] for name in ALL]
    parts, logged = op.parts_of(chosen), op.Logged(**SETTINGS)

    def parts_row(frame: pl.DataFrame) -> dict[str, float]:
        return op.parts_frame(nw.from_native(frame.lazy()), [], parts, logged).collect().to_native().row(0, named=True)

    halves = [parts_row(rows[:30]), parts_row(rows[30:])]
    added = chosen[0].add(parts, *halves)
    whole = parts_row(rows)
    assert added == pytest.approx(whole, rel=1e-12)
    finished = op.finished(nw.from_native(pl.DataFrame([added]).lazy()), [], chosen, Z95).collect().to_native()
    expected = recframe.off_policy(logs, ALL, **DIRECT, position=None, **SETTINGS)
    assert_values_close(finished["value"].to_list(), expected["value"].to_list(), rel=1e-12)
    assert_values_close(finished["se"].to_list(), expected["se"].to_list(), rel=1e-9)
