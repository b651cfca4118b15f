"""The page's sections, one function each: each takes the collected :class:`PageData` (and the
figures) and returns its (anchor, title, HTML body)."""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any

import polars as pl

from recframe.engine import _tables
from recframe.reporting import _charts
from recframe.reporting._page import figures
from recframe.reporting._page import glossary as registry_docs
from recframe.reporting._page.data import EXAMPLES, INPUT_KEYS, PER_SEGMENT, PageData, recframe_version
from recframe.reporting._page.html import escape, halves, label, note, table, wrap
from recframe.reporting._page.inspect_html import side_by_side
from recframe.reporting.report import MARKER, best_rows, format_number, p_value_text, report

Section = tuple[str, str, str]  # (anchor, title, body)

#: the count columns of summary, and what each means
COUNTS = {
    "n_users": "counted in the means",
    "n_skipped": "left out of the means (the sum of the reasons below that are skipped)",
    "n_unranked": "relevant items but nothing recommended (counted, scoring 0, unless unranked_users='skip')",
    "n_no_relevant": "judged items but none relevant (skipped unless empty_users='zero')",
    "n_no_truth": "recommended to but absent from the truth (skipped unless empty_users='zero')",
}


def made_at(stage: str, data: PageData) -> list[Section]:
    """The sections asked for (``sections=``) whose numbers are in at `stage` of
    :func:`recframe.reporting._page.data.collect` (``"curves"``, ``"per_user"``, ``"sides"``, ``"segments"``,
    then ``"all"``), in the order their figures are drawn."""
    r = data.request
    wants = r.wants
    if stage == "curves":
        made = [curves(data) if wants("curves") else None]
    elif stage == "per_user":
        made = [
            comparison(data) if wants("comparison") else None,
            comparison_table(data) if wants("comparison_table") else None,
            letters(data) if wants("comparison") and data.comparison is None else None,
            pairs(data) if wants("pairs") else None,
            distributions(data) if wants("distributions") else None,
        ]
    elif stage == "sides":
        made = [beyond(data) if wants("beyond") else None, item_groups(data) if wants("item_groups") else None]
    elif stage == "segments":
        made = [segment(data, key) for key in r.attr_keys] if wants("segment_tables") else []
    else:
        made = [
            evaluated(data) if wants("evaluated") else None,
            summary(data) if wants("summary") else None,
            *([segments(data, key) for key in r.attr_keys] if wants("segments") else []),  # (they read the summary's means)
            *([fold(data, key) for key in r.truth_keys] if wants("folds") else []),
            agreement(data) if wants("agreement") else None,
            examples(data) if wants("examples") else None,
            glossary(data) if wants("glossary") else None,
        ]
    return [section for section in made if section is not None]


def lead(data: PageData) -> str:
    """The line under the title: recframe's version, the time, the models."""
    r = data.request
    text = (
        f'<p class="note">recframe {escape(recframe_version())} · {escape(r.started.strftime("%Y-%m-%d %H:%M:%S UTC"))}'
        + (f" · {escape(', '.join(map(str, data.models)))}" if r.model_keys else "")
        + "</p>\n"
    )
    return text + verdict(data) + tie_line(data)


def _p(value: float, precision: int) -> str:
    smallest = 10.0**-precision
    return f"p_adjusted &lt; {smallest:.{precision}f}" if value < smallest else f"p_adjusted {value:.{precision}f}"


def _means(data: PageData, metric: str) -> list[tuple[str, float]]:
    """(model, mean of `metric`) best first (averaged over the folds, if any); models without a value left out."""
    # (in Python: the summary has a row per model and fold, and a frame operation per metric costs more)
    values: dict[str, list[float]] = {}
    for name, value in data.summary.select(data.request.model_keys[0], metric).iter_rows():
        if value is not None:
            values.setdefault(str(name), []).append(value)
    larger = _tables.higher_is_better(metric)
    means = [(name, sum(found) / len(found)) for name, found in values.items()]
    return sorted(means, key=lambda pair: -pair[1] if larger else pair[1])


#: equal means, for the verdict: the same to this many significant digits
SAME_DIGITS = 12


@dataclass
class Standing:
    """One metric's standing: the best model and those tied with it (equal to 12 significant
    digits, or not distinguishable from it by the page's test in any fold), the runner-up (the
    next model), and the rows of the all-pairs comparison between the best and the runner-up."""

    metric: str
    best: list[tuple[str, float]]
    equal: bool  # the tie is of equal means (else: not distinguishable by the test)
    runner: tuple[str, float] | None
    tests: list[dict[str, Any]]  # the pair's rows (one per fold): p_adjusted, significant, the fold keys
    tied_tests: list[dict[str, Any]]  # the rows between the best and the models tied with it by the test


def _pair_rows(data: PageData, metric: str, a: str, b: str) -> list[dict[str, Any]]:
    """The all-pairs comparison's rows of models `a` and `b` for `metric` (one per fold)."""
    if data.pairs is None:
        return []
    pair = {a, b}
    return [
        row
        for row in data.pairs.iter_rows(named=True)
        if row["metric"] == metric and {str(row["model_a"]), str(row["model_b"])} == pair
    ]


def _tested(row: dict[str, Any]) -> bool:
    return row["p_adjusted"] is not None and not math.isnan(row["p_adjusted"])


def standing(data: PageData, metric: str) -> Standing | None:
    """The best models of `metric`, ties named, and the runner-up (None when no model has a value)."""
    means = _means(data, metric)
    if not means:
        return None
    top_name, top = means[0]
    best: list[tuple[str, float]] = [means[0]]
    rest: list[tuple[str, float]] = []
    tied_tests: list[dict[str, Any]] = []
    equal = True
    for name, value in means[1:]:
        rows = _pair_rows(data, metric, top_name, name)
        if f"{value:.{SAME_DIGITS - 1}e}" == f"{top:.{SAME_DIGITS - 1}e}":
            best.append((name, value))
        elif not rest and rows and all(_tested(row) and not row["significant"] for row in rows):
            best.append((name, value))  # not distinguishable from the best: named with it
            tied_tests += rows
            equal = False
        else:
            rest.append((name, value))
    if equal:  # equal means: the tie's order is the models' names, whatever their last bits
        best.sort(key=lambda pair: pair[0])
    runner = rest[0] if rest else None
    tests = _pair_rows(data, metric, top_name, runner[0]) if runner is not None else []
    return Standing(metric, best, equal and not tied_tests, runner, tests, tied_tests)


def _number(data: PageData, value: float, anchor: str = "summary") -> str:
    """A number of the verdict, linked to the table that holds it (when the page shows that table)."""
    text = escape(format_number(value, data.request.precision))
    return f'<a href="#{anchor}">{text}</a>' if _shown(data, anchor) else text


def _shown(data: PageData, anchor: str) -> bool:
    """Whether the section of `anchor` is on the page."""
    r = data.request
    if anchor == "pairs":
        return data.pairs is not None and r.wants("pairs")
    if anchor == "letters":
        return data.letters is not None and r.wants("comparison") and data.comparison is None
    return r.wants(anchor)


def _where(data: PageData, row: dict[str, Any]) -> str:
    keys = data.request.truth_keys
    return f" in {escape(label(row, keys))}" if keys else ""


def _p_list(data: PageData, rows: list[dict[str, Any]], short: bool = False) -> str:
    """The adjusted p-values of a pair's rows, each with its fold, linked to the pairs' table
    (`short`, for a table whose header names p_adjusted: "< 0.001 (week 1), 0.004 (week 2)")."""
    precision = data.request.precision
    parts = [f"{_p(row['p_adjusted'], precision)}{_where(data, row)}" for row in rows if _tested(row)]
    if short:
        keys = data.request.truth_keys
        parts = [
            _p(row["p_adjusted"], precision)[len("p_adjusted ") :] + (f" ({escape(label(row, keys))})" if keys else "")
            for row in rows
            if _tested(row)
        ]
    text = ", ".join(parts)
    anchor = "pairs" if _shown(data, "pairs") else "letters" if _shown(data, "letters") else None
    return f'<a href="#{anchor}">{text}</a>' if anchor and text else text


def _against_runner(data: PageData, s: Standing, short: bool = False) -> str:
    """Best against runner-up, tested: one sentence (or, `short`, a table cell)."""
    names = " and ".join(f"<strong>{escape(m)}</strong>" for m, _ in s.best)
    if s.runner is None:
        return "no other model" if short else ""
    if data.pairs is None:  # (several model keys: no pair was compared)
        return "not compared" if short else ""
    runner = "" if short else f" than {escape(s.runner[0])}"
    tested = [row for row in s.tests if _tested(row)]
    if not tested:
        text = "not tested" + ("" if short else f" against {escape(s.runner[0])}") + " (fewer than two users with values of both)"
        return text if short else f"Best against the runner-up: {names} is {text}."
    larger = _tables.higher_is_better(s.metric)

    def best_ahead(row: dict[str, Any]) -> bool:  # (in a fold, the runner-up may be the better one)
        delta = row["delta"] if str(row["model_a"]) == s.best[0][0] else -row["delta"]
        return (delta > 0) == larger

    better = [row for row in tested if row["significant"] and best_ahead(row)]
    worse = [row for row in tested if row["significant"] and not best_ahead(row)]
    others = [row for row in tested if not row["significant"]]
    if short:
        found = [(f"{word}: ", rows) for word, rows in (("better", better), ("worse", worse), ("not", others)) if rows]
        if not better and not worse:
            return f"not significant: {_p_list(data, tested, short)}"
        return "; ".join(f"{word}{_p_list(data, rows, short)}" for word, rows in found)
    if not better and not worse:
        words = f"not significantly better{runner} ({_p_list(data, tested)})"
    else:
        said = [f"significantly better{runner} ({_p_list(data, better)})"] if better else []
        said += [f"significantly worse{'' if better else runner} ({_p_list(data, worse)})"] if worse else []
        said += [f"not significantly different ({_p_list(data, others)})"] if others else []
        words = "; ".join(said)
    return f"{'Best' if len(s.best) == 1 else 'Each best'} against the runner-up: {names} {'is' if len(s.best) == 1 else 'are'} {words}."


def _best_words(data: PageData, s: Standing) -> str:
    """The best model of a metric, or the models that tie for best and why, with their means."""
    if len(s.best) == 1:
        name, value = s.best[0]
        return f"<strong>{escape(name)}</strong> is best ({_number(data, value)})"
    names = ", ".join(f"<strong>{escape(m)}</strong> ({_number(data, x)})" for m, x in s.best)
    if s.equal:
        return f"{names} tie for best (means equal to {SAME_DIGITS} significant digits)"
    return f"{names} tie for best (not distinguishable by the test: {_p_list(data, s.tied_tests)})"


def _against_baseline(data: PageData, metric: str) -> str:
    """One sentence: the models significantly better and worse than the baseline on `metric`."""
    assert data.comparison is not None
    precision, larger = data.request.precision, _tables.higher_is_better(metric)
    rows = data.comparison.filter((pl.col("metric") == metric) & pl.col("significant")).iter_rows(named=True)
    keys, anchor = data.request.truth_keys, "comparison_table" if _shown(data, "comparison_table") else "summary"
    found: dict[tuple[bool, str], list[str]] = {}  # (better, model): each fold's mean and p-value
    for row in rows:
        where = f"{escape(label(row, keys))}: " if keys else ""
        words = f"{where}{_number(data, row['model_mean'], anchor)}, {_p(row['p_adjusted'], precision)}"
        found.setdefault(((row["delta"] > 0) == larger, str(row["model"])), []).append(words)
    better = [f"{escape(m)} ({'; '.join(w)})" for (up, m), w in found.items() if up]
    worse = [f"{escape(m)} ({'; '.join(w)})" for (up, m), w in found.items() if not up]
    baseline = escape(data.baseline)
    mean = next((x for m, x in _means(data, metric) if m == str(data.baseline)), None)
    text = f"Against the baseline {baseline}" + (f" ({_number(data, mean)})" if mean is not None else "")
    if not better and not worse:
        return text + ": no model differs significantly."
    parts = [
        f"significantly better: {', '.join(better)}" if better else "",
        f"significantly worse: {', '.join(worse)}" if worse else "",
    ]
    return text + ": " + "; ".join(p for p in parts if p) + "."


def verdict(data: PageData) -> str:
    """First on the page: the headline metric's best model (ties named as ties) and the best
    against the runner-up, tested in every mode (the all-pairs comparison), with a baseline the
    models significantly better or worse than it; then the other metrics, one row each."""
    r, head = data.request, data.headline
    if not r.model_keys or head is None or (first := standing(data, head)) is None:
        return ""
    test = "paired t test" if data.test == "paired_t" else "randomization test"
    if data.pairs is not None:
        how = f"every pair of models, {test}, Holm's correction over every pair and metric, alpha 0.05"
    else:
        how = "one model" if len(data.models) < 2 else "means only: the models are not compared with more than one model key"
    folds = f"; means over the {' / '.join(r.truth_keys)} values" if r.truth_keys else ""
    lines = [
        f'<p class="verdict-head"><strong>Verdict</strong> on <strong>{linked(head)}</strong> (the headline{folds}; '
        f"{escape(how)}): {_best_words(data, first)}.</p>",
    ]
    if (against := _against_runner(data, first)) != "":
        lines.append(f"<p>{against}</p>")
    if data.comparison is not None:
        lines.append(f"<p>{_against_baseline(data, head)}</p>")
    others = [m for m in _tables.metric_columns(data.summary.columns) if m != head]
    rows = []
    for metric in others:
        s = standing(data, metric)
        if s is None:
            continue
        if [m for m, _ in s.best] == [m for m, _ in first.best]:  # (the headline's best, named once above)
            best = "as the headline: " + ", ".join(_number(data, x) for _, x in s.best[: 1 if s.equal else None])
        elif len(s.best) > 1 and s.equal:  # (the value first: a long name then wraps onto one more line, not two)
            best = f"{_number(data, s.best[0][1])} " + ", ".join(escape(m) for m, _ in s.best) + " (tie)"
        else:
            best = ", ".join(f"{_number(data, x)} {escape(m)}" for m, x in s.best) + (" (tie)" if len(s.best) > 1 else "")
        runner = f"{_number(data, s.runner[1])} {escape(s.runner[0])}" if s.runner else ""
        rows.append([(linked(metric),), (best,), (runner,), (_against_runner(data, s, short=True),)])
    body = "".join(lines)
    if rows:
        body += table(["other metric", "best", "runner-up", "best against runner-up (p_adjusted)"], rows, keep=True)
    return f'<div class="verdict" id="verdict">{body}</div>\n'


def tie_line(data: PageData) -> str:
    """With score=: how many lists have equal scores across a cut-off (recframe.tied_cutoffs), and
    the tie policy that decides them; nothing when no list has."""
    tied = data.tied
    if tied is None:
        return ""
    lists = int(tied.get_column("n_lists").sum())
    counts = [(k, int(tied.get_column(f"n_tied@{k}").sum())) for k in data.request.ks if f"n_tied@{k}" in tied.columns]
    found = [f"{n:,} of {lists:,} lists have equal scores across the cut-off at k={k}" for k, n in counts if n]
    if not found:
        return ""
    policy = next((row for row in data.conventions if row[0] == "ties"), ["ties", "item_asc", "default"])
    how = {
        "item_asc": "equal scores ordered by item, ascending",
        "item_desc": "equal scores ordered by item, descending",
        "optimistic": "the relevant items first within a tie, the higher grades first",
        "pessimistic": "the relevant items last within a tie, the lower grades first",
        "average": "each metric's expected value over every order of the tied items",
    }.get(str(policy[1]), str(policy[1]))
    text = (
        "; ".join(found) + f"; ties= decides them (ties={policy[1]!r}, {policy[2]}: {how}; ties='optimistic' and "
        "'pessimistic' bound what the tie-break can do, ties='average' takes the expected value)."
    )
    return f'<p class="note ties">{escape(text[0].upper() + text[1:])}</p>\n'


def evaluated(data: PageData) -> Section:
    """The inputs, the users counted and skipped, the data checks that ran, the keys, the conventions."""
    r, summary = data.request, data.summary
    keys = r.main_by
    # (frames have no file and no hash: those columns are left out when no input has them)
    columns = [c for c in INPUT_KEYS if c == "input" or any(d.get(c) is not None for d in data.inputs)]
    what = table(
        columns,
        [[f"{d['rows']:,}" if c == "rows" and d.get(c) is not None else d.get(c, "") for c in columns] for d in data.inputs],
        [c == "rows" for c in columns],
    )
    count_columns = [c for c in COUNTS if c in summary.columns]
    counts = table(
        [*(keys or ["group"]), *count_columns],
        [
            [*((row[k] for k in keys) if keys else ["all"]), *(row[c] for c in count_columns)]
            for row in summary.iter_rows(named=True)
        ],
        [False] * max(len(keys), 1) + [True] * len(count_columns),
    )
    reasons = "".join(f"<li><code>{escape(c)}</code>: {escape(COUNTS[c])}</li>" for c in count_columns)
    kinds = (("model keys", r.model_keys), ("truth keys (folds)", r.truth_keys), ("user attributes (segments)", r.attr_keys))
    roles = [f"{kind}: {', '.join(names)}" for kind, names in kinds if names]
    checked = "Data checks: off (checks=False)" if r.given.get("checks") is False else "Data checks that ran (all passed)"
    body = (
        provenance(data)
        + "<h3>Inputs</h3>\n" + what
        + "<h3>Users counted and skipped</h3>\n" + counts + f'<ul class="note">{reasons}</ul>\n'
        + f"<h3>{checked}</h3>\n<ul>" + "".join(f"<li>{escape(c)}</li>" for c in data.checks) + "</ul>\n"
        + ("<p>Keys: " + escape("; ".join(roles)) + ".</p>\n" if roles else "")
        + "<h3>Conventions</h3>\n"
        + halves(["option", "value", "set by"], data.conventions)
    )  # fmt: skip
    return "evaluated", "What was evaluated", body


def provenance(data: PageData) -> str:
    """The exact call (or command line), the side inputs given and not, and the versions."""
    return (
        "<h3>Provenance</h3>\n"
        + f"<p>{'Command line' if data.request.command is not None else 'Call'}:</p>\n"
        + f'<pre class="call"><code>{escape(data.call)}</code></pre>\n'
        + '<div class="halves">'
        + table(["side input", "given", "what it is for"], data.sides)
        + table(["software", "version"], data.versions)
        + "</div>\n"
    )


#: the groups (models) of one summary table: more wrap into another table below
BLOCK = 4
#: the marks of a significant difference from the baseline, by direction
BETTER, WORSE = "▲", "▼"


def _mark(better: bool, baseline: Any) -> str:
    words = f"significantly {'better' if better else 'worse'} than the baseline {baseline}"
    return f'<sup class="mark" title="{escape(words)}">{BETTER if better else WORSE}</sup>'


def _value(value: Any, precision: int, bold: bool, better: bool | None = None, baseline: Any = None) -> str:
    """A mean as the tables show it: bold where it is its row's best, ▲ / ▼ after it where it
    differs significantly from the baseline (`better`: the direction, None: no mark)."""
    text = escape(format_number(value, precision))
    text = f"<strong>{text}</strong>" if bold and text else text
    return text if better is None else text + _mark(better, baseline)


def marks_note(baseline: Any, what: str) -> str:
    return (
        f"{BETTER} / {WORSE} beside {what}: significantly better / worse than the baseline {baseline} "
        "(adjusted p-value below alpha, Holm's correction over every row of the comparison)."
    )


def summary(data: PageData) -> Section:
    """The summary transposed: one row per metric, one column per group (model), each mean with
    its interval, the best of a row bold, ▲ / ▼ where it is significantly better / worse than the
    baseline."""
    frame, keys, precision, directions = data.summary, data.request.main_by, data.request.precision, data.directions
    metrics = _tables.metric_columns(frame.columns)
    groups = list(frame.iter_rows(named=True))
    rows: list[list[Any]] = [[count, *(g[count] for g in groups)] for count in ("n_users", "n_skipped") if count in frame.columns]
    for metric in metrics:
        best = best_rows([g[metric] for g in groups], precision, _tables.higher_is_better(metric))
        cells: list[Any] = [(linked(metric),)]
        for i, g in enumerate(groups):
            text = _value(g[metric], precision, i in best, directions.get((*(g[k] for k in keys), metric)), data.baseline)
            if g.get(f"{metric}_lo") is not None and g.get(f"{metric}_hi") is not None:
                interval = f"[{format_number(g[metric + '_lo'], precision)}, {format_number(g[metric + '_hi'], precision)}]"
                text += f' <span class="ci">{escape(interval)}</span>'
            cells.append((text,))
        rows.append(cells)
    # at most BLOCK groups a table: more models wrap into tables one under the other (each kept whole on paper)
    body = "".join(
        table(["", *(label(g, keys) for g in groups[at : at + BLOCK])], [[row[0], *row[1 + at : 1 + at + BLOCK]] for row in rows],
              [False] + [True] * len(groups[at : at + BLOCK]), keep=True)
        for at in range(0, max(len(groups), 1), BLOCK)
    )  # fmt: skip
    notes = [f"n_users: {COUNTS['n_users']}; n_skipped: {COUNTS['n_skipped']} (see What was evaluated)."]
    if any(f"{m}_lo" in frame.columns for m in metrics):
        notes.append(f"[lo, hi]: the {data.request.ci:.0%} interval of the mean.")
    notes.append(
        f"Bold: the best value of the row (highest, or lowest where lower is better; ties at {precision} decimals all bold)."
    )
    if directions:
        notes.append(marks_note(data.baseline, "a mean"))
    elif data.baseline is not None:
        notes.append(f"No mark: no model differs significantly from the baseline {data.baseline}.")
    body += note(" ".join(notes))
    if data.baseline is None:
        body += note("No baseline given: no significance marks (pass baseline= or --baseline).")
    return "summary", "Summary", body


def _directed(report_html: str, frame: pl.DataFrame) -> str:
    """recframe.report's table of a comparison with each dagger turned into ▲ / ▼ (the row's
    direction against the baseline), and its own note left out (the page captions the marks)."""
    head, _, _ = report_html.partition("</table>")
    top, _, body = head.partition("<tbody>")
    rows = body.split("</tr>")
    for i, (baseline, better) in enumerate(zip(frame.get_column("baseline").to_list(), _charts.marks(frame))):
        if better is not None:  # the figure's mark, read from the same decision
            rows[i] = rows[i].replace(f"<sup>{MARKER}</sup>", _mark(better, baseline), 1)
    return f"{top}<tbody>{'</tr>'.join(rows)}</table>"


def comparison(data: PageData) -> Section | None:
    """The paired comparison against the baseline: a figure of the deltas and recframe.report's table."""
    frame, keys = data.comparison, data.request.truth_keys
    if frame is None:
        return None
    caption = (
        f"Each model minus {data.baseline}, user by user: the delta of each metric with its own {1 - 0.05:.0%} "
        "interval, not adjusted for multiple testing. A filled point, with "
        f"{BETTER} / {WORSE} after it, is significant after Holm's correction over every row (adjusted p-value below "
        "0.05"
        + (f"; compared within each {', '.join(keys)}" if keys else "")
        + f"): better / worse than {data.baseline} by the metric's direction. A hollow point is not, even where its "
        "unadjusted interval excludes 0."
    )
    # a metric beyond [0, 1] (dcg) would squash the others' deltas: it is in the table only
    wide = sorted({m for m, b, x in frame.select("metric", "baseline_mean", "model_mean").iter_rows()
                   if max(abs(b or 0), abs(x or 0)) > 1})  # fmt: skip
    drawn = frame.filter(~pl.col("metric").is_in(wide))
    if wide:
        caption += f" {', '.join(wide)} (not bounded by 1): in the table only."
    body = figures.figure(caption, _charts.comparison(drawn)) if drawn.height else ""
    more = (
        ' The table is in the appendix: <a href="#comparison_table">every delta</a>.'
        if data.request.wants("comparison_table")
        else ""
    )
    body += _test_line(data, "", more)
    return "comparison", f"Paired comparison against {data.baseline}", body


def comparison_table(data: PageData) -> Section | None:
    """The paired comparison against the baseline as recframe.report's table (the appendix)."""
    frame = data.comparison
    if frame is None:
        return None
    body = _test_line(data)
    body += wrap(link_cells(_directed(report(frame, format="html", precision=data.request.precision), frame)))
    body += note(
        "delta: the model's mean minus the baseline's, over the users both have a value for (n_pairs), with its "
        "95% interval (not adjusted); rel_delta: delta over the baseline's mean. "
        + marks_note(data.baseline, "a delta")
        + " Bold: the best delta of each metric among the models."
    )
    return "comparison_table", f"Paired comparison against {data.baseline}: the table", body


def pairs(data: PageData, with_pairs: bool = True) -> Section | None:
    """Every pair of models (two models or more): the letter table, then (`with_pairs`) each
    pair's paired comparison (recframe.compare without a baseline, recframe.compare_letters)."""
    frame, letters, keys, precision = data.pairs, data.letters, data.request.truth_keys, data.request.precision
    if frame is None or letters is None:
        return None
    models = sorted(letters.get_column("model").unique().to_list(), key=str)
    rows: list[list[Any]] = []
    for group in letters.partition_by([*keys, "metric"], maintain_order=True):
        first = group.row(0, named=True)
        cells: dict[Any, tuple[str]] = {}
        for row in group.iter_rows(named=True):
            text = f"{escape(format_number(row['mean'], precision))} {escape(row['letters'])}"
            cells[row["model"]] = (f"<strong>{text}</strong>" if row["top_group"] else text,)
        rows.append([*(first[k] for k in keys), (linked(first["metric"]),), *(cells.get(m, "") for m in models)])
    body = table([*keys, "metric", *map(str, models)], rows, [False] * (len(keys) + 1) + [True] * len(models))
    body += note(
        "Each model's mean and its letters: two models sharing a letter are not significantly different (compact letter "
        f"display of the pairs {'below' if with_pairs else 'in the appendix'}, recframe.compare_letters). Bold: the best "
        "model and those not distinguishable from it." + (f" Pairs are compared within each {', '.join(keys)}." if keys else "")
    )
    if not with_pairs:
        return "letters", "Every pair of models", body
    header = [*keys, "model_a", "model_b", "metric", "n_pairs", "mean_a", "mean_b", "delta", "d_z", "wins / ties / losses",
              "p_value", "p_adjusted"]  # fmt: skip
    lines = []
    for row, better in zip(frame.iter_rows(named=True), _charts.marks(frame)):
        delta = escape(format_number(row["delta"], precision))
        if better is not None:
            delta += f'<sup class="mark" title="{escape(row["model_a"])} significantly {"better" if better else "worse"}">' \
                     f"{BETTER if better else WORSE}</sup>"  # fmt: skip
        if row["delta_lo"] is not None and row["delta_hi"] is not None:
            interval = f"[{format_number(row['delta_lo'], precision)}, {format_number(row['delta_hi'], precision)}]"
            delta += f' <span class="ci">{escape(interval)}</span>'
        lines.append([
            *(row[k] for k in keys), row["model_a"], row["model_b"], (linked(row["metric"]),), row["n_pairs"],
            format_number(row["mean_a"], precision), format_number(row["mean_b"], precision), (delta,),
            format_number(row["d_z"], precision), f"{row['wins']} / {row['ties']} / {row['losses']}",
            p_value_text(row["p_value"], precision), p_value_text(row["p_adjusted"], precision),
        ])  # fmt: skip
    body += _test_line(data, " of every pair")
    body += wrap(table(header, lines, [False] * (len(keys) + 3) + [True] * 8))
    body += note(
        "delta: mean_a minus mean_b over the users both have a value for (n_pairs), with its 95% interval (not "
        f"adjusted); {BETTER} / {WORSE} beside it: model_a significantly better / worse than model_b (adjusted p-value "
        "below alpha). d_z: the mean of the paired differences over their standard deviation (Cohen's d_z). "
        "wins / ties / losses: the users for whom model_a is better, equal, worse."
    )
    return "pairs", "Every pair of models", body


def _test_line(data: PageData, which: str = "", more: str = "") -> str:
    """The page's test (and why it is not the t test), its correction and alpha, as a paragraph."""
    test = "paired t test" if data.test == "paired_t" else "randomization test (scipy is not installed)"
    return f"<p>{escape(test.capitalize())}{which}, Holm's correction over every row, alpha 0.05.{more}</p>\n"


def curves(data: PageData) -> Section:
    """Precision against recall and nDCG against k (recframe.curve), and a table of a few k."""
    frame, keys, kmax, precision = data.curve, data.request.main_by, data.request.kmax, data.request.precision
    body = figures.figure(
        f"Precision against recall at k = 1..{kmax} (one point per k)"
        + (", and nDCG by k" if data.curve_metrics else "")
        + ": recframe.curve, the means of summary at every cut-off.",
        _charts.curves(frame, ["pr", *data.curve_metrics], keys),
    )
    shown = frame.filter(pl.col("k").is_in([x for x in (1, 5, 10, 20, 50) if x <= kmax]))
    metrics = [m for m in ("precision", "recall", "ndcg") if m in frame.columns]
    body += table(
        [*keys, "k", *metrics],
        [
            [*(r[k] for k in keys), r["k"], *(format_number(r[m], precision) for m in metrics)]
            for r in shown.iter_rows(named=True)
        ],
        [False] * len(keys) + [True] * 4,
    )
    return "curves", "Metrics against k", body


#: the bands of the distributions' table: the middle 50% and 80% of the users' values
BANDS = (("p25", "p75"), ("p10", "p90"))


def distributions(data: PageData) -> Section:
    """Per metric and group, the users at 0, the median and the mean; a histogram of the primary metric."""
    keys, precision, primary = data.request.main_by, data.request.precision, data.primary
    rows = []
    for metric, frame in data.distributions:
        for r in frame.iter_rows(named=True):
            share = r["zero"] / r["users"] if r["users"] else math.nan
            median, mean = format_number(r["median"], precision), format_number(r["mean"], precision)
            middle, wide = (f"{format_number(r[lo], precision)} – {format_number(r[hi], precision)}" for lo, hi in BANDS)
            rows.append([metric, label(r, keys), r["users"], f"{r['zero']:,} ({share:.0%})", wide, middle, median, mean])
    body = table(
        ["metric", "group", "users", "users at 0", "p10 – p90", "p25 – p75", "median", "mean"],
        rows,
        [False, False, True, True, True, True, True, True],
    )
    body += note(
        "users: the users with a value of the metric (those its mean counts); users at 0: those of them scoring 0; "
        "p10 – p90 and p25 – p75: the middle 80% and 50% of the users' values (percentiles by linear interpolation, "
        'as summary(aggregate=["p10", ...])).'
    )
    model_by = keys[0] if len(keys) == 1 else None
    if model_by is None and keys:
        body += note("The histogram pools the groups of " + ", ".join(keys) + ".", end="")
    if primary is not None:
        body += figures.figure(
            f"Per-user {primary}" + (f" by {model_by}" if model_by else "")
            + ": the users the mean counts (skipped users left out); the table has the other metrics.",
            _charts.distribution(data.per_user, primary, model_by),
        )  # fmt: skip
    return "distributions", "Per-user values", body


def letters(data: PageData) -> Section | None:
    """Without a baseline, the main part's comparison: each model's mean and letters per metric
    (recframe.compare_letters of every pair); the pairs themselves are in the appendix."""
    made = pairs(data, with_pairs=False)
    if made is None:
        return None
    return "letters", "Every pair of models: who differs from whom", made[2]


def segments(data: PageData, key: str) -> Section | None:
    """The compact segment view: the headline metric's mean per group of `key` (and fold) and
    model, the best of a row bold, ▲ / ▼ where a model differs significantly from the baseline
    within the group, and the rows whose best model is not the verdict's named."""
    r, head = data.request, data.headline
    if head is None or not r.model_keys or head not in data.per_user.columns:
        return None
    model, keys = r.model_keys[0], [key, *r.truth_keys]
    means = data.per_user.group_by([*keys, model]).agg(pl.col(head).mean()).sort([*keys, model], nulls_last=True)
    models = [m for m in data.models if m in set(means.get_column(model))]
    overall = standing(data, head)
    winners = {m for m, _ in overall.best} if overall is not None else set()
    within = data.segment_comparisons.get(key)
    marks: dict[tuple[Any, ...], bool] = {}
    if isinstance(within, pl.DataFrame):
        for found in within.filter((pl.col("metric") == head) & pl.col("significant")).iter_rows(named=True):
            at = tuple(found[k] for k in keys) + (found["model"],)
            marks[at] = (found["delta"] > 0) == _tables.higher_is_better(head)
    rows: list[list[Any]] = []
    differ = 0
    for part in means.partition_by(keys, maintain_order=True):
        values = dict(zip(part.get_column(model), part.get_column(head)))
        cells = [values.get(m) for m in models]
        best = best_rows(cells, r.precision, _tables.higher_is_better(head))
        group = tuple(part.row(0, named=True)[k] for k in keys)
        row: list[Any] = [(f'<span class="nowrap">{escape(" / ".join(map(str, group)))}</span>',)]
        for i, m in enumerate(models):
            row.append((_value(values.get(m), r.precision, i in best, marks.get((*group, m)), data.baseline),))
        leaders = {str(models[i]) for i in best} or {str(models[i]) for i, x in enumerate(cells) if x is not None}
        other = bool(winners) and not leaders & winners
        differ += other
        # (the verdict's best is said once, in the header: a row names its best only where it differs)
        row.append(
            (
                f"<strong>{escape(', '.join(sorted(leaders)))}</strong>"
                if other or not winners
                else '<span class="nowrap">as overall</span>',
            )
        )
        rows.append(row)
    header = [" / ".join(keys), *map(str, models), "best"]
    body = table(header, rows, [False] + [True] * len(models) + [False], keep=True)
    notes = [
        f"The mean {head} of each {key} group's users per model"
        + (f", within each {', '.join(r.truth_keys)}" if r.truth_keys else "")
        + f". Bold: the best value of the row (ties at {r.precision} decimals all bold). best: the row's best model "
        + (
            "where it is not the verdict's " + " or ".join(sorted(winners)) + f" ({differ} of {len(rows)} rows), else as overall."
            if winners
            else ""
        )
    ]
    if marks:
        notes.append(
            f"{BETTER} / {WORSE}: significantly better / worse than the baseline {data.baseline} within the group (Holm's "
            f"correction over the comparisons within the {key} groups)."
        )
    elif isinstance(within, pl.DataFrame):
        notes.append(f"No mark: no model differs significantly from the baseline {data.baseline} within a {key} group.")
    return f"segments-{_slug(key)}", f"{head} by {key}", body + note(" ".join(notes))


def segment(data: PageData, key: str) -> Section:
    """A user attribute: recframe.disparity between its groups, and each group's mean."""
    body = f"<p>{escape(key)} is a user attribute (a column of users=): each group's mean, the largest gap and an unpaired test.</p>\n"
    gaps = data.segments[key]
    if isinstance(gaps, str):
        body += note(gaps)
    elif gaps is not None:
        body += wrap(link_cells(report(gaps, format="html", precision=data.request.precision)), keep_note=False)
        body += note(
            "Each group's mean, with its users in parentheses. Bold: the highest group mean of the row (when the "
            "groups differ). difference: the highest mean minus the lowest, with its bootstrap interval; ratio: the "
            "lowest over the highest; mad: the mean absolute difference over every pair of groups. "
            + (f"{MARKER} beside a difference: the highest and the lowest group differ significantly (adjusted "
               "p-value below alpha, Holm's correction over the rows)." if gaps["significant"].any() else
               "No difference is significant (adjusted p-value below alpha).")
        )  # fmt: skip
    body += _segment_comparison(data, key)
    model = f" and {data.request.model_keys[0]}" if data.request.model_keys else ""
    body += _groups(data, key, f"Mean {data.primary} per {key} group{model}, with bootstrap intervals.")
    return f"segment-{_slug(key)}", f"Segments: {key}", body


def _segment_comparison(data: PageData, key: str) -> str:
    """Each model against the baseline within each group of `key`: the paired table of the main comparison."""
    within = data.segment_comparisons.get(key)
    if within is None:
        return ""
    body = f"<h3>Each model against {escape(data.baseline)} within each {escape(key)} group</h3>\n"
    if isinstance(within, str):
        return body + note(within)
    body += wrap(link_cells(_directed(report(within, format="html", precision=data.request.precision), within)))
    return body + note(
        f"The paired comparison against {data.baseline}, made within each {key} group: the same users' values, "
        f"the same test ({'paired t test' if data.test == 'paired_t' else 'randomization test'}), Holm's correction "
        "over every row of this table. delta: the model's mean minus the baseline's within the group, with its 95% "
        "interval (not adjusted); rel_delta: delta over the baseline's mean. "
        + marks_note(data.baseline, "a delta")
        + " Bold: the best delta of each metric and group among the models."
    )


def fold(data: PageData, key: str) -> Section:
    """A truth key: the spread of each value's mean, and each value's mean."""
    body = f"<p>{escape(key)} is a truth key (a fold): each value is evaluated on its own; the summary above has a column per {escape(key)}.</p>\n"
    spread, keys = data.folds[key], [m for m in data.request.main_by if m != key] or ["group"]
    values, precision = [c for c in spread.columns if c not in keys], data.request.precision
    body += table(
        [*keys, *values],
        [[*(r[c] for c in keys), *(format_number(r[c], precision) for c in values)] for r in spread.iter_rows(named=True)],
        [False] * len(keys) + [True] * len(values),
    )
    body += note(
        f"Each {key} is evaluated on its own; mean: the average of its means (one per {key}, n_{key} of them), "
        f"std: how far they spread (standard deviation, ddof=1).",
        end="",
    )
    body += _groups(data, key, f"Mean {data.primary} per {key}, with bootstrap intervals.")
    return f"fold-{_slug(key)}", f"Folds: {key}", body


def _groups(data: PageData, key: str, caption: str) -> str:
    """Each group of `key`'s mean of the primary metric per model, with bootstrap intervals."""
    r = data.request
    if data.primary is None:
        return ""
    model = r.model_keys[0] if r.model_keys else None
    return figures.figure(
        caption, _charts.groups(data.per_user, key, data.primary, by=model, seed=r.seed, n_resamples=r.n_resamples)
    )


#: what each agreement measure says, in the page's caption
AGREES = (
    "overlap: |A ∩ B| / k, the share of the top k the two lists have in common; "
    "jaccard: |A ∩ B| / |A ∪ B|, the common items over all the items of either list; "
    "rbo: rank-biased overlap (Webber, Moffat and Zobel 2010, extrapolated, p = 0.9), the overlap at every depth "
    "weighted towards the top: 1 for the same list, 0 for lists with nothing in common; "
    "kendall_tau: Kendall's tau-b of the order the two models give the items both recommend (1 the same order, "
    "-1 reversed; users with fewer than two common items left out: n_tau counts the others). "
)


def agreement(data: PageData) -> Section | None:
    """How far the models' top-k lists agree, per pair (recframe.agreement, averaged over users)."""
    frame, r = data.agreement, data.request
    if frame is None:
        return None
    body = f"<p>How far each pair of models recommends the same items in the same order, in the top {r.kmax}.</p>\n"
    if isinstance(frame, str):
        return "agreement", "Agreement between models", body + note(frame)
    keys = [*r.truth_keys, "model_a", "model_b"]
    measures = ["users", "overlap", "jaccard", "rbo", "kendall_tau", "n_tau"]
    rows = [
        [*(row[k] for k in keys), *(format_number(row[m], r.precision) for m in measures)] for row in frame.iter_rows(named=True)
    ]
    body += table([*keys, *measures], rows, [False] * len(keys) + [True] * len(measures))
    body += note(
        f"Means over the users with a list from either model (users), at k = {r.kmax}: " + AGREES
        + "A pair with the same mean metric can still recommend different items."
    )  # fmt: skip
    return "agreement", "Agreement between models", body


def turned(frame: pl.DataFrame, keys: list[str], precision: int) -> str:
    """A summary-like frame turned: one row per count or metric column, one column per group
    (model), the best value of a metric's row bold. It stays narrow whatever the metrics."""
    groups = list(frame.iter_rows(named=True))
    columns = [c for c in frame.columns if c not in keys]
    metrics = set(_tables.metric_columns(frame.columns))
    rows: list[list[Any]] = []
    for column in columns:
        values = [g[column] for g in groups]
        best = best_rows(values, precision, _tables.higher_is_better(column)) if column in metrics else set()
        rows.append([(linked(column),), *((_value(value, precision, i in best),) for i, value in enumerate(values))])
    return table(["", *(label(g, keys) for g in groups)], rows, [False] + [True] * len(groups))


def beyond(data: PageData) -> Section | None:
    """Beyond accuracy (train=, items=): coverage, Gini, novelty and popularity, against nDCG."""
    frame, kmax = data.beyond, data.request.kmax
    if frame is None:
        return None
    body = turned(frame, data.request.main_by, data.request.precision)
    body += note(
        "Bold: the best value of each metric's row (highest, or lowest where lower is better: gini, popularity). "
        "n_users: the lists every metric of the row counts; n_users_<metric>: the own count of a metric that "
        "counts more (nDCG counts users with relevant items but nothing recommended, at 0; novelty and popularity "
        "need a recommended list). n_skipped and the rest: as in What was evaluated."
    )
    y = f"ndcg@{kmax}"
    for x in (f"catalog_coverage@{kmax}", f"novelty@{kmax}"):
        if x in frame.columns and y in frame.columns:
            body += figures.figure(f"{y} against {x}, one point per group.", _charts.tradeoff(frame, x, y, data.request.main_by))
    body += '<p class="note">catalog_coverage: the share of the catalog recommended within k; gini: how unequally the ' \
            "recommendations spread over the catalog (0: evenly, 1: one item); novelty: the mean self-information of the " \
            "recommended items (training popularity).</p>\n"  # fmt: skip
    return "beyond", "Beyond accuracy", body


def item_groups(data: PageData) -> Section | None:
    """The exposure of item groups (item_group=): recframe.item_groups, and each group's share."""
    frame, keys, kmax = data.item_groups, data.request.main_by, data.request.kmax
    if frame is None:
        return None
    body = wrap(report(frame, format="html", precision=data.request.precision), keep_note=False)
    body += note(
        "catalog_share, relevant_share: the group's share of the catalog and of the relevant (user, item) pairs; "
        "rec_share: of the recommendation slots within k; exposure_share: of the exposure, 1 / log2(1 + rank) "
        "summed over the slots; exposure/relevant: the two shares' ratio, bold outside 0.5 to 2 (the group is shown "
        "at less than half, or more than twice, its share of what users liked); group_recall: the hits on the "
        "group's relevant items over them."
    )
    if len(keys) <= 1:
        body += figures.figure(
            f"Each item group's share of the exposure within the top {kmax} per group, beside its share of the "
            "relevant items (grey).",
            _charts.exposure(frame, kmax, keys[0] if keys else None),
        )
    return "fairness", f"Item groups: {data.request.item_group}", body


def examples(data: PageData) -> Section:
    """A few users' lists side by side (recframe.side_by_side), per rule they are chosen by."""
    r, primary = data.request, data.primary
    if r.user is None or primary is None:
        body = note("Not shown: the evaluation has no user column (user=None) or no per-user metric.")
    elif data.examples_error is not None:
        body = note(data.examples_error)
    else:
        each = f" of each {' and '.join(r.attr_keys)}" if r.attr_keys else ""
        many = PER_SEGMENT if r.attr_keys else EXAMPLES
        rules = {
            "worst": f"the {many} users{each} with the lowest {primary}, averaged over their lists",
            "disagree": f"the {many} users{each} whose {primary} differs most between two models",
            "random": f"{many} users{each} drawn at random (seed {0 if r.seed is None else r.seed})",
        }
        body = ""
        keys = [*r.model_keys, *r.truth_keys]
        for select, ids in data.examples.items():
            values = data.per_user.filter(pl.col(r.user).is_in(ids)).select(r.user, *keys, primary)
            tie = note(data.ties[select]) if select in data.ties else ""
            body += f"<h3>{escape(select.capitalize())}: {escape(rules[select])}</h3>\n{tie}"
            shown = data.inspected.filter(pl.col(r.user).is_in(ids))
            # per segment, in the order chosen, each headed by its segment
            apart = bool(r.attr_keys) and all(a in shown.columns for a in r.attr_keys)
            groups = shown.partition_by(list(r.attr_keys), maintain_order=True, as_dict=True) if apart else {(): shown}
            for group, part in sorted(groups.items(), key=lambda g: tuple(map(str, g[0]))):
                where = ", ".join(f"{a} {v}" for a, v in zip(r.attr_keys, group)) if apart else ""
                heading = f'<h4 class="segment-of">{escape(where)}</h4>\n' if where else ""
                body += f'{heading}<div class="examples">{side_by_side(part, values=values).to_html()}</div>\n'
    return "examples", "Example users", body


def linked(column: str) -> str:
    """A metric column's name linked to its glossary entry (other text escaped as it is)."""
    name = _tables.metric_of(column)
    return f'<a href="#g-{escape(name)}">{escape(column)}</a>' if name is not None else escape(column)


def link_cells(report_html: str) -> str:
    """recframe.report's HTML with each cell holding a metric column's name linked to the glossary."""
    return re.sub(r"<td>([A-Za-z0-9_@.]+)</td>", lambda m: f"<td>{linked(html.unescape(m.group(1)))}</td>", report_html)


#: the symbols of the formulas, as recframe.metrics defines them
SYMBOLS = (
    "For one user: k the cut-off, R the relevant items, a hit a relevant item ranked <= k, n the items of the list "
    "ranked <= k; with train=: u(i) the distinct training users of item i, N the training users, P the training "
    "(user, item) pairs; over a model's lists: c(i) the lists ranking item i <= k, C the sum of c(i), n_cat the "
    "catalog's size. recframe.metrics documents each formula; the conventions table above says which variant ran."
)


def glossary(data: PageData) -> Section:
    """What each metric on the page measures: its formula and what the registry declares of it."""
    columns = [*data.summary.columns, *(data.beyond.columns if data.beyond is not None else [])]
    if data.comparison is not None:
        columns += data.comparison.get_column("metric").unique(maintain_order=True).to_list()
    entries = "".join(
        f'<dt id="g-{escape(name)}"><code>{escape(name)}</code></dt><dd>{escape(formula)} '
        f'<span class="note">{escape(facts)}</span></dd>'
        for name, formula, facts in registry_docs.entries(columns)
    )
    return "glossary", "Glossary of the metrics", note(SYMBOLS) + f'<dl class="glossary">{entries}</dl>\n'


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "key"
