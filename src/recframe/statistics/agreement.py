"""How far two models' lists agree, user by user: the overlap of their top k, rank-biased
overlap and Kendall's tau on the items both rank.

Computed in the engine from the prepared rows of one call (:attr:`recframe.engine._engine.Plan.rows`):
a join of two models' top k on (user, item) per pair of models, sums per user, and for Kendall's
tau a join of each user's common items with themselves (at most k(k-1)/2 pairs per user). RBO's
weights by depth are a small table joined on the positions (:func:`_depth_table`), as deep as
the longest list whatever k is. No loop runs over users; the loop over pairs of models is over
the models' names.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, TypeVar

import narwhals as nw

from recframe import _docs
from recframe import _names as n
from recframe.engine import _call, _frames
from recframe.engine import _validate as v
from recframe.errors import RecframeError, fix, ref
from recframe.metrics._registry import NOT_RANKED
from recframe.options import DEFAULT_K, PER_USER_NAMES, Options, Unpack

FrameT = TypeVar("FrameT")

#: the per-user columns of :func:`agreement`, after the keys, the two models and the user
COLUMNS = ("n_a", "n_b", "n_common", "overlap", "jaccard", "rbo", "kendall_tau")


def _check_p(p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1 or not math.isfinite(p):
        raise RecframeError(
            f"{ref('p', p)} must be a number strictly between 0 and 1: the chance the reader goes on to the next rank. "
            f"Hint: e.g. {fix('p', 0.9)} (the top 10 carry about 86% of the weight)."
        )
    return float(p)


def _depth_table(one_row: nw.LazyFrame, depth: int, p: float) -> nw.LazyFrame:
    """Rows m = 1..depth + 1 (``__rf_depth``) with G(m) = sum_{d=m..depth} p^(d - 1) / d (0 at
    depth + 1, ``__rf_g``): the depth table of the RBO sums, H(m) / p in Webber et al.'s terms
    (H(m) = sum p^d / d), so that no sum is divided by p (``p=1e-310``: 1 / p overflows).
    Made inside the engine of `one_row` (one row, an integer column ``__rf_one``) by
    :func:`recframe.engine._frames.numbers_below`, and joined on positions: depth + 1 rows, however
    large the depth (a chain of one condition per depth ran into Python's recursion limit at
    250); the suffix sums are one window, from the deepest term up."""
    m = nw.col("__rf_depth")
    term = nw.when(m <= depth).then(nw.lit(p, dtype=nw.Float64) ** (m - 1).cast(nw.Float64) / m.cast(nw.Float64))
    table = (
        _frames.numbers_below(one_row, depth + 2, "__rf_depth")
        .filter(m >= 1)
        .with_columns(term.otherwise(0.0).cast(nw.Float64).alias("__rf_term"), (-m).alias("__rf_neg_depth"))
    )
    return table.select(m, nw.col("__rf_term").cum_sum().over(order_by="__rf_neg_depth").alias("__rf_g"))


def _weighted(
    top: nw.LazyFrame, lists: nw.LazyFrame, depth: int, p: float, engine: _frames.Engine
) -> tuple[nw.LazyFrame, nw.LazyFrame]:
    """The top k with ``__rf_hpos`` = G(position), and the lists with ``__rf_hn`` = G(n + 1) in
    place of their last position: :func:`_depth_table` to `depth`, computed once and joined."""
    table = _held(_depth_table(lists.select(nw.len().alias(n.ONE)), depth, p), engine)
    top = top.join(table.rename({"__rf_depth": n.POSITION, "__rf_g": "__rf_hpos"}), on=n.POSITION, how="left")
    lists = lists.with_columns((nw.col("__rf_n") + 1).cast(nw.Int64).alias("__rf_depth")).join(table, on="__rf_depth", how="left")
    return top, lists.drop("__rf_last", "__rf_depth").rename({"__rf_g": "__rf_hn"})


def _held(lf: nw.LazyFrame, engine: _frames.Engine) -> nw.LazyFrame:
    """`lf` computed once: in this process, as a Polars frame; on a SQL engine, materialized."""
    if engine.in_process:
        return nw.from_native(lf.collect().to_native().lazy())
    return engine.materialize(lf)


@_frames.engine_call
@_docs.filled(DEFAULT_K=DEFAULT_K)
def agreement(
    frame: FrameT,
    k: int = DEFAULT_K,
    *,
    p: float = 0.9,
    **options: Unpack[Options],
) -> FrameT:
    """Per user and pair of models, how far their top-k lists agree.

    Parameters
    ----------
    frame : a frame :func:`recframe.per_user` takes
        Recommendations of several models: ``by=`` names the model column first, then any keys
        to keep apart (folds, segments): lists are compared within each of their combinations.
    k : int, default {DEFAULT_K}
        The depth compared: each model's first k items.
    p : float, default 0.9
        RBO's persistence: the weight of depth d is proportional to p^(d - 1).
    **options
        ``baseline=``: compare every model with this one (a value of the model column); by
        default every pair of models. And the options of :func:`recframe.per_user` (``score=``, ``truth=``, ``users=``,
        ``exclude=``, ``ties=``, ...), with its data checks: the lists are ranked, re-ranked and
        checked as there. Relevance plays no part.

    Returns
    -------
    frame of the same type as ``frame``
        One row per (other ``by`` keys, ``model_a``, ``model_b``, user) for every user of
        either list: ``n_a``, ``n_b`` (the lists' lengths within k), ``n_common``; ``overlap``
        = n_common / k; ``jaccard`` = n_common / (n_a + n_b - n_common) (null for two empty
        lists); ``rbo``, the extrapolated rank-biased overlap (RBO_ext of Webber et al. 2010,
        eq. 30 for lists of equal length and eq. 32 for uneven ones; null when a list is
        empty); ``kendall_tau``, Kendall's tau-b of the common items' two rankings (positions
        within a list are distinct, so tau-b is (concordant - discordant) / pairs; null with
        fewer than two common items). Sorted by the keys and the user; lazy in, lazy out.

    Notes
    -----
    Positions are those :func:`recframe.per_user` ranks by: given ranks (``rank_gaps``
    decides about gaps) or ``score=`` with its ``ties=`` order, so ties in the scores are broken
    as the metrics break them. Average them with a group-by for a summary, e.g.
    ``out.group_by("model_a", "model_b").agg(pl.col("rbo").mean())``.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> recs = pl.DataFrame({
    ...     "model": ["A"] * 3 + ["B"] * 3,
    ...     "user_id": [1] * 6,
    ...     "item_id": ["x", "y", "z", "y", "x", "w"],
    ...     "rank": [1, 2, 3, 1, 2, 3],
    ... })
    >>> out = recframe.agreement(recs, k=3, by="model")
    >>> out.select("model_a", "model_b", "n_common", "overlap", "jaccard", "kendall_tau").rows()
    [('A', 'B', 2, 0.6666666666666666, 0.5, -1.0)]
    """
    p = _check_p(p)
    k = v.whole_at_least("k", k, 1, "must be one positive whole number: the depth compared.", f"e.g. {fix('k', 10)}.")
    given = dict(options)
    baseline = given.pop("baseline", None)  # the model the others are compared with: read here, not by a metric
    call = _call.resolve([k], ["hit_rate"], given, PER_USER_NAMES, "agreement")
    v.refuse_average_ties(call, "agreement", "the items of each top k and their order")
    _refuse_result_names(v.check_arguments(call).columns)
    plan, spec, engine = _call.prepare(_with_relevance(frame, call), call)
    if not spec.columns.by:
        raise RecframeError(
            f"agreement compares models, and {ref('by', None)} names no model column. Hint: pass e.g. {fix('by', 'model')}: "
            "the model column first, then any keys to keep apart (folds, segments)."
        )
    model, strata = spec.columns.by[0], list(spec.columns.by[1:])
    assert plan.rows is not None
    ranked = (nw.col(n.POSITION) != NOT_RANKED) & (nw.col(n.POSITION) <= k)
    top = plan.rows.filter(ranked).select(*strata, model, n.USER, n.ITEM, n.POSITION)
    # every pair reads the top k and each list's length: computed once (in memory: held as
    # frames; a SQL engine: materialized)
    lists = _frames.group_agg(
        top, [*strata, model, n.USER], nw.len().cast(nw.Int64).alias("__rf_n"), nw.col(n.POSITION).max().alias("__rf_last")
    )
    top, lists = _held(top, engine), _held(lists, engine)
    per_model = _frames.group_agg(lists, [model], nw.col("__rf_n", "__rf_last").max()).collect()
    values = per_model.get_column(model).to_list()
    if None in values:
        # a null model is refused by the data checks, which on Polars ride along the plan (a
        # SQL engine ran them at the call): run them now, before the models are ordered
        engine.run_checks(plan.per_user)
    models = sorted(x for x in values if x is not None)
    pairs = _pairs(models, baseline, model)
    # past the longest list (and its last position) a deeper k adds no item: the depth table
    # stops there, whatever k is (k=sys.maxsize is the whole list)
    longest = max(int(x) for x in (*per_model.get_column("__rf_n").to_list(), *per_model.get_column("__rf_last").to_list()))
    top, lists = _weighted(top, lists, min(k, longest), p, engine)
    parts = [_pair(top, lists, strata, model, a, b) for a, b in pairs]
    out = _measured(nw.concat(parts, how="vertical") if len(parts) > 1 else parts[0], strata, k, p)
    out = engine.after_checks(out, plan.per_user)
    return engine.from_lazy(_call.user_column(out.sort([*strata, "model_a", "model_b", n.USER]), spec))


def _refuse_result_names(columns: v.Columns) -> None:
    """A user column or a key (after the model) named as a column of the result: refused."""
    keys = list(columns.by)
    named: list[tuple[str, Any, str, Any]] = []
    for i, key in enumerate(keys[1:], start=1):
        named.append(("by", keys, key, [*keys[:i], f"{key}_key", *keys[i + 1 :]]))
    if columns.user is not None:
        named.append(("user", columns.user, columns.user, "user_id"))
    v.refuse_result_names("agreement", named, ("model_a", "model_b", *COLUMNS))


def _with_relevance(frame: Any, call: dict[str, Any]) -> Any:
    """The frame with a null relevance column when it has none and no truth= is given, so that
    the call's checks accept it (relevance plays no part in agreement)."""
    if call["truth"] is not None:
        return frame
    lf, _ = _frames.lazy(frame, "frame")
    if call["relevance"] in lf.collect_schema().names():
        return frame
    return nw.to_native(nw.from_native(frame).with_columns(nw.lit(None, dtype=nw.Float64).alias(call["relevance"])))


def _pairs(models: list[Any], baseline: Any, model: str) -> list[tuple[Any, Any]]:
    if len(models) < 2:
        raise RecframeError(
            f"agreement compares two models or more, and column {model!r} holds {len(models)} ({models}). "
            "Hint: pass the recommendations of several models, told apart by the model column."
        )
    if baseline is None:
        return list(itertools.combinations(models, 2))
    if baseline not in models:
        raise RecframeError(
            f"{ref('baseline', baseline)} is not a value of column {model!r} (values: {models}). Hint: pass one of them."
        )
    return [(m, baseline) for m in models if m != baseline]


def _pair(top: nw.LazyFrame, lists: nw.LazyFrame, strata: list[str], model: str, a: Any, b: Any) -> nw.LazyFrame:
    """The per-user agreement of models a and b (a's lists against b's), for every user of either."""
    keys = [*strata, n.USER]

    def side(frame: nw.LazyFrame, name: Any, suffix: str, *columns: tuple[str, str]) -> nw.LazyFrame:
        return frame.filter(nw.col(model) == name).select(*keys, *(nw.col(c).alias(f"{alias}{suffix}") for c, alias in columns))

    left = side(top, a, "a", (n.ITEM, n.ITEM), (n.POSITION, "__rf_r"), ("__rf_hpos", "__rf_h"))
    right = side(top, b, "b", (n.ITEM, n.ITEM), (n.POSITION, "__rf_r"), ("__rf_hpos", "__rf_h"))
    left, right = (part.rename({f"{n.ITEM}{x}": n.ITEM}) for part, x in ((left, "a"), (right, "b")))
    sizes = side(lists, a, "_a", ("__rf_n", "n"), ("__rf_hn", "__rf_hn")).join(
        side(lists, b, "_b", ("__rf_n", "n"), ("__rf_hn", "__rf_hn")), on=keys, how="full"
    )
    sizes = sizes.with_columns(nw.coalesce(nw.col(c), nw.col(f"{c}_right")).alias(c) for c in keys).drop(
        [f"{c}_right" for c in keys]
    )
    # a missing list is empty: its RBO is null, so its G(0 + 1) is never read (0.0 stands in)
    sizes = sizes.with_columns(
        nw.col("n_a").fill_null(0), nw.col("n_b").fill_null(0),
        nw.col("__rf_hn_a").fill_null(0.0), nw.col("__rf_hn_b").fill_null(0.0),
    )  # fmt: skip
    ra, rb = nw.col("__rf_ra"), nw.col("__rf_rb")
    common = left.join(right, on=[*keys, n.ITEM], how="inner").join(sizes, on=keys, how="left")
    common = common.with_columns(
        # H(m) at the depth m = max(ra, rb) where the item enters the overlap
        nw.when(ra >= rb).then(nw.col("__rf_ha")).otherwise(nw.col("__rf_hb")).alias("__rf_h"),
        (nw.max_horizontal(ra, rb) <= nw.min_horizontal(nw.col("n_a"), nw.col("n_b"))).cast(nw.Int64).alias("__rf_in_short"),
    )
    counts = _frames.group_agg(
        common, keys, nw.len().cast(nw.Int64).alias("n_common"), nw.col("__rf_h").sum().alias("__rf_hsum"),
        nw.col("__rf_in_short").sum().alias("__rf_xs"),
    )  # fmt: skip
    # Kendall's tau: each pair of common items once (the item order breaks the symmetry)
    other = common.select(*keys, nw.col(n.ITEM).alias("__rf_item2"), ra.alias("__rf_ra2"), rb.alias("__rf_rb2"))
    both = common.select(*keys, n.ITEM, "__rf_ra", "__rf_rb").join(other, on=keys, how="inner")
    both = both.filter(nw.col(n.ITEM) < nw.col("__rf_item2")).with_columns(
        (((ra - nw.col("__rf_ra2")) * (rb - nw.col("__rf_rb2"))) > 0).cast(nw.Int64).alias("__rf_c")
    )
    concordance = _frames.group_agg(
        both, keys, nw.col("__rf_c").sum().alias("__rf_concordant"), nw.len().cast(nw.Int64).alias("__rf_pairs")
    )
    out = sizes.join(counts, on=keys, how="left").join(concordance, on=keys, how="left")
    out = out.with_columns(
        nw.col("n_common", "__rf_xs", "__rf_pairs", "__rf_concordant").fill_null(0), nw.col("__rf_hsum").fill_null(0.0)
    )
    sums = ("n_a", "n_b", "n_common", "__rf_xs", "__rf_hsum", "__rf_hn_a", "__rf_hn_b", "__rf_pairs", "__rf_concordant")
    return out.select(*strata, nw.lit(a).alias("model_a"), nw.lit(b).alias("model_b"), n.USER, *sums)


def _measured(sums: nw.LazyFrame, strata: list[str], k: int, p: float) -> nw.LazyFrame:
    """Every pair's per-user sums (:func:`_pair`) with :func:`_measures`: written once for all
    pairs, and the parts they share as columns first (narwhals turns each expression into the
    engine's in Python: a part written into two expressions is converted twice)."""
    n_a, n_b = nw.col("n_a"), nw.col("n_b")
    a_longer = n_a >= n_b
    shared = sums.with_columns(
        nw.min_horizontal(n_a, n_b).alias("__rf_short"),
        nw.max_horizontal(n_a, n_b).alias("__rf_long"),
        nw.when(a_longer).then(nw.col("__rf_hn_a")).otherwise(nw.col("__rf_hn_b")).alias("__rf_h_after_long"),
        nw.when(a_longer).then(nw.col("__rf_hn_b")).otherwise(nw.col("__rf_hn_a")).alias("__rf_h_after_short"),
    )
    return shared.select(*strata, "model_a", "model_b", n.USER, *_measures(k, p))


def _measures(k: int, p: float) -> list[nw.Expr]:
    """The columns of :data:`COLUMNS` from the per-user sums. RBO_ext (Webber et al. 2010,
    eq. 32; eq. 30 when s = l), with s <= l the lists' lengths and X_d the items common to
    their first d:

        (1 - p) / p * [sum_{d=1..l} X_d p^d / d + X_s / s * sum_{d=s+1..l} (d - s) / d p^d]
        + [(X_l - X_s) / l + X_s / s] p^l

    written without dividing by p (:func:`_depth_table`'s G(m) = sum_{d=m..} p^(d - 1) / d):
    a common item at depth m = max(its two ranks) adds 1 to every X_d with d >= m, so the
    first sum over p is the sum over common items of G(m) - G(l + 1), and the second is
    X_s / s * [(p^s - p^l) / (1 - p) - s (G(s + 1) - G(l + 1))] (G(n + 1) of each list is read
    from the lists' table, ``__rf_hn_a`` and ``__rf_hn_b``). As p -> 0 it is X_1, and
    ``p=1e-310`` gives it: no term overflows."""
    n_a, n_b, common, x_short = nw.col("n_a"), nw.col("n_b"), nw.col("n_common"), nw.col("__rf_xs")
    short, long = nw.col("__rf_short"), nw.col("__rf_long")  # (columns of _measured)
    h_after_long, h_after_short = nw.col("__rf_h_after_long"), nw.col("__rf_h_after_short")
    first = nw.col("__rf_hsum") - common * h_after_long - x_short * (h_after_short - h_after_long)
    between = (x_short / short) * (nw.lit(p) ** short - nw.lit(p) ** long)
    tail = ((common - x_short) / long + x_short / short) * (nw.lit(p) ** long)
    rbo = (1 - p) * first + between + tail
    union = n_a + n_b - common
    pairs = nw.col("__rf_pairs")
    return [
        n_a,
        n_b,
        common,
        (common / k).cast(nw.Float64).alias("overlap"),
        nw.when(union > 0).then(common / union).otherwise(None).cast(nw.Float64).alias("jaccard"),
        nw.when(short > 0).then(rbo).otherwise(None).cast(nw.Float64).alias("rbo"),
        nw.when(pairs > 0)
        .then((2 * nw.col("__rf_concordant") - pairs) / pairs)
        .otherwise(None)
        .cast(nw.Float64)
        .alias("kendall_tau"),
    ]
