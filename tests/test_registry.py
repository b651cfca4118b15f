"""The registry defines the metrics and the engine only runs them: a metric declared here, in a
test, runs on every backend without a change to the engine. Also the declarations' own rules:
levels, required inputs, row domains, and the rows the duplicate check reads."""

from __future__ import annotations

from collections.abc import Iterator

import narwhals as nw
import polars as pl
import pytest

import recframe
from conftest import to_polars
from recframe import RecframeError
from recframe.engine._tables import higher_is_better
from recframe.metrics import REGISTRY, TERMS, Metric, Term
from recframe.metrics._registry import at_least_one, col

# A group-level metric, as the beyond-accuracy metrics will be: the share of the items seen in
# the frame (any list of the group) that some list recommends within its top k.
ITEMS_IN_FRAME = Term("items_in_frame", "all", lambda rows, k: rows.item, agg="n_unique", level="group")
RECOMMENDED_ITEMS = Term(
    "recommended_in_frame@",
    "top_k",
    # null outside the cut-off: n_unique of a group-level term does not count nulls
    lambda rows, k: nw.when(rows.rank <= k).then(rows.item),
    at_k=True,
    agg="n_unique",
    level="group",
)
FRAME_COVERAGE = Metric(
    name="frame_coverage",
    terms=lambda o: ("items_in_frame", "recommended_in_frame@"),
    finish=lambda k, o: col("recommended_in_frame@", k) / at_least_one(col("items_in_frame")),
    level="group",
)
# a user-level metric that needs a side input the call does not give
NEEDS_TRAIN = Metric(name="needs_train", terms=lambda o: ("hits@",), finish=lambda k, o: col("hits@", k), requires=("train",))
# a user-level metric of a new term: the non-relevant items in the top k (lower is better)
MISSES = Term("misses@", "top_k", lambda rows, k: nw.when(rows.rank <= k).then(1 - rows.relevant).otherwise(0), at_k=True)
MISS_RATE = Metric(
    name="miss_rate",
    terms=lambda o: ("misses@",),
    finish=lambda k, o: col("misses@", k) / k,
    defined="always",
    higher_is_better=False,
)


@pytest.fixture
def declared() -> Iterator[None]:
    """Declare the metrics above for one test, and take them back after it."""
    for term in (ITEMS_IN_FRAME, RECOMMENDED_ITEMS, MISSES):
        TERMS[term.name] = term
    for metric in (FRAME_COVERAGE, NEEDS_TRAIN, MISS_RATE):
        REGISTRY[metric.name] = metric
    yield
    for term in (ITEMS_IN_FRAME, RECOMMENDED_ITEMS, MISSES):
        del TERMS[term.name]
    for metric in (FRAME_COVERAGE, NEEDS_TRAIN, MISS_RATE):
        del REGISTRY[metric.name]


FRAME = pl.DataFrame(
    {
        "model": ["A", "A", "A", "A", "B", "B", "B", "B"],
        "user_id": [1, 1, 2, 2, 1, 1, 2, 2],
        "item_id": ["a", "b", "a", "c", "c", "d", "d", "e"],
        "rank": [1, 2, 1, 2, 1, None, 1, 2],
        "relevance": [1, 0, 0, 1, 1, 1, 0, 0],
    }
)


def test_a_group_level_metric_declared_in_a_test_runs_on_every_backend(declared, constructor) -> None:
    out = to_polars(recframe.summary(constructor(FRAME), k=[1, 2], metrics=["frame_coverage", "precision"], by="model"))
    assert out.columns == [
        "model",
        "n_users",
        "n_skipped",
        "n_unranked",
        "n_no_relevant",
        "n_no_truth",
        "frame_coverage@1",
        "frame_coverage@2",
        "precision@1",
        "precision@2",
    ]
    rows = {r["model"]: r for r in out.iter_rows(named=True)}
    # A: items a, b, c in the frame; top-1 lists recommend a (twice), top-2 a, b, c
    assert rows["A"]["frame_coverage@1"] == pytest.approx(1 / 3)
    assert rows["A"]["frame_coverage@2"] == pytest.approx(3 / 3)
    # B: items c, d, e (d never recommended to user 1); top-1 c and d, top-2 c, d, e
    assert rows["B"]["frame_coverage@1"] == pytest.approx(2 / 3)
    assert rows["B"]["frame_coverage@2"] == pytest.approx(3 / 3)
    assert rows["A"]["precision@1"] == pytest.approx((1 + 0) / 2)


def test_a_group_level_metric_without_by_is_one_row(declared) -> None:
    out = recframe.summary(FRAME.filter(pl.col("model") == "B"), k=1, metrics=["frame_coverage"])
    # items c, d, e; the top-1 lists recommend c and d
    assert out["frame_coverage@1"].to_list() == [pytest.approx(2 / 3)]


def test_per_user_refuses_a_group_level_metric_naming_summary(declared) -> None:
    with pytest.raises(RecframeError, match=r"'frame_coverage' has one value per group.*use summary"):
        recframe.per_user(FRAME, k=1, metrics=["frame_coverage"])


def test_intervals_refuse_a_group_level_metric(declared) -> None:
    with pytest.raises(RecframeError, match=r"ci= resamples per-user values.*'frame_coverage'"):
        recframe.summary(FRAME, k=1, metrics=["frame_coverage"], ci=0.9)


def test_group_level_metrics_are_not_in_the_default_list(declared) -> None:
    out = recframe.per_user(FRAME, k=1, by="model")
    assert not any(c.startswith(("frame_coverage", "needs_train")) for c in out.columns)


def test_a_metric_missing_its_input_names_the_argument(declared) -> None:
    with pytest.raises(RecframeError, match=r"metric 'needs_train' needs train=, which was not given"):
        recframe.summary(FRAME, k=1, metrics=["needs_train"])


def test_a_new_term_is_one_declaration(declared, constructor) -> None:
    out = to_polars(recframe.per_user(constructor(FRAME), k=2, metrics=["miss_rate"], by="model"))
    # A: user 1 has b (not relevant) in the top 2, user 2 has a; B: user 1 none, user 2 d and e,
    # but no relevant item: 1.0 by the formula, null under empty_users="skip" (not in the means)
    assert out.sort("model", "user_id")["miss_rate@2"].to_list() == [0.5, 0.5, 0.0, None]
    zero = to_polars(recframe.per_user(constructor(FRAME), k=2, metrics=["miss_rate"], by="model", empty_users="zero"))
    assert zero.sort("model", "user_id")["miss_rate@2"].to_list() == [0.5, 0.5, 0.0, 1.0]


def test_report_marks_the_best_value_by_the_metric_direction(declared) -> None:
    assert higher_is_better("ndcg@10") and not higher_is_better("miss_rate@5")
    table = pl.DataFrame(
        {"model": ["A", "B"], "n_users": [2, 2], "n_skipped": [0, 0], "miss_rate@2": [0.25, 0.5], "precision@2": [0.25, 0.5]}
    )
    lines = recframe.report(table, format="markdown").splitlines()
    row_a, row_b = (next(line for line in lines if line.startswith(f"| {m} ")) for m in ("A", "B"))
    # the smaller miss rate is the best one, the larger precision
    assert "**0.250**" in row_a and "**0.500**" not in row_a
    assert "**0.500**" in row_b and "**0.250**" not in row_b


# ---------------------------------------------------------------------------- duplicate scope

# user 1: items a, b, c ranked 1-3, and item z twice past every k, not relevant
DUPLICATE_PAST_K = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 1, 1],
        "item_id": ["a", "b", "c", "z", "z"],
        "rank": [1, 2, 3, 4, 5],
        "relevance": [1, 0, 1, 0, 0],
    }
)


def test_used_rows_leave_out_a_duplicate_that_changes_no_number(constructor) -> None:
    # k=2: the rows that can change a number are ranks 1-2 and the relevant items; the twice-
    # listed z at ranks 4 and 5 is neither, so the values are those of the frame without it
    got = to_polars(recframe.per_user(constructor(DUPLICATE_PAST_K), k=2, metrics=["precision", "recall", "ndcg", "ap"]))
    clean = recframe.per_user(DUPLICATE_PAST_K.head(3), k=2, metrics=["precision", "recall", "ndcg", "ap"])
    assert got.columns == clean.columns
    assert got.row(0) == pytest.approx(clean.row(0), rel=1e-12)


@pytest.mark.parametrize(
    "call",
    [{"metrics": ["r_precision"], "k": 2}, {"metrics": ["rr"], "k": 2, "rr_cutoff": False}, {"k": 2}],
    ids=["r_precision", "rr-uncut", "all-metrics"],
)
def test_ranks_used_as_given_past_k_read_the_relevant_rows(call, constructor) -> None:
    # the bare r_precision (R = 2: hits at ranks <= 2 of a, c: 1/2) and rr at any rank read the
    # relevant rows' own ranks: z past k changes neither, so it is not looked for
    got = to_polars(recframe.per_user(constructor(DUPLICATE_PAST_K), **call))
    clean = recframe.per_user(DUPLICATE_PAST_K.head(3), **call)
    assert got.columns == clean.columns
    assert got.row(0) == pytest.approx(clean.row(0), rel=1e-12)


def test_check_duplicates_true_reads_every_row(constructor) -> None:
    with pytest.raises(RecframeError, match=r"duplicate \(user_id, item_id\) rows: user_id=1 has 5 rows but 4 distinct"):
        to_polars(recframe.per_user(constructor(DUPLICATE_PAST_K), k=2, metrics=["precision"], check_duplicates=True))


@pytest.mark.parametrize(
    "call",
    [
        {"metrics": ["precision"], "k": 5},  # z within the largest k
        # positions counted, not given: the bare column reads positions up to R, and any row
        # before a relevant one moves it
        {"metrics": ["r_precision"], "k": 2, "rank_gaps": "rerank"},
        {"metrics": ["rr"], "k": 2, "rr_cutoff": False, "rank_gaps": "rerank"},
        {"metrics": ["num_ret"], "k": 2},  # the length of the whole list
        {"k": 2, "rank_gaps": "rerank"},  # every metric: r_precision among them
    ],
    ids=["within-k", "r_precision-rerank", "rr-uncut-rerank", "num_ret", "all-metrics-rerank"],
)
def test_used_rows_include_whatever_a_column_reads(call, constructor) -> None:
    with pytest.raises(RecframeError, match=r"duplicate \(user_id, item_id\) rows"):
        to_polars(recframe.per_user(constructor(DUPLICATE_PAST_K), **call))


def test_a_relevant_duplicate_past_k_is_caught() -> None:
    frame = DUPLICATE_PAST_K.with_columns(relevance=pl.Series([1, 0, 1, 1, 1]))
    with pytest.raises(RecframeError, match=r"user_id=1 has 5 rows but 4 distinct 'item_id' values"):
        recframe.per_user(frame, k=2, metrics=["precision"])


def test_duplicate_ranks_among_the_used_rows_are_caught(constructor) -> None:
    frame = DUPLICATE_PAST_K.head(3).with_columns(rank=pl.Series([1, 1, 2]))
    with pytest.raises(RecframeError, match=r"duplicate ranks in column 'rank'"):
        to_polars(recframe.per_user(constructor(frame), k=1, metrics=["precision"]))


def test_check_duplicates_values_are_checked() -> None:
    with pytest.raises(RecframeError, match=r"check_duplicates='some' must be True or False, or \"used\""):
        recframe.per_user(DUPLICATE_PAST_K, check_duplicates="some")  # type: ignore[arg-type]
