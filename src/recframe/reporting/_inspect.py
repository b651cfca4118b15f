"""Visual inspection of a few users' lists: :func:`inspect` picks the users and gives their
lists as one long frame; :func:`recframe.side_by_side` (:mod:`recframe.reporting._page.inspect_html`,
beside the page's HTML) shows that frame as HTML, a column per list.

The recommended rows come from the engine's own preparation (:func:`recframe.engine._engine.prepare`
and :func:`recframe.engine._engine.flag_rows`: ``exclude=``, the ranking by ``score=``, the join of
``truth=``), so the positions and hits shown are those :func:`recframe.per_user` counts. The
users are chosen before the plan: the inputs are filtered by ``is_in`` on the user column, which
a Polars scan, DuckDB or Spark push down to the reading of the data.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, TypeVar

import narwhals as nw
import numpy as np
import polars as pl

from recframe import _docs
from recframe import _names as n
from recframe.engine import _call, _engine, _frames, _relevance
from recframe.engine import _validate as v
from recframe.errors import RecframeError, fix, ref
from recframe.metrics import REGISTRY, default_metrics
from recframe.metrics._registry import position_cut
from recframe.options import PER_USER_NAMES, Options, Unpack, parameters

FrameT = TypeVar("FrameT")

#: the ways of choosing users (``select=``)
SELECTS = ("given", "random", "worst", "best", "disagree", "overlap")
#: the values of the ``source`` column, in the order the lists of a user are shown
SOURCES = ("history", "recommended", "held_out")
#: the columns inspect adds, between the user and the item columns
OWN_COLUMNS = ("source", "rank", "relevant", "relevance")

_GRADE = "__rf_grade"
_SOURCE, _RELEVANT, _ORDER, _SOURCE_ORDER = "__rf_source", "__rf_relevant_out", "__rf_order", "__rf_source_order"
VALUE, _COUNT, _TIE = "__rf_value", "__rf_count", "__rf_tie"
#: the column of inspect's result counting the users who share a chosen user's value ("worst",
#: "best", "disagree"); the metric's columns are named after it (``ndcg@10``, ``ndcg@10_mean``)
TIED = "tied_users"
#: the suffix of the column of the value users were chosen by, per ``select``
CHOSEN_SUFFIX = {"worst": "_mean", "best": "_mean", "disagree": "_gap"}
_LIST_VALUE, _USER_VALUE = "__rf_list_value", "__rf_user_value"
# past this many users the result is sorted by user id, not by the order they were chosen in
# (the order is a sum of is_in tests over lists of users: their length grows with the users)
_ORDERED_USERS = 1000
_DIGITS = 12  # metric values are compared at this precision when users are chosen (engines differ past it)


# ---------------------------------------------------------------------------- arguments


def _one_k(k: Any) -> int:
    values = list(k) if isinstance(k, (list, tuple)) else [k]
    if len(values) != 1 or (v.whole(values[0]) or 0) < 1:
        raise RecframeError(
            f"{ref('k', k)} must be one whole number >= 1: the length of the recommended lists shown.",
            f"pass e.g. {fix('k', 10)}.",
        )
    return int(values[0])


def _check_selection(select: Any, n_users: Any, seed: Any, show_images: Any) -> None:
    if select not in SELECTS:
        close = difflib.get_close_matches(str(select), SELECTS, n=1)
        raise RecframeError(
            f"{ref('select', select)} is not a way of choosing users.",
            f"pass one of {', '.join(repr(s) for s in SELECTS)}" + (f", e.g. {fix('select', close[0])}." if close else "."),
        )
    if (v.whole(n_users) or 0) < 1:
        raise RecframeError(
            f"{ref('n', n_users)} must be a whole number >= 1: the users chosen (per segment).", f"e.g. {fix('n', 5)}."
        )
    if v.whole(seed) is None or seed < 0:
        raise RecframeError(f"{ref('seed', seed)} must be a whole number >= 0.", f"e.g. {fix('seed', 0)}.")
    if show_images is not None and not isinstance(show_images, str):
        raise RecframeError(
            f"{ref('show_images', show_images)} names the column of {ref('items')} that holds image URLs.",
            f"pass its name, e.g. {fix('show_images', 'poster_url')}, or leave it out.",
        )


def _is_frame(value: Any) -> bool:
    """A frame (of any supported kind), as opposed to a plain collection of ids."""
    if isinstance(value, (str, bytes, dict, list, tuple, set, frozenset, range, np.ndarray, pl.Series)):
        return False
    # on the type: reading .columns of a Polars LazyFrame resolves its schema (a PerformanceWarning)
    return hasattr(type(value), "columns") or type(value).__module__.split(".")[0] in (
        "duckdb",
        "pyspark",
        "sqlframe",
        "ibis",
        "pyarrow",
    )


def _id_list(users: Any) -> list[Any]:
    """users= given as ids: a list (tuple, set, array, Series) of ids, nulls refused."""
    if isinstance(users, (str, bytes, dict)) or not hasattr(users, "__iter__"):
        raise RecframeError(
            f"{ref('users', users)} is neither a frame of users nor a list of user ids.",
            f"pass e.g. {fix('users', [1, 2, 3])}, or a frame with the user column.",
        )
    ids = users.to_list() if isinstance(users, pl.Series) else list(users)
    if not ids:
        raise RecframeError(f"{ref('users', [])} lists no user.", f"pass some ids, e.g. {fix('users', [1, 2, 3])}.")
    if any(i is None for i in ids):
        raise RecframeError(f"{ref('users')} holds a null id.", "drop it from the list.")
    return list(dict.fromkeys(i.item() if isinstance(i, np.generic) else i for i in ids))


def _check_id_types(ids: list[Any], dtype: Any, user: str) -> None:
    """Ids of the type of the user column: a number for a numeric column, a string for a string one."""
    example: list[Any]
    if dtype.is_integer():
        # a float id is refused, integral or not: 67.0 is how a pandas column with a null gives
        # the id 67, and 1.5 is no id at all; an id past the column's range names no user either
        bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, int)]
        if not bad:
            name = str(dtype)
            bits = int(name.removeprefix("U").removeprefix("Int"))
            low, high = (0, 2**bits - 1) if name.startswith("U") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
            outside = [i for i in ids if not low <= i <= high]
            if outside:
                raise RecframeError(
                    f"{ref('users')} holds {outside[0]!r}, outside the range of the user column {user!r} "
                    f"({dtype}: {low} to {high}), so no user has it.",
                    f"pass ids of that column, e.g. {fix('users', [1, 2, 3])}.",
                )
        whole = bool(bad) and isinstance(bad[0], float) and bad[0].is_integer() and abs(bad[0]) < 2**63
        example = [int(bad[0])] if whole or (bad and str(bad[0]).isdigit()) else [1, 2, 3]
    elif dtype.is_numeric():
        bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, (int, float))]
        example = [int(bad[0])] if bad and str(bad[0]).isdigit() else [1, 2, 3]
    elif dtype == nw.String:
        bad = [i for i in ids if not isinstance(i, str)]
        example = [str(bad[0])] if bad else []
    else:
        return
    if bad:
        raise RecframeError(
            f"{ref('users')} holds {bad[0]!r} ({type(bad[0]).__name__}), but the user column {user!r} holds {dtype} values.",
            f"pass ids of that type, e.g. {fix('users', example)}.",
        )


# ---------------------------------------------------------------------------- choosing users


def _restrict(frame: Any, user: str, ids: list[Any], arg: str) -> Any:
    """`frame` with only the rows of users `ids`, as a lazy frame of its own engine (native):
    the filter is a plain ``is_in`` on the input, which a scan or a SQL engine pushes down."""
    if frame is None:
        return None
    lf, _ = _frames.lazy(frame, arg)
    if user not in _frames.schema_of(lf, ref(arg)):
        return frame  # its own check (a missing user column) is made where the call is built
    return lf.filter(nw.col(user).is_in(ids)).to_native()


def _parse_metric(metric: Any, k: int) -> tuple[str, int, str]:
    """(metric name, its cut-off, the per_user column) of ``metric=`` ("ndcg@10", "ndcg", "r_precision")."""
    if not isinstance(metric, str):
        raise RecframeError(f"{ref('metric', metric)} must be a metric column name.", f"e.g. {fix('metric', f'ndcg@{k}')}.")
    name, _, cut = metric.partition("@")
    if name not in REGISTRY:
        base = name.rsplit("_", 1)[0]
        if base in REGISTRY and REGISTRY[base].variants and not cut:
            return base, k, metric
        close = difflib.get_close_matches(name, list(REGISTRY), n=1)
        raise RecframeError(
            f"{ref('metric', metric)}: {name!r} is not a metric recframe computes.",
            f"pass e.g. {fix('metric', (close[0] if close else 'ndcg') + f'@{cut or k}')}.",
        )
    if cut:
        if not cut.isdigit() or int(cut) < 1:
            raise RecframeError(f"{ref('metric', metric)}: {cut!r} is not a cut-off.", f"e.g. {fix('metric', f'{name}@{k}')}.")
        return name, int(cut), metric
    m = REGISTRY[name]
    return name, k, (f"{name}@{k}" if m.with_k and not m.bare else name)


def _default_metric(options: dict[str, Any], k: int) -> str:
    """The first metric of the call's default list (its profile's), at k: nDCG when the list has it."""
    metrics = _call.resolve(k, None, options, PER_USER_NAMES, "inspect")["metrics"]
    names = [m for m in (metrics or default_metrics()) if REGISTRY[m].level == "user"]
    name = "ndcg" if "ndcg" in names else names[0]
    return _parse_metric(name, k)[2]


def _to_polars(frame: nw.LazyFrame) -> pl.DataFrame:
    return frame.collect().to_polars()


def _values(frame: Any, options: dict[str, Any], metric: str, k: int, select: str) -> tuple[pl.DataFrame, list[str]]:
    """One per_user pass: per user (and user attribute), the value users are chosen by (the mean
    of the metric over the user's lists, or for "disagree" the largest gap between two models);
    returns it with the attribute keys."""
    name, cut, column = _parse_metric(metric, k)
    kwargs = _call.resolve([cut], [name], options, PER_USER_NAMES, "inspect")
    if REGISTRY[name].level != "user":
        raise RecframeError(
            f"{ref('metric', metric)} has one value per model, not per user, so it cannot choose users.",
            f"pass a per-user metric, e.g. {fix('metric', f'ndcg@{k}')}.",
        )
    plan, spec, _ = _call.prepare(frame, kwargs)
    rows = _engine.per_user_rows(plan.per_user, spec)
    produced = [c for c, _, _ in _engine.metric_columns(spec, "user")]
    if column not in produced:
        raise RecframeError(
            f"{ref('metric', metric)} is not a column that per_user computes for this call (it gives {', '.join(produced)}).",
            f"pass one of them, e.g. {fix('metric', produced[0])}.",
        )
    attrs = list(spec.columns.attr_keys)
    if select == "disagree" and not spec.columns.model_keys:
        raise RecframeError(
            f"{fix('select', 'disagree')} compares the models, and {ref('by', list(spec.columns.by) or None)} has no model key "
            "(a column of the recommendations only).",
            f"pass the model column, e.g. {fix('by', 'model')}.",
        )
    return _to_polars(user_values(rows, column, select, list(spec.columns.truth_keys), attrs)), attrs


def user_values(rows: nw.LazyFrame, column: str, select: str, truth_keys: list[str], attrs: list[str]) -> nw.LazyFrame:
    """Per user (and user attribute) of a per-user frame (the user as USER), VALUE: the mean of
    `column` over the user's lists ("worst", "best"), or for "disagree" the largest gap between
    two models' values within a list of the truth keys (a fold)."""
    value = nw.col(column)
    if select != "disagree":
        return _frames.group_agg(rows, [*attrs, n.USER], value.mean().cast(nw.Float64).alias(VALUE))
    per_list = _frames.group_agg(
        rows,
        [*truth_keys, *attrs, n.USER],
        value.max().alias("__rf_hi"),
        value.min().alias("__rf_lo"),
        value.count().alias(_COUNT),
    )
    # the gap where two models or more have a value: a user every model skips is no disagreement
    per_list = per_list.with_columns(
        nw.when(nw.col(_COUNT) >= 2).then(nw.col("__rf_hi") - nw.col("__rf_lo")).otherwise(None).alias(VALUE)
    )
    return _frames.group_agg(per_list, [*attrs, n.USER], nw.col(VALUE).max())


def _overlaps(frame: Any, options: dict[str, Any], k: int) -> tuple[pl.DataFrame, list[str]]:
    """Per user (and user attribute): how much the models' top k overlap, the least over the
    user's truth-key lists (folds). For one list, with m models and c_i the number of models
    whose top k holds item i: the mean over the m (m - 1) / 2 pairs of models of |A & B| / k,
    which is sum over i of c_i (c_i - 1) / 2 over (m (m - 1) / 2) k: counts per item, no pair of
    models is joined. Null where fewer than two models recommended the user anything."""
    kwargs = _call.resolve([k], ["hit_rate"], options, PER_USER_NAMES, "inspect")
    run = _call.inputs(frame, kwargs)
    spec = run.spec
    if not spec.columns.model_keys:
        raise RecframeError(
            f"{fix('select', 'overlap')} compares the models' lists, and {ref('by', list(spec.columns.by) or None)} has no "
            "model key (a column of the recommendations only).",
            f"pass the model column, e.g. {fix('by', 'model')}.",
        )
    lists = [*spec.columns.truth_keys, n.USER]
    models = list(spec.columns.model_keys)
    prepared = _engine.flag_rows(_engine.prepare(run.lf, run.truth, spec, run.users, run.exclude), spec)
    top = prepared.filter((nw.col(n.RANK) <= position_cut(k)).fill_null(False))
    # one row per (list, model, item): an item repeated in a list counts once
    held = _frames.group_agg(top, [*lists, *models, n.ITEM], nw.len().alias(_COUNT)).select(*lists, *models, n.ITEM)
    per_item = _frames.group_agg(held, [*lists, n.ITEM], nw.len().cast(nw.Float64).alias(_COUNT))
    per_item = per_item.with_columns((nw.col(_COUNT) * (nw.col(_COUNT) - 1) / 2).alias(VALUE))
    shared = _frames.group_agg(per_item, lists, nw.col(VALUE).sum())
    served = _frames.group_agg(held.select(*lists, *models).unique(), lists, nw.len().cast(nw.Float64).alias(_COUNT))
    per_list = served.join(shared, on=lists, how="left").with_columns(
        nw.when(nw.col(_COUNT) >= 2)
        .then(nw.col(VALUE).fill_null(0.0) / (nw.col(_COUNT) * (nw.col(_COUNT) - 1) / 2 * k))
        .otherwise(None)
        .alias(VALUE)
    )
    attrs = list(spec.columns.attr_keys)
    per_list = _engine.attach_attrs(per_list, spec, run.users)
    return _to_polars(_frames.group_agg(per_list, [*attrs, n.USER], nw.col(VALUE).min())), attrs


def _check_rows(run: _call.Inputs) -> None:
    """The call's data checks on the chosen users' rows (duplicates, bad ranks, items outside
    items=): a defect in a list shown is refused, as per_user would refuse it."""
    run.engine.run_checks(_call.evaluated(run).per_user)  # (a SQL engine ran them while the plan was built)


def choose(table: pl.DataFrame, groups: list[str], n_users: int, seed: int, by_value: str | None) -> list[Any]:
    """The ids of `n_users` users per group of `groups`: by the value (ascending for "worst",
    descending for "best" and "disagree"), ties and "random" in a seeded random order.

    The candidates are first sorted by group and user id, then given a permutation from
    ``numpy.random.default_rng(seed)``: the same users and values give the same choice on every
    engine (the values are compared rounded to 12 digits, where engines agree)."""
    if not table.height:
        return []
    n_users = min(n_users, table.height)  # more than there are users: all of them (and a size Polars takes)
    table = table.sort([*groups, n.USER], nulls_last=True)
    table = table.with_columns(pl.Series(_TIE, np.random.default_rng(seed).permutation(table.height)))
    keys, descending = [*groups], [False] * len(groups)
    if by_value is not None:
        table = table.with_columns(pl.col(VALUE).round(_DIGITS))
        keys.append(VALUE)
        descending.append(by_value not in ("worst", "overlap"))  # the lowest value first for these two
    table = table.sort([*keys, _TIE], descending=[*descending, False], nulls_last=True)
    chosen = table.group_by(groups, maintain_order=True).head(n_users) if groups else table.head(n_users)
    return chosen[n.USER].to_list()


# ---------------------------------------------------------------------------- ties, in words


def tied_counts(table: pl.DataFrame, groups: list[str]) -> pl.DataFrame:
    """`table` (USER, `groups`, VALUE: one row per candidate user) with TIED: per user, the
    users of its group whose VALUE equals its own at the precision users are chosen at (12
    digits), itself included."""
    return table.with_columns(pl.len().over([*groups, pl.col(VALUE).round(_DIGITS)]).alias(TIED))


def tie_sentence(tied: int, shown: int, value: float, what: str, seed: int | None, where: str = "") -> str | None:
    """ "201 users tie at ndcg@10 = 0; 3 of them shown, chosen with seed 0." where more users
    share the value than were shown (else None); `where` heads it ("segment cold: ")."""
    if tied <= shown:
        return None
    how = f"chosen with seed {seed}" if seed is not None else "chosen in a seeded random order"
    return f"{where}{tied:,} users tie at {what} = {value:.6g}; {shown} of them shown, {how}."


def tie(values: pl.DataFrame, ids: list[Any], what: str, seed: int, where: str = "") -> str | None:
    """The tie of the users `ids` chosen by value from the candidates `values` (USER, VALUE; one
    group), in words (:func:`tie_sentence`): the users sharing the last chosen user's value,
    of whom some were shown (the tie is broken in a seeded random order); else None."""
    if not ids:
        return None
    rounded = values.with_columns(pl.col(VALUE).round(_DIGITS))
    last = rounded.filter(pl.col(n.USER) == ids[-1])[VALUE][0]
    tied = rounded.filter(pl.col(VALUE) == last)
    return tie_sentence(tied.height, tied.filter(pl.col(n.USER).is_in(ids)).height, last, what, seed, where)


def where(attrs: list[str], group: Any) -> str:
    """ "segment warm: ", heading a tie among the users of one group of the user attributes
    `attrs` (nothing without attributes)."""
    values = group if isinstance(group, tuple) else (group,)
    return ", ".join(f"{a} {v}" for a, v in zip(attrs, values)) + ": " if attrs else ""


def chosen_columns(columns: list[str], at: int) -> tuple[str, str] | None:
    """(the metric, the column of the value users were chosen by) when inspect's result
    `columns` hold them after the column at `at` (``relevance``): ``ndcg@10``,
    ``ndcg@10_mean`` (or ``_gap``), ``tied_users``; else None."""
    found = columns[at + 1 : at + 4]
    if len(found) == 3 and found[2] == TIED and found[1] in {found[0] + s for s in CHOSEN_SUFFIX.values()}:
        return found[0], found[1]
    return None


def what_of(metric: str, chosen: str) -> str:
    """What a chosen value is, in words: "ndcg@10" (a mean), "the gap in ndcg@10"."""
    return f"the gap in {metric}" if chosen.endswith(CHOSEN_SUFFIX["disagree"]) else metric


def frame_ties(
    table: pl.DataFrame, user: str, keys: list[str], seed: int | None = None, users: list[Any] | None = None
) -> list[str]:
    """The ties of a frame of :func:`inspect` chosen by a metric, in words (:func:`tie_sentence`),
    one per value where more users share it (``tied_users``) than the frame shows (of `users`
    when given: those a view shows); per segment, the keys constant on every row of each user
    (the user attributes), when there are several."""
    at = table.columns.index("relevance") if "relevance" in table.columns else -1
    named = chosen_columns(table.columns, at) if at >= 0 else None
    if named is None or not table.height:
        return []
    metric, chosen = named
    per_user = table.group_by(user, maintain_order=True).agg(
        pl.col(chosen).first(), pl.col(TIED).first(), *(pl.col(b).drop_nulls().unique().alias(b) for b in keys)
    )
    if users is not None:
        per_user = per_user.filter(pl.col(user).is_in(users))
    attrs = [b for b in keys if per_user.height and (per_user[b].list.len() == 1).all()]
    per_user = per_user.with_columns(*(pl.col(b).list.first() for b in attrs), pl.col(chosen).round(_DIGITS))
    out = []
    # the segments in key order, as the users are chosen and shown (the table's row order may
    # come from a join, which keeps none); each segment's users in the table's order
    per_user = per_user.sort(attrs, maintain_order=True, nulls_last=True) if attrs else per_user
    groups = per_user.group_by(attrs, maintain_order=True) if attrs else [((), per_user)]
    several = attrs and per_user.select(attrs).unique().height > 1
    for group, part in groups:
        heading = where(attrs, group) if several else ""
        for (value,), at_value in part.filter(pl.col(chosen).is_not_null()).group_by(chosen, maintain_order=True):
            tied = int(at_value.select(pl.col(TIED).max()).item())
            sentence = tie_sentence(tied, at_value.height, value, what_of(metric, chosen), seed, heading)
            if sentence is not None:
                out.append(sentence)
    return out


# ---------------------------------------------------------------------------- the rows


def _relevant_out(spec: v.Spec) -> nw.Expr:
    """True or false where the row is judged (a relevance), null where it is not."""
    return nw.when(~nw.col(n.REL).is_null()).then(_relevance.is_relevant(spec)).cast(nw.Boolean).alias(_RELEVANT)


def _ordered(lf: nw.LazyFrame, spec: v.Spec, lists: list[str], score: nw.Expr) -> nw.LazyFrame:
    """RANK = position in each list by `score` descending, ties by item as ``score=`` ranks them."""
    lf = lf.with_columns(score.cast(nw.Float64).alias(n.SCORE), nw.lit(1).alias(n.ELIGIBLE))
    return _engine.score_positions(lf, spec, lists).drop(n.SCORE, n.ELIGIBLE)


def _rows(inputs: _call.Inputs, k: int, ids: list[Any]) -> nw.LazyFrame:
    """The long frame, internal names: list keys, USER, SOURCE, RANK, ITEM, RELEVANT; the history
    of the users `ids` (train= is whole)."""
    spec = inputs.spec
    c = spec.columns
    prepared = _engine.flag_rows(_engine.prepare(inputs.lf, inputs.truth, spec, inputs.users, inputs.exclude), spec)
    schema = dict(prepared.collect_schema())
    truth_keys = list(c.truth_keys)
    keys = list(c.list_keys)

    def shaped(part: nw.LazyFrame, source: str) -> nw.LazyFrame:
        have = set(part.columns)
        return part.select(
            *(nw.col(b) if b in have else nw.lit(None).cast(schema[b]).alias(b) for b in keys),
            nw.col(n.USER).cast(schema[n.USER]),
            nw.lit(source).alias(_SOURCE),
            nw.col(n.RANK).cast(nw.Int64),
            nw.col(n.ITEM).cast(schema[n.ITEM]),
            nw.col(_RELEVANT).cast(nw.Boolean),
            (nw.col(n.REL) if n.REL in have else nw.lit(None)).cast(nw.Float64).alias(_GRADE),
        )

    top = prepared.filter((nw.col(n.RANK) <= position_cut(k)).fill_null(False)).with_columns(_relevant_out(spec))
    parts = [shaped(top, "recommended")]
    # the judged items (the truth= rows, or the rows with a relevance), once per list of the
    # truth keys: the model keys they were broadcast over are dropped
    judged = _frames.group_agg(
        prepared.filter(~nw.col(n.REL).is_null()),
        [*truth_keys, n.USER, n.ITEM],
        nw.col(n.REL).max(),
    )
    judged = _ordered(judged, spec, [*truth_keys, n.USER], nw.col(n.REL)).with_columns(_relevant_out(spec))
    parts.append(shaped(judged, "held_out"))
    if inputs.train is not None:
        train = inputs.train.filter(nw.col(str(c.user)).is_in(ids))
        parts.insert(0, shaped(_history(train, spec), "history"))
    return nw.concat(parts, how="vertical")


def _history(train: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """train= as rows: one per (user, item), ordered by the relevance column when train= has
    it (highest first, then by item), else by item."""
    schema = _frames.schema_of(train, ref("train"))
    rel = spec.columns.relevance
    graded = rel in schema and schema[rel].is_numeric()
    ids = [nw.col(str(spec.columns.user)).alias(n.USER), nw.col(spec.columns.item).alias(n.ITEM)]
    if graded:
        rows = _frames.group_agg(
            train.select(*ids, nw.col(rel).cast(nw.Float64).alias(n.REL)), [n.USER, n.ITEM], nw.col(n.REL).max()
        )
        return _ordered(rows, spec, [n.USER], nw.col(n.REL)).with_columns(_relevant_out(spec))
    rows = train.select(*ids).unique()
    rows = _ordered(rows, spec, [n.USER], nw.lit(0.0))
    return rows.with_columns(nw.lit(None).cast(nw.Boolean).alias(_RELEVANT))


def _item_columns(inputs: _call.Inputs, taken: list[str]) -> tuple[nw.LazyFrame | None, list[str]]:
    """items= renamed for the join on ITEM, and its other columns (a name the result already has raises)."""
    spec = inputs.spec
    if inputs.items is None:
        return None, []
    others = [c for c in inputs.items.columns if c != spec.columns.item]
    clash = [c for c in others if c in taken]
    if clash:
        raise RecframeError(
            f"column {clash[0]!r} of {ref('items')} has the name of a column of the result ({', '.join(taken)}).",
            f"rename it in {ref('items')}, e.g. items.rename({{{clash[0]!r}: 'item_{clash[0]}'}}).",
        )
    return inputs.items.select(nw.col(spec.columns.item).alias(n.ITEM), *others), others


def _check_images(items: Any, item: str, show_images: str | None) -> None:
    """show_images= names a column of items= (before any data is read)."""
    if show_images is None:
        return
    if items is None:
        raise RecframeError(
            f"{ref('show_images', show_images)} names a column of {ref('items')}, and the call has no {ref('items')}.",
            f"pass the catalog with its image URLs, e.g. items=catalog, {fix('show_images', show_images)}.",
        )
    lf, _ = _frames.lazy(items, "items")
    others = [c for c in _frames.schema_of(lf, ref("items")) if c != item]
    if show_images not in others:
        raise RecframeError(
            f"{ref('show_images', show_images)} is not a column of {ref('items')} (it has {', '.join(others) or 'no other column'}).",
            f"pass the column of image URLs, e.g. {fix('show_images', others[0] if others else 'poster_url')}.",
        )


def _order_expr(ids: list[Any]) -> nw.Expr:
    """Each user's place in `ids` (the order they were chosen in); len(ids) for any other."""
    return (
        nw.when(nw.col(n.USER).is_in(ids))
        .then(_numbered(ids, list(range(len(ids)))))
        .otherwise(len(ids))
        .cast(nw.Int64)
        .alias(_ORDER)
    )


def _numbered(users: list[Any], numbers: list[int]) -> nw.Expr:
    """``numbers[i]`` (>= 0) on the rows of ``users[i]``, 0 on any other, written bit by bit: bit
    b adds 2^b where the user is among those whose number has it (``is_in``). A sum of as many
    terms as the largest number has bits, whatever the users: a chain of one condition per user
    ran into Python's recursion limit at 600 users."""
    out: nw.Expr = nw.lit(0, dtype=nw.Int64)
    for bit in range(max(numbers, default=0).bit_length()):
        members = [user for user, number in zip(users, numbers) if number >> bit & 1]
        if members:
            out = out + nw.col(n.USER).is_in(members).cast(nw.Int64) * nw.lit(1 << bit, dtype=nw.Int64)
    return out


# ---------------------------------------------------------------------------- inspect
def _parameters_doc() -> str:
    return "\n".join(
        line[4:] if line.startswith("    ") else line
        for line in parameters([p for p in PER_USER_NAMES if p != "users"]).splitlines()
    )


# users= is a keyword of inspect's own (it also takes a list of ids), so it overlaps the options
@_frames.engine_call
@_docs.filled(flush_left=True, ORDERED_USERS=_ORDERED_USERS, parameters=_parameters_doc())
def inspect(  # type: ignore[misc]
    frame: FrameT,
    k: int = 10,
    *,
    select: str = "random",
    n: int = 5,
    seed: int = 0,
    metric: str | None = None,
    users: Any = None,
    show_images: str | None = None,
    **options: Unpack[Options],
) -> FrameT:
    """The lists of a few users, in one long frame: what each model recommended them, what
    they had (``train=``) and what they went on to like (``truth=``).

    Parameters
    ----------
    frame : a frame :func:`recframe.per_user` takes
        The recommendations (with ``truth=``), or the one long frame of ranks and relevance.
    k : int, default 10
        The length of the recommended lists shown: each model's top k.
    select : {"random", "given", "worst", "best", "disagree", "overlap"}, default "random"
        Which users: ``"random"``, ``n`` users drawn with ``seed``; ``"given"``, the users of
        ``users=``; ``"worst"`` / ``"best"``, the ``n`` users with the lowest / highest ``metric``
        (its mean over the user's lists: the models, the folds); ``"disagree"``, the ``n`` users
        where the models disagree most: the largest gap max - min of ``metric`` across the model
        keys of ``by`` (over the users' lists where two models or more have a value; the largest
        over the folds); ``"overlap"``, the ``n`` users whose models' top k overlap least: the
        mean over pairs of models of |A & B| / k (0 when no two models share an item; the least
        over the folds). When ``users=`` names users (a list of ids, or a frame of the user column
        alone) and ``select`` is left at ``"random"``, it is read as ``"given"``; a frame of users
        with attribute columns is the universe the users are drawn or chosen from, as in
        :func:`recframe.summary`. Every selection picks ``n`` users per segment when a ``by`` key is
        a user attribute (a column of ``users=``).
    n : int, default 5
        Users chosen (per segment); not read by ``"given"``. A number larger than the users there
        are (``2**70``) chooses all of them.
    seed : int, default 0
        Seed of the random order: of ``"random"``, and of the ties of ``"worst"``, ``"best"`` and
        ``"disagree"`` (many users score 0). The candidates are sorted by user id and permuted by
        ``numpy.random.default_rng(seed)``, so the same data give the same users on every engine.
    metric : str, optional
        The column users are chosen by (``"worst"``, ``"best"``, ``"disagree"``), as
        :func:`recframe.per_user` names it: ``"ndcg@10"``, ``"recall@20"``, ``"r_precision"``; a name
        without ``@`` takes ``k``. Default: nDCG at ``k``, or the first metric of the profile's
        default list when it has no nDCG. Users without a value (skipped by ``empty_users``) are
        never chosen by it.
    users : list of ids or frame, optional
        A list of user ids (or a frame of the user column alone): only these users are read, and
        shown (or chosen among, with ``"worst"``, ``"best"``, ``"disagree"``). A frame of users
        with attribute columns, as in :func:`recframe.summary`: the user universe, with the
        attributes ``by`` may name (a segment); ``select="given"`` shows all of them. A given id
        with no row in the recommendations, the truth or the history raises, naming it.
    show_images : str, optional
        The column of ``items=`` holding image URLs (posters, thumbnails): checked here; pass the
        same name to :func:`side_by_side` as ``image=`` to show the images. Images need the
        network, so they are never shown unless asked for.
    {parameters}

    Returns
    -------
    frame of the same type as ``frame``
        One row per (user, list, position): the ``by`` keys (a model key is null on the history
        and held-out rows, which are not a model's; a truth key such as a fold is null on the
        history rows), the user, ``source``, ``rank``, the item, ``relevant``, ``relevance`` (the
        item's relevance value as a float, null where it is not judged), then, for users chosen by
        a metric (``"worst"``, ``"best"``, ``"disagree"``), the three columns that say why (below),
        then the columns of ``items=`` joined on the item. ``source`` is:

        - ``"recommended"``: each model's top ``k``, exactly as :func:`recframe.per_user` ranks and
          cuts them (``score=`` ranked highest first, ties by item; ``exclude=`` removed and the
          lists re-ranked); ``rank`` is the position, 1 to k;
        - ``"history"``: the user's ``train=`` items (none for a cold-start user), one row per item, ordered by the
          ``relevance`` column when ``train=`` has it (highest first; ``relevant`` then marks the
          items at or above the threshold), else by item (``relevant`` null); ``rank`` is that order;
        - ``"held_out"``: the judged items (the rows of ``truth=``, or without it the rows with a
          relevance), after ``exclude=``, highest relevance first, ties by item; ``rank`` is that order.

        ``relevant`` is true or false where the item is judged, by the call's threshold (so the
        hits of a recommended list are the ones per_user counts), and null where it is not.

        With ``select="worst"``, ``"best"`` or ``"disagree"`` (not with the other selections), after
        ``relevance``:

        - the metric's column, named as :func:`recframe.per_user` names it (``ndcg@10``): its value
          for each model's (and fold's) list, on that list's recommended rows, computed by one
          per_user pass over the chosen users' rows; null on the history and held-out rows, which
          are no model's;
        - ``<metric>_mean`` (``"worst"``, ``"best"``: the mean over the user's lists) or
          ``<metric>_gap`` (``"disagree"``: the largest gap between two models): the value the
          user was chosen by, on every row of the user;
        - ``tied_users``: how many users (of the user's segment, when users are chosen per
          segment) share that value at 12 digits, the user included, on every row of the user.
          Where it exceeds the users shown at that value, the seeded order of ``seed`` chose among
          a tie (many users score 0): :func:`side_by_side` and ``recframe inspect`` say so in a
          sentence ("201 users tie at ndcg@10 = 0; 3 of them shown, chosen with seed 0."), the
          one the report page writes.

        Rows
        are sorted by user, in the order the users were chosen (lowest metric first for "worst",
        highest for "best", largest gap first for "disagree", ids as given, or by id past
        {ORDERED_USERS} users), then history, recommended, held out, then model and rank.
        Lazy in, lazy out.

    Notes
    -----
    Cost: for ``"given"`` and ``"random"`` users only their rows are read: every input is filtered
    by ``is_in`` on the user column before the plan is built, so a ``pl.scan_parquet``, DuckDB or
    Spark input reads only those users' rows (``"random"`` first reads the distinct users, one
    column). ``train=`` is the exception: it is checked whole (one small query: its rows and null
    ids), item popularity (novelty) counts every training user, and only the history shown is
    the chosen users'. A user with no training row (a cold-start user) has no history row; its
    history column in :func:`side_by_side` is empty. ``"worst"``, ``"best"`` and ``"disagree"`` cost one :func:`recframe.per_user` pass
    of the one metric (its data checks run then), ``"overlap"`` one pass over the rows ranked
    within k (counts per item, no pair of models joined), then the same filter. The data checks
    of :func:`recframe.per_user` run on the chosen users' rows: a defect in a list shown (a
    duplicate item or rank, an item outside ``items=``) is refused. The users are chosen when
    inspect is called (those queries run then); the rows of a lazy input are returned uncomputed.

    See Also
    --------
    side_by_side : the result as HTML, a column per list.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> recs = pl.DataFrame({
    ...     "model": ["A", "A", "B", "B", "A", "B"],
    ...     "user_id": [1, 1, 1, 1, 2, 2],
    ...     "item_id": ["x", "y", "y", "z", "x", "x"],
    ...     "score": [0.9, 0.5, 0.8, 0.7, 0.3, 0.6],
    ... })
    >>> truth = pl.DataFrame({"user_id": [1, 2], "item_id": ["y", "x"], "rating": [5, 2]})
    >>> out = recframe.inspect(recs, k=2, users=[1], truth=truth, score="score", relevance="rating",
    ...                        threshold=4, by="model")
    >>> out.rows()
    [('A', 1, 'recommended', 1, 'x', None, None), ('A', 1, 'recommended', 2, 'y', True, 5.0), ('B', 1, 'recommended', 1, 'y', True, 5.0), ('B', 1, 'recommended', 2, 'z', None, None), (None, 1, 'held_out', 1, 'y', True, 5.0)]
    >>> worst = recframe.inspect(recs, k=2, select="worst", n=1, truth=truth, score="score", relevance="rating",
    ...                          threshold=4, by="model")
    >>> worst["user_id"].unique().to_list(), worst.columns[7:]
    ([1], ['ndcg@2', 'ndcg@2_mean', 'tied_users'])
    >>> worst.filter(pl.col("source") == "recommended").group_by("model", maintain_order=True).agg(
    ...     pl.col("ndcg@2", "ndcg@2_mean", "tied_users").first().round(3)).rows()
    [('A', 0.631, 0.815, 1), ('B', 1.0, 0.815, 1)]
    """
    return _inspect(frame, k, select, n, seed, metric, users, show_images, dict(options))


def _inspect(
    frame: Any,
    k: Any,
    select: Any,
    n_users: Any,
    seed: Any,
    metric: Any,
    users: Any,
    show_images: Any,
    options: dict[str, Any],
) -> Any:
    k = _one_k(k)
    _check_selection(select, n_users, seed, show_images)
    # (before the call is resolved, which would refuse average ties for metrics inspect takes no say in)
    v.refuse_average_ties({"ties": options.get("ties")}, "inspect", "each list's items")
    kwargs = _call.resolve([k], None, options, PER_USER_NAMES, "inspect")
    user = kwargs["user"]
    if user is None:
        raise RecframeError(
            f"inspect shows the lists of chosen users, and {ref('user', None)} makes the whole frame one list.",
            f"pass the user column, e.g. {fix('user', 'user_id')}.",
        )
    main, engine = _frames.lazy(frame, "frame")
    recs_schema = _frames.schema_of(main, "frame")
    v.check_columns(recs_schema, [("user", user)], "frame")
    by = [kwargs["by"]] if isinstance(kwargs["by"], str) else list(kwargs["by"] or [])
    _check_images(options.get("items"), kwargs["item"], show_images)
    given = _Given.of(users, user, recs_schema[user], by)
    if select == "random" and (given.ids is not None or given.only_ids):
        select = "given"  # users= names the users to show
    if select == "given" and users is None:
        raise RecframeError(
            f"{fix('select', 'given')} shows the users of {ref('users')}, and the call has none.",
            f"pass their ids, e.g. {fix('users', [1, 2, 3])}, or another select, e.g. {fix('select', 'random')}.",
        )

    # the per-user inputs, read for the chosen users only; train= is read whole: item popularity
    # is counted over every user, and a cold-start user (no training row) has an empty history
    inputs = {name: options.get(name) for name in ("truth", "exclude")}
    base = {**options, "users": given.frame}
    if given.ids is not None:
        # a list of ids: only these users are read, whatever the selection among them
        frame = _restrict(frame, user, given.ids, "frame")
        base.update({name: _restrict(value, user, given.ids, name) for name, value in inputs.items()})
    ids, by_metric = _chosen(frame, base, given, select, n_users, seed, metric, k, user)

    # only the chosen users' rows are read: the filter comes before the plan
    chosen = {**base, **{name: _restrict(value, user, ids, name) for name, value in inputs.items()}}
    if given.frame is not None:
        chosen["users"] = _restrict(given.frame, user, ids, "users")
    restricted = _restrict(frame, user, ids, "frame")
    sides = {name: chosen[name] for name in (*inputs, "users")}
    run = _call.inputs(restricted, {**kwargs, **sides})
    if ids:
        _check_rows(run)
    names = by_metric.names if by_metric is not None else []
    rows, item_columns = _with_items(_rows(run, k, ids), run, names)
    if by_metric is not None:
        rows = by_metric.attach(rows, restricted, {**options, **sides}, run.spec, ids)
    if select == "given":
        _check_found(rows, ids, user, recs_schema[user])
    return engine.from_lazy(_result(rows, run.spec, ids, item_columns, names))


@dataclass(frozen=True)
class _Given:
    """users=: a list of ids (``ids``), or a frame of users (``frame``, ``lf``) with the
    attributes ``by`` names (``attrs``), or of the user column alone (``only_ids``)."""

    ids: list[Any] | None = None
    frame: Any = None
    lf: nw.LazyFrame | None = None
    attrs: tuple[str, ...] = ()
    only_ids: bool = False

    @staticmethod
    def of(users: Any, user: str, dtype: Any, by: list[str]) -> _Given:
        if users is None:
            return _Given()
        if not _is_frame(users):
            ids = _id_list(users)
            _check_id_types(ids, dtype, user)
            return _Given(ids=ids)
        lf, _ = _frames.lazy(users, "users")
        schema = _frames.schema_of(lf, ref("users"))
        v.check_columns(schema, [("user", user)], "users frame")
        return _Given(None, users, lf, tuple(b for b in by if b in schema and b != user), set(schema) == {user})


@dataclass(frozen=True)
class _ByMetric:
    """The metric users were chosen by ("worst", "best", "disagree"): the column of its
    per_user frame (``column``, at its cut-off ``cut``), and per chosen user how many users
    share its value (``tied``); it adds inspect's columns of the metric (:meth:`attach`)."""

    select: str
    name: str
    cut: int
    column: str
    tied: dict[Any, int]

    @property
    def names(self) -> list[str]:
        """The result's columns: the list's value, the user's chosen value, the tied users."""
        return [self.column, self.column + CHOSEN_SUFFIX[self.select], TIED]

    def attach(self, rows: nw.LazyFrame, frame: Any, options: dict[str, Any], spec: v.Spec, ids: list[Any]) -> nw.LazyFrame:
        """`rows` with _LIST_VALUE (the metric of each recommended list, from one per_user pass
        over the chosen users' rows), _USER_VALUE (the user's value chosen by: the mean over
        the lists, or the largest gap between models) and TIED."""
        kwargs = _call.resolve([self.cut], [self.name], options, PER_USER_NAMES, "inspect")
        plan, own, _ = _call.prepare(frame, kwargs)
        lists = [*own.columns.model_keys, *own.columns.truth_keys]
        per_list = _engine.per_user_rows(plan.per_user, own)
        values = per_list.select(*lists, n.USER, nw.col(self.column).cast(nw.Float64).alias(_LIST_VALUE))
        of_user = user_values(per_list, self.column, self.select, list(own.columns.truth_keys), list(own.columns.attr_keys))
        rows = rows.join(values, on=[*lists, n.USER], how="left").join(
            of_user.select(n.USER, nw.col(VALUE).alias(_USER_VALUE)), on=n.USER, how="left"
        )
        recommended = nw.col(_SOURCE) == "recommended"
        # each user's count (1: ties with nobody, as most users), bit by bit (not one condition per count)
        more = [self.tied.get(user, 1) - 1 for user in ids]
        tied: Any = nw.lit(1)
        if any(more):
            tied = nw.when(nw.col(n.USER).is_in(ids)).then(_numbered(ids, more) + 1).otherwise(1)
        return rows.with_columns(
            nw.when(recommended).then(nw.col(_LIST_VALUE)).otherwise(None).alias(_LIST_VALUE),
            tied.cast(nw.Int64).alias(TIED),
        )


def _chosen(
    frame: Any, base: dict[str, Any], given: _Given, select: str, n_users: int, seed: int, metric: Any, k: int, user: str
) -> tuple[list[Any], _ByMetric | None]:
    """The ids of the users `select` chooses (in the order chosen), and the metric they were
    chosen by (None unless "worst", "best", "disagree")."""
    if select == "given":
        if given.ids is not None:
            return given.ids, None
        assert given.lf is not None  # users= without ids is a frame
        return sorted(_to_polars(given.lf.select(nw.col(user).alias(n.USER)).unique())[n.USER].drop_nulls().to_list()), None
    if select == "random":
        if given.lf is not None:
            table = _to_polars(given.lf.select(nw.col(user).alias(n.USER), *given.attrs).unique())
        else:
            table = _to_polars(_frames.lazy(frame, "frame")[0].select(nw.col(user).alias(n.USER)).unique())
        return choose(table.filter(pl.col(n.USER).is_not_null()), list(given.attrs), n_users, seed, None), None
    by_metric = None
    if select == "overlap":
        table, attrs = _overlaps(frame, base, k)
        problem = f"no user has lists from two models or more to compare ({ref('select', select)})."
        hint = f"check the model column of {ref('by')}, or use {fix('select', 'random')}."
    else:
        chosen_by = metric if metric is not None else _default_metric(base, k)
        table, attrs = _values(frame, base, chosen_by, k, select)
        problem = (
            f"no user has a value of {chosen_by!r} to choose by ({ref('select', select)}): every list is skipped "
            "(no relevant item" + (", or fewer than two models with a value" if select == "disagree" else "") + ")."
        )
        hint = f"check {ref('truth')} and {ref('threshold')}, or use {fix('select', 'random')}."
    valued = table.filter(pl.col(VALUE).is_not_null())
    if table.height and not valued.height:
        raise RecframeError(problem, hint)
    ids = choose(valued, attrs, n_users, seed, select)
    if select != "overlap":
        name, cut, column = _parse_metric(chosen_by, k)
        counted = tied_counts(valued, attrs).filter(pl.col(n.USER).is_in(ids))
        by_metric = _ByMetric(select, name, cut, column, dict(zip(counted[n.USER].to_list(), counted[TIED].to_list())))
    return ids, by_metric


def _check_found(rows: nw.LazyFrame, ids: list[Any], user: str, dtype: Any) -> None:
    """Every user given has a row (a recommendation, truth or history row)."""
    found = set(_to_polars(rows.select(n.USER).unique())[n.USER].to_list())
    missing = [i for i in ids if i not in found]
    if missing:
        shown = ", ".join(repr(i) for i in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        which = f"user {shown} is" if len(missing) == 1 else f"{len(missing)} of the {len(ids)} users given are"
        raise RecframeError(
            f"{ref('users')}: {which} not in the frame (no recommendation, truth or history row)"
            + (f": {shown}." if len(missing) > 1 else "."),
            f"check the ids against the {user!r} column (its type: {dtype}).",
        )


def _with_items(rows: nw.LazyFrame, run: _call.Inputs, metric_columns: list[str]) -> tuple[nw.LazyFrame, list[str]]:
    """The rows with the user attributes and the columns of items= (their names) joined."""
    spec = run.spec
    if spec.columns.attr_keys:
        rows = _engine.attach_attrs(rows, spec, run.users)
    taken = [*spec.columns.by, str(spec.columns.user), *OWN_COLUMNS, spec.columns.item, *metric_columns]
    items, item_columns = _item_columns(run, taken)
    return (rows if items is None else rows.join(items, on=n.ITEM, how="left")), item_columns


def _result(rows: nw.LazyFrame, spec: v.Spec, ids: list[Any], item_columns: list[str], metric_columns: list[str]) -> nw.LazyFrame:
    """The rows under the user's names, sorted: the chosen order of the users, then history,
    recommended, held out, then the keys and the rank."""
    source_order = nw.when(nw.col(_SOURCE) == "history").then(0).when(nw.col(_SOURCE) == "recommended").then(1).otherwise(2)
    rows = rows.with_columns(source_order.cast(nw.Int64).alias(_SOURCE_ORDER))
    first = [_ORDER] if ids and len(ids) <= _ORDERED_USERS else []
    if first:
        rows = rows.with_columns(_order_expr(ids))
    rows = rows.sort([*first, n.USER, _SOURCE_ORDER, *spec.columns.truth_keys, *spec.columns.model_keys, n.RANK], nulls_last=True)
    return rows.select(
        *spec.columns.by,
        nw.col(n.USER).alias(str(spec.columns.user)),
        nw.col(_SOURCE).alias("source"),
        nw.col(n.RANK).alias("rank"),
        nw.col(n.ITEM).alias(spec.columns.item),
        nw.col(_RELEVANT).alias("relevant"),
        nw.col(_GRADE).alias("relevance"),
        *(nw.col(c).alias(name) for c, name in zip((_LIST_VALUE, _USER_VALUE, TIED), metric_columns)),
        *item_columns,
    )


__all__ = ["SOURCES", "inspect"]
