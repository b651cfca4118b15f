"""Regenerate the bundled sample: ``python -m recframe.data.make_sample`` (deterministic).

Two models recommend 10 items to each of 300 users of a 400-item catalogue; the truth holds
each user's held-out ratings on a 1-5 scale. Model "popular" ranks by popularity, model
"personal" sees a noisy copy of the user's taste, so it should win. A few users got no list
from "popular" and some rated nothing 4 or more: both cases the metrics must handle.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).parent


def make(seed: int = 7, n_users: int = 300, n_items: int = 400, k: int = 10) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    popularity = rng.zipf(1.6, n_items).astype(float)
    truth_rows, rec_rows = [], []
    for u in range(1, n_users + 1):
        n_rated = int(rng.integers(3, 15))
        p = popularity / popularity.sum()
        rated = rng.choice(n_items, size=n_rated, replace=False, p=p)
        ratings = rng.integers(1, 6, size=n_rated)
        truth_rows += [(u, f"i{i:03d}", int(r)) for i, r in zip(rated, ratings)]
        taste = np.zeros(n_items)
        taste[rated] = ratings
        personal = taste + rng.normal(0, 1.5, n_items) + 0.1 * np.log(popularity)
        pop = np.log(popularity) + rng.normal(0, 0.5, n_items)
        for model, score in (("personal", personal), ("popular", pop)):
            if model == "popular" and u % 50 == 0:
                continue  # no list for this user from this model
            top = np.argsort(-score, kind="stable")[:k]
            rec_rows += [(model, u, f"i{i:03d}", pos + 1, round(float(score[i]), 4)) for pos, i in enumerate(top)]
    recs = pl.DataFrame(rec_rows, schema=["model", "user_id", "item_id", "rank", "score"], orient="row")
    truth = pl.DataFrame(truth_rows, schema=["user_id", "item_id", "rating"], orient="row")
    return recs, truth


if __name__ == "__main__":
    recs, truth = make()
    recs.write_csv(HERE / "recs.csv")
    truth.write_csv(HERE / "truth.csv")
    print(f"wrote {recs.height} recommendations and {truth.height} truth rows to {HERE}")
