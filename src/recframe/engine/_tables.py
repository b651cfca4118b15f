"""Small helpers shared by compare, curve, plot and report: result columns and eager tables."""

from __future__ import annotations

from typing import Any

import polars as pl

from recframe.engine import _frames
from recframe.metrics import REGISTRY

#: Suffixes ``summary(ci=...)`` adds after a metric column.
INTERVAL_SUFFIXES = ("_std", "_lo", "_hi")


def metric_of(name: str) -> str | None:
    """The metric an output column belongs to: ``"ndcg@10"`` and ``"ndcg"`` to ndcg,
    ``"iprec_at_recall_10"`` (one of a metric's variants) to iprec_at_recall; None for any other
    column (keys, counts, interval bounds).

    >>> metric_of("ndcg@10"), metric_of("iprec_at_recall_10"), metric_of("ndcg@10_lo"), metric_of("n_users")
    ('ndcg', 'iprec_at_recall', None, None)
    """
    base, at, k = name.partition("@")
    if base in REGISTRY:
        return base if not at or k.isdigit() else None
    stem, _, value = base.rpartition("_")
    metric = REGISTRY.get(stem)
    if not at and metric is not None and value.isdigit() and int(value) in metric.variants:
        return stem
    return None


def is_metric_column(name: str) -> bool:
    """True for a metric output column: ``"ndcg@10"``, a bare ``"r_precision"`` or a variant
    ``"iprec_at_recall_10"``.

    >>> is_metric_column("ndcg@10"), is_metric_column("r_precision"), is_metric_column("ndcg@10_lo")
    (True, True, False)
    """
    return metric_of(name) is not None


def metric_columns(columns: list[str]) -> list[str]:
    """The metric columns among ``columns``, in their order.

    >>> metric_columns(["model", "n_users", "precision@5", "precision@5_lo", "rr@5"])
    ['precision@5', 'rr@5']
    """
    return [c for c in columns if is_metric_column(c)]


def higher_is_better(column: str) -> bool:
    """Whether larger values of a metric column are better, as its registry entry declares
    (a column of no registered metric counts as larger-is-better).

    >>> higher_is_better("ndcg@10")
    True
    """
    name = metric_of(column)
    return REGISTRY[name].higher_is_better if name is not None else True


def eager(frame: Any, arg: str) -> pl.DataFrame:
    """Any supported frame as an eager Polars DataFrame (a LazyFrame is collected).

    >>> eager(pl.DataFrame({"a": [1]}).lazy(), "frame").shape
    (1, 1)
    """
    lf, _ = _frames.lazy(frame, arg)
    # result tables are small (one row per group, or per user): a DuckDB or Spark one is fetched
    return lf.collect("polars").to_native()
