"""compare's two paths read the keys and values one way (issue 58, items 2, 3, 4 and 11): a null
user or model is refused by name on every backend, by the comparison with a baseline and of
every pair alike (the pairs once paired a null user with itself, the baseline dropped it: n_pairs
3 and 2 for one pair; a null model was a model of its own in Polars); d_z of equal differences
is null to the tolerance of a tie; a metric column of text is refused by name, not cast."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import BACKENDS, ibis_table, to_polars
from recframe.compare import effect_size
from recframe.errors import RecframeError

pytest.importorskip("scipy", reason="the paired t test needs scipy: pip install 'recframe[stats]'")

IN_PROCESS = [name for name in BACKENDS if name != "duckdb"]  # all pairs runs in Python only
ENGINES = {
    "duckdb": lambda df: BACKENDS["duckdb"](df),
    "ibis": ibis_table,
}


def _every_backend() -> list[Any]:
    return [pytest.param(BACKENDS[name], id=name) for name in BACKENDS] + [
        pytest.param(ENGINES["ibis"], id="ibis", marks=pytest.mark.slow_engine)
    ]


def _calls(baseline_only: bool) -> list[dict[str, Any]]:
    return [{"baseline": "A"}] + ([] if baseline_only else [{}, {"test": "wilcoxon", "baseline": "A"}])


def _is_engine(constructor: Any) -> bool:
    return constructor in (BACKENDS.get("duckdb"), ENGINES["ibis"])


# user 3 has a null id under both models: all pairs counted it, the baseline dropped it
NULL_USER = pl.DataFrame(
    {"model": ["A", "A", "A", "B", "B", "B"], "user_id": [1, 2, None, 1, 2, None], "ndcg@10": [0.1, 0.2, 0.0, 0.2, 0.2, 1.0]}
)
NULL_MODEL = pl.DataFrame(
    {"model": ["A", "A", "B", "B", None, None], "user_id": [1, 2, 1, 2, 1, 2], "ndcg@10": [0.1, 0.2, 0.3, 0.5, 0.2, 0.2]}
)


@pytest.mark.parametrize("constructor", _every_backend())
def test_a_null_user_is_refused_on_both_paths(constructor: Any) -> None:
    for call in _calls(_is_engine(constructor)):
        with pytest.raises(RecframeError, match=r"column 'user_id' of per_user_frame \(user=\) has 2 null value\(s\).*Hint: "):
            to_polars(recframe.compare(constructor(NULL_USER), metrics=["ndcg@10"], **call))


@pytest.mark.parametrize("constructor", _every_backend())
def test_a_null_model_is_refused_on_both_paths(constructor: Any) -> None:
    for call in _calls(_is_engine(constructor)):
        with pytest.raises(RecframeError, match=r"column 'model' of per_user_frame \(by=\) has 2 null value\(s\).*Hint: "):
            to_polars(recframe.compare(constructor(NULL_MODEL), metrics=["ndcg@10"], **call))


def test_a_null_model_is_named_before_a_duplicate_on_both_paths() -> None:
    """Two rows of a null model and one user were a duplicate to Polars: the null is the fault."""
    twice = pl.concat([NULL_MODEL, NULL_MODEL.filter(pl.col("model").is_null()).head(1)])
    for frame in (twice, ENGINES["duckdb"](twice)):
        with pytest.raises(RecframeError, match=r"column 'model' of per_user_frame \(by=\) has 3 null value\(s\)"):
            recframe.compare(frame, baseline="A")


def test_the_pairs_without_the_null_rows_agree() -> None:
    """The refusal's hint: without the null rows both paths give one answer, users 1 and 2:
    d = A - B = -0.1, 0.0, delta -0.05 (all pairs) and B - A = 0.05 (baseline A)."""
    kept = NULL_USER.drop_nulls("user_id")
    pairs = recframe.compare(kept, metrics=["ndcg@10"]).row(0, named=True)
    base = recframe.compare(kept, baseline="A", metrics=["ndcg@10"]).row(0, named=True)
    assert (pairs["n_pairs"], base["n_pairs"]) == (2, 2)
    assert pairs["delta"] == pytest.approx(-0.05, rel=1e-12)
    assert base["delta"] == pytest.approx(0.05, rel=1e-12)


@pytest.mark.parametrize("constructor", [pytest.param(BACKENDS[name], id=name) for name in IN_PROCESS])
def test_d_z_of_equal_differences_is_null(constructor: Any) -> None:
    """0.7 - 0.6 and 0.4 - 0.3 are both 0.1 to 12 digits (4e-17 apart in floats): one difference,
    no spread, d_z null (it was 2.5e15), as a user's tie uses that tolerance."""
    frame = pl.DataFrame({"model": ["A", "A", "B", "B"], "user_id": [1, 2, 1, 2], "ndcg@10": [0.7, 0.4, 0.6, 0.3]})
    row = to_polars(recframe.compare(constructor(frame))).row(0, named=True)
    assert row["delta"] == pytest.approx(0.1, rel=1e-12)
    assert row["d_z"] is None
    assert (row["wins"], row["ties"], row["losses"]) == (2, 0, 0)


def test_effect_size_reads_equal_differences_with_one_tolerance() -> None:
    assert np.isnan(effect_size(np.array([0.7, 0.4]), np.array([0.6, 0.3])))
    assert np.isnan(effect_size(np.array([1e6 + 0.1, 2e6 + 0.1]), np.array([1e6, 2e6])))  # 0.1 to 12 digits of 2e6
    # differences apart past the tolerance keep their d_z: d = 0.1, 0.1 + 1e-9, mean / sd
    d = np.array([0.1, 0.1 + 1e-9])
    assert effect_size(d, np.zeros(2)) == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-6)


TEXT = pl.DataFrame({"model": ["A", "A", "B", "B"], "user_id": [1, 2, 1, 2], "ndcg@10": ["abc", "0.2", "0.3", "0.4"]})
NUMERIC_TEXT = TEXT.with_columns(pl.Series("ndcg@10", ["0.1", "0.2", "0.3", "0.4"]))


@pytest.mark.parametrize("constructor", _every_backend())
@pytest.mark.parametrize("frame", [TEXT, NUMERIC_TEXT], ids=["abc", "numeric-text"])
@pytest.mark.parametrize("metrics", [None, ["ndcg@10"]], ids=["every-metric", "metrics"])
def test_a_metric_column_of_text_is_refused_by_name(constructor: Any, frame: pl.DataFrame, metrics: Any) -> None:
    for call in _calls(_is_engine(constructor)):
        with pytest.raises(
            RecframeError, match=r"column 'ndcg@10' of per_user_frame holds String values, not numbers.*Hint: cast"
        ):
            to_polars(recframe.compare(constructor(frame), metrics=metrics, **call))


def test_a_text_column_beside_numbers_is_named_with_the_others() -> None:
    frame = NUMERIC_TEXT.with_columns(pl.Series("rr@10", [1.0, 0.5, 0.5, 0.25]))
    with pytest.raises(RecframeError, match=r"metrics=None compares every metric column.*pass metrics= some of \['rr@10'\]"):
        recframe.compare(frame)
    row = recframe.compare(frame, metrics=["rr@10"]).row(0, named=True)  # the hint's call: A - B = 0.5, 0.25
    assert row["delta"] == pytest.approx(0.375, rel=1e-12)
