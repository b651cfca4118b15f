"""One self-contained HTML page per evaluation: what was evaluated, under which conventions, the
summary with intervals and significance, the paired comparison, curves, per-user
distributions, segments and folds, beyond-accuracy and fairness sections, and example users.

The page is one file with no external script, stylesheet, font or image: figures are inline
SVG drawn with matplotlib (``recframe[plot]``), tables are ``<table>`` elements, and every value
is escaped. It opens offline, e.g. from an e-mail attachment.
"""

from __future__ import annotations

import datetime
import html
import io
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import narwhals as nw
import polars as pl

from recframe import _atomic, _call, _checks, _engine, _frames, _inspect, _intervals, _side, _tables, conventions, profiles
from recframe import _names as n
from recframe import _validate as v
from recframe import options as options_table
from recframe.errors import RecframeError, fix, ref
from recframe.options import PER_USER_NAMES, SUMMARY_NAMES
from recframe.report import MARKER, MAX_PRECISION, _best, _number
from recframe.stats import Test

#: what the page says where a figure would be, without matplotlib
NO_PLOT = 'Figures need matplotlib: pip install "recframe[plot]" draws them.'
#: the keys of one ``inputs=`` entry
INPUT_KEYS = ("input", "file", "rows", "sha256")
#: the side inputs given as frames, in the order the page lists them
FRAME_INPUTS = ("recs", "truth", "users", "exclude", "train", "items")
#: the count columns of summary, and what each means
COUNTS = {
    "n_users": "counted in the means",
    "n_skipped": "left out of the means (the sum of the reasons below that are skipped)",
    "n_unranked": "relevant items but nothing recommended (counted, scoring 0, unless unranked_users='skip')",
    "n_no_relevant": "judged items but none relevant (skipped unless empty_users='zero')",
    "n_no_truth": "recommended to but absent from the truth (skipped unless empty_users='zero')",
}

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: #1f2328; margin: 0; background: #fff; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 16px 24px 48px; box-sizing: border-box; }
h1 { font-size: 1.6em; margin: 0.4em 0 0.2em; }
h2 { font-size: 1.25em; margin: 1.8em 0 0.5em; padding-bottom: 0.2em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
p, li { max-width: 80ch; }
nav ol { columns: 3; padding-left: 1.4em; margin: 0.4em 0; }
.note { color: #57606a; font-size: 0.92em; }
.halves { display: flex; flex-wrap: wrap; gap: 0 24px; align-items: flex-start; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1em; }
table { border-collapse: collapse; font-size: 0.88em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; vertical-align: top; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; white-space: nowrap; }
.ci { color: #57606a; font-size: 0.9em; }
figure { margin: 0.6em 0 1.2em; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: #57606a; font-size: 0.9em; max-width: 80ch; }
code { background: #f6f8fa; padding: 0 3px; border-radius: 3px; }
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _label(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return " / ".join(str(row[k]) for k in keys) if keys else "all"


# ---------------------------------------------------------------------------- arguments


def _check_out(out: Any) -> Path | None:
    if out is None:
        return None
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise RecframeError(f"{ref('out', out)} is not a file path. Hint: pass e.g. {fix('out', 'report.html')}.")
    found = _atomic.path_problem(out, "report.html")
    if found is not None:
        hint = "create it first" if found.missing_folder else f"pass a file's path, e.g. {fix('out', found.example)}"
        raise RecframeError(f"{ref('out', str(out))} {found.problem}. Hint: {hint}.")
    return Path(out)


def _check_inputs(inputs: Any) -> list[dict[str, Any]] | None:
    if inputs is None:
        return None
    hint = (
        f"pass a list of dicts with the keys {list(INPUT_KEYS)}, e.g. "
        f"{fix('inputs', [{'input': 'recs', 'file': 'recs.parquet', 'rows': 100}])}."
    )
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise RecframeError(f"{ref('inputs', inputs)} is not a list of input descriptions.", hint)
    rows = []
    for entry in inputs:
        if not isinstance(entry, Mapping) or not all(isinstance(key, str) and key in INPUT_KEYS for key in entry):
            raise RecframeError(f"{ref('inputs')} holds {entry!r}, which is not a dict with keys among {list(INPUT_KEYS)}.", hint)
        rows_value = entry.get("rows")
        if rows_value is not None and (isinstance(rows_value, bool) or not isinstance(rows_value, int) or rows_value < 0):
            raise RecframeError(f"{ref('inputs')}: 'rows' must be a whole number >= 0, not {rows_value!r}.", hint)
        rows.append(dict(entry))
    return rows


def _rows_of(frame: Any, arg: str) -> int:
    """The rows of a frame (a count query on a lazy one)."""
    if isinstance(frame, pl.DataFrame):
        return frame.height
    lf, _ = _frames.to_lazy(frame, arg)
    return int(lf.select(nw.len()).collect().item())


def _in_memory(frame: Any, arg: str) -> Any:
    """pandas and Arrow inputs as one Polars DataFrame, converted once for every call of the
    page (a Polars frame, LazyFrame or engine frame is passed as it is)."""
    if frame is None or isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        return frame
    lf, kind = _frames.to_lazy(frame, arg)
    if kind in ("pandas", "pyarrow"):
        return lf.to_native().collect()
    return frame


def _columns(frame: Any, arg: str) -> list[str]:
    lf, _ = _frames.to_lazy(frame, arg)
    return list(_frames.schema_of(lf, arg))


# ---------------------------------------------------------------------------- figures


def _matplotlib() -> Any:
    """matplotlib.pyplot, or None when the plot extra is not installed."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


class _Figures:
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
            return f'<p class="note">{_e(NO_PLOT)}</p>'
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
        text = text.replace("<svg ", f'<svg role="img" aria-label="{_e(caption)}" ', 1)
        return f"<figure>{text}<figcaption>{_e(caption)}</figcaption></figure>"


# ---------------------------------------------------------------------------- tables


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None) -> str:
    """A plain ``<table>`` of escaped values (cells given as (html,) tuples are inserted as is)."""

    def cell(value: Any, j: int) -> str:
        body = value[0] if isinstance(value, tuple) else _e(value)
        return f'<td class="num">{body}</td>' if numeric and numeric[j] else f"<td>{body}</td>"

    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(cell(value, j) for j, value in enumerate(row)) + "</tr>" for row in rows)
    return f'<div class="scroll"><table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table></div>\n'


def _halves(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A long table as two tables side by side (one below the other on a narrow screen)."""
    half = (len(rows) + 1) // 2
    return f'<div class="halves">{_table(header, rows[:half])}{_table(header, rows[half:])}</div>\n'


def _wrap(report_html: str) -> str:
    """A recframe.report HTML table in a scrolling box (its note after it)."""
    table, _, rest = report_html.partition("</table>")
    return f'<div class="scroll">{table}</table></div>{rest}'


def _summary_table(
    summary: pl.DataFrame, keys: list[str], precision: int, significant: set[tuple[Any, ...]], baseline: Any
) -> str:
    """The summary transposed: one row per metric, one column per group (model), each mean with
    its interval, the best of a row bold, a dagger where it differs significantly from the
    baseline."""
    metrics = _tables.metric_columns(summary.columns)
    groups = list(summary.iter_rows(named=True))
    header = ["", *(_label(g, keys) for g in groups)]
    rows: list[list[Any]] = []
    for count in ("n_users", "n_skipped"):
        if count in summary.columns:
            rows.append([count, *(g[count] for g in groups)])
    for metric in metrics:
        values = [g[metric] for g in groups]
        best = _best(values, precision, _tables.higher_is_better(metric))
        cells: list[Any] = [metric]
        for i, g in enumerate(groups):
            text = _e(_number(g[metric], precision))
            if i in best and text:
                text = f"<strong>{text}</strong>"
            if (*(g[k] for k in keys), metric) in significant:
                text += f"<sup>{MARKER}</sup>"
            if g.get(f"{metric}_lo") is not None and g.get(f"{metric}_hi") is not None:
                interval = f"[{_number(g[metric + '_lo'], precision)}, {_number(g[metric + '_hi'], precision)}]"
                text += f' <span class="ci">{_e(interval)}</span>'
            cells.append((text,))
        rows.append(cells)
    out = _table(header, rows, [False] + [True] * len(groups))
    notes = []
    if any(f"{m}_lo" in summary.columns for m in metrics):
        notes.append("[lo, hi]: the interval of the mean.")
    notes.append(f"Bold: the best value of the row ({precision} decimals).")
    if significant:
        notes.append(f"{MARKER}: significantly different from the baseline {baseline} (adjusted p-value below alpha).")
    return out + f'<p class="note">{_e(" ".join(notes))}</p>\n'


# ---------------------------------------------------------------------------- the page


class _Page:
    def __init__(self) -> None:
        self.sections: list[tuple[str, str, str]] = []  # (anchor, title, body)

    def add(self, anchor: str, title: str, body: str) -> None:
        self.sections.append((anchor, title, body))

    #: the order of the sections, whatever order they are made in (by the anchor's first word)
    ORDER = ("evaluated", "summary", "comparison", "curves", "distributions", "segment", "fold", "beyond", "fairness", "examples")

    def html(self, title: str, lead: str) -> str:
        self.sections.sort(key=lambda s: self.ORDER.index(s[0].split("-")[0]))  # (stable: segments keep their order)
        nav = "".join(f'<li><a href="#{a}">{_e(t)}</a></li>' for a, t, _ in self.sections)
        body = "\n".join(f'<section id="{a}">\n<h2>{_e(t)}</h2>\n{b}</section>' for a, t, b in self.sections)
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n"
            f"<h1>{_e(title)}</h1>\n{lead}\n<nav><ol>{nav}</ol></nav>\n{body}\n</main>\n</body>\n</html>\n"
        )


def _conventions_rows(options: dict[str, Any], k: list[int], metrics: Any, ci: Any) -> list[list[Any]]:
    profile = options.get("profile") or options_table.DEFAULTS["profile"]
    chosen = profiles.PROFILES.get(profile)
    set_by = chosen.options if chosen is not None else {}
    threshold = options.get("threshold")
    relevance = options.get("relevance") or options_table.DEFAULTS["relevance"]
    score = options.get("score")
    rows: list[list[Any]] = [
        ["profile", profile, "given" if options.get("profile") else "default"],
        ["k", ", ".join(map(str, k)), "given"],
        ["metrics", "default" if metrics is None else ", ".join(map(str, metrics)), "given" if metrics else "default"],
        [
            "relevant",
            f"{relevance} >= {threshold}" if threshold is not None else f"{relevance} > 0",
            "given" if threshold is not None else "default",
        ],
        [
            "ranking",
            f"by {score}, highest first" if score else f"the {options.get('rank') or 'rank'} column",
            "given" if score or options.get("rank") else "default",
        ],
    ]
    for name in conventions.CHOICES:
        if options.get(name) is not None:
            rows.append([name, options[name], "given"])
        elif name in set_by:
            rows.append([name, set_by[name], f"profile {profile}"])
        else:
            rows.append([name, conventions.DEFAULTS[name], "default"])
    if chosen is not None and chosen.per_metric:
        for metric, values in chosen.per_metric.items():
            shown = ", ".join(f"{o}={val!r}" for o, val in values.items() if options.get(o) is None)
            if shown:
                rows.append([f"{metric} (per metric)", shown, f"profile {profile}"])
    for name in ("ci_method", "n_resamples", "seed", "check_duplicates", "head_share"):
        value = options.get(name, options_table.DEFAULTS[name])
        rows.append([name, value, "given" if name in options else "default"])
    rows.insert(2, ["ci (interval coverage)", "none" if ci is None else ci, "given"])
    return rows


def _checks_run(kwargs: dict[str, Any]) -> list[str]:
    """The data checks the evaluation ran (each would have stopped it with an error)."""
    spec = v.check_arguments(kwargs)
    c, conv = spec.columns, spec.conventions
    keys = ", ".join(["user", "item", *c.by]) if c.user is not None else ", ".join(["item", *c.by])
    out = [f"no null value in the {keys} columns"]
    scope = _checks.duplicate_scope(spec)
    if scope == "all":
        out.append("no item and no rank repeated within a list, on every row")
    elif scope == "used":
        out.append(
            "no item and no rank repeated within a list, on the rows that can change a number "
            "(relevant rows and rows ranked within the largest k)"
        )
    else:
        out.append("duplicates not checked (check_duplicates=False): a duplicate would give wrong numbers silently")
    if c.score is not None:
        out.append(f"no NaN score in {c.score!r}")
    else:
        out.append(f"ranks in {c.rank!r} are whole numbers >= 1")
        if conv.rank_gaps == "error" and not spec.facts.with_exclude:
            out.append("no gap in the ranks of a list (rank_gaps='error')")
    out.append(f"no NaN or infinite relevance in {c.relevance!r}")
    if conv.gain == "exp2":
        out.append("no grade so large that 2**grade - 1 overflows (gain='exp2')")
    if spec.facts.with_users:
        out.append("users= has one row per user, with every by key it holds")
        if spec.selection.unlisted_users == "error":
            out.append("no recommended user outside users= (unlisted_users='error')")
    if conv.empty_users == "error":
        out.append("every user has a relevant item (empty_users='error')")
    if _side.needs_catalog(spec):
        out.append("every item ranked within k is in the catalog (items=, else the training items)")
    if kwargs.get("train") is not None:
        out.append("train= has a user and an item column, no null")
    if kwargs.get("items") is not None:
        out.append("items= has one row per item")
    return out


def _summary_and_per_user(
    frame: Any, k: Any, metrics: Any, options: dict[str, Any], ci: Any
) -> tuple[Callable[[], pl.DataFrame], pl.DataFrame] | None:
    """``summary(frame, k, metrics, ci=ci, **options)`` and ``per_user(frame, k, metrics, ...)``
    from one pass over the data: the per-user plan is computed once, then the summary with its
    intervals is taken from it as :func:`recframe.summary` takes it (the same plan and the same
    code, :func:`recframe._intervals.summary_with_ci`), and the public per-user frame as
    :func:`recframe.per_user` gives it. Returns a function computing the summary (the bootstrap,
    which can run while the per-user frame is used) and the per-user frame. None where the calls
    must run themselves (no interval, another aggregate, group-level metrics, a SQL engine): they
    check and refuse as usual."""
    kwargs = _call.resolve(k, metrics, {**options, "ci": ci}, SUMMARY_NAMES, "summary")
    interval = {name: kwargs.pop(name) for name in ("ci", "ci_method", "n_resamples", "seed")}
    aggregate = kwargs.pop("aggregate")
    if ci is None or aggregate != "mean" or _frames.sql_engine(frame) is not None:
        return None
    if v.group_level(kwargs["metrics"]):
        return None
    level, method, n_resamples, seed = _intervals.check_options(**interval)
    assert level is not None  # ci is given
    v.check_per_user_metrics(kwargs["metrics"])
    plan, spec, _ = _call.prepare(frame, kwargs)
    users = plan.per_user.to_native().collect()  # (the data checks run here)
    once = _engine.Plan(nw.from_native(users.lazy()))
    rows = _engine.per_user_rows(once.per_user, spec).sort([*spec.columns.by, n.USER])

    def summary() -> pl.DataFrame:
        return _intervals.summary_with_ci(once, spec, level, method, n_resamples, seed).to_native().collect()

    return summary, _call.user_column(rows, spec).to_native().collect()


def _polars(frame: Any, arg: str) -> pl.DataFrame:
    if isinstance(frame, pl.LazyFrame):
        return frame.collect()
    return _tables.eager(frame, arg)


def report_page(
    recs: Any,
    *,
    truth: Any = None,
    baseline: Any = None,
    k: int | Sequence[int] = 10,
    ci: float | None = 0.95,
    train: Any = None,
    items: Any = None,
    inputs: Sequence[Mapping[str, Any]] | None = None,
    out: str | os.PathLike[str] | None = None,
    metrics: Sequence[str] | None = None,
    precision: int = 3,
    **options: Any,
) -> str:
    """One self-contained HTML page of an evaluation: everything a colleague needs to read it.

    The page holds, for the models in the data: what was evaluated (the inputs, their rows and
    content hashes, the users counted and skipped with the reasons, the data checks that ran,
    every convention and its value, recframe's version, the time); the summary with intervals
    and significance markers against ``baseline``; the paired comparison as a figure and a
    table; precision-recall and nDCG-vs-k curves; the distribution of per-user values (how many
    users score 0); one section per ``by`` key that is a user attribute (``users=``) or a truth
    key (a fold); beyond-accuracy metrics with ``train=`` / ``items=``; the exposure of item
    groups with ``item_group=``; and example users when :func:`recframe.inspect` is available.

    Parameters
    ----------
    recs : frame
        Recommendations (or a frame with ranks and relevance), as :func:`recframe.summary`
        takes them. pandas and Arrow inputs are converted to Polars once for the whole page.
    truth : frame, optional
        Ground truth, as in :func:`recframe.summary`.
    baseline : value of the model column, optional
        The model the others are compared with (:func:`recframe.compare`, paired t test with
        Holm's correction, or the randomization test without scipy); needs one model key in
        ``by``. Without it the page has no comparison.
    k : int or list of int, default 10
        Cut-offs of the summary; the largest is the one of the figures, and the curves run
        from 1 to it.
    ci : float or None, default 0.95
        Coverage of the intervals of the means (None: none).
    train, items : frame, optional
        Training interactions and the catalog: they add the beyond-accuracy section (novelty,
        popularity, catalog coverage, Gini) and, with ``item_group=``, the item-groups section.
    inputs : list of dict, optional
        What the inputs were, one dict per file with the keys ``"input"`` (``"recs"``,
        ``"truth"``, ...), ``"file"``, ``"rows"`` and ``"sha256"`` (the command line passes the
        files it read). Default: the row count of each frame given.
    out : str or path, optional
        Also write the page to this file (atomically: a temporary file renamed onto it).
    metrics : list of str, optional
        The metrics of the summary and the comparison (default: summary's).
    precision : int, default 3
        Decimals of the numbers shown, from 0 to 17.
    **options
        Any option of :func:`recframe.summary` (``score=``, ``relevance=``, ``threshold=``,
        ``by=``, ``users=``, ``exclude=``, ``profile=``, conventions, ``seed=``, ...).

    Returns
    -------
    str
        The page, a complete HTML document.

    Notes
    -----
    Figures are inline SVG drawn with matplotlib; without it (``pip install "recframe[plot]"``)
    the page has every table and says which extra draws the figures. Nothing on the page loads
    from the network. The summary is :func:`recframe.summary` with ``ci=`` exactly; the
    comparison, the distributions and the segments come from one :func:`recframe.per_user`
    frame; the curves from one :func:`recframe.curve` call.

    Examples
    --------
    >>> import recframe
    >>> from recframe.data import load_sample
    >>> recs, truth = load_sample()
    >>> page = recframe.report_page(recs, truth=truth, baseline="popular", score="score", relevance="rating",
    ...                             threshold=4, by="model", metrics=["ndcg", "recall"], seed=0)
    >>> page.startswith("<!DOCTYPE html>"), "<table>" in page
    (True, True)
    """
    import recframe

    started = datetime.datetime.now(datetime.timezone.utc)
    path = _check_out(out)
    described = _check_inputs(inputs)
    if isinstance(precision, bool) or not isinstance(precision, int) or not 0 <= precision <= MAX_PRECISION:
        raise RecframeError(
            f"{ref('precision', precision)} is not a whole number from 0 to {MAX_PRECISION}.", f"pass {fix('precision', 3)}."
        )
    given = dict(options)
    options_table.resolve(given, SUMMARY_NAMES, "report_page")  # an unknown option raises here
    for name in ("truth", "train", "items", "ci"):  # (explicit arguments: never in options)
        given.pop(name, None)
    ks: list[Any] = [k] if isinstance(k, int) and not isinstance(k, bool) else list(k) if isinstance(k, (list, tuple)) else [k]
    frames = {
        "recs": recs,
        "truth": truth,
        "users": given.get("users"),
        "exclude": given.get("exclude"),
        "train": train,
        "items": items,
    }
    frames = {name: _in_memory(frame, name) for name, frame in frames.items()}
    recs, truth, train, items = frames["recs"], frames["truth"], frames["train"], frames["items"]
    for name in ("users", "exclude"):
        if frames[name] is not None:
            given[name] = frames[name]

    # where each by key lives: model keys, truth keys (folds), user attributes (segments)
    by = given.get("by")
    by_keys = [by] if isinstance(by, str) else list(by) if by is not None else []
    users_frame = given.get("users")
    user = given.get("user", options_table.DEFAULTS["user"])
    model_keys, truth_keys, attr_keys = v.classify_keys(
        by_keys,
        _columns(recs, "recs"),
        None if truth is None else _columns(truth, "truth"),
        None if users_frame is None else [c for c in _columns(users_frame, "users") if c != user],
    )
    main_by = [*model_keys, *truth_keys]
    if baseline is not None and len(model_keys) != 1:
        raise RecframeError(
            f"{ref('baseline', baseline)} names a model, which needs exactly one model key in {ref('by')} (a column "
            f"of the recommendations only); the call has {list(model_keys) or 'none'}.",
            f"pass e.g. {fix('by', 'model')}.",
        )
    item_group = given.pop("item_group", None)
    chosen = v.metric_names(metrics) if metrics is not None else None
    beyond_inputs = {"train": train} if chosen is not None and v.reads(chosen, "train", "catalog") and train is not None else {}
    if chosen is not None and v.reads(chosen, "catalog", "items", "item_features") and items is not None:
        beyond_inputs["items"] = items
    base_given = {name: value for name, value in given.items() if name != "baseline"}
    if chosen is not None and v.reads(chosen, "baseline"):
        base_given["baseline"] = baseline
    common = {**base_given, "truth": truth, **beyond_inputs}
    lists = {name: value for name, value in common.items() if name in PER_USER_NAMES}  # per_user's options
    base_lists = {name: value for name, value in base_given.items() if name in PER_USER_NAMES}
    kmax = max(int(x) for x in ks) if all(isinstance(x, int) for x in ks) and ks else 10

    # the numbers: summary with intervals (as summary gives them), one per-user frame
    figures = _Figures()
    page = _Page()
    plot = recframe.plot

    def curve_job() -> tuple[pl.DataFrame, list[str]]:
        """The curves, nDCG and precision-recall (precision and recall only for a profile without nDCG)."""
        for wanted in (["ndcg"], []):
            try:
                return _polars(recframe.curve(recs, wanted, kmax, **{**lists, "by": main_by or None}), "curve"), wanted
            except RecframeError:
                if not wanted:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def numbers_job() -> tuple[Callable[[], pl.DataFrame], pl.DataFrame]:
        """The summary with intervals (as a function) and the per-user frame: one pass when they
        share their keys (no segments), else the two calls."""
        shared = None if attr_keys else _summary_and_per_user(recs, ks, metrics, {**common, "by": main_by or None}, ci)
        if shared is not None:
            return shared
        table = _polars(recframe.summary(recs, ks, metrics, **{**common, "by": main_by or None}, ci=ci), "summary")
        return (lambda: table), _polars(recframe.per_user(recs, ks, metrics, **{**lists, "by": by_keys or None}), "per_user")

    # Polars releases the GIL: the summary and the per-user frame compute in a thread while the
    # curves are computed and drawn here
    with ThreadPoolExecutor(max_workers=2) as pool:
        numbers = pool.submit(numbers_job)
        try:
            curve, curve_metrics = curve_job()
        except RecframeError:
            numbers.result()  # the summary's own error first, when it has one: it names the argument as given
            raise
        # ---- curves
        curve_k = kmax
        panels = ["pr", *curve_metrics]
        body = figures.svg(
            f"Precision against recall at k = 1..{curve_k} (one point per k)"
            + (", and nDCG by k" if curve_metrics else "")
            + ": recframe.curve, the means of summary at every cut-off.",
            plot.curve, curve, panels,
        )  # fmt: skip
        at = [x for x in (1, 5, 10, 20, 50) if x <= curve_k]
        shown = curve.filter(pl.col("k").is_in(at))
        body += _table(
            [*main_by, "k", *(m for m in ("precision", "recall", "ndcg") if m in curve.columns)],
            [[*(r[kk] for kk in main_by), r["k"], *(_number(r[m], precision) for m in ("precision", "recall", "ndcg") if m in curve.columns)]
             for r in shown.iter_rows(named=True)],
            [False] * len(main_by) + [True] * 4,
        )  # fmt: skip
        page.add("curves", "Metrics against k", body)
        summary_of, per_user = numbers.result()
        summary_job = pool.submit(summary_of)  # the bootstrap, while the comparison and its figures are made
        metric_columns = _tables.metric_columns(per_user.columns)
        primary = next(
            (c for c in (f"ndcg@{kmax}", f"recall@{kmax}") if c in metric_columns), metric_columns[0] if metric_columns else None
        )
        shown_metrics = [
            c for c in (f"ndcg@{kmax}", f"recall@{kmax}", f"precision@{kmax}") if c in metric_columns
        ] or metric_columns[:1]
        seed = given.get("seed")
        n_resamples = given.get("n_resamples", options_table.DEFAULTS["n_resamples"])
        # inspect reads only the chosen users' rows: in a thread, while the figures are drawn
        examples_job = pool.submit(
            _example_users, recs, kmax, per_user, user, primary, model_keys, truth_keys, 0 if seed is None else seed,
            {**base_lists, "truth": truth, "train": train, "items": items},
        )  # fmt: skip

        comparison = None
        test: Test = "paired_t"
        if baseline is not None:
            models = per_user.get_column(model_keys[0]).unique().to_list()
            baseline = next((m for m in models if m == baseline), next((m for m in models if str(m) == str(baseline)), baseline))
            try:
                import scipy  # noqa: F401
            except ImportError:
                test = "randomization"
            comparison = _polars(
                recframe.compare(per_user, by=[*model_keys, *truth_keys], baseline=baseline, test=test, seed=seed), "compare"
            )
        significant: set[tuple[Any, ...]] = set()
        if comparison is not None:
            for row in comparison.filter(pl.col("significant")).iter_rows(named=True):
                significant.add((row["model"], *(row[t] for t in truth_keys), row["metric"]))

        # ---- the paired comparison
        if comparison is not None:
            strata = ", ".join(truth_keys)
            caption = (
                f"Each model minus {baseline}, user by user: the delta of each metric with its {1 - 0.05:.0%} interval, "
                "not adjusted for multiple testing; a point is filled when that interval excludes 0, hollow when it "
                f"includes 0; {MARKER}: significant after Holm's correction over every row (adjusted p-value below 0.05"
                + (f"; compared within each {strata}" if strata else "")
                + "), which a filled point may not be."
            )

            # a metric beyond [0, 1] (dcg) would squash the others' deltas: it is in the table only
            wide = sorted({m for m, b, x in comparison.select("metric", "baseline_mean", "model_mean").iter_rows()
                           if max(abs(b or 0), abs(x or 0)) > 1})  # fmt: skip
            drawn = comparison.filter(~pl.col("metric").is_in(wide))
            if wide:
                caption += f" {', '.join(wide)} (not bounded by 1): in the table only."
            body = ""
            if drawn.height:
                body = figures.svg(caption, plot.compare, drawn, size=(7.5, 1.3 + 0.3 * drawn.height))
            test_name = "paired t test" if test == "paired_t" else "randomization test (scipy is not installed)"
            body += f"<p>{_e(test_name.capitalize())}, Holm's correction over every row, alpha 0.05.</p>\n"
            body += _wrap(recframe.report(comparison, format="html", precision=precision))
            page.add("comparison", f"Paired comparison against {baseline}", body)

        # ---- distributions
        body = ""
        dist_rows = []
        for metric in shown_metrics:
            groups = per_user.filter(pl.col(metric).is_not_null()).group_by(
                main_by or pl.lit("all").alias("group"), maintain_order=True
            )
            table = groups.agg(
                pl.len().alias("users"),
                (pl.col(metric) == 0).sum().alias("zero"),
                pl.col(metric).median().alias("median"),
                pl.col(metric).mean().alias("mean"),
            ).sort(main_by or "group")
            for r in table.iter_rows(named=True):
                name = _label(r, main_by) if main_by else "all"
                share = r["zero"] / r["users"] if r["users"] else math.nan
                dist_rows.append(
                    [
                        metric,
                        name,
                        r["users"],
                        f"{r['zero']:,} ({share:.0%})",
                        _number(r["median"], precision),
                        _number(r["mean"], precision),
                    ]
                )
        body += _table(
            ["metric", "group", "users", "users at 0", "median", "mean"], dist_rows, [False, False, True, True, True, True]
        )
        model_by = main_by[0] if len(main_by) == 1 else None
        if model_by is None and main_by:
            body += f'<p class="note">{_e("The histogram pools the groups of " + ", ".join(main_by) + ".")}</p>'

        if primary is not None:
            body += figures.svg(
                f"Per-user {primary}" + (f" by {model_by}" if model_by else "")
                + ": the users the mean counts (skipped users left out); the table has the other metrics.",
                plot.distribution, per_user, primary, by=model_by, size=(7.5, 3.2),
            )  # fmt: skip
        page.add("distributions", "Per-user values", body)

    summary = summary_job.result()

    # ---- what was evaluated
    if described is None:
        described = [{"input": name, "rows": _rows_of(frame, name)} for name, frame in frames.items() if frame is not None]
    # (frames have no file and no hash: those columns are left out when no input has them)
    input_columns = [c for c in INPUT_KEYS if c == "input" or any(d.get(c) is not None for d in described)]
    what = _table(
        input_columns,
        [[f"{d['rows']:,}" if c == "rows" and d.get(c) is not None else d.get(c, "") for c in input_columns] for d in described],
        [c == "rows" for c in input_columns],
    )
    count_columns = [c for c in COUNTS if c in summary.columns]
    counts = _table(
        [*(main_by or ["group"]), *count_columns],
        [[*(row[k] for k in main_by), *(row[c] for c in count_columns)] if main_by else ["all", *(row[c] for c in count_columns)]
         for row in summary.iter_rows(named=True)],
        [False] * max(len(main_by), 1) + [True] * len(count_columns),
    )  # fmt: skip
    reasons = "".join(f"<li><code>{_e(c)}</code>: {_e(COUNTS[c])}</li>" for c in count_columns)
    check_kwargs = {
        **options_table.resolve({**common, "by": by_keys or None}, SUMMARY_NAMES, "report_page"),
        "k": ks,
        "metrics": metrics,
    }
    explicit = {name: check_kwargs.pop(name) for name in conventions.DEFAULTS}
    resolved, check_kwargs["metrics"] = profiles.resolve(check_kwargs.pop("profile"), explicit, check_kwargs["metrics"])
    for name in ("ci", "ci_method", "n_resamples", "seed", "aggregate"):
        check_kwargs.pop(name)
    # (train= and items= are checked by the calls that read them: the beyond-accuracy and item-group sections)
    checks = _checks_run({**check_kwargs, **resolved, "item_group": item_group, "train": train, "items": items})
    roles = []
    for kind, keys in (("model keys", model_keys), ("truth keys (folds)", truth_keys), ("user attributes (segments)", attr_keys)):
        if keys:
            roles.append(f"{kind}: {', '.join(keys)}")
    page.add(
        "evaluated",
        "What was evaluated",
        "<h3>Inputs</h3>\n" + what
        + "<h3>Users counted and skipped</h3>\n" + counts + f'<ul class="note">{reasons}</ul>\n'
        + "<h3>Data checks that ran (all passed)</h3>\n<ul>" + "".join(f"<li>{_e(c)}</li>" for c in checks) + "</ul>\n"
        + ("<p>Keys: " + _e("; ".join(roles)) + ".</p>\n" if roles else "")
        + "<h3>Conventions</h3>\n"
        + _halves(["option", "value", "set by"], _conventions_rows({**given, "item_group": item_group}, ks, metrics, ci))
    )  # fmt: skip

    # ---- the summary
    body = _summary_table(summary, main_by, precision, significant, baseline)
    if baseline is None:
        body += '<p class="note">No baseline given: no significance markers (pass baseline= or --baseline).</p>\n'
    page.add("summary", "Summary", body)

    # ---- segments and folds
    for key in attr_keys:
        body = f"<p>{_e(key)} is a user attribute (a column of users=): each group's mean, the largest gap and an unpaired test.</p>\n"
        if model_keys:
            try:
                gaps = _polars(
                    recframe.disparity(per_user, group=key, by=[*model_keys, *truth_keys], metrics=shown_metrics,
                                       seed=seed, n_resamples=n_resamples),
                    "disparity",
                )  # fmt: skip
                body += _wrap(recframe.report(gaps, format="html", precision=precision))
            except RecframeError as error:
                body += f'<p class="note">{_e(error)}</p>\n'
        if primary is not None:
            body += figures.svg(
                f"Mean {primary} per {key} group" + (f" and {model_keys[0]}" if model_keys else "") + ", with bootstrap intervals.",
                plot.groups, per_user, key, primary, by=model_keys[0] if model_keys else None, seed=seed,
                n_resamples=n_resamples, size=(7.0, 3.4),
            )  # fmt: skip
        page.add(f"segment-{_slug(key)}", f"Segments: {key}", body)
    for key in truth_keys:
        body = f"<p>{_e(key)} is a truth key (a fold): each value is evaluated on its own; the summary above has a column per {_e(key)}.</p>\n"
        spread_keys = [m for m in main_by if m != key]
        metrics_here = [m for m in shown_metrics if m in summary.columns]
        spread = (
            summary.group_by(spread_keys or pl.lit("all").alias("group"), maintain_order=True)
            .agg(pl.len().alias(f"n_{key}"), *(pl.col(m).mean().alias(f"{m} mean") for m in metrics_here),
                 *(pl.col(m).std().alias(f"{m} std") for m in metrics_here))
            .sort(spread_keys or "group")
        )  # fmt: skip
        value_columns = [c for c in spread.columns if c not in (*spread_keys, "group")]
        body += _table(
            [*(spread_keys or ["group"]), *value_columns],
            [[*(r[c] for c in (spread_keys or ["group"])), *(r[c] if isinstance(r[c], int) else _number(r[c], precision) for c in value_columns)]
             for r in spread.iter_rows(named=True)],
            [False] * max(len(spread_keys), 1) + [True] * len(value_columns),
        )  # fmt: skip
        body += f'<p class="note">{_e(f"Mean and standard deviation over the values of {key} of each one’s mean.")}</p>'
        if primary is not None:
            body += figures.svg(
                f"Mean {primary} per {key}, with bootstrap intervals.",
                plot.groups, per_user, key, primary, by=model_keys[0] if model_keys else None, seed=seed,
                n_resamples=n_resamples, size=(7.0, 3.4),
            )  # fmt: skip
        page.add(f"fold-{_slug(key)}", f"Folds: {key}", body)

    # ---- beyond accuracy
    if train is not None or items is not None:
        wanted = [
            f
            for f in ("ndcg", "novelty", "popularity", "catalog_coverage", "gini")
            if train is not None or f in ("ndcg", "catalog_coverage", "gini")
        ]
        if train is None and items is not None:
            wanted = ["ndcg", "catalog_coverage", "gini"]
        beyond = _polars(
            recframe.summary(recs, kmax, wanted, **{**base_given, "truth": truth, "train": train, "items": items,
                                                   "by": main_by or None}),
            "summary",
        )  # fmt: skip
        body = _wrap(recframe.report(beyond, format="html", precision=precision))
        y = f"ndcg@{kmax}"
        for x in (f"catalog_coverage@{kmax}", f"novelty@{kmax}"):
            if x in beyond.columns and y in beyond.columns:
                body += figures.svg(f"{y} against {x}, one point per group.", plot.tradeoff, beyond, x=x, y=y, size=(6.0, 3.8))
        body += '<p class="note">catalog_coverage: the share of the catalog recommended within k; gini: how unequally the ' \
                "recommendations spread over the catalog (0: evenly, 1: one item); novelty: the mean self-information of the " \
                "recommended items (training popularity).</p>\n"  # fmt: skip
        page.add("beyond", "Beyond accuracy", body)
    if item_group is not None:
        table = _polars(
            recframe.item_groups(recs, kmax, **{**base_lists, "truth": truth, "train": train, "items": items,
                                               "by": main_by or None, "item_group": item_group}),
            "item_groups",
        )  # fmt: skip
        body = _wrap(recframe.report(table, format="html", precision=precision))
        if len(main_by) <= 1:
            body += figures.svg(
                f"Each item group's share of the exposure within the top {kmax} per group, beside its share of the "
                "relevant items (grey).",
                plot.exposure, table, kmax, by=main_by[0] if main_by else None,
            )  # fmt: skip
        page.add("fairness", f"Item groups: {item_group}", body)

    # ---- example users (made in a thread while the comparison and distribution are drawn)
    page.add("examples", "Example users", examples_job.result())

    lead = (
        f'<p class="note">recframe {_e(recframe.__version__)} · {_e(started.strftime("%Y-%m-%d %H:%M:%S UTC"))}'
        + (f" · {_e(', '.join(map(str, _models_of(summary, model_keys))))}" if model_keys else "")
        + "</p>\n"
    )
    if not figures.available:
        lead += f'<p class="note"><strong>{_e(NO_PLOT)}</strong></p>\n'
    text = page.html("recframe evaluation", lead)
    if path is not None:
        try:
            _atomic.write_atomic(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))
        except OSError as error:
            raise RecframeError(
                f"{ref('out', str(path))}: could not write it ({error.strerror or error}); the previous file, if any, is "
                "untouched. Hint: check the free space and permissions of its folder."
            ) from None
    return text


#: the users the page shows per rule (worst, disagree, random)
EXAMPLES = 3


def _examples(per_user: pl.DataFrame, select: str, user: str, metric: str, truth_keys: Sequence[str], seed: int) -> list[Any]:
    """The ids of the users to show, chosen from the page's per-user frame as
    :func:`recframe.inspect` chooses them (its own functions, so the same seed gives the same
    users): the lowest mean of `metric` over their lists ("worst"), the largest gap between two
    models' values of it within a fold ("disagree"), or drawn at random with `seed`."""
    rows = nw.from_native(per_user.rename({user: n.USER})).lazy()
    if select == "random":
        table = rows.select(n.USER).unique().collect().to_native()
        return _inspect.choose(table, [], EXAMPLES, seed, None)
    values = _inspect.user_values(rows, metric, select, list(truth_keys), []).collect().to_native()
    return _inspect.choose(values.filter(pl.col(_inspect.VALUE).is_not_null()), [], EXAMPLES, seed, select)


def _example_users(
    recs: Any,
    k: int,
    per_user: pl.DataFrame,
    user: str | None,
    primary: str | None,
    model_keys: Sequence[str],
    truth_keys: Sequence[str],
    seed: int,
    options: dict[str, Any],
) -> str:
    """The example-users section: a few users' lists side by side (recframe.inspect), chosen by
    rule from the per-user frame the page has, so that inspect reads only their rows."""
    if user is None or primary is None:
        return '<p class="note">Not shown: the evaluation has no user column (user=None) or no per-user metric.</p>\n'
    rules = {
        "worst": f"the {EXAMPLES} users with the lowest {primary}, averaged over their lists",
        "disagree": f"the {EXAMPLES} users whose {primary} differs most between two models",
        "random": f"{EXAMPLES} users drawn at random (seed {seed})",
    }
    chosen = {s: _examples(per_user, s, user, primary, truth_keys, seed) for s in rules if s != "disagree" or model_keys}
    every = list(dict.fromkeys(x for ids in chosen.values() for x in ids))
    given_users = options.get("users")  # a users= frame keeps the segments
    rest = {name: value for name, value in options.items() if name != "users"}
    try:
        shown = every if given_users is None else _only(given_users, user, every)
        inspected = _polars(_inspect.inspect(recs, k, select="given", users=shown, **rest), "inspected")
    except RecframeError as error:
        return f'<p class="note">{_e(error)}</p>\n'
    body = ""
    for select, ids in chosen.items():
        fragment = _inspect.side_by_side(inspected.filter(pl.col(user).is_in(ids))).to_html()
        body += f'<h3>{_e(select.capitalize())}: {_e(rules[select])}</h3>\n<div class="scroll">{fragment}</div>\n'
    return body


def _only(frame: Any, user: str, ids: list[Any]) -> Any:
    """The rows of `frame` (any frame type) of the users `ids`."""
    return nw.from_native(frame).filter(nw.col(user).is_in(ids)).to_native()


def _models_of(summary: pl.DataFrame, model_keys: Sequence[str]) -> list[Any]:
    """The models of the summary, in its order."""
    return summary.get_column(model_keys[0]).unique(maintain_order=True).to_list()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "key"
