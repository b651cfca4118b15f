"""Regenerate the workflow dataset: ``python -m recframe.data.make_workflow`` (deterministic).

A synthetic interaction log shaped like real recommendation data, small enough to ship
(about 1 MB of parquet in ``workflow/``) and realistic enough that accuracy comes out low, as it
does on real data:

- **Items** (3,000): a ``category`` out of 15 (genre-like, some much larger than others) and a
  popularity that falls off as a power law (Zipf exponent 1.1): a few items are everywhere,
  most are rarely seen.
- **Users** (1,500): a signup ``cohort`` (four half-years, 2023-H1 to 2024-H2, later cohorts
  larger) and a taste: a preference over the categories drawn from a sparse Dirichlet, so
  that most users care about two or three categories. Activity is log-normal: most users
  rate a few dozen items, a few rate hundreds.
- **Interactions** (user_id, item_id, rating 1-5, timestamp): each user rates items drawn in
  proportion to popularity x taste; a rating is higher in the user's favourite categories.
  Each user is active from their signup on, so late cohorts have little or no history.
- **The split** is global and by time: every interaction before the cut (the 80th
  percentile of timestamps) is ``train``, the rest ``test``. A user may so have test
  interactions and little or no training history: the cold users of an evaluation.

The generator is vectorised with numpy, seeded, and writes ``train``, ``test``, ``users``
and ``items`` as parquet files; :func:`recframe.data.load_workflow` reads them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).parent / "workflow"
COHORTS = ("2023-H1", "2023-H2", "2024-H1", "2024-H2")
DAY = 86_400
START = 1_672_531_200  # 2023-01-01 00:00 UTC, seconds


def make(seed: int = 11, n_users: int = 1_500, n_items: int = 3_000, n_categories: int = 15) -> dict[str, pl.DataFrame]:
    """The four frames: train, test, users and items."""
    rng = np.random.default_rng(seed)
    # items: category sizes are uneven; popularity is a power law over a random order
    category_share = rng.dirichlet(np.full(n_categories, 2.0))
    category = rng.choice(n_categories, size=n_items, p=category_share)
    popularity = 1.0 / np.arange(1, n_items + 1) ** 1.1
    popularity = popularity[rng.permutation(n_items)]
    # users: cohorts grow over time; signup within the cohort's half-year
    cohort = rng.choice(len(COHORTS), size=n_users, p=[0.15, 0.2, 0.3, 0.35])
    signup = START + (cohort * 182 + rng.integers(0, 182, size=n_users)) * DAY
    end = START + 4 * 182 * DAY
    taste = rng.dirichlet(np.full(n_categories, 0.15), size=n_users)
    activity = np.clip(np.round(rng.lognormal(mean=3.2, sigma=0.9, size=n_users)), 3, 400).astype(int)

    users, items, ratings, times = [], [], [], []
    for u in range(n_users):
        weight = popularity * (0.05 + taste[u, category])
        n = min(activity[u], n_items)
        chosen = rng.choice(n_items, size=n, replace=False, p=weight / weight.sum())
        liking = taste[u, category[chosen]] * n_categories  # > 1 in a favourite category
        rating = np.clip(np.round(2.6 + 0.9 * np.log1p(liking) + rng.normal(0, 0.9, n)), 1, 5)
        # active from signup to the end, more often early on
        when = signup[u] + ((end - signup[u]) * rng.beta(1.2, 2.0, n)).astype(np.int64)
        users.append(np.full(n, u + 1))
        items.append(chosen + 1)
        ratings.append(rating.astype(np.int64))
        times.append(when)
    log = pl.DataFrame(
        {
            "user_id": np.concatenate(users).astype(np.int64),
            "item_id": np.concatenate(items).astype(np.int64),
            "rating": np.concatenate(ratings),
            "timestamp": np.concatenate(times).astype(np.int64),
        }
    ).sort("timestamp", "user_id", "item_id")
    cut = int(log["timestamp"].quantile(0.8, "nearest") or 0)  # the log is never empty
    return {
        "train": log.filter(pl.col("timestamp") < cut),
        "test": log.filter(pl.col("timestamp") >= cut),
        "users": pl.DataFrame(
            {
                "user_id": np.arange(1, n_users + 1, dtype=np.int64),
                "cohort": [COHORTS[c] for c in cohort],
                "signup": signup.astype(np.int64),
            }
        ),
        "items": pl.DataFrame(
            {
                "item_id": np.arange(1, n_items + 1, dtype=np.int64),
                "category": [f"c{c:02d}" for c in category],
            }
        ),
    }


if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    for name, frame in make().items():
        frame.write_parquet(HERE / f"{name}.parquet", statistics=False)
        print(f"wrote {name}: {frame.height:,} rows to {HERE / f'{name}.parquet'}")
