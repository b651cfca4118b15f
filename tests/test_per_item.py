"""Per-item metrics (issue 40, item 4): who each item reaches, from the same evaluation as
per_user. Hand-worked cases and a slow, obvious reference over the rows, on every backend."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import assert_values_close, run_cli, to_polars
from recframe import RecframeError

RECS = pl.DataFrame(
    {
        "model": ["A", "A", "A", "A", "A", "B", "B", "B"],
        "user_id": [1, 1, 1, 2, 2, 1, 1, 2],
        "item_id": ["a", "b", "c", "a", "c", "c", "a", "b"],
        "rank": [1, 2, None, 2, 1, 1, 2, 1],
        "relevance": [1, None, 1, 1, None, 1, 1, None],
    }
)


def test_hand_worked_by_model() -> None:
    out = recframe.per_item(RECS, k=[1, 2], by="model")
    a = {row["item_id"]: row for row in out.filter(pl.col("model") == "A").iter_rows(named=True)}
    # model A: a at 1 for u1 (relevant), at 2 for u2 (relevant); b at 2 for u1; c at 1 for u2, relevant to u1 (unranked)
    assert (a["a"]["n_users"], a["a"]["n_relevant"], a["a"]["recommended@1"], a["a"]["hits@1"], a["a"]["recall@1"]) == (
        2,
        2,
        1,
        1,
        0.5,
    )
    assert (a["a"]["recommended@2"], a["a"]["hits@2"], a["a"]["recall@2"]) == (2, 2, 1.0)
    assert a["a"]["exposure@2"] == pytest.approx(1 / math.log2(2) + 1 / math.log2(3))
    assert a["b"]["recall@2"] is None and a["b"]["n_relevant"] == 0
    assert (a["c"]["n_users"], a["c"]["n_relevant"], a["c"]["hits@2"], a["c"]["recall@2"]) == (1, 1, 0, 0.0)
    b = {row["item_id"]: row for row in out.filter(pl.col("model") == "B").iter_rows(named=True)}
    assert (b["c"]["hits@1"], b["a"]["hits@1"], b["a"]["hits@2"]) == (1, 0, 1)
    assert out.columns[:4] == ["model", "item_id", "n_users", "n_relevant"]


def reference(df: pl.DataFrame, ks: list[int], threshold: float) -> pl.DataFrame:
    """Per (model, item), by a loop over the rows."""
    acc: dict[tuple, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in df.iter_rows(named=True):
        key = (row["model"], row["item_id"])
        rel = row["relevance"] is not None and row["relevance"] >= threshold
        rank = row["rank"]
        acc[key]["n_users"] += rank is not None
        acc[key]["n_relevant"] += rel
        for k in ks:
            within = rank is not None and rank <= k
            acc[key][f"recommended@{k}"] += within
            acc[key][f"hits@{k}"] += within and rel
            acc[key][f"exposure@{k}"] += 1 / math.log2(1 + rank) if within else 0.0
    rows = []
    for (model, item), v in sorted(acc.items()):
        if not v["n_users"] and not v["n_relevant"]:
            continue  # judged not relevant and never ranked: it reaches nobody, and has no row
        row = {"model": model, "item_id": item, **{c: v[c] for c in ("n_users", "n_relevant")}}
        for k in ks:
            row |= {
                f"recommended@{k}": v[f"recommended@{k}"],
                f"hits@{k}": v[f"hits@{k}"],
                f"recall@{k}": v[f"hits@{k}"] / v["n_relevant"] if v["n_relevant"] else None,
                f"exposure@{k}": v[f"exposure@{k}"],
            }
        rows.append(row)
    return pl.DataFrame(rows)


def test_per_item_matches_the_reference_on_every_backend(constructor) -> None:
    rng = np.random.default_rng(5)
    n = 500
    df = (
        pl.DataFrame(
            {
                "model": rng.choice(["A", "B"], n),
                "user_id": rng.integers(0, 40, n),
                "item_id": rng.integers(0, 30, n),
                "rank": rng.integers(1, 15, n),
                "relevance": rng.integers(0, 4, n),
            }
        )
        .unique(["model", "user_id", "item_id"])
        .unique(["model", "user_id", "rank"])
        .with_columns(pl.when(pl.col("rank") > 12).then(None).otherwise(pl.col("rank")).alias("rank"))
    )
    ks = [3, 10]
    got = to_polars(recframe.per_item(constructor(df), k=ks, by="model", threshold=2, rank_gaps="keep")).sort("model", "item_id")
    want = reference(df, ks, 2)
    assert got.height == want.height
    for column in want.columns:
        g, w = got[column].to_list(), want[column].to_list()
        if column in ("model", "item_id"):
            assert g == w
        else:
            assert_values_close(g, w, label=column)


def test_the_same_checks_and_options_as_per_user() -> None:
    with pytest.raises(RecframeError, match="duplicate"):
        recframe.per_item(pl.concat([RECS, RECS.head(1)]), k=2, by="model")
    users = pl.DataFrame({"user_id": [1]})
    only = recframe.per_item(RECS, k=2, by="model", users=users, unlisted_users="drop")
    assert only.filter(pl.col("model") == "A", pl.col("item_id") == "a")["n_users"].item() == 1
    # exclude= removes the pair and re-ranks: a is gone from u1's list in A, b moves up to 1
    seen = pl.DataFrame({"user_id": [1], "item_id": ["a"]})
    out = recframe.per_item(RECS, k=1, by="model", exclude=seen)
    assert out.filter(pl.col("model") == "A", pl.col("item_id") == "b")["recommended@1"].item() == 1
    lazy = recframe.per_item(RECS.lazy(), k=2, by="model")
    assert isinstance(lazy, pl.LazyFrame) and lazy.collect().equals(recframe.per_item(RECS, k=2, by="model"))
    assert RECS.recmetrics.per_item(k=2, by="model").equals(recframe.per_item(RECS, k=2, by="model"))


def test_the_command_line_writes_the_per_item_table(tmp_path) -> None:
    import io

    path = tmp_path / "recs.csv"
    RECS.write_csv(path)
    code, out, err = run_cli("per-item", str(path), "--k", "1,2", "--by", "model", "--format", "csv", "--quiet")
    assert code == 0, err
    got = pl.read_csv(io.StringIO(out))
    want = recframe.per_item(RECS, k=[1, 2], by="model")
    assert (
        got.select("model", "item_id", "n_users", "hits@2").rows() == want.select("model", "item_id", "n_users", "hits@2").rows()
    )
    code, _, err = run_cli("per-item", str(path), "--metrics", "ndcg")
    assert code == 2 and "--metrics" in err


@pytest.mark.parametrize("column", ["n_users", "n_relevant", "recall@3", "exposure@3"])
def test_an_item_column_named_as_a_result_column_is_refused_on_every_backend(column, constructor_or_ibis) -> None:
    """Issue 58, item 13: an item column named n_users, n_relevant or recall@3 made a result
    with two columns of that name (a raw DuplicateError on Polars)."""
    frame = RECS.rename({"item_id": column})
    with pytest.raises(RecframeError) as caught:
        to_polars(recframe.per_item(constructor_or_ibis(frame), k=3, item=column, by="model"))
    assert str(caught.value) == (
        f"item={column!r}: column {column!r} has the name of a column of per_item's result (n_users, n_relevant, "
        "recommended@3, hits@3, recall@3, exposure@3). Hint: rename the column in the inputs and pass the new name, "
        'e.g. item="item_id".'
    )
    assert caught.value.argument == "item"
    # an @ name of another k is no clash
    assert to_polars(
        recframe.per_item(constructor_or_ibis(RECS.rename({"item_id": "recall@5"})), k=3, item="recall@5", by="model")
    ).height
