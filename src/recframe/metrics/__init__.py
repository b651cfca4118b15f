"""The metric registry: each metric names the per-user terms it needs and how to finish them.

Adding a metric is one :class:`Metric` entry in a family module plus a hand-worked test.
"""

from __future__ import annotations

from recframe.metrics._registry import Metric, term
from recframe.metrics.gain_based import DCG, NDCG
from recframe.metrics.rank_based import AP, RR
from recframe.metrics.set_based import F1, HIT_RATE, PRECISION, R_PRECISION, RECALL

#: name -> metric, in the default output order.
REGISTRY: dict[str, Metric] = {m.name: m for m in (PRECISION, RECALL, F1, HIT_RATE, R_PRECISION, AP, RR, DCG, NDCG)}

__all__ = ["REGISTRY", "Metric", "term"]
