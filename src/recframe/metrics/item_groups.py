"""Who the lists serve: item groups (``item_group=``), popularity bias and calibration.

The item groups g are the values of an ``items=`` column (a category, a provider; a list
column gives an item several groups, each with weight w(i, g) = 1 / its number of groups) or,
under ``item_group="popularity"``, the long-tail head and tail of ``head_share`` (as
``long_tail`` splits them). Sums below weigh each item i by w(i, g); "slots" are the rows ranked
<= k of every list of the summary group, "hits" the relevant ones among them; U is the lists of
the group with an item recommended, |g| = sum over the catalog of w(i, g), and T(u, g) = sum
over u's distinct training items of w(i, g).

User-level (a value per list, averaged by ``summary``; null for a user with nothing
recommended, or with no training item in ``items=``, who is left out of the mean):

- ``miscalibration@k`` (Steck 2018) = KL(p || q~) = sum over g with p(g) > 0 of
  p(g) ln(p(g) / q~(g)), natural log, with p(g|u) = T(u, g) / sum over g of T(u, g) (the mix of
  the user's training items), q(g|u) = the mix of the items ranked <= k (each weighing 1, or
  1 / log2(rank + 1) under ``calibration_weight="rank"``) and q~ = (1 - alpha) q + alpha p,
  alpha = ``calibration_alpha`` (0.01).
- ``calibration_js@k`` (RADio) = the Jensen-Shannon divergence of p and q, base 2 (from 0,
  the same mix, to 1, no group in common): (KL2(p || m) + KL2(q || m)) / 2, m = (p + q) / 2.

Group-level (a value per ``summary`` group, over its item groups; the per-group values are
:func:`recframe.item_groups`' columns):

- ``pop_rsp@k`` (Zhu et al. 2020, ranking-based statistical parity) = std / mean over the
  groups of P(rec | g) = (slots on g's items the user has not trained on) / (U |g| - sum over
  the U lists of T(u, g)): the chance that an item of g the user has not trained on is
  recommended (a recommended training item counts in neither, so it is at most 1). Population standard
  deviation (ddof=0), as Elliot's.
- ``pop_reo@k`` (ranking-based equal opportunity) = std / mean over the groups of
  P(rec | g, relevant) = (hits on g's items) / (g's relevant items): ``group_recall@k``. Null
  when a group has no relevant item (its recall is undefined).
- ``exposure_disparity@k`` = max over min, across the groups, of exposure_share / relevant_share,
  exposure being sum over slots of 1 / log2(1 + rank) (Singh & Joachims 2018): 1 when every
  group gets the exposure its relevant items earn; infinite when a group with relevant items
  gets none; null when a group has no relevant item.

All three are 0 / 1 at parity, larger further from it, and computed from per-(group, item
group) counts: never from user x item pairs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import narwhals as nw

from recframe.metrics._registry import Agg, ItemGroupRows, Metric, col, cutoff, declare, item_group_term

# ---- user level: per list, over the groups of its items within the largest k (p = train_share,
# q = list_share). Both mixes sum to 1, so a group of p outside the list adds p ln(1 / alpha) to
# KL and p to 2 JS (log2 2 = 1), one of q beyond k adds 0: the list's groups are enough


def _kl(g: ItemGroupRows, k: int) -> nw.Expr:
    p, q, alpha = g.count("train_share"), g.count("list_share", k), g.conventions.calibration_alpha
    return nw.when(p > 0).then(p * ((p / ((1 - alpha) * q + alpha * p)).log() - math.log(1 / alpha))).otherwise(0.0)


def _js(g: ItemGroupRows, k: int) -> nw.Expr:
    p, q = g.count("train_share"), g.count("list_share", k)
    m = (p + q) / 2
    return nw.when(p > 0).then(p * (p / m).log(2) - p).otherwise(0.0) + nw.when(q > 0).then(q * (q / m).log(2) - q).otherwise(0.0)


declare(
    item_group_term("kl_sum@", "user", _kl),
    item_group_term("js_sum@", "user", _js),
    # the user has a training item in the catalog and the list an item within k
    item_group_term(
        "calibrated@",
        "user",
        lambda g, k: ((g.count("train_total").fill_null(0.0) > 0) & (g.count("list_weight", k) > 0)).cast(nw.Int64),
        "max",
    ),
)


def _calibration(name: str, term: str, value: Callable[[nw.Expr, float], nw.Expr]) -> Metric:
    return Metric(
        name=name,
        terms=lambda o: (term, "calibrated@"),
        finish=lambda k, o: nw.when(col("calibrated@", k) > 0).then(value(col(term, k), o.calibration_alpha)).cast(nw.Float64),
        defined="ranked",
        requires=("item_group", "train", "catalog"),
        higher_is_better=False,
    )


# both are >= 0 (and JS <= 1): the clips take off only the rounding of the sums
MISCALIBRATION = _calibration("miscalibration", "kl_sum@", lambda s, a: (math.log(1 / a) + s).clip(lower_bound=0.0))
CALIBRATION_JS = _calibration("calibration_js", "js_sum@", lambda s, a: (1 + s / 2).clip(lower_bound=0.0, upper_bound=1.0))

# ---- group level: per summary group, over the catalog's item groups, of a rate and whether it
# is undefined (the metric is then null); the rate counts as 0 where undefined
Rate = Callable[[ItemGroupRows, int], tuple[nw.Expr, nw.Expr]]
PerGroup = Callable[[ItemGroupRows, int], nw.Expr]


def _n_groups(g: ItemGroupRows) -> nw.Expr:
    return g.count("size").count().over(*g.keys).cast(nw.Float64)


def _value(rate: Rate) -> PerGroup:
    return lambda g, k: nw.when(~rate(g, k)[1]).then(rate(g, k)[0]).otherwise(0.0)


declare(item_group_term("item_groups@", "group", lambda g, k: _n_groups(g), "max"))


def _group(name: str, rate: Rate, aggs: dict[str, tuple[PerGroup, Agg]], finish: Callable[[int], nw.Expr], *needs: str) -> Metric:
    declare(
        *(item_group_term(f"{name}_{a}@", "group", value, agg) for a, (value, agg) in aggs.items()),
        item_group_term(f"{name}_undefined@", "group", lambda g, k: rate(g, k)[1].cast(nw.Int64), "max"),
    )
    terms = (*(f"{name}_{a}@" for a in aggs), f"{name}_undefined@", "item_groups@")
    return Metric(
        name=name,
        terms=lambda o: terms,
        finish=lambda k, o: nw.when(col(f"{name}_undefined@", k) == 0).then(finish(cutoff(k))).cast(nw.Float64),
        level="group",
        requires=("item_group", *needs, "catalog"),
        higher_is_better=False,
    )


def _spread(name: str, rate: Rate, *needs: str) -> Metric:
    """std / mean of the rate over the item groups (population std; null where the mean is 0)."""
    value = _value(rate)

    def deviation(g: ItemGroupRows, k: int) -> nw.Expr:
        return (value(g, k) - g.total(value(g, k)) / _n_groups(g)) ** 2

    def spread(k: int) -> nw.Expr:
        mean = col(f"{name}_sum@", k) / col("item_groups@", k)
        return nw.when(mean > 0).then((col(f"{name}_sq@", k) / col("item_groups@", k)).sqrt() / mean)

    # (the sum: the window's, the one the deviations read)
    return _group(name, rate, {"sum": (lambda g, k: g.total(value(g, k)), "max"), "sq": (deviation, "sum")}, spread, *needs)


def _candidates(g: ItemGroupRows) -> nw.Expr:
    """U |g| - sum over the U lists of T(u, g): the items of g the served users have not trained on."""
    return g.count("lists") * g.count("size") - g.count("trained")


def _exposure_per_relevance(g: ItemGroupRows, k: int) -> tuple[nw.Expr, nw.Expr]:
    exposure, relevant = g.count("exposure", k), g.count("relevant")
    share = (exposure / g.total(exposure)) / (relevant / g.total(relevant))
    return share, (relevant <= 0) | (g.total(exposure) <= 0)


POP_RSP = _spread("pop_rsp", lambda g, k: (g.count("untrained_slots", k) / _candidates(g), _candidates(g) <= 0), "train")
POP_REO = _spread("pop_reo", lambda g, k: (g.count("hits", k) / g.count("relevant"), g.count("relevant") <= 0))
EXPOSURE_DISPARITY = _group(
    "exposure_disparity",
    _exposure_per_relevance,
    {"max": (_value(_exposure_per_relevance), "max"), "min": (_value(_exposure_per_relevance), "min")},
    lambda k: (
        nw.when(col("exposure_disparity_min@", k) > 0)
        .then(col("exposure_disparity_max@", k) / col("exposure_disparity_min@", k))
        .otherwise(math.inf)
    ),
)

ITEM_GROUPS = (MISCALIBRATION, CALIBRATION_JS, POP_RSP, POP_REO, EXPOSURE_DISPARITY)
