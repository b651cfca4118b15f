"""The chart-data step (recframe.reporting._charts): each chart decided once as data, on small frames with
hand-checked values, and its two renderers (matplotlib in recframe.plot, SVG on the page) drawing
the same points and marks from it."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest

import recframe
from recframe.reporting import _charts
from recframe.reporting._page import figures

matplotlib = pytest.importorskip("matplotlib", reason="the matplotlib renderer needs matplotlib: pip install 'recframe[plot]'")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def svg_count(drawn: str, pattern: str) -> int:
    return len(re.findall(pattern, drawn))


# B's ndcg: significant and better; B's gini (lower is better) up and significant: worse; C's ndcg:
# its interval excludes 0 but Holm leaves it not significant; C's gini: no interval (too few pairs)
COMPARISON = pl.DataFrame({
    "segment": ["x", "x", "y", "y"], "baseline": ["A"] * 4, "model": ["B", "B", "C", "C"],
    "metric": ["ndcg@10", "gini@10", "ndcg@10", "gini@10"], "n_pairs": [40, 40, 40, 1],
    "baseline_mean": [0.4, 0.5, 0.4, 0.5], "model_mean": [0.6, 0.6, 0.45, 0.4], "delta": [0.2, 0.1, 0.05, -0.1], "delta_lo": [0.1, 0.02, 0.01, None], "delta_hi": [0.3, 0.18, 0.09, None], "rel_delta": [0.5, 0.2, 0.125, -0.2],
    "p_value": [0.001, 0.01, 0.02, None], "p_adjusted": [0.003, 0.03, 0.06, None], "significant": [True, True, False, False],
})  # fmt: skip


def test_the_comparison_is_decided_once_as_data():
    chart = _charts.comparison(COMPARISON)
    assert [r.label for r in chart.rows] == ["x / B: ndcg@10", "x / B: gini@10", "y / C: ndcg@10", "y / C: gini@10"]
    # filled: significant after the correction, as the mark (C's ndcg: its unadjusted interval excludes 0, hollow)
    assert [r.filled for r in chart.rows] == [True, True, False, False]
    assert [r.better for r in chart.rows] == [True, False, None, None]  # significant after the correction, by direction
    assert (chart.rows[3].lo, chart.rows[3].hi) == (None, None)
    assert chart.title == "difference from A" and "not adjusted" in chart.xlabel
    assert chart.legend == [("filled", "significant after correction"), ("hollow", "not significant after correction"),
                            ("better", "significantly better (after correction)"),
                            ("worse", "significantly worse (after correction)")]  # fmt: skip
    assert _charts.marks(COMPARISON) == [True, False, None, None]


def test_both_renderers_draw_the_comparisons_fill_and_marks_from_the_data():
    chart = _charts.comparison(COMPARISON)
    (ax,) = recframe.plot.compare(COMPARISON).axes
    filled_points = sum(len(c.lines[0].get_xdata()) for c in ax.containers if c.lines[0].get_markerfacecolor() != "white")
    daggers = [t for t in ax.texts if t.get_text() == "†"]
    drawn = figures.draw(chart)
    # the SVG: a circle per row and the legend's two; ▲ / ▼ per marked row and the legend's one each
    svg_filled = svg_count(drawn, r'<circle [^>]*fill="#1f77b4"') - 1
    svg_marks = svg_count(drawn, r">▲</text>") + svg_count(drawn, r">▼</text>") - 2
    assert filled_points == svg_filled == sum(r.filled for r in chart.rows) == 2
    assert len(daggers) == svg_marks == sum(r.better is not None for r in chart.rows) == 2
    assert ax.get_xlabel() == chart.xlabel and f">{chart.xlabel}</text>" in drawn


def test_the_page_tables_marks_read_the_figures_decision():
    from recframe.reporting._page import sections

    marked = recframe.report(COMPARISON, format="html")
    assert marked.partition("</table>")[0].count("<sup>†</sup>") == 2
    directed = sections._directed(marked, COMPARISON)
    assert directed.count(">▲</sup>") == 1 and directed.count(">▼</sup>") == 1 and "†" not in directed


CURVE = pl.DataFrame({
    "model": ["A", "A", "B", "B"], "k": [1, 2, 1, 2], "ndcg": [0.5, 0.6, 0.2, 0.3], "ndcg_lo": [0.4, 0.5, 0.1, 0.2],
    "ndcg_hi": [0.6, 0.7, 0.3, 0.4], "precision": [1.0, 0.5, 0.0, 0.5], "recall": [0.5, 0.5, 0.0, 0.5],
})  # fmt: skip


def test_curves_as_data_and_drawn_alike():
    chart = _charts.curves(CURVE, ["pr", "ndcg"])
    pr, ndcg = chart.panels
    assert (pr.title, pr.xlabel, pr.ylabel) == ("precision-recall", "recall", "precision")
    assert [s.points for s in pr.series] == [((0.5, 1.0), (0.5, 0.5)), ((0.0, 0.0), (0.5, 0.5))]
    assert [s.dots for s in pr.series] == [True, True] and pr.series[0].band is None
    assert (ndcg.title, [s.name for s in ndcg.series]) == ("ndcg by k", ["A", "B"])
    assert ndcg.series[1].band == ((0.1, 0.3), (0.2, 0.4)) and chart.legend_title == "model"
    fig = recframe.plot.curve(CURVE, ["pr", "ndcg"])
    drawn = figures.draw(chart)
    assert sum(len(a.get_lines()) for a in fig.axes) == svg_count(drawn, "<polyline") == 4
    assert sum(len(a.collections) for a in fig.axes) == svg_count(drawn, "<polygon") == 2  # the bands: ndcg only


def test_the_distribution_as_data_and_drawn_alike():
    per_user = pl.DataFrame({"model": ["A", "A", "B", "B", "B"], "rr@10": [0.5, 1.0, None, 1.0, float("nan")]})
    chart = _charts.distribution(per_user, "rr@10", "model", bins=2)
    assert chart.edges == (0.5, 0.75, 1.0) and chart.groups == (("A", (1, 1)), ("B", (0, 1)))
    assert (chart.xlabel, chart.ylabel, chart.title) == ("rr@10", "users", "per-user rr@10")
    (ax,) = recframe.plot.distribution(per_user, "rr@10", bins=2).axes
    drawn = figures.draw(chart)
    assert [p.get_label() for p in ax.patches] == [name for name, _ in chart.groups]
    assert len(ax.patches) == svg_count(drawn, "<polyline") == 2
    # the matplotlib steps reach the same counts: A's top edge at 1 in both bins, B's at 0 then 1
    heights = [sorted({round(y, 9) for _, y in p.get_path().vertices}) for p in ax.patches]
    assert heights == [[0.0, 1.0], [0.0, 1.0]]


def test_the_tradeoff_as_data_and_drawn_alike():
    summary = pl.DataFrame({"model": ["pop", "knn"], "n_users": [2, 2], "ndcg@10": [0.3, 0.25], "gini@10": [0.9, 0.4]})
    chart = _charts.tradeoff(summary, "gini@10", "ndcg@10")
    assert chart.points == (("pop", 0.9, 0.3), ("knn", 0.4, 0.25))
    assert (chart.xlabel, chart.ylabel) == ("gini@10 (lower is better)", "ndcg@10 (higher is better)")
    (ax,) = recframe.plot.tradeoff(summary, "gini@10", "ndcg@10").axes
    drawn = figures.draw(chart)
    assert [t.get_text() for t in ax.texts] == [name for name, _, _ in chart.points]
    assert svg_count(drawn, "<circle") == len(ax.collections[0].get_offsets()) == 2


def test_group_means_as_data_and_drawn_alike():
    per_user = pl.DataFrame({
        "model": ["A"] * 4 + ["B"] * 4, "segment": ["new", "new", "old", "old"] * 2,
        "ndcg@10": [0.2, 0.4, 0.6, 0.8, 0.1, 0.1, None, 0.5],
    })  # fmt: skip
    chart = _charts.groups(per_user, "segment", "ndcg@10", seed=0)
    assert chart.categories == ("new", "old") and [s.name for s in chart.series] == ["A", "B"]
    assert [[round(h, 6) for h in s.heights] for s in chart.series] == [[0.3, 0.7], [0.1, 0.5]]
    assert chart.series[1].intervals == ((0.1, 0.1), (None, None))  # all equal: the point; one value: no interval
    assert (chart.xlabel, chart.ylabel, chart.legend_title) == ("segment", "mean ndcg@10 (95% interval)", "model")
    (ax,) = recframe.plot.groups(per_user, "segment", "ndcg@10", seed=0).axes
    drawn = figures.draw(chart)
    bars = svg_count(drawn, r'<rect [^>]*fill="#(?!fff)[0-9a-f]{6}"') - len(chart.series)  # less the legend's boxes
    assert len(ax.patches) == bars == 4
    assert [round(p.get_height(), 6) for p in ax.patches] == [0.3, 0.7, 0.1, 0.5]


def test_the_exposure_as_data_and_drawn_alike():
    table = pl.DataFrame({
        "model": ["A", "A", "B"], "popularity": ["head", "tail", "head"], "n_items": [2.0, 8.0, 2.0],
        "relevant_share": [0.3, 0.7, 0.3], "exposure_share@10": [0.9, 0.1, 0.5],
    })  # fmt: skip
    chart = _charts.exposure(table)
    assert chart.categories == ("head", "tail") and chart.ylabel == "share of the exposure (k = 10)"
    assert [(s.name, s.heights, s.reference) for s in chart.series] == [
        ("relevant items", (0.3, 0.7), True), ("exposure: A", (0.9, 0.1), False), ("exposure: B", (0.5, None), False),
    ]  # fmt: skip
    (ax,) = recframe.plot.exposure(table).axes
    drawn = figures.draw(chart)
    drawn_bars = [p for p in ax.patches if not math.isnan(p.get_height())]
    assert len(drawn_bars) == svg_count(drawn, r"<rect ") - 1 - len(chart.series) == 5  # less the frame and the legend
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [s.name for s in chart.series]
    assert svg_count(drawn, r'fill="#bfbfbf"') == 3  # the reference: two bars and its legend box


def test_the_long_tail_as_data_and_drawn():
    train = pl.DataFrame({"user_id": [1, 2, 3, 3], "item_id": ["a", "a", "a", "b"]})
    recs = pl.DataFrame({"model": ["pop", "pop", "tail", "tail"], "user_id": [1, 2, 1, 2], "item_id": ["a", "a", "b", "c"],
                         "rank": [1, 1, 1, 1]})  # fmt: skip
    (panel,) = _charts.long_tail(recs, train, 1, "model", "user_id", "item_id", "rank", None).panels
    # training: a (3 users) then b (1); pop shows a twice; tail b, then c (cold: last, place 3)
    assert [(s.name, s.reference) for s in panel.series] == [("training", True), ("pop", False), ("tail", False)]
    assert panel.series[0].points == ((1, 0.75), (2, 1.0))
    assert panel.series[2].points == ((2, 0.5), (3, 1.0)) and panel.log_x
    (ax,) = recframe.plot.long_tail(recs, train, k=1).axes
    assert [list(line.get_xydata().tolist()) for line in ax.get_lines()] == [[list(p) for p in s.points] for s in panel.series]
    assert ax.get_lines()[0].get_linestyle() == "--" and ax.get_xscale() == "log"
