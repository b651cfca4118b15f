"""Beyond accuracy: novelty, popularity, long tail, diversity and overlap of each list; coverage,
exposure concentration and personalization of each model.

Every value reads the rows ranked within k (``n`` below: the items of a list ranked <= k) and,
where it says so, a side input: ``train=`` (the popularity u(i) of item i = its distinct
training users; N = the training users; P = the distinct training (user, item) pairs),
``items=`` (the catalog, of size n_cat, and the features of ``item_features=``) or
``baseline=`` (a model's lists). Pairwise quantities are computed from running counts and item
counts, never from pairs, so the cost stays linear in the rows.

User-level (a value per list, averaged by ``summary``; null for a user with nothing
recommended, who is left out of its mean):

- ``novelty@k`` = (1/n) * sum over i ranked <= k of -log2(max(u(i), 1) / N), divided by
  log2(N) and over k instead of n under ``novelty="surprisal"`` (RePlay's Surprisal).
- ``popularity@k`` = (1/n) * sum of u(i) (``popularity="share"``: of u(i) / P).
- Under ``cold_items="skip"`` (Evidently) both leave out the items ranked <= k that are not in
  ``train=`` (u(i) = 0): the sums run over the others and n is their number (``surprisal``
  still divides by k); a list whose top k holds none of them is null, left out of the mean.
- ``long_tail@k`` = the share of the n items outside the head, the head being the most popular
  items that, taken in decreasing popularity, come before ``head_share`` (default 0.2) of the
  training pairs is reached (items of equal popularity fall on the same side).
- ``aclt@k`` = the number of those n items outside the head (Abdollahpouri et al. 2019's
  ACLT, averaged over users by ``summary``; ``long_tail`` is their APLT).
- ``ild@k`` = the mean distance over the n(n-1)/2 pairs of items ranked <= k (0 when n < 2),
  by ``distance``: Hamming, 1 - cosine, or 1 - Jaccard of label sets (list features).
- ``category_diversity@k`` = the distinct categories (values of the ``item_features``, taken
  together) among the items ranked <= k, over k (RePlay's CategoricalDiversity); with label
  lists, the distinct labels over k.
- ``intersection@k`` = |top k ∩ the baseline's top k| / n (RecTools' Intersection);
  ``unexpectedness@k`` = 1 - |top k ∩ the baseline's top k| / k (RePlay's Unexpectedness).
- ``serendipity@k`` = (1/n) * sum over relevant i ranked <= k of max(r_pop(i) - rank(i), 0)
  / n_cat, r_pop(i) = i's dense rank among the training items by decreasing u(i) (n_cat + 1
  for an item not in ``train=``): relevant items the list places higher than their
  popularity would (RecTools' Serendipity, whose code divides by n where its docstring says
  k).

Group-level (a value per ``summary`` group, from every list of the group; c(i) = the lists of
the group that rank item i <= k, C = sum of c(i)):

- ``catalog_coverage@k`` = |{i : c(i) > 0}| / n_cat.
- ``user_coverage@k`` = the share of the group's lists with an item ranked <= k;
  ``user_coverage_full@k`` = the share with k of them.
- ``gini@k`` = sum over the n_cat catalog items, in increasing c, of (2j - n_cat - 1) c(j) /
  (n_cat * C): 0 when every catalog item is recommended equally often, (n_cat - 1) / n_cat
  when one item takes every slot.
- ``entropy@k`` = -sum over recommended items of (c(i)/C) log2(c(i)/C) (MS Recommenders'
  distributional coverage).
- ``personalization@k`` = 1 - (sum over items of c(i)(c(i)-1)/2) / (U(U-1)/2 * k), U the lists
  with an item ranked <= k: one minus the mean overlap of two users' top k, as a share of k.
"""

from __future__ import annotations

from collections.abc import Callable

import narwhals as nw

from recframe import _names as names
from recframe._names import POSITION
from recframe.conventions import Conventions
from recframe.metrics._registry import (
    Feature,
    Metric,
    Rows,
    Side,
    Term,
    at_least_one,
    col,
    cutoff,
    declare,
    divided,
    position_cut,
    within,
)


def _within(rows: Rows, k: int | None, value: nw.Expr | float) -> nw.Expr:
    """`value` on the rows ranked <= k, else 0."""
    return within(rows.rank, cutoff(k), value)


def _before(rows: Rows, keys: list[str], *partition: str) -> nw.Expr:
    """The rows of the same list (and the same `partition` values) ranked before this one."""
    return rows.one.cum_sum().over(*keys, *partition, order_by=POSITION) - 1


def _distance_before(rows: Rows, keys: list[str]) -> nw.Expr:
    """The sum of this item's distances to the items ranked before it in its list."""
    earlier = _before(rows, keys)
    features = rows.item_features
    if rows.conventions.distance == "jaccard":
        # 1 - similarity to each earlier item: the similarities come summed per row from the
        # label sets (recframe.engine._side.label_tables: pairs that share a label only)
        return earlier - rows.side("similarity_before").fill_null(0.0)
    if rows.conventions.distance == "cosine":
        # unit vectors u: the sum of u . u_j over earlier j = u . (running sum of u) - u . u.
        # Each vector is scaled by its largest component before squaring, so that neither
        # 1e200 (squares overflow) nor 1e-200 (squares underflow to a zero vector) is lost
        scale = nw.max_horizontal(*(nw.col(f).cast(nw.Float64).abs() for f in features))
        scaled = [nw.col(f).cast(nw.Float64) / scale for f in features]
        length = nw.sum_horizontal(*(x**2 for x in scaled)).sqrt()
        units = [x / length for x in scaled]
        dots = [u * (u.cum_sum().over(*keys, order_by=POSITION) - u) for u in units]
        return earlier - nw.sum_horizontal(*dots)
    # Hamming: per feature, the earlier items minus the earlier items with the same value
    return nw.sum_horizontal(*(earlier - _before(rows, keys, f) for f in features))


def _unexpected_place(rows: Rows) -> nw.Expr:
    """max(rank_pop - rank, 0) / n_cat: how much higher the list places the item than its
    popularity does (an item not in train= ranks n_cat + 1 by popularity)."""
    n_cat = rows.side("catalog_size").cast(nw.Float64)
    by_popularity = rows.side("popularity_rank").cast(nw.Float64).fill_null(n_cat + 1)
    return (by_popularity - rows.rank.cast(nw.Float64)).clip(lower_bound=0) / n_cat


def _self_information(rows: Rows) -> nw.Expr:
    users = rows.side("popularity").clip(lower_bound=1).cast(nw.Float64)
    information = rows.side("n_train_users").cast(nw.Float64).log(2) - users.log(2)
    if rows.conventions.cold_items == "skip":  # an item not in train= (popularity 0) adds nothing
        return nw.when(rows.side("popularity") > 0).then(information).otherwise(0.0)
    return information


def _sum_within(
    name: str, value: Callable[[Rows, int], nw.Expr], side: tuple[Side, ...] = (), features: tuple[str, ...] = ()
) -> Term:
    """A user-level sum of `value(rows, k)` over the rows ranked <= k."""
    return Term(name, "top_k", lambda r, k: _within(r, k, value(r, cutoff(k))), at_k=True, side=side, features=features)


def _distinct_within(
    name: str,
    value: Callable[[Rows], nw.Expr],
    also: Callable[[Rows, int], nw.Expr] | None = None,
    features: tuple[str, ...] = (),
    of_users: bool = False,
) -> Term:
    """A group-level count of the distinct values among the rows ranked <= k (and `also`):
    null elsewhere, which a group-level n_unique does not count. `of_users`: the value is
    the list's user (see Term.of_users)."""

    def inside_or_null(r: Rows, k: int | None) -> nw.Expr:
        inside = r.rank <= position_cut(cutoff(k))
        return nw.when(inside & also(r, cutoff(k)) if also else inside).then(value(r))

    return Term(name, "top_k", inside_or_null, at_k=True, agg="n_unique", level="group", features=features, of_users=of_users)


def _exposures(name: str, per_item: Callable[[nw.Expr, list[str]], nw.Expr] | None = None) -> Term:
    """A group-level sum over the rows ranked <= k: their number, or with `per_item`, a
    function of each item's count c summed over the items."""
    return Term(name, "top_k", lambda r, k: _within(r, k, 1.0), at_k=True, level="group", per_item=per_item)


declare(
    # (similarity_before is joined under distance="jaccard" only)
    Feature("distance_before", _distance_before, side=("item_features", "similarity_before")),
    # 1, 2, 3, ... down each list's rows ranked within the largest k
    Feature("list_position", lambda rows, keys: rows.one.cum_sum().over(*keys, order_by=POSITION)),
    # 1 for the first item of its category (its item_features values) in the list, else 0;
    # with label lists, the labels the item is the first in the list to carry
    # (new_labels is joined with label lists only)
    Feature(
        "first_of_category",
        lambda rows, keys: (
            rows.side("new_labels").fill_null(0).cast(nw.Float64)
            if rows.labels
            else (_before(rows, keys, *rows.item_features) == 0).cast(nw.Float64)
        ),
        side=("item_features", "new_labels"),
    ),
)

declare(
    # user level: sums over the items ranked <= k
    _sum_within("novelty_sum@", lambda r, k: _self_information(r), side=("popularity", "n_train_users")),
    _sum_within("popularity_sum@", lambda r, k: r.side("popularity").cast(nw.Float64), side=("popularity",)),
    # the items in train= (cold_items="skip": what novelty and popularity average over)
    _sum_within("in_train@", lambda r, k: (r.side("popularity") > 0).cast(nw.Float64), side=("popularity",)),
    _sum_within("tail@", lambda r, k: 1 - r.side("in_head"), side=("in_head",)),
    _sum_within("serendipity_sum@", lambda r, k: r.relevant * _unexpected_place(r), side=("popularity_rank", "catalog_size")),
    _sum_within("distance_sum@", lambda r, k: r.feature("distance_before"), features=("distance_before",)),
    _sum_within("new_categories@", lambda r, k: r.feature("first_of_category"), features=("first_of_category",)),
    _sum_within(
        "baseline_hits@",
        lambda r, k: (r.side("baseline_rank") <= k).fill_null(False).cast(nw.Float64),
        side=("baseline_rank",),
    ),
    # values of the side inputs alone
    Term("n_train_users", "side", lambda r, k: r.side("n_train_users"), side=("n_train_users",)),
    Term("train_pairs", "side", lambda r, k: r.side("train_pairs"), side=("train_pairs",)),
    # group level
    Term("catalog_size", "side", lambda r, k: r.side("catalog_size"), level="group", side=("catalog_size",)),
    _distinct_within("recommended_items@", lambda r: r.item),
    _distinct_within("served_users@", lambda r: r.user, of_users=True),
    # the list's k-th row is ranked <= k: k items within the top k
    _distinct_within(
        "full_users@", lambda r: r.user, lambda r, k: r.feature("list_position") == k, ("list_position",), of_users=True
    ),
    _exposures("exposures@"),
    # c(i) times i's place among the group's items by decreasing c (ties: any order, the sum is
    # the same); items never recommended come last and add 0
    _exposures("exposure_rank_sum@", lambda c, keys: c * c.rank("ordinal", descending=True).over(*keys).cast(nw.Float64)),
    _exposures("exposure_c_log_c@", lambda c, keys: nw.when(c > 0).then(c * c.log(2)).otherwise(0.0)),
    _exposures("shared_pairs@", lambda c, keys: c * (c - 1) / 2),
)


def _per_item_mean(term: str, k: int | None, over: str = "retrieved@") -> nw.Expr:
    """A sum over the items ranked <= k, over their number (or the count `over`: null where
    it is 0, as for an empty top k)."""
    n = col(over, k)
    return nw.when(n > 0).then(col(term, k) / at_least_one(n)).otherwise(None)


def _counted_items(o: Conventions) -> str:
    """The items novelty and popularity average over: every item ranked <= k, or under
    cold_items="skip" those in train=."""
    return "in_train@" if o.cold_items == "skip" else "retrieved@"


def _novelty(k: int | None, o: Conventions) -> nw.Expr:
    if o.novelty == "surprisal":
        # RePlay's Surprisal: over log2 N, summed over the top k and divided by k
        value = divided(col("novelty_sum@", k) / col("n_train_users").cast(nw.Float64).log(2), cutoff(k))
        return nw.when(col("in_train@", k) > 0).then(value).otherwise(None) if o.cold_items == "skip" else value
    return _per_item_mean("novelty_sum@", k, _counted_items(o))


def _popularity(k: int | None, o: Conventions) -> nw.Expr:
    value = _per_item_mean("popularity_sum@", k, _counted_items(o))
    return value / col("train_pairs") if o.popularity == "share" else value


def _ild(k: int | None, o: Conventions) -> nw.Expr:
    n = col("retrieved@", k)
    return nw.when(n > 1).then(col("distance_sum@", k) / at_least_one(n * (n - 1) / 2)).otherwise(0.0)


def _gini(k: int | None, o: Conventions) -> nw.Expr:
    n_cat, total = col("catalog_size"), col("exposures@", k)
    value = (n_cat + 1) / n_cat - 2 * col("exposure_rank_sum@", k) / (n_cat * total)
    return nw.when(total > 0).then(value).otherwise(None)


def _entropy(k: int | None, o: Conventions) -> nw.Expr:
    total = col("exposures@", k)
    return nw.when(total > 0).then(total.log(2) - col("exposure_c_log_c@", k) / at_least_one(total)).otherwise(None)


def _personalization(k: int | None, o: Conventions) -> nw.Expr:
    served = col("served_users@", k)
    pairs = served * (served - 1) / 2
    return nw.when(served > 1).then(1 - col("shared_pairs@", k) / (at_least_one(pairs) * cutoff(k))).otherwise(None)


def _share_of_lists(term: str, k: int | None) -> nw.Expr:
    return col(term, k) / at_least_one(nw.col(names.N_LISTS))


BEYOND_ACCURACY = (
    Metric(
        name="novelty",
        terms=lambda o: ("novelty_sum@", _counted_items(o), *(("n_train_users",) if o.novelty == "surprisal" else ())),
        finish=_novelty,
        defined="ranked",
        requires=("train",),
    ),
    Metric(
        name="popularity",
        terms=lambda o: ("popularity_sum@", _counted_items(o), *(("train_pairs",) if o.popularity == "share" else ())),
        finish=_popularity,
        defined="ranked",
        requires=("train",),
        higher_is_better=False,
    ),
    Metric(
        name="long_tail",
        terms=lambda o: ("tail@", "retrieved@"),
        finish=lambda k, o: _per_item_mean("tail@", k),
        defined="ranked",
        requires=("train",),
    ),
    Metric(
        name="aclt",
        terms=lambda o: ("tail@",),
        finish=lambda k, o: col("tail@", k),
        defined="ranked",
        requires=("train",),
    ),
    Metric(
        name="ild",
        terms=lambda o: ("distance_sum@", "retrieved@"),
        finish=_ild,
        defined="ranked",
        requires=("items", "item_features"),
    ),
    Metric(
        name="category_diversity",
        terms=lambda o: ("new_categories@",),
        finish=lambda k, o: divided(col("new_categories@", k), cutoff(k)),
        defined="ranked",
        requires=("items", "item_features"),
    ),
    Metric(
        name="intersection",
        terms=lambda o: ("baseline_hits@", "retrieved@"),
        finish=lambda k, o: _per_item_mean("baseline_hits@", k),
        defined="ranked",
        requires=("baseline",),
        higher_is_better=False,
    ),
    Metric(
        name="unexpectedness",
        terms=lambda o: ("baseline_hits@",),
        finish=lambda k, o: 1 - divided(col("baseline_hits@", k), cutoff(k)),
        defined="ranked",
        requires=("baseline",),
    ),
    Metric(
        name="serendipity",
        terms=lambda o: ("serendipity_sum@", "retrieved@"),
        finish=lambda k, o: _per_item_mean("serendipity_sum@", k),
        defined="ranked",
        requires=("train", "catalog"),
    ),
    Metric(
        name="catalog_coverage",
        terms=lambda o: ("recommended_items@", "catalog_size"),
        finish=lambda k, o: col("recommended_items@", k) / col("catalog_size"),
        level="group",
        requires=("catalog",),
    ),
    Metric(
        name="user_coverage",
        terms=lambda o: ("served_users@",),
        finish=lambda k, o: _share_of_lists("served_users@", k),
        level="group",
    ),
    Metric(
        name="user_coverage_full",
        terms=lambda o: ("full_users@",),
        finish=lambda k, o: _share_of_lists("full_users@", k),
        level="group",
    ),
    Metric(
        name="gini",
        terms=lambda o: ("exposures@", "exposure_rank_sum@", "catalog_size"),
        finish=_gini,
        level="group",
        requires=("catalog",),
        higher_is_better=False,
    ),
    Metric(
        name="entropy",
        terms=lambda o: ("exposures@", "exposure_c_log_c@"),
        finish=_entropy,
        level="group",
    ),
    Metric(
        name="personalization",
        terms=lambda o: ("served_users@", "shared_pairs@"),
        finish=_personalization,
        level="group",
    ),
)
