"""The shape of a registry entry and the names of the per-user terms the engine computes."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import narwhals as nw

from recframe.conventions import Conventions

# Rank given to relevant items that were not recommended: past every k, comparisons stay non-null.
NOT_RANKED = 2**62


def position_cut(k: int) -> int:
    """The last position a cut-off ``k`` reaches, for comparisons with ranks: ``k`` itself, but
    never the sentinel ``NOT_RANKED`` (so that ``k=sys.maxsize``, "the whole list", does not
    count relevant items that were never recommended as hits). Denominators keep ``k``.

    >>> position_cut(10), position_cut(2**63 - 1) == NOT_RANKED - 1
    (10, True)
    """
    return min(k, NOT_RANKED - 1)


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


# Up to here the sum of 1/ln m is added term by term (numpy, exact to float64); past it the
# Euler-Maclaurin formula takes over, whose first omitted term is below 1e-20 there.
_DIRECT = 1_000_000


def _li(x: float) -> float:
    """The logarithmic integral li(x) for x > 1, by Ramanujan's series (converges for all x;
    every term is computed in float64 and the sum loses at most a digit to cancellation)."""
    ln = math.log(x)
    total, term, inner = 0.0, 1.0, 0.0
    for n in range(1, 200):
        term *= ln / n  # ln^n / n!
        if (n - 1) % 2 == 0:
            inner += 1.0 / n  # sum over j <= (n - 1) / 2 of 1 / (2j + 1)
        part = (-1) ** (n - 1) * term / 2 ** (n - 1) * inner
        total += part
        if n > 2 * ln and abs(part) < 1e-17 * abs(total):
            break
    return 0.5772156649015329 + math.log(ln) + math.sqrt(x) * total


def _sum_inverse_ln(n: int) -> float:
    """sum over m = 2..n of 1 / ln(m)."""
    import numpy as np

    head = min(n, _DIRECT)
    total = float(np.sum(1.0 / np.log(np.arange(2, head + 1, dtype=np.float64)))) if head >= 2 else 0.0
    if n > _DIRECT:
        a, b = float(_DIRECT), float(n)

        def f(x: float) -> float:
            return 1.0 / math.log(x)

        def f1(x: float) -> float:  # f'(x)
            return -1.0 / (x * math.log(x) ** 2)

        # sum over m = a..b of f(m) = integral + (f(a) + f(b)) / 2 + (f'(b) - f'(a)) / 12 + ...
        tail = _li(b) - _li(a) + (f(a) + f(b)) / 2 + (f1(b) - f1(a)) / 12
        total += tail - f(a)  # m = a is already in the head
    return total


def ideal_dcg_of_ones(k: int, kind: str) -> float:
    """The DCG of k items of gain 1 (RecTools' ideal list, ``idcg="k"``): sum over i = 1..k of
    1 / discount(i), in constant time for any k (exact sums up to a million terms, then the
    Euler-Maclaurin expansion of sum 1/ln m with the logarithmic integral).

    >>> round(ideal_dcg_of_ones(3, "log2_rank_plus_1"), 12) == round(1 + 1 / math.log2(3) + 1 / math.log2(4), 12)
    True
    >>> ideal_dcg_of_ones(3, "log2_max_rank_2") == 1 + 1 + 1 / math.log2(3)
    True
    """
    if kind == "log2_max_rank_2":
        # positions 1 and 2 both divide by 1; then 1 / log2(i) for i = 3..k
        return float(min(k, 2)) + math.log(2) * (_sum_inverse_ln(k) - _sum_inverse_ln(2)) if k > 2 else float(k)
    # 1 / log2(i + 1) = ln 2 / ln(i + 1) for i = 1..k: m = i + 1 runs over 2..k + 1
    return math.log(2) * _sum_inverse_ln(k + 1)
