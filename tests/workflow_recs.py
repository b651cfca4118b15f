"""The bundled workflow data with three models' top 10 for every user (popular, random and a mix),
for the tests of ``recframe.inspect`` (test_inspect_users.py) and of how a comparison is marked
(test_comparison_marks.py). Imported by those tests, not collected itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from recframe.data import load_workflow

WORKFLOW = load_workflow()
TRAIN, TEST = WORKFLOW.train, WORKFLOW.test
USERS = WORKFLOW.users.select("user_id", pl.col("cohort").alias("segment"))
COLD = sorted(set(TEST["user_id"].to_list()) - set(TRAIN["user_id"].to_list()))  # no training row


def _recs() -> pl.DataFrame:
    """Three models' top 10 for every user: the 10 most popular training items, a seeded random
    10, and a mix of the next most popular and random items."""
    rng = np.random.default_rng(0)
    popular = TRAIN.group_by("item_id").len().sort(["len", "item_id"], descending=[True, False])["item_id"].to_list()
    catalog = WORKFLOW.items["item_id"].to_list()
    rows = []
    for user in USERS["user_id"].to_list():
        lists = {
            "popular": popular[:10],
            "random": [int(i) for i in rng.choice(catalog, 10, replace=False)],
            "mix": list(dict.fromkeys([*popular[5:12], *(int(i) for i in rng.choice(catalog, 5, replace=False))]))[:10],
        }
        rows += [(model, user, item, rank) for model, items in lists.items() for rank, item in enumerate(items, 1)]
    return pl.DataFrame(rows, schema=["model", "user_id", "item_id", "rank"], orient="row")


RECS = _recs()
OPTIONS = {"truth": TEST, "relevance": "rating", "threshold": 4, "by": "model"}


FLAGS = ["--relevance", "rating", "--threshold", "4"]


def write_files(folder: Path) -> Path:
    """The frames as parquet files in ``folder``, for the command line: recs, test, train, users, items."""
    RECS.write_parquet(folder / "recs.parquet")
    TEST.write_parquet(folder / "test.parquet")
    TRAIN.write_parquet(folder / "train.parquet")
    USERS.write_parquet(folder / "users.parquet")
    WORKFLOW.items.write_parquet(folder / "items.parquet")
    return folder
