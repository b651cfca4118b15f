"""``recframe.inspect`` choosing and showing users (issue 38): a huge ``n`` chooses every user,
cold-start users are shown with an empty history and chosen among, user ids of the wrong type or
out of the column's range are refused in the user's words, a lazy users frame raises no Polars
PerformanceWarning, and the command line's ``--n``, ``--users`` and ``--max-users`` alike.
"""

from __future__ import annotations

import io
import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import assert_refused, run_cli, to_polars
from recframe import RecframeError
from workflow_recs import COLD, FLAGS, OPTIONS, RECS, TEST, TRAIN, USERS, write_files


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("workflow"))


def test_the_workflow_data_has_the_cold_users_the_issue_names():
    assert len(COLD) == 160 and 6 in COLD


# ---------------------------------------------------------------------------- item 8: n=2**70


@pytest.mark.parametrize("n", [2**70, np.uint64(2**64 - 1)])
def test_a_huge_n_chooses_every_user(n):
    small = RECS.filter(pl.col("user_id") <= 40)
    out = to_polars(recframe.inspect(small, k=2, n=n, **OPTIONS))
    assert sorted(out["user_id"].unique().to_list()) == sorted(small["user_id"].unique().to_list())
    # per segment too
    users = USERS.filter(pl.col("user_id") <= 40)
    out = to_polars(recframe.inspect(small, k=2, n=n, users=users, **{**OPTIONS, "by": ["model", "segment"]}))
    assert out["user_id"].n_unique() == 40


def test_a_huge_n_on_the_command_line(files, tmp_path):
    small = tmp_path / "small.parquet"
    RECS.filter(pl.col("user_id") <= 40).write_parquet(small)
    code, out, err = run_cli("inspect", small, "--truth", files / "test.parquet", *FLAGS, "--by", "model", "--k", "2",
                          "--n", str(2**70), "--format", "csv", "--quiet")  # fmt: skip
    assert code == 0, err
    assert pl.read_csv(io.StringIO(out))["user_id"].n_unique() == 40


def test_n_below_1_is_refused_in_command_line_words(files):
    code, _, err = run_cli("inspect", files / "recs.parquet", "--truth", files / "test.parquet", *FLAGS, "--n", "0", "--quiet")
    assert_refused(code, err, "--n 0", "--n 5")


# ---------------------------------------------------------------------------- item 13: cold users


def test_a_cold_start_user_is_shown_with_an_empty_history(constructor):
    out = to_polars(
        recframe.inspect(constructor(RECS), k=3, users=[6, 1], train=constructor(TRAIN),
                         **{**OPTIONS, "truth": constructor(TEST)})
    )  # fmt: skip
    sources = dict(out.group_by("user_id").agg(pl.col("source").unique().sort()).iter_rows())
    assert sources[6] == ["held_out", "recommended"]  # no history row: user 6 has no training row
    assert sources[1] == ["held_out", "history", "recommended"]
    expected = TRAIN.filter(pl.col("user_id") == 1)["item_id"].sort().to_list()
    assert out.filter((pl.col("user_id") == 1) & (pl.col("source") == "history"))["item_id"].sort().to_list() == expected
    assert out.filter(pl.col("source") == "recommended").height == 2 * 3 * 3
    view = recframe.side_by_side(out).to_html()
    user_6 = re.search(r"<h3>user_id 6</h3>(.*?)</section>", view, re.S)
    assert user_6 is not None
    assert re.search(
        r'<h4>History <span class="rf-count">\(0 relevant of 0\)</span></h4><ol><li class="rf-empty">', user_6.group(1)
    )


def test_cold_start_users_are_inspected_and_chosen_among():
    cold = COLD[:20]
    out = recframe.inspect(RECS, k=3, users=cold, train=TRAIN, select="worst", n=3, **OPTIONS)
    assert out["user_id"].n_unique() == 3 and set(out["user_id"].to_list()) <= set(cold)
    assert "history" not in out["source"].to_list()


def test_a_user_not_in_the_frame_is_named_with_train_as_without():
    for extra in ({}, {"train": TRAIN}):
        with pytest.raises(RecframeError, match=r"users=: user 999999 is not in the frame .*Hint"):
            recframe.inspect(RECS, users=[999999], **OPTIONS, **extra)
    with pytest.raises(RecframeError, match=r"users=: 2 of the 3 users given are not in the frame .*: 999999, 888888"):
        recframe.inspect(RECS, users=[999999, 6, 888888], train=TRAIN, **OPTIONS)


def test_train_is_still_checked_whole():
    with pytest.raises(RecframeError, match=r"train= has no rows"):
        recframe.inspect(RECS, users=[6], train=TRAIN.clear(), **OPTIONS)
    with pytest.raises(RecframeError, match=r"column 'user_id' of train= has 1 null"):
        recframe.inspect(RECS, users=[6], train=pl.concat([TRAIN, pl.DataFrame({"user_id": [None], "item_id": [1],
                         "rating": [5], "timestamp": [0]}, schema=TRAIN.schema)]), **OPTIONS)  # fmt: skip


def test_novelty_chooses_users_by_the_popularity_of_the_whole_train():
    # users=[ids] reads only their recommendations; popularity still counts every training user
    given = [u for u in USERS["user_id"].to_list() if u not in COLD][:30]
    recs = RECS.filter(pl.col("model") == "mix").with_columns(relevance=pl.lit(1))
    options = {"by": "model", "train": TRAIN, "empty_users": "zero"}
    per_user = recframe.per_user(recs, k=10, metrics=["novelty"], **options)
    expected = per_user.filter(pl.col("user_id").is_in(given)).sort("novelty@10", "user_id")["user_id"].head(3).to_list()
    out = recframe.inspect(recs, k=10, users=given, select="worst", metric="novelty@10", n=3, **options)
    assert set(out["user_id"].unique().to_list()) == set(expected)


def test_a_cold_start_user_on_the_command_line(files):
    code, out, err = run_cli("inspect", files / "recs.parquet", "--truth", files / "test.parquet", "--train",
                          files / "train.parquet", *FLAGS, "--by", "model", "--k", "2", "--users", "6", "--format", "csv",
                          "--quiet")  # fmt: skip
    assert code == 0, err
    table = pl.read_csv(io.StringIO(out))
    assert table["user_id"].unique().to_list() == [6] and "history" not in table["source"].to_list()
    code, _, err = run_cli("inspect", files / "recs.parquet", "--truth", files / "test.parquet", "--train",
                        files / "train.parquet", *FLAGS, "--users", "999999", "--quiet")  # fmt: skip
    assert_refused(code, err, "--users", "user 999999 is not in the frame")


# ---------------------------------------------------------------------------- item 14: id types


@pytest.mark.parametrize("bad, example", [(1.5, "[1, 2, 3]"), (67.0, "[67]"), (np.float64(67.0), "[67]")])
def test_a_float_id_on_an_integer_user_column_names_users_and_the_dtype(constructor, bad, example):
    with pytest.raises(RecframeError) as caught:
        recframe.inspect(constructor(RECS), users=[1, bad], **{**OPTIONS, "truth": constructor(TEST)})
    message = str(caught.value)
    assert message.startswith(f"users= holds {float(bad)!r} (float)"), message
    assert "Int64" in message and f"users={example}" in message
    assert "frame=" not in message and "scan_parquet" not in message


def test_an_id_outside_the_column_range_is_refused():
    with pytest.raises(RecframeError, match=r"users= holds 1180591620717411303424, outside the range of .*Int64.*Hint"):
        recframe.inspect(RECS, users=[2**70], **OPTIONS)
    unsigned = RECS.with_columns(pl.col("user_id").cast(pl.UInt32))
    with pytest.raises(RecframeError, match=r"users= holds -1, outside the range of the user column 'user_id' \(UInt32: 0"):
        recframe.inspect(unsigned, users=[-1], **{**OPTIONS, "truth": TEST.with_columns(pl.col("user_id").cast(pl.UInt32))})


# ---------------------------------------------------------------------------- item 19: no PerformanceWarning


def test_inspect_of_a_lazy_users_frame_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = recframe.inspect(RECS.lazy(), k=2, users=pl.LazyFrame({"user_id": [1, 6]}), **OPTIONS).collect()
        assert sorted(out["user_id"].unique().to_list()) == [1, 6]
        segments = USERS.lazy().filter(pl.col("user_id") <= 60)
        out = recframe.inspect(RECS.lazy(), k=2, n=1, users=segments, **{**OPTIONS, "by": ["model", "segment"]}).collect()
        assert out["segment"].n_unique() == out["user_id"].n_unique()


# ---------------------------------------------------------------------------- item 18: --max-users


@pytest.mark.parametrize("value", ["-3", "0"])
def test_max_users_is_checked_without_the_page(files, value):
    code, _, err = run_cli("inspect", files / "recs.parquet", "--truth", files / "test.parquet", *FLAGS, "--max-users", value,
                        "--quiet")  # fmt: skip
    assert_refused(code, err, f"--max-users {value}")
