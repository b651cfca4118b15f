"""Metrics of graded gain discounted by rank: DCG and its normalised form nDCG."""

from __future__ import annotations

from recframe.metrics._registry import Metric, col

DCG = Metric(
    name="dcg",
    terms=lambda o: ("dcg@", "n_relevant"),
    finish=lambda k, o: col("dcg@", k),
)

NDCG = Metric(
    name="ndcg",
    # a relevant item always has a positive gain (see the threshold rules), so IDCG > 0
    terms=lambda o: ("dcg@", "idcg@", "n_relevant"),
    finish=lambda k, o: col("dcg@", k) / col("idcg@", k),
)
