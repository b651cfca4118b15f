"""The data checks as a plan: what the engine counts per list, and the errors those counts raise.

Arguments and schemas are checked in :mod:`recframe.engine._validate` when a function is called. The
data checks need a pass over the rows: :func:`plan` says which per-row flags and per-list
counts the engine adds to the aggregation passes it runs for the metrics anyway (the same
passes feed both), and :func:`raise_first_problem` reads them from the per-list table.

What the duplicate check reads (``check_duplicates``):

- ``True``: every row of every list.
- ``"used"`` (the default): the rows that can change a number, which are every relevant row
  and every row ranked within the largest k of the call (after ``exclude=`` re-ranks). A
  duplicate among them raises; one among the other rows (not relevant and ranked past every
  k, or not ranked) cannot change any value and is not looked for. A column that reads
  positions past the largest k (a bare column such as ``r_precision``, the columns of
  ``iprec_at_recall`` and ``rprec_mult``, ``rr`` with ``rr_cutoff=False``) reads the relevant
  rows alone where ranks are used as given (``rank=``, nothing re-ranked): a relevant row's
  position is then its own rank. Where positions are counted (``score=``, ``exclude=``,
  ``rank_gaps="rerank"``), or a column reads other rows (the list length of ``num_ret``, the
  judged rows ``bpref`` counts, the rows graded below the threshold under
  ``gain_threshold="positive"``), every row is checked, as with ``True``.
- ``False``: no duplicate check.

``checks=False`` switches every check of this module off (and with it the duplicate check):
:func:`plan` is empty, so the engine computes no check aggregate, and :func:`attach` runs
nothing. :func:`sentences` then says so, in the words of :func:`unchecked_text`.

With ``score=`` the positions are counted (ordinal ranks), distinct in each list by
construction: only repeated items are looked for.

The catalog check (an item ranked within the largest k that is not in ``items=``, or in the
items of ``train=`` without it) reads the rows ranked within the largest k, when a metric reads
the catalog. Every other check reads every row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import narwhals as nw

from recframe import _names as n
from recframe.engine import _frames, _relevance, _side
from recframe.engine._validate import MAX_EXP2_GRADE, MAX_LINEAR_GRADE, Spec, fail
from recframe.errors import fix, ref
from recframe.metrics import REGISTRY, TERMS, term
from recframe.metrics._registry import domain_of

DuplicateScope = Literal["all", "used"]


@dataclass(frozen=True)
class CheckPlan:
    """The checks of one call, as the columns the engine adds to its passes.

    ``row_flags`` are per-row 0/1 columns (added before the pass over every row);
    ``all_rows`` are aggregations over every row of a list (among them the flags' sums);
    ``duplicates`` says over which rows ``duplicate_rows`` (aggregations, by the count column
    each makes) run: ``"all"`` in the pass over every row, ``"used"`` in the pass over the
    relevant and top-k rows.
    """

    row_flags: dict[str, nw.Expr]
    all_rows: list[nw.Expr]
    duplicates: DuplicateScope | None
    duplicate_rows: dict[str, nw.Expr]
    #: every count column the plan adds (dropped once the check has read them)
    columns: tuple[str, ...]


def duplicate_scope(spec: Spec) -> DuplicateScope | None:
    """The rows the duplicate check reads (see the module docstring)."""
    wanted = spec.selection.check_duplicates
    if wanted is False:
        return None
    if wanted is True:
        return "all"
    # a term of every row (the list length), of the judged rows (bpref's count of judged items)
    # or of the rows graded below the threshold (gain_threshold="positive") reads rows that are
    # neither relevant nor within k
    metrics, options = spec.selection.metrics, spec.conventions
    terms = [TERMS[t] for m in metrics for t in REGISTRY[m].terms(options)]
    if {t.reads or domain_of(t, options) for t in terms} & {"all", "judged", "graded"}:
        return "all"
    # a bare column (r_precision), a column per variant (iprec_at_recall_10) or rr without
    # cut-off reads positions past every k. Where ranks are used as given, a relevant row's
    # position is its own rank whatever the other rows hold, and these terms read the relevant
    # rows only; where positions are counted (score=, a re-rank), every row before a relevant
    # one moves it
    past_k = any(REGISTRY[m].bare or REGISTRY[m].variants or REGISTRY[m].whole_list(options) for m in metrics)
    positions_given = spec.columns.score is None and not spec.reranks
    return "all" if past_k and not positions_given else "used"


def plan(spec: Spec) -> CheckPlan:
    """The per-row flags and per-list counts the checks of this call read: only those that can
    be non-zero (no score: no NaN-score count; integer ranks: no whole-number count). None at
    all with ``checks=False``: the engine then computes no check aggregate."""
    if not spec.selection.checks:
        return CheckPlan(row_flags={}, all_rows=[], duplicates=None, duplicate_rows={}, columns=())
    rank, rel = nw.col(n.RANK), nw.col(n.REL)
    # (NaN is not finite on every engine: one test per row, not two; DuckDB's every-row pass
    # at 10M rows, 0.05 s less)
    flags: dict[str, nw.Expr] = {n.BAD_REL: ~rel.is_finite()}
    if spec.columns.score is not None:
        flags[n.BAD_SCORE] = nw.col(n.SCORE).is_nan()
    if spec.conventions.gain != "binary" and any(m in ("dcg", "ndcg") for m in spec.selection.metrics):
        # gains past 2**1000 overflow float64 sums (exp2: 2**grade - 1; linear: the grade; a
        # gaining grade is > 0, as thresholds <= 0 are refused): refuse rather than give inf or NaN
        huge = rel > (MAX_EXP2_GRADE if spec.conventions.gain == "exp2" else MAX_LINEAR_GRADE)
        flags[n.BAD_GAIN] = _relevance.gains(spec) & huge
    sums = list(flags)
    if spec.columns.rank is not None and not spec.facts.integer_rank:
        sums.append(n.BAD_RANK)  # set by the engine's prepare, where float ranks are cast
    given_rank = nw.col(n.RAW_RANK) if spec.reranks else rank
    all_rows = [
        nw.len().alias(n.N_ROWS),
        nw.col(n.ITEM).count().alias(n.N_ITEMS_SET),
        given_rank.min().alias(n.MIN_RANK),
        *(nw.col(c).sum().alias(c) for c in sums),
    ]
    columns = [n.N_ROWS, n.N_ITEMS_SET, n.MIN_RANK, *sums]
    if spec.columns.rank is not None and spec.conventions.rank_gaps == "error" and not spec.facts.with_exclude:
        all_rows.append(rank.max().alias(n.MAX_RANK))
        columns.append(n.MAX_RANK)
    scope = duplicate_scope(spec)
    duplicate_rows: dict[str, nw.Expr] = {}
    if scope is not None:
        duplicate_rows = {n.DUP_ROWS: nw.len(), n.DUP_ITEMS: nw.col(n.ITEM).n_unique()}
        if spec.columns.score is None:
            # positions counted from score= are ordinal ranks, distinct in each list by
            # construction: only given ranks can repeat (10M rows: a distinct count saved)
            duplicate_rows |= {n.DUP_RANKED: rank.count(), n.DUP_RANKS: rank.n_unique()}
        columns += list(duplicate_rows)
    if spec.facts.with_users:
        columns += [n.USER_ROWS, *(n.attr_count(key) for key in spec.columns.attr_keys)]
    if _side.needs_catalog(spec):
        columns += [n.OUTSIDE_CATALOG, n.OUTSIDE_ITEM]  # counted by the engine's top-k pass (recframe.engine._side)
    return CheckPlan(
        row_flags={name: expr.fill_null(False).cast(nw.Int64) for name, expr in flags.items()},
        all_rows=all_rows,
        duplicates=scope,
        duplicate_rows={name: expr.alias(name) for name, expr in duplicate_rows.items()},
        columns=tuple(columns),
    )


#: the duplicate check in words, by the rows it reads (see duplicate_scope)
_DUPLICATES = {
    "all": "no item and no rank repeated within a list, on every row",
    "used": "no item and no rank repeated within a list, on the rows that can change a number "
    "(relevant rows and rows ranked within the largest k)",
    None: "duplicates not checked (check_duplicates=False): a duplicate would give wrong numbers silently",
}


def sentences(spec: Spec, checks: CheckPlan) -> list[str]:
    """The checks of :func:`plan` in words, one sentence each (each would stop the call with an
    error), read from the flags and counts the plan adds: the page lists them as the checks that ran."""
    if not spec.selection.checks:
        return [unchecked_text()]
    c, counted = spec.columns, {*checks.row_flags, *checks.columns}
    keys = ["user", "item", *c.by] if c.user is not None else ["item", *c.by]
    out = [f"no null value in the {', '.join(keys)} columns", _DUPLICATES[checks.duplicates]]
    if n.BAD_SCORE in counted:
        out.append(f"no NaN score in {c.score!r}")
    if c.rank is not None:  # rank_below_1, and where the ranks are floats n.BAD_RANK
        out.append(f"ranks in {c.rank!r} are whole numbers >= 1")
    if n.MAX_RANK in counted:
        out.append("no gap in the ranks of a list (rank_gaps='error')")
    if n.BAD_REL in counted:
        out.append(f"no NaN or infinite relevance in {c.relevance!r}")
    if n.BAD_GAIN in counted:
        gain = "2**grade - 1" if spec.conventions.gain == "exp2" else "the grade"
        out.append(f"no grade so large that its gain, {gain}, overflows sums (gain={spec.conventions.gain!r})")
    if n.USER_ROWS in counted:
        out.append("users= has one row per user, with every by key it holds")
        if spec.selection.unlisted_users == "error":
            out.append("no recommended user outside users= (unlisted_users='error')")
    if spec.conventions.empty_users == "error":
        out.append("every user has a relevant item (empty_users='error')")
    if n.OUTSIDE_CATALOG in counted:
        out.append("every item ranked within k is in the catalog (items=, else the training items)")
    if spec.facts.with_train:  # (checked as the call reads it: recframe.engine._side.check_train)
        out.append("train= has a user and an item column, no null")
    if spec.facts.with_items:  # (recframe.engine._side.check_items)
        out.append("items= has one row per item")
    return out


def unchecked_text(switch: str = "checks=False") -> str:
    """The sentence that names the data checks off in a result (the warning, the page, the
    command line's line, which passes ``--no-checks``)."""
    return (
        f"data checks off ({switch}): you vouch for the data; null keys, duplicate rows, NaN or infinite "
        "relevance, NaN scores, ranks not whole, below 1 or with gaps, recommended users missing from the "
        "users list and items outside the catalog were not looked for, and would give wrong numbers silently."
    )


def _problems(spec: Spec, checks: CheckPlan) -> dict[str, nw.Expr]:
    """Per list, one 0/1 (or count) column per data problem, named for the check."""
    columns = set(checks.columns)
    keys = [*spec.columns.list_keys, *([n.USER] if spec.columns.user is not None else [])]
    n_rows = nw.col(n.N_ROWS)
    out: dict[str, nw.Expr] = {}
    for key in keys:
        out[f"null:{key}"] = nw.when(nw.col(key).is_null()).then(n_rows).otherwise(0)
    out["null_items"] = n_rows - nw.col(n.N_ITEMS_SET)
    if n.DUP_ITEMS in columns:
        out["duplicate_items"] = nw.col(n.DUP_ITEMS) < nw.col(n.DUP_ROWS)
        out["extra_rows"] = nw.col(n.DUP_ROWS) - nw.col(n.DUP_ITEMS)
    if n.BAD_RANK in columns:
        out["bad_rank"] = nw.col(n.BAD_RANK)
    if spec.columns.rank is not None:
        out["rank_below_1"] = (nw.col(n.MIN_RANK) < 1).fill_null(False)
    if n.DUP_RANKS in columns:
        # n_unique counts null as one more distinct value when a list has nulls
        distinct = nw.col(n.DUP_RANKS) - (nw.col(n.DUP_RANKED) < nw.col(n.DUP_ROWS)).cast(nw.Int64)
        out["duplicate_ranks"] = distinct < nw.col(n.DUP_RANKED)
    for flag in (n.BAD_REL, n.BAD_SCORE, n.BAD_GAIN):
        if flag in columns:
            out[flag] = nw.col(flag)
    if n.MAX_RANK in columns:
        # no duplicate ranks and none below 1: the highest rank > the ranked rows = a gap
        out["rank_gaps"] = (nw.col(n.MAX_RANK) > nw.col(n.N_RANKED)).fill_null(False)
    if n.USER_ROWS in columns:
        out["duplicate_users"] = (nw.col(n.USER_ROWS) > 1).fill_null(False)
        for key in spec.columns.attr_keys:  # users= rows without a value of a by key
            out[f"null_attr:{key}"] = (nw.col(n.USER_ROWS) - nw.col(n.attr_count(key))).fill_null(0)
        if spec.selection.unlisted_users == "error":
            out["unlisted"] = nw.col(n.USER_ROWS).is_null() & (nw.col(n.N_RANKED) > 0)
    if spec.conventions.empty_users == "error":
        out["empty"] = nw.col(term("n_relevant")) == 0
    if n.OUTSIDE_CATALOG in columns:
        out["outside_catalog"] = nw.col(n.OUTSIDE_CATALOG)
    return {name: expr.cast(nw.Int64) for name, expr in out.items()}


def _collect(frame: nw.LazyFrame | nw.DataFrame) -> nw.DataFrame:
    return frame.collect() if isinstance(frame, nw.LazyFrame) else frame


def _where(row: dict[str, Any], spec: Spec) -> str:
    keys = [*spec.columns.list_keys, n.USER] if spec.columns.user is not None else list(spec.columns.list_keys)
    return ", ".join(f"{spec.columns.source(k) if k == n.USER else k}={row[k]!r}" for k in keys) or "the whole frame"


def _key_like(dtype: Any) -> bool:
    """A dtype a grouping key can have (text, a category, a whole number, a flag, a date); not a
    float or a timestamp, which a score or an event time has."""
    return dtype.is_integer() or isinstance(dtype, (nw.String, nw.Categorical, nw.Enum, nw.Boolean, nw.Date))


def missing_key(source: nw.LazyFrame | None, row: dict[str, Any], spec: Spec) -> str | None:
    """The column the duplicate items of the list `row` differ in, that could be a key the call
    does not group by (two models in one frame without ``by="model"``); None when there is none.

    Read from that list's rows of the recommendations `source` (columns as the user named
    them): one small query, only once the duplicate check has failed. Text columns are named
    before the others; the first in the frame's order wins.
    """
    if source is None:
        return None
    c = spec.columns
    roles = {c.user, c.item, c.rank, c.score, c.relevance, *c.by, n.LIST}
    schema = source.collect_schema()
    candidates = [name for name, dtype in schema.items() if name not in roles and _key_like(dtype)]
    if not candidates:
        return None
    keys = {b: row[b] for b in c.list_keys} | ({c.user: row[n.USER]} if c.user is not None else {})
    try:  # (a hint only: a failure to find one must not hide the error it adds to)
        rows = source.filter(*(nw.col(name).is_null() if v is None else nw.col(name) == v for name, v in keys.items()))
        per_item = _frames.group_agg(rows, [c.item], *(nw.col(name).n_unique().alias(name) for name in candidates))
        spread = _collect(per_item.select(nw.col(name).max() for name in candidates)).rows(named=True)
    except Exception:  # noqa: BLE001
        return None
    differing = [name for name in candidates if spread and (spread[0][name] or 0) > 1]
    text = [name for name in differing if isinstance(schema[name], (nw.String, nw.Categorical, nw.Enum))]
    chosen = text or differing
    return chosen[0] if chosen else None


def raise_first_problem(
    table: nw.LazyFrame | nw.DataFrame, spec: Spec, checks: CheckPlan, source: nw.LazyFrame | None = None
) -> None:
    """Raise on the first data problem the per-list counts of `checks` reveal.

    Every problem is totalled in one aggregate that returns a single row; only when one is
    found is the first offending list (in key order) fetched, so on a SQL engine a clean frame
    costs one small query over the per-list table. `source`, the recommendations as given,
    is read only where duplicate items differ in a column that could be a missing ``by`` key
    (:func:`missing_key`).
    """
    keys = [*spec.columns.list_keys, n.USER]
    where = f" in the frame joined from the recommendations and {ref('truth')}" if spec.facts.with_truth else ""
    problems = _problems(spec, checks)
    flagged = table.with_columns(expr.alias(n.check_column(name)) for name, expr in problems.items())
    totals = _collect(flagged.select(nw.col(n.check_column(name)).sum().alias(name) for name in problems))
    total = {name: int(value or 0) for name, value in totals.rows(named=True)[0].items()} if len(totals) else {}
    if not any(total.values()):
        return

    def first(name: str) -> dict[str, Any]:
        rows = flagged.filter(nw.col(n.check_column(name)) > 0).sort(keys, nulls_last=False).head(1)
        return _collect(rows).rows(named=True)[0]

    # in this order: the first problem found is the one said
    _raise_column_problem(total, first, spec, where, source)
    _raise_list_problem(total, first, spec)


def _raise_column_problem(
    total: dict[str, int], first: Callable[[str], dict[str, Any]], spec: Spec, where: str, source: nw.LazyFrame | None = None
) -> None:
    """Null keys and items, duplicate items, bad or duplicate ranks, bad relevance, scores and gains."""
    for key in [*spec.columns.list_keys, n.USER]:
        if total.get(f"null:{key}"):
            name = spec.columns.source(key)
            raise fail(
                f"column {name!r} has {total[f'null:{key}']} null value(s){where}; every row needs one to be grouped.",
                f"drop or fill them first, e.g. df.filter(pl.col({name!r}).is_not_null()).",
            )
    item = spec.columns.item
    if total["null_items"]:
        raise fail(f"column {item!r} ({ref('item')}) has {total['null_items']} null value(s){where}.", "drop or fill them first.")
    if total.get("duplicate_items"):
        r = first("duplicate_items")
        user_part = f"({spec.columns.user}, {item})" if spec.columns.user else f"{item}"
        problem = (
            f"duplicate {user_part} rows{where}: {_where(r, spec)} has {r[n.DUP_ROWS]} rows but "
            f"{r[n.DUP_ITEMS]} distinct {item!r} values; {total['duplicate_items']} list(s) affected, "
            f"{total['extra_rows']} extra row(s)."
        )
        missing = missing_key(source, r, spec)
        if missing is not None:
            by = [*spec.columns.by, missing]
            raise fail(
                f"{problem} Its rows of an item differ in column {missing!r}, which the call does not group by.",
                f"did you mean {fix('by', by if len(by) > 1 else missing)}? Each value of {missing!r} then has lists of its own; "
                "if the rows are true duplicates, keep one row per item.",
            )
        raise fail(problem, "keep one row per item, e.g. df.unique(subset=[...]) or a group_by that picks the best rank.")
    rank = spec.columns.rank
    if total.get("bad_rank"):
        raise fail(
            f"column {rank!r} ({ref('rank')}) has {total['bad_rank']} value(s) that are not whole numbers (or exceed 2**53), "
            f"first at {_where(first('bad_rank'), spec)}.",
            f"ranks are positions 1, 2, 3, ...; to rank by a score pass {ref('score')} instead.",
        )
    if total.get("rank_below_1"):
        r = first("rank_below_1")
        raise fail(
            f"column {rank!r} ({ref('rank')}) has rank {r[n.MIN_RANK]} < 1 at {_where(r, spec)} ({total['rank_below_1']} list(s) affected).",
            "ranks start at 1 for the top item; if yours start at 0, add 1.",
        )
    if total.get("duplicate_ranks"):
        r = first("duplicate_ranks")
        raise fail(
            f"duplicate ranks in column {rank!r}{where}: {_where(r, spec)} has {r[n.DUP_RANKED]} ranked rows but "
            f"fewer distinct ranks; {total['duplicate_ranks']} list(s) affected.",
            f"each position in a list holds one item; to rank by a score with ties pass {ref('score')} instead.",
        )
    for flag, arg, name, what in (
        (n.BAD_REL, "relevance", spec.columns.relevance, "NaN or infinite"),
        (n.BAD_SCORE, "score", spec.columns.score or "", "NaN"),
    ):
        if total.get(flag):
            raise fail(
                f"column {name!r} ({ref(arg)}) has {total[flag]} {what} value(s), first at {_where(first(flag), spec)}.",
                "use null for unknown values, e.g. pl.col(...).fill_nan(None).",
            )
    if total.get(n.BAD_GAIN):
        gaining = "relevant" if spec.conventions.gain_threshold == "threshold" else "positive"
        where = f"{_where(first(n.BAD_GAIN), spec)}"
        if spec.conventions.gain == "exp2":
            raise fail(
                f"column {spec.columns.relevance!r} ({ref('relevance')}) has {total[n.BAD_GAIN]} {gaining} grade(s) above "
                f"{MAX_EXP2_GRADE}, first at {where}: with {fix('gain', 'exp2')} their gain "
                "2**grade - 1 overflows, and DCG and nDCG would be infinite or NaN.",
                f"use {fix('gain', 'linear')}, or rescale the grades (exp2 is meant for small integer grades such as 0-4).",
            )
        raise fail(
            f"column {spec.columns.relevance!r} ({ref('relevance')}) has {total[n.BAD_GAIN]} {gaining} grade(s) beyond "
            f"2**1000 (about 1.07e301), first at {where}: with {fix('gain', 'linear')} the gain is "
            "the grade, and sums of such gains overflow, so DCG would be infinite or NaN.",
            f"rescale the grades, e.g. divide them by a power of ten (nDCG does not change), or pass {fix('gain', 'binary')}.",
        )


def _raise_list_problem(total: dict[str, int], first: Callable[[str], dict[str, Any]], spec: Spec) -> None:
    """Problems of whole lists: users= attributes and rows, unlisted users, rank gaps, items
    outside the catalog, users without a relevant item under empty_users="error"."""
    rank = spec.columns.rank
    for key in spec.columns.attr_keys:
        if total.get(f"null_attr:{key}"):
            raise fail(
                f"column {key!r} of {ref('users')} has {total[f'null_attr:{key}']} null value(s), first at "
                f"{_where(first(f'null_attr:{key}'), spec)}; every user needs one to be grouped by it.",
                f"fill them first, e.g. users.with_columns(pl.col({key!r}).fill_null('unknown')).",
            )
    if total.get("duplicate_users"):
        r = first("duplicate_users")
        raise fail(
            f"{ref('users')} has {r[n.USER_ROWS]} rows for {_where(r, spec)} ({total['duplicate_users']} list(s) affected); "
            "it needs one row per user, whose attributes are joined onto the user's metrics.",
            f"keep one row per user, e.g. users.unique(subset=[{spec.columns.user!r}]).",
        )
    if total.get("unlisted"):
        r = first("unlisted")
        raise fail(
            f"{_where(r, spec)} has recommendations but is not in {ref('users')} ({total['unlisted']} list(s) affected); "
            f"{ref('users')} fixes who is evaluated.",
            f"add the user to {ref('users')}, or pass {fix('unlisted_users', 'drop')} to leave such users out.",
        )
    if total.get("rank_gaps"):
        r = first("rank_gaps")
        raise fail(
            f"column {rank!r} ({ref('rank')}) has gaps: {_where(r, spec)} has {r[n.N_RANKED]} ranked rows but ranks up to "
            f"{r[n.MAX_RANK]} ({total['rank_gaps']} list(s) affected), so its positions are not 1, 2, 3, ...",
            f"if rows were removed (seen items), pass {ref('exclude')} with them instead, which re-ranks; "
            f"{fix('rank_gaps', 'rerank')} re-ranks each list, {fix('rank_gaps', 'keep')} uses the ranks as positions; "
            f"or rank by a score with {ref('score')}.",
        )
    if total.get("outside_catalog"):
        r = first("outside_catalog")
        catalog = ref("items") if spec.facts.with_items else f"the items of {ref('train')} (the catalog without {ref('items')})"
        raise fail(
            f"item {r[n.OUTSIDE_ITEM]!r} is ranked within k at {_where(r, spec)} but is not in {catalog}; "
            f"{total['outside_catalog']} such row(s). Coverage, Gini, item features and item groups read the catalog, so "
            "every recommended item must be in it.",
            f"pass {ref('items')} the whole catalog (every item that can be recommended), with its features.",
        )
    if total.get("empty"):
        raise fail(
            f"{fix('empty_users', 'error')}: {_where(first('empty'), spec)} has no relevant item "
            f"({total['empty']} list(s) affected).",
            f'pass {fix("empty_users", "skip")} to leave them out of the means, or "zero" to score them 0.',
        )


def attach(
    table: nw.LazyFrame,
    spec: Spec,
    checks: CheckPlan,
    engine: _frames.Engine,
    shared_input: bool = True,
    large: bool = False,
    source: nw.LazyFrame | None = None,
) -> nw.LazyFrame:
    """Run the checks on the per-list table, and return the table the metrics then read.

    On a SQL engine the table is computed once (see ``_frames.Engine.materialize``) and checked
    now, with one small query; the metrics read the same computed table (``large``: one the
    engine may spill). On Polars the check rides
    along the plan and runs on the per-list rows as they are computed; ``shared_input`` says
    whether its passes share the prepared input (see ``_frames.when_collected``). `source`:
    the recommendations as given, read only to name a missing ``by`` key (:func:`missing_key`).
    """
    if not spec.selection.checks:
        return table  # checks=False: nothing to check, nothing computed now
    return engine.check(table, lambda rows: raise_first_problem(rows, spec, checks, source), large, shared_input)
