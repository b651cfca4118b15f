"""The metric registry: each metric names the terms it needs and how to finish them; each term
(in :mod:`recframe.metrics.terms`) says which rows it reads and what it sums there.

Adding a metric is one :class:`Metric` entry in a family module plus a hand-worked test; a new
term is one :class:`Term` declaration.
"""

from __future__ import annotations

from recframe.metrics import terms as _terms  # noqa: F401  (declares the terms and features)
from recframe.metrics._registry import FEATURES, TERMS, Feature, Metric, Rows, Term, declare, term
from recframe.metrics.beyond import BEYOND_ACCURACY
from recframe.metrics.gain_based import DCG, NDCG
from recframe.metrics.ir import IR_TOOLBOX
from recframe.metrics.item_groups import ITEM_GROUPS
from recframe.metrics.rank_based import AP, RR
from recframe.metrics.set_based import F1, HIT_RATE, PRECISION, R_PRECISION, RECALL

#: name -> metric, in the default output order.
REGISTRY: dict[str, Metric] = {
    m.name: m
    for m in (PRECISION, RECALL, F1, HIT_RATE, R_PRECISION, AP, RR, DCG, NDCG, *IR_TOOLBOX, *BEYOND_ACCURACY, *ITEM_GROUPS)
}


def default_metrics() -> tuple[str, ...]:
    """metrics=None: every user-level metric that needs no input beyond the frame, but the rest
    of the IR toolbox (bpref, iprec_at_recall, rbp, ...), which is asked for by name."""
    return tuple(name for name, m in REGISTRY.items() if m.level == "user" and not m.requires and m.default)


__all__ = ["FEATURES", "REGISTRY", "TERMS", "default_metrics", "Feature", "Metric", "Rows", "Term", "declare", "term"]
