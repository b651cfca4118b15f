"""Metrics of where the relevant items sit in the list: average precision, reciprocal rank."""

from __future__ import annotations

import narwhals as nw

from recframe.conventions import Conventions
from recframe.metrics._registry import NOT_RANKED, Metric, at_least_one, col, cutoff, divided, position_cut


def _ap(k: int | None, o: Conventions) -> nw.Expr:
    if o.ap_denominator == "k":
        return divided(col("ap_sum@", k), max(cutoff(k), 1))
    denominator = {
        "min_k_relevant": nw.min_horizontal(col("n_relevant"), nw.lit(k)),
        "relevant": col("n_relevant"),
        "hits": col("hits@", k),  # no hit: the sum is 0, and so is AP
    }[o.ap_denominator]
    return col("ap_sum@", k) / at_least_one(denominator)


AP = Metric(
    name="ap",
    terms=lambda o: ("ap_sum@", "n_relevant", "hits@"),
    finish=_ap,
)


def _rr(k: int | None, o: Conventions) -> nw.Expr:
    first = col("min_rank")
    # without cut-off (trec_eval's recip_rank) any recommended relevant item counts
    reach = first <= position_cut(k) if o.rr_cutoff else first < NOT_RANKED  # type: ignore[arg-type]
    return nw.when(reach).then(1.0 / first).otherwise(0.0)


RR = Metric(
    name="rr",
    terms=lambda o: ("min_rank", "n_relevant"),
    finish=_rr,
    whole_list=lambda o: not o.rr_cutoff,
)
