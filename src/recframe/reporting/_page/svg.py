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
import re
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
#: the widest figure, in its units: A4 prints the page 718 px wide, where FONT text of a figure this
#: wide prints at 7.2 pt (a wider one is scaled down, its text below 7 pt); legends move below, labels wrap
MAX_WIDTH = 900.0
#: the pitch of a wrapped label's lines
LEADING = 14.0
#: where a long label breaks, best first: after a key's " / ", a model's ": " or a list's ", ", then
#: at a space, then after a hyphen or an underscore (else anywhere)
BREAKS = ((" / ", ": ", ", "), (" ",), ("-", "_"))
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


def text_width(text: str, size: float = FONT, *, bold: bool = False) -> float:
    """`text`'s width, generously (bold: a fifth wider, as DejaVu Sans Bold)."""
    return len(text) * CHAR * size / FONT * (1.2 if bold else 1.0)


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


def wrap(label: str, room: float, max_lines: int = 3) -> list[str]:
    """`label` in at most `max_lines` lines, each at most `room` wide (at FONT), broken at the best
    place that fits (:data:`BREAKS`); a label longer than that ends its last line with "…"."""
    per_line = max(int(room / CHAR + 1e-9), 4)
    lines: list[str] = []
    rest = label
    while len(rest) > per_line and len(lines) < max_lines - 1:
        cut = _break(rest, per_line)
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if len(rest) > per_line:
        rest = rest[: per_line - 1].rstrip() + "…"
    return [*lines, rest]


def _break(words: str, per_line: int) -> int:
    """Where the first line of `words` (longer than `per_line` characters) ends."""
    for separators in BREAKS:
        ends = [found.end() for s in separators for found in re.finditer(re.escape(s), words)]
        # (not a line of a few characters, "x / ", that wastes a line)
        fits = [end for end in ends if min(per_line // 3, 16) <= len(words[:end].rstrip()) <= per_line]
        if fits:
            return max(fits)
    return per_line


def text_lines(x: float, y: float, lines: Sequence[str], anchor: str = "start") -> list[str]:
    """One label's `lines` (:func:`wrap`), LEADING apart, centred on the line of a one-line label at `y`."""
    first = y - (len(lines) - 1) * LEADING / 2
    return [text(x, first + i * LEADING, words, anchor) for i, words in enumerate(lines)]


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


def legend(x: float, y: float, entries: Sequence[tuple[str, str]], room: float | None = None) -> list[str]:
    """The (marker, label) entries from (x, y): in one column, or, given the `room` they may take
    across, in as many columns as fit (row by row, a label wrapped to the room). A marker is
    ``"line:<colour>"``, ``"box:<colour>"``, ``"dot:<colour>"``, ``"ring:<colour>"`` or a glyph
    ``"glyph:<colour>:<char>"``."""
    parts = []
    for (marker, _), (dx, dy, lines) in zip(entries, _legend_places(entries, room)[0]):
        cx, cy = x + dx, y + dy
        kind, colour_, *glyph = marker.split(":")
        if kind == "line":
            parts.append(line(cx, cy, cx + 18, cy, colour_, 2.2))
        elif kind == "box":
            parts.append(rect(cx + 3, cy - 6, 12, 12, colour_))
        elif kind in ("dot", "ring"):
            parts.append(circle(cx + 9, cy, 4.5, colour_, colour_ if kind == "dot" else "#fff"))
        else:
            parts.append(text(cx + 9, cy + 5, glyph[0], "middle", fill=colour_, size=14))
        parts += [text(cx + 24, cy + 4 + i * 18, words) for i, words in enumerate(lines)]
    return parts


def legend_width(entries: Sequence[tuple[str, str]]) -> float:
    return 30 + max((text_width(label) for _, label in entries), default=0.0)


def _legend_places(
    entries: Sequence[tuple[str, str]], room: float | None
) -> tuple[list[tuple[float, float, list[str]]], float, float]:
    """Each entry's offset and lines, and the legend's width and height (from its first entry's
    middle to below its last line): see :func:`legend`."""
    if room is None:
        return [(0.0, i * 18.0, [label]) for i, (_, label) in enumerate(entries)], legend_width(entries), 18.0 * len(entries)
    wrapped = [wrap(label, room - 30) for _, label in entries]
    column = 30 + max((text_width(words) for lines in wrapped for words in lines), default=0.0) + 16
    across = max(1, min(len(entries), int((room + 16) // column)))
    places: list[tuple[float, float, list[str]]] = []
    dy = 0.0
    for start in range(0, len(wrapped), across):
        row = wrapped[start : start + across]
        places += [(j * column, dy, lines) for j, lines in enumerate(row)]
        dy += 18.0 * max(len(lines) for lines in row)
    return places, across * column - 16, dy


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
    significant (better or worse), as the chart's data says. Within MAX_WIDTH: the legend at the
    right where it fits, else below; labels too long for the room wrapped over up to 3 lines."""
    rows, title, xlabel = chart.rows, chart.title, chart.xlabel
    entries = [(MARKS[kind], words) for kind, words in chart.legend]
    plot_width, right = 360.0, 24.0  # (right: room for a ▲ after an interval's end)
    # the title and the axis title, centred on the plot where they fit, else moved left, over the labels' column
    spill = max(text_width(title, bold=True), text_width(xlabel)) + 8 - plot_width - right
    widest = max((text_width(r.label) for r in rows), default=0.0)
    beside = max(widest + 16, spill) + plot_width + right + 4 + legend_width(entries) + 8 <= MAX_WIDTH
    labels = [[r.label] if beside else wrap(r.label, min(widest, MAX_WIDTH - plot_width - right - 16)) for r in rows]
    label_room = max((text_width(words) for lines in labels for words in lines), default=0.0) + 16
    heights = [max(20.0, LEADING * len(lines) + 6) for lines in labels]
    axes = Axes(max(label_room, spill), 34, plot_width, sum(heights) or 20.0,
                _limits([v for r in rows for v in (r.delta, r.lo, r.hi)], zero=True), [0, 1])  # fmt: skip
    parts = axes.frame("", "", "", y_ticks=False)
    parts.append(line(axes.x(0.0), axes.top, axes.x(0.0), axes.bottom, MUTED, 1.2))
    for words, y, bold in ((title, axes.top - 10, True), (xlabel, axes.bottom + 34, False)):
        half = text_width(words, bold=bold) / 2
        middle = max(8 + half, min(axes.left + plot_width / 2, axes.left + plot_width + right - half))
        parts.append(text(middle, y, words, "middle", bold=bold))
    y = axes.top
    for r, lines, height in zip(rows, labels, heights):
        y += height / 2
        parts += text_lines(axes.left - 8, y + 4, lines, "end") + _delta_marks(axes, r, y)
        y += height / 2
    if beside:
        legend_x = axes.left + axes.width + right + 4
        parts += legend(legend_x, axes.top + 8, entries)
        return document(legend_x + legend_width(entries) + 8, max(axes.bottom + 48, axes.top + 8 + 18 * len(entries)), parts)
    _, width, height = _legend_places(entries, MAX_WIDTH - 24)
    parts += legend(16, axes.bottom + 62, entries, MAX_WIDTH - 24)
    return document(max(axes.left + axes.width + right, 16 + width + 8), axes.bottom + 62 + height, parts)


def _delta_marks(axes: Axes, r: _charts.Delta, y: float) -> list[str]:
    """A row's point, its interval and its ▲/▼ (none without a delta)."""
    if not finite(r.delta):
        return []
    assert r.delta is not None
    parts = []
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
    return parts


def _colours(series: Sequence[_charts.Series | _charts.Bars], reference: str) -> list[str]:
    """Each series' colour: the palette in order, a reference series apart in `reference`."""
    found, count = [], 0
    for s in series:
        found.append(reference if s.reference else colour(count))
        count += not s.reference
    return found


def lines(chart: _charts.Lines) -> str:
    """Panels two side by side (more in rows below), one line per series (its band shaded), and one
    legend (the series' names of the first panel) at the right, or below where the right would pass
    MAX_WIDTH. (No log scale: the long tail is matplotlib's only.)"""
    panels, legend_title = chart.panels, chart.legend_title
    width, height, gap, row_gap = 300.0, 220.0, 78.0, 70.0
    parts: list[str] = []
    for i, panel in enumerate(panels):
        xs = _limits([x for s in panel.series for x, _ in s.points])
        ys = _limits([y for s in panel.series for _, y in s.points] + [v for s in panel.series for b in s.band or () for v in b],
                     zero=True)  # fmt: skip
        axes = Axes(LEFT + i % 2 * (width + gap), 30 + i // 2 * (height + row_gap), width, height, xs, ys)
        parts += axes.frame(panel.xlabel, panel.ylabel, panel.title) + _panel_lines(axes, panel.series)
    across, down = min(len(panels), 2), -(-len(panels) // 2)
    right, bottom = LEFT + across * (width + gap) - gap, 30 + down * (height + row_gap) - row_gap
    entries = [("line:" + c, s.name) for s, c in zip(panels[0].series, _colours(panels[0].series, INK))] if panels else []
    return _legend_aside(parts, right, entries, 40, bottom + 48, bottom + 62, legend_title)


def _panel_lines(axes: Axes, series: Sequence[_charts.Series]) -> list[str]:
    """A panel's lines, bands and dots."""
    parts = []
    for s, ink in zip(series, _colours(series, INK)):
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
    return parts


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
    return _legend_aside(parts, axes.left + axes.width, entries, axes.top + 10, axes.bottom + 48, axes.bottom + 62)


def bars(chart: _charts.Clusters) -> str:
    """Clustered bars: one cluster per category, one bar per series (a reference one in grey),
    with their intervals."""
    categories, series, xlabel, ylabel = chart.categories, chart.series, chart.xlabel, chart.ylabel
    inks = _colours(series, "#bfbfbf")
    values = [v for s in series for v in s.heights if v is not None]
    values += [v for s in series for pair in (s.intervals or []) for v in pair if v is not None]
    # as wide as the bars need, within MAX_WIDTH (narrower bars past that)
    plot_width = min(max(260.0, max(28.0, 14.0 * len(series) + 12) * len(categories)), MAX_WIDTH - LEFT - 16)
    cluster = plot_width / max(len(categories), 1)
    slanted = max((text_width(c) for c in categories), default=0) > cluster - 4
    room = max((text_width(c) for c in categories), default=0) * 0.72 + 18 if slanted else 22.0
    left = LEFT
    if slanted and categories:  # the first label, slanted at 40 degrees, starts cos(40) of its width left of its end
        left = max(LEFT, text_width(categories[0]) * 0.77 - cluster / 2 + 4)
        plot_width = min(plot_width, MAX_WIDTH - left - 16)
        cluster = plot_width / len(categories)
    axes = Axes(left, 14, plot_width, 200, [0, 1], _limits(values, zero=True))
    parts = axes.frame("", ylabel, "", x_ticks=False)
    # (a narrow cluster, of many categories within MAX_WIDTH: its bars take 60% of it, less than 1 unit apart)
    bar = max(min(cluster - 10, 40.0 * len(series)), cluster * 0.6) / max(len(series), 1)
    inset = min(1.0, bar * 0.15)
    for c, category in enumerate(categories):
        start = axes.left + (c + 0.5) * cluster - bar * len(series) / 2
        for j, s in enumerate(series):
            value = s.heights[c]
            if value is None or not finite(value):
                continue
            x = start + j * bar
            y0, y1 = axes.y(0), axes.y(value)
            parts.append(rect(x + inset, min(y0, y1), bar - 2 * inset, abs(y0 - y1), inks[j]))
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
    return _legend_aside(parts, axes.left + axes.width, entries, axes.top + 10, axes.bottom + room + 28, axes.bottom + room + 44)


def _legend_aside(parts: list[str], right: float, entries: Sequence[tuple[str, str]], top: float, bottom: float,
                  below: float, title: str = "") -> str:  # fmt: skip
    """The figure of the plots ending at `right` (their parts drawn down to `bottom`) with its legend
    (under its `title`, if any) at their right from `top`, or from `below` down where the right would
    pass MAX_WIDTH."""
    legend_x, width = right + 20, max(legend_width(entries), text_width(title, bold=True))
    head = [text(legend_x, top, title, bold=True)] if title else []
    top += 18 if title else 0
    if legend_x + width + 8 <= MAX_WIDTH:
        parts = parts + head + legend(legend_x, top, entries)
        return document(legend_x + width + 8, max(bottom, top + 18 * len(entries)), parts)
    if title:
        parts = parts + [text(LEFT, below, title, bold=True)]
        below += 20
    room = MAX_WIDTH - LEFT - 8
    _, width, height = _legend_places(entries, room)
    parts = parts + legend(LEFT, below, entries, room)
    return document(max(right + 16, LEFT + width + 8, LEFT + text_width(title, bold=True) + 8), below + height, parts)


def scatter(chart: _charts.Scatter) -> str:
    """Labelled points: (label, x, y)."""
    shown = [(label, x, y) for label, x, y in chart.points if finite(x) and finite(y)]
    axes = Axes(LEFT, 30, 420, 240, _limits([x for _, x, _ in shown]), _limits([y for _, _, y in shown]))
    parts = axes.frame(chart.xlabel, chart.ylabel, chart.title)
    right = axes.left + axes.width + 16
    for i, (label, x, y) in enumerate(shown):
        px, py = axes.x(x), axes.y(y)
        parts.append(circle(px, py, 5, colour(i), colour(i)))
        # a label at the point's right, or at its left where that would pass MAX_WIDTH
        if px + 16 + text_width(label) <= MAX_WIDTH or px - 8 - text_width(label) < 8:
            lines = wrap(label, MAX_WIDTH - px - 16)
            first = max(py - 6 - (len(lines) - 1) * LEADING, 14.0)  # (lines above the point, below the figure's top)
            parts += text_lines(px + 8, first + (len(lines) - 1) * LEADING / 2, lines)
            right = max(right, px + 16 + max(text_width(words) for words in lines))  # a label past the plot stays in view
        else:
            parts.append(text(px - 8, py - 6, label, "end"))
    return document(right, axes.bottom + 48, parts)
