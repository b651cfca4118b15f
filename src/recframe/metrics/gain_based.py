"""Metrics of graded gain discounted by rank: DCG and its normalised form nDCG."""

from __future__ import annotations

import narwhals as nw

from recframe.conventions import Conventions
from recframe.metrics._registry import Metric, col, ideal_dcg_of_ones

DCG = Metric(
    name="dcg",
    terms=lambda o: ("dcg@", "n_relevant"),
    finish=lambda k, o: col("dcg@", k),
    defined="graded",
)


def _ndcg(k: int | None, o: Conventions) -> nw.Expr:
    if o.idcg == "k":
        # RecTools' default: the ideal list is k items of gain 1, whatever the user has
        return col("dcg@", k) / ideal_dcg_of_ones(k, o.discount)  # type: ignore[arg-type]
    # a relevant item always has a positive gain (see the threshold rules), so IDCG > 0
    return col("dcg@", k) / col("idcg@", k)


NDCG = Metric(
    name="ndcg",
    terms=lambda o: ("dcg@", "n_relevant") if o.idcg == "k" else ("dcg@", "idcg@", "n_relevant"),
    finish=_ndcg,
    defined="graded",
)
