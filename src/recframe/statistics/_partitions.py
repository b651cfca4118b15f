"""``summary(..., partitions=N)``: the users evaluated in N hash partitions, one after another.

Memory on a large export grows with the lists a pass holds at once: the join of the
recommendations with ``truth=`` builds a hash table of the truth, the ranking by ``score=`` and
the per-list table hold every list (Polars streaming, 1M users of 130 rows each: 7.7 GiB). A
summary's numbers are means over users, and a mean is a sum divided by a count: so the users
are split by a hash of their id into N disjoint sets, each set is evaluated alone (its rows
filtered from every per-user input: the recommendations, ``truth=``, ``users=``,
``exclude=``), its parts are kept (:func:`recframe.statistics._summary.parts`, one row per group), and
the parts of all sets, added (:func:`recframe.statistics._summary.add`), give the summary
(:func:`recframe.statistics._summary.finish`, as one pass finishes its own).
Memory is that of one set of users, for the cost of reading the input once per set. There
are never more sets than distinct users (:func:`_capped`, one pass over the user columns): a
larger N (``partitions=2**70``) is capped there, and each set's inputs are built when it is
evaluated, so neither the plans nor the passes grow past the data.

A user's rows all land in one set (the hash of the same id), so every per-list check runs on
whole lists, and a duplicate or a null key still raises; the first problem named is the first
of the set where it is found, not of the whole frame. ``train=`` and ``items=`` are read
whole in each set (novelty reads every user's training rows).

The group-level metrics (coverage, Gini, entropy, personalization) have one value per group,
from every list's items: each set gives their parts (:class:`recframe.engine._engine.GroupParts`),
which add up set by set (:func:`_combined`): sums and counts of distinct users added,
distinct items a union, each item's exposures added; the group terms are finished from the
total once, as one pass finishes its own (:func:`recframe.engine._engine.group_finish`). Besides a
set, memory holds a few rows per (group, item): one per term read per item. The metrics that
compare item groups (``item_group=``) read the counts per (group, item group), which add up
too (:func:`recframe.engine._item_groups.add_rule`).

The t interval of a mean and a quantile add up too (their parts: n, sum and the standard
deviation; the lists of each value: for precision@10, eleven rows per group; for a metric with
a value of its own for every user, a row per user). What does not add up is refused, as
:func:`recframe.statistics._summary.refuse` derives it: a bootstrap interval (``ci_method="bootstrap"``
or ``"poisson"``: each resamples all users).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import narwhals as nw
import polars as pl

from recframe import _names as n
from recframe.engine import _call, _engine, _item_groups
from recframe.engine import _validate as v
from recframe.errors import fix, ref
from recframe.statistics import _parts, _summary

#: the seed of the users' hash: any constant (the sets need only be the same for every input)
_SEED = 0x5EED


def check(partitions: Any) -> int | None:
    """``partitions=`` checked: None (one pass) or a whole number of at least 1."""
    if partitions is None:
        return None
    return v.whole_at_least(
        "partitions",
        partitions,
        1,
        "is not a whole number of at least 1.",
        f"pass the number of sets of users to evaluate one after another, e.g. {fix('partitions', 8)} "
        "(about 1/8 of the memory of one pass), or leave it out for one pass.",
    )


def summary(i: _call.Inputs, asked: _summary.Asked, partitions: int) -> nw.LazyFrame:
    """The summary of checked inputs `i` from `partitions` sets of users evaluated one after
    another (each set's parts collected by Polars' streaming engine, then added: see
    :mod:`recframe.statistics._summary`), as a lazy frame of its few rows."""
    assert i.engine.in_process, "refused by _summary.refuse()"
    partitions = _capped(i, partitions)
    models = _models(i, partitions)
    sets: list[_summary.SetParts] = []
    groups: _engine.GroupParts | None = None
    # (the per-(summary group, item group) counts the item-group comparisons read, added up)
    compared = _item_groups.comparing_metrics(i.spec.selection.metrics)
    item_counts: nw.LazyFrame | None = None
    for p in range(partitions):  # (each set's inputs built when it is evaluated, never all at once)
        plan = _call.evaluated(_part(i, p, partitions), models)
        own = _summary.parts(plan.per_user, i.spec, asked)
        wanted = {"rows": own.rows, **({"values": own.values} if own.values is not None else {})}
        if compared and plan.item_groups is not None:
            wanted["item_counts"] = plan.item_groups
        if plan.group_parts is not None:
            wanted |= _named_frames(plan.group_parts)
        frames = pl.collect_all([frame.to_native() for frame in wanted.values()], engine="streaming")
        got = dict(zip(wanted, frames, strict=True))
        values = got.get("values")
        sets.append(
            _summary.SetParts(nw.from_native(got["rows"].lazy()), None if values is None else nw.from_native(values.lazy()))
        )
        if "item_counts" in got:
            counts = nw.from_native(got["item_counts"].lazy())
            keys = [*(i.spec.columns.by or [n.GROUP]), n.ITEM_GROUP]
            item_counts = counts if item_counts is None else _added(item_counts, counts, keys, _item_groups.add_rule)
        if plan.group_parts is not None:
            groups = _combined(groups, _parts_named(got), i.spec)
    finished = None if groups is None else _engine.group_finish(groups, i.spec, i.side)
    finished = _engine.with_comparing(finished, item_counts, i.spec)
    hint = f"pass {fix('ci_method', 'bootstrap')} and leave {ref('partitions')} out (one pass)"
    return _summary.finish(_summary.add(sets, i.spec), finished, i.spec, asked, past_limit=hint)


def _collected(frame: nw.LazyFrame) -> nw.LazyFrame:
    """`frame` computed now (a running total: its plan would otherwise grow with each set)."""
    return nw.from_native(frame.to_native().collect().lazy())


def _added(a: nw.LazyFrame, b: nw.LazyFrame, keys: list[str], rule: Callable[[str], str]) -> nw.LazyFrame:
    """The parts of two disjoint sets added by the one rule (:func:`recframe.statistics._parts.add`), collected."""
    return _collected(nw.from_native(_parts.add([a.to_native(), b.to_native()], keys, rule)))


def _named_frames(parts: _engine.GroupParts) -> dict[str, nw.LazyFrame]:
    """The frames of `parts` under names of their own, collected beside a set's other frames
    (:func:`_parts_named` puts them back)."""
    return {
        "group:groups": parts.groups,
        **({"group:sums": parts.sums} if parts.sums is not None else {}),
        **{f"group:distinct:{column}": frame for column, frame in parts.distinct.items()},
        **{f"group:per_item:{domain}": frame for domain, frame in parts.per_item.items()},
    }


def _parts_named(collected: dict[str, pl.DataFrame]) -> _engine.GroupParts:
    """The group parts among `collected` (named by :func:`_named_frames`), as lazy frames."""

    def under(prefix: str) -> dict[str, nw.LazyFrame]:
        return {
            name.removeprefix(prefix): nw.from_native(frame.lazy())
            for name, frame in collected.items()
            if name.startswith(prefix)
        }

    sums = collected.get("group:sums")
    return _engine.GroupParts(
        groups=nw.from_native(collected["group:groups"].lazy()),
        sums=None if sums is None else nw.from_native(sums.lazy()),
        distinct=under("group:distinct:"),
        per_item=under("group:per_item:"),
    )


def _combined(total: _engine.GroupParts | None, more: _engine.GroupParts, spec: v.Spec) -> _engine.GroupParts:
    """The group parts of two disjoint sets of users (`total` None: `more` alone), collected:
    the groups and each term's distinct values a union, each additive aggregate combined by its
    kind (a sum or a count of distinct users added, a maximum's maximum, a minimum's minimum;
    null where neither set has a row of its domain), each item's counts added."""
    if total is None:
        return more
    keys = list(spec.columns.by) or [n.GROUP]

    def unique(a: nw.LazyFrame, b: nw.LazyFrame) -> nw.LazyFrame:
        return _collected(nw.concat([a, b], how="vertical").unique())

    sums = None
    if total.sums is not None and more.sums is not None:
        kinds = {column: t.agg for t, column, _ in _engine.group_terms(spec)}
        rules = {"sum": "sum", "n_unique": "sum", "max": "max", "min": "min"}  # (users in disjoint sets: counts add)
        sums = _added(total.sums, more.sums, keys, lambda c: rules[kinds[c]])
    per_item = {d: _added(counts, more.per_item[d], [*keys, n.ITEM], lambda c: "sum") for d, counts in total.per_item.items()}
    return _engine.GroupParts(
        groups=unique(total.groups, more.groups),
        sums=sums,
        distinct={column: unique(values, more.distinct[column]) for column, values in total.distinct.items()},
        per_item=per_item,
    )


def _part(i: _call.Inputs, p: int, partitions: int) -> _call.Inputs:
    """The inputs of set `p`: the rows of its users in every per-user input."""
    user = str(i.spec.columns.user)
    return dataclasses.replace(
        i,
        lf=_users_of(i.lf, user, p, partitions),
        truth=_users_of(i.truth, user, p, partitions),
        users=_users_of(i.users, user, p, partitions),
        exclude=_users_of(i.exclude, user, p, partitions),
        sources=(),  # (a set names no frames, so its rows are never shared with another call: _call._shareable)
    )


def _capped(i: _call.Inputs, partitions: int) -> int:
    """`partitions`, at most the distinct users of the recommendations, ``truth=`` and ``users=``
    (at least 1): a set per user already holds one user's lists, more sets would be empty, and
    each set reads the input once more. One pass over the user columns, counting the distinct
    hashes that place each user in a set (the numbers are the same for any number of sets)."""
    user = str(i.spec.columns.user)
    hashed = [
        frame.to_native().select(hash_of(frame.to_native(), user).alias("__rf_hash"))
        for frame in (i.lf, i.truth, i.users)
        if frame is not None
    ]
    distinct = pl.concat(hashed, how="vertical").select(pl.col("__rf_hash").n_unique()).collect(engine="streaming").item()
    return max(1, min(partitions, int(distinct)))


def _models(i: _call.Inputs, partitions: int) -> nw.LazyFrame | None:
    """The model key values of every user's lists, which ``truth=`` is broadcast over in each
    set (a set's own would miss a model none of its users has): one pass over the model keys,
    or, with exclude= (a model may lose every row to it), a pass per set over the ids."""
    if i.truth is None or not i.spec.columns.model_keys:
        return None
    if i.exclude is None:
        found = [_engine.model_values(i.lf, i.spec, None)]
    else:
        parts = (_part(i, p, partitions) for p in range(partitions))
        found = [_engine.model_values(part.lf, i.spec, part.exclude) for part in parts]
    values = [frame.to_native().collect(engine="streaming") for frame in found]
    return nw.from_native(pl.concat(values, how="vertical").unique().lazy())


def _users_of(lf: nw.LazyFrame | None, user: str, p: int, partitions: int) -> Any:
    """The rows of `lf` whose user falls in set `p` of `partitions` (by a hash of the id; a
    categorical id hashed as its text, so that every input agrees; a null id in one set too)."""
    if lf is None:
        return None
    native = lf.to_native()
    return nw.from_native(native.filter(hash_of(native, user) % partitions == p))


def hash_of(native: pl.LazyFrame, user: str) -> pl.Expr:
    """The hash of each row's user, which places it in a set (a categorical id hashed as its
    text, so that every input agrees)."""
    column = pl.col(user)
    if isinstance(native.collect_schema()[user], (pl.Categorical, pl.Enum)):
        column = column.cast(pl.String)
    return column.hash(_SEED)
