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

from recframe.engine import _tables
from recframe.errors import RecframeError
from recframe.reporting import _charts
from recframe.reporting._charts import key_label
from recframe.reporting.report import MARKER
from recframe.statistics import stats

__all__ = ["compare", "curve", "distribution", "exposure", "group_means", "groups", "key_label", "long_tail", "tradeoff"]


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


def _numbers(values: Sequence[Any]) -> Any:
    """The values as floats, None as NaN (what matplotlib leaves out)."""
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _lines(axis: Any, panel: _charts.Panel) -> None:
    """A panel of lines: a reference series dashed in black, a band where the series has one, a
    legend where there are several series or a reference."""
    for s in panel.series:
        x, y = _numbers([p[0] for p in s.points]), _numbers([p[1] for p in s.points])
        style = {"color": "black", "linestyle": "--"} if s.reference else {"marker": "." if s.dots else None}
        (drawn,) = axis.plot(x, y, label=s.name, **style)
        if s.band is not None:
            axis.fill_between(x, _numbers([b[0] for b in s.band]), _numbers([b[1] for b in s.band]), alpha=0.2,
                              color=drawn.get_color())  # fmt: skip
    if panel.log_x:
        axis.set_xscale("log")
    axis.set_xlabel(panel.xlabel)
    axis.set_ylabel(panel.ylabel)
    axis.set_title(panel.title)
    if len(panel.series) > 1 or any(s.reference for s in panel.series):  # (a reference line is always named)
        axis.legend()


def _clusters(axis: Any, chart: _charts.Clusters) -> None:
    """Clustered bars (a reference series in grey), their intervals, and a legend beside the
    plot where there are several series (never over a bar)."""
    width = 0.8 / len(chart.series)
    for j, s in enumerate(chart.series):
        heights = _numbers(s.heights)
        errors = None
        if s.intervals is not None:
            lows, highs = _numbers([i[0] for i in s.intervals]), _numbers([i[1] for i in s.intervals])
            errors = [heights - lows, highs - heights]
        places = np.arange(len(chart.categories)) + (j - (len(chart.series) - 1) / 2) * width
        axis.bar(places, heights, width, yerr=errors, capsize=3 if errors else 0, color="0.75" if s.reference else None,
                 label=s.name)  # fmt: skip
    slanted = len(chart.categories) > 6
    axis.set_xticks(np.arange(len(chart.categories)), chart.categories, rotation=45 if slanted else 0,
                    ha="right" if slanted else "center")  # fmt: skip
    axis.set_xlabel(chart.xlabel)
    axis.set_ylabel(chart.ylabel)
    if len(chart.series) > 1:
        axis.legend(title=chart.legend_title or None, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)


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
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    chart = _charts.curves(_tables.eager(curve_frame, "curve_frame"), names, by)
    fig, axes = _axes(ax, len(chart.panels))
    for axis, panel in zip(axes, chart.panels):
        _lines(axis, panel)
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
        ``delta`` with an error bar from ``delta_lo`` to ``delta_hi``, filled and followed by a
        dagger (†) where ``significant`` (the p-value adjusted by the frame's correction below
        alpha), hollow otherwise, and a vertical line at 0.

    Notes
    -----
    The fill and the dagger have one meaning: significant after the correction (Holm by
    default). The error bar is compare's interval, which is not adjusted for multiple testing
    (its coverage is ``1 - alpha`` for each row alone), and the x-axis title says so: a hollow
    point's interval may exclude 0 when the correction over every row makes it not significant.

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
    chart = _charts.comparison(_tables.eager(compare_frame, "compare_frame"))
    fig, (axis,) = _axes(ax, 1)
    rows = list(range(len(chart.rows)))[::-1]  # first row at the top
    delta, lo, hi = (_numbers([getattr(r, name) for r in chart.rows]) for name in ("delta", "lo", "hi"))
    for (kind, words), face in zip(chart.legend[:2], ("C0", "white")):
        chosen = [i for i, r in enumerate(chart.rows) if r.filled == (kind == "filled")]
        if chosen:
            axis.errorbar(delta[chosen], [rows[i] for i in chosen], xerr=[delta[chosen] - lo[chosen], hi[chosen] - delta[chosen]],
                          fmt="o", color="C0", markerfacecolor=face, capsize=3, label=words)  # fmt: skip
    # significant after the correction (either direction), as the fill: a dagger after the interval
    for i in (i for i, r in enumerate(chart.rows) if r.better is not None):
        end = hi[i] if not np.isnan(hi[i]) else delta[i]
        axis.annotate(MARKER, (end, rows[i]), xytext=(6, 0), textcoords="offset points", va="center", ha="left",
                      fontsize=11, color="C3")  # fmt: skip
    axis.axvline(0.0, color="grey", linewidth=1)
    axis.set_yticks(rows, [r.label for r in chart.rows])
    axis.set_title(chart.title)
    axis.set_xlabel(chart.xlabel)
    axis.legend()  # (the dagger means what the fill means: no entry of its own)
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
    chart = _charts.distribution(_tables.eager(per_user_frame, "per_user_frame"), metric, by, bins)
    fig, (axis,) = _axes(ax, 1)
    for name, counts in chart.groups:  # each bin's count, weighted at its left edge: the same steps as hist of the values
        axis.hist(chart.edges[:-1], bins=chart.edges, weights=counts, histtype="step", linewidth=1.5, label=name)
    axis.set_xlabel(chart.xlabel)
    axis.set_ylabel(chart.ylabel)
    axis.set_title(chart.title)
    if chart.groups:  # (no value at all: an empty plot, and no legend to warn about)
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
    chart = _charts.tradeoff(_tables.eager(summary_frame, "summary_frame"), x, y, by)
    fig, (axis,) = _axes(ax, 1)
    axis.scatter(_numbers([p[1] for p in chart.points]), _numbers([p[2] for p in chart.points]))
    for name, px, py in chart.points:
        axis.annotate(name, (px, py), textcoords="offset points", xytext=(4, 4))
    axis.set_xlabel(chart.xlabel)
    axis.set_ylabel(chart.ylabel)
    axis.set_title(chart.title)
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
    chart = _charts.long_tail(_tables.eager(recs, "recs"), _tables.eager(train, "train"), k, by, user, item, rank, score)
    fig, (axis,) = _axes(ax, 1)
    _lines(axis, chart.panels[0])
    fig.tight_layout()
    return fig


def groups(
    per_user_frame: Any,
    group: str,
    metric: str,
    *,
    by: str | None = "model",
    ci: float = 0.95,
    n_resamples: int = stats.INTERVAL_RESAMPLES,
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
    df = _tables.eager(per_user_frame, "per_user_frame")
    chart = _charts.groups(df, group, metric, by=by, ci=ci, n_resamples=n_resamples, seed=seed)
    fig, (axis,) = _axes(ax)
    _clusters(axis, chart)
    fig.tight_layout()
    return fig


def group_means(
    per_user_frame: Any,
    group: str,
    metric: str,
    *,
    by: str | None = "model",
    ci: float = 0.95,
    n_resamples: int = stats.INTERVAL_RESAMPLES,
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
    df = _tables.eager(per_user_frame, "per_user_frame")
    return _charts.group_means(df, group, metric, by=by, ci=ci, n_resamples=n_resamples, seed=seed)


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
    chart = _charts.exposure(_tables.eager(item_groups_frame, "item_groups_frame"), k, by, share)
    if ax is None:  # as wide as the bars need (a cluster per group, a bar per model and the grey one)
        bars = len(chart.categories) * len(chart.series)
        ax = _pyplot().subplots(figsize=(min(16.0, max(5.5, 3.0 + 0.22 * bars)), 3.8))[1]
    fig, (axis,) = _axes(ax)
    _clusters(axis, chart)
    fig.tight_layout()
    return fig
