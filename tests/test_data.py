"""The bundled workflow dataset: its shape, the time split, a realistic skew, and that the
documented script regenerates exactly the shipped frames."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from recframe.data import load_sample, load_workflow
from recframe.data.make_workflow import make


def test_frames_and_dtypes():
    data = load_workflow()
    assert (
        data.train.schema
        == data.test.schema
        == pl.Schema({"user_id": pl.Int64, "item_id": pl.Int64, "rating": pl.Int64, "timestamp": pl.Int64})
    )
    assert data.users.columns == ["user_id", "cohort", "signup"] and data.users["user_id"].is_unique().all()
    assert data.items.columns == ["item_id", "category"] and data.items["item_id"].is_unique().all()
    assert data.items["category"].n_unique() == 15
    assert sorted(data.users["cohort"].unique()) == ["2023-H1", "2023-H2", "2024-H1", "2024-H2"]
    for log in (data.train, data.test):
        assert log["rating"].is_between(1, 5).all()
        assert log["item_id"].is_in(data.items["item_id"].implode()).all()
        assert log["user_id"].is_in(data.users["user_id"].implode()).all()
    assert isinstance(load_workflow("pandas").train, __import__("pandas").DataFrame)
    with pytest.raises(recframe.RecframeError, match="kind='arrow'"):
        load_workflow("arrow")  # type: ignore[arg-type]
    with pytest.raises(recframe.RecframeError, match="kind='arrow'"):
        load_sample("arrow")  # type: ignore[arg-type]


def test_split_by_time_with_cold_users_and_no_repeated_pair():
    train, test, _, _ = load_workflow()
    assert train["timestamp"].max() < test["timestamp"].min()
    assert 0.75 < train.height / (train.height + test.height) < 0.85
    assert train.join(test, on=["user_id", "item_id"]).height == 0  # a user rates an item once
    without_history = test.select("user_id").unique().join(train.select("user_id").unique(), on="user_id", how="anti")
    assert without_history.height > 50  # cold users: test interactions, no training ones


def test_popularity_is_skewed():
    train = load_workflow().train
    counts = train.group_by("item_id").len().sort("len", descending=True)["len"]
    assert counts.head(len(counts) // 10).sum() / counts.sum() > 0.4  # the top 10% hold > 40%


def test_the_script_regenerates_the_shipped_frames():
    shipped = load_workflow()
    for name, frame in make().items():
        assert_frame_equal(frame, getattr(shipped, name))
