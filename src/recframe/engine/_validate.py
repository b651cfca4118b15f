"""Checks of arguments and column types, each failing with a message that names the fix.

Arguments and the schema are checked when the function is called. The data checks
(duplicates, nulls, rank range, NaN) need a pass over the rows: they are a plan the engine
runs beside the metrics, in :mod:`recframe.engine._checks`.
"""

from __future__ import annotations

import decimal
import difflib
import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import narwhals as nw

from recframe._names import ITEM, RANK, REL, SCORE, USER
from recframe.conventions import CHOICES, TABLE, Conventions
from recframe.errors import RecframeError, fix, ref
from recframe.metrics import REGISTRY, TERMS, default_metrics

#: The count columns of :func:`recframe.summary`, after the ``by`` keys.
COUNT_COLUMNS = ("n_users", "n_skipped", "n_unranked", "n_no_relevant", "n_no_truth")


def is_count_column(name: str) -> bool:
    """A count column of a summary: one of COUNT_COLUMNS, or a metric's own ``n_users_<metric>``.

    >>> is_count_column("n_no_truth"), is_count_column("n_users_ndcg"), is_count_column("ndcg@10")
    (True, True, False)
    """
    return name in COUNT_COLUMNS or name.startswith("n_users_")


# Relevant grades above MAX_EXP2_GRADE under gain="exp2": 2**1000 is about 1e301, so sums of
# up to 1e7 such gains stay finite in float64; past it DCG would be infinite and nDCG NaN.
MAX_EXP2_GRADE = 1000
# ... and with gain="linear" the gain is the grade: the same bound on it
# (1e308 was taken, and a mean of two such DCGs printed inf).
MAX_LINEAR_GRADE = 2.0**MAX_EXP2_GRADE
# The largest rank given as a float, decimal or UInt64 that is taken: every integer up to it is
# exact in float64.
MAX_RANK_VALUE = 2**53


@dataclass(frozen=True)
class Columns:
    """The user's column names, and the ``by`` keys sorted by where they live."""

    user: str | None
    item: str
    rank: str | None  # None when ranks are derived from `score`
    score: str | None
    relevance: str
    by: tuple[str, ...]
    #: the ``by`` keys by where they live (set from the schemas; see :func:`classify_keys`):
    #: model keys (only in the recommendations: truth broadcast over them), truth keys (in the
    #: truth too: joined on), user attributes (in users=: joined onto each user's row)
    model_keys: tuple[str, ...] = ()
    truth_keys: tuple[str, ...] = ()
    attr_keys: tuple[str, ...] = ()

    @property
    def list_keys(self) -> tuple[str, ...]:
        """The ``by`` keys that split lists (model and truth keys), in ``by`` order."""
        return tuple(b for b in self.by if b not in self.attr_keys)

    def source(self, internal: str) -> str:
        """The user's name for an internal column, for messages."""
        names = {USER: self.user, ITEM: self.item, RANK: self.rank, SCORE: self.score, REL: self.relevance}
        return names.get(internal) or internal


@dataclass(frozen=True)
class Selection:
    """What is computed and what counts: cut-offs, metrics, relevance, checks."""

    ks: tuple[int, ...]
    metrics: tuple[str, ...]
    threshold: float | None
    score_threshold: float | None
    #: metrics whose @k columns are not produced (a profile's peer has them without cut-off only)
    no_cutoff: tuple[str, ...]
    #: the metrics that leave out users with nothing recommended (unranked_users="skip")
    unranked_skip: tuple[str, ...]
    #: "used", True or False: which rows the duplicate check reads (see recframe.engine._checks)
    check_duplicates: bool | str
    #: a recommended user missing from users=: "error" or "drop"
    unlisted_users: str
    #: the items= columns ild reads (item_features=)
    item_features: tuple[str, ...]
    #: the model (a value of the model key) intersection and unexpectedness compare with
    baseline: Any
    #: the share of training pairs the long-tail head holds
    head_share: float
    #: the items= column of the item groups, or "popularity" (head and tail), or None
    item_group: str | None = None
    #: False: the data checks are off (checks=False, recframe.engine._checks.plan is empty)
    checks: bool = True


@dataclass(frozen=True)
class Facts:
    """What the inputs are: which side frames were given, what the rank column holds."""

    with_truth: bool
    with_users: bool
    with_exclude: bool
    with_train: bool = False
    with_items: bool = False
    integer_rank: bool = True  # set from the schema: float ranks must be checked for whole numbers
    #: set from the schema: Enum/Categorical items break score ties by their names, not by the
    #: category order, so that every engine orders them alike
    categorical_item: bool = False
    #: set from the schema of items=: an item feature holds label lists (genres)
    label_features: bool = False
    #: set from the schema of items=: the item_group= column holds label lists, so an item's
    #: weight is shared by its groups and a group's n_items is a weighted count
    label_groups: bool = False
    #: the frame is in memory and each list (by keys, user) is one contiguous run of rows: the
    #: LIST column numbers the runs, sorted, and the per-list passes group by it alone
    list_runs: bool = False


@dataclass(frozen=True)
class Spec:
    """Everything one call asked for, checked and normalised, in four parts."""

    columns: Columns
    conventions: Conventions
    selection: Selection
    facts: Facts

    @property
    def reranks(self) -> bool:
        """Given ranks are re-ranked densely per list (rank_gaps="rerank", or rows excluded)."""
        return self.columns.rank is not None and (self.conventions.rank_gaps == "rerank" or self.facts.with_exclude)


def fail(message: str, hint: str | None = None) -> RecframeError:
    return RecframeError(f"{message} Hint: {hint}" if hint else message)


def whole(value: Any) -> int | None:
    """`value` as a Python int when it is a whole number, else None: an int or a numpy integer
    (any :class:`numbers.Integral`), never a bool (``True`` is no count). The one check of every
    integer argument (``k``, ``partitions``, ``bins``, ``edges``, ``n_resamples``, ...); each
    caller words its own refusal and range.

    >>> import numpy as np
    >>> whole(10), whole(np.int32(10)), whole(True), whole(2.0), whole("10")
    (10, 10, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def whole_at_least(arg: str, value: Any, minimum: int, says: str, hint: str) -> int:
    """`value` of argument `arg` as an int (:func:`whole`) of at least `minimum`, or a refusal:
    ``{arg}={value} {says} Hint: {hint}``.

    >>> import numpy as np
    >>> whole_at_least("bins", np.int64(4), 1, "is not a positive whole number.", "pass e.g. bins=4.")
    4
    >>> whole_at_least("bins", 0, 1, "is not a positive whole number.", "pass e.g. bins=4.")
    Traceback (most recent call last):
    recframe.errors.RecframeError: bins=0 is not a positive whole number. Hint: pass e.g. bins=4.
    """
    number = whole(value)
    if number is None or number < minimum:
        raise fail(f"{ref(arg, value)} {says}", hint)
    return number


def cutoffs(k: Any) -> tuple[int, ...]:
    values = list(k) if isinstance(k, (list, tuple)) else [k]
    if not values:
        raise fail(f"{ref('k', [])} is empty.", f"pass a positive int or a list of them, e.g. {fix('k', [5, 10])}.")
    out: list[int] = []
    for given in values:
        v = whole(given)
        if v is None:
            raise fail(f"{ref('k', given)} is not an int.", f"pass a positive int or a list of them, e.g. {fix('k', [5, 10])}.")
        if v <= 0:
            raise fail(f"{ref('k', v)} must be >= 1.", f"k is the length of the list cut, e.g. {fix('k', 10)}.")
        if v > 2**63 - 1:
            raise fail(f"{ref('k', v)} is larger than a 64-bit integer.", "for the whole list pass k=sys.maxsize.")
        if int(v) not in out:  # a repeated k would only repeat columns
            out.append(int(v))
    return tuple(out)


def metric_names(metrics: Any) -> tuple[str, ...]:
    if metrics is None:
        return default_metrics()
    if not isinstance(metrics, (str, Iterable)):
        raise fail(
            f"{ref('metrics', metrics)} is not a metric name or a list of them.",
            f"e.g. {fix('metrics', ['ndcg', 'recall'])}; known: {', '.join(REGISTRY)}.",
        )
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise fail(f"{ref('metrics', [])} is empty.", f"pass {fix('metrics', None)} for all, or some of {list(REGISTRY)}.")
    for name in names:
        if name not in REGISTRY:
            close = difflib.get_close_matches(str(name), REGISTRY, n=1)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise fail(f"unknown metric {name!r}.", f"{hint}known metrics: {', '.join(REGISTRY)}.")
    return tuple(dict.fromkeys(names))


def group_level(metrics: Any) -> list[str]:
    """The group-level metrics (one value per summary group) among `metrics`."""
    return [m for m in metric_names(metrics) if REGISTRY[m].level == "group"]


def check_per_user_metrics(metrics: Any) -> None:
    """per_user has one row per list: a group-level metric (one value per group) is refused."""
    group = group_level(metrics)
    if group:
        raise fail(
            f"metric {group[0]!r} has one value per group (a group-level metric), not one per user.",
            f"use summary(..., metrics=[{group[0]!r}]) for it, and per_user for the user-level metrics.",
        )


def reads(metrics: Iterable[str], *inputs: str) -> bool:
    """Whether any of `metrics` (checked names) requires one of `inputs` ("train", "baseline",
    "catalog", ...): the side inputs and their checks are built only then."""
    return any(need in inputs for name in metrics for need in REGISTRY[name].requires)


#: what each required input of a metric is, for the message when it is missing
_REQUIRED = {
    "train": "the training interactions (user, item), for item popularity",
    "items": "the catalog (one row per item, with its features)",
    "item_features": "the columns of items= that hold the item features",
    "baseline": "the model (a value of the by column) whose lists are compared with",
    "item_group": 'the items= column that groups the items (a category, a provider), or "popularity"',
}


def _check_requires(metrics: tuple[str, ...], given: dict[str, bool]) -> None:
    """Each metric's required inputs (side inputs such as train= or items=) must be given."""
    for name in metrics:
        for arg in REGISTRY[name].requires:
            if arg == "catalog":
                if not (given.get("items") or given.get("train")):
                    raise fail(
                        f"metric {name!r} needs the catalog: {ref('items')} (one row per item), or {ref('train')} "
                        "(whose items are then the catalog); neither was given.",
                        f"pass {ref('items')} the catalog.",
                    )
            elif not given.get(arg, False):
                what = _REQUIRED.get(arg, "the frame it reads")
                raise fail(f"metric {name!r} needs {ref(arg)}, which was not given.", f"pass {ref(arg)} {what}.")


def _check_item_group(item_group: Any, metrics: tuple[str, ...], given: dict[str, bool]) -> None:
    """item_group= names a column of items=, or is "popularity" (head and tail from train=);
    calibration and pop_rsp also read train=."""
    if item_group is None:
        return
    if not isinstance(item_group, str) or not item_group:
        raise fail(
            f'{ref("item_group", item_group)} must be the name of a column of {ref("items")}, or "popularity".',
            f"e.g. {fix('item_group', 'genre')}.",
        )
    if item_group == "popularity" and not given["train"]:
        raise fail(
            f"{fix('item_group', 'popularity')} splits the items into the head and the tail of their popularity in "
            f"{ref('train')}, which was not given.",
            f"pass {ref('train')} the training interactions.",
        )
    if item_group != "popularity" and not given["items"]:
        raise fail(
            f"{ref('item_group', item_group)} names a column of {ref('items')}, which was not given.",
            f"pass {ref('items')} the catalog, one row per item with its {item_group!r}.",
        )
    for name in metrics:
        if name in ("miscalibration", "calibration_js", "pop_rsp") and not given["train"]:
            what = "the user's training mix of item groups" if name != "pop_rsp" else "the pairs of user and item not in train"
            raise fail(f"metric {name!r} needs {ref('train')} ({what}), which was not given.", f"pass {ref('train')}.")


def _number(name: str, value: Any) -> float | None:
    if value is None:
        return None
    # any real number: int, float, numpy scalars, Decimal and Fraction alike
    real = isinstance(value, (numbers.Real, decimal.Decimal)) and not isinstance(value, bool)
    if not real or not math.isfinite(float(value)):
        raise fail(f"{ref(name, value)} is not a finite number.", f"pass e.g. {fix(name, 2.0)}, or leave it out.")
    return float(value)


def _names(arg: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    names = (value,) if isinstance(value, str) else tuple(value)
    for name in names:
        if not isinstance(name, str):
            raise fail(f"{ref(arg, value)}: column names must be strings.", f"e.g. {fix(arg, 'model')}.")
    if len(set(names)) != len(names):
        raise fail(f"{ref(arg, value)} names a column twice.")
    return names


#: a quantile aggregate: p0 .. p100, whole percents (a dot in a column name is a struct field
#: on Spark)
_QUANTILE = re.compile(r"p(100|[0-9]{1,2})")


def aggregates(aggregate: Any) -> str | tuple[str, ...]:
    """``aggregate=`` checked: one aggregate (a string) or a list of distinct ones.

    >>> aggregates("p90"), aggregates(["mean", "median"])
    ('p90', ('mean', 'median'))
    """
    names = [aggregate] if isinstance(aggregate, str) else list(aggregate) if isinstance(aggregate, (list, tuple)) else None
    hint = f'pass "mean", "gmean", "median", a quantile such as "p90", or a list, e.g. {fix("aggregate", ["mean", "median"])}.'
    if not names:
        raise fail(f"{ref('aggregate', aggregate)} names no aggregate.", hint)
    for name in names:
        if not isinstance(name, str) or not (name in ("mean", "gmean", "median") or _QUANTILE.fullmatch(name)):
            outside = isinstance(name, str) and re.fullmatch(r"p[0-9]+", name) is not None
            problem = (
                "is a quantile outside 0-100"
                if outside
                else "is not a known aggregate (quantiles are whole percents: p0 .. p100)"
            )
            raise fail(f"{ref('aggregate', aggregate)}: {name!r} {problem}.", hint)
    if len(set(names)) < len(names):
        raise fail(f"{ref('aggregate', aggregate)} names an aggregate twice.", "name each once.")
    return aggregate if isinstance(aggregate, str) else tuple(names)


def check_conventions(options: Mapping[str, Any]) -> Conventions:
    """The resolved convention options (a profile's values, explicit ones on top), checked
    against :data:`recframe.conventions.CHOICES`."""
    for option, choices in CHOICES.items():
        value = options[option]
        bounds = TABLE[option].bounds
        if bounds is not None:
            low, high = bounds
            number = isinstance(value, numbers.Real) and not isinstance(value, bool)
            if not number or not math.isfinite(float(value)) or not low < float(value) < high:
                raise fail(
                    f"{ref(option, value)} must be a number between {low:g} and {high:g}.", f"e.g. {fix(option, choices[0])}."
                )
            options = {**options, option: float(value)}
        elif all(isinstance(c, bool) for c in choices):
            if not isinstance(value, bool):
                raise fail(f"{ref(option, value)} must be True or False.", f"pass {fix(option, False)} or True.")
        elif not isinstance(value, str) or value not in choices:
            shown = ", ".join(f'"{c}"' for c in choices)
            raise fail(f"{ref(option, value)} is not a known option value.", f"choose one of {shown}.")
    return Conventions(**{option: options[option] for option in CHOICES})


def check_arguments(call: Mapping[str, Any]) -> Spec:
    """Check every argument that can be checked without looking at the data.

    `call` is a resolved call (:func:`recframe.engine._call.resolve`): ``k``, ``metrics``, every
    option at its value or default, the convention options with a profile's values under the
    explicit ones, and a profile's ``per_metric`` and ``no_cutoff``. Names it does not read
    (the interval options) are left to their own checks.
    """
    conventions = check_conventions(call)
    columns = _check_columns(call, conventions)
    asked = metric_names(call["metrics"])
    _check_side_inputs(call, asked)
    output_names = {"n_relevant", *COUNT_COLUMNS, *asked}
    reserved = [c for c in (*columns.by, columns.user) if c in output_names or (c and "@" in c)]
    if reserved:
        raise fail(f"column {reserved[0]!r} would collide with an output column of the same name.", "rename it.")
    return Spec(
        columns=columns,
        conventions=conventions,
        selection=_selection(call, conventions, asked),
        facts=Facts(**{f"with_{name}": call[name] is not None for name in ("truth", "users", "exclude", "train", "items")}),
    )


def _check_columns(call: Mapping[str, Any], conventions: Conventions) -> Columns:
    """The column arguments (user, item, rank, score, relevance, by): names, distinct, not
    reserved; and the threshold, which must leave the gains defined."""
    user, item, rank, score, relevance, by = (call[name] for name in ("user", "item", "rank", "score", "relevance", "by"))
    if call["users"] is not None and user is None:
        raise fail(
            f"{ref('users')} lists users, but {ref('user', None)} treats each frame as a single list.",
            f"pass {ref('user')} the user column, or leave out {ref('users')}.",
        )
    for arg, value in (("item", item), ("relevance", relevance)):
        if not isinstance(value, str):
            raise fail(f"{ref(arg, value)} must be a column name.", f"e.g. {fix(arg, arg)}.")
    for arg, value in (("user", user), ("rank", rank), ("score", score)):
        if value is not None and not isinstance(value, str):
            raise fail(f"{ref(arg, value)} must be a column name or None.")
    if score is None and rank is None:
        raise fail(
            f"{ref('rank', None)} and {ref('score', None)}: recframe needs one to order each list.",
            f"pass {fix('rank', 'rank')} or {fix('score', 'score')}.",
        )
    threshold = _number("threshold", call["threshold"])
    if threshold is not None and threshold <= 0 and conventions.gain != "binary":
        raise fail(
            f"{ref('threshold', call['threshold'])} makes items with grade <= 0 relevant, but their {conventions.gain} gain "
            "would be <= 0, which leaves nDCG undefined.",
            f"use a threshold > 0, or {fix('gain', 'binary')}.",
        )
    by_names = _names("by", by)
    columns = [c for c in (user, item, score if score is not None else rank, relevance) if c is not None]
    clash = [c for c in by_names if c in columns]
    if clash:
        raise fail(f"{ref('by', by)} repeats the column {clash[0]!r}, which is already used as user/item/rank/relevance.")
    if len(set(columns)) != len(columns):
        raise fail(f"user/item/rank/score/relevance name the same column twice: {columns}.")
    for name in (*by_names, *columns):
        if name.startswith("__rf_"):
            raise fail(f"column name {name!r} starts with '__rf_', which recframe reserves.", "rename it.")
    named = {"user": user, "item": item, "rank": rank, "score": score, "relevance": relevance, "by": by}
    for arg, value in {**named, "item_features": call["item_features"]}.items():
        if value == "" or (arg in ("by", "item_features") and "" in _names(arg, value)):
            # not every engine can group by or select a column without a name (narwhals on Polars fails)
            raise fail(
                f"{ref(arg, value)} names a column with an empty name.",
                "rename the column first, e.g. df.rename({'': 'model'}), and pass that name.",
            )
    return Columns(user=user, item=item, rank=None if score is not None else rank, score=score, relevance=relevance, by=by_names)


def _check_side_inputs(call: Mapping[str, Any], asked: tuple[str, ...]) -> None:
    """Each asked metric has the side inputs it reads, and each side input what it needs."""
    features = _names("item_features", call["item_features"])
    given = {name: call[name] is not None for name in ("truth", "users", "exclude", "train", "items", "baseline", "item_group")}
    given["item_features"] = bool(features)
    _check_requires(asked, given)
    _check_item_group(call["item_group"], asked, given)
    if call["train"] is not None and call["user"] is None:
        raise fail(
            f"{ref('train')} counts the distinct training users of each item, but {ref('user', None)} has no user column.",
            f"pass {ref('user')} the user column (of the frame and of train=).",
        )
    if features and call["items"] is None:
        raise fail(f"{ref('item_features', list(features))} names columns of {ref('items')}, which was not given.")


def _selection(call: Mapping[str, Any], conventions: Conventions, asked: tuple[str, ...]) -> Selection:
    """What is computed and which rows count, checked."""
    check_duplicates, unlisted_users, head_share = call["check_duplicates"], call["unlisted_users"], call["head_share"]
    if not isinstance(check_duplicates, bool) and check_duplicates != "used":
        raise fail(
            f'{ref("check_duplicates", check_duplicates)} must be True or False, or "used".',
            'pass "used" (the rows that can change a number), True (every row) or False.',
        )
    checks = call.get("checks", True)
    if not isinstance(checks, bool):
        raise fail(
            f"{ref('checks', checks)} must be True or False.",
            f"pass {fix('checks', False)} to switch the data checks off for data you vouch for, or leave it out.",
        )
    if not checks and conventions.empty_users == "error":
        raise fail(
            f"{fix('empty_users', 'error')} asks for a data check (a user without a relevant item raises), and "
            f"{fix('checks', False)} switches the data checks off.",
            f"leave out one of them, e.g. pass {fix('empty_users', 'skip')} with {fix('checks', False)}.",
        )
    if not checks:
        check_duplicates = False  # checks=False implies check_duplicates=False (an explicit True is refused earlier)
    if unlisted_users not in ("error", "drop"):
        raise fail(f"{ref('unlisted_users', unlisted_users)} is not a known option value.", 'choose "error" or "drop".')
    score_threshold = _number("score_threshold", call["score_threshold"])
    if score_threshold is not None and call["score"] is None:
        raise fail(
            f"{ref('score_threshold', call['score_threshold'])} needs {ref('score')}: it cuts the list by score.",
            f"pass {fix('score', 'your_score_column')}, or drop score_threshold.",
        )
    real = isinstance(head_share, (numbers.Real, decimal.Decimal)) and not isinstance(head_share, bool)
    share = float(head_share) if real else None
    if share is None or not 0 < share < 1:
        raise fail(
            f"{ref('head_share', head_share)} must be a number strictly between 0 and 1: the share of training pairs "
            "the long-tail head holds.",
            f"e.g. {fix('head_share', 0.2)} (the default).",
        )
    _check_tie_policy(call, conventions, asked)
    per_metric = call.get("per_metric") or {}
    return Selection(
        ks=cutoffs(call["k"]),
        metrics=asked,
        threshold=_number("threshold", call["threshold"]),
        score_threshold=score_threshold,
        no_cutoff=tuple(call.get("no_cutoff", ())),
        unranked_skip=tuple(
            m
            for m in asked
            # a property of the list (novelty, diversity) has no value without a list
            if REGISTRY[m].defined == "ranked"
            or per_metric.get(m, {}).get("unranked_users", conventions.unranked_users) == "skip"
        ),
        check_duplicates=check_duplicates,
        unlisted_users=unlisted_users,
        item_features=_names("item_features", call["item_features"]),
        baseline=call["baseline"],
        head_share=share,
        item_group=call["item_group"],
        checks=checks,
    )


def _check_tie_policy(call: Mapping[str, Any], conventions: Conventions, asked: tuple[str, ...]) -> None:
    """A tie policy that reads scores needs score=; ties="average" has a closed form only for
    the metrics finished from position sums (and hit rate's)."""
    if conventions.ties in ("optimistic", "pessimistic", "average") and call["score"] is None:
        raise fail(
            f"{ref('ties', conventions.ties)} orders items with equal scores, but {ref('score', None)}: the lists are "
            "ordered by the given ranks, which have no score to tie.",
            f"pass {fix('score', 'your_score_column')}, or leave ties at its default.",
        )
    if conventions.ties != "average":
        return
    refused = [m for m in asked if not all(TERMS[t].tie_average is not None for t in REGISTRY[m].terms(conventions))]
    if refused:
        raise fail(
            f"{ref('ties', 'average')} has no closed form here for {', '.join(map(repr, refused))}: the expected value "
            "over every ordering of tied items is computed for precision, recall, f1, hit_rate, r_precision, dcg and ndcg.",
            f"pass {fix('metrics', [m for m in asked if m not in refused] or ['ndcg'])}, or bound "
            f"{'them' if len(refused) > 1 else 'it'} with {fix('ties', 'optimistic')} and {fix('ties', 'pessimistic')}.",
        )


def refuse_average_ties(call: Mapping[str, Any], function: str, what: str) -> None:
    """`function` reads each row's own position (`what`), which ties="average" has not."""
    if call["ties"] == "average":
        raise fail(
            f"{ref('ties', 'average')} averages metrics over the orderings of tied items, but {function} reads {what} "
            "in one ordering.",
            f"pass {fix('ties', 'item_asc')} (or item_desc), or bound it with {fix('ties', 'optimistic')} and "
            f"{fix('ties', 'pessimistic')}.",
        )


def refuse_result_names(function: str, named: Sequence[tuple[str, Any, str, Any]], taken: Sequence[str]) -> None:
    """Refuse an input column whose name is one of `function`'s own result columns (`taken`),
    which the result would hold twice (a raw DuplicateError on Polars). `named`: per column, the
    argument that names it, the argument's value, the column, and the argument's value with the
    column renamed (the hint's)."""
    for arg, value, column, renamed in named:
        if column in taken:
            raise fail(
                f"{ref(arg, value)}: column {column!r} has the name of a column of {function}'s result ({', '.join(taken)}).",
                f"rename the column in the inputs and pass the new name, e.g. {fix(arg, renamed)}.",
            )


def classify_keys(
    by: Sequence[str],
    recs: Sequence[str],
    truth: Sequence[str] | None,
    users: Sequence[str] | None,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Split ``by`` into (model keys, truth keys, user-attribute keys) by where each column is.

    A key in users= is a user attribute (and must be nowhere else); a key in the truth frame is
    a truth key (the recommendations need it too, to be joined on it); a key only in the
    recommendations is a model key. A key found nowhere raises, naming where it was looked for.

    >>> classify_keys(["model", "fold", "segment"], ["model", "fold", "user_id"], ["fold"], ["segment"])
    (('model',), ('fold',), ('segment',))
    """
    model: list[str] = []
    truth_keys: list[str] = []
    attr: list[str] = []
    frames = "the frame" if truth is None else "the recommendations"
    for key in by:
        places = [
            name
            for name, cols in ((frames, recs), (ref("truth"), truth), (ref("users"), users))
            if cols is not None and key in cols
        ]
        if users is not None and key in users:
            if len(places) > 1:
                raise fail(
                    f"by key {key!r} is a column of {ref('users')} and of {' and '.join(places[:-1])}: a user attribute "
                    "must come from one place, or the two could disagree.",
                    f"drop {key!r} from one of them.",
                )
            attr.append(key)
        elif truth is not None and key in truth:
            if key not in recs:
                raise fail(
                    f"by key {key!r} is a column of {ref('truth')} but not of the recommendations: a truth key "
                    "(a fold, a date) splits both, and each list needs its own value to be joined on.",
                    f"add {key!r} to the recommendations (the lists of each {key}), or leave it out of {ref('by')}.",
                )
            truth_keys.append(key)
        elif key in recs:
            model.append(key)
        else:
            looked = [f"{frames} ({', '.join(map(str, recs))})"]
            if truth is not None:
                looked.append(f"{ref('truth')} ({', '.join(map(str, truth))})")
            looked.append(
                f"{ref('users')} ({', '.join(map(str, users))})" if users is not None else f"{ref('users')} (not given)"
            )
            every = [*recs, *(truth or []), *(users or [])]
            close = difflib.get_close_matches(key, [str(c) for c in every], n=1)
            raise fail(
                f"column {key!r} (the {ref('by')} argument) is not a column anywhere: looked in {'; '.join(looked)}.",
                (f"did you mean {fix('by', close[0])}? " if close else "")
                + f"a model key belongs in the recommendations, a fold or date in {ref('truth')} too, a user "
                f"attribute (segment, cohort) in {ref('users')}.",
            )
    return tuple(model), tuple(truth_keys), tuple(attr)


def _missing(
    arg: str, name: str, columns: Sequence[str], unclaimed: Sequence[str], label: str, score: str | None = None
) -> RecframeError:
    # suggest a column no other argument uses: a close spelling, else the only one left
    close = difflib.get_close_matches(name, unclaimed, n=1) or (list(unclaimed) if len(unclaimed) == 1 else [])
    hint = f"pass {fix(arg, close[0])}." if close else f"pass {ref(arg)} with one of the columns there are."
    if not close and arg in NUMERIC_ARGS:
        hint = f"pass {ref(arg)} a column of numbers" + (
            f", or {ref('truth')} with the relevance." if arg == "relevance" else "."
        )
    if score is not None:  # (rank=): a column of scores ranks by score=, never as positions
        positions = f", or {fix('rank', close[0])} if it holds the positions 1, 2, 3" if close and close[0] != score else ""
        hint = f"pass {fix('score', score)} to rank by that score, highest first{positions}."
    if arg == "user":
        hint += f" For a frame that is a single list, pass {fix('user', None)}."
    shown = ", ".join(map(str, columns)) or "(none)"
    return fail(f"column {name!r} (the {ref(arg)} argument) is not in the {label}. Columns there: {shown}.", hint)


def check_columns(schema: dict[str, Any], wanted: Iterable[tuple[str, str]], label: str) -> None:
    """Each (argument, column) in `wanted` must be a column of `schema`."""
    wanted = list(wanted)
    columns = list(schema)
    unclaimed = [c for c in columns if c not in {name for _, name in wanted}]
    for arg, name in wanted:
        if name not in schema:
            # a number's argument is offered only the numeric columns (never the model's name)
            numeric = [c for c in unclaimed if is_number(schema[c], allow_bool=arg == "relevance")]
            score = _score_column(numeric, schema) if arg == "rank" else None
            raise _missing(arg, name, columns, numeric if arg in NUMERIC_ARGS else unclaimed, label, score)


def _score_column(numeric: Sequence[str], schema: dict[str, Any]) -> str | None:
    """The column of `numeric` that holds scores rather than positions, for a missing rank=: one
    named like a score (``score``, ``scores``), else the only column of floats."""
    named = difflib.get_close_matches("score", numeric, n=1)
    floats = [c for c in numeric if schema[c].is_float()]
    return named[0] if named else floats[0] if len(floats) == 1 else None


#: the arguments that name a column of numbers
NUMERIC_ARGS = ("relevance", "rank", "score")


def is_number(dtype: Any, allow_bool: bool) -> bool:
    """Whether a column of this dtype holds numbers (`allow_bool`: a boolean flag counts too)."""
    return bool(dtype.is_numeric() or dtype == nw.Unknown or (allow_bool and dtype == nw.Boolean))


def check_dtypes(schema: dict[str, Any], spec: Spec) -> None:
    """Relevance, rank and score must be numeric; ids must be plain values."""

    def numeric(arg: str, name: str, allow_bool: bool) -> None:
        dtype = schema[name]
        if not is_number(dtype, allow_bool):
            empty = (
                " (a column with no values at all, as in a header-only CSV or an all-None pandas column, reads as String too)"
                if dtype == nw.String
                else ""
            )
            raise fail(
                f"column {name!r} ({ref(arg)}) holds {dtype}, not numbers{empty}.",
                f"cast it to a number, e.g. pl.col({name!r}).cast(pl.Float64), or pass {ref(arg)} another column.",
            )

    for arg in NUMERIC_ARGS:  # relevance (or a flag), then the score or the rank
        name = getattr(spec.columns, arg)
        if name is not None and name in schema:
            numeric(arg, name, allow_bool=arg == "relevance")
    for arg, name in (("user", spec.columns.user), ("item", spec.columns.item), *(("by", b) for b in spec.columns.by)):
        if name is not None and name in schema and isinstance(schema[name], (nw.List, nw.Struct, nw.Array)):
            raise fail(
                f"column {name!r} ({ref(arg)}) holds {schema[name]}; ids must be plain values.",
                "pass a column of ints or strings.",
            )


def _kind(dtype: Any) -> str | None:
    """The family a join key's dtype belongs to, within which a cast changes no value."""
    if dtype.is_integer():
        return "integer"
    if dtype.is_float():
        return "float"
    if dtype == nw.String or isinstance(dtype, (nw.Categorical, nw.Enum)):
        return "string"
    return None


_CAST_TO = {"integer": nw.Int64, "float": nw.Float64, "string": nw.String}


def join_dtypes(column: str, dtypes: dict[str, Any]) -> Any:
    """The dtype every frame should cast join key `column` to, or None when they already agree.

    `dtypes` maps a frame's label to the column's dtype there. Integers of any width join as
    Int64, floats as Float64, String/Categorical/Enum as String: no value changes. Any other
    disagreement (a string and an integer user id) raises, naming both dtypes and the cast.

    >>> join_dtypes("user_id", {"the recommendations": nw.Int32(), "truth=": nw.Int64()})
    Int64
    >>> join_dtypes("user_id", {"the recommendations": nw.Int64(), "truth=": nw.Int64()}) is None
    True
    """
    distinct = list(dict.fromkeys(str(d) for d in dtypes.values()))
    if len(distinct) == 1:
        return None
    kinds = {_kind(dtype) for dtype in dtypes.values()}
    if len(kinds) == 1 and (kind := kinds.pop()) is not None:
        return _CAST_TO[kind]
    # name two frames that really disagree: the first one, and the first of another family
    (a, da), *others = dtypes.items()
    b, db = next((label, d) for label, d in others if _kind(d) != _kind(da) or _kind(d) is None and str(d) != str(da))
    raise fail(
        f"column {column!r} holds {da} in {a} but {db} in {b}; the frames are joined on it, so values such "
        "as 1 and '1' would never match.",
        f"cast one of them first, e.g. pl.col({column!r}).cast(pl.{da}) on {b}.",
    )
