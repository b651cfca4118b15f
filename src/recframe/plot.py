"""Plots of curves, comparisons, per-user distributions, gaps between groups of users and the
exposure of item groups
(needs matplotlib: ``recframe[plot]``).

Each function draws with matplotlib and returns the Figure, so it can be styled, saved or
shown; pass ``ax=`` to draw into an existing Axes. matplotlib is imported only when a function
is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from recframe import _tables
from recframe.errors import RecframeError
from recframe.report import MARKER


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise RecframeError(
            'recframe.plot needs matplotlib, which is not installed. Hint: pip install "recframe[plot]".'
        ) from None
    return plt


def _axes(ax: Any, n: int = 1) -> tuple[Any, list[Any]]:
    plt = _pyplot()
    if ax is not None:
        if n != 1:
            raise RecframeError(f"ax= takes one Axes, but {n} panels are asked for. Hint: pass one metric with ax=.")
        return ax.figure, [ax]
    fig, axes = plt.subplots(1, n, figsize=(4.5 * n, 3.5), squeeze=False)
    return fig, list(axes[0])


def key_label(key: Any) -> str:
    """A group's name in a legend: its key values joined ("cold, A"), or the one value.

    >>> key_label(("cold", "A")), key_label("A")
    ('cold, A', 'A')
    """
    return ", ".join(str(k) for k in key) if isinstance(key, tuple) else str(key)


def curve(curve_frame: Any, metrics: str | Sequence[str] = "ndcg", *, by: Sequence[str] | None = None, ax: Any = None) -> Any:
    """Draw metric-vs-k lines (or precision-recall curves) from a :func:`recframe.curve` frame.

    Parameters
    ----------
    curve_frame : frame
        The output of :func:`recframe.curve` (any supported frame type; a LazyFrame is collected).
    metrics : str or list of str, default "ndcg"
        Metric columns to draw, one panel each, against k. ``"pr"`` draws precision against
        recall instead (one point per k). When the frame has ``_lo``/``_hi`` columns, the
        interval is shaded.
    by : list of str, optional
        Columns naming a line. Default: the columns before ``k`` (the ``by`` keys).
    ax : matplotlib Axes, optional
        Draw into this Axes (one panel only).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes per metric (``fig.axes``), one line per group, with a legend when there are
        several groups.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import recframe
    >>> frame = pl.DataFrame({"model": ["A", "A", "B", "B"], "k": [1, 2, 1, 2],
    ...                       "ndcg": [0.5, 0.6, 0.3, 0.4]})
    >>> fig = recframe.plot.curve(frame, "ndcg")
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['A', 'B']
    """
    df = _tables.eager(curve_frame, "curve_frame")
    if "k" not in df.columns:
        raise RecframeError(f"curve_frame has no column 'k' (columns: {df.columns}). Hint: pass the output of recframe.curve.")
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    for name in names:
        needed = ["precision", "recall"] if name == "pr" else [name]
        for column in needed:
            if column not in df.columns:
                available = _tables.metric_columns(df.columns)
                raise RecframeError(
                    f"metrics= names {name!r}, but curve_frame has no column {column!r}. Hint: pass one of {available} or 'pr'."
                )
    keys = list(by) if by is not None else df.columns[: df.columns.index("k")]
    groups = df.sort([*keys, "k"]).partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): df.sort("k")}
    fig, axes = _axes(ax, len(names))
    for axis, name in zip(axes, names):
        x, y = ("recall", "precision") if name == "pr" else ("k", name)
        for key, group in groups.items():
            line = axis.plot(group[x].to_numpy(), group[y].to_numpy(), marker="." if name == "pr" else None)
            line[0].set_label(key_label(key) if keys else y)
            if f"{y}_lo" in group.columns and name != "pr":
                axis.fill_between(group[x].to_numpy(), group[f"{y}_lo"].to_numpy(), group[f"{y}_hi"].to_numpy(),
                                  alpha=0.2, color=line[0].get_color())  # fmt: skip
        axis.set_xlabel(x)
        axis.set_ylabel(y)
        axis.set_title("precision-recall" if name == "pr" else f"{name} by k")
        if len(groups) > 1:
            axis.legend()
    fig.tight_layout()
    return fig


def compare(compare_frame: Any, *, ax: Any = None) -> Any:
    """Draw each model's delta against the baseline, with its interval; significant ones filled.

    Parameters
    ----------
    compare_frame : frame
        The output of :func:`recframe.compare` (a LazyFrame is collected).
    ax : matplotlib Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure
        One horizontal row per (model, metric), labelled ``"model: metric"`` (led by the
        other keys' values when compare had several, ``"cold / itemknn: ndcg@10"``): a point at
        ``delta`` with an error bar from ``delta_lo`` to ``delta_hi``, filled when that drawn
        interval excludes 0 and hollow when it includes 0 (or is null), a dagger (†) after the
        interval where ``significant`` (the adjusted p-value below alpha), and a vertical line
        at 0.

    Notes
    -----
    The fill and the dagger are two statements, each true of what it marks: compare's interval
    is not adjusted for multiple testing (its coverage is ``1 - alpha`` for each row alone),
    while ``significant`` is the test after the correction (Holm by default). A point filled
    because its own interval excludes 0 may so have no dagger; the fill never disagrees with the
    interval drawn. Under the paired t test a dagger is only ever on a filled point (the t
    interval excludes 0 exactly when the unadjusted p-value is below alpha, and the adjusted
    p-value is never smaller); under the other tests the interval is a bootstrap one, which
    may disagree with the test near the edge.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import recframe
    >>> per_user = pl.DataFrame({"model": ["A"] * 3 + ["B"] * 3, "user_id": [1, 2, 3] * 2,
    ...                          "rr@10": [0.5, 0.5, 1.0, 1.0, 1.0, 1.0]})
    >>> fig = recframe.plot.compare(recframe.compare(per_user, baseline="A", test="wilcoxon", seed=0))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['B: rr@10']
    """
    df = _tables.eager(compare_frame, "compare_frame")
    missing = [c for c in ("model", "metric", "delta", "delta_lo", "delta_hi", "significant", "baseline") if c not in df.columns]
    if missing:
        raise RecframeError(f"compare_frame lacks the columns {missing}. Hint: pass the output of recframe.compare.")
    fig, (axis,) = _axes(ax, 1)
    # compare(by=[model, segment, ...]) puts the other keys first: they lead each label
    strata = df.columns[: df.columns.index("baseline")]
    labels = [
        ", ".join(str(v) for v in row[:-2]) + (" / " if strata else "") + f"{row[-2]}: {row[-1]}"
        for row in df.select(*strata, "model", "metric").iter_rows()
    ]
    rows = list(range(len(df)))[::-1]  # first row at the top
    delta = df["delta"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    lo = df["delta_lo"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    hi = df["delta_hi"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    # the fill says what the drawn interval shows (NaN compares false: no interval, hollow)
    excludes_zero = (lo > 0) | (hi < 0)
    for flag, face, name in ((True, "C0", "interval excludes 0"), (False, "white", "interval includes 0")):
        chosen = [i for i in range(len(df)) if bool(excludes_zero[i]) == flag]
        if chosen:
            axis.errorbar(delta[chosen], [rows[i] for i in chosen], xerr=[delta[chosen] - lo[chosen], hi[chosen] - delta[chosen]],
                          fmt="o", color="C0", markerfacecolor=face, capsize=3, label=name)  # fmt: skip
    # the test after the multiple-testing correction, marked apart from the fill: a dagger
    marked = [i for i in range(len(df)) if df["significant"][i] is True and not np.isnan(delta[i])]
    for i in marked:
        end = hi[i] if not np.isnan(hi[i]) else delta[i]
        axis.annotate(MARKER, (end, rows[i]), xytext=(6, 0), textcoords="offset points", va="center", ha="left",
                      fontsize=11, color="C3")  # fmt: skip
    if marked:
        axis.plot([], [], linestyle="none", marker=f"${MARKER}$", color="C3", label="significant after correction")
    axis.axvline(0.0, color="grey", linewidth=1)
    axis.set_yticks(rows, labels)
    baselines = df["baseline"].unique().to_list()
    axis.set_title(f"difference from {baselines[0]}" if len(baselines) == 1 else "difference from baseline")
    axis.set_xlabel("delta (model - baseline)")
    handles, names = axis.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda j: names[j] == "significant after correction")  # the dagger last
    axis.legend([handles[j] for j in order], [names[j] for j in order])
    fig.tight_layout()
    return fig


def distribution(per_user_frame: Any, metric: str, *, by: str | None = "model", bins: int = 20, ax: Any = None) -> Any:
    """Histogram of a per-user metric, one per model, overlaid.

    Parameters
    ----------
    per_user_frame : frame
        The output of :func:`recframe.per_user` (a LazyFrame is collected).
    metric : str
        The metric column (``"ndcg@10"``). Null values (skipped users) are left out.
    by : str or None, default "model"
        Column naming the model; None draws one histogram of all rows.
    bins : int, default 20
        Bins, shared by every model (equal widths over the range of all values).
    ax : matplotlib Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure
        One step histogram per model, labelled by the model, with a legend.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import recframe
    >>> per_user = pl.DataFrame({"model": ["A", "A", "B"], "user_id": [1, 2, 1], "rr@10": [0.5, 1.0, 1.0]})
    >>> fig = recframe.plot.distribution(per_user, "rr@10")
    >>> fig.axes[0].get_xlabel(), [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ('rr@10', ['A', 'B'])
    """
    df = _tables.eager(per_user_frame, "per_user_frame")
    for arg, name in (("metric", metric), ("by", by)):
        if name is not None and name not in df.columns:
            raise RecframeError(
                f"{arg}={name!r} is not a column of per_user_frame (columns: {df.columns}). Hint: pass {arg}= one of them."
            )
    values = df.filter(pl.col(metric).is_not_null() & pl.col(metric).is_not_nan())
    fig, (axis,) = _axes(ax, 1)
    all_values = values[metric].to_numpy()
    edges = np.histogram_bin_edges(all_values, bins=bins) if len(all_values) else bins
    groups = values.sort(by).partition_by(by, as_dict=True, maintain_order=True) if by else {(metric,): values}
    for key, group in groups.items():
        axis.hist(group[metric].to_numpy(), bins=edges, histtype="step", linewidth=1.5, label=key_label(key[0]))
    axis.set_xlabel(metric)
    axis.set_ylabel("users")
    axis.set_title(f"per-user {metric}")
    if groups:  # (no value at all: an empty plot, and no legend to warn about)
        axis.legend()
    fig.tight_layout()
    return fig


def tradeoff(
    summary_frame: Any, x: str = "catalog_coverage@10", y: str = "ndcg@10", *, by: Sequence[str] | None = None, ax: Any = None
) -> Any:
    """One point per model: an accuracy metric against a beyond-accuracy one (coverage,
    novelty, ...), from a :func:`recframe.summary` frame, each point labelled by its model.

    Parameters
    ----------
    summary_frame : frame
        The output of :func:`recframe.summary` with both columns (a LazyFrame is collected).
    x, y : str, default "catalog_coverage@10", "ndcg@10"
        The metric columns on each axis.
    by : list of str, optional
        Columns naming a point. Default: the columns before ``n_users`` (the ``by`` keys).
    ax : matplotlib Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure
        A scatter of the groups, each annotated with its name; the axis titles say which way
        is better (``popularity`` and ``gini`` are lower-is-better).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import recframe
    >>> table = pl.DataFrame({"model": ["popular", "knn"], "n_users": [10, 10], "ndcg@10": [0.3, 0.25],
    ...                       "catalog_coverage@10": [0.01, 0.2]})
    >>> fig = recframe.plot.tradeoff(table)
    >>> [t.get_text() for t in fig.axes[0].texts], fig.axes[0].get_xlabel()
    (['popular', 'knn'], 'catalog_coverage@10 (higher is better)')
    """
    df = _tables.eager(summary_frame, "summary_frame")
    for arg, name in (("x", x), ("y", y)):
        if name not in df.columns:
            metrics = [c for c in df.columns if _tables.is_metric_column(c)]
            raise RecframeError(
                f"{arg}={name!r} is not a column of summary_frame (metric columns: {metrics}). Hint: pass {arg}= one of "
                "them, or ask summary for that metric."
            )
    keys = list(by) if by is not None else df.columns[: df.columns.index("n_users")] if "n_users" in df.columns else []
    fig, (axis,) = _axes(ax, 1)
    axis.scatter(df[x].to_numpy(), df[y].to_numpy())
    for row in df.iter_rows(named=True):
        name = ", ".join(str(row[k]) for k in keys) if keys else "all"
        axis.annotate(name, (row[x], row[y]), textcoords="offset points", xytext=(4, 4))
    for setter, column in ((axis.set_xlabel, x), (axis.set_ylabel, y)):
        setter(f"{column} ({'higher' if _tables.higher_is_better(column) else 'lower'} is better)")
    axis.set_title(f"{y} against {x}")
    fig.tight_layout()
    return fig


def long_tail(
    recs: Any,
    train: Any,
    k: int = 10,
    *,
    by: str | None = "model",
    user: str = "user_id",
    item: str = "item_id",
    rank: str | None = "rank",
    score: str | None = None,
    ax: Any = None,
) -> Any:
    """Where the exposure goes: the items ordered by training popularity (most popular first)
    against the cumulative share of training interactions, and of each model's recommendations
    within the top k, that they take.

    A model that follows the training popularity draws the training curve; one that only
    recommends the head reaches 1 within the first items; the gap to the diagonal is the long
    tail left unshown.

    Parameters
    ----------
    recs : frame
        Recommendations: ``by``, ``user``, ``item`` and ``rank`` (or ``score``: highest first,
        ties by item) columns (a LazyFrame is collected).
    train : frame
        Training interactions: ``user`` and ``item`` columns; an item's popularity is its
        distinct training users.
    k : int, default 10
        Only the items ranked within k count as exposed.
    by : str or None, default "model"
        Column naming the model (one line each); None: one line for all rows.
    user, item, rank, score : str
        Column names, as in :func:`recframe.summary`.
    ax : matplotlib Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure
        Lines over the popularity rank of the training items (log scale), then the
        recommended items absent from training, last.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import recframe
    >>> train = pl.DataFrame({"user_id": [1, 2, 3, 3], "item_id": ["a", "a", "a", "b"]})
    >>> recs = pl.DataFrame({"model": ["pop", "pop", "tail", "tail"], "user_id": [1, 2, 1, 2],
    ...                      "item_id": ["a", "a", "b", "c"], "rank": [1, 1, 1, 1]})
    >>> fig = recframe.plot.long_tail(recs, train, k=1)
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['training', 'pop', 'tail']
    """
    rec = _tables.eager(recs, "recs")
    seen = _tables.eager(train, "train")
    order = score if score is not None else rank
    for frame, arg, columns in ((rec, "recs", [user, item, order, by]), (seen, "train", [user, item])):
        missing = [c for c in columns if c is not None and c not in frame.columns]
        if missing:
            raise RecframeError(
                f"{arg} has no column {missing[0]!r} (columns: {frame.columns}). Hint: name it with user=, item=, rank=, score= or by=."
            )
    if order is None:
        raise RecframeError("long_tail needs rank= or score= to find the top k. Hint: pass rank='rank' or score='score'.")
    lists = [c for c in (by, user) if c is not None]
    if score is not None:  # highest score first, ties by item; a null score is not recommended
        scored = rec.filter(pl.col(score).is_not_null())
        top = scored.filter(pl.struct(-pl.col(score), pl.col(item)).rank("ordinal").over(lists) <= k)
    else:
        top = rec.filter(pl.col(order) <= k)
    popularity = seen.group_by(item).agg(pl.col(user).n_unique().alias("users")).sort(["users", item], descending=[True, False])
    places = popularity.with_row_index("place", offset=1).select(item, "place", "users")
    cold = top.select(item).unique().join(places, on=item, how="anti").sort(item)
    places = pl.concat(
        [places, cold.with_row_index("place", offset=places.height + 1).with_columns(users=pl.lit(0, pl.UInt32))],
        how="diagonal_relaxed",
    )
    fig, (axis,) = _axes(ax, 1)
    train_curve = places.filter(pl.col("users") > 0)
    axis.plot(
        train_curve["place"].to_numpy(),
        (train_curve["users"].cum_sum() / train_curve["users"].sum()).to_numpy(),
        label="training",
        color="black",
        linestyle="--",
    )
    groups = top.sort(by).partition_by(by, as_dict=True, maintain_order=True) if by else {("all",): top}
    for key, group in groups.items():
        counts = group.group_by(item).len("n").join(places, on=item).sort("place")
        axis.plot(counts["place"].to_numpy(), (counts["n"].cum_sum() / counts["n"].sum()).to_numpy(), label=key_label(key[0]))
    axis.set_xscale("log")
    axis.set_xlabel("items by training popularity (1 = most popular)")
    axis.set_ylabel(f"cumulative share (recommendations: top {k})")
    axis.set_title("exposure against training popularity")
    axis.legend()
    fig.tight_layout()
    return fig


def groups(
    per_user_frame: Any,
    group: str,
    metric: str,
    *,
    by: str | None = "model",
    ci: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = None,
    ax: Any = None,
) -> Any:
    """Draw each user group's mean of `metric`, per model, with a bootstrap interval.

    The chart of :func:`recframe.disparity`: one cluster of bars per group, one bar per
    model, the error bar the percentile bootstrap interval of the group's mean.

    Parameters
    ----------
    per_user_frame : frame
        One row per (model, user) with the `group` column: the output of
        ``recframe.per_user(..., users=users, by=["model", group])``.
    group : str
        The column holding each user's group.
    metric : str
        The metric column to draw (``"ndcg@10"``).
    by : str or None, default "model"
        The model column: one bar per model within each group (None: one bar per group).
    ci : float, default 0.95
        Coverage of the intervals.
    n_resamples, seed : int
        Bootstrap resamples and their seed.
    ax : matplotlib Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import recframe
    >>> per_user = pl.DataFrame({"model": ["A"] * 4, "user_id": [1, 2, 3, 4],
    ...                          "segment": ["new", "new", "old", "old"], "ndcg@10": [0.2, 0.4, 0.6, 0.8]})
    >>> fig = recframe.plot.groups(per_user, "segment", "ndcg@10", seed=0)
    >>> [round(float(bar.get_height()), 2) for bar in fig.axes[0].patches]
    [0.3, 0.7]
    """
    group_values, models, cells = group_means(per_user_frame, group, metric, by=by, ci=ci, n_resamples=n_resamples, seed=seed)
    fig, (axis,) = _axes(ax)
    width = 0.8 / len(models)
    for j, model in enumerate(models):
        means = [mean for mean, _, _ in cells[j]]
        lows = [mean - low for mean, low, _ in cells[j]]
        highs = [high - mean for mean, _, high in cells[j]]
        places = np.arange(len(group_values)) + (j - (len(models) - 1) / 2) * width
        axis.bar(places, means, width, yerr=[lows, highs], capsize=3, label=None if model is None else str(model))
    axis.set_xticks(np.arange(len(group_values)), [str(v) for v in group_values])
    axis.set_xlabel(group)
    axis.set_ylabel(f"mean {metric} ({ci:.0%} interval)")
    if by is not None and len(models) > 1:
        axis.legend(title=by, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)  # never over a bar
    fig.tight_layout()
    return fig


def group_means(
    per_user_frame: Any,
    group: str,
    metric: str,
    *,
    by: str | None = "model",
    ci: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = None,
) -> tuple[list[Any], list[Any], list[list[tuple[float, float, float]]]]:
    """The numbers :func:`groups` draws: the groups (sorted), the models (sorted; ``[None]``
    without ``by``), and per model per group (mean, low, high), the percentile bootstrap
    interval of the group's mean (NaN for a group without values). The report page draws them too.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> per_user = pl.DataFrame({"model": ["A"] * 4, "segment": ["x", "x", "y", "y"], "ndcg@10": [0.2, 0.4, 0.6, 0.8]})
    >>> groups, models, cells = recframe.plot.group_means(per_user, "segment", "ndcg@10", seed=0)
    >>> groups, models, [round(mean, 3) for mean, _, _ in cells[0]]
    (['x', 'y'], ['A'], [0.3, 0.7])
    """
    from recframe import stats

    df = _tables.eager(per_user_frame, "per_user_frame")
    for name, column in (("group", group), ("metric", metric), *((("by", by),) if by is not None else ())):
        if column not in df.columns:
            raise RecframeError(
                f"{name}={column!r} is not a column of per_user_frame (columns: {df.columns}). Hint: pass one of them."
            )
    if df.get_column(group).null_count():
        raise RecframeError(f"group={group!r} has null values. Hint: fill them first, e.g. fill_null('unknown').")
    level = stats.check_level("ci", ci)
    group_values = df.get_column(group).unique().sort().to_list()
    models = df.get_column(by).unique().sort().to_list() if by is not None else [None]
    rng = np.random.default_rng(seed)
    cells = []
    for model in models:
        part = df if by is None else df.filter(pl.col(by) == model)
        row = []
        for value in group_values:
            values = part.filter(pl.col(group) == value).get_column(metric).drop_nulls().cast(pl.Float64).to_numpy()
            mean = float(values.mean()) if values.size else np.nan
            low, high = stats.bootstrap_ci(values, level, n_resamples, rng) if values.size else (np.nan, np.nan)
            row.append((mean, float(low), float(high)))
        cells.append(row)
    return group_values, models, cells


def exposure(
    item_groups_frame: Any,
    k: int | None = None,
    *,
    by: str | None = "model",
    share: str = "exposure_share",
    ax: Any = None,
) -> Any:
    """Draw each item group's share of the exposure per model, beside its share of the relevant
    items: the chart of :func:`recframe.item_groups`.

    One cluster per item group: a grey bar for ``relevant_share`` (what users liked), then
    one bar per model for ``exposure_share@k`` (what the lists gave). A model at parity draws
    each bar as high as the grey one.

    Parameters
    ----------
    item_groups_frame : frame
        The output of :func:`recframe.item_groups`.
    k : int, optional
        The cut-off to draw (needed when the frame has several).
    by : str or None, default "model"
        The model column: one bar per model in each cluster (None: the frame has one model).
    share : {"exposure_share", "rec_share"}, default "exposure_share"
        The rank-discounted exposure, or the plain share of slots.
    ax : matplotlib Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import polars as pl
    >>> import recframe
    >>> table = pl.DataFrame({"model": ["A", "A"], "popularity": ["head", "tail"], "n_items": [2.0, 8.0],
    ...                       "relevant_share": [0.3, 0.7], "exposure_share@10": [0.9, 0.1]})
    >>> fig = recframe.plot.exposure(table)
    >>> [round(float(bar.get_height()), 2) for bar in fig.axes[0].patches]
    [0.3, 0.7, 0.9, 0.1]
    """
    df = _tables.eager(item_groups_frame, "item_groups_frame")
    if share not in ("exposure_share", "rec_share"):
        raise RecframeError(f'share={share!r} is not a share item_groups gives. Hint: pass "exposure_share" or "rec_share".')
    found = sorted(int(c.split("@")[1]) for c in df.columns if c.startswith(f"{share}@"))
    if not found or "n_items" not in df.columns or "relevant_share" not in df.columns:
        raise RecframeError(
            f"item_groups_frame has no {share}@k, n_items and relevant_share columns (columns: {df.columns}). "
            "Hint: pass the output of recframe.item_groups."
        )
    if k is None and len(found) > 1:
        raise RecframeError(f"item_groups_frame has the cut-offs {found}. Hint: pass k=, one of them.")
    k = found[0] if k is None else k
    if k not in found:
        raise RecframeError(f"k={k} is not a cut-off of item_groups_frame ({found}). Hint: pass one of them.")
    if by is not None and by not in df.columns:
        raise RecframeError(f"by={by!r} is not a column of item_groups_frame (columns: {df.columns}). Hint: by=None.")
    # the item-group column is the one just before n_items
    group = df.columns[df.columns.index("n_items") - 1]
    values = df.get_column(group).unique(maintain_order=True).to_list()
    labels = ["(not in the catalog)" if v is None else str(v) for v in values]
    models = df.get_column(by).unique(maintain_order=True).to_list() if by is not None else [None]
    if ax is None:  # as wide as the bars need (a cluster per group, a bar per model)
        ax = _pyplot().subplots(figsize=(min(16.0, max(5.5, 3.0 + 0.22 * len(values) * (len(models) + 1))), 3.8))[1]
    fig, (axis,) = _axes(ax)
    width = 0.8 / (len(models) + 1)
    places = np.arange(len(values))

    def heights(part: pl.DataFrame, column: str) -> list[float]:
        got = dict(zip(part.get_column(group).to_list(), part.get_column(column).to_list()))
        return [np.nan if got.get(v) is None else float(got[v]) for v in values]

    first = df if by is None else df.filter(pl.col(by) == models[0])
    left = places - 0.4 + width / 2
    axis.bar(left, heights(first, "relevant_share"), width, color="0.75", label="relevant items")
    for j, model in enumerate(models, 1):
        part = df if by is None else df.filter(pl.col(by) == model)
        axis.bar(
            left + j * width,
            heights(part, f"{share}@{k}"),
            width,
            label=f"{'exposure' if share == 'exposure_share' else 'slots'}: {key_label(model) if model is not None else 'recommended'}",
        )
    axis.set_xticks(places, labels, rotation=45 if len(values) > 6 else 0, ha="right" if len(values) > 6 else "center")
    axis.set_xlabel(group)
    axis.set_ylabel(f"share of the {'exposure' if share == 'exposure_share' else 'slots'} (k = {k})")
    axis.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout()
    return fig
