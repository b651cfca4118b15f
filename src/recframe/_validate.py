"""Checks of arguments, column types and data, each failing with a message that names the fix.

Arguments and the schema are checked when the function is called. Data checks (duplicates,
nulls, rank range, NaN) need a pass over the rows: the engine folds the counts they need into
the per-user aggregate it computes anyway, and :func:`check_user_table` reads them there.
"""

from __future__ import annotations

import decimal
import difflib
import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import narwhals as nw

from recframe.conventions import CHOICES, Conventions
from recframe.errors import RecframeError
from recframe.metrics import REGISTRY, term

#: The count columns of :func:`recframe.summary`, after the ``by`` keys.
COUNT_COLUMNS = ("n_users", "n_skipped", "n_unranked", "n_no_relevant", "n_no_truth")


def is_count_column(name: str) -> bool:
    """A count column of a summary: one of COUNT_COLUMNS, or a metric's own ``n_users_<metric>``.

    >>> is_count_column("n_no_truth"), is_count_column("n_users_ndcg"), is_count_column("ndcg@10")
    (True, True, False)
    """
    return name in COUNT_COLUMNS or name.startswith("n_users_")


# Internal column names; a user's own columns are renamed to these for the computation so
# that no name of theirs can collide with ours.
USER, ITEM, RANK, SCORE, REL = "__rf_user", "__rf_item", "__rf_rank", "__rf_score", "__rf_rel"
# Data-check counts the engine adds to the per-user aggregate.
N_ROWS, N_ITEMS, N_ITEMS_SET = "__rf_n_rows", "__rf_n_items", "__rf_n_items_set"
N_RANKED, N_RANKS, MIN_RANK = "__rf_n_ranked", "__rf_n_ranks", "__rf_min_rank_any"
BAD_RANK, BAD_REL, BAD_SCORE = "__rf_bad_rank", "__rf_bad_rel", "__rf_bad_score"
# Relevant grades above MAX_EXP2_GRADE under gain="exp2": 2**1000 is about 1e301, so sums of
# up to 1e7 such gains stay finite in float64; past it DCG would be infinite and nDCG NaN.
BAD_GAIN, MAX_EXP2_GRADE = "__rf_bad_gain", 1000
# The largest rank given as a float, decimal or UInt64 that is taken: every integer up to it is
# exact in float64.
MAX_RANK_VALUE = 2**53
# Facts of each list the counts of summary read: the highest rank (rank gaps), the rows with a
# relevance at all (a user absent from the truth has none), and the user's rows in users=.
MAX_RANK, N_JUDGED, USER_ROWS = "__rf_max_rank", "__rf_n_judged", "__rf_user_rows"
# The rank as given, kept for the range check when lists are re-ranked.
RAW_RANK = "__rf_raw_rank"


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
    check_duplicates: bool
    #: a recommended user missing from users=: "error" or "drop"
    unlisted_users: str


@dataclass(frozen=True)
class Facts:
    """What the inputs are: which side frames were given, what the rank column holds."""

    with_truth: bool
    with_users: bool
    with_exclude: bool
    integer_rank: bool = True  # set from the schema: float ranks must be checked for whole numbers
    #: set from the schema: Enum/Categorical items break score ties by their names, not by the
    #: category order, so that every engine orders them alike
    categorical_item: bool = False


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


def _fail(message: str, hint: str | None = None) -> RecframeError:
    return RecframeError(f"{message} Hint: {hint}" if hint else message)


def _ks(k: Any) -> tuple[int, ...]:
    values = list(k) if isinstance(k, (list, tuple)) else [k]
    if not values:
        raise _fail("k=[] is empty.", "pass a positive int or a list of them, e.g. k=[5, 10].")
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise _fail(f"k={v!r} is not an int.", "pass a positive int or a list of them, e.g. k=[5, 10].")
        v = int(v)
        if v <= 0:
            raise _fail(f"k={v!r} must be >= 1.", "k is the length of the list cut, e.g. k=10.")
        if v > 2**63 - 1:
            raise _fail(f"k={v!r} is larger than a 64-bit integer.", "for the whole list pass k=sys.maxsize.")
        if int(v) not in out:  # a repeated k would only repeat columns
            out.append(int(v))
    return tuple(out)


def _metrics(metrics: Any) -> tuple[str, ...]:
    if metrics is None:
        return tuple(REGISTRY)
    if not isinstance(metrics, (str, Iterable)):
        raise _fail(
            f"metrics={metrics!r} is not a metric name or a list of them.",
            f'e.g. metrics=["ndcg", "recall"]; known: {", ".join(REGISTRY)}.',
        )
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise _fail("metrics=[] is empty.", f"pass metrics=None for all, or some of {list(REGISTRY)}.")
    for name in names:
        if name not in REGISTRY:
            close = difflib.get_close_matches(str(name), REGISTRY, n=1)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise _fail(f"unknown metric {name!r}.", f"{hint}known metrics: {', '.join(REGISTRY)}.")
    return tuple(dict.fromkeys(names))


def _number(name: str, value: Any) -> float | None:
    if value is None:
        return None
    # any real number: int, float, numpy scalars, Decimal and Fraction alike
    real = isinstance(value, (numbers.Real, decimal.Decimal)) and not isinstance(value, bool)
    if not real or not math.isfinite(float(value)):
        raise _fail(f"{name}={value!r} is not a finite number.", f"pass e.g. {name}=2.0, or leave it out.")
    return float(value)


def _names(arg: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    names = (value,) if isinstance(value, str) else tuple(value)
    for name in names:
        if not isinstance(name, str):
            raise _fail(f"{arg}={value!r}: column names must be strings.", f'e.g. {arg}="model".')
    if len(set(names)) != len(names):
        raise _fail(f"{arg}={value!r} names a column twice.")
    return names


def check_conventions(options: dict[str, Any]) -> Conventions:
    """The resolved convention options (a profile's values, explicit ones on top), checked
    against :data:`recframe.conventions.CHOICES`."""
    for option, choices in CHOICES.items():
        value = options[option]
        if all(isinstance(c, bool) for c in choices):
            if not isinstance(value, bool):
                raise _fail(f"{option}={value!r} must be True or False.", f"pass {option}=False or True.")
        elif not isinstance(value, str) or value not in choices:
            shown = ", ".join(f'"{c}"' for c in choices)
            raise _fail(f"{option}={value!r} is not a known option value.", f"choose one of {shown}.")
    return Conventions(**{option: options[option] for option in CHOICES})


def check_arguments(
    *,
    k: Any,
    metrics: Any,
    user: Any,
    item: Any,
    rank: Any,
    score: Any,
    relevance: Any,
    threshold: Any,
    by: Any,
    truth: Any,
    score_threshold: Any,
    check_duplicates: Any,
    users: Any = None,
    exclude: Any = None,
    unlisted_users: Any = "error",
    per_metric: dict[str, dict[str, Any]] | None = None,
    no_cutoff: Sequence[str] = (),
    **options: Any,
) -> Spec:
    """Check every argument that can be checked without looking at the data.

    ``options`` are the convention options (the names of ``CHOICES``), resolved: a profile's
    values with the explicit ones on top.
    """
    conventions = check_conventions(options)
    if not isinstance(check_duplicates, bool):
        raise _fail(f"check_duplicates={check_duplicates!r} must be True or False.")
    if unlisted_users not in ("error", "drop"):
        raise _fail(f"unlisted_users={unlisted_users!r} is not a known option value.", 'choose "error" or "drop".')
    if users is not None and user is None:
        raise _fail(
            "users= lists users, but user=None treats each frame as a single list.",
            "pass user= the user column, or leave out users=.",
        )
    for arg, value in (("item", item), ("relevance", relevance)):
        if not isinstance(value, str):
            raise _fail(f"{arg}={value!r} must be a column name.", f'e.g. {arg}="{arg}".')
    for arg, value in (("user", user), ("rank", rank), ("score", score)):
        if value is not None and not isinstance(value, str):
            raise _fail(f"{arg}={value!r} must be a column name or None.")
    if score is None and rank is None:
        raise _fail("rank=None and score=None: recframe needs one to order each list.", 'pass rank="rank" or score="score".')
    thr = _number("threshold", threshold)
    if thr is not None and thr <= 0 and conventions.gain != "binary":
        raise _fail(
            f"threshold={threshold!r} makes items with grade <= 0 relevant, but their {conventions.gain} gain "
            "would be <= 0, which leaves nDCG undefined.",
            'use a threshold > 0, or gain="binary".',
        )
    score_thr = _number("score_threshold", score_threshold)
    if score_thr is not None and score is None:
        raise _fail(
            f"score_threshold={score_threshold!r} needs score=: it cuts the list by score.",
            'pass score="your_score_column", or drop score_threshold.',
        )
    by_names = _names("by", by)
    columns = [c for c in (user, item, score if score is not None else rank, relevance) if c is not None]
    clash = [c for c in by_names if c in columns]
    if clash:
        raise _fail(f"by={by!r} repeats the column {clash[0]!r}, which is already used as user/item/rank/relevance.")
    if len(set(columns)) != len(columns):
        raise _fail(f"user/item/rank/score/relevance name the same column twice: {columns}.")
    for name in (*by_names, *(c for c in columns)):
        if name.startswith("__rf_"):
            raise _fail(f"column name {name!r} starts with '__rf_', which recframe reserves.", "rename it.")
    metric_names = _metrics(metrics)
    output_names = {"n_relevant", *COUNT_COLUMNS, *metric_names}
    reserved = [c for c in (*by_names, user) if c in output_names or (c and "@" in c)]
    if reserved:
        raise _fail(f"column {reserved[0]!r} would collide with an output column of the same name.", "rename it.")
    return Spec(
        columns=Columns(
            user=user, item=item, rank=None if score is not None else rank, score=score, relevance=relevance, by=by_names
        ),
        conventions=conventions,
        selection=Selection(
            ks=_ks(k),
            metrics=metric_names,
            threshold=thr,
            score_threshold=score_thr,
            no_cutoff=tuple(no_cutoff),
            unranked_skip=tuple(
                m
                for m in metric_names
                if (per_metric or {}).get(m, {}).get("unranked_users", conventions.unranked_users) == "skip"
            ),
            check_duplicates=check_duplicates,
            unlisted_users=unlisted_users,
        ),
        facts=Facts(with_truth=truth is not None, with_users=users is not None, with_exclude=exclude is not None),
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
            name for name, cols in ((frames, recs), ("truth=", truth), ("users=", users)) if cols is not None and key in cols
        ]
        if users is not None and key in users:
            if len(places) > 1:
                raise _fail(
                    f"by key {key!r} is a column of users= and of {' and '.join(places[:-1])}: a user attribute "
                    "must come from one place, or the two could disagree.",
                    f"drop {key!r} from one of them.",
                )
            attr.append(key)
        elif truth is not None and key in truth:
            if key not in recs:
                raise _fail(
                    f"by key {key!r} is a column of truth= but not of the recommendations: a truth key "
                    "(a fold, a date) splits both, and each list needs its own value to be joined on.",
                    f"add {key!r} to the recommendations (the lists of each {key}), or leave it out of by=.",
                )
            truth_keys.append(key)
        elif key in recs:
            model.append(key)
        else:
            looked = [f"{frames} ({', '.join(map(str, recs))})"]
            if truth is not None:
                looked.append(f"truth= ({', '.join(map(str, truth))})")
            looked.append(f"users= ({', '.join(map(str, users))})" if users is not None else "users= (not given)")
            every = [*recs, *(truth or []), *(users or [])]
            close = difflib.get_close_matches(key, [str(c) for c in every], n=1)
            raise _fail(
                f"column {key!r} (the by= argument) is not a column anywhere: looked in {'; '.join(looked)}.",
                (f'did you mean by="{close[0]}"? ' if close else "")
                + "a model key belongs in the recommendations, a fold or date in truth= too, a user "
                "attribute (segment, cohort) in users=.",
            )
    return tuple(model), tuple(truth_keys), tuple(attr)


def _missing(arg: str, name: str, columns: Sequence[str], unclaimed: Sequence[str], label: str) -> RecframeError:
    # suggest a column no other argument uses: a close spelling, else the only one left
    close = difflib.get_close_matches(name, unclaimed, n=1) or (list(unclaimed) if len(unclaimed) == 1 else [])
    hint = f'pass {arg}="{close[0]}".' if close else f"pass {arg}= with one of the columns there are."
    if arg == "user":
        hint += " For a frame that is a single list, pass user=None."
    shown = ", ".join(map(str, columns)) or "(none)"
    return _fail(f"column {name!r} (the {arg}= argument) is not in the {label}. Columns there: {shown}.", hint)


def check_columns(schema: dict[str, Any], wanted: Iterable[tuple[str, str]], label: str) -> None:
    """Each (argument, column) in `wanted` must be a column of `schema`."""
    wanted = list(wanted)
    columns = list(schema)
    unclaimed = [c for c in columns if c not in {name for _, name in wanted}]
    for arg, name in wanted:
        if name not in schema:
            raise _missing(arg, name, columns, unclaimed, label)


def check_dtypes(schema: dict[str, Any], spec: Spec) -> None:
    """Relevance, rank and score must be numeric; ids must be plain values."""

    def numeric(arg: str, name: str, allow_bool: bool) -> None:
        dtype = schema[name]
        ok = dtype.is_numeric() or dtype == nw.Unknown or (allow_bool and dtype == nw.Boolean)
        if not ok:
            empty = (
                " (a column with no values at all, as in a header-only CSV or an all-None pandas column, reads as String too)"
                if dtype == nw.String
                else ""
            )
            raise _fail(
                f"column {name!r} ({arg}=) holds {dtype}, not numbers{empty}.",
                f"cast it to a number, e.g. pl.col({name!r}).cast(pl.Float64), or pass {arg}= another column.",
            )

    if spec.columns.relevance in schema:
        numeric("relevance", spec.columns.relevance, allow_bool=True)
    if spec.columns.score is not None and spec.columns.score in schema:
        numeric("score", spec.columns.score, allow_bool=False)
    if spec.columns.rank is not None and spec.columns.rank in schema:
        numeric("rank", spec.columns.rank, allow_bool=False)
    for arg, name in (("user", spec.columns.user), ("item", spec.columns.item), *(("by", b) for b in spec.columns.by)):
        if name is not None and name in schema and isinstance(schema[name], (nw.List, nw.Struct, nw.Array)):
            raise _fail(
                f"column {name!r} ({arg}=) holds {schema[name]}; ids must be plain values.", "pass a column of ints or strings."
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
    (a, da), (b, db) = [(label, dtypes[label]) for label in dtypes if str(dtypes[label]) in distinct[:2]][:2]
    raise _fail(
        f"column {column!r} holds {da} in {a} but {db} in {b}; the frames are joined on it, so values such "
        "as 1 and '1' would never match.",
        f"cast one of them first, e.g. pl.col({column!r}).cast(pl.{da}) on {b}.",
    )


def _where(row: dict[str, Any], spec: Spec) -> str:
    keys = [*spec.columns.list_keys, USER] if spec.columns.user is not None else list(spec.columns.list_keys)
    return ", ".join(f"{spec.columns.source(k) if k == USER else k}={row[k]!r}" for k in keys) or "the whole frame"


def attr_count(key: str) -> str:
    """Internal column: a user's non-null values of the users= column ``key``."""
    return f"__rf_attr_count:{key}"


def check_counts(spec: Spec) -> tuple[str, ...]:
    """The data-check counts the engine's per-user table carries for this call: only those
    that can be non-zero (no score: no NaN-score count; integer ranks: no whole-number count;
    ``check_duplicates=False``: no distinct counts)."""
    out = [N_ROWS, N_ITEMS_SET, N_RANKED, MIN_RANK, BAD_REL]
    if spec.selection.check_duplicates:
        out += [N_ITEMS, N_RANKS]
    if spec.columns.rank is not None and not spec.facts.integer_rank:
        out.append(BAD_RANK)
    if spec.columns.score is not None:
        out.append(BAD_SCORE)
    if spec.conventions.gain == "exp2" and any(m in ("dcg", "ndcg") for m in spec.selection.metrics):
        out.append(BAD_GAIN)
    if spec.columns.rank is not None and spec.conventions.rank_gaps == "error" and not spec.facts.with_exclude:
        out.append(MAX_RANK)
    if spec.facts.with_users:
        out += [USER_ROWS, *(attr_count(key) for key in spec.columns.attr_keys)]
    return tuple(out)


def _problems(spec: Spec) -> dict[str, nw.Expr]:
    """Per list, one 0/1 (or count) column per data problem, named for the check."""
    columns = set(check_counts(spec))
    keys = [*spec.columns.list_keys, *([USER] if spec.columns.user is not None else [])]
    n_rows = nw.col(N_ROWS)
    out: dict[str, nw.Expr] = {}
    for key in keys:
        out[f"null:{key}"] = nw.when(nw.col(key).is_null()).then(n_rows).otherwise(0)
    out["null_items"] = n_rows - nw.col(N_ITEMS_SET)
    if N_ITEMS in columns:
        out["duplicate_items"] = nw.col(N_ITEMS) < n_rows
        out["extra_rows"] = n_rows - nw.col(N_ITEMS)
    if BAD_RANK in columns:
        out["bad_rank"] = nw.col(BAD_RANK)
    if spec.columns.rank is not None:
        out["rank_below_1"] = (nw.col(MIN_RANK) < 1).fill_null(False)
    if N_RANKS in columns:
        # n_unique counts null as one more distinct value when a list has nulls
        distinct = nw.col(N_RANKS) - (nw.col(N_RANKED) < n_rows).cast(nw.Int64)
        out["duplicate_ranks"] = distinct < nw.col(N_RANKED)
    for flag in (BAD_REL, BAD_SCORE, BAD_GAIN):
        if flag in columns:
            out[flag] = nw.col(flag)
    if MAX_RANK in columns:
        # no duplicate ranks and none below 1: the highest rank > the ranked rows = a gap
        out["rank_gaps"] = (nw.col(MAX_RANK) > nw.col(N_RANKED)).fill_null(False)
    if USER_ROWS in columns:
        out["duplicate_users"] = (nw.col(USER_ROWS) > 1).fill_null(False)
        for key in spec.columns.attr_keys:  # users= rows without a value of a by key
            out[f"null_attr:{key}"] = (nw.col(USER_ROWS) - nw.col(attr_count(key))).fill_null(0)
        if spec.selection.unlisted_users == "error":
            out["unlisted"] = nw.col(USER_ROWS).is_null() & (nw.col(N_RANKED) > 0)
    if spec.conventions.empty_users == "error":
        out["empty"] = nw.col(term("n_relevant")) == 0
    return {name: expr.cast(nw.Int64) for name, expr in out.items()}


def _collect(frame: nw.LazyFrame | nw.DataFrame) -> nw.DataFrame:
    return frame.collect() if isinstance(frame, nw.LazyFrame) else frame


def check_user_table(table: nw.LazyFrame | nw.DataFrame, spec: Spec) -> None:
    """Raise on the first data problem the per-user check counts reveal.

    `table` has one row per (by keys, user) with the counts named by :func:`check_counts`.
    Every problem is totalled in one
    aggregate that returns a single row; only when one is found is the first offending list
    (in key order) fetched, so on a SQL engine a clean frame costs one small query.
    """
    keys = [*spec.columns.list_keys, USER]
    where = " in the frame joined from the recommendations and truth=" if spec.facts.with_truth else ""
    problems = _problems(spec)
    flagged = table.with_columns(expr.alias(f"__rf_check:{name}") for name, expr in problems.items())
    totals = _collect(flagged.select(nw.col(f"__rf_check:{name}").sum().alias(name) for name in problems))
    total = {name: int(value or 0) for name, value in totals.rows(named=True)[0].items()} if len(totals) else {}
    if not any(total.values()):
        return

    def first(name: str) -> dict[str, Any]:
        rows = flagged.filter(nw.col(f"__rf_check:{name}") > 0).sort(keys, nulls_last=False).head(1)
        return _collect(rows).rows(named=True)[0]

    for key in keys:
        if total.get(f"null:{key}"):
            name = spec.columns.source(key)
            raise _fail(
                f"column {name!r} has {total[f'null:{key}']} null value(s){where}; every row needs one to be grouped.",
                f"drop or fill them first, e.g. df.filter(pl.col({name!r}).is_not_null()).",
            )
    item = spec.columns.item
    if total["null_items"]:
        raise _fail(f"column {item!r} (item=) has {total['null_items']} null value(s){where}.", "drop or fill them first.")
    if total.get("duplicate_items"):
        r = first("duplicate_items")
        user_part = f"({spec.columns.user}, {item})" if spec.columns.user else f"{item}"
        raise _fail(
            f"duplicate {user_part} rows{where}: {_where(r, spec)} has {r[N_ROWS]} rows but "
            f"{r[N_ITEMS]} distinct {item!r} values; {total['duplicate_items']} list(s) affected, "
            f"{total['extra_rows']} extra row(s).",
            "keep one row per item, e.g. df.unique(subset=[...]) or a group_by that picks the best rank.",
        )
    rank = spec.columns.rank
    if total.get("bad_rank"):
        raise _fail(
            f"column {rank!r} (rank=) has {total['bad_rank']} value(s) that are not whole numbers (or exceed 2**53), "
            f"first at {_where(first('bad_rank'), spec)}.",
            "ranks are positions 1, 2, 3, ...; to rank by a score pass score= instead.",
        )
    if total.get("rank_below_1"):
        r = first("rank_below_1")
        raise _fail(
            f"column {rank!r} (rank=) has rank {r[MIN_RANK]} < 1 at {_where(r, spec)} ({total['rank_below_1']} list(s) affected).",
            "ranks start at 1 for the top item; if yours start at 0, add 1.",
        )
    if total.get("duplicate_ranks"):
        r = first("duplicate_ranks")
        raise _fail(
            f"duplicate ranks in column {rank!r}{where}: {_where(r, spec)} has {r[N_RANKED]} ranked rows but "
            f"fewer distinct ranks; {total['duplicate_ranks']} list(s) affected.",
            "each position in a list holds one item; to rank by a score with ties pass score= instead.",
        )
    for flag, arg, name, what in (
        (BAD_REL, "relevance", spec.columns.relevance, "NaN or infinite"),
        (BAD_SCORE, "score", spec.columns.score or "", "NaN"),
    ):
        if total.get(flag):
            raise _fail(
                f"column {name!r} ({arg}=) has {total[flag]} {what} value(s), first at {_where(first(flag), spec)}.",
                "use null for unknown values, e.g. pl.col(...).fill_nan(None).",
            )
    if total.get(BAD_GAIN):
        raise _fail(
            f"column {spec.columns.relevance!r} (relevance=) has {total[BAD_GAIN]} relevant grade(s) above "
            f'{MAX_EXP2_GRADE}, first at {_where(first(BAD_GAIN), spec)}: with gain="exp2" their gain 2**grade - 1 '
            "overflows, and DCG and nDCG would be infinite or NaN.",
            'use gain="linear", or rescale the grades (exp2 is meant for small integer grades such as 0-4).',
        )
    for key in spec.columns.attr_keys:
        if total.get(f"null_attr:{key}"):
            raise _fail(
                f"column {key!r} of users= has {total[f'null_attr:{key}']} null value(s), first at "
                f"{_where(first(f'null_attr:{key}'), spec)}; every user needs one to be grouped by it.",
                f"fill them first, e.g. users.with_columns(pl.col({key!r}).fill_null('unknown')).",
            )
    if total.get("duplicate_users"):
        r = first("duplicate_users")
        raise _fail(
            f"users= has {r[USER_ROWS]} rows for {_where(r, spec)} ({total['duplicate_users']} list(s) affected); "
            "it needs one row per user, whose attributes are joined onto the user's metrics.",
            f"keep one row per user, e.g. users.unique(subset=[{spec.columns.user!r}]).",
        )
    if total.get("unlisted"):
        r = first("unlisted")
        raise _fail(
            f"{_where(r, spec)} has recommendations but is not in users= ({total['unlisted']} list(s) affected); "
            "users= fixes who is evaluated.",
            'add the user to users=, or pass unlisted_users="drop" to leave such users out.',
        )
    if total.get("rank_gaps"):
        r = first("rank_gaps")
        raise _fail(
            f"column {rank!r} (rank=) has gaps: {_where(r, spec)} has {r[N_RANKED]} ranked rows but ranks up to "
            f"{r[MAX_RANK]} ({total['rank_gaps']} list(s) affected), so its positions are not 1, 2, 3, ...",
            "if rows were removed (seen items), pass exclude= with them instead, which re-ranks; "
            'rank_gaps="rerank" re-ranks each list, rank_gaps="keep" uses the ranks as positions; '
            "or rank by a score with score=.",
        )
    if total.get("empty"):
        raise _fail(
            f'empty_users="error": {_where(first("empty"), spec)} has no relevant item ({total["empty"]} list(s) affected).',
            'pass empty_users="skip" to leave them out of the means, or "zero" to score them 0.',
        )
