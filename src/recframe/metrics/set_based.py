"""Metrics of the set of relevant items in the top k: precision, recall, F1, hit rate, R-precision."""

from __future__ import annotations

import narwhals as nw

from recframe.conventions import Conventions
from recframe.metrics._registry import Metric, at_least_one, col, cutoff, divided


def _precision(k: int | None, o: Conventions) -> nw.Expr:
    if o.precision_denominator == "retrieved":
        # hits over the items actually recommended within the top k; 0 when none were
        return col("hits@", k) / at_least_one(col("retrieved@", k))
    if o.precision_denominator == "min_k_relevant":
        # RecTools' Precision(r_precision=True): the hits in the top k over what is achievable
        return col("hits@", k) / at_least_one(nw.min_horizontal(col("n_relevant"), nw.lit(k)))
    return divided(col("hits@", k), cutoff(k))


def _precision_terms(o: Conventions) -> tuple[str, ...]:
    extra = {"retrieved": ("retrieved@",), "min_k_relevant": ("n_relevant",)}
    return ("hits@", *extra.get(o.precision_denominator, ()))


PRECISION = Metric(
    name="precision",
    terms=_precision_terms,
    finish=_precision,
    defined="always",
)


def _recall(k: int | None, o: Conventions) -> nw.Expr:
    if o.recall_denominator == "min_k_relevant":
        # LensKit's Recall@k: over what the top k can hold, so a perfect list scores 1
        return col("hits@", k) / at_least_one(nw.min_horizontal(col("n_relevant"), nw.lit(k)))
    return col("hits@", k) / at_least_one(col("n_relevant"))


RECALL = Metric(
    name="recall",
    terms=lambda o: ("hits@", "n_relevant"),
    finish=_recall,
)


def _f1(k: int | None, o: Conventions) -> nw.Expr:
    p, r = _precision(k, o), RECALL.finish(k, o)
    # the harmonic mean is 0, not undefined, when both precision and recall are 0
    return nw.when(p + r > 0).then(2 * p * r / (p + r)).otherwise(0.0)


F1 = Metric(
    name="f1",
    terms=lambda o: (*_precision_terms(o), "n_relevant"),
    finish=_f1,
)


def _hit_rate(k: int | None, o: Conventions) -> nw.Expr:
    if o.ties == "average":
        # the chance of a relevant item in the top k over the orderings of tied items: 1 minus
        # the chance that none is there (exactly 1 when a row is sure to hit: see SURE_HIT_LOG)
        return 1.0 - col("tie_log_miss@", k).exp()
    return (col("hits@", k) > 0).cast(nw.Float64)


HIT_RATE = Metric(
    name="hit_rate",
    terms=lambda o: ("tie_log_miss@",) if o.ties == "average" else ("hits@",),
    finish=_hit_rate,
    defined="always",
)


def _r_precision(k: int | None, o: Conventions) -> nw.Expr:
    if k is None:
        return col("hits_r") / at_least_one(col("n_relevant"))
    capped = at_least_one(nw.min_horizontal(col("n_relevant"), nw.lit(k)))
    return col("hits_capped@", k) / capped


R_PRECISION = Metric(
    name="r_precision",
    terms=lambda o: ("hits_r", "hits_capped@", "n_relevant"),
    finish=_r_precision,
    bare=True,
)
