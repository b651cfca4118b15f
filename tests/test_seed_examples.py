"""Hand-worked examples from the articles in ../shared/seeds, on every input type.

Expected values are written as the hand calculation.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import recframe
from conftest import to_polars

log2 = math.log2


def one_list(items: list[str], relevant: dict[str, float], *, user: str = "u") -> pl.DataFrame:
    """A long frame for one user: `items` in rank order plus unrecommended relevant items."""
    rows = [{"user_id": user, "item_id": it, "rank": pos, "relevance": relevant.get(it)} for pos, it in enumerate(items, 1)]
    rows += [{"user_id": user, "item_id": it, "rank": None, "relevance": rel} for it, rel in relevant.items() if it not in items]
    return pl.DataFrame(rows, schema={"user_id": pl.String, "item_id": pl.String, "rank": pl.Int64, "relevance": pl.Float64})


def values(result) -> dict:
    return to_polars(result).row(0, named=True)


# Seed 000 (Shaped): the test set holds Terminator, James Bond, Iron Man and 3 unrelated movies.
HELD_OUT = {"terminator": 1, "james_bond": 1, "iron_man": 1, "other1": 1, "other2": 1, "other3": 1}
LIST_A = ["terminator", "james_bond", "love_actually"]
LIST_B = ["cars", "toy_story", "iron_man"]


def test_precision_recall_at_3_lists_a_and_b(constructor):
    df = pl.concat(
        [
            one_list(LIST_A, HELD_OUT).with_columns(model=pl.lit("A")),
            one_list(LIST_B, HELD_OUT).with_columns(model=pl.lit("B")),
        ]
    )
    out = to_polars(recframe.per_user(constructor(df), k=3, metrics=["precision", "recall"], by="model"))
    assert out["precision@3"].to_list() == pytest.approx([2 / 3, 1 / 3])
    assert out["recall@3"].to_list() == pytest.approx([2 / 6, 1 / 6])
    assert out["n_relevant"].to_list() == [6, 6]


def test_r_precision_perfect_list_with_two_relevant(constructor):
    # a user who watched only 2 movies; a perfect system: R-precision = 2/2, precision@3 capped at 2/3
    df = one_list(["a", "b", "c"], {"a": 1, "b": 1})
    got = values(recframe.per_user(constructor(df), k=3, metrics=["precision", "r_precision"]))
    assert got["r_precision"] == 2 / 2
    assert got["r_precision@3"] == 2 / 2  # s = min(3, 2) = 2
    assert got["precision@3"] == pytest.approx(2 / 3)


def test_capped_r_precision_is_precision_when_r_exceeds_k(constructor):
    # R = 6 > k = 3: r_precision@3 = hits in top 3 / 3 = precision@3; bare R-precision uses the top 6
    df = one_list(["terminator", "x", "james_bond", "iron_man", "y", "z"], HELD_OUT)
    got = values(recframe.per_user(constructor(df), k=3, metrics=["precision", "r_precision"]))
    assert got["r_precision@3"] == pytest.approx(2 / 3) == got["precision@3"]
    assert got["r_precision"] == pytest.approx(3 / 6)


def test_recall_and_precision_at_k_with_eight_relevant(constructor):
    # Seed 002 (Evidently-style example): 8 relevant items; 3 in the top 5, 5 in the top 8 and 10
    items = [f"i{n}" for n in range(1, 11)]
    relevant = {"i1": 1, "i3": 1, "i5": 1, "i7": 1, "i8": 1, "x1": 1, "x2": 1, "x3": 1}
    got = values(recframe.per_user(constructor(one_list(items, relevant)), k=[5, 8, 10], metrics=["precision", "recall"]))
    assert got["recall@10"] == 5 / 8
    assert got["recall@8"] == 5 / 8
    assert got["recall@5"] == 3 / 8
    assert got["precision@10"] == 5 / 10
    assert got["precision@5"] == 3 / 5


def test_mrr_example_and_mrr_at_5(constructor):
    # first relevant item at positions 1, 3, 6 and 2 for four users
    frames = []
    for user, first in (("u1", 1), ("u2", 3), ("u3", 6), ("u4", 2)):
        items = [f"i{n}" for n in range(1, 8)]
        frames.append(one_list(items, {f"i{first}": 1}, user=user))
    df = pl.concat(frames)
    got = values(recframe.summary(constructor(df), k=[5, 10], metrics=["rr"]))
    assert got["rr@10"] == pytest.approx((1 + 1 / 3 + 1 / 6 + 1 / 2) / 4) == pytest.approx(0.5)
    assert got["rr@5"] == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4)
    assert got["n_users"] == 4


def test_dcg_of_binary_list(constructor):
    # relevance of the list [1, 0, 1, 0, 1]; and DCG@3 of [1, 1, 0, 0, 1]
    df1 = one_list(["a", "b", "c", "d", "e"], {"a": 1, "c": 1, "e": 1})
    got = values(recframe.per_user(constructor(df1), k=[3, 5], metrics=["dcg", "ndcg"]))
    assert got["dcg@5"] == pytest.approx(1 / log2(2) + 1 / log2(4) + 1 / log2(6))
    ideal5 = 1 / log2(2) + 1 / log2(3) + 1 / log2(4)
    assert got["ndcg@5"] == pytest.approx((1 / log2(2) + 1 / log2(4) + 1 / log2(6)) / ideal5)
    df2 = one_list(["a", "b", "c", "d", "e"], {"a": 1, "b": 1, "e": 1})
    got2 = values(recframe.per_user(constructor(df2), k=3, metrics=["dcg"]))
    assert got2["dcg@3"] == pytest.approx(1 / log2(2) + 1 / log2(3))
    assert got2["dcg@3"] > got["dcg@3"]  # the relevant item moved up one rank


def test_graded_ndcg_uses_ideal_order_of_grades(constructor):
    # grades 3 at rank 2 and 1 at rank 1; ideal puts the 3 first
    df = one_list(["a", "b", "c"], {"a": 1, "b": 3})
    got = values(recframe.per_user(constructor(df), k=3, metrics=["dcg", "ndcg"]))
    assert got["dcg@3"] == pytest.approx(1 / log2(2) + 3 / log2(3))
    assert got["ndcg@3"] == pytest.approx((1 + 3 / log2(3)) / (3 + 1 / log2(3)))
    exp2 = values(recframe.per_user(constructor(df), k=3, metrics=["dcg"], gain="exp2"))
    assert exp2["dcg@3"] == pytest.approx(1 + 7 / log2(3))


def test_average_precision_system_a_vs_b(constructor):
    # Seed 003: relevant items {2, 6}; A = [6, 2, 1, 0, 3], B = [4, 1, 7, 2, 6]
    relevant = {"2": 1, "6": 1}
    df = pl.concat(
        [
            one_list(["6", "2", "1", "0", "3"], relevant, user="A"),
            one_list(["4", "1", "7", "2", "6"], relevant, user="B"),
        ]
    )
    out = to_polars(recframe.per_user(constructor(df), k=5, metrics=["precision", "recall", "ap"]))
    assert out["precision@5"].to_list() == pytest.approx([2 / 5, 2 / 5])  # precision cannot tell them apart
    assert out["recall@5"].to_list() == pytest.approx([1.0, 1.0])
    assert out["ap@5"].to_list() == pytest.approx([(1 / 1 + 2 / 2) / 2, (1 / 4 + 2 / 5) / 2])


def attard_frame():
    """A frame matching seed 004 (Attard): one user's actual and predicted ratings on 0-4.

    20 movies with both ratings plus 3 with a missing rating (removed by dropna). Sorted by
    predicted rating, the top 12 are predicted >= 2; 11 movies are actually rated >= 2: 2 of
    them in the top 3, 8 in the top 10, 10 in the top 15 (12 predicted >= 2 there) and one
    predicted too low to be recommended at all.
    """
    import numpy as np
    import pandas as pd

    predicted = [4.0, 3.9, 3.8, 3.6, 3.5, 3.3, 3.1, 3.0, 2.8, 2.7, 2.4, 2.1, 1.9, 1.6, 1.4, 1.2, 1.0, 0.8, 0.5, 0.2]
    actual = [3.5, 1.0, 2.5, 3.0, 2.0, 4.0, 2.2, 3.1, 1.5, 2.6, 3.3, 2.9, 0.5, 1.0, 0.0, 2.4, 1.0, 0.3, 1.1, 0.9]
    df = pd.DataFrame({"movie": [f"m{n:02d}" for n in range(20)], "y_actual": actual, "y_recommended": predicted})
    missing = pd.DataFrame(
        {"movie": ["m20", "m21", "m22"], "y_actual": [3.0, np.nan, 2.0], "y_recommended": [np.nan, 3.0, np.nan]}
    )
    return pd.concat([df, missing], ignore_index=True)


def test_attard_precision_recall_with_retrieved_denominator():
    df = attard_frame().dropna()
    out = df.recmetrics.per_user(
        k=[3, 10, 15],
        metrics=["precision", "recall"],
        user=None,
        item="movie",
        score="y_recommended",
        relevance="y_actual",
        threshold=2.0,
        score_threshold=2.0,
        precision_denominator="retrieved",
    )
    got = out.iloc[0]
    assert (round(got["precision@3"], 2), round(got["recall@3"], 2)) == (0.67, 0.18)
    assert (round(got["precision@10"], 2), round(got["recall@10"], 2)) == (0.80, 0.73)
    assert (round(got["precision@15"], 2), round(got["recall@15"], 2)) == (0.83, 0.91)
    # exactly: 2/3, 2/11; 8/10, 8/11; 10/12, 10/11
    assert got["precision@15"] == pytest.approx(10 / 12) and got["recall@15"] == pytest.approx(10 / 11)
    assert got["n_relevant"] == 11


@pytest.mark.parametrize(
    ("ap_denominator", "expected"),
    [
        # hits at ranks 1 and 3 of the top 4; R = 5 (three relevant items never recommended)
        ("min_k_relevant", (1 / 1 + 2 / 3) / min(4, 5)),
        ("relevant", (1 / 1 + 2 / 3) / 5),
        ("hits", (1 / 1 + 2 / 3) / 2),
        ("k", (1 / 1 + 2 / 3) / 4),
    ],
)
def test_ap_denominators_by_hand(constructor, ap_denominator, expected):
    df = one_list(["a", "b", "c", "d", "e"], {"a": 1, "c": 1, "x": 1, "y": 1, "z": 1})
    got = values(recframe.per_user(constructor(df), k=4, metrics=["ap"], ap_denominator=ap_denominator))
    assert got["ap@4"] == pytest.approx(expected)


def test_binary_gain_ignores_grades(constructor):
    df = one_list(["a", "b", "c"], {"a": 1, "b": 3})
    got = values(recframe.per_user(constructor(df), k=3, metrics=["dcg", "ndcg"], gain="binary"))
    assert got["dcg@3"] == pytest.approx(1 / log2(2) + 1 / log2(3))
    assert got["ndcg@3"] == pytest.approx(1.0)


def test_threshold_cuts_graded_relevance(constructor):
    # grades 4, 1, 5 with threshold 4: b is not relevant, so it gains nothing and is no hit
    df = one_list(["a", "b", "c"], {"a": 4, "b": 1, "c": 5})
    got = values(recframe.per_user(constructor(df), k=3, metrics=["precision", "dcg"], threshold=4))
    assert got["n_relevant"] == 2
    assert got["precision@3"] == pytest.approx(2 / 3)
    assert got["dcg@3"] == pytest.approx(4 / log2(2) + 5 / log2(4))
