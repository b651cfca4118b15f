"""The page's figures: the charts' data (:mod:`recframe.reporting._charts`, the same data
:mod:`recframe.plot` draws with matplotlib) drawn as inline SVG by :mod:`recframe.reporting._page.svg`
(no matplotlib: a figure takes milliseconds, and the page has its figures without the ``plot``
extra)."""

from __future__ import annotations

from recframe.reporting import _charts
from recframe.reporting._page import svg
from recframe.reporting._page.html import escape

Chart = _charts.Comparison | _charts.Lines | _charts.Histogram | _charts.Scatter | _charts.Clusters


def draw(chart: Chart) -> str:
    """The chart as an ``<svg>``."""
    if isinstance(chart, _charts.Comparison):
        return svg.deltas(chart)
    if isinstance(chart, _charts.Lines):
        return svg.lines(chart)
    if isinstance(chart, _charts.Histogram):
        return svg.histogram(chart)
    if isinstance(chart, _charts.Scatter):
        return svg.scatter(chart)
    return svg.bars(chart)


def figure(caption: str, chart: Chart) -> str:
    """The chart as a ``<figure>`` with `caption` (also its accessible name)."""
    drawn = draw(chart).replace("<svg ", f'<svg role="img" aria-label="{escape(caption)}" ', 1)
    return f"<figure>{drawn}<figcaption>{escape(caption)}</figcaption></figure>\n"
