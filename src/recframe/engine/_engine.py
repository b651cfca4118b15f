"""The evaluation plan, written once in narwhals expressions.

Shape of the plan (design.md section 4):

1. ``prepare``: rename the user's columns to internal names, drop excluded pairs, rank the
   recommendations by score (:func:`score_positions`), join ``truth=``. When this step joins,
   ranks or checks float ranks, its rows are computed once for every pass (see ``evaluate``).
2. Flag each row: relevant or not, its gain, its position (never null: NOT_RANKED when it was
   not recommended).
3. One aggregation pass per row domain, each feeding the metrics' terms and the data checks
   (:mod:`recframe.engine._checks`) alike:

   - over every row of a list: the list facts (ranked and judged rows), the check counts and
     the terms of the "all" domain (R);
   - over the relevant rows (a small share of a long frame): the row features (windows) the
     terms read, then the terms of the "relevant" domain;
   - over the rows ranked within the largest k: the terms of the "top_k" domain, and the
     duplicate counts when the check reads only the rows that can change a number (then
     over the relevant rows too);
   - only when a metric asks for them: over the judged rows (bpref, infAP) and over the rows
     graded above 0 under ``gain_threshold="positive"`` (DCG, ERR), with their features. By
     default the graded rows are the relevant ones, and their terms join that pass.

   The per-list tables are left-joined: one row per list (by keys, user).
4. ``finish``: each metric from its terms, with the empty-user policy; ``recframe.statistics._summary``
   averages them by group and adds group-level metrics, whose terms are aggregated over the
   rows of each group.

Terms, features and metrics are declarations in :mod:`recframe.metrics`; this module only runs
them. Portability rules kept throughout (``notes-narwhals.md``): conditionals only in
``with_columns``, plain column aggregations inside ``group_by().agg()``, windows only with
``order_by`` where order matters and only on the prefiltered rows, null ranks replaced by a
sentinel before any comparison, explicit output dtypes and an explicit final sort. The one
engine-specific step is :func:`score_positions`, tested on every engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import narwhals as nw

from recframe import _names as n
from recframe.engine import _checks, _frames, _item_groups, _relevance, _side
from recframe.engine import _validate as v
from recframe.metrics import FEATURES, REGISTRY, TERMS, Rows, Term, term
from recframe.metrics._registry import NOT_RANKED, domain_of, position_cut

# the row domains read by a pass of their own (besides "all", the pass over every row)
_PASSES = ("relevant", "top_k", "judged", "graded")
# the largest finite float32
FLOAT32_MAX = 3.4028234663852886e38


def needed_terms(spec: v.Spec) -> set[str]:
    """The names of the terms the call's metrics are finished from (R always: it is output),
    and the count of graded items that says where a "graded" metric is defined under
    ``gain_threshold="positive"`` (read by :func:`evaluate`)."""
    terms: set[str] = {"n_relevant"}
    for name in spec.selection.metrics:
        metric = REGISTRY[name]
        terms.update(metric.terms(spec.conventions))
        if metric.defined == "graded" and spec.conventions.gain_threshold == "positive":
            terms.add("n_graded")
    return terms


def _term_columns(term: Term, spec: v.Spec) -> list[tuple[str, int | None]]:
    """(column, k) of each value of `term` the call needs: one per k for an at-k term."""
    if term.at_k:
        return [(term.column(k), k) for k in spec.selection.ks]
    return [(term.column(), None)]


def _renamed_ids(frame: nw.LazyFrame, spec: v.Spec, keys: list[str]) -> list[nw.Expr]:
    """`keys`, then the user and item columns of `frame` under their internal names."""
    user = nw.col(spec.columns.user).alias(n.USER) if spec.columns.user is not None else nw.lit(0).alias(n.USER)
    return [*(nw.col(b) for b in keys), user, nw.col(spec.columns.item).alias(n.ITEM)]


def prepare(
    frame: nw.LazyFrame,
    truth: nw.LazyFrame | None,
    spec: v.Spec,
    users: nw.LazyFrame | None = None,
    exclude: nw.LazyFrame | None = None,
    models: nw.LazyFrame | None = None,
) -> nw.LazyFrame:
    """Select and rename the needed columns; drop excluded pairs; rank by score; join truth
    (broadcast over the model key values of :func:`model_values`, or over `models`: those of
    every user, when the frame holds some of them, see recframe.statistics._partitions)."""
    keys = list(spec.columns.list_keys)
    order_col = n.SCORE if spec.columns.score is not None else n.RANK
    order_src = spec.columns.score if spec.columns.score is not None else spec.columns.rank
    assert order_src is not None  # check_arguments requires rank= or score=
    recs = [*_renamed_ids(frame, spec, keys), nw.col(order_src).alias(order_col)]
    recs += [nw.col(n.LIST)] if spec.facts.list_runs else []  # (recframe.engine._frames.list_runs)
    lf = frame.select(*recs) if truth is not None else frame.select(*recs, nw.col(spec.columns.relevance).alias(n.REL))
    lf, seen = _seen_removed(lf, spec, exclude)
    if truth is None or not spec.columns.model_keys:
        models = None
    elif models is None:
        models = lf.select(*spec.columns.model_keys).unique()

    def join_truth(lf: nw.LazyFrame) -> nw.LazyFrame:
        assert truth is not None
        truth_keys = list(spec.columns.truth_keys)
        t = truth.select(*_renamed_ids(truth, spec, truth_keys), nw.col(spec.columns.relevance).alias(n.REL))
        # the seen pairs leave the truth before the broadcast (the smaller frame), or after it
        # when exclude= holds a model key, which only the broadcast truth has
        seen_on = [] if seen is None else [b for b in keys if b in seen.columns]
        seen_after = not set(seen_on) <= set(truth_keys)
        if seen is not None and not seen_after:
            t = t.join(seen, on=[*seen_on, n.USER, n.ITEM], how="anti")
        if users is not None:
            # users= fixes who is evaluated: the truth of anybody else is left out
            listed = users.select(nw.col(str(spec.columns.user)).alias(n.USER)).unique()  # users= needs user=
            t = t.join(listed, on=n.USER, how="semi")
        if models is not None:
            # every model is scored on every truth user: broadcast truth over the model keys
            # only; truth keys (folds, dates) are joined on, never broadcast across
            t = models.join(t, how="cross")
        if seen is not None and seen_after:
            t = t.join(seen, on=[*seen_on, n.USER, n.ITEM], how="anti")
        on = [*keys, n.USER, n.ITEM]
        lf = lf.join(t, on=on, how="full")
        lf = lf.with_columns(nw.coalesce(nw.col(c), nw.col(f"{c}_right")).alias(c) for c in on)
        lf = lf.drop([f"{c}_right" for c in on])
        return lf

    # ranked before truth= is joined: its rows have no score and take no position, and the
    # recommendations alone are fewer rows, still in the order they were given; but a tie
    # order by relevance (ties="optimistic", "pessimistic") needs the truth's relevance first
    relevance_first = truth is not None and spec.conventions.ties in ("optimistic", "pessimistic", "average")
    if relevance_first:
        lf = join_truth(lf)
    if spec.columns.score is not None:
        score = nw.col(n.SCORE).cast(nw.Float64)
        if spec.conventions.score_dtype == "float32":
            # compare as trec_eval does; scores past float32's range take its largest value
            # (trec_eval reads them as infinite: they tie either way), which no engine refuses
            score = score.clip(-FLOAT32_MAX, FLOAT32_MAX).cast(nw.Float32).cast(nw.Float64)
        if spec.conventions.ties == "average":
            score = nw.when(score == 0).then(0.0).otherwise(score)  # -0.0 ties 0.0 in the groups of equal scores too
        lf = lf.with_columns(score)
        eligible = ~nw.col(n.SCORE).is_null() & ~nw.col(n.SCORE).is_nan()
        if spec.selection.score_threshold is not None:
            eligible = eligible & (nw.col(n.SCORE) >= spec.selection.score_threshold)
        lf = lf.with_columns(eligible.fill_null(False).cast(nw.Int64).alias(n.ELIGIBLE))
        lf = score_positions(lf, spec, [*keys, n.USER]).drop(n.ELIGIBLE)
    if truth is not None and not relevance_first:
        lf = join_truth(lf)

    lf = lf.with_columns(nw.col(n.REL).cast(nw.Float64))
    if spec.columns.rank is not None:
        r = nw.col(n.RANK)
        if spec.facts.integer_rank:
            lf = lf.with_columns(r.cast(nw.Int64))
        else:
            # float ranks (pandas turns int columns with missing values into float64), decimals
            # and 64-bit unsigned ranks must be whole numbers an Int64 holds exactly (|r| <=
            # 2**53); the bad ones are counted and reported by the data check
            lf = lf.with_columns(r.cast(nw.Float64))
            # (rounded only where an Int64 holds the value: Ibis rounds to an Int64, which a NaN,
            # an infinity or a huge rank overflows with a raw error; a null rank is not bad)
            exact = r.is_finite() & (r.abs() <= v.MAX_RANK_VALUE)
            bad = nw.when(exact).then(r.round(0) != r).otherwise(~r.is_null())
            lf = lf.with_columns(bad.cast(nw.Int64).alias(n.BAD_RANK))
            lf = lf.with_columns(nw.when(nw.col(n.BAD_RANK) == 0).then(r).otherwise(None).cast(nw.Int64))
        if spec.reranks:
            # positions 1, 2, 3, ... in the given order; tied ranks stay tied (the duplicate
            # check still sees them) and the given rank is kept for the range check
            lf = lf.with_columns(r.alias(n.RAW_RANK))
            lf = lf.with_columns(r.rank("dense").over(*keys, n.USER).cast(nw.Int64))
    return lf


def _seen_removed(lf: nw.LazyFrame, spec: v.Spec, exclude: nw.LazyFrame | None) -> tuple[nw.LazyFrame, nw.LazyFrame | None]:
    """The renamed rows without the seen pairs of exclude= (which leave the truth too, in
    prepare: the lists are re-ranked there), and those pairs. A key exclude= holds (a model,
    a fold) is joined on, so a pair seen under one model leaves that model's list only."""
    if exclude is None:
        return lf, None
    on = [b for b in spec.columns.list_keys if b in exclude.columns]
    seen = exclude.select(*_renamed_ids(exclude, spec, on)).unique()
    return lf.join(seen, on=[*on, n.USER, n.ITEM], how="anti"), seen


def model_values(frame: nw.LazyFrame, spec: v.Spec, exclude: nw.LazyFrame | None) -> nw.LazyFrame:
    """The model key values of the rows left after exclude=: prepare scores each of them on
    every truth user (the truth is broadcast over them)."""
    lf, _ = _seen_removed(frame.select(*_renamed_ids(frame, spec, list(spec.columns.list_keys))), spec, exclude)
    return lf.select(*spec.columns.model_keys).unique()


def score_positions(lf: nw.LazyFrame, spec: v.Spec, lists: list[str]) -> nw.LazyFrame:
    """RANK = each eligible row's position in its list by score, descending, ties broken by the
    item (ascending, or descending under ``ties="item_desc"``; under ``"optimistic"`` and
    ``"pessimistic"`` first by relevance and grade, :func:`_bound_order`); null on the other rows.

    The one engine-specific step of the plan (:meth:`recframe.engine._frames.Engine.rank_by_score`).
    On every engine -0.0 ties 0.0 and Enum/Categorical items are ordered by name (Polars would
    order them by category).
    """
    item_order = nw.col(n.ITEM).cast(nw.String) if spec.facts.categorical_item else nw.col(n.ITEM)
    relevant_first = {"optimistic": 0, "pessimistic": 1}.get(spec.conventions.ties)
    bound = _bound_order(spec, relevant_first) if relevant_first is not None else {}
    lf = lf.with_columns(item_order.alias("__rf_item_order"), *(e.alias(c) for c, e in bound.items()))
    descending = spec.conventions.ties == "item_desc"
    cut = _near_top_cut(spec)
    return _frames.runs_on(lf).rank_by_score(lf, lists, list(bound), descending, cut).drop("__rf_item_order", *bound)


def _bound_order(spec: v.Spec, relevant_first: int) -> dict[str, nw.Expr]:
    """ties="optimistic" (relevant_first 0) / "pessimistic" (1): the keys, ascending, that order
    a tie before the item: the relevant items first / last, then the items that gain by grade,
    descending / ascending (0 for a row that gains nothing). Every gain (linear, exp2, binary)
    and ERR's stop probability are non-decreasing in the grade of a row that gains, and a
    relevant row gains at least what any other row does (thresholds <= 0 are refused but under
    binary gain, whose gains are all 1), so one order puts the hits and the gains first (last)
    at once: a bound of the metrics of relevance and of gain alike (issue 58: ordered by the
    relevant flag alone, a grade 2 item before a grade 3 one of equal score, nDCG@1 was 2/3
    under both bounds)."""
    relevant = nw.when(_relevance.is_relevant(spec)).then(relevant_first).otherwise(1 - relevant_first)
    grade = nw.col(n.REL).cast(nw.Float64)
    # (the grade 0 is +0.0 in both orders: Polars' row encoding tells -0.0 apart)
    signed = grade * (1.0 if relevant_first else -1.0)
    by_grade = nw.when(_relevance.gains(spec) & (grade != 0)).then(signed).otherwise(0.0)
    return {"__rf_rel_order": relevant.cast(nw.Int64), "__rf_grade_order": by_grade.cast(nw.Float64)}


def flag_rows(lf: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """Add the relevance flag every pass reads. Under ``negative_relevance="unjudged"`` a
    negative relevance becomes null (unjudged) and POOLED keeps that the row was in the pool."""
    if spec.conventions.negative_relevance == "unjudged":
        rel = nw.col(n.REL)
        lf = lf.with_columns((~rel.is_null()).cast(nw.Int64).alias(n.POOLED)).with_columns(
            nw.when(rel >= 0).then(rel).otherwise(None).alias(n.REL)
        )
    lf = lf.with_columns(_relevance.is_relevant(spec).cast(nw.Int64).alias(n.RELEVANT))
    return _with_near_top(lf, spec) if spec.conventions.ties == "average" else lf


def _with_near_top(lf: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """ties="average": TIE_NEAR flags the ranked rows whose group of equal scores reaches a
    position <= the largest k (scored at least the score there; whole groups: a lower score
    ties no row there), or every ranked row when a term reads past it (hits_r, R-precision's).
    The positions a term sums lie there, so the shares are computed on those rows alone
    (_with_tie_shares, see _averaged_passes): bench/ties.py, 11M rows, the windows over every
    row cost the summary 1.3 s."""
    ranked = ~nw.col(n.RANK).is_null()
    cut = _near_top_cut(spec)
    if cut is None:
        return lf.with_columns(ranked.alias(n.TIE_NEAR))
    if n.TIE_FLOOR in lf.collect_schema().names():  # (DuckDB: from the ranking's sort, score_positions)
        near = ranked & ((nw.col(n.RANK) <= cut) | (nw.col(n.SCORE) >= nw.col(n.TIE_FLOOR)))
        return lf.with_columns(near.fill_null(False).alias(n.TIE_NEAR)).drop(n.TIE_FLOOR)
    top = nw.when(nw.col(n.RANK) <= cut).then(nw.col(n.SCORE))
    floor = top.min().over(*([n.LIST] if spec.facts.list_runs else [*spec.columns.list_keys, n.USER]))
    return lf.with_columns((ranked & (nw.col(n.SCORE) >= floor)).fill_null(False).alias(n.TIE_NEAR))


def _near_top_cut(spec: v.Spec) -> int | None:
    """ties="average": the last position the rows near the top must reach (the largest k), or
    None when every ranked row is near it (a term reads past k: hits_r, R-precision's) or
    the call does not average over ties."""
    if spec.conventions.ties != "average" or "hits_r" in needed_terms(spec):
        return None
    return position_cut(max(spec.selection.ks))


def _with_tie_shares(lf: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """ties="average": what each position holds on average over the orderings of its group of
    equal scores (McSherry and Najork 2008). Each ordering is equally likely, so every position
    of a group of g rows, r of them relevant, holds a relevant item with chance r / g and the
    group's mean gain: the position sums (hits, DCG) read these in place of the row's own. On
    the rows of a pass, which hold every row near the top (TIE_NEAR) with its whole group; any
    other row keeps its own (a row not ranked has no position, the others no sum reads)."""
    group = [*spec.columns.list_keys, n.USER, n.SCORE]
    near = nw.col(n.TIE_NEAR)
    hit, row_gain, rank = "__rf_own_hit", "__rf_own_gain", "__rf_own_rank"
    terms = needed_terms(spec)
    # the windows read only columns of the projection before theirs: Polars then keeps them in
    # one projection and groups the rows once (else it moves each next to its inputs, three
    # groupings: bench/ties.py, 11M rows without ties, summary 4.0 s -> 3.1 s)
    lf = lf.with_columns(
        nw.col(n.RELEVANT).cast(nw.Float64).alias(hit),
        nw.when(_relevance.gains(spec)).then(_relevance.gain(spec)).otherwise(0.0).cast(nw.Float64).alias(row_gain),
        nw.col(n.RANK).alias(rank),
    )
    # each window once (an engine may not share equal windows), and only those the terms read
    windows: dict[str, tuple[_frames.GroupAgg, str]] = {}
    if "dcg@" in terms:
        windows["__rf_window_gain"] = ("mean", row_gain)
    if "tie_log_miss@" in terms:  # (the share of relevant rows is then relevant / size)
        windows["__rf_window_size"] = ("count", rank)
        windows["__rf_window_relevant"] = ("sum", hit)
        windows["__rf_window_start"] = ("min", rank)
    else:
        windows["__rf_window_hit"] = ("mean", hit)
    lf = _frames.over_groups(lf, group, windows)
    share = (
        nw.col("__rf_window_hit")
        if "__rf_window_hit" in windows
        else nw.col("__rf_window_relevant") / nw.col("__rf_window_size").cast(nw.Float64)
    )
    out = [nw.when(near).then(share).otherwise(nw.col(hit)).alias(n.TIE_HIT)]
    if "__rf_window_gain" in windows:
        out.append(nw.when(near).then(nw.col("__rf_window_gain")).otherwise(nw.col(row_gain)).alias(n.TIE_GAIN))
    if "__rf_window_size" in windows:
        size = nw.col("__rf_window_size").cast(nw.Float64)
        before = (nw.col(n.RANK) - nw.col("__rf_window_start")).cast(nw.Float64)  # j: the rows of the group before it
        miss = (size - nw.col("__rf_window_relevant") - before) / (size - before)
        out.append(nw.when(near).then(nw.when(miss > 0).then(miss).otherwise(0.0)).alias(n.TIE_MISS))
    return lf.with_columns(*out).drop(hit, row_gain, rank, *windows)


def with_position(lf: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """Add the gain (0.0 on rows that do not gain) and the position (NOT_RANKED for a row
    never recommended) the terms read: after a pass's filter, on its rows only."""
    return lf.with_columns(
        nw.when(_relevance.gains(spec)).then(_relevance.gain(spec)).otherwise(0.0).cast(nw.Float64).alias(n.GAIN),
        nw.col(n.RANK).cast(nw.Int64).fill_null(NOT_RANKED).alias(n.POSITION),
    )


def rows_of(spec: v.Spec) -> Rows:
    """What the terms read, for this call (with the internal item feature columns)."""
    pooled = spec.conventions.negative_relevance == "unjudged"
    averaged = spec.conventions.ties == "average"
    return Rows(
        spec.conventions,
        **({"pooled": nw.col(n.POOLED)} if pooled else {}),
        **({"hit": nw.col(n.TIE_HIT), "position_gain": nw.col(n.TIE_GAIN)} if averaged else {}),
        item_features=tuple(n.item_feature(f) for f in spec.selection.item_features),
        labels=spec.facts.label_features,
    )


def _aggregates(columns: Iterable[tuple[str, str]]) -> list[nw.Expr]:
    """Each (column, aggregate) aggregated under its own name, one expression per aggregate.
    narwhals turns every expression into the engine's in Python, about 30 us a node: 60 sums
    as 60 expressions cost 2.8 ms, as one of 60 columns 0.2 ms (a curve has hundreds)."""
    by_agg: dict[str, list[str]] = {}
    for column, agg in columns:
        by_agg.setdefault(agg, []).append(column)
    return [getattr(nw.col(*names), agg)() for agg, names in by_agg.items()]


def _filled(columns: Iterable[tuple[str, Any]]) -> list[nw.Expr]:
    """Each (column, value): the column's nulls filled with the value, one expression per value."""
    by_value: dict[tuple[type, Any], list[str]] = {}  # (0 and 0.0 apart: a float fill turns an integer column float)
    for column, value in columns:
        by_value.setdefault((type(value), value), []).append(column)
    return [nw.col(*names).fill_null(value) for (_, value), names in by_value.items()]


def _in_domain(domain: str, spec: v.Spec, near: bool = True) -> nw.Expr:
    """The rows of a domain, as a condition on the flagged rows. Under ties="average" the
    top-k rows are the rows near the top (TIE_NEAR: whole groups of equal scores), and they
    join the relevant (graded) rows: their positions may hold a share of a tied item's
    relevance (gain). `near=False`: the domain's own rows alone."""
    averaged = spec.conventions.ties == "average" and near
    if domain == "relevant":
        # the rule, not the RELEVANT flag, so that the filter reaches the scan (a null selects no row)
        relevant = _relevance.relevance_rule(spec)
        return relevant | nw.col(n.TIE_NEAR) if averaged else relevant
    if domain == "top_k":  # a null rank (not recommended) is outside
        return nw.col(n.TIE_NEAR) if averaged else (nw.col(n.RANK) <= position_cut(max(spec.selection.ks))).fill_null(False)
    if domain == "judged":  # the pool: the judged rows, and the unjudged pooled rows infAP reads
        return nw.col(n.POOLED) == 1 if spec.conventions.negative_relevance == "unjudged" else ~nw.col(n.REL).is_null()
    if domain == "graded":  # (the relevant rows unless gain_threshold="positive": see domain_of)
        return _relevance.gains(spec) | nw.col(n.TIE_NEAR) if averaged else _relevance.gains(spec)
    return nw.lit(True)


def _masked(term: Term, k: int | None, spec: v.Spec, rows: Rows, every_row_in_domain: bool = False) -> nw.Expr:
    """The term's per-row value on its domain's rows; elsewhere a value its aggregate ignores."""
    value = term.value(rows, k)
    domain = domain_of(term, spec.conventions)
    if domain == "all" or every_row_in_domain:
        return value
    outside: float | None = 0.0 if term.agg == "sum" else None
    return nw.when(_in_domain(domain, spec)).then(value).otherwise(outside)


def _with_features(part: nw.LazyFrame, terms: list[Term], rows: Rows, lists: list[str], domain: str) -> nw.LazyFrame:
    """`part` (the rows of `domain`) with the row features (windows over each list's rows of
    `part`) `terms` read."""
    features = [FEATURES[f] for f in dict.fromkeys(f for term in terms for f in term.features)]
    if not features:
        return part
    part = part.with_columns(nw.lit(1).cast(nw.Int64).alias(n.ONE))  # what running counts sum (Rows.one)
    return part.with_columns(
        (f.on_relevant_rows if domain == "relevant" and f.on_relevant_rows else f.window)(rows, lists).alias(
            n.feature_column(f.name)
        )
        for f in features
    )


def _with_side_terms(
    table: nw.LazyFrame, spec: v.Spec, terms: list[Term], rows: Rows, side: _side.SideInputs | None
) -> nw.LazyFrame:
    """`table` with the terms of the "side" domain: values of the side inputs alone (the
    catalog size, the training users), the same on every list and group."""
    mine = [(t, column, k) for t in terms if t.domain == "side" for column, k in _term_columns(t, spec)]
    if not mine:
        return table
    assert side is not None  # the metrics' requires made sure of the inputs
    values = _side.constants(spec, side).select(t.value(rows, k).cast(nw.Float64).alias(column) for t, column, k in mine)
    return table.join(values, how="cross")


class _Pass(NamedTuple):
    """One aggregation pass of :func:`list_table`: its domain, the condition on its rows, the
    terms it aggregates, and whether it also counts the duplicates (then its rows are the
    relevant and top-k ones, and each term is masked to its domain), counts the items outside
    the catalog, or computes ties="average"'s shares first (the windows over tied scores)."""

    domain: str
    condition: nw.Expr
    terms: list[Term]
    duplicates: bool = False
    catalog: bool = False
    tie_shares: bool = False


def _passes(spec: v.Spec, checks: _checks.CheckPlan, by_domain: dict[str, list[Term]], catalog: bool) -> list[_Pass]:
    """The aggregation passes of list_table after its pass over every row, given the terms of
    each domain. The relevant rows (and the judged or graded rows, when asked for): the
    features (windows: only here, on a small share of the rows), then the terms read there;
    then the top-k rows (with the relevant ones when the duplicate check reads the rows that
    can change a number), without windows."""
    if spec.conventions.ties == "average":
        return _averaged_passes(spec, checks, by_domain, catalog)
    passes = [_Pass(d, _in_domain(d, spec), by_domain[d]) for d in ("relevant", "judged", "graded") if by_domain[d]]
    top_k = _in_domain("top_k", spec)
    if checks.duplicates != "used":
        return [*passes, _Pass("top_k", top_k, by_domain["top_k"], catalog=catalog)]
    with_side = [t for t in by_domain["top_k"] if _side.side_columns([t.name])]
    plain = [t for t in by_domain["top_k"] if t not in with_side]
    # the duplicate counts (n_unique) on the rows as they come, sorted by list where the
    # input is; the terms that read side columns in a pass of their own, over the top-k
    # rows only: a join leaves its rows unordered, and distinct counts over unordered
    # groups cost twice the pass (10M rows: 0.19 s against 0.05 s + 0.05 s)
    passes.append(_Pass("top_k", _in_domain("relevant", spec) | top_k, plain, duplicates=True))
    if with_side or catalog:
        passes.append(_Pass("top_k", top_k, with_side, catalog=catalog))
    return passes


def _averaged_passes(spec: v.Spec, checks: _checks.CheckPlan, by_domain: dict[str, list[Term]], catalog: bool) -> list[_Pass]:
    """ties="average"'s passes. The sums over the top k (of every domain) in one pass over the
    rows near the top (TIE_NEAR: whole groups of equal scores), the tie windows on those rows
    alone; each domain's other terms on its own rows, with the rows near the top and the
    windows only when one reads positions (R-precision's); the duplicate counts over the
    relevant rows and those near the top, in a pass of their own. bench/ties.py, 11M rows:
    the windows and sums over the relevant rows and those near the top together cost the
    summary 1.6x the default tie-break, apart 1.3x."""
    near = [t for d in _PASSES for t in by_domain[d] if d == "top_k" or t.tie_average == "top_k"]
    passes = []
    for d in ("relevant", "judged", "graded"):
        rest = [t for t in by_domain[d] if t.tie_average != "top_k"]
        positions = any(t.tie_average == "positions" for t in rest)
        if rest:
            condition = _in_domain(d, spec) if positions else _in_domain(d, spec, near=False)
            passes.append(_Pass(d, condition, rest, tie_shares=positions))
    passes.append(_Pass("top_k", _in_domain("top_k", spec), near, catalog=catalog, tie_shares=True))
    if checks.duplicates == "used":
        passes.append(_Pass("top_k", _in_domain("relevant", spec), [], duplicates=True))
    return passes


def list_table(
    lf: nw.LazyFrame,
    spec: v.Spec,
    checks: _checks.CheckPlan,
    users: nw.LazyFrame | None = None,
    side: _side.SideInputs | None = None,
) -> nw.LazyFrame:
    """One row per list (by keys, user): the user-level terms, the list facts N_RANKED and
    N_JUDGED, and the data-check counts of `checks` (with users=, the user's rows there).
    The rows ranked within the largest k get the side columns their terms read (`side`)."""
    keys = [*spec.columns.list_keys, n.USER]
    # what the passes group by: the list keys, or the number of each list's run of rows
    # (sorted: the group-bys and windows then skip hashing), the keys then taken per run
    lists = [n.LIST] if spec.facts.list_runs else keys
    rows = rows_of(spec)
    terms = [TERMS[name] for name in sorted(needed_terms(spec)) if TERMS[name].level == "user"]
    by_domain = {d: [t for t in terms if domain_of(t, spec.conventions) == d] for d in ("all", *_PASSES)}

    # every row: the list facts, the checks' counts and the "all" terms
    every = [(t, column, k) for t in by_domain["all"] for column, k in _term_columns(t, spec)]
    table = _frames.group_agg(
        with_position(lf, spec).with_columns(  # (unused columns are pruned by the engine's optimiser)
            *(expr.alias(name) for name, expr in checks.row_flags.items()),
            *(_masked(t, k, spec, rows).alias(column) for t, column, k in every),
        ),
        lists,
        # (constant within a run)
        *(nw.col(c).min() for c in (keys if spec.facts.list_runs else [])),
        nw.col(n.RANK).count().alias(n.N_RANKED),
        # (a query whose qrels are all "pooled, not judged" is still evaluated, as trec_eval does)
        (nw.col(n.POOLED).sum() if spec.conventions.negative_relevance == "unjudged" else nw.col(n.REL).count()).alias(
            n.N_JUDGED
        ),
        *checks.all_rows,
        *(checks.duplicate_rows.values() if checks.duplicates == "all" else []),
        *_aggregates((column, t.agg) for t, column, _ in every),
    )
    counts = [n.N_RANKED, n.N_JUDGED, *(c for c in checks.columns if c in set(checks.row_flags) | {n.BAD_RANK})]

    # the catalog check (a recommended item outside items=) reads the rows ranked within k
    catalog_flags, catalog_counts = _side.outside_catalog(spec) if _side.needs_catalog(spec) else ({}, [])
    for domain, condition, domain_terms, duplicates, catalog, tie_shares in _passes(
        spec, checks, by_domain, bool(catalog_counts)
    ):
        mine = [(t, column, k) for t in domain_terms for column, k in _term_columns(t, spec)]
        extra = [*(checks.duplicate_rows.values() if duplicates else []), *(catalog_counts if catalog else [])]
        if not mine and not extra:
            continue
        # the pass reads the domain's rows alone (no mask needed) unless the duplicate check reads more
        part = lf.filter(condition)
        part = with_position(_with_tie_shares(part, spec) if tie_shares and mine else part, spec)
        needs = _side.side_columns([t.name for t, _, _ in mine])
        if needs or catalog:
            assert side is not None  # the metrics' requires made sure of the inputs
            part = _side.join(part, spec, side, needs, lf)
            if catalog_flags:
                part = part.with_columns(e.alias(c) for c, e in catalog_flags.items())
        part = _with_features(part, [t for t, _, _ in mine], rows, lists, domain)
        # (a pass without the duplicate counts reads only rows of its terms' domains)
        part = part.with_columns(_masked(t, k, spec, rows, not duplicates).alias(column) for t, column, k in mine)
        sums = _frames.group_agg(part, lists, *_aggregates((column, t.agg) for t, column, _ in mine), *extra)
        table = table.join(sums, on=lists, how="left")
        # a list without such rows: each term's empty value, no duplicates, no item outside
        zeros = list(checks.duplicate_rows) if duplicates else []
        zeros += [n.OUTSIDE_CATALOG] if catalog else []
        table = table.with_columns(*_filled([*((column, t.empty) for t, column, _ in mine), *((c, 0) for c in zeros)]))
    if checks.duplicates is not None:
        counts += list(checks.duplicate_rows)
    if catalog_counts:
        counts.append(n.OUTSIDE_CATALOG)
    if spec.facts.list_runs:
        table = table.drop(n.LIST)
    # DuckDB sums integers to INT128 and counts as UInt in places, which SQLFrame cannot type
    table = table.with_columns(nw.col(*counts).cast(nw.Int64))
    table = _with_side_terms(table, spec, terms, rows, side)
    if users is not None:
        listed = (
            users.select(nw.col(str(spec.columns.user)).alias(n.USER), *spec.columns.attr_keys)
            .group_by(n.USER)
            .agg(nw.len().alias(n.USER_ROWS), *(nw.col(a).count().alias(n.attr_count(a)) for a in spec.columns.attr_keys))
        )
        table = table.join(listed, on=n.USER, how="left")
    return table


def metric_columns(spec: v.Spec, level: str | None = None) -> list[tuple[str, str, int | None]]:
    """(output column, metric name, k) in output order; only the metrics of `level` if given."""
    out: list[tuple[str, str, int | None]] = []
    for name in spec.selection.metrics:
        metric = REGISTRY[name]
        if level is not None and metric.level != level:
            continue
        if metric.variants:
            out += [(f"{name}_{value}", name, value) for value in metric.variants]
            continue
        if metric.bare:
            out.append((name, name, None))
        if metric.with_k and name not in spec.selection.no_cutoff:
            out += [(f"{name}@{k}", name, k) for k in spec.selection.ks]
    return out


@dataclass(frozen=True)
class Plan:
    """The per-user frame (internal key names, unsorted: by..., user, n_relevant, user-level
    metrics, then the list facts N_RANKED and N_JUDGED that the summary counts users by) and,
    when group-level metrics are asked for, their terms per group of ``by`` keys."""

    per_user: nw.LazyFrame
    groups: nw.LazyFrame | None = None
    #: the parts `groups` is finished from (group_finish), which add up across disjoint sets
    #: of users (summary(partitions=)); without the item-group terms
    group_parts: GroupParts | None = None
    #: with item_group=: per (summary group, item group), the counts of recframe.engine._item_groups
    item_groups: nw.LazyFrame | None = None
    #: the prepared rows of the users= users, with the user attributes and POSITION (a constant
    #: GROUP key without by): what recframe.per_item and recframe.agreement read (lazy: built
    #: only when read)
    rows: nw.LazyFrame | None = None


def attach_attrs(frame: nw.LazyFrame, spec: v.Spec, users: nw.LazyFrame | None) -> nw.LazyFrame:
    """Join the user attributes (segment, cohort) of users= onto each row by user."""
    if not spec.columns.attr_keys:
        return frame
    assert users is not None  # attribute keys come from users=
    attrs = users.select(nw.col(str(spec.columns.user)).alias(n.USER), *spec.columns.attr_keys)
    return frame.join(attrs, on=n.USER, how="left")


def _group_rows(lf: nw.LazyFrame, spec: v.Spec, users: nw.LazyFrame | None) -> nw.LazyFrame:
    """The prepared rows as the group-level terms read them: of the users= users only, with
    the user attributes, the position, and a constant GROUP key when there is no ``by``."""
    if users is not None:
        # users= fixes who is evaluated: the lists of users it does not hold are not counted
        lf = lf.join(users.select(nw.col(str(spec.columns.user)).alias(n.USER)).unique(), on=n.USER, how="semi")
    lf = with_position(attach_attrs(lf, spec, users), spec)
    return lf if spec.columns.by else lf.with_columns(nw.lit(0).alias(n.GROUP))


def item_table_names(ks: Sequence[int]) -> list[str]:
    """The columns of :func:`item_table` after its keys (the ``by`` keys and the item)."""
    return ["n_users", "n_relevant", *(f"{c}@{k}" for k in ks for c in ("recommended", "hits", "recall", "exposure"))]


def item_table(rows: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """Per (by keys, item), from the prepared rows (:attr:`Plan.rows`): ``n_users``, the lists
    that rank the item at all; ``n_relevant``, the users for whom it is relevant; and per k
    ``recommended@k`` (lists ranking it within k), ``hits@k`` (of them, the users for whom it
    is relevant), ``recall@k`` = hits@k / n_relevant (null where it is relevant to nobody) and
    ``exposure@k``, the sum of 1 / log2(1 + rank) over the lists ranking it within k. One
    group-by over the rows ranked or relevant: sums, no pair of user and item is formed."""
    rows = rows.filter((nw.col(n.POSITION) != NOT_RANKED) | (nw.col(n.RELEVANT) == 1))
    keys = [*(spec.columns.by or [n.GROUP]), n.ITEM]
    ranked = nw.col(n.POSITION) != NOT_RANKED
    per_k = []
    for k in spec.selection.ks:
        within = nw.col(n.POSITION) <= position_cut(k)
        per_k += [
            within.cast(nw.Int64).alias(f"__rf_in@{k}"),
            (within & (nw.col(n.RELEVANT) == 1)).cast(nw.Int64).alias(f"__rf_hit@{k}"),
            nw.when(within).then(1.0 / (nw.col(n.POSITION) + 1).cast(nw.Float64).log(2)).otherwise(0.0).alias(f"__rf_exp@{k}"),
        ]
    rows = rows.with_columns(
        ranked.cast(nw.Int64).alias("__rf_ranked"), nw.col(n.RELEVANT).cast(nw.Int64).alias("__rf_rel"), *per_k
    )
    sums = ["__rf_ranked", "__rf_rel", *(f"{c}{k}" for k in spec.selection.ks for c in ("__rf_in@", "__rf_hit@", "__rf_exp@"))]
    table = _frames.group_agg(rows, keys, *(nw.col(c).sum() for c in sums))
    relevant = nw.col("__rf_rel")
    out = table.select(
        *keys,
        nw.col("__rf_ranked").cast(nw.Int64).alias("n_users"),
        relevant.cast(nw.Int64).alias("n_relevant"),
        *(
            expr
            for k in spec.selection.ks
            for expr in (
                nw.col(f"__rf_in@{k}").cast(nw.Int64).alias(f"recommended@{k}"),
                nw.col(f"__rf_hit@{k}").cast(nw.Int64).alias(f"hits@{k}"),
                nw.when(relevant > 0)
                .then(nw.col(f"__rf_hit@{k}") / relevant)
                .otherwise(None)
                .cast(nw.Float64)
                .alias(f"recall@{k}"),
                nw.col(f"__rf_exp@{k}").cast(nw.Float64).alias(f"exposure@{k}"),
            )
        ),
    )
    return out if spec.columns.by else out.drop(n.GROUP)


def tie_table(rows: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """Per ``by`` group, from the prepared rows (:attr:`Plan.rows`) of a call with ``score=``:
    ``n_lists``, the lists with a ranked item, and per k ``n_tied@k``, those whose items at
    positions k and k + 1 have equal scores, so that the cut-off at k splits a group of ties
    and the tie-break decides what is in the top k. Sums over the rows ranked <= max k + 1; no
    window."""
    keys = list(spec.columns.by) or [n.GROUP]
    ks = spec.selection.ks
    ranked = rows.filter((nw.col(n.POSITION) != NOT_RANKED) & (nw.col(n.POSITION) <= position_cut(max(ks)) + 1))
    score = nw.col(n.SCORE)
    at = {k: nw.when(nw.col(n.POSITION) == k).then(score).otherwise(None) for k in sorted({*ks, *(k + 1 for k in ks)})}
    lists = _frames.group_agg(ranked, [*keys, n.USER], *(expr.max().alias(f"__rf_score_at{k}") for k, expr in at.items()))
    tied = {k: (nw.col(f"__rf_score_at{k}") == nw.col(f"__rf_score_at{k + 1}")).fill_null(False) for k in ks}
    lists = lists.with_columns(t.cast(nw.Int64).alias(f"n_tied@{k}") for k, t in tied.items())
    out = _frames.group_agg(lists, keys, nw.len().alias("n_lists"), *(nw.col(f"n_tied@{k}").sum() for k in ks))
    out = out.with_columns(nw.col("n_lists", *(f"n_tied@{k}" for k in ks)).cast(nw.Int64))
    return out if spec.columns.by else out.drop(n.GROUP)


def _item_group_rows(
    lf: nw.LazyFrame,
    spec: v.Spec,
    users: nw.LazyFrame | None,
    side: _side.SideInputs | None,
    engine: _frames.Engine,
    large: bool = False,
) -> nw.LazyFrame | None:
    """With item_group=: the rows ranked within the largest k or relevant (of the users= users,
    with the summary group keys) joined once with their items' groups
    (recframe.engine._item_groups.joined), which the calibration and the counts both read: a SQL
    engine computes them once (materialized), Polars shares them (a cache node)."""
    if spec.selection.item_group is None:
        return None
    assert side is not None  # item_group= needs items= or train=
    used = lf.filter(_in_domain("top_k", spec) | _in_domain("relevant", spec))
    grouped = _item_groups.joined(_group_rows(used, spec, users), spec, side)
    return engine.materialize(grouped, large)


def with_comparing(groups: nw.LazyFrame | None, counts: nw.LazyFrame | None, spec: v.Spec) -> nw.LazyFrame | None:
    """The group-level terms `groups` with those of the metrics comparing item groups, finished
    from the per-(summary group, item group) `counts` (recframe.engine._item_groups.counts), when asked."""
    if counts is None or not _item_groups.comparing_metrics(spec.selection.metrics):
        return groups
    comparing = _item_groups.summaries(counts, spec)
    return comparing if groups is None else groups.join(comparing, on=list(spec.columns.by) or [n.GROUP], how="left")


class GroupParts(NamedTuple):
    """The group-level terms of some users, before their finish (:func:`group_finish`), in
    parts that add up across disjoint sets of users (``summary(partitions=)``):

    - ``groups``: the group keys (every group, with or without rows in a domain);
    - ``sums``: per group (every one), each additive term's aggregate: a sum, or the count
      of distinct users (``Term.of_users``), null where the group has no row of its domain;
    - ``distinct``: per other ``n_unique`` term column, its distinct values per group (their
      union across sets; null counts nothing);
    - ``per_item``: per domain with two-step terms, each item's count ``c`` per group (summed
      across sets; ``per_item(c)`` is summed per group in the finish).
    """

    groups: nw.LazyFrame
    sums: nw.LazyFrame | None
    distinct: dict[str, nw.LazyFrame]
    per_item: dict[str, nw.LazyFrame]


def group_terms(spec: v.Spec) -> list[tuple[Term, str, int | None]]:
    """(term, column, k) of the group-level terms of the call's metrics, but those of
    recframe.engine._item_groups' own table (see evaluate)."""
    names = sorted(
        {t for m in spec.selection.metrics if REGISTRY[m].level == "group" for t in REGISTRY[m].terms(spec.conventions)}
    )
    terms = [TERMS[t] for t in names if TERMS[t].level == "group" and TERMS[t].domain != "item_group"]
    return [(t, column, k) for t in terms for column, k in _term_columns(t, spec)]


def group_parts(
    lf: nw.LazyFrame, spec: v.Spec, users: nw.LazyFrame | None = None, side: _side.SideInputs | None = None
) -> GroupParts | None:
    """The group-level terms' parts (:class:`GroupParts`) from the prepared rows, each term
    aggregated over the group's rows of its domain; None when no group-level metric is asked."""
    mine_all = group_terms(spec)
    if not mine_all:
        return None
    keys = list(spec.columns.by) or [n.GROUP]
    rows = rows_of(spec)
    lf = _group_rows(lf, spec, users)
    lists = [*spec.columns.list_keys, n.USER]
    groups = lf.select(keys).unique()
    sums: nw.LazyFrame | None = None
    distinct: dict[str, nw.LazyFrame] = {}
    per_item: dict[str, nw.LazyFrame] = {}
    for domain in ("all", *_PASSES):
        mine = [(t, column, k) for t, column, k in mine_all if domain_of(t, spec.conventions) == domain]
        if not mine:
            continue
        part = lf if domain == "all" else lf.filter(_in_domain(domain, spec))
        needs = _side.side_columns([t.name for t, _, _ in mine])
        if needs:
            assert side is not None  # the metrics' requires made sure of the inputs
            part = _side.join(part, spec, side, needs, lf)
        # features as in list_table: windows over each list's rows of the domain (never "all")
        part = part if domain == "all" else _with_features(part, [t for t, _, _ in mine], rows, lists, domain)
        part = part.with_columns(t.value(rows, k).alias(column) for t, column, k in mine)
        additive = [(t, column) for t, column, _ in mine if t.per_item is None and (t.agg != "n_unique" or t.of_users)]
        # n_unique counts null as a value: a null value (outside a cut-off) is not counted
        nulls = [(column, f"{column}:null") for t, column in additive if t.agg == "n_unique"]
        if additive:
            part = part.with_columns(nw.col(c).is_null().cast(nw.Int64).alias(flag) for c, flag in nulls)
            agg = _frames.group_agg(
                part, keys, *_aggregates((column, t.agg) for t, column in additive), *(nw.col(flag).max() for _, flag in nulls)
            )
            agg = agg.with_columns((nw.col(c) - nw.col(flag).fill_null(0)).alias(c) for c, flag in nulls).drop(
                [flag for _, flag in nulls]
            )
            sums = (groups if sums is None else sums).join(agg, on=keys, how="left")
        for t, column, _ in mine:
            if t.agg == "n_unique" and not t.of_users:
                distinct[column] = part.select(*keys, column).unique()
        two_step = [column for t, column, _ in mine if t.per_item is not None]
        if two_step:
            per_item[domain] = _frames.group_agg(part, [*keys, n.ITEM], *(nw.col(c).sum().cast(nw.Float64) for c in two_step))
    return GroupParts(groups=groups, sums=sums, distinct=distinct, per_item=per_item)


def group_finish(parts: GroupParts, spec: v.Spec, side: _side.SideInputs | None = None) -> nw.LazyFrame:
    """The group-level terms, one row per group of ``by`` keys (GROUP without keys), from
    their parts (:func:`group_parts`): the additive aggregates, the distinct values counted,
    each item's count ``c`` through ``per_item(c)`` summed: two steps, per item then per
    group (a term without rows in a group gets its empty)."""
    mine = group_terms(spec)
    two_step_of = {column: t.per_item for t, column, _ in mine if t.per_item is not None}
    keys = list(spec.columns.by) or [n.GROUP]
    out = parts.groups if parts.sums is None else parts.sums
    for column, values in parts.distinct.items():
        out = out.join(_frames.group_agg(values, keys, nw.col(column).count()), on=keys, how="left")
    for counts in parts.per_item.values():
        two_step = [c for c in counts.columns if c in two_step_of]
        summed = counts.with_columns(two_step_of[c](nw.col(c), keys).alias(c) for c in two_step)
        out = out.join(_frames.group_agg(summed, keys, *(nw.col(c).sum() for c in two_step)), on=keys, how="left")
    aggregated = [(t, column) for t, column, _ in mine if t.domain != "side"]  # (side terms: joined below)
    out = out.with_columns(nw.col(column).cast(nw.Float64).fill_null(t.empty) for t, column in aggregated)
    return _with_side_terms(out, spec, [t for t, _, _ in mine], rows_of(spec), side)


def evaluate(
    frame: nw.LazyFrame,
    truth: nw.LazyFrame | None,
    spec: v.Spec,
    engine: _frames.Engine,
    users: nw.LazyFrame | None = None,
    exclude: nw.LazyFrame | None = None,
    side: _side.SideInputs | None = None,
    prepared: nw.LazyFrame | None = None,
    models: nw.LazyFrame | None = None,
) -> Plan:
    """The plan of one call (see :class:`Plan`).

    The data checks of :func:`_checks.plan` read the per-list table the metrics are finished
    from (:func:`_checks.attach`): on a SQL engine they run now, on Polars when the plan runs
    (`engine`'s ``checks_now``). Lists of users with nothing recommended that every metric skips
    (``unranked_users="skip"``) are still in ``per_user``: :func:`per_user_rows` drops them.
    """
    keys = [*spec.columns.list_keys, n.USER]
    checks = _checks.plan(spec)
    # (`prepared`: the rows of prepare(...) computed once for several calls, recframe.engine._call.shared_preparation)
    lf = flag_rows(prepare(frame, truth, spec, users, exclude, models) if prepared is None else prepared, spec)
    # every pass below reads the prepared rows. When preparing them joins, ranks or checks
    # float ranks they are computed once: a SQL engine materializes them (DuckDB, 2M rows:
    # truth= + score= 1.7 s -> 0.9 s), Polars caches the subplan (its own search for common
    # subplans misses it when the readers project different columns: a tie table collected
    # with the summary ranked 11M rows again, 2.8 s -> 1.9 s). Otherwise (a rename and casts)
    # each pass reads the input itself, which Polars' streaming engine then streams instead
    # of holding it whole
    float_ranks = spec.columns.rank is not None and not spec.facts.integer_rank
    once = truth is not None or exclude is not None or spec.columns.score is not None or spec.reranks or float_ranks
    # on DuckDB, what is computed once (these rows, the checked per-list table, the item-group
    # rows) goes to a temporary table it can spill where it could strain its memory_limit
    computed_once = once or spec.selection.checks or spec.selection.item_group is not None
    large = computed_once and engine.large([frame, truth], len(lf.collect_schema()))
    if once:
        lf = engine.hold(lf, large)
    table = _checks.attach(
        list_table(lf, spec, checks, users, side), spec, checks, engine, shared_input=once, large=large, source=frame
    )
    if spec.facts.with_users:
        # users= fixes who is evaluated (recommended users it lacks were refused or dropped)
        table = table.filter(~nw.col(n.USER_ROWS).is_null())
    grouped = _item_group_rows(lf, spec, users, side, engine, large)
    if _item_groups.calibration_metrics(spec.selection.metrics):
        assert side is not None and grouped is not None  # calibration needs item_group=, items= (or train=) and train=
        table = table.join(_item_groups.calibration(grouped, spec, side), on=keys, how="left")
    columns = metric_columns(spec, "user")
    out = table.with_columns(**user_flags(spec)).select(
        *keys,
        nw.col(term("n_relevant")).cast(nw.Int64).alias("n_relevant"),
        *(user_value(spec, name, k).alias(column) for column, name, k in columns),
        nw.col(n.N_RANKED),
        nw.col(n.N_JUDGED),
    )
    out = out.with_columns(nw.col(*(c for c, _, _ in columns)).cast(nw.Float64)) if columns else out
    out = attach_attrs(out, spec, users)
    if spec.columns.attr_keys:
        out = out.select(*spec.columns.by, *(c for c in out.columns if c not in spec.columns.by))
    parts = group_parts(lf, spec, users, side)
    groups = None if parts is None else group_finish(parts, spec, side)
    # with item_group= (`grouped`, which side comes with): the per-(summary group, item group) counts
    counts = None if grouped is None or side is None else _item_groups.counts(grouped, spec, side)
    groups = with_comparing(groups, counts, spec)
    return Plan(per_user=out, groups=groups, group_parts=parts, item_groups=counts, rows=_group_rows(lf, spec, users))


# ---- the user policies (empty_users, unranked_users, unjudged_users), applied here alone:
# user_value shapes each value where it is undefined, per_user_rows and the summary (recframe.statistics._summary) count the
# lists by _counted_base and counted_value


def user_flags(spec: v.Spec) -> dict[str, nw.Expr]:
    """The per-list flags :func:`user_value` reads, as columns: computed once, not in each
    metric's expression (narwhals builds every node of each in Python)."""
    flags = {n.HAS_RELEVANT: nw.col(term("n_relevant")) > 0, n.HAS_RANKED: nw.col(n.N_RANKED) > 0}
    if spec.conventions.gain_threshold == "positive" and any(REGISTRY[m].defined == "graded" for m in spec.selection.metrics):
        flags[n.HAS_GRADED] = nw.col(term("n_graded")) > 0
    return flags


def user_value(spec: v.Spec, name: str, k: int | None) -> nw.Expr:
    """Metric `name` at `k` finished by the registry, where the user has no relevant item 0
    (``empty_users="zero"``) or null, unless its formula holds for every user; null for a user
    with nothing recommended where only some metrics skip such users (a profile's per-metric
    ``unranked_users="skip"``, as trec_eval: a user with nothing recommended is not evaluated).
    It reads the columns of :func:`user_flags` (the caller adds them) and is left uncast: the
    caller casts to Float64, one expression for every column."""
    metric = REGISTRY[name]
    value = metric.finish(k, spec.conventions)
    # defined where the user has a relevant item (or, "graded", an item that gains)
    has = nw.col(n.HAS_RELEVANT)
    if metric.defined == "graded" and spec.conventions.gain_threshold == "positive":
        has = nw.col(n.HAS_GRADED)
    if metric.defined in ("always", "ranked"):
        pass  # its formula holds for every user (for "ranked", nulled below where unranked)
    elif spec.conventions.empty_users == "zero":
        value = nw.when(has).then(value).otherwise(0.0)
    else:
        value = nw.when(has).then(value).otherwise(None)
    skip_all = set(spec.selection.unranked_skip) >= set(spec.selection.metrics)  # then the list is left out whole
    if name in spec.selection.unranked_skip and not skip_all:
        value = nw.when(nw.col(n.HAS_RANKED)).then(value).otherwise(None)
    return value


def per_user_rows(plan: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """The public per-user frame: lists every metric skips left out, list facts dropped, and
    each metric null where the summary (:func:`recframe.statistics._summary.counted_lists`) does not count the list, so that a plain mean
    of a column equals the summary's mean (a user without relevant items under
    ``empty_users="skip"`` has a precision of 0 by its formula, but no row of the means)."""
    if set(spec.selection.unranked_skip) >= set(spec.selection.metrics):
        plan = plan.filter(nw.col(n.N_RANKED) > 0)
    if spec.conventions.unjudged_users == "skip":
        plan = plan.filter(nw.col(n.N_JUDGED) > 0)
    flags = counted_flags(spec)
    plan = plan.with_columns(**flags).with_columns(
        counted_value(spec, column, name) for column, name, _ in metric_columns(spec, "user")
    )
    return plan.drop(n.N_RANKED, n.N_JUDGED, *flags)


def _counted_base(spec: v.Spec) -> nw.Expr:
    """Whether a list counts for the metrics by its relevant and judged items (empty_users,
    unjudged_users)."""
    base = nw.col("n_relevant") > 0 if spec.conventions.empty_users == "skip" else nw.lit(True)
    return base & (nw.col(n.N_JUDGED) > 0) if spec.conventions.unjudged_users == "skip" else base


def counted_flags(spec: v.Spec) -> dict[str, nw.Expr]:
    """The per-list flags :func:`counted_value` reads, as columns (see
    :func:`user_flags`): the list counts for the metrics, and for those that skip unranked lists."""
    base = _counted_base(spec)
    return {n.COUNTS: base, **({n.COUNTS_RANKED: base & (nw.col(n.N_RANKED) > 0)} if spec.selection.unranked_skip else {})}


def counted_value(spec: v.Spec, column: str, name: str) -> nw.Expr:
    """The metric column where the list counts for metric `name`, else null (see recframe.statistics._summary.counted_lists),
    read from the columns of :func:`counted_flags` (the caller adds them)."""
    counts = nw.col(n.COUNTS_RANKED if name in spec.selection.unranked_skip else n.COUNTS)
    return nw.when(counts).then(nw.col(column)).otherwise(None).alias(column)


#: The floor trec_eval puts under a value before its log in a geometric mean (gm_map, gm_bpref):
#: a user scoring 0 pulls the mean down without making it 0.
GMEAN_FLOOR = 1e-5
