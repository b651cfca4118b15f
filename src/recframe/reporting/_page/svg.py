"""The page's figures as SVG written by hand: dot-and-interval rows, lines, step histograms,
clustered bars and labelled points, each with its axes, ticks and legend.

Why not matplotlib: it took 0.25-0.5 s a figure (text laid out as paths, ``tight_layout``),
most of the page's cost, and needed the ``plot`` extra; these take milliseconds, need nothing,
and draw text as text (selectable, sharp in print). :mod:`recframe.plot` stays matplotlib's, for
notebooks. Sizes are in the figure's own units (its viewBox); the page scales it to its box.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from recframe.reporting import _charts

#: matplotlib's ten default colours, so that the page's models look as recframe.plot draws them
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
FONT = 12
#: a generous estimate of a character's width at FONT (sans-serif), to make room for labels
CHAR = 7.2
#: the room left of a plot for its ticks' labels and its axis title
LEFT = 72.0
INK, MUTED, GRID = "#1f2328", "#57606a", "#e6e9ed"
BETTER_COLOUR, WORSE_COLOUR = "#1a7f37", "#cf222e"


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(value: float) -> str:
    """A coordinate, short: two decimals."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def text_width(text: str, size: float = FONT) -> float:
    return len(text) * CHAR * size / FONT


def ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round values from at most `lo` to at least `hi`, about `count` steps apart (1, 2, 2.5, 5
    times a power of ten)."""
    if not (finite(lo) and finite(hi)):
        lo, hi = 0.0, 1.0
    if hi - lo < 1e-12:
        pad = abs(lo) * 0.1 or 0.5
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    first = math.floor(lo / step + 1e-9) * step
    values = [first]
    while values[-1] < hi - 1e-9 * step:
        values.append(first + len(values) * step)
    return [round(v, 12) for v in values]


def tick_text(value: float, values: Sequence[float]) -> str:
    """A tick's label with as many decimals as the step needs."""
    step = abs(values[1] - values[0]) if len(values) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    scaled = step * 10**decimals % 1
    if min(scaled, 1 - scaled) > 1e-6:  # 2.5 steps
        decimals += 1
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def text(x: float, y: float, words: str, anchor: str = "start", *, size: float = FONT, fill: str = INK,
         bold: bool = False, rotate: float | None = None) -> str:  # fmt: skip
    extra = (' font-weight="bold"' if bold else "") + (f' transform="rotate({_n(rotate)} {_n(x)} {_n(y)})"' if rotate else "")
    size_attr = f' font-size="{_n(size)}"' if size != FONT else ""
    return f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" fill="{fill}"{size_attr}{extra}>{_e(words)}</text>'


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = INK, width: float = 1.0, dash: str | None = None) -> str:
    style = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}" stroke-width="{_n(width)}"{style}/>'


def circle(x: float, y: float, r: float, stroke: str, fill: str) -> str:
    return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" stroke="{stroke}" stroke-width="1.5" fill="{fill}"/>'


def rect(x: float, y: float, w: float, h: float, fill: str) -> str:
    return f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0.0))}" height="{_n(max(h, 0.0))}" fill="{fill}"/>'


def polyline(points: Sequence[tuple[float, float]], stroke: str, width: float = 1.8) -> str:
    drawn = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
    return f'<polyline points="{drawn}" fill="none" stroke="{stroke}" stroke-width="{_n(width)}" stroke-linejoin="round"/>'


def document(width: float, height: float, parts: Sequence[str]) -> str:
    """The ``<svg>`` element: its own coordinates, scaled by the page to its box."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_n(width)} {_n(height)}" width="{_n(width)}" '
        f'height="{_n(height)}" font-family="system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif" '
        f'font-size="{FONT}">' + "".join(parts) + "</svg>"
    )


@dataclass(frozen=True)
class Axes:
    """A plotting area (left, top, width, height, in the figure's units) and its data limits."""

    left: float
    top: float
    width: float
    height: float
    xs: Sequence[float]  # the x ticks: their first and last are the limits
    ys: Sequence[float]

    def x(self, value: float) -> float:
        lo, hi = self.xs[0], self.xs[-1]
        return self.left + (value - lo) / (hi - lo) * self.width

    def y(self, value: float) -> float:
        lo, hi = self.ys[0], self.ys[-1]
        return self.top + self.height - (value - lo) / (hi - lo) * self.height

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def frame(self, xlabel: str, ylabel: str, title: str, *, x_ticks: bool = True, y_ticks: bool = True) -> list[str]:
        """The grid, the ticks' labels, the axis titles and the figure's title."""
        parts = []
        if y_ticks:
            for v in self.ys:
                y = self.y(v)
                parts += [line(self.left, y, self.left + self.width, y, GRID),
                          text(self.left - 6, y + 4, tick_text(v, self.ys), "end", fill=MUTED)]  # fmt: skip
        if x_ticks:
            for v in self.xs:
                x = self.x(v)
                parts += [line(x, self.top, x, self.bottom, GRID),
                          text(x, self.bottom + 16, tick_text(v, self.xs), "middle", fill=MUTED)]  # fmt: skip
        parts.append(f'<rect x="{_n(self.left)}" y="{_n(self.top)}" width="{_n(self.width)}" height="{_n(self.height)}" '
                     f'fill="none" stroke="{MUTED}" stroke-width="1"/>')  # fmt: skip
        if xlabel:
            parts.append(text(self.left + self.width / 2, self.bottom + 34, xlabel, "middle"))
        if ylabel:
            widest = max((text_width(tick_text(v, self.ys)) for v in self.ys), default=0.0) if y_ticks else 0.0
            parts.append(text(self.left - widest - 16, self.top + self.height / 2, ylabel, "middle", rotate=-90))
        if title:
            parts.append(text(self.left + self.width / 2, self.top - 10, title, "middle", bold=True))
        return parts


def legend(x: float, y: float, entries: Sequence[tuple[str, str]]) -> list[str]:
    """A column of (marker, label) entries from (x, y): a marker is ``"line:<colour>"``,
    ``"box:<colour>"``, ``"dot:<colour>"``, ``"ring:<colour>"`` or a glyph ``"glyph:<colour>:<char>"``."""
    parts = []
    for i, (marker, label) in enumerate(entries):
        cy = y + i * 18
        kind, colour_, *glyph = marker.split(":")
        if kind == "line":
            parts.append(line(x, cy, x + 18, cy, colour_, 2.2))
        elif kind == "box":
            parts.append(rect(x + 3, cy - 6, 12, 12, colour_))
        elif kind in ("dot", "ring"):
            parts.append(circle(x + 9, cy, 4.5, colour_, colour_ if kind == "dot" else "#fff"))
        else:
            parts.append(text(x + 9, cy + 5, glyph[0], "middle", fill=colour_, size=14))
        parts.append(text(x + 24, cy + 4, label))
    return parts


def legend_width(entries: Sequence[tuple[str, str]]) -> float:
    return 30 + max((text_width(label) for _, label in entries), default=0.0)


def _limits(values: Sequence[float | None], *, zero: bool = False) -> list[float]:
    got = [float(v) for v in values if v is not None and finite(v)]
    lo, hi = (min(got), max(got)) if got else (0.0, 1.0)
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return ticks(lo, hi)


# ---------------------------------------------------------------------------- the charts


#: how each mark of the comparison is drawn (its meaning: :mod:`recframe.reporting._charts`)
MARKS = {"filled": "dot:" + PALETTE[0], "hollow": "ring:" + PALETTE[0], "better": f"glyph:{BETTER_COLOUR}:▲",
         "worse": f"glyph:{WORSE_COLOUR}:▼"}  # fmt: skip


def deltas(chart: _charts.Comparison) -> str:
    """One row per delta: a point with its interval, filled or hollow, and ▲/▼ after it where
    significant (better or worse), as the chart's data says."""
    rows, title, xlabel = chart.rows, chart.title, chart.xlabel
    label_room = max((text_width(r.label) for r in rows), default=0.0) + 16
    entries = [(MARKS[kind], words) for kind, words in chart.legend]
    row_height, plot_width = 20.0, 360.0
    axes = Axes(label_room, 34, plot_width, row_height * max(len(rows), 1),
                _limits([v for r in rows for v in (r.delta, r.lo, r.hi)], zero=True), [0, 1])  # fmt: skip
    parts = axes.frame(xlabel, "", title, y_ticks=False)
    parts.append(line(axes.x(0.0), axes.top, axes.x(0.0), axes.bottom, MUTED, 1.2))
    for i, r in enumerate(rows):
        y = axes.top + (i + 0.5) * row_height
        parts.append(text(axes.left - 8, y + 4, r.label, "end"))
        if not finite(r.delta):
            continue
        assert r.delta is not None
        has_interval = finite(r.lo) and finite(r.hi)
        if has_interval:
            assert r.lo is not None and r.hi is not None
            x1, x2 = axes.x(r.lo), axes.x(r.hi)
            parts += [line(x1, y, x2, y, PALETTE[0], 1.4), line(x1, y - 4, x1, y + 4, PALETTE[0], 1.4),
                      line(x2, y - 4, x2, y + 4, PALETTE[0], 1.4)]  # fmt: skip
        parts.append(circle(axes.x(r.delta), y, 4.5, PALETTE[0], PALETTE[0] if r.filled else "#fff"))
        if r.better is not None:
            end = axes.x(r.hi if has_interval and r.hi is not None else r.delta) + 12
            glyph, fill = ("▲", BETTER_COLOUR) if r.better else ("▼", WORSE_COLOUR)
            parts.append(text(end, y + 5, glyph, "middle", fill=fill, size=13))
    legend_x = axes.left + axes.width + 28
    parts += legend(legend_x, axes.top + 8, entries)
    width = legend_x + legend_width(entries) + 8
    return document(width, axes.bottom + 48, parts)


def _colours(series: Sequence[_charts.Series | _charts.Bars], reference: str) -> list[str]:
    """Each series' colour: the palette in order, a reference series apart in `reference`."""
    found, count = [], 0
    for s in series:
        found.append(reference if s.reference else colour(count))
        count += not s.reference
    return found


def lines(chart: _charts.Lines) -> str:
    """Panels side by side, one line per series (its band shaded), and one legend (the series'
    names of the first panel) at the right. (No log scale: the long tail is matplotlib's only.)"""
    panels, legend_title = chart.panels, chart.legend_title
    width, height, gap = 300.0, 220.0, 78.0
    parts: list[str] = []
    left = LEFT
    for panel in panels:
        xs = _limits([x for s in panel.series for x, _ in s.points])
        ys = _limits([y for s in panel.series for _, y in s.points] + [v for s in panel.series for b in s.band or () for v in b],
                     zero=True)  # fmt: skip
        axes = Axes(left, 30, width, height, xs, ys)
        parts += axes.frame(panel.xlabel, panel.ylabel, panel.title)
        for s, ink in zip(panel.series, _colours(panel.series, INK)):
            if s.band is not None:  # the interval's band: along its highs, back along its lows
                kept = [(x, lo, hi) for (x, _), (lo, hi) in zip(s.points, s.band) if finite(x) and finite(lo) and finite(hi)]
                outline = [(axes.x(x), axes.y(hi)) for x, _, hi in kept] + [(axes.x(x), axes.y(lo)) for x, lo, _ in kept[::-1]]
                drawn_band = " ".join(f"{_n(x)},{_n(y)}" for x, y in outline)
                parts.append(f'<polygon points="{drawn_band}" fill="{ink}" fill-opacity="0.2"/>')
            drawn = [(axes.x(x), axes.y(y)) for x, y in s.points if finite(x) and finite(y)]
            if drawn:
                parts.append(polyline(drawn, ink))
            if s.dots:
                parts += [circle(x, y, 2.4, ink, ink) for x, y in drawn]
        left += width + gap
    entries = [("line:" + c, s.name) for s, c in zip(panels[0].series, _colours(panels[0].series, INK))] if panels else []
    legend_x = left - gap + 20
    if legend_title:
        parts.append(text(legend_x, 40, legend_title, bold=True))
    parts += legend(legend_x, 58 if legend_title else 40, entries)
    return document(legend_x + legend_width(entries) + 8, 30 + height + 48, parts)


def histogram(chart: _charts.Histogram) -> str:
    """Step histograms over shared bins (`edges`), one per group, overlaid."""
    edges, groups = chart.edges, chart.groups
    top = max((c for _, counts in groups for c in counts), default=1)
    axes = Axes(LEFT, 30, 560, 220, ticks(edges[0], edges[-1]) if edges else [0, 1], ticks(0, max(top, 1)))
    parts = axes.frame(chart.xlabel, chart.ylabel, chart.title)
    entries = []
    for i, (name, counts) in enumerate(groups):
        points: list[tuple[float, float]] = [(axes.x(edges[0]), axes.y(0))]
        for j, c in enumerate(counts):
            points += [(axes.x(edges[j]), axes.y(c)), (axes.x(edges[j + 1]), axes.y(c))]
        points.append((axes.x(edges[-1]), axes.y(0)))
        parts.append(polyline(points, colour(i), 1.6))
        entries.append(("line:" + colour(i), name))
    legend_x = axes.left + axes.width + 20
    parts += legend(legend_x, 40, entries)
    return document(legend_x + legend_width(entries) + 8, axes.bottom + 48, parts)


def bars(chart: _charts.Clusters, title: str = "") -> str:
    """Clustered bars: one cluster per category, one bar per series (a reference one in grey),
    with their intervals."""
    categories, series, xlabel, ylabel = chart.categories, chart.series, chart.xlabel, chart.ylabel
    inks = _colours(series, "#bfbfbf")
    values = [v for s in series for v in s.heights if v is not None]
    values += [v for s in series for pair in (s.intervals or []) for v in pair if v is not None]
    plot_width = max(260.0, max(28.0, 14.0 * len(series) + 12) * len(categories))
    cluster = plot_width / max(len(categories), 1)
    slanted = max((text_width(c) for c in categories), default=0) > cluster - 4
    room = max((text_width(c) for c in categories), default=0) * 0.72 + 18 if slanted else 22.0
    axes = Axes(LEFT, 30 if title else 14, plot_width, 200, [0, 1], _limits(values, zero=True))
    parts = axes.frame("", ylabel, title, x_ticks=False)
    bar = min(cluster - 10, 40.0 * len(series)) / max(len(series), 1)
    for c, category in enumerate(categories):
        start = axes.left + (c + 0.5) * cluster - bar * len(series) / 2
        for j, s in enumerate(series):
            value = s.heights[c]
            if value is None or not finite(value):
                continue
            x = start + j * bar
            y0, y1 = axes.y(0), axes.y(value)
            parts.append(rect(x + 1, min(y0, y1), bar - 2, abs(y0 - y1), inks[j]))
            if s.intervals is not None:
                lo, hi = s.intervals[c]
                if lo is not None and hi is not None and finite(lo) and finite(hi):
                    mid = x + bar / 2
                    parts += [line(mid, axes.y(lo), mid, axes.y(hi), INK, 1.2), line(mid - 3, axes.y(lo), mid + 3, axes.y(lo), INK),
                              line(mid - 3, axes.y(hi), mid + 3, axes.y(hi), INK)]  # fmt: skip
        middle = axes.left + (c + 0.5) * cluster
        if slanted:
            parts.append(text(middle + 4, axes.bottom + 12, category, "end", rotate=-40))
        else:
            parts.append(text(middle, axes.bottom + 16, category, "middle"))
    if xlabel:
        parts.append(text(axes.left + axes.width / 2, axes.bottom + room + 16, xlabel, "middle"))
    entries = [("box:" + ink, s.name) for s, ink in zip(series, inks)]
    legend_x = axes.left + axes.width + 20
    parts += legend(legend_x, axes.top + 10, entries)
    return document(legend_x + legend_width(entries) + 8, axes.bottom + room + 28, parts)


def scatter(chart: _charts.Scatter) -> str:
    """Labelled points: (label, x, y)."""
    shown = [(label, x, y) for label, x, y in chart.points if finite(x) and finite(y)]
    axes = Axes(LEFT, 30, 420, 240, _limits([x for _, x, _ in shown]), _limits([y for _, _, y in shown]))
    parts = axes.frame(chart.xlabel, chart.ylabel, chart.title)
    right = axes.left + axes.width + 16
    for i, (label, x, y) in enumerate(shown):
        parts += [circle(axes.x(x), axes.y(y), 5, colour(i), colour(i)), text(axes.x(x) + 8, axes.y(y) - 6, label)]
        right = max(right, axes.x(x) + 8 + text_width(label) + 8)  # a label past the plot's edge stays in view
    return document(right, axes.bottom + 48, parts)
