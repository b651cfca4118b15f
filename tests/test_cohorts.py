"""Cohorts from the training data (issue 40): users by activity, items by popularity, as
users= and items= frames every call takes. Counts hand-worked; the invariant: the cohorts'
means weighted by their n_users are the overall mean."""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pytest

import recframe
from conftest import BACKENDS, WITH_IBIS, ibis_table, run_cli, to_polars
from recframe import RecframeError
from recframe.data import load_sample

RECS = pl.DataFrame(
    {
        "user_id": [1, 1, 2, 3, 4, 5],
        "item_id": ["a", "b", "a", "c", "a", "b"],
        "rank": [1, 2, 1, 1, 1, 1],
        "relevance": [1, 0, 0, 1, 1, None],
    }
)
# distinct training items: user 1 -> 1, user 2 -> 3 (x twice counts once), user 3 -> 2, user 5 -> 6; user 4 none
TRAIN = pl.DataFrame(
    {
        "user_id": [1, 2, 2, 2, 2, 3, 3, 5, 5, 5, 5, 5, 5],
        "item_id": ["x", "x", "x", "y", "z", "y", "z", "p", "q", "r", "s", "t", "u"],
    }
)


def test_hand_worked_cohorts_by_given_edges() -> None:
    out = recframe.user_cohorts(RECS, TRAIN, edges=[2, 4])
    assert out.rows() == [(1, 1, "1"), (2, 3, "2-3"), (3, 2, "2-3"), (4, 0, "cold"), (5, 6, "4+")]
    assert out.schema["cohort"] == pl.Enum(["cold", "1", "2-3", "4+"])


def test_equal_size_bins_cut_at_the_count_quantiles() -> None:
    # active users' counts 1, 2, 3, 6: two bins of two users each, cut at count 3
    out = recframe.user_cohorts(RECS, TRAIN, bins=2, name="activity")
    assert dict(zip(out["user_id"], out["activity"].cast(pl.String))) == {1: "1-2", 2: "3+", 3: "1-2", 4: "cold", 5: "3+"}
    # ties leave fewer bins than asked rather than splitting equal counts
    same = recframe.user_cohorts(RECS, TRAIN.filter(pl.col("user_id") == 1), bins=3)
    assert set(same["cohort"].cast(pl.String)) == {"1+", "cold"}


def test_users_or_items_none_of_which_trained_are_all_cold() -> None:
    """Every listed user new to the training data (or no user at all): equal-size bins have no
    count to cut at, and every user is cold (it raised a raw StopIteration)."""
    strangers = TRAIN.with_columns(pl.col("user_id") + 100)
    out = recframe.user_cohorts(RECS, strangers, bins=3)
    assert out.rows() == [(u, 0, "cold") for u in (1, 2, 3, 4, 5)]
    assert recframe.user_cohorts(RECS.head(0), TRAIN, bins=3).height == 0
    items = recframe.item_strata(TRAIN.head(0), bins=3, items=pl.DataFrame({"item_id": ["a", "b"]}))
    assert items.rows() == [("a", 0, "cold"), ("b", 0, "cold")]


def test_truth_users_are_listed_too() -> None:
    truth = pl.DataFrame({"user_id": [9], "item_id": ["a"], "relevance": [1]})
    out = recframe.user_cohorts(RECS.drop("relevance"), TRAIN, truth=truth, bins=1)
    assert (
        out["user_id"].to_list() == [1, 2, 3, 4, 5, 9]
        and out.filter(pl.col("user_id") == 9)["cohort"].cast(pl.String).item() == "cold"
    )


def test_item_strata_by_popularity_with_a_catalog() -> None:
    catalog = pl.DataFrame({"item_id": ["x", "y", "z", "w"]})
    out = recframe.item_strata(TRAIN, edges=[3], items=catalog)
    # x: users 1 and 2; y: 2, 3; z: 2, 3; w: nobody
    assert out.rows() == [("w", 0, "cold"), ("x", 2, "1-2"), ("y", 2, "1-2"), ("z", 2, "1-2")]


def test_cohort_means_weighted_by_their_users_are_the_overall_mean() -> None:
    recs, truth = load_sample()
    # a training log: some of the truth's pairs, none for a tenth of the users (cold)
    train = truth.filter((pl.col("user_id") % 10 != 0) & (pl.col("item_id").hash(7) % 3 == 0)).select("user_id", "item_id")
    options = {"k": 10, "score": "score", "relevance": "rating", "threshold": 4, "metrics": ["ndcg", "recall", "precision"]}
    users = recframe.user_cohorts(recs, train, truth=truth, bins=3)
    assert "cold" in set(users["cohort"].cast(pl.String))
    overall = recframe.summary(recs, truth=truth, by="model", users=users.select("user_id"), **options).sort("model")
    by_cohort = recframe.summary(recs, truth=truth, by=["model", "cohort"], users=users, **options)
    for column in ("ndcg@10", "recall@10", "precision@10"):
        weighted = (
            by_cohort.group_by("model")
            .agg(((pl.col(column) * pl.col("n_users")).sum() / pl.col("n_users").sum()).alias(column))
            .sort("model")
        )
        assert weighted[column].to_list() == pytest.approx(overall[column].to_list(), rel=1e-12)
    assert (
        by_cohort.group_by("model").agg(pl.col("n_users").sum()).sort("model")["n_users"].to_list()
        == overall["n_users"].to_list()
    )


@pytest.mark.parametrize("backend", ["pandas", "duckdb", "lazy"])
def test_cohorts_on_other_backends_equal_polars(backend: str) -> None:
    want = recframe.user_cohorts(RECS, TRAIN, bins=2).with_columns(pl.col("cohort").cast(pl.String))
    if backend == "pandas":
        got = pl.from_pandas(recframe.user_cohorts(RECS.to_pandas(), TRAIN.to_pandas(), bins=2))
    elif backend == "lazy":
        got = recframe.user_cohorts(RECS.lazy(), TRAIN.lazy(), bins=2).collect().with_columns(pl.col("cohort").cast(pl.String))
    else:
        con = duckdb.connect()
        got = pl.from_arrow(
            recframe.user_cohorts(con.from_arrow(RECS.to_arrow()), con.from_arrow(TRAIN.to_arrow()), bins=2).arrow()
        )
    assert got.sort("user_id").rows() == want.rows()
    assert isinstance(recframe.user_cohorts(RECS.to_pandas(), TRAIN.to_pandas()), pd.DataFrame)


@pytest.mark.parametrize(
    ("kwargs", "message", "argument"),
    [
        ({"edges": [5, 3]}, r"edges=\[5, 3\] is not increasing", "edges"),
        ({"edges": [1, 3]}, r"whole numbers above 1", "edges"),
        ({"edges": [2.5]}, r"whole numbers above 1", "edges"),
        ({"edges": "5"}, r"must be a list of whole numbers", "edges"),
        ({"bins": 0}, r"bins=0 is not a positive whole number", "bins"),
        ({"user": "uid"}, r"user='uid' is not a column of frame=", "user"),
    ],
)
def test_bad_cohort_arguments_are_refused(kwargs: dict[str, object], message: str, argument: str) -> None:
    with pytest.raises(RecframeError, match=message) as caught:
        recframe.user_cohorts(RECS, TRAIN, **kwargs)  # type: ignore[arg-type]
    assert caught.value.argument == argument


def test_the_command_line_writes_a_users_file_for_by_cohort(tmp_path) -> None:
    RECS.write_csv(tmp_path / "recs.csv")
    TRAIN.write_csv(tmp_path / "train.csv")

    users = tmp_path / "users.parquet"
    code, _, err = run_cli(
        "cohorts",
        str(tmp_path / "recs.csv"),
        "--train",
        str(tmp_path / "train.csv"),
        "--edges",
        "2,4",
        "--out",
        str(users),
        "--quiet",
    )
    assert code == 0, err
    assert pl.read_parquet(users).rows() == recframe.user_cohorts(RECS, TRAIN, edges=[2, 4]).rows()
    code, _, err = run_cli("evaluate", str(tmp_path / "recs.csv"), "--users", str(users), "--by", "cohort", "--k", "2", "--quiet")
    assert code == 0, err
    for bad, words in (
        (["--edges", "4,2"], "--edges 4,2 is not increasing"),
        (["--bins", "2", "--edges", "3"], "--bins and --edges"),
    ):
        code, _, err = run_cli("cohorts", str(tmp_path / "recs.csv"), "--train", str(tmp_path / "train.csv"), *bad)
        assert code == 2 and words in err


BACKEND_NAMES = WITH_IBIS


def _on(backend: str, frame: pl.DataFrame) -> Any:
    """`frame` on `backend`: one of conftest's in-process ones (DuckDB among them), or Ibis."""
    return ibis_table(frame) if backend == "ibis" else BACKENDS[backend](frame)


def _sorted_rows(result: Any, key: str) -> list[tuple[Any, ...]]:
    if hasattr(result, "to_pyarrow") and not isinstance(result, (pl.DataFrame, pl.LazyFrame, pd.DataFrame)):
        result = result.to_pyarrow()  # an Ibis table
    frame = to_polars(result)
    return frame.with_columns(pl.col(pl.Enum, pl.Categorical).cast(pl.String)).sort(key).rows()


@contextlib.contextmanager
def _within(seconds: float) -> Iterator[None]:
    """Fail a call that takes longer than `seconds` (a loop over every bin would never return)."""

    def stop(*_: object) -> None:
        raise TimeoutError(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_more_bins_than_counts_give_one_bin_per_count_at_once(backend: str) -> None:
    # the active users' counts 1, 2, 3, 6 (users 1, 3, 2, 5): 10**20 bins have room for one bin
    # per count, cut at 2, 3 and 6; the work is the four counts', not the bins'
    with _within(30):
        users = recframe.user_cohorts(_on(backend, RECS), _on(backend, TRAIN), bins=10**20)
        # items' distinct users: x 2, y 2, z 2, the six of user 5 one each: cut at 2
        items = recframe.item_strata(_on(backend, TRAIN), bins=10**20)
    assert _sorted_rows(users, "user_id") == [(1, 1, "1"), (2, 3, "3-5"), (3, 2, "2"), (4, 0, "cold"), (5, 6, "6+")]
    assert [label for _, _, label in _sorted_rows(items, "item_id")] == ["1", "1", "1", "1", "1", "1", "2+", "2+", "2+"]


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_a_thousand_edges_are_a_lookup_not_a_chain_of_conditions(backend: str) -> None:
    # edges 2 .. 1001: a bin per count up to 1000 ("1", "2", ...), then "1001+"; a chain of one
    # `when` per bin raised RecursionError from about 600
    edges = list(range(2, 1002))
    users = recframe.user_cohorts(_on(backend, RECS), _on(backend, TRAIN), edges=edges)
    assert _sorted_rows(users, "user_id") == [(1, 1, "1"), (2, 3, "3"), (3, 2, "2"), (4, 0, "cold"), (5, 6, "6")]
    items = recframe.item_strata(_on(backend, TRAIN), edges=edges)
    assert [label for _, _, label in _sorted_rows(items, "item_id")] == ["1", "1", "1", "1", "1", "1", "2", "2", "2"]
    if backend == "polars":
        assert users.schema["cohort"] == pl.Enum(["cold", *map(str, range(1, 1001)), "1001+"])


def test_the_command_line_takes_a_bins_past_a_64_bit_integer(tmp_path: Path) -> None:
    RECS.write_csv(tmp_path / "recs.csv")
    TRAIN.write_csv(tmp_path / "train.csv")
    args = ["cohorts", str(tmp_path / "recs.csv"), "--train", str(tmp_path / "train.csv"), "--bins", "99999999999999999999"]
    with _within(30):
        code, _, err = run_cli(*args, "--out", tmp_path / "users.csv", "--quiet")
    assert code == 0, err
    assert pl.read_csv(tmp_path / "users.csv").sort("user_id")["cohort"].to_list() == ["1", "3-5", "2", "cold", "6+"]


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_a_null_training_user_or_item_is_refused_as_summary_refuses_it(backend: str) -> None:
    # user 1's one real training item and a null one: n_train was 2; summary(train=) refuses it
    for column in ("item_id", "user_id"):
        train = pl.DataFrame({"user_id": [1, 1, 2], "item_id": ["x", "y", "x"]}).with_columns(
            pl.when(pl.int_range(pl.len()) == 1).then(None).otherwise(pl.col(column)).alias(column)
        )
        said = f"column '{column}' of train= has 1 null value(s); each training interaction needs a user and an item"
        calls: list[Callable[[pl.DataFrame], Any]] = [
            lambda t: recframe.user_cohorts(_on(backend, RECS), _on(backend, t)),
            lambda t: recframe.item_strata(_on(backend, t)),
            lambda t: recframe.summary(RECS, k=2, metrics=["novelty"], train=t),
        ]
        for call in calls:
            with pytest.raises(RecframeError, match=re.escape(said)) as caught:
                call(train)
            assert caught.value.argument == "train"


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_id_widths_are_aligned_and_kinds_refused_by_name(backend: str) -> None:
    narrow = RECS.with_columns(pl.col("user_id").cast(pl.Int32))
    # Int32 users of truth= (user 6 listed there only) against Int64 ones: one Int64 column
    truth = pl.DataFrame({"user_id": [1, 6], "item_id": ["a", "b"], "relevance": [1, 1]}).with_columns(
        pl.col("user_id").cast(pl.Int32)
    )
    got = recframe.user_cohorts(_on(backend, RECS), _on(backend, TRAIN), edges=[2, 4], truth=_on(backend, truth))
    want = [(1, 1, "1"), (2, 3, "2-3"), (3, 2, "2-3"), (4, 0, "cold"), (5, 6, "4+"), (6, 0, "cold")]
    assert _sorted_rows(got, "user_id") == want
    got = recframe.user_cohorts(_on(backend, narrow), _on(backend, TRAIN), edges=[2, 4])
    assert _sorted_rows(got, "user_id") == want[:5]
    # text training users against integer ones, text catalog items against integer ones: named
    text_users = TRAIN.with_columns(pl.col("user_id").cast(pl.String))
    with pytest.raises(RecframeError, match=r"column 'user_id' holds Int64 in frame= but String in train=") as caught:
        recframe.user_cohorts(_on(backend, RECS), _on(backend, text_users))
    assert "Hint: cast one of them first" in str(caught.value)
    catalog = pl.DataFrame({"item_id": [1, 2]})
    with pytest.raises(RecframeError, match=r"column 'item_id' holds String in train= but Int64 in items="):
        recframe.item_strata(_on(backend, TRAIN), items=_on(backend, catalog))


@pytest.mark.parametrize(
    ("call", "name", "said"),
    [
        (
            "user_cohorts",
            "user_id",
            r"name='user_id' names the column user_cohorts adds, and 'user_id' is a column of its output",
        ),
        ("user_cohorts", "n_train", r"name='n_train' names the column user_cohorts adds, and 'n_train' is a column"),
        ("user_cohorts", "__rf_n", r"is a name recframe keeps for itself"),
        ("user_cohorts", "", r"name='' is not a column name"),
        ("item_strata", "item_id", r"name='item_id' names the column item_strata adds, and 'item_id' is a column"),
        ("item_strata", "n_train", r"'n_train' is a column of its output \(item_id, n_train\)"),
    ],
)
def test_a_name_that_clashes_with_an_output_column_is_refused(call: str, name: str, said: str) -> None:
    for backend in ("polars", "duckdb"):
        with pytest.raises(RecframeError, match=said) as caught:
            if call == "user_cohorts":
                recframe.user_cohorts(_on(backend, RECS), _on(backend, TRAIN), name=name)
            else:
                recframe.item_strata(_on(backend, TRAIN), name=name)
        assert caught.value.argument == "name"
        assert "Hint: pass" in str(caught.value)
