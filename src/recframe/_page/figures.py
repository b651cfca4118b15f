"""The page's figures: each reads the frames a section shows and draws them as inline SVG with
:mod:`recframe._page.svg` (no matplotlib: a figure takes milliseconds, and the page has its
figures without the ``plot`` extra). They draw what :mod:`recframe.plot` draws for the same
frames, so that a notebook and the page look alike."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from recframe import _tables, plot
from recframe._page import svg
from recframe._page.html import escape


def figure(caption: str, drawn: str) -> str:
    """An SVG as a ``<figure>`` with `caption` (also its accessible name)."""
    drawn = drawn.replace("<svg ", f'<svg role="img" aria-label="{escape(caption)}" ', 1)
    return f"<figure>{drawn}<figcaption>{escape(caption)}</figcaption></figure>\n"


def compare(frame: pl.DataFrame, directions: dict[int, bool]) -> str:
    """recframe.compare's rows: each delta with its interval; `directions` maps a row's index to
    True (significantly better) or False (worse), by the metric's direction."""
    strata = frame.columns[: frame.columns.index("baseline")]
    rows = []
    for i, row in enumerate(frame.iter_rows(named=True)):
        lead = ", ".join(str(row[c]) for c in strata) + " / " if strata else ""
        mark = "" if i not in directions else "better" if directions[i] else "worse"
        rows.append(svg.Delta(f"{lead}{row['model']}: {row['metric']}", row["delta"], row["delta_lo"], row["delta_hi"], mark))
    baselines = frame.get_column("baseline").unique().to_list()
    title = f"difference from {baselines[0]}" if len(baselines) == 1 else "difference from the baseline"
    return svg.deltas(rows, title, "delta (model − baseline)")


def curves(frame: pl.DataFrame, keys: list[str], metrics: list[str]) -> str:
    """recframe.curve's frame: precision against recall, and each metric of `metrics` against k;
    one line per group of `keys`."""
    groups = frame.sort([*keys, "k"]).partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): frame.sort("k")}
    panels = []
    for name in ["pr", *metrics]:
        x, y = ("recall", "precision") if name == "pr" else ("k", name)
        series = [
            svg.Series(
                plot.key_label(key) if keys else y, list(zip(g[x].to_list(), g[y].to_list())), svg.colour(i), dots=name == "pr"
            )
            for i, (key, g) in enumerate(groups.items())
        ]
        panels.append(svg.Panel("precision-recall" if name == "pr" else f"{name} by k", x, y, series))
    return svg.lines(panels, ", ".join(keys))


def distribution(per_user: pl.DataFrame, metric: str, by: str | None, bins: int = 20) -> str:
    """A step histogram of the users' values of `metric` per value of `by`, over shared bins."""
    # at 12 digits: a value on a bin's edge stays in one bin whatever the order its sums ran in
    values = per_user.filter(pl.col(metric).is_not_null() & pl.col(metric).is_not_nan()).with_columns(
        pl.col(metric).cast(pl.Float64).round(12)
    )
    everything = values.get_column(metric).to_numpy()
    edges = np.histogram_bin_edges(everything, bins=bins) if everything.size else np.linspace(0, 1, bins + 1)
    parts = values.sort(by).partition_by(by, as_dict=True, maintain_order=True) if by else {(metric,): values}
    groups = [
        (plot.key_label(key[0]), np.histogram(part.get_column(metric).to_numpy(), bins=edges)[0].tolist())
        for key, part in parts.items()
    ]
    return svg.histogram(edges.tolist(), groups, metric, f"per-user {metric}")


def groups(per_user: pl.DataFrame, key: str, metric: str, by: str | None, seed: Any, n_resamples: int) -> str:
    """Each group of `key`'s mean of `metric` per model, with its bootstrap interval (the
    numbers of recframe.plot.groups)."""
    values, models, cells = plot.group_means(per_user, key, metric, by=by, seed=seed, n_resamples=n_resamples)
    series = [
        svg.Bars(
            "all" if model is None else str(model),
            [None if np.isnan(mean) else mean for mean, _, _ in cells[j]],
            svg.colour(j),
            [(None if np.isnan(lo) else lo, None if np.isnan(hi) else hi) for _, lo, hi in cells[j]],
        )
        for j, model in enumerate(models)
    ]
    return svg.bars([str(v) for v in values], series, key, f"mean {metric} (95% interval)")


def tradeoff(summary: pl.DataFrame, keys: list[str], x: str, y: str) -> str:
    """One point per group of `keys`: `y` against `x`, each axis saying which way is better."""
    points = [(", ".join(str(row[k]) for k in keys) if keys else "all", row[x], row[y]) for row in summary.iter_rows(named=True)]

    def said(column: str) -> str:
        return f"{column} ({'higher' if _tables.higher_is_better(column) else 'lower'} is better)"

    return svg.scatter(points, said(x), said(y), f"{y} against {x}")


def exposure(frame: pl.DataFrame, k: int, by: str | None) -> str:
    """recframe.item_groups' frame: per item group, its share of the relevant items (grey), then
    each model's share of the exposure within k."""
    group = frame.columns[frame.columns.index("n_items") - 1]  # the item-group column: just before n_items
    values = frame.get_column(group).unique(maintain_order=True).to_list()
    models = frame.get_column(by).unique(maintain_order=True).to_list() if by is not None else [None]

    def heights(part: pl.DataFrame, column: str) -> list[float | None]:
        got = dict(zip(part.get_column(group).to_list(), part.get_column(column).to_list()))
        return [got.get(v) for v in values]

    first = frame if by is None else frame.filter(pl.col(by) == models[0])
    series = [svg.Bars("relevant items", heights(first, "relevant_share"), "#bfbfbf")]
    for j, model in enumerate(models):
        part = frame if by is None else frame.filter(pl.col(by) == model)
        name = f"exposure: {'recommended' if model is None else plot.key_label(model)}"
        series.append(svg.Bars(name, heights(part, f"exposure_share@{k}"), svg.colour(j)))
    labels = ["(not in the catalog)" if v is None else str(v) for v in values]
    return svg.bars(labels, series, group, f"share of the exposure (k = {k})")
