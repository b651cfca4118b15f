"""summary(partitions=N): the users evaluated in N hash partitions give the one-pass numbers.

The sums of disjoint sets of users add up to the sums of all of them, so the partitioned
summary equals the one-pass one to the last bits of a float (rel 1e-12), on random frames with
every per-user input (truth=, users=, exclude=, score=), and what does not add up is refused.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import recframe
from conftest import to_polars
from recframe import RecframeError, UncheckedDataWarning, cli
from test_beyond import beyond_cases
from test_properties import EVERY_USER_METRIC, SETTINGS, draw_truth, long_frames

#: fewer examples than the one-pass property test: the intervals and group metrics add to its cases
FEWER = settings(SETTINGS, max_examples=10)


@SETTINGS
@given(st.booleans(), st.data())
def test_partitions_give_the_one_pass_numbers(with_score: bool, data: st.DataObject) -> None:
    df, options = data.draw(long_frames(with_score=with_score))
    profile = data.draw(st.sampled_from(["recframe", "trec_eval", "lenskit"]))
    metrics = [m for m in EVERY_USER_METRIC if recframe.profiles.has_metric(recframe.profiles.PROFILES[profile], m)]
    if profile == "recframe":
        options |= {"unranked_users": data.draw(st.sampled_from(["skip", "zero"])), "metrics": metrics}
    else:
        shared = ("k", "by", "users", "unlisted_users", "exclude", "threshold", "score", "score_threshold")
        options = {key: value for key, value in options.items() if key in shared} | {"profile": profile, "metrics": metrics}
    if data.draw(st.booleans()):
        options["truth"] = draw_truth(data, df, options)
        df = df.drop("relevance")
    options["aggregate"] = data.draw(st.sampled_from(["mean", "gmean", ["mean", "gmean"], "median", ["mean", "p90", "p10"]]))
    partitions = data.draw(st.integers(1, 4))
    want = recframe.summary(df, **options)
    got = recframe.summary(df, partitions=partitions, **options)
    assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("aggregate", ["median", ["mean", "p90", "p10", "p99"]])
@pytest.mark.parametrize("unranked_users", ["zero", "skip"])
def test_quantiles_are_the_one_pass_quantiles(aggregate: str | list[str], unranked_users: str) -> None:
    """Each set counts the lists of each value, and the counts added up give the quantile of
    all users as one pass gives it (Polars' linear interpolation, with the lists a metric does
    not count as nulls: unranked_users="skip"), whatever the sets. (A list's value may differ
    in its last bit between a set, collected by the streaming engine, and one pass.)"""
    df = _frame(2000).with_columns(rank=pl.when(pl.col("user_id") % 9 == 0).then(None).otherwise(pl.col("rank")))
    options: dict[str, Any] = {"k": [3, 10], "threshold": 2, "by": "model", "aggregate": aggregate}
    options |= {"unranked_users": unranked_users, "metrics": ["precision", "ndcg", "ap", "rr", "recall"]}
    want = recframe.summary(df, **options)
    quantiles = [c for c in want.columns if c.endswith(("_p90", "_p10", "_p99")) or (aggregate == "median" and "@" in c)]
    assert len(quantiles) == (10 if aggregate == "median" else 30)
    if unranked_users == "skip":
        assert (want["n_unranked"] > 0).all()  # (the lists the metrics leave out: nulls among the values)
    for partitions in (1, 3, 16):
        got = recframe.summary(df, partitions=partitions, **options)
        assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-12)


def test_a_value_past_what_a_variance_holds_is_refused_with_the_one_pass_hint() -> None:
    huge = _frame(30).with_columns(pl.col("relevance").clip(0, 1) * 600)  # exp2 gains of grade 600: squares past float64
    options = {"k": 3, "metrics": ["dcg"], "gain": "exp2", "threshold": 1, "by": "model", "ci": 0.9, "ci_method": "t"}
    with pytest.raises(RecframeError, match=r"past what an engine's variance holds.*leave partitions= out \(one pass\)"):
        recframe.summary(huge, partitions=2, **options)
    assert recframe.summary(huge, **options)["dcg@3_lo"].is_finite().all()  # (one pass scales them)


@FEWER
@given(st.booleans(), st.data())
def test_t_intervals_add_up_across_partitions(with_score: bool, data: st.DataObject) -> None:
    # each set's counts, sums and standard deviations give the spread of all users (the sum of
    # squared deviations about each set's mean, plus each set's count times its mean's squared
    # deviation from the mean of all): the one-pass t interval, up to rounding
    df, options = data.draw(long_frames(with_score=with_score))
    options |= {"metrics": EVERY_USER_METRIC, "ci": data.draw(st.sampled_from([0.9, 0.95])), "ci_method": "t"}
    partitions = data.draw(st.integers(1, 4))
    want = recframe.summary(df, **options)
    got = recframe.summary(df, partitions=partitions, **options)
    assert_frame_equal(got, want, rel_tol=1e-9, abs_tol=1e-12)


#: the group-level metrics that add up across sets (item_group='s comparisons are refused)
GROUP_METRICS = ["catalog_coverage", "user_coverage", "user_coverage_full", "gini", "entropy", "personalization"]


@FEWER
@given(beyond_cases(), st.integers(1, 4), st.booleans(), st.booleans())
def test_group_metrics_add_up_across_partitions(
    case: dict[str, Any], partitions: int, with_users: bool, with_item_groups: bool
) -> None:
    # the group terms of all users from each set's parts: sums and distinct users added,
    # distinct items a union, each item's exposures added (Gini's ranks, entropy's logs and
    # personalization's pairs are finished from the added counts); the item-group comparisons
    # from the per-(group, item group) counts added
    options: dict[str, Any] = {"k": sorted({1, case["k"]}), "by": "model", "metrics": ["ndcg", *GROUP_METRICS]}
    options["items"] = case["items"].select("item_id", "genre")  # (the catalog: every item of the lists)
    if with_item_groups and case["items"]["genre"].n_unique() >= 2:  # (a disparity needs two groups)
        options["metrics"] += ["pop_rsp", "pop_reo", "exposure_disparity", "miscalibration"]
        options |= {"item_group": "genre", "train": pl.DataFrame(case["train"], schema=["user_id", "item_id"], orient="row")}
    if with_users:  # a segment: the groups are (model, segment), and a user may be left out
        users = sorted({u for _, u in case["lists"]})
        segments = {"user_id": users[1:], "segment": [("s", "t")[u % 2] for u in users[1:]]}
        options["users"] = pl.DataFrame(segments, schema={"user_id": pl.Int64, "segment": pl.String})
        options["unlisted_users"] = "drop"
    want = recframe.summary(case["frame"], **options)
    got = recframe.summary(case["frame"], partitions=partitions, **options)
    assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-12)


def test_group_metrics_with_many_partitions_on_a_larger_frame() -> None:
    df = _frame(3000)
    options = {"k": [3, 10], "by": "model", "metrics": ["precision", *GROUP_METRICS], "train": df.select("user_id", "item_id")}
    assert_frame_equal(recframe.summary(df, partitions=9, **options), recframe.summary(df, **options), rel_tol=1e-12)


def _frame(n_users: int, seed: int = 0) -> pl.DataFrame:
    """Two models' lists of 10 for `n_users` users, a third of the items unrated."""
    rng = np.random.default_rng(seed)
    one = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(n_users), 10),
            "item_id": np.tile(np.arange(10), n_users),
            "rank": np.tile(np.arange(1, 11), n_users),
        }
    )
    return pl.concat(
        [
            one.with_columns(
                model=pl.lit(model),
                relevance=pl.Series(np.where(rng.random(one.height) < 0.3, np.nan, rng.integers(0, 5, one.height))).fill_nan(
                    None
                ),
            )
            for model in ("a", "b")
        ]
    )


@pytest.mark.parametrize("kind", ["polars", "lazy", "pandas", "arrow"])
def test_every_in_memory_kind_and_many_partitions(kind: str) -> None:
    df = _frame(3000)
    frame: Any = {"polars": df, "lazy": df.lazy(), "pandas": df.to_pandas(), "arrow": df.to_arrow()}[kind]
    options: dict[str, Any] = {"k": [1, 5, 10], "threshold": 2, "by": "model"}
    want = recframe.summary(df, **options)
    out = recframe.summary(frame, partitions=16, **options)
    assert isinstance(out, {"polars": pl.DataFrame, "lazy": pl.LazyFrame, "pandas": pd.DataFrame, "arrow": pa.Table}[kind])
    got = to_polars(out.collect() if kind == "lazy" else out)
    assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-12)
    assert got["n_users"].to_list() == want["n_users"].to_list()  # (every user counted once)


def test_categorical_and_string_user_ids_fall_in_the_same_sets() -> None:
    """The truth's user ids as text and the recommendations' as a categorical: each user's rows
    meet in one set (a categorical is hashed as its text)."""
    df = _frame(500).with_columns(pl.col("user_id").cast(pl.String))
    recs = df.drop("relevance").with_columns(pl.col("user_id").cast(pl.Categorical))
    truth = df.filter(pl.col("model") == "a").select("user_id", "item_id", "relevance").drop_nulls()
    options: dict[str, Any] = {"k": 5, "threshold": 2, "by": "model", "truth": truth}
    want = recframe.summary(recs, **options)
    assert_frame_equal(recframe.summary(recs, partitions=7, **options), want, rel_tol=1e-12, abs_tol=1e-12)
    assert want["n_no_truth"].to_list() == [0, 0]  # (the truth was found for every user)


def test_an_empty_frame_gives_the_empty_summary() -> None:
    empty = _frame(0)
    want = recframe.summary(empty, k=5, by="model")
    got = recframe.summary(empty, k=5, by="model", partitions=3)
    assert got.height == 0
    assert_frame_equal(got, want)


def test_the_data_checks_still_run_on_whole_lists() -> None:
    df = _frame(200)
    duplicated = pl.concat([df, df.filter(pl.col("user_id") == 77)])
    with pytest.raises(RecframeError, match="user_id=77"):
        recframe.summary(duplicated, by="model", partitions=4)
    null_user = df.with_columns(pl.when(pl.col("user_id") == 5).then(None).otherwise(pl.col("user_id")).alias("user_id"))
    with pytest.raises(RecframeError, match="null"):
        recframe.summary(null_user, by="model", partitions=4)


def test_checks_off_is_said_once() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recframe.summary(_frame(100), by="model", partitions=5, checks=False)
    assert [type(w.message) for w in caught] == [UncheckedDataWarning]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"partitions": 0}, "partitions=0 is not a whole number of at least 1"),
        ({"partitions": "4"}, "partitions='4' is not a whole number"),
        ({"partitions": True}, "partitions=True is not a whole number"),
        ({"partitions": 2, "ci": 0.95}, 'ci=0.95 with ci_method="bootstrap" resamples the per-user values of all users'),
        ({"partitions": 2, "ci": 0.95, "ci_method": "poisson"}, 'ci_method="poisson" resamples the per-user values'),
        ({"partitions": 2, "ci": 0.95, "ci_method": "t", "aggregate": "gmean"}, "asks for the geometric mean"),
        ({"partitions": 2, "ci": 0.95, "ci_method": "t", "metrics": ["gini"]}, "metric 'gini' has one value per group"),
        ({"partitions": 2, "user": None}, "splits the users by their id"),
    ],
)
def test_what_does_not_add_up_is_refused(options: dict[str, Any], said: str) -> None:
    with pytest.raises(RecframeError, match=said.replace("(", r"\(").replace(")", r"\)")):
        recframe.summary(_frame(20), by="model", **options)


def test_a_sql_engine_is_refused_by_name() -> None:
    duckdb = pytest.importorskip("duckdb", reason="DuckDB is a test extra")
    relation = duckdb.from_arrow(_frame(20).to_arrow())
    with pytest.raises(RecframeError, match="a DuckDB one, which holds its own memory"):
        recframe.summary(relation, by="model", partitions=2)


def test_only_summary_takes_partitions() -> None:
    with pytest.raises(RecframeError, match="an option of summary alone"):
        recframe.report_page(_frame(20), by="model", partitions=2)
    with pytest.raises(RecframeError, match="has no option 'partitions'"):
        recframe.per_user(_frame(20), partitions=2)


def test_the_truth_is_broadcast_over_every_sets_models() -> None:
    """Model "b" recommends to user 0 alone and model "c" only what exclude= removes: one pass
    scores "b" on every truth user (unranked but one) and has no "c"; so does every set, which
    takes the model values from all users."""
    df = _frame(100).filter(pl.col("model") == "a")
    recs = pl.concat(
        [
            df.drop("relevance"),
            df.filter(pl.col("user_id") == 0).drop("relevance").with_columns(model=pl.lit("b")),
            df.filter(pl.col("user_id") == 1).drop("relevance").with_columns(model=pl.lit("c")),
        ]
    )
    truth = df.select("user_id", "item_id", "relevance").drop_nulls()
    seen = pl.DataFrame({"model": "c", "user_id": 1, "item_id": list(range(10))})
    for exclude in (None, seen):
        options: dict[str, Any] = {"k": 5, "threshold": 2, "by": "model", "truth": truth, "exclude": exclude}
        want = recframe.summary(recs, **options)
        assert want["model"].to_list() == (["a", "b"] if exclude is not None else ["a", "b", "c"])
        assert want.filter(pl.col("model") == "b")["n_unranked"].item() >= 90
        assert_frame_equal(recframe.summary(recs, partitions=8, **options), want, rel_tol=1e-12, abs_tol=1e-12)


def test_the_command_line_takes_partitions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    df = _frame(300)
    df.drop("relevance").with_columns(score=1.0 / pl.col("rank")).write_parquet(tmp_path / "recs.parquet")
    df.select("user_id", "item_id", "relevance").unique(["user_id", "item_id"]).drop_nulls().write_parquet(
        tmp_path / "truth.parquet"
    )
    args = ["evaluate", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet"), "--by", "model"]
    args += ["--threshold", "2", "--k", "5,10", "--quiet"]
    for ranking in ([], ["--score", "score"]):
        assert cli.main([*args, *ranking, "--out", str(tmp_path / "one.parquet")]) == 0
        assert cli.main([*args, *ranking, "--partitions", "6", "--out", str(tmp_path / "six.parquet")]) == 0
        assert ("ties at the cut-offs are not looked for with --partitions" in capsys.readouterr().err) == bool(ranking)
        want = pl.read_parquet(tmp_path / "one.parquet")
        assert_frame_equal(pl.read_parquet(tmp_path / "six.parquet"), want, rel_tol=1e-12, abs_tol=1e-12)
    assert cli.main([*args, "--aggregate", "p90", "--out", str(tmp_path / "one.parquet")]) == 0
    assert cli.main([*args, "--aggregate", "p90", "--partitions", "4", "--out", str(tmp_path / "four.parquet")]) == 0
    want = pl.read_parquet(tmp_path / "one.parquet")
    assert_frame_equal(pl.read_parquet(tmp_path / "four.parquet"), want, rel_tol=1e-12, abs_tol=1e-12)
    t = ["--ci", "0.95", "--ci-method", "t"]
    assert cli.main([*args, *t, "--out", str(tmp_path / "one.parquet")]) == 0
    assert cli.main([*args, *t, "--partitions", "3", "--out", str(tmp_path / "three.parquet")]) == 0
    want = pl.read_parquet(tmp_path / "one.parquet")
    assert "ndcg@10_lo" in want.columns
    assert_frame_equal(pl.read_parquet(tmp_path / "three.parquet"), want, rel_tol=1e-9, abs_tol=1e-12)
    capsys.readouterr()
    refused = {
        "--ci=0.9": "--ci 0.9 with --ci-method bootstrap resamples the per-user values of all users",
        "--per-user": "--partitions adds up the sums of sets of users; --per-user lists them",
        "--format=trec": "--partitions goes with the means; --format trec",
    }
    for flag, said in refused.items():
        assert cli.main([*args, "--partitions", "2", flag]) == 2
        assert said in capsys.readouterr().err


#: two users: user 1 ranks a (relevant) then b, user 2 ranks c then a (relevant), and user 3 is
#: in the truth alone (no list: every metric 0)
TWO_USERS = pl.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["a", "b", "c", "a"], "rank": [1, 2, 1, 2]})
TWO_TRUTH = pl.DataFrame({"user_id": [1, 2, 3], "item_id": ["a", "a", "a"], "relevance": [1, 1, 1]})


@pytest.mark.parametrize("kind", ["polars", "lazy", "pandas", "arrow"])
@pytest.mark.parametrize("partitions", [1000, 2**70, np.int64(2**62)])
def test_more_partitions_than_users_are_capped_at_the_users(kind: str, partitions: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A set per distinct user at most: 1000 sets of 2 users took 24 s, 2**70 built a plan per
    set (an unbounded probe reached 19 GB); now three sets are evaluated, whatever is asked."""
    from recframe.engine import _call

    evaluated = []
    original = _call.evaluated
    monkeypatch.setattr(_call, "evaluated", lambda *a, **kw: evaluated.append(1) or original(*a, **kw))

    def on(df: pl.DataFrame) -> Any:
        return {"polars": df, "lazy": df.lazy(), "pandas": df.to_pandas(), "arrow": df.to_arrow()}[kind]

    out = recframe.summary(on(TWO_USERS), k=2, metrics=["precision", "recall", "rr"], truth=on(TWO_TRUTH), partitions=partitions)
    got = to_polars(out.collect() if kind == "lazy" else out)
    assert 1 <= len(evaluated) <= 3  # (users 1, 2 and 3: at most three sets, two if two share a hash's set)
    # precision@2 1/2, 1/2 and 0, recall@2 1, 1 and 0, rr@2 1, 1/2 and 0 (user 3 has no list)
    assert got.select("n_users", "precision@2", "recall@2", "rr@2").rows() == [
        (3, pytest.approx(1 / 3), pytest.approx(2 / 3), 0.5)
    ]


def test_the_command_line_caps_partitions_past_a_64_bit_integer(tmp_path: Path) -> None:
    TWO_USERS.write_csv(tmp_path / "recs.csv")
    TWO_TRUTH.write_csv(tmp_path / "truth.csv")
    args = ["evaluate", str(tmp_path / "recs.csv"), "--truth", str(tmp_path / "truth.csv"), "--k", "2", "--quiet"]
    args += ["--metrics", "precision,recall,rr"]
    assert cli.main([*args, "--out", str(tmp_path / "one.csv")]) == 0
    assert cli.main([*args, "--partitions", "99999999999999999999", "--out", str(tmp_path / "many.csv")]) == 0
    assert_frame_equal(pl.read_csv(tmp_path / "many.csv"), pl.read_csv(tmp_path / "one.csv"))
    assert pl.read_csv(tmp_path / "many.csv").select("precision@2", "recall@2", "rr@2").rows() == [
        (pytest.approx(1 / 3), pytest.approx(2 / 3), 0.5)
    ]
