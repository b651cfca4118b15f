"""The bundled workflow data as notebooks/workflow.ipynb evaluates it, made lighter for the
page's tests: three models (popular, category, itemknn), a segment (warm and cold users),
``train=``, ``items=`` and the item groups (``category``). The models are the notebook's with
fewer candidates (60 per user rather than 300), so the page builds in seconds."""

from __future__ import annotations

import functools
from typing import Any

import polars as pl

from recframe.data import load_workflow

CANDIDATES = 60


@functools.cache
def workflow() -> tuple[pl.DataFrame, dict[str, Any]]:
    """(recs, the options of the page: truth, users, exclude, train, items, score, relevance, threshold, k)."""
    train, test, users, items = load_workflow()
    popularity = train.group_by("item_id").agg(pl.col("user_id").n_unique().alias("n_users"))
    test_users = test.select("user_id").unique()
    order = {"by": ["n_users", "item_id"], "descending": [True, False]}
    popular = test_users.join(popularity.sort(**order).head(CANDIDATES), how="cross").select(
        pl.lit("popular").alias("model"), "user_id", "item_id", pl.col("n_users").cast(pl.Float64).alias("score")
    )
    favourite = (
        train.join(items, on="item_id").group_by("user_id", "category").len()
        .sort(["user_id", "len", "category"], descending=[False, True, False])
        .group_by("user_id").first().select("user_id", "category")
    )  # fmt: skip
    by_category = popularity.join(items, on="item_id").sort(**order).group_by("category").head(CANDIDATES)
    category = (
        test_users.join(favourite, on="user_id")
        .join(by_category, on="category")
        .select(pl.lit("category").alias("model"), "user_id", "item_id", pl.col("n_users").cast(pl.Float64).alias("score"))
    )
    pairs = (
        train.select("user_id", "item_id")
        .join(train.select("user_id", pl.col("item_id").alias("other")), on="user_id")
        .filter(pl.col("item_id") != pl.col("other"))
        .group_by("item_id", "other").len("co")
    )  # fmt: skip
    neighbours = (
        pairs.join(popularity, on="item_id")
        .join(popularity.rename({"item_id": "other", "n_users": "n_other"}), on="other")
        .with_columns(sim=pl.col("co") / (pl.col("n_users") * pl.col("n_other")).sqrt())
        .sort(["item_id", "sim", "other"], descending=[False, True, False]).group_by("item_id").head(10)
    )  # fmt: skip
    itemknn = (
        train.select("user_id", "item_id").join(test_users, on="user_id")
        .join(neighbours.select("item_id", "other", "sim"), on="item_id")
        .group_by("user_id", pl.col("other").alias("item_id")).agg(pl.col("sim").sum().alias("score"))
        .sort(["user_id", "score", "item_id"], descending=[False, True, False])
        .group_by("user_id", maintain_order=True).head(CANDIDATES)
        .select(pl.lit("itemknn").alias("model"), "user_id", "item_id", "score")
    )  # fmt: skip
    n_train = train.group_by("user_id").len("n_train")
    segments = (
        users.join(n_train, on="user_id", how="left")
        .with_columns(segment=pl.when(pl.col("n_train").fill_null(0) >= 10).then(pl.lit("warm")).otherwise(pl.lit("cold")))
        .filter(pl.col("user_id").is_in(test_users["user_id"].implode()))
        .select("user_id", "segment")
    )  # fmt: skip
    options = {
        "truth": test.select("user_id", "item_id", "rating"), "users": segments, "exclude": train, "train": train,
        "items": items, "score": "score", "relevance": "rating", "threshold": 4, "k": [10, 20],
    }  # fmt: skip
    return pl.concat([popular, category, itemknn]), options
