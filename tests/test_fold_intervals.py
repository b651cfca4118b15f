"""combine_folds names each column's adjustment (issue 58, item 18): its interval is of the row
alone and leaves out 0 exactly when the unadjusted p-value is below alpha; only p_adjusted and
significant carry the correction. A row with an interval without 0 beside significant False
was shown with nothing saying so: the docstring and docs/reporting.md now say it, and these
tests hold the relation they state."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import recframe

pytest.importorskip("scipy", reason="the t test needs scipy: pip install 'recframe[stats]'")


def per_fold(deltas: list[list[float]]) -> pl.DataFrame:
    """A comparison within folds: one metric per list of fold deltas, model A against B."""
    rows = [(f + 1, f"m{i}@10", 0.5 + d, 0.5, d) for i, ds in enumerate(deltas) for f, d in enumerate(ds)]
    return pl.DataFrame(rows, schema=["fold", "metric", "mean_a", "mean_b", "delta"], orient="row").select(
        "fold", pl.lit("A").alias("model_a"), pl.lit("B").alias("model_b"), "metric", "mean_a", "mean_b", "delta"
    )


def test_the_hand_example() -> None:
    """Fold deltas 0.2, 0.3, 0.4 for two metrics: t = 0.3 / (0.1 / sqrt(3)) on 2 degrees of
    freedom, p = 1 - t / sqrt(t^2 + 2); the interval 0.3 -/+ t_{0.975, 2} 0.1 / sqrt(3) leaves
    out 0, Holm doubles p past 0.05."""
    out = recframe.combine_folds(per_fold([[0.2, 0.3, 0.4]] * 2))
    t = 0.3 / (0.1 / np.sqrt(3))
    p = 1 - t / np.sqrt(t**2 + 2)
    half = 4.302652729911275 * 0.1 / np.sqrt(3)
    for row in out.iter_rows(named=True):
        assert (row["delta_lo"], row["delta_hi"]) == (pytest.approx(0.3 - half, rel=1e-9), pytest.approx(0.3 + half, rel=1e-9))
        assert row["p_value"] == pytest.approx(p, rel=1e-9)
        assert row["p_adjusted"] == pytest.approx(2 * p, rel=1e-9)
        assert row["delta_lo"] > 0 and row["significant"] is False
    assert recframe.combine_folds(per_fold([[0.2, 0.3, 0.4]] * 2), correction=None)["significant"].to_list() == [True, True]


@pytest.mark.parametrize("correction", ["holm", "bonferroni", None])
def test_the_interval_leaves_out_zero_exactly_when_the_unadjusted_p_is_below_alpha(correction: str | None) -> None:
    rng = np.random.default_rng(58)
    deltas = [list(rng.normal(rng.uniform(-0.1, 0.1), rng.uniform(0.01, 0.1), size=rng.integers(2, 8))) for _ in range(200)]
    out = recframe.combine_folds(per_fold(deltas), correction=correction, alpha=0.05)
    excludes = (out["delta_lo"] > 0) | (out["delta_hi"] < 0)
    assert (excludes == (out["p_value"] < 0.05)).all()
    assert (out["significant"] == (out["p_adjusted"] < 0.05)).all()
    if correction is None:
        assert (out["significant"] == excludes).all()
    else:
        assert (out["significant"] & ~excludes).sum() == 0  # an adjusted rejection has an unadjusted one
        assert (excludes & ~out["significant"]).sum() > 0  # the case the docstring names


def test_the_docstring_names_each_columns_adjustment() -> None:
    doc = recframe.combine_folds.__doc__ or ""
    assert "Each column's adjustment" in doc
    assert "not adjusted for the other rows" in doc
    assert "``significant`` is ``p_adjusted <" in doc
