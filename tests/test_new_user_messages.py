"""What a new user meets: messages that name the fix in the caller's words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import recframe
from conftest import to_polars

# two models' lists in one frame, as a new user passes it without by="model"
TWO_MODELS = pl.DataFrame(
    {
        "model": ["a", "a", "b", "b"],
        "user_id": [1, 1, 1, 1],
        "item_id": [1, 2, 1, 2],
        "rank": [1, 2, 1, 2],
        "relevance": [1, 0, 0, 1],
    }
)


def _message(call: Callable[[], Any]) -> str:
    with pytest.raises(recframe.RecframeError) as caught:
        to_polars(call())
    return str(caught.value)


# ---------------------------------------------------------------------------- item 16


def test_duplicates_that_differ_in_a_model_column_name_it(constructor_or_ibis: Callable[[pl.DataFrame], Any]) -> None:
    text = _message(lambda: recframe.summary(constructor_or_ibis(TWO_MODELS), k=2))
    assert "duplicate (user_id, item_id) rows: user_id=1 has 4 rows but 2 distinct 'item_id' values" in text
    assert "Its rows of an item differ in column 'model', which the call does not group by." in text
    assert 'Hint: did you mean by="model"?' in text and "df.unique" not in text


def test_the_key_named_is_added_to_the_by_keys_given(constructor: Callable[[pl.DataFrame], Any]) -> None:
    frame = TWO_MODELS.with_columns(segment=pl.lit("x"))
    text = _message(lambda: recframe.summary(constructor(frame), k=2, by="segment"))
    assert 'did you mean by=["segment", "model"]?' in text
    # a whole-number key (a fold) is named too; a float column (a score) is not a key
    folds = TWO_MODELS.with_columns(fold=pl.Series([1, 1, 2, 2]), p=pl.Series([0.1, 0.2, 0.3, 0.4])).drop("model")
    assert 'did you mean by="fold"?' in _message(lambda: recframe.summary(constructor(folds), k=2))


def test_true_duplicates_keep_the_hint_to_keep_one_row(constructor: Callable[[pl.DataFrame], Any]) -> None:
    frame = pl.concat([TWO_MODELS.filter(pl.col("model") == "a")] * 2).with_columns(p=pl.Series([0.1, 0.2, 0.3, 0.4]))
    text = _message(lambda: recframe.summary(constructor(frame), k=2))
    assert "did you mean" not in text and "Hint: keep one row per item, e.g. df.unique(subset=[...])" in text


def test_following_the_hint_evaluates_each_model() -> None:
    out = recframe.summary(TWO_MODELS, k=2, by="model", metrics=["precision"]).sort("model")
    assert out["precision@2"].to_list() == [0.5, 0.5]  # each model: one relevant item of 2


# ---------------------------------------------------------------------------- item 17

SCORED = pl.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "score": [0.9, 0.8], "relevance": [1, 0]})


def test_a_scored_frame_without_rank_is_told_to_pass_score(constructor_or_ibis: Callable[[pl.DataFrame], Any]) -> None:
    """The hint was rank="score", which then failed ("not whole numbers ... pass score=")."""
    text = _message(lambda: recframe.summary(constructor_or_ibis(SCORED), k=2))
    assert text.endswith('Hint: pass score="score" to rank by that score, highest first.'), text
    # following the hint evaluates: item 1 (relevant) ranks first, precision@1 = 1
    out = to_polars(recframe.summary(constructor_or_ibis(SCORED), k=1, score="score", metrics=["precision"]))
    assert out["precision@1"].to_list() == [1.0]


def test_a_column_of_positions_beside_the_scores_is_offered_second(constructor: Callable[[pl.DataFrame], Any]) -> None:
    frame = SCORED.with_columns(rnk=pl.Series([1, 2])).rename({"score": "pred"})
    text = _message(lambda: recframe.summary(constructor(frame), k=2))
    assert text.endswith(
        'Hint: pass score="pred" to rank by that score, highest first, or rank="rnk" if it holds the positions 1, 2, 3.'
    )
