"""The shapes of the registry: terms (what is aggregated over which rows), row features (windows)
and metrics (how terms are finished), and the helpers their declarations share."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import narwhals as nw

if TYPE_CHECKING:
    import polars as pl

from recframe import _names as names
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


#: The rows a term reads, per list: every row; the relevant rows (relevance >= threshold, ranked
#: or not); the rows ranked within the largest k of the call (relevant or not); the judged rows
#: (relevance not null, ranked or not); the graded rows, those that gain in DCG (the relevant
#: rows, or under ``gain_threshold="positive"`` every row graded above 0: see
#: :func:`domain_of`). The engine runs one aggregation pass per domain, each over its rows
#: only. "side": no row of the frame, a value of the side inputs alone (the catalog size, the
#: training users), the same for every list and group.
#: "item_group": per list or per summary group, over recframe.engine._item_groups' rows of one item
#: group each (see ItemGroupRows), which the passes do not have.
Domain = Literal["all", "relevant", "top_k", "judged", "graded", "side", "item_group"]
#: A user-level term or metric has one value per list; a group-level one, one per summary group.
Level = Literal["user", "group"]
Agg = Literal["sum", "min", "max", "n_unique"]
TieAverage = Literal["count", "top_k", "positions"]
#: Columns a term or feature reads from the side inputs (see recframe.engine._side), joined onto its
#: rows only when it is asked for: per item, "popularity" (distinct training users, 0 for an
#: item not in train=), "popularity_rank" (its dense rank among the training items by
#: decreasing popularity, null for an item not in train=), "in_head" (1 in the long-tail
#: head, else 0) and "item_features" (the items= columns named by item_features=, see
#: Rows.item_features); per call,
#: "n_train_users", "train_pairs" (distinct training (user, item) pairs) and "catalog_size";
#: per row, "baseline_rank" (the item's rank in the baseline model's list of the same user).
Side = Literal[
    "popularity",
    "popularity_rank",
    "in_head",
    "item_features",
    "n_train_users",
    "train_pairs",
    "catalog_size",
    "baseline_rank",
    "similarity_before",
    "new_labels",
]
_SIDE_COLUMNS: dict[str, str] = {
    "popularity": names.POPULARITY,
    "popularity_rank": names.POPULARITY_RANK,
    "in_head": names.IN_HEAD,
    "n_train_users": names.N_TRAIN_USERS,
    "train_pairs": names.TRAIN_PAIRS,
    "catalog_size": names.CATALOG_SIZE,
    "baseline_rank": names.BASE_RANK,
    "similarity_before": names.SIMILARITY_BEFORE,
    "new_labels": names.NEW_LABELS,
}


@dataclass(frozen=True)
class Rows:
    """What a term's expression reads on one row of its domain (internal columns, typed)."""

    conventions: Conventions
    #: 1-based position in the list; NOT_RANKED for a row never recommended (never null)
    rank: nw.Expr = field(default_factory=lambda: nw.col(names.POSITION))
    relevance: nw.Expr = field(default_factory=lambda: nw.col(names.REL))
    #: the gain of a relevant row under the call's ``gain`` convention, 0.0 for the others
    gain: nw.Expr = field(default_factory=lambda: nw.col(names.GAIN))
    #: 1 for a relevant row, else 0
    relevant: nw.Expr = field(default_factory=lambda: nw.col(names.RELEVANT))
    #: what the row's position holds: its relevance flag as a number, or under
    #: ``ties="average"`` the share of relevant rows in its group of equal scores
    hit: nw.Expr = field(default_factory=lambda: nw.col(names.RELEVANT).cast(nw.Float64))
    #: the gain the row's position holds: its own, or under ``ties="average"`` its tie group's mean
    position_gain: nw.Expr = field(default_factory=lambda: nw.col(names.GAIN))
    #: under ``ties="average"`` only: the chance that the row's tie group holds no relevant
    #: item up to the row, given none before it (see recframe._names.TIE_MISS)
    tie_miss: nw.Expr = field(default_factory=lambda: nw.col(names.TIE_MISS))
    item: nw.Expr = field(default_factory=lambda: nw.col(names.ITEM))
    user: nw.Expr = field(default_factory=lambda: nw.col(names.USER))
    #: 1 on every row (what a running count sums)
    one: nw.Expr = field(default_factory=lambda: nw.col(names.ONE))
    #: 1 for a judged row (relevance not null), else 0
    judged: nw.Expr = field(default_factory=lambda: (~nw.col(names.REL).is_null()).cast(nw.Int64))
    #: 1 for a row of the judgment pool: judged, or of a negative relevance under
    #: ``negative_relevance="unjudged"`` (infAP's sampled pool); else 0
    pooled: nw.Expr = field(default_factory=lambda: (~nw.col(names.REL).is_null()).cast(nw.Int64))
    #: 1 for a ranked row (recommended), else 0
    ranked: nw.Expr = field(default_factory=lambda: (~nw.col(names.RANK).is_null()).cast(nw.Int64))
    #: the internal columns of the item features named by item_features= (side "item_features")
    item_features: tuple[str, ...] = ()
    #: whether an item feature holds label lists (genres): categories are then counted per label
    labels: bool = False

    def side(self, name: Side) -> nw.Expr:
        """A side column's value (the term or feature must list it in ``side``)."""
        return nw.col(_SIDE_COLUMNS[name])

    def feature(self, name: str) -> nw.Expr:
        """A row feature's value (the term must list it in ``features``)."""
        assert name in FEATURES, name
        return nw.col(names.feature_column(name))


#: The counts of an item group g on a row of recframe.engine._item_groups' tables (items weigh w(i, g)).
#: Per (list, g), g a group of its items ranked within the largest k: "train_share" p(g|u) (0
#: where u has no training item in g), "train_total" the weight of u's training items in the
#: catalog (null without one), "list_share" q(g) at k and "list_weight" the list's weight at k.
#: Per (summary group, g), g every group of the catalog: "size" |g|, "lists" U (the lists with an
#: item ranked within the largest k), "trained" sum over them of T(u, g) (with train=),
#: "relevant", and at k "slots", "exposure" (sum of 1 / log2(1 + rank)) and "hits".
ItemGroupCount = Literal[
    "train_share",
    "train_total",
    "list_share",
    "list_weight",
    "size",
    "lists",
    "trained",
    "relevant",
    "slots",
    "exposure",
    "hits",
    "untrained_slots",
]


def item_group_column(count: ItemGroupCount, k: int | None = None) -> str:
    return f"__rf_ig_{count}" if k is None else f"__rf_ig_{count}@{k}"


@dataclass(frozen=True)
class ItemGroupRows:
    """What an item-group term reads on one row per item group of a list or summary group
    (``keys``: a window ``over(*keys)`` runs across its item groups)."""

    conventions: Conventions
    keys: tuple[str, ...]

    def count(self, name: ItemGroupCount, k: int | None = None) -> nw.Expr:
        return nw.col(item_group_column(name, k))

    def total(self, value: nw.Expr) -> nw.Expr:
        """`value` summed over the item groups of the row's list or summary group."""
        return value.sum().over(*self.keys)


@dataclass(frozen=True)
class Feature:
    """A window over the rows of one list (or a value of the row alone that terms read at every
    k), computed once for every term that reads it.

    ``window(rows, list_keys)`` returns the expression (a narwhals ``over``, with an explicit
    ``order_by`` where order matters). Features are computed on the rows of the reading term's
    domain, relevant or top-k, never on every row of the frame: an "all" term cannot read one.
    """

    name: str
    window: Callable[[Rows, list[str]], nw.Expr]
    #: the side columns the window reads
    side: tuple[Side, ...] = ()
    #: the same window on a pass over the relevant rows alone, when it is cheaper there (a
    #: running count of relevant rows is then a row number, which engines compute without the
    #: ordered running sum)
    on_relevant_rows: Callable[[Rows, list[str]], nw.Expr] | None = None


@dataclass(frozen=True)
class Term:
    """One per-list (or per-group) quantity that metrics are finished from.

    ``value(rows, k)`` is the per-row value on the rows of the term's ``domain`` (``k`` is None
    unless ``at_k``); the engine aggregates it by ``agg`` over each list's rows of the domain
    (each summary group's rows for ``level="group"``; a null value is not counted by
    ``n_unique``). A list with no row in the domain gets ``empty``.

    A group-level term with ``per_item`` aggregates in two steps: the value is summed per
    (group, item), giving each item's count ``c``; then ``per_item(c, group_keys)`` (which may
    rank the items of the group with a window over ``group_keys``) is summed per group. This
    is how distributions over items (exposure Gini, entropy, pairwise list overlap) stay linear
    in the rows.
    """

    name: str
    domain: Domain
    value: Callable[[Rows, int | None], nw.Expr]
    at_k: bool = False
    agg: Agg = "sum"
    level: Level = "user"
    #: the row features (windows) the value reads
    features: tuple[str, ...] = ()
    empty: float = 0.0
    #: the side columns the value reads (joined onto the domain's rows when asked for)
    side: tuple[Side, ...] = ()
    per_item: Callable[[nw.Expr, list[str]], nw.Expr] | None = None
    #: an ``n_unique`` term whose values are the list's own user (or null): the counts of
    #: disjoint sets of users add up (``summary(partitions=)``); the other distinct values
    #: (items) are a union of each set's
    of_users: bool = False
    #: the rows whose values can change the term, where narrower than its domain (n_relevant
    #: counts in the pass over every row, but only the relevant rows add to it): what the
    #: duplicate check must read for it (see recframe.engine._checks.duplicate_scope)
    reads: Domain | None = None
    #: under ``ties="average"`` the value is the expected one over the orderings of tied items,
    #: read by the engine on the rows it needs: "count", a count the order cannot change (on
    #: the domain's own rows); "top_k", a sum over the positions <= k of what each holds
    #: (``Rows.hit``, ``Rows.position_gain``, ``Rows.tie_miss``: on the rows near the top
    #: alone); "positions", such a sum that also reads the domain's other rows (a window over
    #: the list's relevant rows). A metric finished from any other term is refused under
    #: ``ties="average"``
    tie_average: TieAverage | None = None
    #: the "item_group" domain's value (see :func:`item_group_term`): on each row of
    #: ItemGroupRows at cut-off k, aggregated by ``agg`` over the list's or group's item groups
    per_item_group: Callable[[ItemGroupRows, int], nw.Expr] | None = None

    def column(self, k: int | None = None) -> str:
        return names.term_column(self.name, k)


#: name -> Term, name -> Feature: filled by recframe.metrics.terms (and by a test that declares
#: a metric of its own, see tests/test_registry.py)
TERMS: dict[str, Term] = {}
FEATURES: dict[str, Feature] = {}


def domain_of(term: Term, conventions: Conventions) -> Domain:
    """The rows `term` reads under `conventions`: "graded" is "relevant" unless every grade
    above 0 gains (``gain_threshold="positive"``), so that the default runs one pass for both."""
    if term.domain == "graded" and conventions.gain_threshold == "threshold":
        return "relevant"
    return term.domain


def declare(*items: Term | Feature) -> None:
    """Add terms or row features to the registry; each name is declared once."""
    for item in items:
        table: dict[str, Any] = TERMS if isinstance(item, Term) else FEATURES
        assert item.name not in table, f"{item.name} is declared twice"
        assert not (isinstance(item, Term) and item.domain == "all" and item.features), f"{item.name}: no window on every row"
        assert not (isinstance(item, Term) and item.domain == "all" and item.side), f"{item.name}: no side input on every row"
        assert not (isinstance(item, Term) and item.per_item and item.level != "group"), f"{item.name}: per_item is group-level"
        table[item.name] = item


def item_group_term(name: str, level: Level, value: Callable[[ItemGroupRows, int], nw.Expr], agg: Agg = "sum") -> Term:
    """A term recframe.engine._item_groups computes, at each k: `value` on its rows of one item group
    each (never on the rows of the frame), aggregated by `agg` per list or summary group."""

    def on_rows(rows: Rows, k: int | None) -> nw.Expr:
        raise AssertionError(f"{name} is read per item group (per_item_group), not per row")

    return Term(name, "item_group", on_rows, at_k=True, agg=agg, level=level, reads="top_k", per_item_group=value)


def term(name: str, k: int | None = None) -> str:
    """Internal column name of a declared term, e.g. ``term("hits@", 10)``."""
    assert name in TERMS, name
    return names.term_column(name, k)


@dataclass(frozen=True)
class Metric:
    """One metric: the terms it needs, how to finish them, where it lives and what it needs.

    ``finish(k, conventions)`` returns the value as an expression over term columns: per list
    for ``level="user"`` (read only where the metric is ``defined``; the engine applies the
    empty-user policy elsewhere), per summary group for ``level="group"`` (where the group's
    counts, such as ``n_users``, can be read too). ``k`` is None for the bare (no cut-off)
    column of metrics with ``bare=True``.
    """

    name: str
    terms: Callable[[Conventions], tuple[str, ...]]
    finish: Callable[[int | None, Conventions], nw.Expr]
    #: also emit a column without cut-off (``r_precision``): the whole list
    bare: bool = False
    #: emit the @k columns (False: the bare column alone, as ``infap``)
    with_k: bool = True
    #: instead of bare and @k columns, one column ``<name>_<v>`` per value v, finished with v
    #: in place of k (``iprec_at_recall_10``: interpolated precision at 10% recall)
    variants: tuple[int, ...] = ()
    #: part of the default metrics (``metrics=None``); the rest of the IR toolbox is asked for
    default: bool = True
    #: "user": a value per list, averaged by summary; "group": a value per summary group
    #: (coverage-like metrics), which per_user refuses
    level: Level = "user"
    #: where a user-level value is defined: "relevant" = for users with a relevant item (null
    #: elsewhere, or 0 under empty_users="zero"); "always" = for every user: its formula holds
    #: without a relevant item too (precision and hit rate are then 0); "ranked" = for users
    #: with a recommended item, relevant items or not (a property of the list, such as its
    #: novelty): null for a user with nothing recommended, who is left out of its mean;
    #: "graded" = as "relevant", but under ``gain_threshold="positive"`` for users with an item
    #: graded above 0 (nDCG of a user whose items all fall below the threshold, as trec_eval;
    #: the engine counts those items itself: the metric need not list the term)
    defined: Literal["relevant", "always", "ranked", "graded"] = "relevant"
    #: inputs beyond the frame: "train", "items", "item_features", "baseline", or "catalog"
    #: (items=, else the items of train=); asking for the metric without them raises, naming
    #: the argument
    requires: tuple[str, ...] = ()
    #: larger values are better (report marks the best value of each column by it)
    higher_is_better: bool = True
    #: under these conventions an @k column reads ranks past k (rr without cut-off), so the
    #: duplicate check must read every row (see recframe.engine._checks)
    whole_list: Callable[[Conventions], bool] = lambda conventions: False


def cutoff(k: int | None) -> int:
    """The cut-off of an at-k term's value (always called with one)."""
    assert k is not None  # at_k terms are always called with a cut-off
    return k


def within(position: nw.Expr, cut: int | nw.Expr, value: nw.Expr | float) -> nw.Expr:
    """`value` where `position` <= `cut` (a cut-off k, or a per-row expression), else 0."""
    limit = position_cut(cut) if isinstance(cut, int) else cut
    return nw.when(position <= limit).then(value).otherwise(0.0)


def col(name: str, k: int | None = None) -> nw.Expr:
    return nw.col(term(name, k))


#: a narwhals or a Polars expression (recframe.trec_eval computes some trec_eval measures in Polars)
E = TypeVar("E", nw.Expr, "pl.Expr")


def divided(numerator: E, by: int) -> E:
    """`numerator` / `by` (a cut-off, a count of levels), correctly rounded on every engine.

    Polars divides by a scalar as a multiplication by its reciprocal (9 / 1000 gives
    0.009000000000000001, not 0.009), which prints differently from trec_eval where a mean falls
    on half a unit of the fourth decimal; dividing by a column of `by` divides, as trec_eval and
    the SQL engines do. `numerator` is finite here (counts and sums of bounded terms)."""
    return numerator / (numerator * 0 + by)


def added(terms: Iterable[E]) -> E:
    """The terms added one after the other, in their order (null adding nothing), as trec_eval
    adds them: ``sum_horizontal`` adds in another order and can end a bit apart."""
    return functools.reduce(operator.add, (term.fill_null(0.0) for term in terms))


def at_least_one(expr: nw.Expr) -> nw.Expr:
    """A denominator that is never 0 (the engine nulls the metric where it is undefined)."""
    return expr.clip(lower_bound=1)


def discount(position: nw.Expr, kind: str) -> nw.Expr:
    """The DCG discount of an item at 1-based ``position``: log2(position + 1) or, as LensKit,
    log2(max(position, 2))."""
    if kind == "log2_max_rank_2":
        return nw.max_horizontal(position, nw.lit(2)).cast(nw.Float64).log(2)
    return (position + 1).cast(nw.Float64).log(2)


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
