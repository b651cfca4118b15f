"""The page's figures: each drawn with matplotlib (``recframe[plot]``) and put in the page as
inline SVG with ids of its own; a note in its place without matplotlib."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

from recframe._page.html import NO_PLOT, escape, note


def _matplotlib() -> Any:
    """matplotlib.pyplot, or None when the plot extra is not installed."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


class Figures:
    """Draws figures as inline SVG, each with ids of its own, and closes them."""

    def __init__(self) -> None:
        self.plt = _matplotlib()
        self.count = 0

    @property
    def available(self) -> bool:
        return self.plt is not None

    def svg(
        self, caption: str, draw: Callable[..., Any], *args: Any, size: tuple[float, float] | None = None, **kwargs: Any
    ) -> str:
        """``draw(*args, **kwargs)`` (with ``ax=`` a new Axes of `size` inches, when given) as a
        ``<figure>`` of inline SVG with `caption`; a note when matplotlib is missing."""
        if self.plt is None:
            return note(NO_PLOT, end="")
        import matplotlib

        self.count += 1
        with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "recframe"}):
            if size is not None:
                kwargs["ax"] = self.plt.subplots(figsize=size)[1]
            fig = draw(*args, **kwargs)
            try:
                buffer = io.StringIO()
                fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
            finally:
                self.plt.close(fig)
        text = buffer.getvalue()
        text = text[text.index("<svg") :]  # no XML prolog or DOCTYPE inside HTML
        prefix = f"f{self.count}-"  # ids unique in the page: several SVGs share one document
        text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
        text = re.sub(r'(xlink:href|href)="#([^"]+)"', lambda m: f'{m.group(1)}="#{prefix}{m.group(2)}"', text)
        text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", text)
        text = text.replace("<svg ", f'<svg role="img" aria-label="{escape(caption)}" ', 1)
        return f"<figure>{text}<figcaption>{escape(caption)}</figcaption></figure>"
