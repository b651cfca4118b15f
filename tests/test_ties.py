"""Ties told apart (issue 42, item 1, the bounds): ties="optimistic" and "pessimistic" order the
relevant items first or last within a group of equal scores, so a user sees what the tie-break
alone can do to a number."""

from __future__ import annotations

import math

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import tied_frame, to_polars

# one list: a (0.9, not relevant), then b, c, d tied at 0.5 with c relevant, then e (0.1, relevant)
TIED = pl.DataFrame(
    {
        "user_id": [1] * 5,
        "item_id": ["a", "b", "c", "d", "e"],
        "score": [0.9, 0.5, 0.5, 0.5, 0.1],
        "relevance": [0, 0, 1, 0, 1],
    }
)


@pytest.mark.parametrize(("ties", "position_of_c"), [("item_asc", 3), ("item_desc", 3), ("optimistic", 2), ("pessimistic", 4)])
def test_the_relevant_item_moves_within_its_tie(constructor, ties: str, position_of_c: int) -> None:
    out = to_polars(recframe.per_user(constructor(TIED), k=[2, 3], score="score", ties=ties, metrics=["precision", "rr"]))
    row = out.row(0, named=True)
    assert row["rr@3"] == pytest.approx(1 / position_of_c if position_of_c <= 3 else 0.0)
    assert row["precision@2"] == pytest.approx(1 / 2 if position_of_c <= 2 else 0.0)


def test_with_truth_the_relevance_comes_from_the_truth() -> None:
    recs, truth = TIED.drop("relevance"), TIED.filter(pl.col("relevance") == 1).select("user_id", "item_id", "relevance")
    for ties, want in (("optimistic", 1 / 2), ("pessimistic", 0.0)):
        out = recframe.per_user(recs, truth=truth, k=2, score="score", ties=ties, metrics=["precision"])
        assert out["precision@2"].item() == pytest.approx(want)


def test_the_bounds_hold_and_meet_without_ties() -> None:
    df = tied_frame(11, 600, users=40, items=30, scores=4, grades=3)  # heavy ties
    options = {
        "k": [1, 3, 10],
        "score": "score",
        "by": "model",
        "metrics": ["precision", "recall", "hit_rate", "ndcg", "ap", "rr"],
    }
    high = recframe.summary(df, ties="optimistic", **options)
    middle = recframe.summary(df, ties="item_asc", **options)
    low = recframe.summary(df, ties="pessimistic", **options)
    metrics = [c for c in high.columns if "@" in c]
    for c in metrics:
        assert (high[c] >= middle[c] - 1e-12).all() and (middle[c] >= low[c] - 1e-12).all(), c
    assert any((high[c] > low[c]).any() for c in metrics)
    distinct = df.with_columns(pl.col("score") + pl.int_range(pl.len()) * 1e-6)  # no tie left
    frames = [recframe.summary(distinct, ties=t, **options) for t in ("optimistic", "item_asc", "pessimistic")]
    assert_frame_equal(frames[0], frames[1], rel_tol=1e-12)
    assert_frame_equal(frames[1], frames[2], rel_tol=1e-12)


# ---------------------------------------------------------------------------- positions by score

SCORES = {"a": 0.0, "b": -0.0, "c": 0.5, "d": 0.5, "e": math.inf, "f": -math.inf, "g": None, "h": 0.1}
# the position of each item by score (None: not ranked), worked by hand: -0.0 ties 0.0
SCORE_POSITIONS = [
    ({}, {"e": 1, "c": 2, "d": 3, "h": 4, "a": 5, "b": 6, "f": 7, "g": None}),
    ({"ties": "item_desc"}, {"e": 1, "d": 2, "c": 3, "h": 4, "b": 5, "a": 6, "f": 7, "g": None}),
    ({"score_threshold": 0.0}, {"e": 1, "c": 2, "d": 3, "h": 4, "a": 5, "b": 6, "f": None, "g": None}),
]


def check_score_positions(constructor, cases: int = len(SCORE_POSITIONS)) -> None:
    """One user per item, each with that item alone relevant: rr@8 is 1 / its position (the
    first `cases` option sets)."""
    items = list(SCORES)
    df = pl.DataFrame(
        {
            "user_id": [u for u in items for _ in items],
            "item_id": items * len(items),
            "score": [SCORES[i] for _ in items for i in items],
            "relevance": [float(u == i) for u in items for i in items],
        }
    )
    for options, positions in SCORE_POSITIONS[:cases]:
        out = to_polars(recframe.per_user(constructor(df), k=8, score="score", metrics=["rr"], **options)).sort("user_id")
        want = [0.0 if positions[u] is None else 1 / positions[u] for u in items]
        assert out["rr@8"].to_list() == pytest.approx(want, rel=1e-12), options


def test_positions_by_score_break_ties_by_item_and_skip_what_is_not_eligible(constructor):
    check_score_positions(constructor)


@pytest.mark.parametrize("dtype", [pl.Enum(["b", "a"]), pl.Categorical])
def test_ties_of_enum_or_categorical_items_follow_the_item_names(constructor, dtype):
    # equal scores: ties="item_asc" puts "a" first whatever the category order ("b" before "a")
    df = pl.DataFrame({"user_id": [1, 1], "item_id": ["b", "a"], "score": [1.0, 1.0], "relevance": [0, 1]})
    df = df.with_columns(pl.col("item_id").cast(dtype))
    out = to_polars(recframe.per_user(constructor(df), k=1, score="score", metrics=["rr"]))
    assert out["rr@1"].to_list() == [1.0]
    desc = to_polars(recframe.per_user(constructor(df), k=1, score="score", metrics=["rr"], ties="item_desc"))
    assert desc["rr@1"].to_list() == [0.0]
