"""Additive parts, under the summary's statistics and the off-policy estimators alike: a
statistic (:class:`Declared`) is parts per group, narwhals aggregates on the engine
(:func:`per_group`), a rule by which two disjoint sets' parts add (:func:`add`), and a finish.
One pass is one set; ``partitions=`` adds many."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

import narwhals as nw
import polars as pl

from recframe.engine import _frames


class Declared(Protocol):
    """A statistic declared as parts (a summary's ``Aggregate``, an off-policy ``Estimator``):
    how each part adds (``add``: part -> a key of :data:`RULES`), beside its finish, whether
    the parts of disjoint sets add up to those of their union (``adds_up``) and whether it runs
    inside a SQL engine (``in_engine``)."""

    @property
    def add(self) -> Mapping[str, str]: ...
    @property
    def adds_up(self) -> bool: ...
    @property
    def in_engine(self) -> bool: ...


def rules(declared: Iterable[Declared]) -> dict[str, str]:
    """Each part's add rule, over the declarations (parts of one name add one way)."""
    return {part: how for x in declared for part, how in x.add.items()}


def _chan(column: str) -> pl.Expr:
    """A standard deviation ``<c>:std`` (beside ``<c>:n`` and ``<c>:sum``) by Chan, Golub and
    LeVeque's update: each set's squared deviations about its own mean plus its count times
    its mean's squared deviation from the mean of all (``__rf_all:<c>``, see :func:`add`)."""
    c = column.removesuffix(":std")
    count, mean = pl.col(f"{c}:n"), pl.col(f"{c}:sum") / pl.col(f"{c}:n")
    within = ((count - 1) * pl.col(column) ** 2).fill_null(0.0)
    between = (count * (mean - pl.col(f"__rf_all:{c}")) ** 2).fill_nan(0.0).fill_null(0.0)
    squares, total = (within + between).sum(), count.sum()
    return pl.when(total >= 2).then((squares / (total - 1)).sqrt())


def _kept(agg: Callable[[pl.Expr], pl.Expr]) -> Callable[[str], pl.Expr]:
    """`agg` of a column's parts, null where no set has one (a domain none of its rows reach)."""
    return lambda c: pl.when(pl.col(c).count() > 0).then(agg(pl.col(c)))


#: how the parts of disjoint sets add, by rule: counts and sums add, extremes take the extreme
RULES: dict[str, Callable[[str], pl.Expr]] = {
    "sum": _kept(pl.Expr.sum),
    "max": _kept(pl.Expr.max),
    "min": _kept(pl.Expr.min),
    "chan": _chan,
}


def per_group(lf: nw.LazyFrame, keys: list[str], *aggs: nw.Expr) -> nw.LazyFrame:
    """One set's parts: one row per group (equal `keys`; one row for none), one narwhals
    group-by, lazily, on the engine of `lf`."""
    return _frames.group_agg(lf, keys, *aggs) if keys else lf.select(*aggs)


def add(sets: Sequence[pl.LazyFrame | pl.DataFrame], keys: list[str], rule: Callable[[str], str]) -> pl.LazyFrame:
    """The parts of disjoint sets (Polars, one row per set and group) added per group, each
    column by its rule (``rule(column)``, a key of :data:`RULES`): the parts of their union.

    >>> halves = [pl.DataFrame({"n": [2], "largest": [3.0]}), pl.DataFrame({"n": [5], "largest": [1.5]})]
    >>> add(halves, [], {"n": "sum", "largest": "max"}.__getitem__).collect().row(0)
    (7, 3.0)
    """
    rows = pl.concat([s.lazy() for s in sets], how="vertical")
    columns = [c for c in rows.collect_schema().names() if c not in keys]
    spread = [c.removesuffix(":std") for c in columns if rule(c) == "chan"]

    def over_all(e: pl.Expr) -> pl.Expr:
        return e.over(keys) if keys else e

    # the mean of all sets per group beside each set's row; a set without a value adds nothing
    rows = rows.with_columns(
        (over_all(pl.col(f"{c}:sum").sum()) / over_all(pl.col(f"{c}:n").sum())).alias(f"__rf_all:{c}") for c in spread
    )
    added = [RULES[rule(c)](c).alias(c) for c in columns]
    return rows.group_by(keys).agg(added) if keys else rows.select(added)
