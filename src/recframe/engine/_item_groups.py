"""Item groups (``item_group=``): the per-group exposure table of :func:`recframe.item_groups`,
and the counts per (list or summary group, item group) the registry's item-group terms read
(:class:`recframe.metrics._registry.ItemGroupRows`; every formula is in
:mod:`recframe.metrics.item_groups`).

Everything is a sum per (list or summary group, item group): the items' groups are joined once
onto the rows ranked within k and the relevant rows (:func:`joined`, read by both the
calibration and the counts), the training pairs are summed per (user, item group) once, and the
catalog per item group once. Nothing is computed per pair of user and item, so the cost stays
linear in the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals as nw

from recframe import _names as n
from recframe.engine import _frames, _side
from recframe.engine._validate import Spec, fail
from recframe.errors import fix, ref
from recframe.metrics import REGISTRY, TERMS
from recframe.metrics._registry import ItemGroupCount, ItemGroupRows, Level, position_cut
from recframe.metrics._registry import item_group_column as _c


def calibration_metrics(metrics: Sequence[str]) -> list[str]:
    """Of `metrics`, the registry's item-group metrics with a value per list (calibration)."""
    return [m for m in metrics if "item_group" in REGISTRY[m].requires and REGISTRY[m].level == "user"]


def comparing_metrics(metrics: Sequence[str]) -> list[str]:
    """Of `metrics`, the registry's item-group metrics comparing the item groups with one
    another per summary group (they need two groups)."""
    return [m for m in metrics if "item_group" in REGISTRY[m].requires and REGISTRY[m].level == "group"]


_T, _SIZE, _RELEVANT, _LISTS = _c("trained"), _c("size"), _c("relevant"), _c("lists")


def check(items: nw.LazyFrame | None, spec: Spec, schema: dict[str, Any], side: _side.SideInputs) -> None:
    """The item_group= column has a group for every item (no null, no empty list, no null
    inside a list), and the metrics comparing groups have at least two (one small query)."""
    group = spec.selection.item_group
    if group is None:
        return
    if group != "popularity":
        assert items is not None  # check_arguments made sure of it
        is_list = _side.is_label_list(schema[group])
        # NaN is a missing group too: pandas reads it as a null, so every backend refuses it alike
        missing, nan = nw.col(n.ITEM_GROUP).is_null(), " or NaN" if schema[group].is_float() else ""
        if nan:
            missing = missing | nw.col(n.ITEM_GROUP).is_nan().fill_null(False)
        exprs = [missing.cast(nw.Int64).sum().alias("nulls")]
        if is_list:
            exprs.append((nw.col(n.ITEM_GROUP).list.len() == 0).fill_null(False).cast(nw.Int64).sum().alias("empty"))
        row = items.select(*exprs).collect().rows(named=True)[0]
        if row["nulls"]:
            raise fail(
                f"column {group!r} of {ref('items')} ({ref('item_group')}) has {row['nulls']} null{nan} value(s): an item "
                "without a group cannot be counted in any group's share.",
                f"fill them first, e.g. items.with_columns(pl.col({group!r}).fill_null('unknown'))"
                + (" (and fill_nan for NaN)." if nan else "."),
            )
        if row.get("empty"):
            raise fail(
                f"column {group!r} of {ref('items')} ({ref('item_group')}) has {row['empty']} empty list(s): an item "
                "without a group cannot be counted in any group's share.",
                "give each item at least one group (e.g. 'unknown').",
            )
        if is_list:
            labels = items.select(nw.col(n.ITEM_GROUP)).explode(n.ITEM_GROUP)
            inner = labels.collect_schema()[n.ITEM_GROUP]
            missing, nan = nw.col(n.ITEM_GROUP).is_null(), " or NaN" if inner.is_float() else ""
            if nan:
                missing = missing | nw.col(n.ITEM_GROUP).is_nan().fill_null(False)
            if int(labels.select(missing.cast(nw.Int64).sum()).collect().item()):
                raise fail(
                    f"column {group!r} of {ref('items')} ({ref('item_group')}) has a null{nan} group inside a list.",
                    "drop the null values, e.g. items.with_columns(pl.col(...).list.drop_nulls()).",
                )
    comparing = comparing_metrics(spec.selection.metrics)
    if comparing:
        found = int(weights(spec, side).select(nw.col(n.ITEM_GROUP).n_unique()).collect().item())
        if found < 2:
            how = f"the items of {ref('train')} fall on one side of {ref('head_share')}" if group == "popularity" else ""
            raise fail(
                f"metric {comparing[0]!r} compares item groups, and {ref('item_group', group)} gives {found} "
                f"group{'' if found == 1 else 's'}{': ' + how if how else ''}; a disparity needs two.",
                f"pass an {ref('item_group')} column with two values or more"
                + (f", or another {ref('head_share')}." if group == "popularity" else "."),
            )


def weights(spec: Spec, side: _side.SideInputs) -> nw.LazyFrame:
    """ITEM, ITEM_GROUP, GROUP_WEIGHT: one row per (catalog item, group of the item), the weight
    being 1 / the item's number of distinct groups (1 for a plain column)."""
    if spec.selection.item_group == "popularity":
        table = _side.item_table(spec, side, {"in_head"})
        head = nw.col(n.IN_HEAD).fill_null(0) == 1  # an item of items= not in train= is in the tail
        return table.select(
            n.ITEM,
            nw.when(head).then(nw.lit("head")).otherwise(nw.lit("tail")).alias(n.ITEM_GROUP),
            nw.lit(1.0).alias(n.GROUP_WEIGHT),
        )
    assert side.items is not None  # a column item_group needs items=
    rows = side.items.select(n.ITEM, n.ITEM_GROUP)
    if not _side.is_label_list(rows.collect_schema()[n.ITEM_GROUP]):
        return rows.with_columns(nw.lit(1.0).alias(n.GROUP_WEIGHT))  # one group per item
    rows = rows.explode(n.ITEM_GROUP).unique()
    sizes = _frames.group_agg(rows, [n.ITEM], nw.len().cast(nw.Float64).alias(n.GROUP_WEIGHT))
    return rows.join(sizes, on=n.ITEM, how="inner").with_columns((1.0 / nw.col(n.GROUP_WEIGHT)).alias(n.GROUP_WEIGHT))


def _train_mix(spec: Spec, side: _side.SideInputs, w: nw.LazyFrame) -> nw.LazyFrame:
    """USER, ITEM_GROUP, T: the weight of each user's distinct training items in each group
    (training items outside the catalog have no group and add nothing)."""
    assert side.train is not None  # calibration and pop_rsp need train=
    pairs = side.train.unique().join(w, on=n.ITEM, how="inner")
    return _frames.group_agg(pairs, [n.USER, n.ITEM_GROUP], nw.col(n.GROUP_WEIGHT).sum().alias(_T))


def _summed(rows: nw.LazyFrame, keys: list[str], spec: Spec, level: Level) -> nw.LazyFrame:
    """Per `keys`, each item-group term of `level` the asked metrics read: its value on `rows`
    (one per item group of the list or summary group: ItemGroupRows) aggregated over them."""
    names = {t for m in spec.selection.metrics if REGISTRY[m].level == level for t in REGISTRY[m].terms(spec.conventions)}
    g, terms = ItemGroupRows(spec.conventions, tuple(keys)), [TERMS[t] for t in sorted(names) if TERMS[t].per_item_group]
    mine = [(t, t.column(k), k) for t in terms if t.level == level for k in spec.selection.ks]
    rows = rows.with_columns(t.per_item_group(g, k).alias(c) for t, c, k in mine if t.per_item_group)
    return _frames.group_agg(rows, keys, *(getattr(nw.col(c), t.agg)() for t, c, _ in mine))


def joined(rows: nw.LazyFrame, spec: Spec, side: _side.SideInputs) -> nw.LazyFrame:
    """The rows :func:`calibration` and :func:`counts` read: `rows` (the prepared rows ranked
    within the largest k or relevant, with the summary group keys, POSITION and RELEVANT) with
    their items' groups, one row per (row, group of its item) with ITEM_GROUP and GROUP_WEIGHT;
    a row whose item is not in the catalog keeps one row, of null group.

    This is the one join of the ranked rows with the catalog in a call. A SQL engine gets the
    rows materialized (see recframe.engine._engine.evaluate); on Polars they are an explicit cache
    node, which every reader shares: Polars' own common-subplan elimination does not nest, it
    caches the outermost repeated parts (the served lists, the sums per item group), each of
    which would join the catalog again (10M rows: three joins of the 1M-item catalog)."""
    keys = [*(spec.columns.by or [n.GROUP]), n.USER]  # a list, with the summary keys it determines
    used = rows.select(*keys, n.ITEM, n.POSITION, n.RELEVANT).join(weights(spec, side), on=n.ITEM, how="left")
    return _frames.cache(used)


def calibration(rows: nw.LazyFrame, spec: Spec, side: _side.SideInputs) -> nw.LazyFrame:
    """Per list (list keys, USER) with an item ranked within the largest k: the registry's
    user-level item-group terms over the groups of its items ranked within the largest k
    (:func:`joined`'s; those outside the catalog are refused by the catalog check), with the
    user's training mix p and the list's mix q at each k (no full join of the two mixes)."""
    # a list, with the summary keys it determines (not the constant GROUP of a call without by:
    # a third key costs every sum per (list, group) some 30%)
    keys = [*spec.columns.by, n.USER]
    ks = spec.selection.ks
    mix = _train_mix(spec, side, weights(spec, side))
    p = mix.with_columns((nw.col(_T) / nw.col(_T).sum().over(n.USER)).alias(_c("train_share"))).drop(_T)
    trained = _frames.group_agg(mix, [n.USER], nw.col(_T).sum().alias(_c("train_total")))
    within = (nw.col(n.POSITION) <= position_cut(max(ks))) & ~nw.col(n.ITEM_GROUP).is_null()
    rows = rows.filter(within).select(*keys, n.ITEM_GROUP, n.GROUP_WEIGHT, n.POSITION)
    place = nw.lit(1.0)
    if spec.conventions.calibration_weight == "rank":
        place = 1.0 / (nw.col(n.POSITION) + 1).cast(nw.Float64).log(2)
    weight = {k: nw.when(nw.col(n.POSITION) <= position_cut(k)).then(nw.col(n.GROUP_WEIGHT) * place).otherwise(0.0) for k in ks}
    q = _frames.group_agg(rows, [*keys, n.ITEM_GROUP], *(w.sum().alias(_c("list_share", k)) for k, w in weight.items()))
    q = q.with_columns(nw.col(_c("list_share", k)).sum().over(*keys).alias(_c("list_weight", k)) for k in ks)
    share = {k: (nw.col(_c("list_share", k)), nw.col(_c("list_weight", k))) for k in ks}
    q = q.with_columns(
        nw.when(total > 0).then(q_ / total).otherwise(0.0).alias(_c("list_share", k)) for k, (q_, total) in share.items()
    )
    both = q.join(p, on=[n.USER, n.ITEM_GROUP], how="left").with_columns(nw.col(_c("train_share")).fill_null(0.0))
    both = both.join(trained, on=n.USER, how="left")
    out = _summed(both, keys, spec, "user")
    return out.select(*spec.columns.list_keys, n.USER, *(c for c in out.columns if c not in keys))


def counts(rows: nw.LazyFrame, spec: Spec, side: _side.SideInputs) -> nw.LazyFrame:
    """Per (summary group keys, item group): the group's catalog weight |g| and per k its
    slots, exposure and hits, its relevant items and (with train=) the denominator of
    P(rec | g), from :func:`joined`'s rows. The lists served are those with an item ranked
    within the largest k.

    Every item group of the catalog is there for every summary group with a relevant or a
    recommended item; the relevant items outside the catalog, which have no group, come as one
    row of null group."""
    keys = list(spec.columns.by) or [n.GROUP]
    ks = spec.selection.ks
    w = weights(spec, side)
    served = rows.filter(nw.col(n.POSITION) <= position_cut(max(ks))).select(*keys, n.USER).unique()
    weight = nw.col(n.GROUP_WEIGHT).fill_null(1.0)  # a relevant item outside the catalog: its own row
    discount = 1.0 / (nw.col(n.POSITION) + 1).cast(nw.Float64).log(2)
    if side.train is not None:
        # P(rec | g) counts the recommended items the user has not trained on: those are its
        # candidates (a training item left in a list counts in neither)
        pairs = side.train.select(n.USER, n.ITEM).unique().with_columns(nw.lit(1).alias("__rf_ig_in_train"))
        rows = rows.join(pairs, on=[n.USER, n.ITEM], how="left")
    per_k = []
    for k in ks:
        inside = nw.col(n.POSITION) <= position_cut(k)
        per_k += [
            nw.when(inside).then(weight).otherwise(0.0).alias(_c("slots", k)),
            nw.when(inside).then(weight * discount).otherwise(0.0).alias(_c("exposure", k)),
            nw.when(inside & (nw.col(n.RELEVANT) == 1)).then(weight).otherwise(0.0).alias(_c("hits", k)),
        ]
        if side.train is not None:
            fresh = inside & nw.col("__rf_ig_in_train").is_null()
            per_k.append(nw.when(fresh).then(weight).otherwise(0.0).alias(_c("untrained_slots", k)))
    counted: list[ItemGroupCount] = ["slots", "exposure", "hits"]
    counted += ["untrained_slots"] if side.train is not None else []
    filled = [_c(c, k) for k in ks for c in counted] + [_RELEVANT]
    used = rows.with_columns(*per_k, nw.when(nw.col(n.RELEVANT) == 1).then(weight).otherwise(0.0).alias(_RELEVANT))
    found = _frames.group_agg(used, [*keys, n.ITEM_GROUP], *(nw.col(c).sum() for c in filled))
    # every catalog group in every summary group, with its size |g|
    sizes = _frames.group_agg(w, [n.ITEM_GROUP], nw.col(n.GROUP_WEIGHT).sum().alias(_SIZE))
    groups = found.select(keys).unique()
    grid = groups.join(sizes, how="cross")
    in_catalog = found.filter(~nw.col(n.ITEM_GROUP).is_null())
    out = grid.join(in_catalog, on=[*keys, n.ITEM_GROUP], how="left")
    out = out.with_columns(nw.col(c).fill_null(0.0) for c in filled)
    # the relevant items outside the catalog: a row of their own (null group), where there are some
    outside = found.filter(nw.col(n.ITEM_GROUP).is_null() & (nw.col(_RELEVANT) > 0))
    outside = outside.with_columns(nw.lit(0.0).alias(_SIZE)).select(out.columns)
    out = nw.concat([out, outside], how="vertical")
    n_served = _frames.group_agg(served, keys, nw.len().cast(nw.Float64).alias(_LISTS))
    out = out.join(n_served, on=keys, how="left").with_columns(nw.col(_LISTS).fill_null(0.0))
    if side.train is not None:
        # sum over the served lists of T(u, g): the training pairs of their users in g
        trained = served.select(*keys, n.USER).join(_train_mix(spec, side, w), on=n.USER, how="inner")
        trained = _frames.group_agg(trained, [*keys, n.ITEM_GROUP], nw.col(_T).sum())
        out = out.join(trained, on=[*keys, n.ITEM_GROUP], how="left").with_columns(nw.col(_T).fill_null(0.0))
    return out


def _ratio(numerator: nw.Expr, denominator: nw.Expr) -> nw.Expr:
    return nw.when(denominator > 0).then(numerator / denominator).otherwise(None)


def shares(table: nw.LazyFrame, spec: Spec) -> nw.LazyFrame:
    """The public per-group table from :func:`counts`: by keys, the item group (under the
    item_group= name), n_items, catalog_share, relevant_share, then per k rec_share,
    exposure_share, group_recall and (with train=) p_rec, unsorted (the caller joins the data
    checks first, then sorts)."""
    keys = list(spec.columns.by) or [n.GROUP]
    ks = spec.selection.ks
    totals = _frames.group_agg(
        table,
        keys,
        nw.col(_SIZE).sum().alias("__rf_ig_size_total"),
        nw.col(_RELEVANT).sum().alias("__rf_ig_relevant_total"),
        *(nw.col(_c(c, k)).sum().alias(f"{_c(c, k)}:total") for k in ks for c in ("slots", "exposure")),
    )
    table = table.join(totals, on=keys, how="left")
    columns = [
        nw.col(_SIZE).alias("n_items"),
        _ratio(nw.col(_SIZE), nw.col("__rf_ig_size_total")).alias("catalog_share"),
        _ratio(nw.col(_RELEVANT), nw.col("__rf_ig_relevant_total")).alias("relevant_share"),
    ]
    trained = _T in table.columns
    for k in ks:
        columns += [
            _ratio(nw.col(_c("slots", k)), nw.col(f"{_c('slots', k)}:total")).alias(f"rec_share@{k}"),
            _ratio(nw.col(_c("exposure", k)), nw.col(f"{_c('exposure', k)}:total")).alias(f"exposure_share@{k}"),
            _ratio(nw.col(_c("hits", k)), nw.col(_RELEVANT)).alias(f"group_recall@{k}"),
        ]
        if trained:
            candidates = nw.col(_LISTS) * nw.col(_SIZE) - nw.col(_T)
            columns.append(_ratio(nw.col(_c("untrained_slots", k)), candidates).alias(f"p_rec@{k}"))
    name = str(spec.selection.item_group)
    # a count of items, a whole number unless an item of a label list is shared by its groups
    size = nw.col("n_items").cast(nw.Float64 if spec.facts.label_groups else nw.Int64)
    out = table.select(*spec.columns.by, nw.col(n.ITEM_GROUP).alias(name), *(c.cast(nw.Float64) for c in columns))
    return out.with_columns(size)


def add_rule(column: str) -> str:
    """How a column of the :func:`counts` of two disjoint sets of users adds (``summary(partitions=)``,
    by :func:`recframe.statistics._parts.add`): every count summed, the catalog weight |g| kept."""
    return "max" if column == _SIZE else "sum"


def summaries(table: nw.LazyFrame, spec: Spec) -> nw.LazyFrame:
    """Per summary group: the registry's group-level item-group terms (those of the asked
    metrics), over the catalog's item groups of :func:`counts` (ItemGroupRows).

    The registry's totals and means per summary group are windows over `table`, so that it is
    read once: a group-by joined back would make Polars compute `table`'s plan again for each
    reader (10M rows: 3.5 s against 0.6 s)."""
    return _summed(table.filter(~nw.col(n.ITEM_GROUP).is_null()), list(spec.columns.by) or [n.GROUP], spec, "group")


def refuse_bad_name(spec: Spec, schema: dict[str, Any]) -> None:
    """item_group="popularity" is the derived split; an items= column of that name is ambiguous."""
    if spec.selection.item_group == "popularity" and "popularity" in schema:
        raise fail(
            f"{fix('item_group', 'popularity')} is the head and tail of {ref('train')}, and {ref('items')} also has a "
            "column 'popularity': recframe would not know which one is meant.",
            "rename that column of items= to use it as the groups.",
        )
