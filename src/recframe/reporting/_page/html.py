"""The page's HTML: the shell (style, title, navigation, the sections in their order), tables
and escaping. Every value is escaped; cells given as ``(html,)`` tuples are inserted as is."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: #1f2328; margin: 0; background: #fff; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 16px 24px 48px; box-sizing: border-box; }
h1 { font-size: 1.6em; margin: 0.4em 0 0.2em; }
h2 { font-size: 1.25em; margin: 1.8em 0 0.5em; padding-bottom: 0.2em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
p, li { max-width: 80ch; }
nav ol { columns: 16em 3; column-gap: 2em; padding-left: 1.4em; margin: 0.4em 0; }
nav li { break-inside: avoid; overflow-wrap: anywhere; }
nav .nav-appendix { margin: 0.6em 0 0; font-weight: 600; }
.appendix h2 { border-bottom: 3px solid #0969da; }
.note { color: #57606a; font-size: 0.92em; }
.verdict { max-width: none; background: #f6f8fa; border-left: 4px solid #0969da; padding: 8px 12px; margin: 0.6em 0; }
.verdict p { margin: 0.2em 0; max-width: none; }
.verdict .scroll { margin: 0.4em 0 0; }
.verdict a, .verdict-head a { color: inherit; }
.halves { display: flex; flex-wrap: wrap; gap: 0 24px; align-items: flex-start; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1em; }
table { border-collapse: collapse; font-size: 0.88em; font-variant-numeric: tabular-nums; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; vertical-align: top; overflow-wrap: anywhere; }
td.num, td[style] { overflow-wrap: normal; }
th { overflow-wrap: break-word; }
td { min-width: 3.2em; }
td > a:only-child, .nowrap { white-space: nowrap; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; }
.ci { color: #57606a; font-size: 0.9em; white-space: nowrap; }
sup.mark { line-height: 0; }
@media screen and (max-width: 1100px) { .ci { display: block; } th, td { padding: 3px 5px; } }
@media screen and (max-width: 900px) { main { padding: 12px 8px 32px; } table { font-size: 0.74em; } th, td { padding: 2px 2px; } }
figure { margin: 0.6em 0 1.2em; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: #57606a; font-size: 0.9em; max-width: 80ch; }
code { background: #f6f8fa; padding: 0 3px; border-radius: 3px; }
.examples { margin: 0.5em 0 1em; }
dl.glossary dt { margin-top: 0.5em; }
dl.glossary dd { margin-left: 1.5em; max-width: 90ch; }
td a, dt a { color: inherit; text-decoration: underline dotted; }
@page { size: A4; margin: 12mm 10mm; }
@media print {
  .on-screen { display: none; }
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  nav { display: none; }
  .scroll { overflow: visible; }
  table { font-size: 0.82em; }
  th, td { padding: 2px 4px; }
  wbr { display: none; }
  td.num { white-space: normal; }
  .ci { display: inline; }
  .keep { break-inside: avoid; }
  .verdict table { font-size: 0.75em; }
  figure, tr, .verdict, .rf-col, .rf-user, .halves, p, li { break-inside: avoid; }
  h2, h3, h4, .segment-of { break-after: avoid; }
  section > h2 + p, section > h3 + p { break-before: avoid; }
  .appendix { break-before: page; }
  figure svg { max-width: 100%; height: auto; }
  sup.mark { font-size: 0.9em; }
}
pre.call { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; padding: 6px 8px; border-radius: 4px; }
pre.call code { padding: 0; }
"""


def escape(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def note(text: Any, end: str = "\n") -> str:
    """A grey paragraph of escaped text."""
    return f'<p class="note">{escape(text)}</p>{end}'


def label(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return " / ".join(str(row[k]) for k in keys) if keys else "all"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None, keep: bool = False) -> str:
    """A plain ``<table>`` of escaped values (cells given as (html,) tuples are inserted as is);
    `keep`: kept whole on paper."""

    def cell(value: Any, j: int) -> str:
        body = value[0] if isinstance(value, tuple) else escape(value)
        return f'<td class="num">{body}</td>' if numeric and numeric[j] else f"<td>{body}</td>"

    head = "".join(f"<th>{breakable(escape(h))}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(cell(value, j) for j, value in enumerate(row)) + "</tr>" for row in rows)
    kept = " keep" if keep else ""
    return f'<div class="scroll{kept}"><table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table></div>\n'


def halves(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A long table as two tables side by side (one below the other on a narrow screen)."""
    half = (len(rows) + 1) // 2
    return f'<div class="halves">{table(header, rows[:half])}{table(header, rows[half:])}</div>\n'


def breakable(text: str) -> str:
    """Escaped header text that may wrap after an underscore or a slash and before an "@"
    ("catalog_<wbr>coverage<wbr>@20"), so that a wide table narrows instead of scrolling."""
    return re.sub(r"([_/])", r"\1<wbr>", text).replace("@", "<wbr>@")


def wrap(report_html: str, keep_note: bool = True) -> str:
    """A recframe.report HTML table in a box (its note after it, unless the page captions it),
    its headers made breakable."""
    head, _, rest = report_html.partition("</table>")
    head = re.sub(r"<th>(.*?)</th>", lambda m: f"<th>{breakable(m.group(1))}</th>", head)
    return f'<div class="scroll">{head}</table></div>' + (rest if keep_note else "\n")


class Page:
    """The sections of the page, and the document around them."""

    #: the order of the sections, whatever order they are made in (by the anchor's first word): the
    #: main part, then the appendix
    ORDER = (
        "summary", "segments", "comparison", "letters",
        "comparison_table", "evaluated", "pairs", "curves", "distributions", "segment", "fold", "agreement", "beyond", "fairness", "examples",
        "glossary",
    )  # fmt: skip
    #: the sections of the main part (three A4 pages at most); the others are the appendix
    MAIN = ("summary", "comparison", "letters", "segments")

    def __init__(self) -> None:
        self.sections: list[tuple[str, str, str]] = []  # (anchor, title, body)

    def extend(self, sections: list[tuple[str, str, str]]) -> None:
        self.sections += sections

    def html(self, title: str, lead: str, print_appendix: bool = True) -> str:
        """The document; without `print_appendix` the appendix is on screen only: the page prints
        its main part (three A4 pages), and the appendix prints where ``sections=`` asks for it."""
        self.sections.sort(key=lambda s: self.ORDER.index(s[0].split("-")[0]))  # (stable: segments keep their order)
        main = [s for s in self.sections if s[0].split("-")[0] in self.MAIN]
        rest = [s for s in self.sections if s[0].split("-")[0] not in self.MAIN]

        def items(sections: list[tuple[str, str, str]]) -> str:
            return "".join(f'<li><a href="#{a}">{escape(t)}</a></li>' for a, t, _ in sections)

        def bodies(sections: list[tuple[str, str, str]]) -> str:
            return "\n".join(f'<section id="{a}">\n<h2>{escape(t)}</h2>\n{b}</section>' for a, t, b in sections)

        nav = f"<nav><ol>{items(main)}</ol>" + (f'<p class="nav-appendix">Appendix</p><ol>{items(rest)}</ol>' if rest else "")
        printed = "" if print_appendix else ' Printed when sections= names them (sections="all": every one).'
        appendix = (
            '<div class="appendix" id="appendix"><h2>Appendix</h2>\n<p class="note">The details behind the pages above: '
            f"what was evaluated and how, every table, figure and example user.{escape(printed)}</p></div>\n" + bodies(rest)
            if rest
            else ""
        )
        appendix = appendix if print_appendix or not appendix else f'<div class="on-screen">\n{appendix}</div>'
        body = f"<main>\n<h1>{escape(title)}</h1>\n{lead}\n{nav}</nav>\n{bodies(main)}\n{appendix}\n</main>"
        return document(title, STYLE, body)


def document(title: str, style: str, body: str) -> str:
    """A whole HTML page: `body` under a head of `title` and `style` (the evaluation page, side_by_side's page)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
