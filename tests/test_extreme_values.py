"""Numbers at the edges give the right number or a RecframeError, on every backend: a k past
every list or past 64 bits, the ideal DCG of a huge k, grades whose gain overflows, and ranks
and scores of every numeric dtype and beyond its range."""

from __future__ import annotations

import math
import sys

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import to_polars
from recframe.metrics._registry import ideal_dcg_of_ones

# u1: a at 1 (relevant), b at 2, c relevant but not recommended: R = 2
FRAME = pl.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "rank": [1, 2, None], "relevance": [1, 0, 1]})
METRICS = ["precision", "recall", "hit_rate", "r_precision", "ap", "rr", "dcg", "ndcg"]


@pytest.mark.parametrize("k", [2**62, sys.maxsize])
def test_huge_k_is_the_whole_list(constructor, k):
    """k past every list: the same hits as k = 3 (recall 1/2, not 1: item c was never
    recommended); precision and AP's "k" denominators divide by k itself."""
    got = to_polars(recframe.per_user(constructor(FRAME), k=k, metrics=METRICS))
    row = got.row(0, named=True)
    assert row[f"recall@{k}"] == 1 / 2
    assert row[f"precision@{k}"] == pytest.approx(1 / k, rel=1e-15)
    assert (row[f"hit_rate@{k}"], row[f"ap@{k}"], row[f"rr@{k}"]) == (1.0, 1 / 2, 1.0)
    ideal = 1 + 1 / math.log2(3)
    assert row[f"ndcg@{k}"] == pytest.approx(1 / ideal, rel=1e-12)
    assert row[f"r_precision@{k}"] == 1 / 2


def test_k_beyond_64_bits_is_refused():
    with pytest.raises(recframe.RecframeError, match=r"k=9223372036854775808 is larger than a 64-bit integer.*sys.maxsize"):
        recframe.per_user(FRAME, k=2**63)


@pytest.mark.parametrize("kind", ["log2_rank_plus_1", "log2_max_rank_2"])
@pytest.mark.parametrize("k", [1, 2, 5, 999_999, 1_000_000, 1_000_001, 4_000_000])
def test_ideal_dcg_of_k_ones_against_the_sum(kind, k):
    i = np.arange(1, k + 1, dtype=np.float64)
    d = np.log2(np.maximum(i, 2)) if kind == "log2_max_rank_2" else np.log2(i + 1)
    assert ideal_dcg_of_ones(k, kind) == pytest.approx(math.fsum(1.0 / d), rel=1e-13)


def test_idcg_k_with_huge_k_is_instant_and_right():
    # RecTools' nDCG with k = 10**9: dcg 1 (a at 1) over the DCG of 10**9 ones
    out = recframe.per_user(FRAME, k=10**9, metrics=["ndcg"], idcg="k")
    assert out["ndcg@1000000000"][0] == pytest.approx(1 / ideal_dcg_of_ones(10**9, "log2_rank_plus_1"), rel=1e-15)
    assert 3.5e7 < ideal_dcg_of_ones(10**9, "log2_rank_plus_1") < 3.6e7  # about 10**9 / ln(10**9) * ln 2


def test_exp2_gain_of_huge_grades_is_refused_not_nan(constructor):
    df = FRAME.with_columns(relevance=pl.Series([1024.0, 0.0, 2.0]))
    with pytest.raises(
        recframe.RecframeError, match=r"column 'relevance' \(relevance=\) has 1 relevant grade\(s\) above 1000.*gain=\"exp2\""
    ):
        to_polars(recframe.per_user(constructor(df), k=2, metrics=["ndcg"], gain="exp2"))
    # up to the limit the numbers are finite: dcg = (2**1000 - 1) / log2(2), idcg adds 3 / log2(3)
    ok = to_polars(
        recframe.per_user(
            constructor(df.with_columns(relevance=pl.Series([1000.0, 0.0, 2.0]))), k=2, metrics=["ndcg"], gain="exp2"
        )
    )
    assert ok["ndcg@2"][0] == pytest.approx(1.0, rel=1e-12)
    # precision alone never reads the gain: no reason to refuse
    assert to_polars(recframe.per_user(constructor(df), k=2, metrics=["precision"], gain="exp2"))["precision@2"][0] == 1 / 2


def test_linear_gain_of_huge_grades_is_refused_not_inf(constructor):
    """gain="linear" takes the grade as the gain: two relevant grades of 1e308 made a DCG
    mean of inf (the sum of the users' DCGs overflowed). Grades beyond 2**1000
    are refused where DCG or nDCG reads them, as exp2's grades above 1000 are."""
    df = FRAME.with_columns(relevance=pl.Series([1e308, 0.0, 1e308]))
    with pytest.raises(
        recframe.RecframeError,
        match=r"column 'relevance' \(relevance=\) has 2 relevant grade\(s\) beyond 2\*\*1000 .*gain=\"linear\".*Hint: rescale",
    ):
        to_polars(recframe.summary(constructor(df), k=2, metrics=["dcg"]))
    # at the bound the numbers are finite: dcg = 2**1000 / log2(2), idcg adds 2**1000 / log2(3)
    top = 2.0**1000
    ok = to_polars(recframe.per_user(constructor(df.with_columns(relevance=pl.Series([top, 0.0, top]))), k=2, metrics=["dcg"]))
    assert ok["dcg@2"][0] == top
    # precision reads no gain, and binary gains are 1: no reason to refuse
    assert to_polars(recframe.per_user(constructor(df), k=2, metrics=["precision"]))["precision@2"][0] == 1 / 2
    assert to_polars(recframe.per_user(constructor(df), k=2, metrics=["ndcg"], gain="binary"))["ndcg@2"][0] == pytest.approx(
        1 / (1 + 1 / math.log2(3))
    )


@pytest.mark.parametrize(
    "rank",
    [
        pl.Series([1, 2, None]).cast(pl.Decimal(10, 0)),
        pl.Series([1, 2, None], dtype=pl.UInt64),
        pl.Series([1.0, 2.0, None]),
        pl.Series([None, None, None], dtype=pl.Int64),
    ],
    ids=["decimal", "uint64", "float", "all-null"],
)
def test_ranks_of_every_numeric_dtype(constructor, rank):
    out = to_polars(recframe.per_user(constructor(FRAME.with_columns(rank=rank)), k=2, metrics=["recall"]))
    assert out["recall@2"].to_list() == [1 / 2 if rank.null_count() < 3 else 0.0]


@pytest.mark.parametrize(
    "rank", [pl.Series([1, 2**63 + 5, None], dtype=pl.UInt64), pl.Series([1.0, 1e20, None])], ids=["uint64", "float"]
)
def test_ranks_beyond_an_int64_are_refused(constructor, rank):
    with pytest.raises(
        recframe.RecframeError, match=r"column 'rank' \(rank=\) has 1 value\(s\) that are not whole numbers \(or exceed 2\*\*53\)"
    ):
        to_polars(recframe.per_user(constructor(FRAME.with_columns(rank=rank)), k=2))


def test_float32_scores_beyond_its_range(constructor):
    # 1e39 and 2e39 both exceed float32: they tie (trec_eval reads both as infinity), ties by item
    recs = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "score": [2e39, 1e39]})
    truth = pl.DataFrame({"user_id": [1], "item_id": ["b"], "relevance": [1]})
    out = recframe.per_user(
        constructor(recs), truth=constructor(truth), score="score", score_dtype="float32", k=2, metrics=["rr"]
    )
    assert to_polars(out)["rr@2"].to_list() == [1 / 2]
