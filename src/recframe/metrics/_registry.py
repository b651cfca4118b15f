"""The shape of a registry entry and the names of the per-user terms the engine computes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import math

import narwhals as nw

from recframe.conventions import Conventions

# Rank given to relevant items that were not recommended: past every k, comparisons stay non-null.
NOT_RANKED = 2**62

#: Per-user terms the engine can compute. Those ending in "@" take a cut-off k.
#:   n_relevant     R, the user's relevant items (recommended or not)
#:   hits@          relevant items ranked <= k
#:   hits_capped@   relevant items ranked <= min(k, R)
#:   hits_r         relevant items ranked <= R
#:   retrieved@     items of any relevance ranked <= k (the user's list cut at k)
#:   ap_sum@        sum over relevant items ranked <= k of (relevant items ranked <= it) / rank
#:   min_rank       rank of the first relevant item (NOT_RANKED when there is none)
#:   dcg@           sum over relevant items ranked <= k of gain / discount(rank)
#:   idcg@          the same sum over the user's gains sorted descending (the ideal list)
TERMS = (
    "n_relevant",
    "hits@",
    "hits_capped@",
    "hits_r",
    "retrieved@",
    "ap_sum@",
    "min_rank",
    "dcg@",
    "idcg@",
)


def term(name: str, k: int | None = None) -> str:
    """Internal column name of a per-user term, e.g. ``term("hits@", 10)``."""
    assert name in TERMS, name
    return f"__rf_{name}{k}" if name.endswith("@") else f"__rf_{name}"


@dataclass(frozen=True)
class Metric:
    """One ranking metric.

    ``finish(k, conventions)`` returns the per-user value as an expression over term columns, for a
    user with at least one relevant item; the engine applies the empty-user policy around it.
    ``k`` is None for the bare (no cut-off) column of metrics with ``bare=True``.
    """

    name: str
    terms: Callable[[Conventions], tuple[str, ...]]
    finish: Callable[[int | None, Conventions], nw.Expr]
    #: also emit a column without cut-off (``r_precision``)
    bare: bool = False
    #: its value is 0.0, not null, for a user with no relevant item (precision, hit rate)
    zero_when_empty: bool = False


def col(name: str, k: int | None = None) -> nw.Expr:
    return nw.col(term(name, k))


def at_least_one(expr: nw.Expr) -> nw.Expr:
    """A denominator that is never 0 (the engine nulls the metric where it is undefined)."""
    return expr.clip(lower_bound=1)


def discount(position: nw.Expr, kind: str) -> nw.Expr:
    """The DCG discount of an item at 1-based ``position``: log2(position + 1) or, as LensKit,
    log2(max(position, 2))."""
    if kind == "log2_max_rank_2":
        return nw.max_horizontal(position, nw.lit(2)).cast(nw.Float64).log(2)
    return (position + 1).cast(nw.Float64).log(2)


def discount_value(position: int, kind: str) -> float:
    """:func:`discount` for one known position (a constant ideal list)."""
    return math.log2(max(position, 2)) if kind == "log2_max_rank_2" else math.log2(position + 1)
