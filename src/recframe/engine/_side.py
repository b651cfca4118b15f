"""The side inputs of the beyond-accuracy metrics, as columns joined onto the rows that read them.

``train=`` gives each item's popularity (its distinct training users), the long-tail head and,
without ``items=``, the catalog; ``items=`` gives the catalog and the item features of
``item_features=``; ``baseline=`` names the model whose lists ``intersection`` and
``unexpectedness`` compare with. Each is joined only onto the rows of the passes whose terms
read it (the rows ranked within the largest k), never onto the whole frame.

The side frames are checked when the call is made, one small query each (nulls, duplicate
catalog items, unusable feature values): their problems would otherwise surface as wrong
numbers, not as errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import narwhals as nw

from recframe import _names as n
from recframe.engine import _frames
from recframe.engine._validate import Spec, fail, reads
from recframe.errors import fix, ref
from recframe.metrics import FEATURES, TERMS

_ITEM_LEVEL = {"popularity", "popularity_rank", "in_head", "item_features"}
_CONSTANTS = {"n_train_users": n.N_TRAIN_USERS, "train_pairs": n.TRAIN_PAIRS, "catalog_size": n.CATALOG_SIZE}


@dataclass(frozen=True)
class SideInputs:
    """The side frames of one call, renamed to internal names (``USER``, ``ITEM``, features)."""

    train: nw.LazyFrame | None = None
    items: nw.LazyFrame | None = None


def needs_catalog(spec: Spec) -> bool:
    """Whether the call reads the catalog (coverage, Gini, item features): then a recommended
    item outside it is an error (see :func:`outside_catalog`); never with ``checks=False``."""
    if not spec.selection.checks:
        return False
    return reads(spec.selection.metrics, "catalog", "items", "item_features") or spec.selection.item_group is not None


def side_columns(term_names: list[str]) -> set[str]:
    """The side columns the named terms (and the row features they read) need."""
    out: set[str] = set()
    for name in term_names:
        term = TERMS[name]
        out.update(term.side)
        for feature in term.features:
            out.update(FEATURES[feature].side)
    return out


def renamed(frame: nw.LazyFrame, spec: Spec, arg: str) -> nw.LazyFrame:
    """train= as (USER, ITEM); items= as (ITEM, the item_features= columns renamed, and the
    item_group= column as ITEM_GROUP)."""
    if arg == "train":
        return frame.select(nw.col(str(spec.columns.user)).alias(n.USER), nw.col(spec.columns.item).alias(n.ITEM))
    group = spec.selection.item_group
    return frame.select(
        nw.col(spec.columns.item).alias(n.ITEM),
        *(nw.col(f).alias(n.item_feature(f)) for f in spec.selection.item_features),
        *([nw.col(group).alias(n.ITEM_GROUP)] if group not in (None, "popularity") else []),
    )


def _collect_row(frame: nw.LazyFrame, exprs: list[nw.Expr]) -> dict[str, Any]:
    return frame.select(*exprs).collect().rows(named=True)[0]


def _null_keys(row: dict[str, Any], user: str, item: str) -> None:
    """Refuse a null user or item of train= (counted in `row` as ``null_user``, ``null_item``)."""
    for key, name in (("null_user", user), ("null_item", item)):
        if row[key]:
            raise fail(
                f"column {name!r} of {ref('train')} has {row[key]} null value(s); each training interaction needs a user and an item.",
                "drop them first, e.g. train.drop_nulls([...]).",
            )


def check_train_keys(train: nw.LazyFrame, user: str, item: str) -> None:
    """train= (its columns as given) has a user and an item on every row, as :func:`check_train`
    checks for the metrics (one small query): user_cohorts and item_strata count its pairs."""
    row = _collect_row(train, [nw.col(user).null_count().alias("null_user"), nw.col(item).null_count().alias("null_item")])
    _null_keys(row, user, item)


def check_train(train: nw.LazyFrame, spec: Spec) -> None:
    """train= has a user and an item on every row and at least one row (one small query)."""
    user, item = str(spec.columns.user), spec.columns.item
    row = _collect_row(
        train,
        [
            nw.len().alias("rows"),
            nw.col(n.USER).null_count().alias("null_user"),
            nw.col(n.ITEM).null_count().alias("null_item"),
            nw.col(n.USER).n_unique().alias("users"),
        ],
    )
    _null_keys(row, user, item)
    if not row["rows"]:
        raise fail(f"{ref('train')} has no rows: item popularity and novelty need training interactions.")
    uses_log_n = "novelty" in spec.selection.metrics and spec.conventions.novelty == "surprisal"
    if uses_log_n and row["users"] < 2:
        raise fail(
            f"{fix('novelty', 'surprisal')} divides by log2 of the training users, and {ref('train')} has "
            f"{row['users']} user: the division is undefined.",
            f"use {fix('novelty', 'self_information')}, or a train= with more users.",
        )


def is_label_list(dtype: Any) -> bool:
    """Whether an item feature holds label sets (a list column such as genres)."""
    return isinstance(dtype, (nw.List, nw.Array))


def check_items(items: nw.LazyFrame, spec: Spec, schema: dict[str, Any]) -> None:
    """items= has one row per item, no null item or feature, and usable feature values: no
    NaN (under any distance), finite non-zero vectors under cosine, label lists only where
    they are read as label sets (distance="jaccard", or category counts), none of them empty
    or holding a null label."""
    item = spec.columns.item
    features = spec.selection.item_features
    lists = [f for f in features if is_label_list(schema[f])]
    ild = "ild" in spec.selection.metrics
    if lists and ild and spec.conventions.distance != "jaccard":
        raise fail(
            f"column {lists[0]!r} of {ref('items')} ({ref('item_features')}) holds {schema[lists[0]]}: label sets, which "
            f"{fix('distance', spec.conventions.distance)} would compare as one value (two films sharing a genre as "
            "fully different).",
            f"pass {fix('distance', 'jaccard')} for ild over label sets.",
        )
    cosine = spec.conventions.distance == "cosine" and ild
    if cosine:
        for f in features:
            if not schema[f].is_numeric() or schema[f] == nw.Boolean:
                raise fail(
                    f"column {f!r} of {ref('items')} ({ref('item_features')}) is {schema[f]}, and {fix('distance', 'cosine')} "
                    "needs numbers (one column per dimension of the item vectors).",
                    f"pass numeric columns, or {fix('distance', 'hamming')} for categories.",
                )
    columns = {f: n.item_feature(f) for f in features}
    exprs = [
        nw.len().alias("rows"),
        nw.col(n.ITEM).null_count().alias("null_item"),
        nw.col(n.ITEM).n_unique().alias("distinct"),
        *(nw.col(c).null_count().alias(f"null:{f}") for f, c in columns.items()),
    ]
    # per feature, the values no distance can use: NaN (under any distance, so that every
    # backend refuses alike), infinite under cosine, an empty label list
    bad: dict[str, nw.Expr] = {}
    for f, c in columns.items():
        if is_label_list(schema[f]):
            bad[f] = nw.col(c).list.len() == 0
        elif cosine:
            bad[f] = ~nw.col(c).cast(nw.Float64).is_finite()
        elif schema[f].is_float():
            bad[f] = nw.col(c).is_nan()
    checked = items.with_columns(e.fill_null(False).cast(nw.Int64).alias(f"bad:{f}") for f, e in bad.items())
    exprs += [nw.col(f"bad:{f}").sum() for f in bad]
    if cosine and columns:
        # a zero vector has no direction; its largest component says so without squaring
        scale = nw.max_horizontal(*(nw.col(c).cast(nw.Float64).abs() for c in columns.values()))
        checked = checked.with_columns((scale == 0).cast(nw.Int64).alias("zero"))
        exprs.append(nw.col("zero").sum())
    row = _collect_row(checked, exprs)
    if row["null_item"]:
        raise fail(f"column {item!r} of {ref('items')} has {row['null_item']} null value(s).", "drop them first.")
    if row["distinct"] < row["rows"]:
        raise fail(
            f"{ref('items')} has {row['rows']} rows but {row['distinct']} distinct {item!r} values; the catalog needs one "
            "row per item.",
            f"keep one row per item, e.g. items.unique(subset=[{item!r}]).",
        )
    for f in features:
        if row[f"null:{f}"]:
            raise fail(
                f"column {f!r} of {ref('items')} ({ref('item_features')}) has {row[f'null:{f}']} null value(s); an item "
                "without a feature value has no distance to the others.",
                f"fill them first, e.g. items.with_columns(pl.col({f!r}).fill_null('unknown')).",
            )
        if row.get(f"bad:{f}") and is_label_list(schema[f]):
            raise fail(
                f"column {f!r} of {ref('items')} ({ref('item_features')}) has {row[f'bad:{f}']} empty label list(s): an item "
                "without a label has no Jaccard distance and no category.",
                "give each item at least one label (e.g. 'unknown').",
            )
        if row.get(f"bad:{f}"):
            what = "NaN or infinite" if cosine else "NaN"
            raise fail(f"column {f!r} of {ref('items')} has {row[f'bad:{f}']} {what} value(s).", "fill or drop them.")
    for f in lists:
        labels = items.select(nw.col(columns[f])).explode(columns[f])
        # (an empty list explodes to one null, and was refused above)
        if int(labels.select(nw.col(columns[f]).null_count()).collect().item()):
            raise fail(
                f"column {f!r} of {ref('items')} ({ref('item_features')}) has a null label inside a list.",
                "drop the null labels, e.g. items.with_columns(pl.col(...).list.drop_nulls()).",
            )
    if row.get("zero"):
        raise fail(
            f"{ref('items')} has {row['zero']} item(s) whose {ref('item_features')} vector is all zeros, which has no "
            "cosine distance to anything.",
            f"give them a non-zero vector, or use {fix('distance', 'hamming')}.",
        )


def _popularity(train: nw.LazyFrame) -> nw.LazyFrame:
    """ITEM, POPULARITY: the distinct training users of each item.

    On Polars an explicit cache node (one row per training item, small): the head and the
    popularity ranks read it three times, and the per-list table runs without Polars' own
    common-subplan elimination (recframe.engine._frames.when_collected), which would otherwise
    count the training pairs three times (10M rows with aclt: about 0.1 s)."""
    out = train.group_by(n.ITEM).agg(nw.col(n.USER).n_unique().cast(nw.Int64).alias(n.POPULARITY))
    return _frames.cache(out)


def constants(spec: Spec, side: SideInputs) -> nw.LazyFrame:
    """One row: the training users, the distinct training pairs and the catalog size (the
    columns the side inputs give). The training items are aggregated once for both the pairs
    and, without items=, the catalog size."""
    parts = []
    if side.train is not None:
        parts.append(side.train.select(nw.col(n.USER).n_unique().cast(nw.Int64).alias(n.N_TRAIN_USERS)))
        per_item = [nw.col(n.POPULARITY).sum().cast(nw.Int64).alias(n.TRAIN_PAIRS)]
        if side.items is None:  # the catalog is the training items
            per_item.append(nw.len().cast(nw.Int64).alias(n.CATALOG_SIZE))
        parts.append(_popularity(side.train).select(*per_item))
    if side.items is not None:
        parts.append(side.items.select(nw.len().cast(nw.Int64).alias(n.CATALOG_SIZE)))
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, how="cross")
    return out


def _popularity_table(spec: Spec, side: SideInputs, needs: set[str]) -> nw.LazyFrame:
    """ITEM, POPULARITY of every training item, with IN_HEAD and POPULARITY_RANK when `needs`
    asks for them."""
    assert side.train is not None  # the metrics' requires made sure of it
    popularity = _popularity(side.train)
    if needs & {"in_head", "popularity_rank"}:
        popularity = popularity.join(_levels(spec, popularity), on=n.POPULARITY, how="left")
    return popularity


def item_table(spec: Spec, side: SideInputs, needs: set[str]) -> nw.LazyFrame:
    """The catalog: ITEM, IN_CATALOG (1) and the item-level side columns `needs` asks for, one
    row per item of items= (without items=, per training item). With items= the popularity
    columns are those of the catalog's items (null for an item never trained on); a training
    item outside items= has none here (see :func:`join`)."""
    popular = needs & {"popularity", "popularity_rank", "in_head"}
    if side.items is None:
        return _popularity_table(spec, side, popular).with_columns(nw.lit(1).cast(nw.Int64).alias(n.IN_CATALOG))
    features = [n.item_feature(f) for f in spec.selection.item_features]
    out = side.items.select(n.ITEM, *features).with_columns(nw.lit(1).cast(nw.Int64).alias(n.IN_CATALOG))
    return out.join(_popularity_table(spec, side, popular), on=n.ITEM, how="left") if popular else out


def _levels(spec: Spec, popularity: nw.LazyFrame) -> nw.LazyFrame:
    """POPULARITY, IN_HEAD, POPULARITY_RANK per distinct popularity value. An item is in the
    head when the items strictly more popular than it hold less than ``head_share`` of the
    training pairs (so the most popular item always is, and items of equal popularity are never
    split); its popularity rank is the number of distinct popularity values >= its own."""
    levels = popularity.group_by(n.POPULARITY).agg(nw.col(n.POPULARITY).sum().alias("__rf_level"))
    levels = levels.with_columns((-nw.col(n.POPULARITY)).alias("__rf_neg"), nw.lit(1).cast(nw.Int64).alias(n.ONE))
    levels = levels.with_columns(
        nw.col("__rf_level").cum_sum().over(order_by="__rf_neg").alias("__rf_through"),
        nw.col(n.ONE).cum_sum().over(order_by="__rf_neg").alias(n.POPULARITY_RANK),
    )
    total = popularity.select(nw.col(n.POPULARITY).sum().alias("__rf_total"))
    before = nw.col("__rf_through") - nw.col("__rf_level")
    return levels.join(total, how="cross").select(
        n.POPULARITY,
        (before < spec.selection.head_share * nw.col("__rf_total")).cast(nw.Int64).alias(n.IN_HEAD),
        nw.col(n.POPULARITY_RANK).cast(nw.Int64),
    )


def is_baseline(spec: Spec) -> nw.Expr:
    """The rows of the baseline model (a string, as the CLI gives it, matches the key's text)."""
    model, value = nw.col(spec.columns.model_keys[0]), spec.selection.baseline
    return (model.cast(nw.String) if isinstance(value, str) else model) == value


def baseline_table(lf: nw.LazyFrame, spec: Spec) -> nw.LazyFrame:
    """The baseline model's lists within the largest k: the other list keys, USER, ITEM, BASE_RANK."""
    model = spec.columns.model_keys[0]
    others = [c for c in spec.columns.list_keys if c != model]
    top = max(spec.selection.ks)
    rows = lf.filter(is_baseline(spec) & (nw.col(n.RANK) <= top).fill_null(False))
    return rows.select(*others, n.USER, n.ITEM, nw.col(n.RANK).alias(n.BASE_RANK))


def _item_labels(spec: Spec, items: nw.LazyFrame) -> nw.LazyFrame:
    """ITEM, LABEL: each item's label set, one row per label. A list column gives its
    elements, a scalar column its value; several columns pool their labels, each tagged with
    its column so that equal values of two columns stay apart."""
    schema = items.collect_schema()
    parts = []
    for f in spec.selection.item_features:
        c = n.item_feature(f)
        rows = items.select(n.ITEM, nw.col(c).alias(n.LABEL))
        if is_label_list(schema[c]):
            rows = rows.explode(n.LABEL)
        parts.append(rows.select(n.ITEM, nw.concat_str(nw.lit(f"{f}\x1f"), nw.col(n.LABEL).cast(nw.String)).alias(n.LABEL)))
    return nw.concat(parts, how="vertical").unique()


def label_tables(spec: Spec, side: SideInputs, lf: nw.LazyFrame) -> nw.LazyFrame:
    """Per row ranked within the largest k (list keys, USER, ITEM): SIMILARITY_BEFORE, the
    sum over the items ranked before it of |A ∩ B| / |A ∪ B| of their label sets, and
    NEW_LABELS, the labels no item before it carries.

    Linear in the labels of the top k: only pairs of items that share a label meet (a join
    on the label within each list), and a pair sharing none adds 0 to the sum.
    """
    assert side.items is not None  # item_features= needs items=
    keys = [*spec.columns.list_keys, n.USER]
    ranked = lf.filter((nw.col(n.RANK) <= max(spec.selection.ks)).fill_null(False)).select(*keys, n.ITEM, n.RANK)
    labels = _item_labels(spec, side.items)
    sizes = _frames.group_agg(labels, [n.ITEM], nw.len().cast(nw.Float64).alias(n.N_LABELS))
    rows = ranked.join(labels, on=n.ITEM, how="inner")
    # the labels each row is the first of its list to carry
    first = _frames.group_agg(rows, [*keys, n.LABEL], nw.col(n.RANK).min().alias("__rf_first"))
    new = rows.join(first, on=[*keys, n.LABEL], how="inner").filter(nw.col(n.RANK) == nw.col("__rf_first"))
    new = _frames.group_agg(new, [*keys, n.ITEM], nw.len().cast(nw.Int64).alias(n.NEW_LABELS))
    # the labels each pair (earlier a, later b) shares, then their Jaccard similarity
    later = rows.rename({n.ITEM: "__rf_item_b", n.RANK: "__rf_rank_b"})
    pairs = rows.join(later, on=[*keys, n.LABEL], how="inner").filter(nw.col(n.RANK) < nw.col("__rf_rank_b"))
    shared = _frames.group_agg(pairs, [*keys, n.ITEM, "__rf_item_b"], nw.len().cast(nw.Float64).alias("__rf_shared"))
    shared = shared.join(sizes, on=n.ITEM, how="inner").join(
        sizes.rename({n.ITEM: "__rf_item_b", n.N_LABELS: "__rf_n_b"}), on="__rf_item_b", how="inner"
    )
    union = nw.col(n.N_LABELS) + nw.col("__rf_n_b") - nw.col("__rf_shared")
    shared = shared.with_columns((nw.col("__rf_shared") / union).alias(n.SIMILARITY_BEFORE))
    before = _frames.group_agg(shared, [*keys, "__rf_item_b"], nw.col(n.SIMILARITY_BEFORE).sum()).rename({"__rf_item_b": n.ITEM})
    out = ranked.select(*keys, n.ITEM).join(before, on=[*keys, n.ITEM], how="left")
    return out.join(new, on=[*keys, n.ITEM], how="left")


def join(part: nw.LazyFrame, spec: Spec, side: SideInputs, needs: set[str], lf: nw.LazyFrame) -> nw.LazyFrame:
    """`part` (rows of one pass) with the side columns `needs` asks for; with the catalog flag
    when the call reads the catalog. `lf` is the whole prepared frame (the baseline's lists)."""
    item_level = needs & _ITEM_LEVEL
    catalog = needs_catalog(spec)
    if item_level or catalog:
        popular = item_level & {"popularity", "popularity_rank", "in_head"}
        if side.items is not None and popular:
            # the popularity, and the catalog only where it is read (its flag, the item
            # features; 10M rows: a join of 1M items saved): a ranked training item outside
            # items= keeps its popularity (and is flagged outside the catalog)
            tables = [_popularity_table(spec, side, popular)]
            if catalog or item_level - popular:
                tables.insert(0, item_table(spec, side, item_level - popular))
        else:
            tables = [item_table(spec, side, item_level)]
        for table in tables:
            part = part.join(table, on=n.ITEM, how="left")
        fills = {n.POPULARITY: 0, n.IN_HEAD: 0}
        added = {c for table in tables for c in table.columns}
        part = part.with_columns(nw.col(c).fill_null(v) for c, v in fills.items() if c in added)
    wanted = [c for name, c in _CONSTANTS.items() if name in needs]
    if wanted:
        part = part.join(constants(spec, side).select(*wanted), how="cross")
    jaccard = "similarity_before" in needs and spec.conventions.distance == "jaccard"
    if jaccard or ("new_labels" in needs and spec.facts.label_features):
        on = [*spec.columns.list_keys, n.USER, n.ITEM]
        part = part.join(label_tables(spec, side, lf), on=on, how="left")
    if "baseline_rank" in needs:
        on = [*(c for c in spec.columns.list_keys if c != spec.columns.model_keys[0]), n.USER, n.ITEM]
        part = part.join(baseline_table(lf, spec), on=on, how="left")
    return part


def outside_catalog(spec: Spec) -> tuple[dict[str, nw.Expr], list[nw.Expr]]:
    """The row flag and per-list counts of the catalog check: rows ranked within the largest k
    whose item is not in the catalog (items=, else the items of train=)."""
    top = max(spec.selection.ks)
    flag = (nw.col(n.RANK) <= top).fill_null(False) & nw.col(n.IN_CATALOG).is_null()
    return (
        {n.OUTSIDE_CATALOG: flag.cast(nw.Int64), n.OUTSIDE_ITEM: nw.when(flag).then(nw.col(n.ITEM)).otherwise(None)},
        [nw.col(n.OUTSIDE_CATALOG).sum(), nw.col(n.OUTSIDE_ITEM).min()],
    )
