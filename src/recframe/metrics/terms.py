"""The terms the accuracy metrics are finished from, and the row features (windows) they read.

Each declaration says what it reads and how; the engine groups the terms a call needs by row
domain and runs one aggregation pass per domain. A new term is one declaration here.
"""

from __future__ import annotations

import narwhals as nw

from recframe._names import POSITION
from recframe.metrics._registry import NOT_RANKED, Feature, Rows, Term, cutoff, declare, discount, within

# exp() of a sum holding it underflows to exactly 0.0 (below about -745; a real sum of log miss
# chances that low rounds the same way): what a row sure to hit adds to tie_log_miss@
SURE_HIT_LOG = -1000.0

declare(
    # R: the relevant rows of a list, over all rows
    Feature("relevant_in_list", lambda rows, keys: rows.relevant.sum().over(*keys)),
    # position among the list's relevant items in rank order = relevant rows ranked up to it
    # (on the relevant rows alone: their row number by position; tied positions, which only
    # unranked rows or unchecked duplicates have, get distinct numbers either way)
    Feature(
        "relevant_position",
        lambda rows, keys: rows.relevant.cum_sum().over(*keys, order_by=POSITION),
        on_relevant_rows=lambda rows, keys: rows.rank.rank("ordinal").over(*keys),
    ),
    # position in the ideal list: the gains sorted descending (other rows have gain 0, after)
    Feature("ideal_position", lambda rows, keys: rows.gain.rank("ordinal", descending=True).over(*keys)),
    # the gain the row's position adds to DCG (no window: one column for every k, not a
    # division and a log per k, each a handful of expression nodes to build)
    Feature("discounted_gain", lambda rows, keys: rows.position_gain / discount(rows.rank, rows.conventions.discount)),
)


def _ap_value(rows: Rows, k: int | None) -> nw.Expr:
    return within(rows.rank, cutoff(k), rows.feature("relevant_position") / rows.rank)


def _dcg_value(rows: Rows, k: int | None) -> nw.Expr:
    return within(rows.rank, cutoff(k), rows.feature("discounted_gain"))


def _idcg_value(rows: Rows, k: int | None) -> nw.Expr:
    ideal = rows.feature("ideal_position")
    return within(ideal, cutoff(k), rows.gain / discount(ideal, rows.conventions.discount))


declare(
    # R, the user's relevant items, recommended or not
    Term("n_relevant", "all", lambda rows, k: rows.relevant, reads="relevant", tie_average="count"),
    # relevant items ranked <= k
    Term("hits@", "relevant", lambda rows, k: within(rows.rank, cutoff(k), rows.hit), at_k=True, tie_average="top_k"),
    # relevant items ranked <= R
    Term(
        "hits_r",
        "relevant",
        lambda rows, k: within(rows.rank, rows.feature("relevant_in_list"), rows.hit),
        features=("relevant_in_list",),
        tie_average="positions",
    ),
    # relevant items ranked <= min(k, R)
    Term(
        "hits_capped@",
        "relevant",
        lambda rows, k: within(rows.rank, nw.min_horizontal(rows.feature("relevant_in_list"), nw.lit(cutoff(k))), rows.hit),
        at_k=True,
        features=("relevant_in_list",),
        tie_average="positions",
    ),
    # items of any relevance ranked <= k: the list cut at k
    Term("retrieved@", "top_k", lambda rows, k: within(rows.rank, cutoff(k), 1.0), at_k=True, tie_average="top_k"),
    # sum over relevant items ranked <= k of (relevant items ranked <= it) / rank
    Term("ap_sum@", "relevant", _ap_value, at_k=True, features=("relevant_position",)),
    # rank of the first relevant item (NOT_RANKED when there is none)
    Term("min_rank", "relevant", lambda rows, k: rows.rank, agg="min", empty=NOT_RANKED),
    # sum over relevant items ranked <= k of gain / discount(rank)
    # (the gaining rows: the relevant ones, or every graded one under gain_threshold="positive")
    Term("dcg@", "graded", _dcg_value, at_k=True, features=("discounted_gain",), tie_average="top_k"),
    # the same sum over the user's gains sorted descending (the ideal list)
    Term("idcg@", "graded", _idcg_value, at_k=True, features=("ideal_position",), tie_average="count"),
    # ties="average" only, for hit rate: the log of the chance that the rows ranked <= k hold
    # no relevant item (their miss chances multiply: a sum of logs). A row sure to leave one
    # there adds SURE_HIT_LOG: exp of the sum then underflows to exactly 0.0, so hit rate is
    # exactly 1 without a second term (a sentinel, not log(0): Spark's log(0) is null)
    Term(
        "tie_log_miss@",
        "top_k",
        lambda rows, k: within(
            rows.rank, cutoff(k), nw.when(rows.tie_miss > 0).then(rows.tie_miss.log()).otherwise(SURE_HIT_LOG)
        ),
        at_k=True,
        tie_average="top_k",
    ),
)
