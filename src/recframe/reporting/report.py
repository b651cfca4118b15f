"""Report tables: a summary or a comparison as a Markdown, HTML or LaTeX string."""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from recframe.engine import _frames, _tables
from recframe.engine._validate import whole
from recframe.errors import RecframeError, fix, ref

Format = Literal["markdown", "html", "latex"]
FORMATS: tuple[str, ...] = ("markdown", "html", "latex")

#: Marks a value significantly different from the baseline.
MARKER = "†"


@dataclass
class Cell:
    text: str
    numeric: bool = False
    bold: bool = False
    marked: bool = False
    detail: str = ""  # shown after the value, never bold: an interval


def format_number(value: Any, precision: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{precision}f}"


def p_value_text(value: Any, precision: int) -> str:
    if value is None or math.isnan(value):
        return ""
    smallest = 10.0**-precision
    return f"<{smallest:.{precision}f}" if value < smallest else f"{value:.{precision}f}"


def _interval(row: dict[str, Any], name: str, precision: int) -> str:
    """The interval of `name` in `row` (its ``_lo`` and ``_hi`` columns) as " [lo, hi]", "" without one."""
    if row.get(f"{name}_lo") is None:
        return ""
    return f" [{format_number(row[name + '_lo'], precision)}, {format_number(row[name + '_hi'], precision)}]"


def best_rows(values: list[Any], precision: int, larger: bool = True) -> set[int]:
    """Rows holding the best value, the largest or the smallest (as shown: ties after
    rounding all count)."""
    shown = [round(v, precision) for v in values if v is not None and not math.isnan(v)]
    if len(shown) < 2:
        return set()
    top = max(shown) if larger else min(shown)
    return {i for i, v in enumerate(values) if v is not None and not math.isnan(v) and round(v, precision) == top}


def _summary_cells(
    df: pl.DataFrame, precision: int, comparison: pl.DataFrame | None
) -> tuple[list[str], list[list[Cell]], str | None]:
    metrics = _tables.metric_columns(df.columns)
    # summary(aggregate=[...]): a metric's other aggregates (ndcg@10_median, _p90), each folded
    # with its interval as the mean is, best by the metric's direction
    aggregated = {
        c: m for c in df.columns for m in metrics if c.startswith(m + "_") and re.fullmatch(r"median|gmean|p\d+", c[len(m) + 1 :])
    }
    interval = {c + s for c in [*metrics, *aggregated] for s in _tables.INTERVAL_SUFFIXES}
    shown = [c for c in df.columns if c not in interval]
    keys = shown[: shown.index("n_users")] if "n_users" in shown else []
    significant: set[tuple[Any, ...]] = set()
    baseline = None
    marked_by: list[str] = []  # the summary's columns a significant (model, other keys) is found by
    if comparison is not None:
        # compare(by=[model, segment, ...]) compared within each value of the other keys (its
        # first columns): the summary then has the model key and those keys
        strata = comparison.columns[: comparison.columns.index("baseline")] if "baseline" in comparison.columns else []
        model_keys = [k for k in keys if k not in strata]
        if len(model_keys) != 1 or not set(strata) <= set(keys):
            raise RecframeError(
                "compare= marks the summary's cells by model"
                + (f" within each {', '.join(strata)}" if strata else "")
                + f", so the summary needs the model column and {'those keys' if strata else 'no other key'}; "
                f"its keys are {keys}. Hint: pass a summary and a comparison computed with the same by=, e.g. "
                f"{fix('by', ['model', *strata] if strata else 'model')} for both."
            )
        marked_by = [*model_keys, *strata]
        baselines = comparison.get_column("baseline").unique().to_list()
        baseline = baselines[0] if len(baselines) == 1 else None
        if baseline is None:
            raise RecframeError(
                f"compare= holds comparisons against several baselines {baselines}. "
                "Hint: pass one recframe.compare result (one baseline)."
            )
        significant = set(comparison.filter(pl.col("significant")).select("model", *strata, "metric").iter_rows())
    best = {
        c: best_rows(df.get_column(c).to_list(), precision, _tables.higher_is_better(aggregated.get(c, c)))
        for c in [*metrics, *aggregated]
    }
    body = []
    for i, row in enumerate(df.iter_rows(named=True)):
        cells = []
        for c in shown:
            if c in best:
                marked = bool(marked_by) and (*(row[k] for k in marked_by), c) in significant
                text, detail = format_number(row[c], precision), _interval(row, c, precision)
                cells.append(Cell(text, numeric=True, bold=i in best[c], marked=marked, detail=detail))
            else:
                value = row[c]
                numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
                cells.append(Cell(format_number(value, precision) if numeric else str(value), numeric=numeric))
        body.append(cells)
    note = None
    if significant:
        note = f"significantly different from the baseline {baseline} (adjusted p-value below alpha)"
    return shown, body, note


def _compare_cells(df: pl.DataFrame, precision: int) -> tuple[list[str], list[list[Cell]], str | None]:
    # compare(by=[model, segment, ...]) puts the other keys first: each row is within their values
    strata = df.columns[: df.columns.index("baseline")] if "baseline" in df.columns else []
    header = [*strata, "model", "metric", "n_pairs", "baseline_mean", "model_mean", "delta", "rel_delta", "p_value", "p_adjusted"]
    # best delta per metric (within each value of the other keys): the model that gains most over the baseline
    best: set[int] = set()
    metric_of = list(df.select(*strata, "metric").iter_rows())
    deltas = df.get_column("delta").to_list()
    for metric in dict.fromkeys(metric_of):
        rows = [i for i, m in enumerate(metric_of) if m == metric]
        best |= {rows[j] for j in best_rows([deltas[i] for i in rows], precision, _tables.higher_is_better(metric[-1]))}
    body = []
    for i, row in enumerate(df.iter_rows(named=True)):
        rel = row["rel_delta"]
        body.append([
            *(Cell("" if row[k] is None else str(row[k])) for k in strata),
            Cell(str(row["model"])),
            Cell(str(row["metric"])),
            Cell(str(row["n_pairs"]), numeric=True),
            Cell(format_number(row["baseline_mean"], precision), numeric=True),
            Cell(format_number(row["model_mean"], precision), numeric=True),
            Cell(format_number(row["delta"], precision), numeric=True, bold=i in best, marked=bool(row["significant"]),
                 detail=_interval(row, "delta", precision)),
            Cell("" if rel is None else f"{rel:+.{max(precision - 2, 0)}%}", numeric=True),
            Cell(p_value_text(row["p_value"], precision), numeric=True),
            Cell(p_value_text(row["p_adjusted"], precision), numeric=True),
        ])  # fmt: skip
    baselines = df.get_column("baseline").unique().to_list()
    note = None
    if any(df.get_column("significant").to_list()):
        against = baselines[0] if len(baselines) == 1 else "baseline"
        note = f"significantly different from {against} (adjusted p-value below alpha)"
    return header, body, note


def _disparity_cells(df: pl.DataFrame, precision: int) -> tuple[list[str], list[list[Cell]], str | None]:
    """A recframe.disparity result (pairs="extremes"): each group's mean (and count), the
    difference with its interval, the ratio, the MAD and the p-values."""
    group_means = [c for c in df.columns if c.startswith("mean_") and f"n_{c[5:]}" in df.columns]
    keys = df.columns[: df.columns.index("metric")]
    header = [*keys, "metric", *(f"{c[5:]} (n)" for c in group_means), "difference", "ratio", "mad", "p_value", "p_adjusted"]
    body = []
    for row in df.iter_rows(named=True):
        means = [
            Cell(format_number(row[c], precision), numeric=True, detail=f" ({row['n_' + c[5:]]})", bold=row[c] is not None
                 and row[c] == row["high_mean"] and row["difference"] not in (None, 0))
            for c in group_means
        ]  # fmt: skip
        body.append([
            *(Cell(str(row[k])) for k in keys),
            Cell(str(row["metric"])),
            *means,
            Cell(format_number(row["difference"], precision), numeric=True, marked=bool(row["significant"]),
                 detail=_interval(row, "gap", precision)),
            Cell(format_number(row["ratio"], precision), numeric=True),
            Cell(format_number(row["mad"], precision), numeric=True),
            Cell(p_value_text(row["p_value"], precision), numeric=True),
            Cell(p_value_text(row["p_adjusted"], precision), numeric=True),
        ])  # fmt: skip
    note = None
    if any(df.get_column("significant").to_list()):
        note = "the highest and the lowest group differ significantly (adjusted p-value below alpha)"
    return header, body, note


def _item_group_cells(df: pl.DataFrame, precision: int) -> tuple[list[str], list[list[Cell]], str | None]:
    """A recframe.item_groups result: the keys and the group, its shares, and per k the slots,
    the exposure, exposure over relevance (the ratio exposure_disparity compares) and recall."""
    keys = df.columns[: df.columns.index("n_items")]
    ks = [c.split("@")[1] for c in df.columns if c.startswith("exposure_share@")]
    header = [*keys, "n_items", "catalog_share", "relevant_share"]
    for k in ks:
        header += [f"rec_share@{k}", f"exposure_share@{k}", f"exposure/relevant@{k}", f"group_recall@{k}"]
    body = []
    for row in df.iter_rows(named=True):
        cells = [Cell("" if row[c] is None else str(row[c])) for c in keys]
        cells += [Cell(format_number(row[c], precision), numeric=True) for c in ("n_items", "catalog_share", "relevant_share")]
        for k in ks:
            exposure, relevant = row[f"exposure_share@{k}"], row["relevant_share"]
            ratio = exposure / relevant if exposure is not None and relevant else None
            cells += [
                Cell(format_number(row[f"rec_share@{k}"], precision), numeric=True),
                Cell(format_number(exposure, precision), numeric=True),
                Cell(format_number(ratio, precision), numeric=True, bold=ratio is not None and not 0.5 <= ratio <= 2),
                Cell(format_number(row[f"group_recall@{k}"], precision), numeric=True),
            ]
        body.append(cells)
    return header, body, None  # (bold: under half or over twice its share, as the docstring says)


def _markdown(header: list[str], body: list[list[Cell]], note: str | None) -> str:
    def cell(c: Cell) -> str:
        text = c.text.replace("|", "\\|")
        text = f"**{text}**" if c.bold and text else text
        return text + (MARKER if c.marked else "") + c.detail.replace("|", "\\|")

    align = ["--:" if body and body[0][j].numeric else ":--" for j in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in body]
    if note:
        lines += ["", f"{MARKER} {note}"]
    return "\n".join(lines) + "\n"


def _html(header: list[str], body: list[list[Cell]], note: str | None) -> str:
    def cell(c: Cell) -> str:
        text = html.escape(c.text)
        text = f"<strong>{text}</strong>" if c.bold and text else text
        style = ' style="text-align: right"' if c.numeric else ""
        marker = f"<sup>{MARKER}</sup>" if c.marked else ""
        return f"<td{style}>{text}{marker}{html.escape(c.detail)}</td>"

    lines = ["<table>", "<thead>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    lines += ["</thead>", "<tbody>"]
    lines += ["<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in body]
    lines += ["</tbody>", "</table>"]
    if note:
        lines.append(f"<p><sup>{MARKER}</sup> {html.escape(note)}</p>")
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "<": r"\textless{}", ">": r"\textgreater{}"}  # fmt: skip


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _latex(header: list[str], body: list[list[Cell]], note: str | None) -> str:
    def cell(c: Cell) -> str:
        text = _latex_escape(c.text)
        text = f"\\textbf{{{text}}}" if c.bold and text else text
        return text + ("$^{\\dagger}$" if c.marked else "") + _latex_escape(c.detail)

    align = "".join("r" if body and body[0][j].numeric else "l" for j in range(len(header)))
    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule", " & ".join(_latex_escape(h) for h in header) + r" \\"]
    lines.append("\\midrule")
    lines += [" & ".join(cell(c) for c in row) + r" \\" for row in body]
    lines += ["\\bottomrule", "\\end{tabular}"]
    if note:
        lines.append(f"$^{{\\dagger}}$ {_latex_escape(note)}")
    return "\n".join(lines) + "\n"


#: The most decimals a number is shown with: past a float64's 17 digits there is nothing to show.
MAX_PRECISION = 17


@_frames.engine_call
def report(frame: Any, format: Format = "markdown", precision: int = 3, *, compare: Any = None) -> str:
    r"""A summary or comparison as a table to paste into a report.

    Parameters
    ----------
    frame : pandas.DataFrame, polars.DataFrame, polars.LazyFrame or pyarrow.Table
        A :func:`recframe.summary` (or :func:`recframe.curve`) result, a
        :func:`recframe.compare` result, a :func:`recframe.disparity` result (the gaps
        between groups of users) or a :func:`recframe.item_groups` result (what each group of
        items gets). A LazyFrame is collected.
    format : {"markdown", "html", "latex"}, default "markdown"
        Markdown pipe table; HTML ``<table>``; LaTeX ``tabular`` with booktabs rules
        (``\usepackage{booktabs}``).
    precision : int, default 3
        Decimals of every non-integer number, from 0 to 17.
    compare : frame, optional
        With a summary: a :func:`recframe.compare` result whose significant rows mark the
        summary's cells with a dagger. The summary's keys are the models' column and the other
        keys compare was given (``by=["model", "segment"]`` for both: each (model, segment)
        cell is marked by the comparison within that segment).

    Returns
    -------
    str
        The table, then a line explaining the dagger when one is shown.

    Notes
    -----
    Summary: the key columns, ``n_users`` and ``n_skipped``, then each metric's mean, with
    ``[lo, hi]`` when the summary has intervals (``ci=``; ``_std`` is not shown). The best
    value of each metric column is bold: the largest, or the smallest for a metric whose
    registry entry says lower is better (``Metric.higher_is_better``); values that tie after
    rounding are all bold; a column with one value has no bold.

    Comparison: the other keys compare was given (a segment, a fold), model, metric, ``n_pairs``, the two means, delta with its interval, the
    relative delta as a signed percentage, p-value and adjusted p-value (below
    10^-precision shown as ``<0.001``). The best delta of each metric is bold; a
    significant delta (``significant`` column) gets the dagger.

    Disparity: the keys, metric, each group's mean with its number of users, the difference
    (highest - lowest group) with its bootstrap interval, the ratio, the MAD and the
    p-values; the highest group's mean is bold, a significant difference gets the dagger.

    Item groups: the keys and the group, ``n_items``, the catalog and relevant shares, then
    per k the shares of the slots and of the exposure, exposure over relevance (bold when
    under 0.5 or over 2) and the group's recall.

    Null values are empty cells.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> summary = pl.DataFrame({"model": ["A", "B"], "n_users": [3, 3], "n_skipped": [0, 0],
    ...                         "ndcg@10": [0.5, 0.75]})
    >>> print(recframe.report(summary, precision=2))
    | model | n_users | n_skipped | ndcg@10 |
    |:--|--:|--:|--:|
    | A | 3 | 0 | 0.50 |
    | B | 3 | 0 | **0.75** |
    <BLANKLINE>
    """
    if format not in FORMATS:
        raise RecframeError(f'format={format!r} is not one of {list(FORMATS)}. Hint: pass format="markdown".')
    if (checked := whole(precision)) is None or not 0 <= checked <= MAX_PRECISION:
        raise RecframeError(
            f"{ref('precision', precision)} is not a whole number from 0 to {MAX_PRECISION} (a float64 holds 17 "
            f"significant digits). Hint: pass {fix('precision', 3)}."
        )
    precision = checked
    df = _tables.eager(frame, "frame")
    if {"high_group", "low_group", "difference", "p_adjusted"} <= set(df.columns):
        if compare is not None:
            raise RecframeError("frame is a recframe.disparity result; compare= is for a summary. Hint: drop compare=.")
        header, body, note = _disparity_cells(df, precision)
    elif {"n_items", "catalog_share", "relevant_share"} <= set(df.columns):
        if compare is not None:
            raise RecframeError("frame is a recframe.item_groups result; compare= is for a summary. Hint: drop compare=.")
        header, body, note = _item_group_cells(df, precision)
    elif {"group_a", "group_b", "gap"} <= set(df.columns):
        raise RecframeError(
            'frame is a recframe.disparity(pairs="all") result: one row per pair of groups, which report does not lay '
            'out. Hint: pass recframe.disparity(..., pairs="extremes"), or write the frame itself.'
        )
    elif {"delta", "p_adjusted", "significant"} <= set(df.columns):
        if compare is not None:
            raise RecframeError("frame is already a comparison; compare= is for a summary. Hint: drop compare=.")
        header, body, note = _compare_cells(df, precision)
    else:
        if not _tables.metric_columns(df.columns):
            raise RecframeError(
                f"frame has no metric column such as 'ndcg@10' (columns: {df.columns}). "
                "Hint: pass a recframe.summary or recframe.compare result."
            )
        comparison = None if compare is None else _tables.eager(compare, "compare")
        header, body, note = _summary_cells(df, precision, comparison)
    render = {"markdown": _markdown, "html": _html, "latex": _latex}[format]
    return render(header, body, note)
