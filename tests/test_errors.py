"""Bad input fails early with a message naming the argument or column, the value and a fix."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pytest

import recframe
from recframe import RecframeError


def frame(**overrides) -> pl.DataFrame:
    data = {
        "user_id": [1, 1, 1, 2, 2],
        "item_id": [10, 11, 12, 10, 13],
        "rank": [1, 2, None, 1, 2],
        "relevance": [1.0, 0.0, 2.0, None, 1.0],
    }
    data.update(overrides)
    return pl.DataFrame(data)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"k": 0}, r"k=0 must be >= 1"),
        ({"k": -3}, r"k=-3 must be >= 1"),
        ({"k": 2.5}, r"k=2.5 is not an int"),
        ({"k": True}, r"k=True is not an int"),
        ({"k": []}, r"k=\[\] is empty"),
        ({"k": [5, "10"]}, r"k='10' is not an int"),
        ({"metrics": ["ndgc"]}, r"unknown metric 'ndgc'.*did you mean \"ndcg\""),
        ({"metrics": []}, r"metrics=\[\] is empty"),
        ({"precision_denominator": "recommended"}, r"precision_denominator='recommended'.*\"k\", \"retrieved\""),
        ({"ap_denominator": "R"}, r"ap_denominator='R'"),
        ({"gain": "exp"}, r"gain='exp'.*\"linear\""),
        ({"empty_users": "drop"}, r"empty_users='drop'.*\"skip\""),
        ({"threshold": "4"}, r"threshold='4' is not a finite number"),
        ({"threshold": math.nan}, r"threshold=nan is not a finite number"),
        ({"threshold": 0}, r"threshold=0 .*gain=\"binary\""),
        ({"score_threshold": 2.0}, r"score_threshold=2.0 needs score="),
        ({"by": "user_id"}, r"by='user_id' repeats the column 'user_id'"),
        ({"rank": None}, r"rank=None and score=None"),
        # a column without a name: narwhals cannot group Polars by it
        ({"by": ""}, r"by='' names a column with an empty name.*Hint: rename the column first"),
        ({"by": ["rank_group", ""]}, r"by=\['rank_group', ''\] names a column with an empty name"),
        ({"item": ""}, r"item='' names a column with an empty name"),
        # the options are read through **options: a misspelled one is named, with the fix
        ({"thresold": 4}, r"per_user\(\) has no option 'thresold'. Hint: did you mean threshold=4\?"),
        ({"gain_treshold": 1}, r"has no option 'gain_treshold'.*did you mean gain_threshold=1"),
    ],
)
def test_bad_arguments(kwargs, pattern):
    with pytest.raises(RecframeError, match=pattern):
        recframe.per_user(frame(), **kwargs)


def test_numpy_int_k_is_accepted():
    out = recframe.per_user(frame(), k=np.int64(2), metrics=["precision"])
    assert out.columns == ["user_id", "n_relevant", "precision@2"]


def test_missing_column_lists_columns_and_suggests():
    df = frame().rename({"relevance": "rating"})
    with pytest.raises(
        RecframeError,
        match=r"column 'relevance' \(the relevance= argument\) is not in the frame\. "
        r"Columns there: user_id, item_id, rank, rating\. Hint: pass relevance=\"rating\"",
    ):
        recframe.per_user(df)


def test_a_missing_number_column_is_offered_only_columns_of_numbers():
    """The one column left is the model's name: never offered for relevance=, score= or rank=."""
    df = pl.DataFrame({"model": ["a"], "user_id": [1], "item_id": [1], "score": [0.5]})
    with pytest.raises(
        RecframeError, match=r"Hint: pass relevance= a column of numbers, or truth= with the relevance\.$"
    ) as caught:
        recframe.per_user(df, 5, score="score", relevance="rating", by="model")
    assert 'relevance="model"' not in str(caught.value)
    with pytest.raises(RecframeError, match=r"Hint: pass rank=\"position\"\."):
        recframe.per_user(df.with_columns(position=pl.lit(1)), 5, rank="pos", relevance="score", by="model")


def test_missing_user_column_mentions_user_none():
    with pytest.raises(RecframeError, match=r"user=None"):
        recframe.per_user(frame().drop("user_id"))


def test_missing_by_column():
    with pytest.raises(RecframeError, match=r"column 'model' \(the by= argument\)"):
        recframe.summary(frame(), by="model")


def test_non_numeric_relevance_and_score():
    with pytest.raises(RecframeError, match=r"column 'relevance' \(relevance=\) holds String, not numbers"):
        recframe.per_user(frame(relevance=["a", "b", "c", "d", "e"]))
    with pytest.raises(RecframeError, match=r"column 'score' \(score=\) holds String"):
        recframe.per_user(frame().with_columns(score=pl.lit("x")), score="score")


def test_boolean_relevance_is_a_label():
    out = recframe.per_user(frame(relevance=[True, False, True, False, True]), k=2, metrics=["recall"])
    assert out["recall@2"].to_list() == [1 / 2, 1 / 1]


@pytest.mark.parametrize(
    ("df", "pattern"),
    [
        (
            frame(item_id=[10, 10, 12, 10, 13]),
            r"duplicate \(user_id, item_id\) rows: user_id=1 has 3 rows but 2 distinct 'item_id' values; 1 list\(s\) affected, 1 extra row",
        ),
        (frame(rank=[1, 1, None, 1, 2]), r"duplicate ranks in column 'rank': user_id=1"),
        (frame(rank=[0, 1, None, 1, 2]), r"rank 0 < 1 at user_id=1"),
        (frame(user_id=[1, 1, None, 2, None]), r"column 'user_id' has 2 null value\(s\)"),
        (frame(item_id=[10, None, 12, 10, 13]), r"column 'item_id' \(item=\) has 1 null value"),
        (
            frame(relevance=[1.0, math.nan, 2.0, None, 1.0]),
            r"column 'relevance' \(relevance=\) has 1 NaN or infinite value\(s\), first at user_id=1",
        ),
        (frame(relevance=[1.0, math.inf, 2.0, None, 1.0]), r"NaN or infinite"),
        (frame(rank=[1.0, 2.5, None, 1.0, 2.0]), r"column 'rank' \(rank=\) has 1 value\(s\) that are not whole numbers"),
    ],
)
def test_bad_data(df, pattern):
    with pytest.raises(RecframeError, match=pattern):
        recframe.per_user(df)
    # on a LazyFrame the same check runs when the result is collected
    lazy = recframe.summary(df.lazy())
    for engine in ("streaming", "in-memory"):
        with pytest.raises(RecframeError, match=pattern):
            lazy.collect(engine=engine)


def test_duplicates_name_the_first_offender_in_key_order_and_the_count():
    df = frame(user_id=[3, 3, 2, 2, 2], item_id=[5, 5, 7, 7, 8], rank=[1, 2, 1, 2, 3])
    with pytest.raises(RecframeError, match=r"user_id=2 has 3 rows.*2 list\(s\) affected, 2 extra row"):
        recframe.per_user(df)


def test_check_duplicates_false_skips_only_the_duplicate_checks():
    dup = frame(item_id=[10, 10, 12, 10, 13])
    assert recframe.per_user(dup, check_duplicates=False).height == 2
    with pytest.raises(RecframeError, match=r"rank 0 < 1"):
        recframe.per_user(frame(rank=[0, 1, None, 1, 2]), check_duplicates=False)
    with pytest.raises(RecframeError, match=r"check_duplicates='no' must be True or False"):
        recframe.per_user(frame(), check_duplicates="no")


def test_nan_score_is_an_error():
    df = frame().with_columns(score=pl.Series([0.5, math.nan, 0.1, 0.2, 0.3]))
    with pytest.raises(RecframeError, match=r"column 'score' \(score=\) has 1 NaN"):
        recframe.per_user(df, score="score")


def test_null_by_key_is_an_error():
    df = frame().with_columns(model=pl.Series(["A", "A", None, "B", "B"]))
    with pytest.raises(RecframeError, match=r"column 'model' has 1 null value"):
        recframe.summary(df, by="model")


def test_empty_users_error():
    df = frame(relevance=[1.0, 0.0, 2.0, None, 0.0])
    with pytest.raises(RecframeError, match=r'empty_users="error": user_id=2 has no relevant item'):
        recframe.per_user(df, empty_users="error")


def test_truth_duplicates_are_reported_as_such():
    recs = frame().drop("relevance")
    truth = pl.DataFrame({"user_id": [1, 1], "item_id": [10, 10], "relevance": [1.0, 2.0]})
    with pytest.raises(RecframeError, match=r"duplicate .* in the frame joined from the recommendations and truth="):
        recframe.per_user(recs, truth=truth)


def test_truth_with_relevance_in_recs_is_ambiguous():
    with pytest.raises(RecframeError, match=r"the recommendations frame has a column 'relevance'"):
        recframe.per_user(frame(), truth=frame().select("user_id", "item_id", "relevance"))


def test_truth_missing_column():
    with pytest.raises(RecframeError, match=r"column 'relevance' \(the relevance= argument\) is not in the truth frame"):
        recframe.per_user(frame().drop("relevance"), truth=frame().select("user_id", "item_id"))


def test_unsupported_frame_type():
    with pytest.raises(RecframeError, match=r"frame is a builtins.dict"):
        recframe.per_user({"user_id": [1]})


def test_pandas_errors_are_the_same():
    df = frame(item_id=[10, 10, 12, 10, 13]).to_pandas()
    with pytest.raises(RecframeError, match=r"duplicate \(user_id, item_id\)"):
        df.recmetrics.per_user()


def test_pandas_nan_relevance_means_missing():
    # pandas' own missing value in a float column is NaN: recframe reads it as null, not an error
    df = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2], "relevance": [np.nan, 1.0]})
    assert df.recmetrics.per_user(k=2, metrics=["recall"])["recall@2"].tolist() == [1.0]


def test_errors_are_value_errors():
    assert issubclass(RecframeError, ValueError)
