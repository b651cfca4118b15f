"""Sums near the float maximum (issue 38): disparity and compare of finite values near
1.8e308 give finite means, gaps and intervals (the sums are scaled, not overflowed), and a
difference past the largest float64 is refused naming the column."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import recframe
from recframe import RecframeError

HUGE = pl.DataFrame(
    {
        "model": ["A"] * 4 + ["B"] * 4,
        "user_id": [1, 2, 3, 4] * 2,
        "segment": ["x", "x", "y", "y"] * 2,
        "ndcg@10": [1e308, 1e308, 0.5, 0.25, 1e308, 1.5e308, 0.1, 0.2],
    }
)


def test_disparity_means_of_finite_values_near_the_float_maximum_are_finite() -> None:
    out = recframe.disparity(HUGE, group="segment", test="permutation", seed=0).sort("model")
    a, b = out.row(0, named=True), out.row(1, named=True)
    assert (a["high_mean"], a["low_mean"]) == (1e308, (0.5 + 0.25) / 2)
    assert b["high_mean"] == 1.25e308 and b["low_mean"] == pytest.approx((0.1 + 0.2) / 2)
    assert a["difference"] == 1e308 - 0.375 and b["difference"] == 1.25e308 - 0.15
    for row in (a, b):
        for column in ("difference", "mad", "gap_lo", "gap_hi", "mean_x", "p_value"):
            assert np.isfinite(row[column]), (column, row)
    assert b["gap_lo"] <= b["difference"] <= b["gap_hi"]


def test_disparity_with_values_of_ordinary_size_is_unchanged_by_the_scaling() -> None:
    small = HUGE.with_columns(pl.col("ndcg@10") / 1e308 * 0.5)
    out = recframe.disparity(small, group="segment", test="permutation", seed=0).sort("model")
    expected = small.filter(pl.col("model") == "B").group_by("segment").agg(pl.col("ndcg@10").mean()).sort("segment")
    assert out.row(1, named=True)["high_mean"] == expected["ndcg@10"][0]


def test_compare_means_near_the_float_maximum_are_finite() -> None:
    out = recframe.compare(HUGE.drop("segment"), by="model", baseline="B", user="user_id").row(0, named=True)
    assert out["model_mean"] == pytest.approx(1e308 / 2, rel=1e-12)  # (1e308 + 1e308 + 0.5 + 0.25) / 4
    assert out["baseline_mean"] == pytest.approx(1e308 / 4 + 1.5e308 / 4, rel=1e-12)
    assert all(np.isfinite(out[c]) for c in ("delta", "delta_lo", "delta_hi", "p_value"))


@pytest.mark.parametrize("call", ["disparity", "compare"])
def test_a_difference_past_the_float_maximum_is_refused_with_the_reason(call: str) -> None:
    opposite = HUGE.with_columns(
        pl.when(pl.col("model") == "B").then(-pl.col("ndcg@10")).otherwise(pl.col("ndcg@10")).alias("ndcg@10")
    )
    with pytest.raises(RecframeError, match="beyond the largest float64") as caught:
        if call == "disparity":
            recframe.disparity(opposite.with_columns(pl.col("segment").reverse().over("model")), group="segment")
        else:
            recframe.compare(opposite.drop("segment"), by="model", baseline="B", user="user_id")
    assert "'ndcg@10'" in str(caught.value) and "rescale" in str(caught.value)
