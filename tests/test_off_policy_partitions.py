"""recframe.off_policy(partitions=N) (issue 61, "memory bounded with partitions= like the
summaries"): the contexts split into N sets by a hash of their id, each set's parts summed by
Polars' streaming engine, added, finished once: the numbers of one pass. What cannot add up is
refused by its declaration."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recframe
from conftest import BACKENDS, assert_values_close, to_polars
from recframe.errors import RecframeError
from recframe.statistics import _off_policy as op
from test_off_policy import ALL, DIRECT, SETTINGS, _random_logs

NUMBERS = ("value", "se", "lo", "hi", "n", "on_policy", "lift", "ess", "largest_weight", "supported")


def _random_slates(seed: int, slates: int, positions: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    size = slates * positions
    return pl.DataFrame(
        {
            "g": np.repeat(rng.integers(0, 2, slates), positions),
            "context_id": np.repeat(rng.permutation(slates), positions),
            "position": np.tile(np.arange(1, positions + 1), slates),
            "propensity": rng.uniform(0.1, 1, size),
            "reward": rng.integers(0, 2, size).astype(float),
            "target": np.where(rng.random(size) < 0.2, 0.0, rng.random(size)),
        }
    )


def _same(got: Any, want: Any) -> None:
    """Every column equal: keys and names exactly, numbers to 1e-12 (the sums added in another
    order; an se from sums loses digits to cancellation: compared relative to its scale)."""
    got, want = to_polars(got), to_polars(want)
    assert got.columns == want.columns and got.height == want.height
    for column in got.columns:
        if column not in NUMBERS:
            assert got[column].to_list() == want[column].to_list(), column
    for column in NUMBERS:
        assert_values_close(got[column].to_list(), want[column].to_list(), rel=1e-12, abs=1e-12, label=column)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**31), groups=st.integers(1, 3), partitions=st.integers(1, 6))
def test_single_slot_partitions_equal_one_pass(n: int, seed: int, groups: int, partitions: int) -> None:
    logs = _random_logs(seed, n, groups, shuffled=True)
    one = recframe.off_policy(logs, ALL, **DIRECT, position=None, by="g", **SETTINGS)
    _same(recframe.off_policy(logs, ALL, **DIRECT, position=None, by="g", **SETTINGS, partitions=partitions), one)
    alone = recframe.off_policy(logs, ["ips", "snips"], target="target", position=None)
    _same(recframe.off_policy(logs, ["ips", "snips"], target="target", position=None, partitions=partitions), alone)


@settings(max_examples=15, deadline=None)
@given(slates=st.integers(1, 20), positions=st.integers(1, 4), seed=st.integers(0, 2**31), partitions=st.integers(1, 5))
def test_slate_partitions_equal_one_pass(slates: int, positions: int, seed: int, partitions: int) -> None:
    logs = _random_slates(seed, slates, positions)
    one = recframe.off_policy(logs, ["sips", "iips", "rips"], target="target", by="g")
    _same(recframe.off_policy(logs, ["sips", "iips", "rips"], target="target", by="g", partitions=partitions), one)


@pytest.mark.parametrize("backend", ["polars", "polars-lazy", "pandas"])
def test_rankings_by_model_in_sets(backend: str) -> None:
    rng = np.random.default_rng(2)
    n = 50
    shown = rng.integers(0, 3, n)
    logs = pl.DataFrame({"context_id": np.arange(n), "item_id": shown, "position": np.ones(n, dtype=np.int64),
                         "propensity": rng.uniform(0.2, 1, n), "reward": rng.integers(0, 2, n).astype(float)})  # fmt: skip
    recs = pl.DataFrame({"model": np.repeat(["A", "B"], n), "context_id": np.tile(np.arange(n), 2),
                         "item_id": rng.integers(0, 3, 2 * n), "rank": np.ones(2 * n, dtype=np.int64)})  # fmt: skip
    make = BACKENDS[backend]
    one = recframe.off_policy(logs, ["ips", "snips"], recommendations=recs, by="model")
    got = recframe.off_policy(make(logs), ["ips", "snips"], recommendations=make(recs), by="model", partitions=4)
    assert type(got) is type(make(logs))
    _same(got, one)


def test_more_sets_than_contexts_are_capped() -> None:
    logs = _random_logs(1, 12, 2, shuffled=True)
    one = recframe.off_policy(logs, ALL, **DIRECT, position=None, by="g", **SETTINGS)
    _same(recframe.off_policy(logs, ALL, **DIRECT, position=None, by="g", **SETTINGS, partitions=2**70), one)


def test_a_bad_row_is_still_refused_in_its_set() -> None:
    logs = _random_logs(1, 30, 2, shuffled=True).with_columns(
        propensity=pl.when(pl.col("context_id") == 17).then(0.0).otherwise(pl.col("propensity"))
    )
    with pytest.raises(RecframeError, match=r"column 'propensity'.*outside \(0, 1\]"):
        recframe.off_policy(logs, ["ips"], target="target", position=None, partitions=3)
    twice = pl.concat([logs.head(3), logs.head(1)]).with_columns(propensity=pl.lit(0.5))
    with pytest.raises(RecframeError, match=r"rows of one logged slot"):
        recframe.off_policy(twice, ["ips"], target="target", position=None, partitions=2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(partitions=0), r"partitions=0 is not a whole number of at least 1"),
        (dict(partitions=2.5), r"partitions=2.5 is not a whole number"),
        (dict(partitions=2, ci_method="poisson"), r'ci_method="poisson" resamples every context at once.*partitions='),
        (dict(partitions=2, per_context=True), r"per_context=True gives a row per context.*partitions="),
    ],
)
def test_what_cannot_add_up_is_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(RecframeError, match=match):
        recframe.off_policy(_random_logs(1, 10, 1, shuffled=True), ["ips"], target="target", position=None, **kwargs)


def test_an_estimator_declared_not_to_add_up_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(op.ESTIMATORS, "snips", dataclasses.replace(op.ESTIMATORS["snips"], adds_up=False))
    with pytest.raises(RecframeError, match=r"the estimator 'snips' does not add up.*leave 'snips' out"):
        recframe.off_policy(_random_logs(1, 10, 1, shuffled=True), ["ips", "snips"], target="target", position=None, partitions=2)
    # one pass still estimates it
    assert recframe.off_policy(_random_logs(1, 10, 1, shuffled=True), ["snips"], target="target", position=None).height == 1


def test_a_sql_engine_is_refused() -> None:
    duckdb = pytest.importorskip("duckdb")
    logs = duckdb.from_arrow(_random_logs(1, 10, 1, shuffled=True).to_arrow())
    with pytest.raises(RecframeError, match=r"partitions=.*in Polars, and the logs are a (duckdb|DuckDB) frame"):
        recframe.off_policy(logs, ["ips"], target="target", position=None, partitions=2)
