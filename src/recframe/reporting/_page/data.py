"""What the page shows, collected as frames and values, without HTML: :func:`request` checks
:func:`recframe.report_page`'s arguments and sorts its ``by`` keys, :func:`collect` makes every
call the page reads (summary, per_user, curve, compare, disparity, item_groups, inspect) and
returns a :class:`PageData`."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import importlib.metadata
import os
import platform
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import narwhals as nw
import polars as pl

from recframe import _names as n
from recframe import conventions, profiles
from recframe import options as options_table
from recframe.api import item_groups, per_user, summary, tied_cutoffs
from recframe.curve import curve
from recframe.engine import _call, _checks, _engine, _frames, _tables
from recframe.engine import _validate as v
from recframe.errors import RecframeError, fix, ref
from recframe.options import PER_USER_NAMES, SUMMARY_NAMES
from recframe.reporting import _atomic, _charts, _inspect
from recframe.reporting.report import MAX_PRECISION
from recframe.statistics import _summary
from recframe.statistics.agreement import agreement
from recframe.statistics.compare import compare, compare_letters
from recframe.statistics.disparity import disparity
from recframe.statistics.stats import Test

#: the keys of one ``inputs=`` entry
INPUT_KEYS = ("input", "file", "rows", "sha256")
#: the side inputs given as frames, in the order the page lists them
FRAME_INPUTS = ("recs", "truth", "users", "exclude", "train", "items")
#: the users the page shows per rule, and the rules
EXAMPLES, RULES = 3, ("worst", "disagree", "random")
#: the users shown per rule and per segment, when there are segments (a by key of users=)
PER_SEGMENT = 2
#: report_page's own arguments at their defaults: one left there is not "given" on the page
PAGE_DEFAULTS: dict[str, Any] = {
    "truth": None, "baseline": None, "k": 10, "ci": 0.95, "train": None, "items": None, "inputs": None, "out": None,
    "metrics": None, "precision": 3, "title": "recframe evaluation", "headline": None, "sections": None,
}  # fmt: skip
#: the page's sections by name (``sections=``): the main part, three A4 pages at most, then the appendix
MAIN = ("summary", "comparison", "segments")
APPENDIX = (
    "comparison_table", "evaluated", "pairs", "curves", "distributions", "segment_tables", "folds", "agreement", "beyond", "item_groups",
    "examples", "glossary",
)  # fmt: skip
#: the words ``sections=`` also takes: every section, or the main part alone (``--brief``)
SECTION_WORDS = {"all": MAIN + APPENDIX, "brief": MAIN}
#: the headline's default: the first ranking metric asked, in this order, else the first metric asked
HEADLINE_ORDER = ("ndcg", "ap", "rr")
#: the metrics of the beyond-accuracy section, with train= and without it
BEYOND, WITHOUT_TRAIN = ("ndcg", "novelty", "popularity", "catalog_coverage", "gini"), ("ndcg", "catalog_coverage", "gini")


@dataclass(frozen=True)
class Request:
    """report_page's arguments, checked: the frames (pandas and Arrow converted once), the
    ``by`` keys by where they live, and the options of each call the page makes."""

    frames: dict[str, Any]  # FRAME_INPUTS, None where not given
    baseline: Any
    ks: list[Any]
    ci: Any
    metrics: Any
    precision: int
    path: Path | None
    inputs: list[dict[str, Any]] | None
    given: dict[str, Any]  # the options, users= and exclude= converted, item_group= apart
    item_group: Any
    by_keys: list[str]
    model_keys: tuple[str, ...]
    truth_keys: tuple[str, ...]
    attr_keys: tuple[str, ...]
    common: dict[str, Any]  # summary's options: truth=, and train= and items= when the metrics read them
    base_given: dict[str, Any]  # the options without truth=, train= and items=
    title: str = "recframe evaluation"
    arguments: dict[str, Any] = field(default_factory=dict)  # what the caller passed (left at a default: left out)
    command: str | None = None  # the command line that made the page (the CLI's), else None
    engine: str = "polars"  # the engine of recs and its version, e.g. "pandas 2.2.3"
    started: datetime.datetime = field(default_factory=lambda: datetime.datetime.now(datetime.timezone.utc))
    headline: str | None = None  # headline= as given (a metric, or a metric column), None for the default
    wanted: tuple[str, ...] = MAIN + APPENDIX  # the sections asked for, by name

    def wants(self, *names: str) -> bool:
        """Whether any of the sections `names` is on the page (its numbers are computed only then)."""
        return any(name in self.wanted for name in names)

    recs = property(lambda self: self.frames["recs"])
    truth = property(lambda self: self.frames["truth"])
    train = property(lambda self: self.frames["train"])
    items = property(lambda self: self.frames["items"])
    user = property(lambda self: self.given.get("user", options_table.DEFAULTS["user"]))
    seed = property(lambda self: self.given.get("seed"))
    n_resamples = property(lambda self: self.given.get("n_resamples", options_table.DEFAULTS["n_resamples"]))

    @property
    def main_by(self) -> list[str]:
        """The keys of the summary: the model and truth keys (a segment is a section of its own)."""
        return [*self.model_keys, *self.truth_keys]

    @property
    def kmax(self) -> int:
        return max(int(x) for x in self.ks) if all(v.whole(x) is not None for x in self.ks) and self.ks else 10

    @property
    def lists(self) -> dict[str, Any]:
        """per_user's options among summary's."""
        return {name: value for name, value in self.common.items() if name in PER_USER_NAMES}

    @property
    def sides(self) -> dict[str, Any]:
        """per_user's options with every side input the page has."""
        lists = {name: value for name, value in self.base_given.items() if name in PER_USER_NAMES}
        return {**lists, "truth": self.truth, "train": self.train, "items": self.items}


def request(
    recs: Any,
    truth: Any,
    baseline: Any,
    k: Any,
    ci: Any,
    train: Any,
    items: Any,
    inputs: Any,
    out: Any,
    metrics: Any,
    precision: Any,
    options: dict[str, Any],
    *,
    title: Any = "recframe evaluation",
    command: Any = None,
    headline: Any = None,
    sections: Any = None,
) -> Request:
    """report_page's arguments checked (in the order they are refused), and the by keys sorted."""
    path = _check_out(out)
    wanted = _check_sections(sections)
    _check_headline(headline)
    described = _check_inputs(inputs)
    if (checked := v.whole(precision)) is None or not 0 <= checked <= MAX_PRECISION:
        raise RecframeError(
            f"{ref('precision', precision)} is not a whole number from 0 to {MAX_PRECISION}.", f"pass {fix('precision', 3)}."
        )
    if not isinstance(title, str) or not title.strip():
        raise RecframeError(f"{ref('title', title)} is not a text.", f"pass e.g. {fix('title', 'Ranking models, May')}.")
    if command is not None and not isinstance(command, str):
        raise RecframeError(
            f"{ref('command', command)} is not a text.",
            f"pass the command line, e.g. {fix('command', 'recframe report recs.parquet')}.",
        )
    explicit = {"truth": truth, "baseline": baseline, "k": k, "ci": ci, "train": train, "items": items, "inputs": inputs,
                "out": out, "metrics": metrics, "precision": precision, "title": title, "headline": headline,
                "sections": sections}  # fmt: skip
    arguments = {name: value for name, value in explicit.items() if not _at_default(name, value)} | dict(options)
    engine = _engine_version(recs)
    given = dict(options)
    options_table.resolve(given, SUMMARY_NAMES, "report_page")  # an unknown option raises here
    for name in ("truth", "train", "items", "ci"):  # (explicit arguments: never in options)
        given.pop(name, None)
    ks: list[Any] = list(k) if isinstance(k, (list, tuple)) else [k]
    sides = {"recs": recs, "truth": truth, "users": given.get("users"), "exclude": given.get("exclude"), "train": train}
    frames = {name: _in_memory(frame, name) for name, frame in {**sides, "items": items}.items()}
    given.update({name: frames[name] for name in ("users", "exclude") if frames[name] is not None})

    # where each by key lives: model keys, truth keys (folds), user attributes (segments)
    by = given.get("by")
    by_keys = [by] if isinstance(by, str) else list(by) if by is not None else []
    user = given.get("user", options_table.DEFAULTS["user"])
    users, truth = frames["users"], frames["truth"]
    model_keys, truth_keys, attr_keys = v.classify_keys(
        by_keys,
        _columns(frames["recs"], "recs"),
        None if truth is None else _columns(truth, "truth"),
        None if users is None else [c for c in _columns(users, "users") if c != user],
    )
    if baseline is not None and len(model_keys) != 1:
        raise RecframeError(
            f"{ref('baseline', baseline)} names a model, which needs exactly one model key in {ref('by')} (a column "
            f"of the recommendations only); the call has {list(model_keys) or 'none'}.",
            f"pass e.g. {fix('by', 'model')}.",
        )
    item_group = given.pop("item_group", None)
    chosen = v.metric_names(metrics) if metrics is not None else None
    base_given = {name: value for name, value in given.items() if name != "baseline"}
    if chosen is not None and v.reads(chosen, "baseline"):
        base_given["baseline"] = baseline
    common = {**base_given, "truth": truth}
    if chosen is not None and v.reads(chosen, "train", "catalog") and frames["train"] is not None:
        common["train"] = frames["train"]
    if chosen is not None and v.reads(chosen, "catalog", "items", "item_features") and frames["items"] is not None:
        common["items"] = frames["items"]
    return Request(
        frames, baseline, ks, ci, metrics, checked, path, described, given, item_group, by_keys,
        model_keys, truth_keys, attr_keys, common, base_given, title, arguments, command, engine,
        headline=headline, wanted=wanted,
    )  # fmt: skip


@dataclass
class PageData:
    """What the page shows, as frames and values; filled by :func:`collect` in stages."""

    request: Request
    curve: pl.DataFrame = field(default_factory=pl.DataFrame)  # recframe.curve, nDCG and precision-recall
    curve_metrics: list[str] = field(default_factory=list)  # the metrics of the curve beside precision and recall
    per_user: pl.DataFrame = field(default_factory=pl.DataFrame)  # recframe.per_user, by every by key
    primary: str | None = None  # the metric of the figures (nDCG at the largest k, else recall, else the first)
    shown: list[str] = field(default_factory=list)  # the metrics of the distributions and segments
    baseline: Any = None  # as the model column spells it
    test: Test = "paired_t"
    comparison: pl.DataFrame | None = None  # recframe.compare against the baseline
    pairs: pl.DataFrame | None = None  # recframe.compare without a baseline: every pair (3+ models, no baseline)
    letters: pl.DataFrame | None = None  # recframe.compare_letters of the pairs
    #: per metric, the users with a value, those at 0, the median and the mean, by the summary's keys
    distributions: list[tuple[str, pl.DataFrame]] = field(default_factory=list)
    summary: pl.DataFrame = field(default_factory=pl.DataFrame)  # recframe.summary with ci=
    inputs: list[dict[str, Any]] = field(default_factory=list)  # what was evaluated, one dict per input
    checks: list[str] = field(default_factory=list)  # the data checks that ran, in words
    conventions: list[list[Any]] = field(default_factory=list)  # (option, value, set by)
    call: str = ""  # the command line, or the call of report_page reconstructed
    versions: list[list[Any]] = field(default_factory=list)  # (software, version)
    sides: list[list[Any]] = field(default_factory=list)  # (side input, what was given)
    segments: dict[str, pl.DataFrame | str | None] = field(default_factory=dict)  # disparity (or its error) per attribute
    #: per attribute, recframe.compare against the baseline within each of its groups (or its error)
    segment_comparisons: dict[str, pl.DataFrame | str] = field(default_factory=dict)
    folds: dict[str, pl.DataFrame] = field(default_factory=dict)  # mean and std over each truth key's values
    beyond: pl.DataFrame | None = None
    item_groups: pl.DataFrame | None = None
    examples: dict[str, list[Any]] = field(default_factory=dict)  # the users shown per rule
    inspected: pl.DataFrame = field(default_factory=pl.DataFrame)  # their lists (recframe.inspect)
    examples_error: str | None = None  # why inspect could not show them
    ties: dict[str, str] = field(default_factory=dict)  # per rule, the ties among which its users were drawn
    #: recframe.agreement's per-user values averaged per pair of models (or its error); None with one model
    agreement: pl.DataFrame | str | None = None
    tied: pl.DataFrame | None = None  # recframe.tied_cutoffs with score=, by the summary's keys
    headline: str | None = None  # the verdict's headline metric column

    @property
    def significant(self) -> set[tuple[Any, ...]]:
        """(model, truth keys..., metric) of each significant row of the comparison."""
        if self.comparison is None:
            return set()
        rows = self.comparison.filter(pl.col("significant")).iter_rows(named=True)
        return {(row["model"], *(row[t] for t in self.request.truth_keys), row["metric"]) for row in rows}

    @property
    def directions(self) -> dict[tuple[Any, ...], bool]:
        """(model, truth keys..., metric) of each significant row of the comparison: True where
        the model is better than the baseline (by the metric's direction), False where worse."""
        if self.comparison is None:
            return {}
        rows = zip(self.comparison.iter_rows(named=True), _charts.marks(self.comparison))
        return {(row["model"], *(row[t] for t in self.request.truth_keys), row["metric"]): better
                for row, better in rows if better is not None}  # fmt: skip

    @property
    def models(self) -> list[Any]:
        """The models of the summary, in its order."""
        return self.summary.get_column(self.request.model_keys[0]).unique(maintain_order=True).to_list()


def collect(r: Request, ready: Callable[[str, PageData], None] | None = None) -> PageData:
    """Every number the page shows. Polars releases the GIL: the summary and the per-user frame
    (with the tie counts), the agreement, beyond accuracy and the item groups are computed in
    threads while the curves are; then the summary's bootstrap, the segments and the example users in
    threads, while the comparison is made and the sections are written. ``ready(stage, data)``
    is called here as a stage's frames come in (``"curves"``, ``"per_user"``, ``"sides"``,
    ``"segments"``), so that the caller can make their sections meanwhile."""
    data = PageData(r)
    tell = ready if ready is not None else (lambda stage, partial: None)
    with ThreadPoolExecutor(max_workers=3) as pool:
        numbers = pool.submit(_numbers, r)
        # the longest call after the summary's: it starts at once (its own calls: they need nothing from the others)
        agreement_job = pool.submit(_agreement, r) if r.wants("agreement") else None
        sides_job = pool.submit(_sides, r) if r.wants("beyond", "item_groups") else None
        try:
            data.curve, data.curve_metrics = _curves(r) if r.wants("curves") else (data.curve, [])
        except RecframeError:
            numbers.result()  # the summary's own error first, when it has one: it names the argument as given
            raise
        tell("curves", data)
        summary_of, data.per_user, data.tied = numbers.result()
        summary_job = pool.submit(summary_of)  # the bootstrap, while the comparison and its figures are made
        metric_columns = _tables.metric_columns(data.per_user.columns)
        data.headline = headline_of(r.headline, metric_columns)
        first = metric_columns[0] if metric_columns else None
        data.primary = next((c for c in (f"ndcg@{r.kmax}", f"recall@{r.kmax}") if c in metric_columns), first)
        at_k = [c for c in (f"ndcg@{r.kmax}", f"recall@{r.kmax}", f"precision@{r.kmax}") if c in metric_columns]
        data.shown = at_k or metric_columns[:1]
        # the later stages' numbers in threads, those with figures first, while the sections are made
        examples_job = pool.submit(_examples, r, data.per_user, data.primary) if r.wants("examples") else None
        data.baseline, data.test, data.comparison = _comparison(r, data.per_user)
        segments_job = pool.submit(_segments, r, data)
        data.pairs, data.letters = _all_pairs(r, data.per_user, data.test)
        if r.wants("distributions"):
            data.distributions = [(metric, _distribution(data.per_user, metric, r.main_by)) for metric in data.shown]
        tell("per_user", data)
        data.beyond, data.item_groups = sides_job.result() if sides_job is not None else (None, None)
        tell("sides", data)
        data.segments, data.segment_comparisons = segments_job.result()
        tell("segments", data)
        data.summary = summary_job.result()
        if examples_job is not None:
            data.examples, data.inspected, data.examples_error, data.ties = examples_job.result()
        several = bool(r.model_keys) and data.per_user.get_column(r.model_keys[0]).n_unique() > 1
        if several and agreement_job is not None:  # (one model: no refusal shown)
            data.agreement = agreement_job.result()
    frames = {name: frame for name, frame in r.frames.items() if frame is not None}
    data.inputs = (
        r.inputs
        if r.inputs is not None
        else [{"input": name, "rows": _rows_of(frame, name), "sha256": frame_hash(frame)} for name, frame in frames.items()]
    )
    data.checks = _checks_run(r)
    data.conventions = _conventions_rows(r)
    data.call = r.command if r.command is not None else _call_text(r, data.inputs)
    data.versions, data.sides = _versions(r), _side_rows(r, _rows_by_input(data.inputs))
    data.folds = {key: _spread(data.summary, key, r.main_by, data.shown) for key in r.truth_keys}
    return data


def headline_of(asked: str | None, metrics: list[str]) -> str | None:
    """The verdict's headline column: `asked` (a column, or a metric at its smallest k), else the
    first ranking metric asked in the order nDCG, AP, RR, else the first metric, at its smallest k."""

    def smallest(name: str) -> str | None:
        found = [c for c in metrics if _tables.metric_of(c) == name]
        return min(found, key=lambda c: int(c.partition("@")[2] or 0)) if found else None

    if asked is not None:
        found = asked if asked in metrics else smallest(asked) if "@" not in asked else None
        if found is None:
            raise RecframeError(
                f"{ref('headline', asked)} is not among the page's metric columns ({', '.join(metrics)}).",
                f"pass one of them, e.g. {fix('headline', metrics[0] if metrics else 'ndcg@10')}.",
            )
        return found
    for name in (*HEADLINE_ORDER, *(_tables.metric_of(c) for c in metrics)):
        if name is not None and (found := smallest(name)) is not None:
            return found
    return None


def frame_hash(frame: Any) -> str | None:
    """The sha256 of an in-memory Polars frame's content: its columns' names and types, then each
    row's hash in order (Polars' ``hash_rows``, seed 0: the same rows give the same hash
    with the same Polars version, at a few ms per million rows where writing the rows out costs
    a second); None for a lazy or engine frame, whose rows are not read for this."""
    if not isinstance(frame, pl.DataFrame):
        return None
    digest = hashlib.sha256(repr(list(frame.schema.items())).encode())
    if frame.width and frame.height:
        digest.update(frame.hash_rows(seed=0).to_numpy().tobytes())
    return digest.hexdigest()


def _segments(r: Request, data: PageData) -> tuple[dict[str, pl.DataFrame | str | None], dict[str, pl.DataFrame | str]]:
    """Per user attribute: recframe.disparity between its groups, and (with a baseline) the
    comparison within each group."""
    gaps = {key: _disparity(r, data.per_user, key, data.shown) for key in r.attr_keys} if r.wants("segment_tables") else {}
    compared = data.comparison is not None and r.wants("segment_tables", "segments")
    within = {key: _within(r, data, key) for key in r.attr_keys} if compared else {}
    return gaps, within


def _sides(r: Request) -> tuple[pl.DataFrame | None, pl.DataFrame | None]:
    """Beyond accuracy (summary of novelty, popularity, coverage, Gini with train= / items=) and
    recframe.item_groups (with item_group=); None where not asked for."""
    beyond = groups = None
    if (r.train is not None or r.items is not None) and r.wants("beyond"):
        wanted = list(BEYOND if r.train is not None else WITHOUT_TRAIN)
        sides = {"truth": r.truth, "train": r.train, "items": r.items, "by": r.main_by or None}
        beyond = _tables.eager(summary(r.recs, r.kmax, wanted, **{**r.base_given, **sides}), "summary")
    if r.item_group is not None and r.wants("item_groups"):
        sides = {"by": r.main_by or None, "item_group": r.item_group}
        groups = _tables.eager(item_groups(r.recs, r.kmax, **{**r.sides, **sides}), "item_groups")
    return beyond, groups


def write(path: Path, text: str) -> None:
    """The page written to `path` atomically (a temporary file renamed onto it)."""
    try:
        _atomic.write_atomic(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))
    except OSError as error:
        raise RecframeError(
            f"{ref('out', str(path))}: could not write it ({error.strerror or error}); the previous file, if any, is "
            "untouched. Hint: check the free space and permissions of its folder."
        ) from None


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


def _check_headline(headline: Any) -> None:
    """headline= is a metric or a metric column, when given (the page's columns are checked later)."""
    if headline is not None and (not isinstance(headline, str) or _tables.metric_of(headline) is None):
        raise RecframeError(
            f"{ref('headline', headline)} is not a metric or a metric column.", f"pass e.g. {fix('headline', 'ndcg@10')}."
        )


def _check_sections(sections: Any) -> tuple[str, ...]:
    """The sections asked for, in the page's order: ``None`` or ``"all"`` every one, ``"brief"`` the
    main part, else a name or a list of names of :data:`MAIN` and :data:`APPENDIX`."""
    if sections is None:
        return MAIN + APPENDIX
    names = [sections] if isinstance(sections, str) else sections if isinstance(sections, (list, tuple)) else None
    known = (*SECTION_WORDS, *MAIN, *APPENDIX)
    wrong = [name for name in names or [sections] if name not in known]
    if names is None or wrong or not names:
        raise RecframeError(
            f"{ref('sections', sections)} names no section of the page"
            + (f" ({', '.join(map(repr, wrong))})" if names and wrong else "")
            + f"; the sections are {', '.join(MAIN)} (the main part) and {', '.join(APPENDIX)} (the appendix).",
            f"pass e.g. {fix('sections', ['summary', 'comparison', 'examples'])}, or {fix('sections', 'brief')}.",
        )
    chosen = {part for name in names for part in SECTION_WORDS.get(name, (name,))}
    return tuple(name for name in MAIN + APPENDIX if name in chosen)


def _at_default(name: str, value: Any) -> bool:
    """Whether report_page's argument `name` is at its default (k=10 and k=[10] alike)."""
    default = PAGE_DEFAULTS[name]
    if default is None:
        return value is None
    if name == "k" and isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    return type(value) is type(default) and value == default


def _engine_version(frame: Any) -> str:
    """The engine `frame` came on, with its version: "pandas 2.2.3", "duckdb 1.1.3", "polars 1.9.0"."""
    try:
        name = nw.from_native(frame).implementation.name.lower()
    except TypeError:
        name = type(frame).__module__.split(".")[0]
    package = {"pyspark_connect": "pyspark", "unknown": type(frame).__module__.split(".")[0]}.get(name, name)
    try:
        return f"{package} {importlib.metadata.version(package)}"
    except importlib.metadata.PackageNotFoundError:
        return package


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
        if rows_value is not None and (v.whole(rows_value) is None or rows_value < 0):
            raise RecframeError(f"{ref('inputs')}: 'rows' must be a whole number >= 0, not {rows_value!r}.", hint)
        rows.append(dict(entry))
    return rows


def _rows_of(frame: Any, arg: str) -> int:
    """The rows of a frame (a count query on a lazy one)."""
    if isinstance(frame, pl.DataFrame):
        return frame.height
    lf, _ = _frames.lazy(frame, arg)
    return int(lf.select(nw.len()).collect().item())


def _in_memory(frame: Any, arg: str) -> Any:
    """pandas and Arrow inputs as one Polars DataFrame, converted once for every call of the
    page (a Polars frame, LazyFrame or engine frame is passed as it is)."""
    if frame is None or isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        return frame
    lf, engine = _frames.lazy(frame, arg)
    return lf.to_native().collect() if engine.in_process else frame


def _columns(frame: Any, arg: str) -> list[str]:
    lf, _ = _frames.lazy(frame, arg)
    return list(_frames.schema_of(lf, arg))


# ---------------------------------------------------------------------------- the numbers


def _curves(r: Request) -> tuple[pl.DataFrame, list[str]]:
    """The curves, nDCG and precision-recall (precision and recall only for a profile without nDCG)."""
    options = {**r.lists, "by": r.main_by or None}
    try:
        return _tables.eager(curve(r.recs, ["ndcg"], r.kmax, **options), "curve"), ["ndcg"]
    except RecframeError:
        pass  # (a profile without nDCG: its own error, if any, is raised below, alone)
    return _tables.eager(curve(r.recs, [], r.kmax, **options), "curve"), []


def _numbers(r: Request) -> tuple[Callable[[], pl.DataFrame], pl.DataFrame, pl.DataFrame | None]:
    """The summary with intervals (as a function), the per-user frame and, with score=,
    recframe.tied_cutoffs' table: one pass where it can (see _summary_and_per_user), else the
    calls."""
    options = {**r.common, "by": r.by_keys or None}
    shared = _summary_and_per_user(r.recs, r.ks, r.metrics, options, r.main_by, r.ci, r.given.get("score") is not None)
    if shared is not None:
        return shared
    table = _tables.eager(summary(r.recs, r.ks, r.metrics, **{**r.common, "by": r.main_by or None}, ci=r.ci), "summary")
    users = _tables.eager(per_user(r.recs, r.ks, r.metrics, **{**r.lists, "by": r.by_keys or None}), "per_user")
    return (lambda: table), users, _tied(r)


def _summary_and_per_user(
    frame: Any, k: Any, metrics: Any, options: dict[str, Any], summary_by: list[str], ci: Any, tied: bool = False
) -> tuple[Callable[[], pl.DataFrame], pl.DataFrame, pl.DataFrame | None] | None:
    """``per_user(frame, k, metrics, **options)`` and ``summary(frame, k, metrics, ci=ci,
    **options)`` by `summary_by` from one pass over the data: the per-user plan is computed
    once, then the summary with its intervals is taken from it as :func:`recframe.summary`
    takes it (the same plan and the same code, :func:`recframe.statistics._summary.summary`),
    and the public per-user frame as :func:`recframe.per_user` gives it. The summary's keys
    are the per-user frame's without the user attributes (segments): those only label a
    user's one list, so its rows are the same lists. Returns a function computing the summary
    (the bootstrap, which can run while the per-user frame is used), the per-user frame, and
    (`tied`) ``tied_cutoffs(frame, k, **options)`` by `summary_by` from the same prepared rows
    (:func:`recframe.engine._engine.tie_table`, as tied_cutoffs takes it), else None.
    None where the calls must run themselves (no interval, another aggregate, group-level
    metrics, a SQL engine): they check and refuse as usual."""
    call = _call.resolve(k, metrics, {**options, "ci": ci}, SUMMARY_NAMES, "summary")
    kwargs, (level, method, n_resamples, seed), aggregate = _summary.options(call)
    if level is None or aggregate != "mean" or not _frames.engine_of(frame).in_process:
        return None
    if v.group_level(kwargs["metrics"]):
        return None
    v.check_per_user_metrics(kwargs["metrics"])
    plan, spec, _ = _call.prepare(frame, kwargs)
    if list(spec.columns.by) != [*summary_by, *spec.columns.attr_keys]:
        return None  # (the page's keys, classified as the page classified them)
    by_summary = dataclasses.replace(spec.columns, by=tuple(summary_by), attr_keys=())
    summary_spec = dataclasses.replace(spec, columns=by_summary)
    ties = None
    if tied:
        assert plan.rows is not None  # every plan has them
        ties = _engine.tie_table(plan.rows, summary_spec)
        ties = ties.sort(summary_by) if summary_by else ties
    # (the data checks run with the per-user frame; the tie table, collected with it, reads the same rows)
    users, *tie_table = pl.collect_all([plan.per_user.to_native(), *([] if ties is None else [ties.to_native()])])
    once = _engine.Plan(nw.from_native(users.lazy()))
    rows = _engine.per_user_rows(once.per_user, spec).sort([*spec.columns.by, n.USER])

    def summary_with_ci() -> pl.DataFrame:
        asked = _summary.asked(aggregate, level, method, n_resamples, seed)
        return _summary.summary(once, summary_spec, asked).to_native().collect()

    return summary_with_ci, _call.user_column(rows, spec).to_native().collect(), tie_table[0] if tie_table else None


def _comparison(r: Request, frame: pl.DataFrame) -> tuple[Any, Test, pl.DataFrame | None]:
    """The baseline as the model column spells it, the test, and recframe.compare against it
    (paired t test, or the randomization test without scipy); no comparison without a baseline."""
    test = _test()
    if r.baseline is None:
        return None, test, None
    models = frame.get_column(r.model_keys[0]).unique().to_list()
    baseline = next((m for m in models if m == r.baseline), next((m for m in models if str(m) == str(r.baseline)), r.baseline))
    return baseline, test, _tables.eager(compare(frame, by=r.main_by, baseline=baseline, test=test, seed=r.seed), "compare")


def _test() -> Test:
    """The page's paired test: the t test, or the randomization test without scipy."""
    try:
        import scipy  # noqa: F401
    except ImportError:
        return "randomization"
    return "paired_t"


#: the models from which the page compares every pair (the verdict's best against its runner-up)
ALL_PAIRS = 2


def _all_pairs(r: Request, frame: pl.DataFrame, test: Test) -> tuple[pl.DataFrame | None, pl.DataFrame | None]:
    """With two models or more, baseline or not: recframe.compare of every pair (within each
    fold) and its letter table (recframe.compare_letters); else (None, None)."""
    if len(r.model_keys) != 1 or frame.get_column(r.model_keys[0]).n_unique() < ALL_PAIRS:
        return None, None
    pairs = _tables.eager(compare(frame, by=r.main_by, test=test, seed=r.seed), "compare")
    return pairs, _tables.eager(compare_letters(pairs), "compare_letters")


def _within(r: Request, data: PageData, key: str) -> pl.DataFrame | str:
    """recframe.compare against the baseline within each group of the user attribute `key`: the
    main comparison's call with `key` as one more ``by`` key (its error where it refuses)."""
    try:
        found = compare(data.per_user, by=[*r.main_by, key], baseline=data.baseline, test=data.test, seed=r.seed)
    except RecframeError as error:
        return str(error)
    return _tables.eager(found, "compare")


#: the measures of recframe.agreement the page averages
AGREEMENT = ("overlap", "jaccard", "rbo", "kendall_tau")


def _agreement(r: Request) -> pl.DataFrame | str | None:
    """recframe.agreement at the largest k between every pair of models (within each fold),
    averaged over the users of either list (its error where it refuses; None without one model
    key). Relevance plays no part in agreement unless ties are ordered by it: truth= is passed
    for its keys (folds), and where it cannot move a list, so that the call reads the rows the
    summary's call prepared (recframe.engine._call.shared_preparation)."""
    if len(r.model_keys) != 1:
        return None
    keys = [*r.model_keys, *r.truth_keys]
    by_relevance = r.given.get("ties") in ("optimistic", "pessimistic")
    options = {name: value for name, value in r.lists.items() if name != "truth" or r.truth_keys or not by_relevance}
    try:
        rows = _tables.eager(agreement(r.recs, r.kmax, **{**options, "by": keys}), "agreement")
    except RecframeError as error:
        return str(error)
    return rows.group_by([*r.truth_keys, "model_a", "model_b"], maintain_order=True).agg(
        pl.len().alias("users"), *(pl.col(m).mean() for m in AGREEMENT), pl.col("kendall_tau").count().alias("n_tau")
    )


def _tied(r: Request) -> pl.DataFrame | None:
    """recframe.tied_cutoffs at every k with score= (else None)."""
    if r.given.get("score") is None:
        return None
    return _tables.eager(tied_cutoffs(r.recs, r.ks, **{**r.lists, "by": r.main_by or None}), "tied_cutoffs")


def _distribution(frame: pl.DataFrame, metric: str, keys: list[str]) -> pl.DataFrame:
    """Per group of `keys` (one group "all" without): the users with a value of `metric`, those
    at 0, the quartiles and the 10th and 90th percentiles (numpy's linear interpolation, as
    summary's ``aggregate="pNN"``) and the mean."""
    groups = frame.filter(pl.col(metric).is_not_null()).group_by(keys or pl.lit("all").alias("group"), maintain_order=True)
    return groups.agg(
        pl.len().alias("users"),
        (pl.col(metric) == 0).sum().alias("zero"),
        *(pl.col(metric).quantile(q / 100, interpolation="linear").alias(f"p{q}") for q in QUANTILES),
        pl.col(metric).median().alias("median"),
        pl.col(metric).mean().alias("mean"),
    ).sort(keys or "group")


#: the percentiles of the distributions' bands
QUANTILES = (10, 25, 75, 90)


def _disparity(r: Request, frame: pl.DataFrame, key: str, metrics: list[str]) -> pl.DataFrame | str | None:
    """recframe.disparity between the groups of the user attribute `key` (its error where it
    refuses; None without a model key)."""
    if not r.model_keys:
        return None
    try:
        gaps = disparity(frame, group=key, by=r.main_by, metrics=metrics, seed=r.seed, n_resamples=r.n_resamples)
    except RecframeError as error:
        return str(error)
    return _tables.eager(gaps, "disparity")


def _spread(table: pl.DataFrame, key: str, keys: list[str], metrics: list[str]) -> pl.DataFrame:
    """The mean and the standard deviation over the values of the truth key `key` of each
    value's mean, by the other keys (one group "all" without)."""
    others = [m for m in keys if m != key]
    metrics = [m for m in metrics if m in table.columns]
    return (
        table.group_by(others or pl.lit("all").alias("group"), maintain_order=True)
        .agg(pl.len().alias(f"n_{key}"), *(pl.col(m).mean().alias(f"{m} mean") for m in metrics),
             *(pl.col(m).std().alias(f"{m} std") for m in metrics))
        .sort(others or "group")
    )  # fmt: skip


def _examples(
    r: Request, frame: pl.DataFrame, primary: str | None
) -> tuple[dict[str, list[Any]], pl.DataFrame, str | None, dict[str, str]]:
    """The example users: per rule, the ids chosen from the per-user frame as
    :func:`recframe.inspect` chooses them (its own functions, so the same seed gives the same
    users), their lists from recframe.inspect, which reads only their rows, or its error; and
    per rule the ties the users were drawn among, in words."""
    if r.user is None or primary is None:
        return {}, pl.DataFrame(), None, {}
    seed = 0 if r.seed is None else r.seed
    rows = nw.from_native(frame.rename({r.user: n.USER})).lazy()
    attrs = list(r.attr_keys)  # with segments: a few users of each
    many = PER_SEGMENT if attrs else EXAMPLES
    chosen, ties = {}, {}
    for select in (s for s in RULES if s != "disagree" or r.model_keys):
        if select == "random":
            users = rows.select(n.USER, *attrs).unique().collect().to_native()
            chosen[select] = _inspect.choose(users, attrs, many, seed, None)
            continue
        values = _inspect.user_values(rows, primary, select, list(r.truth_keys), attrs).collect().to_native()
        values = values.filter(pl.col(_inspect.VALUE).is_not_null())
        chosen[select] = _inspect.choose(values, attrs, many, seed, select)
        what = _inspect.what_of(primary, primary + _inspect.CHOSEN_SUFFIX[select])
        # the tie the users were drawn from, in the words side_by_side and the command line use
        found = [
            tie
            # segments in the order of their values: the rows came from an unordered collect
            for group, part in (
                values.sort(attrs, nulls_last=True).group_by(attrs, maintain_order=True) if attrs else [((), values)]
            )
            if (
                tie := _inspect.tie(
                    part, [u for u in chosen[select] if u in set(part[n.USER])], what, seed, _inspect.where(attrs, group)
                )
            )
        ]
        if found:
            ties[select] = " ".join(found)
    every = list(dict.fromkeys(x for ids in chosen.values() for x in ids))
    options = {name: value for name, value in r.sides.items() if name != "users"}
    users = r.frames["users"]  # a users= frame keeps the segments: its rows of the users shown
    try:
        shown = every if users is None else nw.from_native(users).filter(nw.col(r.user).is_in(every)).to_native()
        inspected = _tables.eager(_inspect.inspect(r.recs, r.kmax, select="given", users=shown, **options), "inspected")
    except RecframeError as error:
        return chosen, pl.DataFrame(), str(error), ties
    return chosen, inspected, None, ties


# ---------------------------------------------------------------------------- what was evaluated


def _checks_run(r: Request) -> list[str]:
    """The data checks the evaluation ran (each would have stopped it with an error), as the
    check plan of its call words them. train= and items= are checked by the calls that read
    them: the beyond-accuracy and item-group sections."""
    kwargs = _call.resolve(r.ks, r.metrics, {**r.common, "by": r.by_keys or None}, SUMMARY_NAMES, "report_page")
    spec = v.check_arguments({**kwargs, "item_group": r.item_group, "train": r.train, "items": r.items})
    return _checks.sentences(spec, _checks.plan(spec))


def _conventions_rows(r: Request) -> list[list[Any]]:
    """(option, value, set by) of every option that can change a number. "given" only where the
    caller passed it (an argument of report_page left at its default is "default", and so is a
    value the command line passes for a flag left out); "profile X" where a profile passed by
    the caller sets it; else "default"."""
    options = {**r.given, "item_group": r.item_group}
    passed = r.arguments
    profile = options.get("profile") or options_table.DEFAULTS["profile"]
    chosen = profiles.PROFILES.get(profile) if options.get("profile") is not None else None
    set_by = chosen.options if chosen is not None else {}
    threshold, score, rank = options.get("threshold"), options.get("score"), options.get("rank")
    relevance = options.get("relevance") or options_table.DEFAULTS["relevance"]
    relevant = f"{relevance} >= {threshold}" if threshold is not None else f"{relevance} > 0"
    ranking = f"by {score}, highest first" if score else f"the {rank or 'rank'} column"

    def by(*names: str) -> str:
        return "given" if any(passed.get(name) is not None for name in names) else "default"

    rows: list[list[Any]] = [
        ["profile", profile, by("profile")],
        ["k", ", ".join(map(str, r.ks)), by("k")],
        ["ci (interval coverage)", "none" if r.ci is None else r.ci, "given" if "ci" in passed else "default"],
        ["metrics", "default" if r.metrics is None else ", ".join(map(str, r.metrics)), by("metrics")],
        ["relevant", relevant, by("threshold", "relevance")],
        ["ranking", ranking, by("score", "rank")],
    ]
    for name in conventions.CHOICES:
        if options.get(name) is not None:
            rows.append([name, options[name], "given"])
        elif name in set_by:
            rows.append([name, set_by[name], f"profile {profile}"])
        else:
            rows.append([name, conventions.DEFAULTS[name], "default"])
    for metric, values in chosen.per_metric.items() if chosen is not None else ():
        shown = ", ".join(f"{o}={val!r}" for o, val in values.items() if options.get(o) is None)
        if shown:
            rows.append([f"{metric} (per metric)", shown, f"profile {profile}"])
    for name in ("ci_method", "n_resamples", "seed", "checks", "check_duplicates", "head_share"):
        rows.append([name, options.get(name, options_table.DEFAULTS[name]), "given" if name in passed else "default"])
    return rows


def _rows_by_input(inputs: list[dict[str, Any]]) -> dict[str, int]:
    """The rows of each input (summed over its files), where known."""
    rows: dict[str, int] = {}
    for entry in inputs:
        if entry.get("rows") is not None:
            rows[entry["input"]] = rows.get(entry["input"], 0) + entry["rows"]
    return rows


def _call_text(r: Request, inputs: list[dict[str, Any]]) -> str:
    """The call of report_page as the caller made it, frames shown as ``<frame: N rows, sha256
    1a2b3c4d5e6f>`` (the first 12 hex digits of the content hash the inputs table gives whole)."""
    rows = _rows_by_input(inputs)
    hashes = {entry["input"]: entry.get("sha256") for entry in inputs}

    def shown(name: str, value: Any) -> str:
        if name in FRAME_INPUTS and value is not None and not isinstance(value, (str, int, float, list, tuple)):
            digest = f", sha256 {str(hashes[name])[:12]}" if hashes.get(name) else ""
            return f"<frame: {rows[name]:,} rows{digest}>" if name in rows else "<frame>"
        if name == "inputs" and isinstance(value, Sequence) and not isinstance(value, str):
            return f"<{len(value)} input descriptions>"
        return str(value) if isinstance(value, os.PathLike) else repr(value)

    parts = [shown("recs", r.recs), *(f"{name}={shown(name, value)}" for name, value in r.arguments.items())]
    return f"recframe.report_page({', '.join(parts)})"


def recframe_version() -> str:
    """recframe's version, read from the installed package's metadata (built from
    ``recframe.__version__``): the package face imports the page, so the page does not import it."""
    return importlib.metadata.version("recframe")


def _versions(r: Request) -> list[list[Any]]:
    """(software, version) of what made the page: Python, recframe, Polars, narwhals, the engine."""
    converted = r.engine.split()[0] in ("pandas", "pyarrow")
    return [
        ["Python", platform.python_version()],
        ["recframe", recframe_version()],
        ["Polars", pl.__version__],
        ["narwhals", nw.__version__],
        *([name, version] for name, version in _numeric_versions()),
        ["engine of recs", r.engine + (" (read into Polars once for the page)" if converted else "")],
    ]


def _numeric_versions() -> list[tuple[str, str]]:
    """numpy's version, and scipy's where it is installed (the bootstrap and the tests read them)."""
    import numpy

    found = [("numpy", numpy.__version__)]
    try:
        import scipy
    except ImportError:
        return [*found, ("scipy", "not installed (the randomization test replaces the t test)")]
    return [*found, ("scipy", scipy.__version__)]


def _side_rows(r: Request, rows: dict[str, int]) -> list[list[Any]]:
    """(side input, given or not, what it is for) for every side input the page can take."""
    what = {
        "truth": "the held-out judgements",
        "users": "the user universe and attributes (segments)",
        "exclude": "seen user-item pairs, removed from the lists before the cut at k",
        "train": "training interactions: item popularity, novelty, the history of example users",
        "items": "the catalog and item features: coverage, diversity",
    }
    out = []
    for name, meaning in what.items():
        given = "not given" if r.frames[name] is None else f"{rows[name]:,} rows" if name in rows else "given"
        out.append([f"{name}=", given, meaning])
    out.append(["item_group=", "not given" if r.item_group is None else repr(r.item_group), "the item groups' exposure"])
    out.append(["baseline=", "not given" if r.baseline is None else repr(r.baseline), "the model the others are compared with"])
    return out
