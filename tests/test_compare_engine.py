"""recframe.compare's paired t test inside a SQL engine (DuckDB here; Spark and Ibis in
test_engines.py): the counts and moments come from the engine, the p-values, intervals and
correction equal the comparison of the same values in Polars, the undefined cases included, and
what cannot run in the engine is refused by name."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from recframe.data import load_sample
from recframe.errors import RecframeError

duckdb = pytest.importorskip("duckdb", reason="the engine path needs DuckDB: pip install duckdb")
pytest.importorskip("scipy", reason="the paired t test needs scipy: pip install 'recframe[stats]'")


CONNECTION = duckdb.connect()  # one connection: DuckDB joins relations of one connection only


def relation(frame: pl.DataFrame):
    return CONNECTION.from_arrow(frame.to_arrow())


def per_user() -> pl.DataFrame:
    """Hand-made values with every case: model B one better on every user (equal differences:
    t infinite, p 0), C equal to the baseline (differences all 0: p 1), D with a single user
    (fewer than two pairs: no p-value or interval), E with a null (dropped from its pair), and
    a segment key."""
    a = [0.25, 0.5, 0.75, 1.0]  # binary fractions: the differences below are exact
    rows = {
        "A": a,
        "B": [x + 0.125 for x in a],
        "C": list(a),
        "D": [0.5, None, None, None],
        "E": [0.5, None, 1.0, 0.125],
    }
    return pl.DataFrame(
        {
            "model": [m for m in rows for _ in a],
            "segment": ["x", "x", "y", "y"] * len(rows),
            "user_id": [1, 2, 3, 4] * len(rows),
            "ndcg@10": [v for values in rows.values() for v in values],
        }
    )


@pytest.mark.parametrize("by", ["model", ["model", "segment"]])
def test_the_engine_gives_the_polars_comparison(by):
    frame = per_user()
    want = recframe.compare(frame, by=by, baseline="A", user="user_id", seed=0)
    got = recframe.compare(relation(frame), by=by, baseline="A", user="user_id", seed=0)
    assert isinstance(got, pl.DataFrame)
    assert_frame_equal(got, want, rel_tol=1e-9, abs_tol=1e-12)
    if by == "model":
        rows = {r["model"]: r for r in got.iter_rows(named=True)}
        assert rows["B"]["p_value"] == 0.0 and rows["C"]["p_value"] == 1.0  # equal differences, and all 0
        assert rows["D"]["n_pairs"] == 1 and rows["D"]["p_value"] is None and rows["D"]["delta_lo"] is None
        assert rows["E"]["n_pairs"] == 3 and rows["E"]["n_dropped_baseline"] == 1


def test_compare_recommendations_on_duckdb_equals_polars():
    recs, truth = load_sample()
    options = {"baseline": "popular", "k": [5, 10], "metrics": ["ndcg", "recall", "ap"], "score": "score",
               "relevance": "rating", "threshold": 4}  # fmt: skip
    want = recframe.compare_recommendations(recs, truth=truth, **options)
    got = recframe.compare_recommendations(relation(recs), truth=relation(truth), **options)
    assert_frame_equal(got, want, rel_tol=1e-9, abs_tol=1e-12)


def test_what_needs_the_values_is_refused_by_name():
    recs, truth = load_sample()
    options = {"k": 5, "metrics": ["ndcg"], "score": "score", "relevance": "rating", "threshold": 4}
    with pytest.raises(
        RecframeError, match=r"test='wilcoxon' needs each user's values.*Hint: pass test=\"paired_t\" with baseline="
    ):
        recframe.compare_recommendations(relation(recs), truth=relation(truth), baseline="popular", test="wilcoxon", **options)
    with pytest.raises(RecframeError, match=r"over every pair \(baseline=None\)"):
        recframe.compare_recommendations(relation(recs), truth=relation(truth), **options)
    with pytest.raises(RecframeError, match=r"per_user_frame is a DuckDB frame.*test=\"paired_t\" with baseline="):
        recframe.compare(relation(per_user()), baseline="A", test="randomization", user="user_id")


def test_bad_per_user_frames_are_refused_in_the_engine_too():
    frame = per_user()
    twice = pl.concat([frame, frame.head(1)])
    with pytest.raises(RecframeError, match=r"2 rows that share their \('model', 'user_id'\) values, first model='A', user_id=1"):
        recframe.compare(relation(twice), baseline="A", user="user_id")
    infinite = frame.with_columns(
        pl.when(pl.col("user_id") == 3).then(float("inf")).otherwise(pl.col("ndcg@10")).alias("ndcg@10")
    )
    with pytest.raises(RecframeError, match=r"column 'ndcg@10' of per_user_frame has 5 infinite value\(s\), first user_id=3"):
        recframe.compare(relation(infinite), baseline="A", user="user_id")
    with pytest.raises(RecframeError, match=r"baseline='Z' is not a value of column 'model'"):
        recframe.compare(relation(frame), baseline="Z", user="user_id")


def test_a_null_group_is_refused_in_the_engine():
    """An engine's join never pairs null keys: a segment left null would silently compare none
    of its users, so it is refused, naming the column."""
    frame = per_user().with_columns(pl.when(pl.col("user_id") == 1).then(None).otherwise(pl.col("segment")).alias("segment"))
    with pytest.raises(RecframeError, match=r"column 'segment' of per_user_frame \(by=\) has 5 null value\(s\)"):
        recframe.compare(relation(frame), by=["model", "segment"], baseline="A", user="user_id")


def test_a_null_model_and_an_empty_frame_are_refused_in_the_engine():
    """A null model never equals the baseline nor differs from it in SQL, so its users would be
    left out silently (the engine once ordered the model values and raised a raw TypeError): it
    is refused as a null segment is. An empty per-user frame is refused as Polars refuses it,
    saying it has no row (once a raw IndexError: the engine's check of no rows came back with no
    row)."""
    null_model = (pl.col("user_id") == 1) & (pl.col("model") == "E")
    frame = per_user().with_columns(pl.when(null_model).then(None).otherwise(pl.col("model")).alias("model"))
    with pytest.raises(RecframeError, match=r"column 'model' of per_user_frame \(by=\) has 1 null value\(s\)"):
        recframe.compare(relation(frame), baseline="A", user="user_id")
    empty = per_user().head(0)
    for frame in (empty, relation(empty)):
        with pytest.raises(RecframeError, match=r"per_user_frame has no row to compare, so no model baseline='A'"):
            recframe.compare(frame, baseline="A", user="user_id")
