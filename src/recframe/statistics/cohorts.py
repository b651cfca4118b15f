"""Cohorts from the training data: users by how active they were, items by how popular.

:func:`user_cohorts` returns a ``users=`` frame and :func:`item_strata` an ``items=`` frame
with one label column, so every call that takes them (``summary``, ``per_user``, ``compare``,
``disparity``, the page) breaks its numbers down by cohort without anything new: pass the
frame as ``users=`` and its column in ``by=``, or as ``items=`` with ``item_group=``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any, TypeVar

import narwhals as nw
import polars as pl

from recframe.engine import _frames, _side, _validate
from recframe.errors import RecframeError, fix, ref
from recframe.options import DEFAULTS

FrameT = TypeVar("FrameT")

#: the label of the users without a training row, and of the items no training user had
COLD = "cold"


def _cut_points(counts: pl.DataFrame, bins: Any, edges: Any) -> list[int]:
    """The lower bounds of the bins after the first, from `edges` or from the quantiles of the
    counts (`counts`: one row per distinct count, ``n`` and ``weight``, the users or items
    holding it)."""
    if edges is not None:
        if isinstance(edges, (str, bytes)) or not isinstance(edges, Sequence):
            raise RecframeError(f"{ref('edges', edges)} must be a list of whole numbers. Hint: e.g. {fix('edges', [5, 20])}.")
        values = list(edges)
        if not all(_validate.whole(e) is not None for e in values) or any(e < 2 for e in values):
            raise RecframeError(
                f"{ref('edges', values)} must hold whole numbers above 1: each is the smallest count of a bin after the "
                f"first, which starts at 1. Hint: e.g. {fix('edges', [5, 20])}."
            )
        values = [int(e) for e in values]
        if any(b <= a for a, b in zip(values, values[1:])):
            raise RecframeError(
                f"{ref('edges', values)} is not increasing. Hint: sort them, e.g. {fix('edges', sorted(set(values)))}."
            )
        return values
    bins = _validate.whole_at_least("bins", bins, 1, "is not a positive whole number.", f"pass e.g. {fix('bins', 4)}.")
    counts = counts.sort("n")
    total = int(counts["weight"].sum())
    if not total:
        return []  # no user (or item) with a count: every one is cold, one bin "1+" stays empty
    # Bin i (1 .. bins - 1) ends at the first count whose users so far reach i / bins of them
    # (total * i / bins), and the next count starts a bin. Per count (not per bin: bins may be
    # any size, the work is the distinct counts'): the counts up to this one reach the targets
    # i <= floor(cumulative * bins / total), those before it those up to floor(before * bins /
    # total); the next count is a cut point when some target 1 .. bins - 1 lies between, in
    # whole numbers, so exact for any bins.
    values, before, points = counts["n"].to_list(), 0, []
    for nxt, cumulative in zip(values[1:], counts["weight"].cum_sum().to_list()):
        first, last = before * bins // total + 1, min(cumulative * bins // total, bins - 1)
        if first <= last:
            points.append(int(nxt))
        before = cumulative
    return points


def _labels(points: list[int]) -> list[str]:
    """``"1-3"``, ``"4-12"``, ..., the last bin open: ``"13+"``."""
    lows = [1, *points]
    return [f"{lo}" if lo == p - 1 else f"{lo}-{p - 1}" for lo, p in zip(lows, points)] + [f"{lows[-1]}+"]


def _labelled(counted: nw.LazyFrame, counts: list[int], points: list[int], name: str, polars: bool) -> nw.LazyFrame:
    """`counted` with its bin's label in `name`: a lookup of each of the distinct `counts` (the
    values of ``__rf_n``) in a table of their labels, not a condition per bin (a chain of
    hundreds of them overflows Python's stack); no count (null) is cold."""
    labels = _labels(points)
    if not counts:  # (no count to look up: every one is cold)
        return counted.with_columns(nw.lit(COLD).cast(nw.Enum([COLD, *labels]) if polars else nw.String).alias(name))
    label = nw.col("__rf_n").replace_strict(
        counts, [labels[bisect.bisect_right(points, c)] for c in counts], default=nw.lit(COLD), return_dtype=nw.String
    )
    # Polars keeps the order of the bins (cold first, then by count); elsewhere they are text
    dtype = nw.Enum([COLD, *labels]) if polars else nw.String
    return counted.with_columns(label.cast(dtype).alias(name))


def _check_column(schema: dict[str, Any], column: str, arg: str, frame: str) -> None:
    if column not in schema:
        raise RecframeError(
            f"{ref(arg, column)} is not a column of {ref(frame)} (columns: {list(schema)}). Hint: pass {ref(arg)} the right column."
        )


def _check_name(name: Any, key: str, function: str, default: str) -> None:
    """`name` is a column name the output has not already (the key and ``n_train``)."""
    if not isinstance(name, str) or not name:
        raise RecframeError(f"{ref('name', name)} is not a column name. Hint: pass e.g. {fix('name', default)}.")
    if name in (key, "n_train") or name.startswith("__rf_"):
        taken = "a name recframe keeps for itself" if name.startswith("__rf_") else f"a column of its output ({key}, n_train)"
        raise RecframeError(
            f"{ref('name', name)} names the column {function} adds, and {name!r} is {taken}.",
            f"pass another name, e.g. {fix('name', default)}.",
        )


def _aligned(column: str, frames: dict[str, nw.LazyFrame]) -> list[nw.LazyFrame]:
    """The `frames` (by label) with `column` cast to one dtype where they differ only in width or
    string flavour; a disagreement (text ids against integers) is refused, naming both frames, as
    summary's join keys are (:func:`recframe.engine._validate.join_dtypes`)."""
    target = _validate.join_dtypes(column, {label: lf.collect_schema()[column] for label, lf in frames.items()})
    return [lf if target is None else lf.with_columns(nw.col(column).cast(target)) for lf in frames.values()]


@_frames.engine_call
def user_cohorts(
    frame: FrameT,
    train: Any,
    bins: int = 4,
    *,
    edges: Sequence[int] | None = None,
    truth: Any = None,
    user: str = DEFAULTS["user"],
    item: str = DEFAULTS["item"],
    name: str = "cohort",
) -> FrameT:
    """Every evaluated user with a cohort by training activity: a ``users=`` frame.

    Parameters
    ----------
    frame : a frame :func:`recframe.per_user` takes
        The recommendations (or the long frame): its users, with those of ``truth``, are the
        users the frame lists.
    train : frame on the engine of `frame`
        The training interactions, (user, item) pairs; a user's activity is their distinct
        training items. A null user or item is refused, as ``summary(train=)`` refuses it; ids
        of integers of two widths are aligned, ids of two kinds (text, integers) refused.
    bins : int, default 4
        Equal-size bins of the active users: the cut points are the counts at which 1/bins,
        2/bins, ... of them are reached, so users with equal counts share a bin and the sizes
        are as equal as the ties allow (fewer bins when ties leave no room). More bins than
        distinct counts give one bin per count: the work is the counts', whatever bins is.
    edges : list of int, optional
        The cut points instead: the smallest count of each bin after the first, which starts at
        1 (``[5, 20]``: 1-4, 5-19, 20 and more). Whole numbers above 1, increasing.
    truth : frame, optional
        The ground truth of the call, when it is apart: its users are listed too.
    user, item : str
        The user and item columns of the frames.
    name : str, default "cohort"
        The cohort column.

    Returns
    -------
    frame of the same type as `frame`
        One row per user of ``frame`` and ``truth``: the user, ``n_train`` (distinct training
        items, 0 for a user with none) and the cohort: ``"cold"`` (no training row), then the
        bins labelled by their counts (``"1-3"``, ``"4-12"``, ``"13+"``). On Polars the
        column is an Enum in that order; elsewhere text. Pass it as ``users=`` and ``name`` in
        ``by=``.

    Notes
    -----
    Every user the frame lists gets a cohort, so ``users=`` drops nobody, and the cohorts'
    means weighted by their ``n_users`` equal the overall mean.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> recs = pl.DataFrame({"user_id": [1, 1, 2, 3, 4], "item_id": ["a", "b", "a", "c", "a"],
    ...                      "rank": [1, 2, 1, 1, 1], "relevance": [1, 0, 0, 1, 1]})
    >>> train = pl.DataFrame({"user_id": [1, 2, 2, 2, 3], "item_id": ["x", "x", "y", "z", "y"]})
    >>> recframe.user_cohorts(recs, train, bins=2).rows()
    [(1, 1, '1-2'), (2, 3, '3+'), (3, 1, '1-2'), (4, 0, 'cold')]
    """
    _check_name(name, user, "user_cohorts", "cohort")
    lf, engine = _frames.lazy(frame, "frame")
    trained, _ = _frames.lazy(train, "train")
    _frames.same_engine(lf, trained, "train")
    for arg, column, where in (("user", user, "frame"), ("user", user, "train"), ("item", item, "train")):
        _check_column(_frames.schema_of(lf if where == "frame" else trained, ref(where)), column, arg, where)
    _side.check_train_keys(trained, user, item)
    frames = {ref("frame"): lf.select(user), ref("train"): trained.select(user, item)}
    if truth is not None:
        truth_lf, _ = _frames.lazy(truth, "truth")
        _frames.same_engine(lf, truth_lf, "truth")
        _check_column(_frames.schema_of(truth_lf, ref("truth")), user, "user", "truth")
        frames[ref("truth")] = truth_lf.select(user)
    listed, trained, *more = _aligned(user, frames)
    listed = nw.concat([listed, *more], how="vertical") if more else listed
    return engine.from_lazy(_cohorts(listed, trained, user, item, bins, edges, name, "n_train"))


@_frames.engine_call
def item_strata(
    train: FrameT,
    bins: int = 3,
    *,
    edges: Sequence[int] | None = None,
    items: Any = None,
    user: str = DEFAULTS["user"],
    item: str = DEFAULTS["item"],
    name: str = "popularity",
) -> FrameT:
    """Every item with a popularity stratum: an ``items=`` frame for ``item_group=``.

    The strata are as :func:`user_cohorts`' cohorts, by each item's distinct training users;
    an item of ``items`` (the catalog) no training user had is ``"cold"``. Returns one row per
    item of ``items`` (else of ``train``): the item, ``n_train`` and the stratum; pass it as
    ``items=`` with ``item_group=name`` (join your item features onto it first).

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> train = pl.DataFrame({"user_id": [1, 2, 2, 3, 3, 3], "item_id": ["x", "x", "y", "x", "y", "z"]})
    >>> recframe.item_strata(train, bins=2).rows()
    [('x', 3, '3+'), ('y', 2, '1-2'), ('z', 1, '1-2')]
    """
    _check_name(name, item, "item_strata", "popularity")
    trained, engine = _frames.lazy(train, "train")
    for arg, column in (("user", user), ("item", item)):
        _check_column(_frames.schema_of(trained, ref("train")), column, arg, "train")
    trained = trained.select(user, item)
    _side.check_train_keys(trained, user, item)
    if items is not None:
        catalog, _ = _frames.lazy(items, "items")
        _frames.same_engine(trained, catalog, "items")
        _check_column(_frames.schema_of(catalog, ref("items")), item, "item", "items")
        trained, listed = _aligned(item, {ref("train"): trained, ref("items"): catalog.select(item)})
    listed = trained.select(item) if items is None else listed
    return engine.from_lazy(_cohorts(listed, trained, item, user, bins, edges, name, "n_train"))


def _cohorts(
    listed: nw.LazyFrame, train: nw.LazyFrame, key: str, other: str, bins: Any, edges: Any, name: str, count: str
) -> nw.LazyFrame:
    """One row per distinct `key` of `listed`: its distinct `other` values in `train` and its bin."""
    pairs = train.select(key, other).unique()
    counted = _frames.group_agg(pairs, [key], nw.len().cast(nw.Int64).alias("__rf_n"))
    rows = listed.unique().filter(~nw.col(key).is_null()).join(counted, on=key, how="left")
    distribution = (
        _frames.group_agg(rows.filter(~nw.col("__rf_n").is_null()), ["__rf_n"], nw.len().cast(nw.Int64).alias("weight"))
        .collect()
        .to_polars()
        .rename({"__rf_n": "n"})
    )
    points = _cut_points(distribution, bins, edges)
    counts = [int(c) for c in distribution["n"].to_list()]
    out = _labelled(rows, counts, points, name, _frames.runs_on(rows).in_process)
    out = out.with_columns(nw.col("__rf_n").fill_null(0).alias(count)).select(key, count, name)
    return out.sort(key)
