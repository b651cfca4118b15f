"""The summary is parts, added, then finished (recframe.statistics._summary): one declaration per aggregate
reaches the one pass, partitions and the SQL engines; the refusals derive from the declarations;
the parts of disjoint sets of users, added, are the parts of their union."""

from __future__ import annotations

from typing import Any

import narwhals as nw
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recframe
from recframe.engine import _call
from recframe.errors import RecframeError
from recframe.statistics import _summary


def _frame(users: int) -> pl.DataFrame:
    rows = [(u, i, i + 1, (u * 7 + i * 3) % 4, "AB"[u % 2]) for u in range(users) for i in range(4)]
    return pl.DataFrame(rows, schema=["user_id", "item_id", "rank", "relevance", "model"], orient="row")


OPTIONS: dict[str, Any] = {"k": 3, "metrics": ["precision", "ndcg"], "by": "model", "threshold": 1}


def test_a_changed_finish_of_the_mean_reaches_one_pass_partitions_and_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    df = _frame(30)
    want = recframe.summary(df, **OPTIONS)
    # the mean's declared finish, doubled: every path finishes through the one declaration
    doubled = _summary.AGGREGATES["mean"]._replace(finish=lambda c, out: nw.col(f"{c}:sum") / nw.col(f"{c}:n") * 2)
    monkeypatch.setitem(_summary.AGGREGATES, "mean", doubled)
    one_pass = recframe.summary(df, **OPTIONS)
    in_sets = recframe.summary(df, partitions=3, **OPTIONS)
    in_duckdb = pl.from_arrow(recframe.summary(duckdb.from_arrow(df.to_arrow()), **OPTIONS).arrow()).sort("model")
    for got in (one_pass, in_sets, in_duckdb):
        for column in ("precision@3", "ndcg@3"):
            assert got[column].to_list() == pytest.approx([2 * x for x in want[column].to_list()], rel=1e-12)


def test_an_aggregate_declared_not_additive_is_refused_with_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    df = _frame(10)
    assert recframe.summary(df, partitions=2, ci=0.9, ci_method="t", **OPTIONS).height == 2
    # the same t, declared as not adding up across sets: partitions= refuses it by the same derivation
    monkeypatch.setitem(_summary.AGGREGATES, "t", _summary.AGGREGATES["t"]._replace(adds_up=False))
    with pytest.raises(RecframeError, match='ci_method="t" resamples the per-user values of all users'):
        recframe.summary(df, partitions=2, ci=0.9, ci_method="t", **OPTIONS)
    assert recframe.summary(df, ci=0.9, ci_method="t", **OPTIONS).height == 2  # (one pass: still given)


def test_an_aggregate_declared_outside_engines_is_refused_in_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    relation = duckdb.from_arrow(_frame(10).to_arrow())
    monkeypatch.setitem(_summary.AGGREGATES, "t", _summary.AGGREGATES["t"]._replace(in_engine=False))
    with pytest.raises(RecframeError, match='ci_method="t" resamples the per-user values in Python.*DuckDB'):
        recframe.summary(relation, ci=0.9, ci_method="t", **OPTIONS)


def _prepared(df: pl.DataFrame) -> tuple[Any, Any]:
    """`df`'s plan and spec for a summary of precision, ndcg and rr at 3 by model."""
    options = {"by": "model", "threshold": 1}
    call = _call.resolve(3, ["precision", "ndcg", "rr"], options, recframe.options.SUMMARY_NAMES, "summary")
    plan, spec, _ = _call.prepare(df, _summary.options(call)[0])
    return plan, spec


def _parts(df: pl.DataFrame, asked: _summary.Asked) -> _summary.SetParts:
    """The parts of `df`'s lists, collected (the rows and the value counts)."""
    plan, spec = _prepared(df)
    own = _summary.parts(plan.per_user, spec, asked)
    values = None if own.values is None else nw.from_native(own.values.to_native().collect().lazy())
    return _summary.SetParts(nw.from_native(own.rows.to_native().collect().lazy()), values)


@settings(max_examples=8, deadline=None)
@given(users=st.integers(2, 12), cut=st.integers(1, 11), seed=st.integers(0, 5))
def test_the_parts_of_two_disjoint_sets_added_are_the_parts_of_their_union(users: int, cut: int, seed: int) -> None:
    df = _frame(users).with_columns(relevance=(pl.col("relevance") + seed) % 4)
    asked = _summary.asked(("mean", "gmean", "median", "p90"), 0.9, "t", 1000, None)
    first, second = df.filter(pl.col("user_id") < cut % users), df.filter(pl.col("user_id") >= cut % users)
    sets = [_parts(part, asked) for part in (first, second) if part.height]
    added = _summary.add(sets, _prepared(df)[1])
    whole = _parts(df, asked)
    keys = ["model"]
    got, want = added.rows.to_native().collect().sort(keys), whole.rows.to_native().collect().sort(keys)
    assert set(got.columns) == set(want.columns)
    for column in want.columns:
        for a, b in zip(got[column].to_list(), want[column].to_list(), strict=True):
            assert a == (b if not isinstance(b, float) else pytest.approx(b, rel=1e-12, abs=1e-12)), column
    value_keys = [*keys, "__rf_metric", "__rf_value"]
    assert added.values is not None and whole.values is not None
    counted, counted_whole = added.values.to_native().collect(), whole.values.to_native().collect()
    assert counted.sort(value_keys).equals(counted_whole.select(counted.columns).sort(value_keys))
