"""One prepared call: every entry point (per_user, summary, curve, item_groups, inspect, the
page, compare_recommendations, the command line) turns its arguments into a plan here.

:func:`resolve` fills in the options (defaults, then a profile's conventions under the explicit
ones); :func:`inputs` checks the arguments (:func:`recframe.engine._validate.check_arguments`), reads
the frames onto one engine, classifies the ``by`` keys, aligns join keys and checks the side
inputs; :func:`prepare` builds the engine's plan from them (:func:`recframe.engine._engine.evaluate`).
Within :func:`shared_preparation` (the report page), calls on the same in-memory inputs prepare
them once. Nothing here computes a metric.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar, cast

import narwhals as nw
import polars as pl

from recframe import _names as n
from recframe import conventions, profiles
from recframe import options as options_table
from recframe.engine import _checks, _engine, _frames, _item_groups, _side
from recframe.engine import _validate as v
from recframe.errors import RecframeError, UncheckedDataWarning, fix, ref


def resolve(k: Any, metrics: Any, given: dict[str, Any], names: Sequence[str], function: str) -> dict[str, Any]:
    """The call's arguments: every option (a name that is not one raises), at its default where
    left out, and the conventions from the profile where left out (explicit options win). The
    profile's name stays (``profile``), with its ``per_metric`` options and ``no_cutoff`` metrics."""
    kwargs = {"k": k, "metrics": metrics, **options_table.resolve(given, names, function)}
    refuse_checked_duplicates(given)
    explicit = {name: kwargs.pop(name) for name in conventions.DEFAULTS}
    resolved, kwargs["metrics"] = profiles.resolve(kwargs["profile"], explicit, kwargs["metrics"])
    return {**kwargs, **resolved}


def refuse_checked_duplicates(given: dict[str, Any]) -> None:
    """checks=False with check_duplicates given as True or "used": the call asks for a check
    and for no checks at once. Refused rather than one silently winning: a reader of the call
    would take either for granted (check_duplicates=False with it is consistent, and fine)."""
    if given.get("checks") is False and given.get("check_duplicates", False) is not False:
        value = given["check_duplicates"]
        raise RecframeError(
            f"{fix('check_duplicates', value)} asks for the duplicate check, and {fix('checks', False)} switches every "
            f"data check off, the duplicate check included. Hint: leave out {ref('check_duplicates')} "
            f"({fix('checks', False)} implies {fix('check_duplicates', False)}), or leave out {fix('checks', False)} to "
            "keep the checks."
        )


def warn_unchecked(spec: v.Spec) -> None:
    """Name checks=False in what the call gives back: a result frame carries no record of its
    call on every engine (a Polars frame has none), so each call that skipped the data checks
    says so as a :class:`recframe.errors.UncheckedDataWarning`, pointed at the caller's line
    (silence it by its category)."""
    if spec.selection.checks:
        return
    frame, level = sys._getframe(0), 1  # the first frame outside recframe is the caller's
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    warnings.warn(UncheckedDataWarning(_checks.unchecked_text()), stacklevel=level)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # recframe/, not engine/


def _side_frame(frame: Any, arg: str, main: nw.LazyFrame, wanted: list[tuple[str, str]]) -> tuple[nw.LazyFrame, dict[str, Any]]:
    """A side input (truth=, users=, exclude=) as a lazy frame on the engine of `main`, checked
    to have the `wanted` (argument, column) pairs; returns it with its schema."""
    lf, _ = _frames.lazy(frame, arg)
    _frames.same_engine(main, lf, arg)
    schema = _frames.schema_of(lf, ref(arg))
    v.check_columns(schema, wanted, f"{arg} frame")
    return lf, schema


def _align_join_keys(
    spec: v.Spec, lf: nw.LazyFrame, recs_schema: dict[str, Any], *sides: nw.LazyFrame | None
) -> tuple[nw.LazyFrame | None, ...]:
    """The frames with every join key cast to one dtype where they differ only in width or
    string flavour; a real disagreement raises (see join_dtypes). A frame's own join keys
    only: users= joins on the user, train= and items= on the item (a user column of items=
    is not read), the truth and exclude= on the user, the item and the list keys they hold."""
    c = spec.columns
    ids = [x for x in (c.user, c.item) if x is not None]
    joined = {
        "the recommendations": [*ids, *c.list_keys],
        ref("truth"): [*ids, *c.list_keys],
        ref("users"): [x for x in (c.user,) if x is not None],
        ref("exclude"): [*ids, *c.list_keys],
        ref("train"): [c.item],
        ref("items"): [c.item],
    }
    frames = dict(zip(joined, (lf, *sides)))
    schemas = {label: recs_schema if f is lf else dict(f.collect_schema()) for label, f in frames.items() if f is not None}
    for column in [*ids, *c.list_keys]:
        dtypes = {label: schema[column] for label, schema in schemas.items() if column in schema and column in joined[label]}
        target = v.join_dtypes(column, dtypes)
        if target is not None:
            for label in dtypes:
                frames[label] = frames[label].with_columns(nw.col(column).cast(target))  # type: ignore[union-attr]
    return tuple(frames.values())


#: The truth broadcast over the model keys is refused past this many rows when it is also more
#: than BROADCAST_FACTOR times the rows given: the mark of a by key with too many values.
BROADCAST_ROWS, BROADCAST_FACTOR = 50_000_000, 20


def _check_broadcast(spec: v.Spec, lf: nw.LazyFrame, truth: nw.LazyFrame) -> None:
    """Refuse a truth broadcast over the model keys that would dwarf the inputs (three counts,
    one small query each: the model groups, the truth rows and the recommendation rows)."""

    def count(frame: nw.LazyFrame) -> int:
        return int(frame.select(nw.len()).collect().item())

    groups = count(lf.select(*spec.columns.model_keys).unique())
    n_truth, n_recs = count(truth), count(lf)
    built = groups * n_truth
    if built > BROADCAST_ROWS and built > BROADCAST_FACTOR * (n_truth + n_recs):
        keys = list(spec.columns.model_keys)
        raise RecframeError(
            f"{ref('by', keys)} would score every truth row under each of {groups:,} groups of {keys}: {built:,} rows to "
            f"build from {n_recs + n_truth:,} rows given ({n_recs:,} recommendations, {n_truth:,} truth rows). A model "
            "key with that many values is usually a mistake. Hint: a user attribute (segment, cohort) belongs in "
            f"{ref('users')}, a fold or date in {ref('truth')} too (then it is joined, not broadcast); to evaluate "
            "that many models, "
            "call summary on batches of them."
        )


def _check_broadcast_once(spec: v.Spec, lf: nw.LazyFrame, truth: nw.LazyFrame, sources: tuple[Any, ...]) -> None:
    """:func:`_check_broadcast`, once per (recommendations, truth, model keys) while
    shared_preparation is open and the frames are Polars ones (the page's dozen calls on one
    frame: three counts each otherwise)."""
    if not _shareable(sources):
        _check_broadcast(spec, lf, truth)
        return
    key = (*(id(x) for x in sources), spec.columns.model_keys)
    _once(_SHARED.broadcast, key, sources, lambda: _check_broadcast(spec, lf, truth))


def _refuse_list_keys(spec: v.Spec, arg: str, schema: dict[str, Any]) -> None:
    """train= and items= are read whole, for every list: a model or truth key among their
    columns (a training set per fold) would be silently pooled, so it is refused."""
    held = [b for b in spec.columns.list_keys if b in schema]
    if held:
        key = held[0]
        raise RecframeError(
            f"{ref(arg)} has a column {key!r}, which is a {ref('by')} key: recframe reads {ref(arg)} whole for every "
            f"list and would pool its {key!r} values instead of joining on them. Hint: evaluate each {key} in a call "
            f"of its own (filter both frames), or drop {key!r} from {ref(arg)} to pool them on purpose."
        )


@dataclasses.dataclass(frozen=True)
class Inputs:
    """One call's inputs, checked and aligned, before the plan is built: the recommendations
    (`lf`), the side frames as lazy frames on its engine (``train`` and ``items`` as given, with
    every column; ``side`` holds them renamed), the spec and the engine (its traits, and the
    type of frame to return)."""

    lf: nw.LazyFrame
    spec: v.Spec
    engine: _frames.Engine
    truth: nw.LazyFrame | None
    users: nw.LazyFrame | None
    exclude: nw.LazyFrame | None
    train: nw.LazyFrame | None
    items: nw.LazyFrame | None
    side: _side.SideInputs
    #: the frames as the caller passed them (recommendations, truth=, users=, exclude=): what
    #: tells two calls on the same inputs apart (see shared_preparation)
    sources: tuple[Any, ...] = ()


def per_user(frame: Any, k: Any, metrics: Any, options: dict[str, Any]) -> Any:
    """:func:`recframe.per_user`, as the caller's type of frame (what compare_recommendations
    and the trec_eval drop-in evaluate too)."""
    kwargs = resolve(k, metrics, options, options_table.PER_USER_NAMES, "per_user")
    v.check_per_user_metrics(kwargs["metrics"])
    plan, spec, engine = prepare(frame, kwargs)
    return engine.from_lazy(per_user_frame(plan, spec))


def per_user_frame(plan: _engine.Plan, spec: v.Spec) -> nw.LazyFrame:
    """The per-user rows of `plan`, sorted by the keys (lazy engines return rows in no
    particular order), the user column under its own name."""
    rows = _engine.per_user_rows(plan.per_user, spec).sort([*spec.columns.by, n.USER])
    return user_column(rows, spec)


def prepare(frame: Any, kwargs: dict[str, Any]) -> tuple[_engine.Plan, v.Spec, _frames.Engine]:
    i = inputs(frame, kwargs)
    return evaluated(i), i.spec, i.engine


class _Shared:
    """The prepared rows of each distinct preparation while :func:`shared_preparation` is open
    (a Future each: the first call computes them, calls in other threads wait for them)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.rows: dict[tuple[Any, ...], tuple[Future[nw.LazyFrame], tuple[Any, ...]]] = {}
        #: per (recommendations, truth, model keys), the check of the truth broadcast (a Future
        #: each, as the rows), with the frames
        self.broadcast: dict[tuple[Any, ...], tuple[Future[None], tuple[Any, ...]]] = {}


_SHARED = _Shared()


@contextlib.contextmanager
def shared_preparation() -> Iterator[None]:
    """Within this block, calls on the same in-memory inputs (the same frame objects, the same
    columns, conventions and thresholds) prepare them once: the rows that
    :func:`recframe.engine._engine.prepare` builds (``exclude=`` removed, ranked by ``score=``,
    ``truth=`` joined) are computed by the first call and read by the others, each of which
    still runs its own data checks on them; the check that ``truth=`` broadcast over the model
    keys stays small (three counts) runs once too. The report page makes a dozen calls on one frame
    (the full workflow page: 1.56 s to 1.14 s). Released when the outermost block ends."""
    with _SHARED.lock:
        _SHARED.depth += 1
    try:
        yield
    finally:
        with _SHARED.lock:
            _SHARED.depth -= 1
            if not _SHARED.depth:
                _SHARED.rows.clear()
                _SHARED.broadcast.clear()


def _shared_rows(i: Inputs) -> nw.LazyFrame | None:
    """The prepared rows of `i`, computed once while shared_preparation is open (None outside
    it, on an engine, which holds its own data, and for a pandas or Arrow input, which another
    thread could change in place between two calls: the page passes Polars frames)."""
    if not i.engine.in_process or not _shareable(i.sources):
        return None
    spec = i.spec
    facts = (spec.facts.list_runs, spec.facts.integer_rank, spec.facts.categorical_item)
    selection = (spec.selection.threshold, spec.selection.score_threshold)
    # the objects' ids name the inputs; the entry keeps the objects, so no id is reused meanwhile
    key = (tuple(id(x) for x in i.sources), repr(spec.columns), repr(spec.conventions), facts, selection, spec.reranks)

    def prepared() -> nw.LazyFrame:
        return nw.from_native(_engine.prepare(i.lf, i.truth, spec, i.users, i.exclude).to_native().collect().lazy())

    return _once(_SHARED.rows, key, i.sources, prepared)


def _shareable(sources: tuple[Any, ...]) -> bool:
    """Whether calls on `sources` share their work now: shared_preparation is open and every
    frame given is a Polars one (a pandas or Arrow frame could be changed in place by another
    thread between two calls). No sources, nothing shared (a set of users of
    summary(partitions=), see recframe.statistics._partitions, names none)."""
    return (
        bool(sources) and bool(_SHARED.depth) and all(x is None or isinstance(x, (pl.DataFrame, pl.LazyFrame)) for x in sources)
    )


_T = TypeVar("_T")


def _once(
    table: dict[tuple[Any, ...], tuple[Future[Any], tuple[Any, ...]]],
    key: tuple[Any, ...],
    sources: tuple[Any, ...],
    compute: Callable[[], _T],
) -> _T:
    """``compute()`` once per `key` of `table` while shared_preparation is open: the first call
    computes it, calls in other threads wait for it and get its value or raise its error. The
    entry keeps `sources` (the frames whose ids are in the key), so that no id is reused meanwhile."""
    with _SHARED.lock:
        entry = table.get(key)
        owner = entry is None
        if entry is None:
            entry = table[key] = (Future(), sources)
    future = entry[0]
    if owner:
        try:
            future.set_result(compute())
        except BaseException as error:
            future.set_exception(error)
            raise
    return cast(_T, future.result())


def evaluated(i: Inputs, models: nw.LazyFrame | None = None) -> _engine.Plan:
    """The plan of checked inputs; a SQL engine refusing it while it is built or checked (the
    checks run then) raises a RecframeError that says why, as every call does. `models`: the
    model key values the truth is broadcast over, when `i` holds some users only."""
    try:
        plan = _engine.evaluate(i.lf, i.truth, i.spec, i.engine, i.users, i.exclude, i.side, _shared_rows(i), models)
    except RecframeError:
        raise
    except Exception as error:  # a SQL engine refusing the plan while it is built or checked
        known = i.engine.engine_error(error)
        if known is None:
            raise
        raise known from None
    return plan


def inputs(frame: Any, kwargs: dict[str, Any]) -> Inputs:
    """The checks and conversions of a call, up to the plan (see :class:`Inputs`)."""
    spec = v.check_arguments(kwargs)
    lf, engine = _frames.lazy(frame, "frame", sorted_key=spec.columns.user if not spec.columns.by else None)
    columns = spec.columns
    engine.check_names(
        [x for x in (columns.user, columns.item, columns.rank, columns.score, columns.relevance, *columns.by) if x is not None],
    )
    schema = _frames.schema_of(lf, "frame")
    recs_schema = dict(schema)
    user_key = [("user", spec.columns.user)] if spec.columns.user is not None else []
    ordering = ("score", spec.columns.score) if spec.columns.score is not None else ("rank", str(spec.columns.rank))
    users_lf = exclude_lf = truth_lf = None
    users_schema = truth_schema = None
    if kwargs["users"] is not None:
        users_lf, users_schema = _side_frame(kwargs["users"], "users", lf, user_key)
    relevance = [("relevance", spec.columns.relevance)] if kwargs["truth"] is None else []  # (else the truth's)
    v.check_columns(schema, [*user_key, ("item", spec.columns.item), ordering, *relevance], "frame")
    if kwargs["truth"] is not None:
        if spec.columns.relevance in schema:
            raise RecframeError(
                f"the recommendations frame has a column {spec.columns.relevance!r} ({ref('relevance')}), but with "
                f"{ref('truth')} relevance comes from the truth frame. Hint: drop that column from the "
                f"recommendations, or pass {fix('truth', None)} to use it."
            )
        truth_lf, truth_schema = _side_frame(
            kwargs["truth"], "truth", lf, [*user_key, ("item", spec.columns.item), ("relevance", spec.columns.relevance)]
        )
        schema[spec.columns.relevance] = truth_schema[spec.columns.relevance]
    model, truth_keys, attr = v.classify_keys(
        spec.columns.by,
        list(schema),
        None if truth_schema is None else list(truth_schema),
        None if users_schema is None else [c for c in users_schema if c != spec.columns.user],
    )
    columns = dataclasses.replace(spec.columns, model_keys=model, truth_keys=truth_keys, attr_keys=attr)
    spec = dataclasses.replace(spec, columns=columns)
    if kwargs["exclude"] is not None:
        exclude_lf, _ = _side_frame(kwargs["exclude"], "exclude", lf, [*user_key, ("item", spec.columns.item)])
    train_lf = items_lf = None
    items_schema: dict[str, Any] = {}
    if kwargs["train"] is not None:
        train_lf, train_schema = _side_frame(kwargs["train"], "train", lf, [*user_key, ("item", spec.columns.item)])
        _refuse_list_keys(spec, "train", train_schema)
    if kwargs["items"] is not None:
        wanted = [("item", spec.columns.item), *(("item_features", f) for f in spec.selection.item_features)]
        if spec.selection.item_group not in (None, "popularity"):
            wanted.append(("item_group", str(spec.selection.item_group)))
        items_lf, items_schema = _side_frame(kwargs["items"], "items", lf, wanted)
        _refuse_list_keys(spec, "items", items_schema)
    aligned, truth_lf, users_lf, exclude_lf, train_lf, items_lf = _align_join_keys(
        spec, lf, recs_schema, truth_lf, users_lf, exclude_lf, train_lf, items_lf
    )
    assert aligned is not None
    lf = aligned
    side = _side_inputs(spec, train_lf, items_lf, items_schema)
    if spec.selection.baseline is not None:
        _check_baseline(spec, lf)
    if truth_lf is not None and spec.columns.model_keys and engine.counts_cheaply:
        # (a LazyFrame or a Spark job would pay a pass over the data first)
        _check_broadcast_once(spec, lf, truth_lf, (frame, kwargs["truth"]))
    key_schema = {**schema, **{b: users_schema[b] for b in attr}} if users_schema else schema
    v.check_dtypes(key_schema, spec)
    spec = _with_facts(spec, schema, items_schema)
    if _numbers_runs(spec, truth_lf, exclude_lf):
        runs = engine.list_runs(lf, [*spec.columns.list_keys, str(spec.columns.user)], n.LIST)
        if runs is not None:
            lf = runs
            spec = dataclasses.replace(spec, facts=dataclasses.replace(spec.facts, list_runs=True))
    sources = (frame, kwargs["truth"], kwargs["users"], kwargs["exclude"])
    warn_unchecked(spec)
    return Inputs(lf, spec, engine, truth_lf, users_lf, exclude_lf, train_lf, items_lf, side, sources)


def _with_facts(spec: v.Spec, schema: dict[str, Any], items_schema: dict[str, Any]) -> v.Spec:
    """`spec` with the facts its inputs' dtypes tell: whole ranks, a categorical item, label
    lists among the item features and groups."""
    facts = dataclasses.replace(
        spec.facts,
        # 64-bit unsigned ranks go the checked way: values past 2**63 do not fit an Int64
        integer_rank=spec.columns.rank is None
        or (schema[spec.columns.rank].is_integer() and schema[spec.columns.rank] != nw.UInt64),
        categorical_item=isinstance(schema[spec.columns.item], (nw.Enum, nw.Categorical)),
        label_features=any(_side.is_label_list(items_schema[f]) for f in spec.selection.item_features if f in items_schema),
        label_groups=str(spec.selection.item_group) in items_schema
        and _side.is_label_list(items_schema[str(spec.selection.item_group)]),
    )
    return dataclasses.replace(spec, facts=facts)


def _numbers_runs(spec: v.Spec, truth: nw.LazyFrame | None, exclude: nw.LazyFrame | None) -> bool:
    """Whether the per-list passes may group by the runs of rows of each list where the engine
    numbers them (recframe.engine._frames.list_runs: a frame in memory): lists with keys besides the
    user (a single user key is flagged sorted instead), ranked as given (a re-rank or a ranking
    by score reads the keys in windows of its own), and no truth= (its truth-only rows, joined
    in later, belong to no run of the frame)."""
    return (
        bool(spec.columns.list_keys)
        and spec.columns.user is not None
        and spec.columns.score is None
        and not spec.reranks
        and truth is None
        and exclude is None
    )


def _side_inputs(
    spec: v.Spec, train: nw.LazyFrame | None, items: nw.LazyFrame | None, items_schema: dict[str, Any]
) -> _side.SideInputs:
    """train= and items= renamed and checked (one small query each)."""
    if train is not None:
        train = _side.renamed(train, spec, "train")
        _side.check_train(train, spec)
    if items is not None:
        _item_groups.refuse_bad_name(spec, items_schema)
        items = _side.renamed(items, spec, "items")
        _side.check_items(items, spec, items_schema)
    side = _side.SideInputs(train=train, items=items)
    _item_groups.check(items, spec, items_schema, side)
    return side


def _check_baseline(spec: v.Spec, lf: nw.LazyFrame) -> None:
    """baseline= is a value of the one model key, present in the recommendations (one small
    query): a baseline that matches no list would make every intersection 0."""
    value = spec.selection.baseline
    if len(spec.columns.model_keys) != 1:
        found = list(spec.columns.model_keys)
        raise RecframeError(
            f"{ref('baseline', value)} names a model, which needs exactly one model key in {ref('by')} (a column of the "
            f"recommendations only); the call has {found or 'none'}. Hint: pass e.g. {fix('by', 'model')} with "
            "the column that names the models."
        )
    model = spec.columns.model_keys[0]
    found_rows = int(lf.filter(_side.is_baseline(spec)).select(nw.len()).collect().item())
    if not found_rows:
        raise RecframeError(
            f"{ref('baseline', value)} matches no row of column {model!r}, so there is no baseline list to compare with. "
            f"Hint: pass one of the values of {model!r}."
        )


def user_column(lf: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    if spec.columns.user is None:
        return lf.drop(n.USER)
    return lf.rename({n.USER: spec.columns.user})
