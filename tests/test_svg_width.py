"""The page's figures fit A4 at 7 pt whatever the names: no drawer's SVG is wider than 920 units
(A4 prints the page 718 px wide: FONT-unit text of a wider figure prints below 7 pt), long labels
wrap, legends move below the plot, and no two of a figure's words are drawn over each other."""

from __future__ import annotations

import html
import re

import polars as pl
import pytest

from recframe.reporting import _charts
from recframe.reporting._page import figures, svg

#: the widest a figure may be for its 12-unit text to print at 7 pt on A4
A4_LIMIT = 920.0

NAMES = [f"model-{i}-" + "x" * 52 for i in range(6)]  # six names of 60 characters
NAMES[1] = "a model name of sixty characters with spaces between words!!"
NAMES[2] = "model_name_of_sixty_characters_with_underscores_only_abcdefg"
assert all(len(name) == 60 for name in NAMES)


def view_box(drawn: str) -> tuple[float, float]:
    found = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', drawn)
    assert found is not None
    return float(found.group(1)), float(found.group(2))


def words(drawn: str) -> list[tuple[float, float, float, float, str]]:
    """Each unrotated ``<text>``'s box, estimated as the layout does (CHAR a character at FONT)."""
    boxes = []
    for attrs, body in re.findall(r"<text ([^>]*)>([^<]*)</text>", drawn):
        if "rotate(" in attrs:
            continue
        got = dict(re.findall(r'([a-z-]+)="([^"]*)"', attrs))
        x, y, size, content = float(got["x"]), float(got["y"]), float(got.get("font-size", svg.FONT)), html.unescape(body)
        width = svg.text_width(content, size, bold=got.get("font-weight") == "bold")
        left = {"start": x, "middle": x - width / 2, "end": x - width}[got["text-anchor"]]
        boxes.append((left, y - 0.75 * size, left + width, y + 0.2 * size, content))
    return boxes


def overlapping(drawn: str) -> list[tuple[str, str]]:
    boxes = words(drawn)
    return [
        (a[4], b[4])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1
    ]


def outside(drawn: str) -> list[str]:
    width, height = view_box(drawn)
    return [w[4] for w in words(drawn) if w[0] < -0.5 or w[2] > width + 0.5 or w[1] < -0.5 or w[3] > height + 0.5]


def comparison(names: list[str]) -> _charts.Comparison:
    """Three models against a baseline, four segments, two folds, two metrics: 48 rows."""
    rows = [
        {"fold": f"week {w}", "segment": f"segment-{s}", "baseline": names[0], "model": m, "metric": metric,
         "delta": 0.1 * (i % 3 - 1), "delta_lo": 0.1 * (i % 3 - 1) - 0.05, "delta_hi": 0.1 * (i % 3 - 1) + 0.05,
         "significant": i % 2 == 0}
        for i, (w, s, m, metric) in enumerate(
            (w, s, m, metric) for w in (1, 2) for s in range(4) for m in names[1:4] for metric in ("ndcg@10", "recall@10")
        )
    ]  # fmt: skip
    return _charts.comparison(pl.DataFrame(rows))


def curves(names: list[str], panels: int = 3) -> _charts.Lines:
    series = tuple(
        _charts.Series(name, tuple((k, 0.1 * i + 0.01 * k) for k in range(1, 11)), band=tuple((0.0, 1.0) for _ in range(10)))
        for i, name in enumerate(names)
    )
    titled = [("precision-recall", "recall", "precision"), ("ndcg by k", "k", "ndcg"), ("recall by k", "k", "recall")]
    return _charts.Lines(tuple(_charts.Panel(*titled[i % 3], series) for i in range(panels)), "model")


def charts(names: list[str]) -> dict[str, figures.Chart]:
    """One chart per drawer, with `names` for its models, groups and categories."""
    edges = tuple(i / 20 for i in range(21))
    points = tuple((f"{n}, segment-{i}", 0.1 * i, 0.1 * i) for i, n in enumerate(names))
    shares = tuple(_charts.Bars(f"exposure: recommended {n}", tuple(0.1 for _ in names)) for n in names)
    many = tuple(_charts.Bars(n, tuple(0.02 for _ in range(40))) for n in names)
    return {
        "deltas": comparison(names),
        "lines": curves(names),
        "lines, one panel": curves(names, 1),
        "histogram": _charts.Histogram(edges, tuple((n, tuple(range(20))) for n in names), "x", "users", "per-user x"),
        "scatter": _charts.Scatter(points, "novelty@10", "ndcg@10", "ndcg@10 against novelty@10"),
        "bars": _charts.Clusters(tuple(names), shares, "category", "share"),
        "bars, many categories": _charts.Clusters(tuple(f"category {i}" for i in range(40)), many, "category", "share"),
    }


@pytest.mark.parametrize("kind", list(charts(NAMES)))
def test_no_figure_is_wider_than_a4_prints_at_7_pt_whatever_the_names(kind):
    """Names of 60 characters and six series: every drawer stays within 920 units, every word
    inside its figure and none over another."""
    drawn = figures.draw(charts(NAMES)[kind])
    width, _ = view_box(drawn)
    assert width <= svg.MAX_WIDTH <= A4_LIMIT
    assert outside(drawn) == []
    assert overlapping(drawn) == []


@pytest.mark.parametrize("kind", list(charts(NAMES)))
def test_short_names_keep_the_legend_at_the_right(kind):
    """Where it fits, the legend stays at the plot's right (every word at the height of the plot)."""
    chart = charts(["A", "B", "C"])[kind]
    drawn = figures.draw(chart)
    assert overlapping(drawn) == [] and outside(drawn) == []
    if kind.startswith(("histogram", "lines")):
        _, height = view_box(drawn)
        legend = [w for w in words(drawn) if w[4] in ("A", "B", "C")]
        assert len(legend) == 3 and all(w[3] < height - 40 for w in legend)


def test_the_comparison_wraps_its_long_labels_and_keeps_every_word():
    chart = comparison(NAMES)
    drawn = figures.draw(chart)
    shown = [w[4] for w in words(drawn)]
    label = chart.rows[0].label  # "week 1, segment-0 / <60 characters>: ndcg@10"
    assert label not in shown and "week 1, segment-0 /" in shown  # wrapped: each line a text of its own
    lines = svg.wrap(label, 400)
    assert lines[0] == "week 1, segment-0 /" and lines[-1].endswith(": ndcg@10") and len(lines) <= 3
    # every row's every character, in order (a label breaks at a space, or after a hyphen or underscore)
    flat = "".join(shown).replace(" ", "")
    assert all(row.label.replace(" ", "") in flat for row in chart.rows)
    # the legend moved below the plot, under its axis title
    legend = next(w for w in words(drawn) if w[4] == _charts.FILLED)
    assert legend[1] > next(w for w in words(drawn) if w[4] == chart.xlabel)[3]


def test_wrap_breaks_at_keys_models_then_spaces_in_at_most_three_lines():
    assert svg.wrap("short: ndcg@10", 400) == ["short: ndcg@10"]
    assert svg.wrap("cold, A / a-long-model-name: ndcg@10", 20 * svg.CHAR) == ["cold, A /", "a-long-model-name:", "ndcg@10"]
    assert svg.wrap("one two three four five six", 10 * svg.CHAR) == ["one two", "three four", "five six"]
    assert svg.wrap("x" * 25, 10 * svg.CHAR) == ["x" * 10, "x" * 10, "x" * 5]
    # past three lines, the last says that it is cut
    cut = svg.wrap("x" * 40, 10 * svg.CHAR)
    assert len(cut) == 3 and cut[-1] == "x" * 9 + "…"
    for room in (60.0, 150.0, 400.0):
        assert all(svg.text_width(line) <= room for line in svg.wrap(NAMES[1] + " / " + NAMES[2] + ": ndcg@10", room))


def test_curves_go_two_panels_across_and_more_below():
    drawn = figures.draw(curves(["A", "B"], 3))
    titles = {w[4]: w for w in words(drawn) if w[4] in ("precision-recall", "ndcg by k", "recall by k")}
    assert titles["precision-recall"][1] == titles["ndcg by k"][1] < titles["recall by k"][1]
    assert view_box(drawn)[0] <= svg.MAX_WIDTH and drawn.count("<polyline") == 6


def test_bars_narrowed_to_the_width_still_draw_every_bar():
    """40 categories of six bars within MAX_WIDTH: each of the 240 bars is drawn, narrower."""
    drawn = figures.draw(charts(NAMES)["bars, many categories"])
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="[\d.]+" fill="#', drawn)]
    assert len(widths) == 240 + 6  # and the legend's six boxes
    assert min(widths) >= 1.0
