"""recframe.off_policy's data checks on each of their paths (issue 61, Speed): the checks are
counted in the estimators' own aggregation and refused from it (eager Polars in the call,
lazy Polars at collect, DuckDB in the call), duplicate slots are looked for in the logs before
the join with the rankings, and a ranking placing two items at one logged slot is found by the
joined rows outnumbering the logged rows times the models."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import BACKENDS, to_polars
from recframe.errors import RecframeError
from test_off_policy import LOGS, RECS, SLATES

PATHS = [b for b in ("polars", "polars-lazy", "duckdb") if b in BACKENDS]


def _run(backend: str, logs: pl.DataFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
    """The call on `backend`, its result computed (a lazy frame raises here, at collect)."""
    make = BACKENDS[backend]
    if "recommendations" in kwargs:
        kwargs["recommendations"] = make(kwargs["recommendations"])
    return to_polars(recframe.off_policy(make(logs), *args, **kwargs))


RANKED = dict(recommendations=RECS, by="model", predicted="q", target_predicted="qe")


@pytest.mark.parametrize("backend", PATHS)
def test_a_repeated_slot_is_named_with_the_first_model(backend: str) -> None:
    """(the logs are checked before the join: the slot repeats in every model, A is first)"""
    logs = pl.concat([LOGS, LOGS.filter(pl.col("context_id") == 3)])
    with pytest.raises(RecframeError, match=r"2 rows of one logged slot \(context_id=3, position=1, model='A'\)"):
        _run(backend, logs, **RANKED)


@pytest.mark.parametrize("backend", PATHS)
def test_a_repeated_slot_in_unsorted_logs_is_refused(backend: str) -> None:
    logs = pl.concat([LOGS, LOGS.head(1)]).reverse()
    with pytest.raises(RecframeError, match=r"2 rows of one logged slot \(context_id=1, position=1\)"):
        _run(backend, logs, target="target")


@pytest.mark.parametrize("backend", PATHS)
def test_two_items_at_one_logged_rank_are_refused(backend: str) -> None:
    recs = pl.concat([RECS, RECS.filter(pl.col("model") == "B").head(1).with_columns(item_id=pl.lit("z"))])
    with pytest.raises(RecframeError, match=r"recommendations= place several items at the same rank"):
        _run(backend, LOGS, **{**RANKED, "recommendations": recs})


@pytest.mark.parametrize("backend", PATHS)
def test_two_items_at_a_rank_no_log_reads_are_not_refused(backend: str) -> None:
    """(as before: only a placement the join reads counts; context 9 was not logged)"""
    extra = pl.DataFrame({"model": ["A", "A"], "context_id": [9, 9], "item_id": ["a", "b"], "rank": [1, 1], "qe": [0.1, 0.2]})
    got = _run(backend, LOGS, **{**RANKED, "recommendations": pl.concat([RECS, extra])})
    assert got.filter(pl.col("estimator") == "ips").get_column("value").to_list() == pytest.approx([1.5, 0.0])


@pytest.mark.parametrize("backend", PATHS)
def test_a_defect_is_counted_on_the_joined_rows(backend: str) -> None:
    """A bad propensity in one logged row is in each model's copy of it (2 rows), and a value's
    refusal comes before a repeated slot's."""
    logs = pl.concat([LOGS, LOGS.head(1)]).with_columns(
        propensity=pl.when(pl.col("context_id") == 2).then(0.0).otherwise(pl.col("propensity"))
    )
    with pytest.raises(RecframeError, match=r"column 'propensity' \(the propensity= argument\) holds 0.0 .* in 2 rows"):
        _run(backend, logs, **RANKED)


@pytest.mark.parametrize("backend", PATHS)
def test_slates_are_checked_too(backend: str) -> None:
    with pytest.raises(RecframeError, match=r"2 rows of one logged slot \(context_id=2, position=2\)"):
        _run(backend, pl.concat([SLATES, SLATES.tail(1)]), estimators=["sips", "iips"], target="target")
    with pytest.raises(RecframeError, match=r"column 'target' \(the target= argument\) holds 1.5"):
        _run(backend, SLATES.with_columns(target=pl.lit(1.5)), estimators=["rips"], target="target")
    got = _run(backend, SLATES, estimators=["sips", "iips", "rips"], target="target")
    assert got.get_column("value").to_list() == pytest.approx([4.5, 3.0, 3.5])


def test_a_lazy_frame_is_refused_at_collect_not_at_the_call() -> None:
    out = recframe.off_policy(pl.concat([LOGS, LOGS.head(1)]).lazy(), target="target")
    with pytest.raises(RecframeError, match="2 rows of one logged slot"):
        out.collect()


def test_no_model_no_rows_no_refusal() -> None:
    """(rankings without a row: nothing is estimated, as before, even from repeated slots)"""
    got = recframe.off_policy(pl.concat([LOGS, LOGS.head(1)]), ["ips"], recommendations=RECS.head(0), by="model")
    assert got.height == 0


# -- the join with the rankings: each model on its own (a few plain models, rankings in memory
# or DuckDB) or the models' cross join with the logs (lazy rankings, a null model): the same rows --

DEEPER = pl.concat([RECS, RECS.with_columns(rank=pl.lit(2, dtype=pl.Int64), item_id=pl.lit("b"), qe=pl.lit(0.9))])


@pytest.mark.parametrize(
    "recs", [DEEPER, DEEPER.with_columns(model=pl.col("model").replace({"A": "1", "B": "2"}).cast(pl.Int64))]
)
@pytest.mark.parametrize("position", ["position", None])
def test_each_model_joined_alone_equals_the_cross_join(recs: pl.DataFrame, position: str | None) -> None:
    """(position=None joins on the context alone: a rank below 1 places nothing there)"""
    call = dict(recommendations=recs, by="model", predicted="q", target_predicted="qe", position=position)
    alone = {b: _run(b, LOGS, **call) for b in PATHS if b != "polars-lazy"}
    crossed = _run("polars-lazy", LOGS, **call)
    for got in alone.values():
        assert_frame_equal(got, crossed, check_dtypes=False, check_exact=False, rel_tol=1e-12)
    ips = crossed.filter(pl.col("estimator") == "ips").get_column("value").to_list()
    assert ips == pytest.approx([1.5, 0.0])


@pytest.mark.parametrize("backend", PATHS)
def test_a_null_model_places_nothing(backend: str) -> None:
    """(a null key never matches in a join: as before, its ranking earns nothing)"""
    recs = pl.concat([RECS, RECS.head(2).with_columns(model=pl.lit(None, dtype=pl.String))])
    got = _run(backend, LOGS, ["ips"], **{**RANKED, "recommendations": recs})
    assert got.get_column("model").to_list() == [None, "A", "B"]
    assert got.get_column("value").to_list() == pytest.approx([0.0, 1.5, 0.0])
