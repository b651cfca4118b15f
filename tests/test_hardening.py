"""Inputs at the edges give the right number or a RecframeError, on every backend."""

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


@pytest.mark.parametrize(
    ("recs_cast", "truth_cast"),
    [(pl.Int32, pl.Int64), (pl.UInt16, pl.Int64), (pl.String, pl.Categorical), (pl.Enum(["a", "b", "z"]), pl.String)],
)
def test_join_keys_of_one_family_are_aligned(constructor, recs_cast, truth_cast):
    column = "user_id" if recs_cast in (pl.Int32, pl.UInt16) else "item_id"
    recs = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [1, 2]}).with_columns(pl.col(column).cast(recs_cast))
    truth = pl.DataFrame({"user_id": [1], "item_id": ["b"], "relevance": [1]}).with_columns(pl.col(column).cast(truth_cast))
    out = to_polars(recframe.per_user(constructor(recs), truth=constructor(truth), k=2, metrics=["rr"]))
    assert out["rr@2"].to_list() == [1 / 2]


@pytest.mark.parametrize(("recs_cast", "truth_cast"), [(pl.String, pl.Int64), (pl.Float64, pl.Int64)])
def test_join_keys_that_disagree_are_named(constructor, recs_cast, truth_cast):
    recs = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [1, 2]}).with_columns(
        pl.col("user_id").cast(recs_cast)
    )
    truth = pl.DataFrame({"user_id": [1], "item_id": ["b"], "relevance": [1]}).with_columns(pl.col("user_id").cast(truth_cast))
    with pytest.raises(
        recframe.RecframeError, match=r"column 'user_id' holds \w+ in the recommendations but \w+ in truth=.*Hint: cast"
    ):
        to_polars(recframe.per_user(constructor(recs), truth=constructor(truth), k=2))


def test_a_broadcast_that_dwarfs_the_input_is_refused(constructor, monkeypatch):
    # the row limit scaled down: 50 groups x 100 truth rows = 5,000 rows, > 20 x the 150 given
    import recframe.api

    if isinstance(constructor(FRAME), pl.LazyFrame):
        pytest.skip("not checked on a LazyFrame: counting would cost a pass over the data (docs/errors.md)")
    monkeypatch.setattr(recframe._call, "BROADCAST_ROWS", 500)
    recs = pl.DataFrame({"run": list(range(50)), "user_id": [1] * 50, "item_id": ["a"] * 50, "rank": [1] * 50})
    truth = pl.DataFrame({"user_id": list(range(100)), "item_id": ["a"] * 100, "relevance": [1] * 100})
    with pytest.raises(
        recframe.RecframeError, match=r"under each of 50 groups of \['run'\]: 5,000 rows to build from 150 rows given.*users="
    ):
        recframe.summary(constructor(recs), truth=constructor(truth), by="run")
    # a few groups are fine
    ok = recframe.summary(
        constructor(recs.filter(pl.col("run") < 3)), truth=constructor(truth), by="run", k=1, metrics=["recall"]
    )
    assert to_polars(ok)["n_users"].to_list() == [100, 100, 100]


def test_a_broadcast_checked_once_for_shared_calls_refuses_each(monkeypatch):
    """Within shared_preparation (the report page's calls) the broadcast check runs once for
    the same frames and model keys, and every call, in any thread, raises its refusal."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(recframe._call, "BROADCAST_ROWS", 500)
    recs = pl.DataFrame({"run": list(range(50)), "user_id": [1] * 50, "item_id": ["a"] * 50, "rank": [1] * 50})
    truth = pl.DataFrame({"user_id": list(range(100)), "item_id": ["a"] * 100, "relevance": [1] * 100})

    def call() -> str:
        try:
            recframe.summary(recs, truth=truth, by="run")
        except recframe.RecframeError as error:
            return str(error)
        return "no error"

    with recframe._call.shared_preparation(), ThreadPoolExecutor(max_workers=3) as pool:
        said = list(pool.map(lambda _: call(), range(3))) + [call()]
    assert all("under each of 50 groups of ['run']: 5,000 rows to build" in text for text in said), said


def test_pandas_frames_that_cannot_cross_name_the_column():
    import pandas as pd

    df = FRAME.to_pandas()
    doubled = pd.concat([df, df[["rank"]]], axis=1)
    with pytest.raises(recframe.RecframeError, match=r"frame has more than one column named 'rank'"):
        recframe.per_user(doubled)
    mixed = df.assign(item_id=pd.Series(["a", 2, 3.5], dtype=object))
    with pytest.raises(recframe.RecframeError, match=r"column 'item_id' of frame holds object values that Arrow.*cannot read"):
        recframe.per_user(mixed)
    complex_relevance = df.assign(relevance=df["relevance"].astype(complex))
    with pytest.raises(recframe.RecframeError, match=r"column 'relevance' of frame holds complex128 values"):
        recframe.per_user(complex_relevance)


def test_arguments_of_the_wrong_kind():
    from decimal import Decimal

    assert recframe.summary(FRAME, k=1, metrics=["precision"], threshold=Decimal("1"))["precision@1"][0] == 1.0
    with pytest.raises(recframe.RecframeError, match=r"threshold=Decimal\('NaN'\) is not a finite number"):
        recframe.summary(FRAME, threshold=Decimal("NaN"))
    with pytest.raises(recframe.RecframeError, match=r"metrics=5 is not a metric name or a list of them"):
        recframe.summary(FRAME, metrics=5)


def test_a_lazy_scan_of_missing_files(tmp_path):
    with pytest.raises(recframe.RecframeError, match=r"frame could not be read: .*Hint: check the path or glob"):
        recframe.summary(pl.scan_parquet(tmp_path / "missing" / "*.parquet"))


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


def test_duckdb_relations_of_two_connections():
    duckdb = pytest.importorskip("duckdb")
    a, b = duckdb.connect(), duckdb.connect()
    recs = a.from_arrow(pl.DataFrame({"user_id": [1], "item_id": ["a"], "rank": [1]}).to_arrow())
    truth = b.from_arrow(pl.DataFrame({"user_id": [1], "item_id": ["a"], "relevance": [1]}).to_arrow())
    with pytest.raises(
        recframe.RecframeError,
        match=r"DuckDB relations of two different connections.*Hint: create every frame from one connection",
    ):
        recframe.summary(recs, truth=truth, k=1)
    a.close()
    b.close()


def test_missing_column_hint_never_proposes_a_column_in_use():
    df = pl.DataFrame({"user_id": [1], "item_id": ["a"], "rank": [1], "grade": [1]})
    # "rnk" is closest to "rank", which rank= already uses: the hint proposes the free column
    with pytest.raises(recframe.RecframeError, match=r"Hint: pass relevance=\"grade\"\.$"):
        recframe.summary(df, relevance="rnk")
