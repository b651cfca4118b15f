"""The public functions: :func:`per_user` and :func:`summary`."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any, TypeVar

import narwhals as nw

from recframe import _docs
from recframe import _names as n
from recframe import options as options_table
from recframe.engine import _call, _engine, _frames, _item_groups
from recframe.engine import _validate as v
from recframe.errors import RecframeError, fix, ref
from recframe.metrics import REGISTRY, default_metrics
from recframe.options import DEFAULT_K, PER_USER_NAMES, SUMMARY_NAMES, Options, SummaryOptions, Unpack
from recframe.statistics import _partitions, _summary

FrameT = TypeVar("FrameT")

_PARAMETERS = """
    Parameters
    ----------
    frame : pandas.DataFrame, polars.DataFrame, polars.LazyFrame, pyarrow.Table, DuckDB relation, PySpark or SQLFrame DataFrame, Ibis table
        One row per (user, item): the item's rank in the user's list and its relevance. Relevant
        items that were not recommended belong in the frame too, with a null rank, or recall,
        AP and nDCG come out too high. With ``truth=``, only the recommendations.
    k : int or list of int, default 10
        Cut-off(s): each metric gets one column per k, named ``"<metric>@<k>"``.
    metrics : list of str, optional
{metrics_doc}
{options_doc}
"""

#: how the docs name what a metric requires (recframe.metrics.Metric.requires)
_NEEDS = {
    "train": "``train=``",
    "items": "``items=``",
    "item_features": "``item_features=``",
    "baseline": "``baseline=``",
    "catalog": "the catalog",
    "item_group": "``item_group=``",
}


def _metrics_doc() -> str:
    """The ``metrics`` entry of the docstrings, from the registry: every metric is listed, so
    the list cannot fall behind it."""

    def names(chosen: list[str]) -> str:
        return ", ".join(f'``"{m}"``' for m in chosen)

    def needs(chosen: list[str]) -> str:
        return ", ".join(f'``"{m}"`` ({" and ".join(_NEEDS[r] for r in REGISTRY[m].requires)})' for m in chosen)

    def variants(m: str) -> str:
        found = REGISTRY[m].variants
        return f'``"{m}"`` (columns ``{m}_{found[0]}`` .. ``_{found[-1]}``)' if found else f'``"{m}"``'

    accuracy = list(default_metrics())
    beyond = [m for m, metric in REGISTRY.items() if metric.level == "user" and metric.requires]
    group = [m for m, metric in REGISTRY.items() if metric.level == "group"]
    toolbox = [m for m, metric in REGISTRY.items() if metric.level == "user" and not metric.requires and not metric.default]
    text = (
        f"Any of {names(accuracy)}, in the order wanted (default: all of these); the metrics that "
        f"need more than the frame: {needs(beyond)}; in :func:`summary` only, one value per ``by`` group: "
        f"{needs([m for m in group if REGISTRY[m].requires])}, {names([m for m in group if not REGISTRY[m].requires])}; "
        f"the rest of the IR toolbox (:mod:`recframe.metrics.ir`), asked for by name: "
        f"{', '.join(variants(m) for m in toolbox)}. The catalog is ``items=``, else the items of ``train=``. A bare column (no ``@k``) "
        "reads the whole list."
    )
    return textwrap.fill(text, width=92, initial_indent=" " * 8, subsequent_indent=" " * 8, break_on_hyphens=False)


# every option's entry comes from its one declaration, in recframe.options; every metric from the registry
_PARAMETERS = _PARAMETERS.replace("{options_doc}", options_table.parameters(PER_USER_NAMES)).replace(
    "{metrics_doc}", _metrics_doc()
)

_NOTES = """
    Notes
    -----
    For one user with relevant-item count R, a hit being a relevant item ranked <= k:

    - precision@k = hits@k / k, or with ``precision_denominator="retrieved"``
      hits@k / max(1, items ranked <= k), or with ``"min_k_relevant"`` hits@k / min(k, R)
    - recall@k = hits@k / R, or with ``recall_denominator="min_k_relevant"`` hits@k / min(k, R)
    - f1@k = 2 P R / (P + R), 0 when P + R = 0
    - hit_rate@k = 1 if hits@k > 0 else 0
    - r_precision = hits@R / R; r_precision@k = hits@s / s with s = min(k, R)
    - ap@k = sum over hits ranked <= k of (hits ranked <= that rank) / rank, divided by
      min(k, R) (default), R, hits@k or k; 0 when there is no hit
    - rr@k = 1 / rank of the first relevant item if that rank <= k, else 0; with
      ``rr_cutoff=False``, 1 / rank of the first relevant item at any rank (0 when none is
      recommended)
    - dcg@k = sum over relevant items ranked <= k of gain / d(rank), with the discount
      d(i) = log2(i + 1) (default) or log2(max(i, 2)) (``discount="log2_max_rank_2"``)
    - ndcg@k = dcg@k / idcg@k, where idcg@k is the dcg@k of the user's relevant gains sorted
      in descending order (the ideal list, cut at k); with ``idcg="k"``,
      idcg@k = sum for i = 1..k of 1 / d(i) (k items of gain 1, so with a graded gain
      ndcg@k can exceed 1)

    With ``score``, rank = 1 + the number of recommended items with a higher score, or an
    equal score and a smaller item (``ties="item_asc"``) or a larger one (``"item_desc"``);
    with ``score_dtype="float32"`` scores are rounded to float32 first.

    A user with relevant items but no recommendations scores 0 and counts (or is left out
    with ``unranked_users="skip"``). A user with no relevant item is left out of the means
    and null for every metric in ``per_user`` (precision and hit rate too, whose formulas would
    give 0), so that a plain mean of a ``per_user`` column is ``summary``'s: see ``empty_users``. A user is absent from the truth
    when none of their rows has a relevance (with ``truth=``: no truth row at all).

    The data are checked before any metric is computed: null user, item or ``by`` values,
    duplicate (user, item) rows, duplicate or non-whole ranks, ranks < 1, NaN or infinite
    relevance and NaN scores each raise :class:`recframe.RecframeError` naming the column,
    the first offending list and how many there are. On a LazyFrame the checks run when
    the result is collected; on DuckDB, Spark and SQLFrame they run when the function is
    called, as one aggregate query returning a single row, and the metrics run inside that
    engine when its result is collected. In pandas input, NaN in a float column is pandas'
    missing value and is read as null.
"""

#: summary's options that per_user does not take
_SUMMARY_ONLY = [name for name in SUMMARY_NAMES if name not in PER_USER_NAMES]


@_frames.engine_call
@_docs.filled(parameters=_PARAMETERS.strip(), notes=_NOTES.strip())
def per_user(
    frame: FrameT,
    k: int | Sequence[int] = DEFAULT_K,
    metrics: Sequence[str] | None = None,
    **options: Unpack[Options],
) -> FrameT:
    """Ranking metrics for every user (and ``by`` group): one row per list.

    {parameters}

    Returns
    -------
    frame of the same type as ``frame``
        The ``by`` columns, the user column (unless ``user=None``), ``n_relevant`` (R), then
        one float column per metric and k (``"precision@10"``; ``"r_precision"`` also has a
        bare column), sorted by the keys. Lazy in, lazy out: a LazyFrame, DuckDB relation or
        Spark/SQLFrame DataFrame comes back uncomputed.

    See Also
    --------
    summary : the means of these columns by ``by`` group.

    {notes}

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> df = pl.DataFrame({
    ...     "user_id": [1, 1, 1, 2, 2],
    ...     "item_id": ["a", "b", "c", "a", "d"],
    ...     "rank": [1, 2, None, 1, 2],
    ...     "relevance": [1, 0, 1, 0, 1],
    ... })
    >>> out = recframe.per_user(df, k=2, metrics=["precision", "recall", "rr"])
    >>> out.columns
    ['user_id', 'n_relevant', 'precision@2', 'recall@2', 'rr@2']
    >>> out.rows()
    [(1, 2, 0.5, 0.5, 1.0), (2, 1, 0.5, 1.0, 0.5)]
    """
    return _call.per_user(frame, k, metrics, dict(options))


@_frames.engine_call
@_docs.filled(parameters=(_PARAMETERS + options_table.parameters(_SUMMARY_ONLY)).strip(), notes=_NOTES.strip())
def summary(
    frame: FrameT,
    k: int | Sequence[int] = DEFAULT_K,
    metrics: Sequence[str] | None = None,
    **options: Unpack[SummaryOptions],
) -> FrameT:
    """Mean ranking metrics by ``by`` group (one row when ``by`` is None).

    {parameters}

    Returns
    -------
    frame of the same type as ``frame``
        The ``by`` columns, then the counts, then the mean of each :func:`per_user` metric
        column over the counted users, sorted by the keys. The counts, per group:
        ``n_users``, the lists counted in every mean; ``n_skipped``, the other lists (so
        ``n_users + n_skipped`` is every list of the group); ``n_unranked``, users with
        relevant items but nothing recommended (counted, scoring 0, under
        ``unranked_users="zero"``; skipped under ``"skip"``); ``n_no_relevant``, users with
        judged items but none relevant, and ``n_no_truth``, users recommended to but absent
        from the truth (no relevance at all): both have no relevant item, so they are
        skipped under ``empty_users="skip"`` and counted under ``"zero"``. When metrics count
        different users (a profile's per-metric rule), a metric counting more than
        ``n_users`` has its own ``n_users_<metric>`` column after ``n_users``. An empty
        input gives an empty result. Lazy in, lazy out: a LazyFrame, DuckDB relation or
        Spark/SQLFrame DataFrame comes back uncomputed.

    See Also
    --------
    per_user : the per-user values these are the means of.
    recframe.stats.bootstrap_ci, recframe.stats.t_ci : the interval formulas.

    {notes}

    The means are plain means of the :func:`per_user` columns over the counted users, so
    ``summary`` never weights a user differently from the per-user frame it summarises. The
    intervals (``ci=``) resample exactly those users: a user left out of the means is left
    out of the intervals too. With fewer than two counted users ``_std`` is null, and so are
    ``_lo``/``_hi`` by any method: one user has no spread to report. ``ci_method="poisson"``
    (the Poisson bootstrap) runs inside the engine, SQL engines included, and gives the same
    interval on each for a seed (docs/reporting.md).
    On a LazyFrame the intervals are computed when the result is collected, on the whole
    per-user frame at once (one row per user, not per item).

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> df = pl.DataFrame({
    ...     "model": ["A", "A", "B", "B", "A", "B"],
    ...     "user_id": [1, 1, 1, 1, 2, 2],
    ...     "item_id": ["a", "b", "a", "b", "c", "c"],
    ...     "rank": [1, 2, 2, 1, 1, 1],
    ...     "relevance": [1, 0, 1, 0, 0, 0],
    ... })
    >>> out = recframe.summary(df, k=1, metrics=["precision", "rr"], by="model")
    >>> out.columns
    ['model', 'n_users', 'n_skipped', 'n_unranked', 'n_no_relevant', 'n_no_truth', 'precision@1', 'rr@1']
    >>> out.rows()  # user 2 has no relevant item: skipped, counted in n_no_relevant
    [('A', 1, 1, 0, 1, 0, 1.0, 1.0), ('B', 1, 1, 0, 1, 0, 0.0, 0.0)]

    With a 95% bootstrap interval (columns ``_std``, ``_lo``, ``_hi`` after each mean):

    >>> df = pl.DataFrame({
    ...     "user_id": [1, 1, 2, 2, 3, 3],
    ...     "item_id": ["a", "b", "a", "b", "a", "b"],
    ...     "rank": [1, 2, 1, 2, 1, 2],
    ...     "relevance": [1, 0, 0, 1, 1, 1],
    ... })
    >>> out = recframe.summary(df, k=1, metrics=["precision"], ci=0.95, seed=0)
    >>> out.columns[5:]
    ['precision@1', 'precision@1_std', 'precision@1_lo', 'precision@1_hi']
    >>> out["precision@1_std"].round(4).to_list()  # values 1, 0, 1: sqrt(((1/3)^2 * 2 + (2/3)^2) / 2)
    [0.5774]
    """
    return summary_of(frame, _call.resolve(k, metrics, dict(options), SUMMARY_NAMES, "summary"))


def summary_of(frame: FrameT, call: dict[str, Any]) -> FrameT:
    """:func:`summary` of a call resolved by :func:`recframe.engine._call.resolve` (``aggregate`` and
    the interval options included): what summary and curve compute. One path: the options
    checked, the refusals derived from the aggregates' declarations, then the parts of one set
    of users (or of N, added: ``partitions=``), finished once (:mod:`recframe.statistics._summary`)."""
    partitions = _partitions.check(call.get("partitions"))
    kwargs, interval, aggregate = _summary.options({**call, "partitions": None})
    asked = _summary.asked(aggregate, *interval)
    _summary.refuse(frame, kwargs, asked, partitions)
    if partitions is not None:
        i = _call.inputs(frame, kwargs)
        return i.engine.from_lazy(_partitions.summary(i, asked, partitions))
    plan, spec, engine = _call.prepare(frame, kwargs)
    # (a SQL engine's first row makes the Poisson bootstrap's resample numbers)
    source = None if engine.in_process else frame
    return engine.from_lazy(_summary.summary(plan, spec, asked, source))


@_frames.engine_call
@_docs.filled(flush_left=True, DEFAULT_K=DEFAULT_K, parameters=options_table.parameters(PER_USER_NAMES))
def item_groups(
    frame: FrameT,
    k: int | Sequence[int] = DEFAULT_K,
    **options: Unpack[Options],
) -> FrameT:
    """What each item group gets, against what it has and what users liked: one row per
    (``by`` group, item group).

    The groups are the values of ``item_group=``, a column of ``items=`` (a category, a provider;
    an item of a list column such as genres spreads its weight evenly over its groups), or
    ``"popularity"``: the head and tail of ``train=`` by ``head_share``. The call takes the options
    of :func:`per_user` (``truth=``, ``score=``, ``exclude=``, ``users=``, thresholds, profiles) and
    runs the same data checks; every recommended item within k must be in the catalog.

    Long format, one row per item group, because the groups are values of the data: their number
    is unknown before the data are read (a lazy engine must know its columns first), a group name
    would make an awkward column name, and one row per group is what a bar chart or a join wants.
    Its columns, per ``by`` group:

    - ``<item_group>``: the group (null on the row of relevant items outside the catalog, when
      there are any: they belong to no group and are shown, not dropped);
    - ``n_items``: the catalog items in the group, an integer; with a list column, an item counts
      1 / (its number of groups) in each of its groups, so the count is weighted and a float; and
      ``catalog_share``, the group's share of the catalog;
    - ``relevant_share``: the group's share of the relevant (user, item) pairs;
    - per k: ``rec_share@k``, the share of the recommendation slots (rows ranked <= k);
      ``exposure_share@k``, the share of the exposure, sum of 1 / log2(1 + rank) over the slots
      (Singh & Joachims 2018); ``group_recall@k``, the hits on the group's relevant items over
      them (null where the group has none: undefined); with ``train=``, ``p_rec@k`` =
      slots / (lists served x n_items - the training pairs of their users in the group), the
      chance an untrained item of the group is recommended (what ``pop_rsp`` compares).

    The group-level summaries of these columns are the metrics ``pop_rsp``, ``pop_reo`` and
    ``exposure_disparity`` of :func:`summary`; :mod:`recframe.metrics.item_groups` has the formulas.

    Parameters
    ----------
    frame : a frame :func:`per_user` takes
    k : int or list of int, default {DEFAULT_K}
    {parameters}

    Returns
    -------
    frame of the same type as ``frame``
        Sorted by the ``by`` keys and the group. Lazy in, lazy out.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> recs = pl.DataFrame({
    ...     "user_id": [1, 1, 1, 2, 2],
    ...     "item_id": ["a", "b", "c", "a", "c"],
    ...     "rank": [1, 2, None, 1, 2],
    ...     "relevance": [1, None, 1, None, 1],
    ... })
    >>> items = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": ["pop", "pop", "jazz"]})
    >>> out = recframe.item_groups(recs, k=2, items=items, item_group="genre")
    >>> out.select("genre", "catalog_share", "relevant_share", "rec_share@2", "group_recall@2").rows()
    [('jazz', 0.3333333333333333, 0.6666666666666666, 0.25, 0.5), ('pop', 0.6666666666666666, 0.3333333333333333, 0.75, 1.0)]
    """
    kwargs = _call.resolve(k, ["hit_rate"], dict(options), PER_USER_NAMES, "item_groups")
    if kwargs["item_group"] is None:
        raise RecframeError(
            f"{ref('item_groups')} needs {ref('item_group')}: a column of {ref('items')} (a category, a provider), or "
            f'"popularity" (the head and tail of {ref("train")}). Hint: e.g. {fix("item_group", "genre")}.'
        )
    plan, spec, engine = _call.prepare(frame, kwargs)
    assert plan.item_groups is not None  # item_group= is given
    table = engine.after_checks(_item_groups.shares(plan.item_groups, spec), plan.per_user)
    return engine.from_lazy(table.sort([*spec.columns.by, str(spec.selection.item_group)], nulls_last=True))


@_frames.engine_call
@_docs.filled(flush_left=True, DEFAULT_K=DEFAULT_K, parameters=options_table.parameters(PER_USER_NAMES))
def per_item(
    frame: FrameT,
    k: int | Sequence[int] = DEFAULT_K,
    **options: Unpack[Options],
) -> FrameT:
    """Who each item reaches: one row per (``by`` group, item), the per-item view of the
    same evaluation as :func:`per_user` (the same options, data checks and engines).

    Its columns, after the ``by`` keys and the item:

    - ``n_users``: the lists that rank the item (at any rank);
    - ``n_relevant``: the users for whom the item is relevant (ranked or not);
    - per k: ``recommended@k``, the lists that rank it within k; ``hits@k``, those of them whose
      user finds it relevant; ``recall@k`` = hits@k / n_relevant, the item's recall (null where
      it is relevant to nobody: undefined); ``exposure@k``, the sum over the lists that rank it
      within k of 1 / log2(1 + rank).

    An item that is only relevant (never ranked) has a row with ``n_users`` 0; one that is
    neither ranked nor relevant to anybody has none. With ``users=``,
    only the listed users count; with ``exclude=``, the lists are re-ranked first.

    Parameters
    ----------
    frame : a frame :func:`per_user` takes
    k : int or list of int, default {DEFAULT_K}
    {parameters}

    Returns
    -------
    frame of the same type as ``frame``
        Sorted by the ``by`` keys and the item. Lazy in, lazy out.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> recs = pl.DataFrame({
    ...     "user_id": [1, 1, 1, 2, 2],
    ...     "item_id": ["a", "b", "c", "a", "c"],
    ...     "rank": [1, 2, None, 2, 1],
    ...     "relevance": [1, None, 1, 1, None],
    ... })
    >>> out = recframe.per_item(recs, k=1)
    >>> out.select("item_id", "n_users", "n_relevant", "recommended@1", "hits@1", "recall@1").rows()
    [('a', 2, 2, 1, 1, 0.5), ('b', 1, 0, 0, 0, None), ('c', 1, 1, 1, 0, 0.0)]
    """
    kwargs = _call.resolve(k, ["hit_rate"], dict(options), PER_USER_NAMES, "per_item")
    v.refuse_average_ties(kwargs, "per_item", "which items each list holds within k")
    given = v.check_arguments(kwargs)
    item = given.columns.item
    v.refuse_result_names("per_item", [("item", item, item, "item_id")], _engine.item_table_names(given.selection.ks))
    plan, spec, engine = _call.prepare(frame, kwargs)
    assert plan.rows is not None  # every plan has them
    table = engine.after_checks(_engine.item_table(plan.rows, spec), plan.per_user)
    table = table.rename({n.ITEM: spec.columns.item}).sort([*spec.columns.by, spec.columns.item])
    return engine.from_lazy(table)


@_frames.engine_call
@_docs.filled(flush_left=True, DEFAULT_K=DEFAULT_K, parameters=options_table.parameters(PER_USER_NAMES))
def tied_cutoffs(
    frame: FrameT,
    k: int | Sequence[int] = DEFAULT_K,
    **options: Unpack[Options],
) -> FrameT:
    """Where ties could move a number: per ``by`` group, the lists whose cut-off at k
    falls inside a group of equal scores.

    A list is tied at k when its items at positions k and k + 1 have the same score: which of them
    is in the top k is then the tie-break's choice (``ties=``), and every @k metric may move with
    it. Where ``n_tied@k`` is 0, no tie-break can change a number at k; elsewhere,
    ``ties="optimistic"`` and ``"pessimistic"`` bound what it can do and ``ties="average"`` gives the
    expected value over the orderings. Needs ``score=``; the same options, data checks and engines
    as :func:`per_user` (``score_threshold=`` and ``score_dtype="float32"`` apply first).

    Its columns, after the ``by`` keys: ``n_lists``, the lists with a ranked item; per k,
    ``n_tied@k``.

    Parameters
    ----------
    frame : a frame :func:`per_user` takes
    k : int or list of int, default {DEFAULT_K}
    {parameters}

    Returns
    -------
    frame of the same type as ``frame``
        One row per ``by`` group, sorted by the keys. Lazy in, lazy out.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> recs = pl.DataFrame({
    ...     "user_id": [1, 1, 1, 2, 2, 2],
    ...     "item_id": ["a", "b", "c", "a", "b", "c"],
    ...     "score": [0.9, 0.5, 0.5, 0.9, 0.8, 0.5],
    ...     "relevance": [1, 0, 1, 0, 1, 0],
    ... })
    >>> recframe.tied_cutoffs(recs, k=[1, 2], score="score").rows()
    [(2, 0, 1)]
    """
    kwargs = _call.resolve(k, ["hit_rate"], dict(options), PER_USER_NAMES, "tied_cutoffs")
    _refuse_ranks(kwargs)
    plan, spec, engine = _call.prepare(frame, kwargs)
    return engine.from_lazy(_tie_table(plan, spec, engine))


def _refuse_ranks(kwargs: dict[str, Any]) -> None:
    if kwargs["score"] is None:
        raise RecframeError(
            f"tied_cutoffs finds equal scores at the cut-offs, and {ref('score', None)}: the lists are ordered by "
            f"the given ranks. Hint: pass {fix('score', 'your_score_column')}."
        )


def _tie_table(plan: _engine.Plan, spec: v.Spec, engine: _frames.Engine | None) -> nw.LazyFrame:
    """tied_cutoffs' table of `plan`, sorted by the keys: computed after the data checks on
    `engine`, or as it is (None: another frame of the plan, collected with it, runs them)."""
    assert plan.rows is not None  # every plan has them
    table = _engine.tie_table(plan.rows, spec)
    table = table if engine is None else engine.after_checks(table, plan.per_user)
    return table.sort(list(spec.columns.by)) if spec.columns.by else table


def with_tied_cutoffs(
    frame: FrameT, k: int | Sequence[int], metrics: Sequence[str] | None, per_user_rows: bool, **options: Any
) -> tuple[FrameT, FrameT]:
    """:func:`per_user`'s frame (`per_user_rows`) or :func:`summary`'s (without ``ci``), and
    :func:`tied_cutoffs`' of the same call (``score=``), from one prepared plan: the CLI's
    ``evaluate --score``. Collected together (``polars.collect_all``), they read and rank the
    rows once and run the data checks once, with the first frame (11M scored rows from parquet,
    streaming: 4.2 s for the two calls, 1.9 s, the summary's own time)."""
    names, caller = (PER_USER_NAMES, "per_user") if per_user_rows else (SUMMARY_NAMES, "summary")
    kwargs = _call.resolve(k, metrics, dict(options), names, caller)
    _refuse_ranks(kwargs)
    if per_user_rows:
        v.check_per_user_metrics(kwargs["metrics"])
    else:
        kwargs, interval, aggregate = _summary.options(kwargs)
        asked = _summary.asked(aggregate, *interval)
        assert asked.interval is None, "an interval takes summary's own path"
    plan, spec, engine = _call.prepare(frame, kwargs)
    main = _call.per_user_frame(plan, spec) if per_user_rows else _summary.summary(plan, spec, asked)
    return engine.from_lazy(main), engine.from_lazy(_tie_table(plan, spec, None))
