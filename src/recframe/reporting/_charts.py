"""The charts as data, decided once: each function reads result frames and returns what its chart
shows (which rows, in which order, their labels, the axis titles, the bins, the intervals, which
points are significant, the legend's words) as small frozen dataclasses. Two renderers draw the
same data: :mod:`recframe.plot` with matplotlib (notebooks), :mod:`recframe.reporting._page.svg` as inline
SVG (the page). Nothing here draws, and nothing here needs matplotlib."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from recframe.engine import _tables
from recframe.errors import RecframeError
from recframe.statistics import stats

#: the comparison's marks, in words: one meaning, the test after the frame's correction, for the
#: fill and the mark after it; the interval drawn is each row's own (unadjusted), and says so
FILLED, HOLLOW = "significant after correction", "not significant after correction"
BETTER, WORSE = "significantly better (after correction)", "significantly worse (after correction)"


def key_label(key: Any) -> str:
    """A group's name in a legend: its key values joined ("cold, A"), or the one value.

    >>> key_label(("cold", "A")), key_label("A")
    ('cold, A', 'A')
    """
    return ", ".join(str(k) for k in key) if isinstance(key, tuple) else str(key)


def better(delta: Any, metric: str, significant: Any) -> bool | None:
    """A comparison row's mark: None where it is not significant (after the frame's correction),
    else True where the model is better than the baseline by the metric's direction, False where worse."""
    if significant is not True or delta is None or delta != delta:  # (NaN: no delta, no mark)
        return None
    return (delta > 0) == _tables.higher_is_better(metric)


def marks(frame: pl.DataFrame) -> list[bool | None]:
    """:func:`better` for each row of a recframe.compare frame, in its order."""
    return [better(d, m, s) for d, m, s in frame.select("delta", "metric", "significant").iter_rows()]


# ---------------------------------------------------------------------------- the comparison


@dataclass(frozen=True)
class Delta:
    """One row of the comparison chart: the delta, its unadjusted interval, whether it is
    significant after the frame's correction (a filled point) and its mark (:func:`better`)."""

    label: str
    delta: float | None
    lo: float | None
    hi: float | None
    filled: bool
    better: bool | None


@dataclass(frozen=True)
class Comparison:
    rows: tuple[Delta, ...]
    title: str
    xlabel: str

    @property
    def legend(self) -> list[tuple[str, str]]:
        """(kind, words) of the marks drawn: "filled", "hollow", then "better" / "worse" where any."""
        found = {r.better for r in self.rows}
        return [("filled", FILLED), ("hollow", HOLLOW)] + [(k, w) for k, w, b in (("better", BETTER, True),
                                                                                   ("worse", WORSE, False)) if b in found]  # fmt: skip


def _number(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


def comparison(frame: pl.DataFrame) -> Comparison:
    """recframe.compare's rows, first at the top: each labelled ``"model: metric"`` (led by the
    other keys' values, ``"cold / B: ndcg@10"``), its delta and interval."""
    missing = [c for c in ("model", "metric", "delta", "delta_lo", "delta_hi", "significant", "baseline") if c not in frame]
    if missing:
        raise RecframeError(f"compare_frame lacks the columns {missing}. Hint: pass the output of recframe.compare.")
    strata = frame.columns[: frame.columns.index("baseline")]  # compare(by=[model, segment]) puts the other keys first
    rows = []
    for row, mark in zip(frame.iter_rows(named=True), marks(frame)):
        lead = ", ".join(str(row[c]) for c in strata) + " / " if strata else ""
        lo, hi = _number(row["delta_lo"]), _number(row["delta_hi"])
        # filled: significant after the correction, as the mark; never by the unadjusted interval
        rows.append(Delta(f"{lead}{row['model']}: {row['metric']}", _number(row["delta"]), lo, hi, mark is not None, mark))
    baselines = frame.get_column("baseline").unique().to_list()
    title = f"difference from {baselines[0]}" if len(baselines) == 1 else "difference from the baseline"
    return Comparison(tuple(rows), title, "delta (model − baseline), interval not adjusted for multiple testing")


# ---------------------------------------------------------------------------- lines


@dataclass(frozen=True)
class Series:
    """A named line of points (x, y); `dots`: a dot at each point; `band`: (lo, hi) per point;
    `reference`: drawn apart (dashed, black), as the training curve of the long tail."""

    name: str
    points: tuple[tuple[float, float], ...]
    dots: bool = False
    band: tuple[tuple[float, float], ...] | None = None
    reference: bool = False


@dataclass(frozen=True)
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    log_x: bool = False


@dataclass(frozen=True)
class Lines:
    panels: tuple[Panel, ...]
    legend_title: str = ""


def curves(frame: pl.DataFrame, metrics: Sequence[str], by: Sequence[str] | None = None) -> Lines:
    """recframe.curve's frame: a panel per metric against k (``"pr"``: precision against recall,
    a dot per k), a line per group of `by` (default: the columns before k), the interval as a band."""
    if "k" not in frame.columns:
        raise RecframeError(f"curve_frame has no column 'k' (columns: {frame.columns}). Hint: pass the output of recframe.curve.")
    for name in metrics:
        for column in ["precision", "recall"] if name == "pr" else [name]:
            if column not in frame.columns:
                available = _tables.metric_columns(frame.columns)
                raise RecframeError(
                    f"metrics= names {name!r}, but curve_frame has no column {column!r}. Hint: pass one of {available} or 'pr'."
                )
    keys = list(by) if by is not None else frame.columns[: frame.columns.index("k")]
    groups = frame.sort([*keys, "k"]).partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): frame.sort("k")}
    panels = []
    for name in metrics:
        x, y = ("recall", "precision") if name == "pr" else ("k", name)
        series = []
        for key, g in groups.items():
            banded = name != "pr" and f"{y}_lo" in g.columns
            band = tuple(zip(g[f"{y}_lo"].to_list(), g[f"{y}_hi"].to_list())) if banded else None
            series.append(Series(key_label(key) if keys else y, tuple(zip(g[x].to_list(), g[y].to_list())), name == "pr", band))
        panels.append(Panel("precision-recall" if name == "pr" else f"{name} by k", x, y, tuple(series)))
    return Lines(tuple(panels), ", ".join(keys))


def long_tail(recs: pl.DataFrame, train: pl.DataFrame, k: int, by: str | None, user: str, item: str,
              rank: str | None, score: str | None) -> Lines:  # fmt: skip
    """The cumulative share of the training interactions, and of each model's top-k slots, over
    the items by training popularity (then the recommended items absent from training)."""
    order = score if score is not None else rank
    for frame, arg, columns in ((recs, "recs", [user, item, order, by]), (train, "train", [user, item])):
        missing = [c for c in columns if c is not None and c not in frame.columns]
        if missing:
            raise RecframeError(
                f"{arg} has no column {missing[0]!r} (columns: {frame.columns}). Hint: name it with user=, item=, rank=, score= or by=."
            )
    if order is None:
        raise RecframeError("long_tail needs rank= or score= to find the top k. Hint: pass rank='rank' or score='score'.")
    lists = [c for c in (by, user) if c is not None]
    if score is not None:  # highest score first, ties by item; a null score is not recommended
        scored = recs.filter(pl.col(score).is_not_null())
        top = scored.filter(pl.struct(-pl.col(score), pl.col(item)).rank("ordinal").over(lists) <= k)
    else:
        top = recs.filter(pl.col(order) <= k)
    popularity = train.group_by(item).agg(pl.col(user).n_unique().alias("users")).sort(["users", item], descending=[True, False])
    places = popularity.with_row_index("place", offset=1).select(item, "place", "users")
    cold = top.select(item).unique().join(places, on=item, how="anti").sort(item)
    places = pl.concat(
        [places, cold.with_row_index("place", offset=places.height + 1).with_columns(users=pl.lit(0, pl.UInt32))],
        how="diagonal_relaxed",
    )

    def cumulative(name: str, counts: pl.DataFrame, column: str, reference: bool = False) -> Series:
        shares = (counts[column].cum_sum() / counts[column].sum()).to_list()
        return Series(name, tuple(zip(counts["place"].to_list(), shares)), reference=reference)

    series = [cumulative("training", places.filter(pl.col("users") > 0), "users", True)]
    groups = top.sort(by).partition_by(by, as_dict=True, maintain_order=True) if by else {("all",): top}
    for key, group in groups.items():
        series.append(cumulative(key_label(key[0]), group.group_by(item).len("n").join(places, on=item).sort("place"), "n"))
    return Lines((Panel("exposure against training popularity", "items by training popularity (1 = most popular)",
                        f"cumulative share (recommendations: top {k})", tuple(series), log_x=True),))  # fmt: skip


# ---------------------------------------------------------------------------- histogram, points


@dataclass(frozen=True)
class Histogram:
    """Counts over shared bins (`edges`), one (name, counts) per group."""

    edges: tuple[float, ...]
    groups: tuple[tuple[str, tuple[int, ...]], ...]
    xlabel: str
    ylabel: str
    title: str


def distribution(per_user: pl.DataFrame, metric: str, by: str | None = "model", bins: int = 20) -> Histogram:
    """The users' values of `metric` (nulls and NaN left out) per value of `by`, over `bins`
    equal bins spanning every value."""
    for arg, name in (("metric", metric), ("by", by)):
        if name is not None and name not in per_user.columns:
            raise RecframeError(
                f"{arg}={name!r} is not a column of per_user_frame (columns: {per_user.columns}). Hint: pass {arg}= one of them."
            )
    # at 12 digits: a value on a bin's edge stays in one bin whatever the order its sums ran in
    values = per_user.filter(pl.col(metric).is_not_null() & pl.col(metric).is_not_nan()).with_columns(
        pl.col(metric).cast(pl.Float64).round(12)
    )
    everything = values.get_column(metric).to_numpy()
    edges = np.histogram_bin_edges(everything, bins=bins) if everything.size else np.linspace(0, 1, bins + 1)
    parts = values.sort(by).partition_by(by, as_dict=True, maintain_order=True) if by else {(metric,): values}
    groups = tuple(
        (key_label(key[0]), tuple(np.histogram(part.get_column(metric).to_numpy(), bins=edges)[0].tolist()))
        for key, part in parts.items()
    )
    return Histogram(tuple(edges.tolist()), groups, metric, "users", f"per-user {metric}")


@dataclass(frozen=True)
class Scatter:
    """Labelled points (label, x, y)."""

    points: tuple[tuple[str, Any, Any], ...]
    xlabel: str
    ylabel: str
    title: str


def tradeoff(summary: pl.DataFrame, x: str, y: str, by: Sequence[str] | None = None) -> Scatter:
    """One point per group of `by` (default: the columns before n_users): `y` against `x`, each
    axis saying which way is better."""
    for arg, name in (("x", x), ("y", y)):
        if name not in summary.columns:
            metrics = [c for c in summary.columns if _tables.is_metric_column(c)]
            raise RecframeError(
                f"{arg}={name!r} is not a column of summary_frame (metric columns: {metrics}). Hint: pass {arg}= one of "
                "them, or ask summary for that metric."
            )
    columns = summary.columns
    keys = list(by) if by is not None else columns[: columns.index("n_users")] if "n_users" in columns else []
    points = tuple((", ".join(str(r[k]) for k in keys) if keys else "all", r[x], r[y]) for r in summary.iter_rows(named=True))

    def said(column: str) -> str:
        return f"{column} ({'higher' if _tables.higher_is_better(column) else 'lower'} is better)"

    return Scatter(points, said(x), said(y), f"{y} against {x}")


# ---------------------------------------------------------------------------- bars


@dataclass(frozen=True)
class Bars:
    """A bar per category: heights (None: no bar), optional intervals (lo, hi); `reference`: the
    grey bar a model's is read against."""

    name: str
    heights: tuple[float | None, ...]
    intervals: tuple[tuple[float | None, float | None], ...] | None = None
    reference: bool = False


@dataclass(frozen=True)
class Clusters:
    """Clustered bars: one cluster per category, one bar per series."""

    categories: tuple[str, ...]
    series: tuple[Bars, ...]
    xlabel: str
    ylabel: str
    legend_title: str = ""


def group_means(
    per_user: pl.DataFrame, group: str, metric: str, *, by: str | None = "model", ci: float = 0.95,
    n_resamples: int = stats.INTERVAL_RESAMPLES, seed: int | None = None,
) -> tuple[list[Any], list[Any], list[list[tuple[float, float, float]]]]:  # fmt: skip
    """The groups (sorted), the models (sorted; ``[None]`` without `by`), and per model per group
    (mean, low, high): the percentile bootstrap interval of the group's mean (NaN without values)."""
    for name, column in (("group", group), ("metric", metric), *((("by", by),) if by is not None else ())):
        if column not in per_user.columns:
            raise RecframeError(
                f"{name}={column!r} is not a column of per_user_frame (columns: {per_user.columns}). Hint: pass one of them."
            )
    if per_user.get_column(group).null_count():
        raise RecframeError(f"group={group!r} has null values. Hint: fill them first, e.g. fill_null('unknown').")
    level = stats.check_level("ci", ci)
    group_values = per_user.get_column(group).unique().sort().to_list()
    models = per_user.get_column(by).unique().sort().to_list() if by is not None else [None]
    rng = np.random.default_rng(seed)
    cells = []
    for model in models:
        part = per_user if by is None else per_user.filter(pl.col(by) == model)
        row = []
        for value in group_values:
            values = part.filter(pl.col(group) == value).get_column(metric).drop_nulls().cast(pl.Float64).to_numpy()
            mean = float(values.mean()) if values.size else np.nan
            low, high = stats.bootstrap_ci(values, level, n_resamples, rng) if values.size else (np.nan, np.nan)
            row.append((mean, float(low), float(high)))
        cells.append(row)
    return group_values, models, cells


def groups(
    per_user: pl.DataFrame, group: str, metric: str, *, by: str | None = "model", ci: float = 0.95,
    n_resamples: int = stats.INTERVAL_RESAMPLES, seed: int | None = None,
) -> Clusters:  # fmt: skip
    """Each group's mean of `metric` per model (a bar each), with its bootstrap interval."""
    values, models, cells = group_means(per_user, group, metric, by=by, ci=ci, n_resamples=n_resamples, seed=seed)
    series = tuple(
        Bars(
            "all" if m is None else str(m),
            tuple(_number(x) for x, _, _ in row),
            tuple((_number(lo), _number(hi)) for _, lo, hi in row),
        )
        for m, row in zip(models, cells)
    )
    return Clusters(tuple(str(v) for v in values), series, group, f"mean {metric} ({ci:.0%} interval)", by or "")


def exposure(frame: pl.DataFrame, k: int | None = None, by: str | None = "model", share: str = "exposure_share") -> Clusters:
    """recframe.item_groups' frame: per item group, its share of the relevant items (the grey
    reference), then each model's share of the exposure (or of the slots) within k."""
    if share not in ("exposure_share", "rec_share"):
        raise RecframeError(f'share={share!r} is not a share item_groups gives. Hint: pass "exposure_share" or "rec_share".')
    found = sorted(int(c.split("@")[1]) for c in frame.columns if c.startswith(f"{share}@"))
    if not found or "n_items" not in frame.columns or "relevant_share" not in frame.columns:
        raise RecframeError(
            f"item_groups_frame has no {share}@k, n_items and relevant_share columns (columns: {frame.columns}). "
            "Hint: pass the output of recframe.item_groups."
        )
    if k is None and len(found) > 1:
        raise RecframeError(f"item_groups_frame has the cut-offs {found}. Hint: pass k=, one of them.")
    k = found[0] if k is None else k
    if k not in found:
        raise RecframeError(f"k={k} is not a cut-off of item_groups_frame ({found}). Hint: pass one of them.")
    if by is not None and by not in frame.columns:
        raise RecframeError(f"by={by!r} is not a column of item_groups_frame (columns: {frame.columns}). Hint: by=None.")
    group = frame.columns[frame.columns.index("n_items") - 1]  # the item-group column: just before n_items
    values = frame.get_column(group).unique(maintain_order=True).to_list()
    models = frame.get_column(by).unique(maintain_order=True).to_list() if by is not None else [None]
    what = "exposure" if share == "exposure_share" else "slots"

    def heights(model: Any, column: str) -> tuple[float | None, ...]:
        part = frame if by is None else frame.filter(pl.col(by) == model)
        got = dict(zip(part.get_column(group).to_list(), part.get_column(column).to_list()))
        return tuple(None if got.get(v) is None else float(got[v]) for v in values)

    series = [Bars("relevant items", heights(models[0], "relevant_share"), reference=True)]
    series += [Bars(f"{what}: {'recommended' if m is None else key_label(m)}", heights(m, f"{share}@{k}")) for m in models]
    labels = tuple("(not in the catalog)" if v is None else str(v) for v in values)
    return Clusters(labels, tuple(series), group, f"share of the {what} (k = {k})")
