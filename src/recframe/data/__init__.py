"""The bundled sample: two models' top-10 lists and the users' held-out 1-5 ratings."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import polars as pl

HERE = Path(__file__).parent


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
        raise ValueError(f'kind={kind!r}: pass "polars" or "pandas".')
    recs = pl.read_csv(HERE / "recs.csv")
    truth = pl.read_csv(HERE / "truth.csv")
    if kind == "pandas":
        return recs.to_pandas(), truth.to_pandas()
    return recs, truth
