"""The bundled data: a small two-model sample (:func:`load_sample`) and a realistic
interaction log split by time for whole evaluation workflows (:func:`load_workflow`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

import polars as pl

from recframe.errors import RecframeError

__all__ = ["HERE", "Workflow", "load_sample", "load_workflow"]

HERE = Path(__file__).parent


def __dir__() -> list[str]:
    """The loaders and the data folder only (``dir(recframe.data)``, tab completion), not the
    names this module imports (``Path``, ``pl``, ``Any``)."""
    return sorted(__all__)


def load_sample(kind: Literal["polars", "pandas"] = "polars") -> tuple[Any, Any]:
    """Return ``(recs, truth)``: the bundled recommendations and ratings.

    ``recs`` has columns model, user_id, item_id, rank, score (two models, 10 items per user);
    ``truth`` has user_id, item_id, rating (1-5). Evaluate them with
    ``recframe.summary(recs, truth=truth, relevance="rating", threshold=4, by="model")``.

    Examples
    --------
    >>> from recframe.data import load_sample
    >>> recs, truth = load_sample()
    >>> recs.columns, truth.columns
    (['model', 'user_id', 'item_id', 'rank', 'score'], ['user_id', 'item_id', 'rating'])
    """
    if kind not in ("polars", "pandas"):
        raise RecframeError(f'kind={kind!r} is not a known kind. Hint: pass "polars" or "pandas".')
    recs = pl.read_csv(HERE / "recs.csv")
    truth = pl.read_csv(HERE / "truth.csv")
    if kind == "pandas":
        return recs.to_pandas(), truth.to_pandas()
    return recs, truth


class Workflow(NamedTuple):
    """The workflow dataset's frames (see :func:`load_workflow`)."""

    train: Any
    test: Any
    users: Any
    items: Any


def load_workflow(kind: Literal["polars", "pandas"] = "polars") -> Workflow:
    """Return the workflow dataset: ``(train, test, users, items)``, split by time.

    A synthetic interaction log made by ``python -m recframe.data.make_workflow`` (its
    docstring has the recipe), shaped like real data: 1,500 users in four signup cohorts,
    3,000 items in 15 categories with power-law popularity, 1-5 ratings with timestamps. Every
    interaction before the 80th percentile of time is in ``train``, the rest in ``test``, so
    some test users have little or no training history (cold users).

    - ``train``, ``test``: user_id, item_id, rating, timestamp (seconds)
    - ``users``: user_id, cohort (``"2023-H1"`` ... ``"2024-H2"``), signup (seconds)
    - ``items``: item_id, category (``"c00"`` ... ``"c14"``)

    ``notebooks/workflow.ipynb`` builds recommenders from ``train`` and evaluates them on
    ``test`` with ``exclude=train`` and per segment.

    Examples
    --------
    >>> from recframe.data import load_workflow
    >>> data = load_workflow()
    >>> data.train.columns, data.users.columns, data.items.columns
    (['user_id', 'item_id', 'rating', 'timestamp'], ['user_id', 'cohort', 'signup'], ['item_id', 'category'])
    >>> data.train["timestamp"].max() < data.test["timestamp"].min()
    True
    """
    if kind not in ("polars", "pandas"):
        raise RecframeError(f'kind={kind!r} is not a known kind. Hint: pass "polars" or "pandas".')
    frames = {name: pl.read_parquet(HERE / "workflow" / f"{name}.parquet") for name in Workflow._fields}
    if kind == "pandas":
        frames = {name: frame.to_pandas() for name, frame in frames.items()}
    return Workflow(**frames)
