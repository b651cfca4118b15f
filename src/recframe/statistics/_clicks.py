"""Click metrics of a new ranking from logged clicks with position bias (issue 61): the
examination-propensity-weighted (unbiased) DCG@k, precision@k and recall@k (Joachims et al.
2017; Agarwal et al. 2019), declared as the off-policy estimators are (:mod:`._off_policy`):
additive parts per group and a finish.

Each logged row is one shown (context, item) at its logged position k_d, with a click c_d; the
new ranking places the item at rank r_d (or nowhere). A click counts c_d / p_{k_d}, p_k the
examination propensity of position k. As the slate estimators do, each context's rows are
summed first (:func:`_per_context`); the contexts are then the units, each metric a mean over
them: its parts are the count, the sum and the sum of squares of the per-context values, and
the same parts of the logged ranking's own value (r_d = k_d: ``on_policy``).

>>> [name for name, _ in estimators(["click_dcg", "click_recall"], [5, 10])]
['click_dcg@5', 'click_dcg@10', 'click_recall@5', 'click_recall@10']
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import narwhals as nw

from recframe.engine import _frames
from recframe.engine import _validate as v
from recframe.errors import RecframeError, fix, ref
from recframe.statistics import _off_policy as op

#: the click estimators, by the name ``estimators=`` takes
CLICK_ESTIMATORS = ("click_dcg", "click_precision", "click_recall")

_CONTEXT, _ITEM, _POSITION, _CLICK, _RANK = "__rf_context", "__rf_item", "__rf_position", "__rf_click", "__rf_rank"
_GAIN, _WEIGHT, _CLICKED, _DEFINED = "__rf_gain", "__rf_cw", "__rf_clicked", "__rf_defined"


def asked(estimators: Sequence[str] | str | None) -> bool:
    """Whether the call asks for click estimators; a mix with the other kinds is refused."""
    names = [estimators] if isinstance(estimators, str) else list(estimators or [])
    clicks = [n for n in names if isinstance(n, str) and n.startswith("click_")]
    if clicks and len(clicks) < len(names):
        raise RecframeError(
            f"{ref('estimators', names)} mixes click estimators (a ranking judged by logged clicks) with "
            "single-slot or slate ones (a target policy's weights).",
            "estimate the two kinds in two calls.",
        )
    for name in clicks:
        if name not in CLICK_ESTIMATORS:
            raise RecframeError(
                f"{ref('estimators', names)}: {name!r} is no estimator.",
                f"pass some of {fix('estimators', list(CLICK_ESTIMATORS))}.",
            )
    return bool(clicks)


def cutoffs(k: Any) -> list[int]:
    """``k=`` as a list of distinct cutoffs >= 1, in the order given."""
    given = [k] if not isinstance(k, (list, tuple)) else list(k)
    if not given or any(not isinstance(x, numbers.Integral) or isinstance(x, bool) or x < 1 for x in given):
        raise RecframeError(f"{ref('k', k)} must be an int >= 1 or a list of them.", f"pass e.g. {fix('k', [5, 10])}.")
    return list(dict.fromkeys(int(x) for x in given))


def estimators(names: Sequence[str], ks: Sequence[int]) -> list[tuple[str, tuple[str, int]]]:
    """The result's estimator names (``click_dcg@10``) with their (metric, k), in its order:
    each metric asked, at each k given."""
    return [(f"{m}@{k}", (m, k)) for m in names for k in ks]


def _refuse_settings(settings: dict[str, Any]) -> None:
    """The inputs of the weighted estimators mean nothing to the click ones: refused, not ignored."""
    for name, value in settings.items():
        if value is not None:
            raise RecframeError(
                f"the click estimators read no {ref(name)}: the new ranking is recommendations=, the weights "
                "come from the examination propensities (examination=).",
                f"leave out {ref(name)}, or estimate the weighted estimators in a call of their own.",
            )


def estimate(
    logs: Any,
    names: Sequence[str],
    z: float,
    *,
    recommendations: Any,
    examination: Any,
    k: Any,
    columns: dict[str, str | None],
    by: str | Sequence[str] | None,
    unused: dict[str, Any],
) -> Any:
    """recframe.off_policy for the click estimators (see its docs): read and check the logs and
    the rankings, the propensities per logged position, then sums per context, parts per group
    and the finish."""
    _refuse_settings(unused)
    ks = cutoffs(k)
    if recommendations is None:
        raise RecframeError(
            f"the click estimators judge a new ranking, given as {ref('recommendations')}, which is not given.",
            'pass the ranking as recommendations= (context, item, rank; by="model" for several).',
        )
    if columns["position"] is None:
        raise RecframeError(
            f"the click estimators weight each click by its logged position, and {ref('position', None)} gives none.",
            f"pass the logs' position column, e.g. {fix('position', 'position')}.",
        )
    keys = [by] if isinstance(by, str) else list(by or [])
    lf, engine = _frames.lazy(logs, "logs")
    recs, _ = _frames.lazy(recommendations, "recommendations")
    _frames.same_engine(lf, recs, "recommendations")
    rows = _rows(lf, recs, columns, keys, examination)
    p = propensities(lf, columns, examination)
    rows = rows.with_columns(_propensity_of(p).alias("__rf_p"))
    per_context = _per_context(rows, keys, ks)
    chosen = estimators(names, ks)
    parts = _parts(chosen, ks)
    # computed once (a SQL engine holds it): each estimator's row of the finish reads it
    sums = engine.hold(op.parts_frame(per_context, keys, parts, op.Logged()))
    return engine.from_lazy(_finished(sums, keys, chosen, z))


def _rows(lf: nw.LazyFrame, recs: nw.LazyFrame, columns: dict[str, Any], keys: list[str], examination: Any) -> nw.LazyFrame:
    """The logged rows (keys, context, item, position, click) with the new ranking's rank of the
    item in the context (null where it ranks it nowhere), once per model (the ``by`` keys of
    the recommendations alone)."""
    schema, recs_schema = _frames.schema_of(lf, "logs"), _frames.schema_of(recs, "recommendations")
    log_keys = [k for k in keys if k in schema or k not in recs_schema]
    wanted = [(a, columns[a]) for a in ("context", "item", "position", "reward")]
    wanted += [("examination", examination)] if isinstance(examination, str) else []
    v.check_columns(schema, [*wanted, *(("by", k) for k in log_keys)], "logs")
    op.refuse_non_numbers(schema, columns, ("position", "reward"))
    op.refuse_key_names(keys)
    context, item, rank = str(columns["context"]), str(columns["item"]), str(columns["rank"])
    v.check_columns(recs_schema, [("context", context), ("item", item), ("rank", rank), *(("by", k) for k in keys if k in recs_schema)], "recommendations")  # fmt: skip
    model_keys = [k for k in keys if k not in log_keys]
    shared = [k for k in keys if k in log_keys and k in recs_schema]
    rows = lf.select(
        *log_keys,
        nw.col(context).alias(_CONTEXT),
        nw.col(item).alias(_ITEM),
        nw.col(str(columns["position"])).cast(nw.Int64).alias(_POSITION),
        nw.col(str(columns["reward"])).cast(nw.Float64).alias(_CLICK),
    )
    _check_logs(rows, log_keys, columns)
    ranked = recs.select(*model_keys, *shared, nw.col(context).alias(_CONTEXT), nw.col(item).alias(_ITEM),
                         nw.col(rank).cast(nw.Int64).alias(_RANK))  # fmt: skip
    _check_rankings(ranked, [*model_keys, *shared], columns)
    if model_keys:
        rows = rows.join(ranked.select(model_keys).unique(), how="cross")
    return rows.join(ranked, on=[*model_keys, *shared, _CONTEXT, _ITEM], how="left")


def _check_logs(rows: nw.LazyFrame, keys: list[str], columns: dict[str, Any]) -> None:
    """Refuse, by name: a click that is not a number >= 0, a missing context or position, two
    rows of one (context, position) in a group."""

    def count(condition: nw.Expr) -> nw.Expr:
        return nw.when(condition).then(1).otherwise(0).cast(nw.Int64)

    c = nw.col(_CLICK)
    flags = {
        "reward": count(c.is_null() | ~c.is_finite() | (c < 0)),
        "context": count(nw.col(_CONTEXT).is_null()),
        "position": count(nw.col(_POSITION).is_null() | (nw.col(_POSITION) < 1)),
    }
    found = rows.with_columns(**flags).select(*(nw.col(f).sum() for f in flags)).collect().row(0)
    holds = {"reward": "values that are no number >= 0 (null, NaN, infinite or negative)", "context": "missing values",
             "position": "missing values or positions below 1"}  # fmt: skip
    for arg, n in zip(flags, found):
        if n:
            raise RecframeError(
                f"column {columns[arg]!r} (the {ref(arg)} argument) holds {holds[arg]} in {n} row{'s' if n != 1 else ''}.",
                "a click is 0/1 or a number >= 0; each logged row has a context and a position, 1 at the top: "
                "drop or fill those rows.",
            )
    slot = [*keys, _CONTEXT, _POSITION]
    dup = rows.group_by(slot).agg(nw.len().alias("__rf_n")).filter(nw.col("__rf_n") > 1).sort(slot).head(1).collect()
    if len(dup):
        raise RecframeError(
            f"the logs hold {dup.item(0, '__rf_n')} rows of one shown slot ({columns['context']}="
            f"{dup.item(0, _CONTEXT)!r}, {columns['position']}={dup.item(0, _POSITION)!r}) in column "
            f"{columns['context']!r} ({ref('context')}).",
            "one row per (context, position) of each group: pass the key that tells the copies apart as by=.",
        )


def _check_rankings(ranked: nw.LazyFrame, keys: list[str], columns: dict[str, Any]) -> None:
    """Refuse, by name: a missing rank or one below 1, an item ranked twice in one context."""
    bad = (
        ranked.select(nw.col(_RANK).is_null().cast(nw.Int64).sum().alias("null"), nw.col(_RANK).min().alias("low"))
        .collect()
        .row(0)
    )
    if bad[0] or (bad[1] is not None and bad[1] < 1):
        raise RecframeError(
            f"column {columns['rank']!r} (the {ref('rank')} argument) of {ref('recommendations')} holds "
            f"{'missing ranks' if bad[0] else repr(bad[1]) + ' and other ranks below 1'}.",
            "give each recommended item its rank, 1 at the top.",
        )
    twice = [*keys, _CONTEXT, _ITEM]
    dup = ranked.group_by(twice).agg(nw.len().alias("__rf_n")).filter(nw.col("__rf_n") > 1).sort(twice).head(1).collect()
    if len(dup):
        raise RecframeError(
            f"{ref('recommendations')} rank the item {columns['item']}={dup.item(0, _ITEM)!r} "
            f"{dup.item(0, '__rf_n')} times in {columns['context']}={dup.item(0, _CONTEXT)!r}.",
            "give one row per (context, item) of each ranking (by= the model column for several).",
        )


def propensities(lf: nw.LazyFrame, columns: dict[str, Any], examination: Any) -> dict[int, float]:
    """The examination propensity of every logged position: from a frame (position,
    propensity: the columns named by ``position=`` and ``propensity=``) or estimated from the
    logs' randomized traffic (``examination=`` a boolean column): p_k = CTR_k / CTR_1 there."""
    position = str(columns["position"])
    randomized = isinstance(examination, str)
    if examination is None:
        raise RecframeError(
            f"the click estimators weight each click by its position's examination propensity: {ref('examination')} "
            "is not given.",
            "pass a frame (position, propensity) as examination=, or the name of the logs' column that marks "
            'randomized traffic, e.g. examination="randomized".',
        )
    flag = nw.col(examination).cast(nw.Int64) if randomized else nw.lit(0, dtype=nw.Int64)
    counts = _frames.group_agg(
        lf.select(
            nw.col(position).cast(nw.Int64).alias(_POSITION),
            flag.alias("__rf_rand"),
            (nw.col(str(columns["reward"])).cast(nw.Float64) * flag).alias("__rf_rand_click"),
        ),  # fmt: skip
        [_POSITION],
        nw.col("__rf_rand").sum().alias("shown"),
        nw.col("__rf_rand_click").sum().alias("clicks"),
    ).collect()
    logged = {int(r[_POSITION]): (r["shown"], r["clicks"]) for r in counts.iter_rows(named=True)}
    p = _estimated(logged, examination) if randomized else _given(examination, columns)
    for k in sorted(logged):
        where = f"column {examination!r} (the examination= argument)" if randomized else f"{ref('examination')}"
        if k not in p:
            raise RecframeError(
                f"{where} gives no examination propensity for the logged {position}={k}.",
                "give every logged position a propensity (a row of the examination frame), or drop its rows.",
            )
        if not (math.isfinite(p[k]) and 0 < p[k] <= 1):
            told = "estimates" if randomized else "holds"
            raise RecframeError(
                f"{where} {told} the examination propensity {p[k]!r} for {position}={k}, outside (0, 1].",
                "a propensity is the probability that a user examines the position, normalized to 1 at the top; "
                + ("more randomized traffic, or pass the propensities as a frame." if randomized else "pass those."),
            )
    return {k: p[k] for k in logged}


def _given(examination: Any, columns: dict[str, Any]) -> dict[int, float]:
    """The propensities of an examination frame, any backend, read into Python (one row per position)."""
    position, propensity = str(columns["position"]), str(columns["propensity"])
    lf, _ = _frames.lazy(examination, "examination")
    v.check_columns(_frames.schema_of(lf, "examination"), [("position", position), ("propensity", propensity)], "examination")
    table = lf.select(nw.col(position).cast(nw.Int64), nw.col(propensity).cast(nw.Float64)).collect()
    out: dict[int, float] = {}
    for k, p in table.iter_rows():
        if k is None or k in out:
            raise RecframeError(
                f"{ref('examination')} holds {'a missing' if k is None else 'two rows of'} {position}"
                f"{'' if k is None else '=' + repr(k)}.",
                "give one propensity per position.",
            )
        out[k] = float("nan") if p is None else p
    return out


def _estimated(logged: dict[int, tuple[Any, Any]], column: str) -> dict[int, float]:
    """p_k = CTR_k / CTR_1 on the randomized traffic (Joachims et al. 2017, section 6): refused
    where a logged position has no randomized row, or position 1 no click."""
    for k in sorted(logged):
        if not logged[k][0]:
            raise RecframeError(
                f"column {column!r} (the examination= argument) marks no randomized row at the logged position {k}.",
                "the click rate of each position on randomized traffic estimates its propensity: pass a column that "
                "marks such traffic at every position, or the propensities as a frame.",
            )
    shown, clicks = logged.get(1, (0, 0))
    if not clicks:
        raise RecframeError(
            f"column {column!r} (the examination= argument) marks randomized traffic with no click at position 1.",
            "the propensities are normalized to the top position's click rate: more randomized traffic, or pass "
            "the propensities as a frame.",
        )
    top = clicks / shown
    return {k: (c / n) / top for k, (n, c) in logged.items()}


def _propensity_of(p: dict[int, float]) -> nw.Expr:
    """Each row's examination propensity by its logged position (a nested condition: a handful
    of positions, known in the call)."""
    out: nw.Expr = nw.lit(None, dtype=nw.Float64)
    for k in sorted(p, reverse=True):
        out = nw.when(nw.col(_POSITION) == k).then(nw.lit(p[k], dtype=nw.Float64)).otherwise(out)
    return out


def _per_context(rows: nw.LazyFrame, keys: list[str], ks: Sequence[int]) -> nw.LazyFrame:
    """One row per (group, context): the sums the metrics read, the new ranking's (rank r) and
    the logged ranking's (r = the logged position), at each k. Conditions are columns first,
    plain sums after (the portable rule)."""
    gain, clicked = nw.col(_CLICK) / nw.col("__rf_p"), nw.col(_CLICK) > 0
    rank = nw.col(_RANK).fill_null(max(ks) + 1)  # a sentinel past every cutoff
    pos = nw.col(_POSITION)
    weight = nw.when(clicked).then(1 / nw.col("__rf_p")).otherwise(0.0)
    values: dict[str, nw.Expr] = {
        _GAIN: gain,
        _CLICKED: nw.when(clicked).then(1).otherwise(0).cast(nw.Int64),
        _WEIGHT: weight,
        "__rf_w2": weight * weight,
    }
    for k in ks:
        for who, r in (("new", rank), ("on", pos)):
            values[f"__rf_hit_{who}_{k}"] = nw.when(r <= k).then(gain).otherwise(0.0)
            values[f"__rf_dcg_{who}_{k}"] = nw.when(r <= k).then(gain * math.log(2) / (r + 1).cast(nw.Float64).log()).otherwise(0.0)  # fmt: skip
        values[f"__rf_in_{k}"] = nw.when(clicked & (rank <= k)).then(1).otherwise(0).cast(nw.Int64)
    summed = rows.with_columns(**values)
    per = _frames.group_agg(
        summed, [*keys, _CONTEXT], *(nw.col(c).sum() for c in values), nw.col(_WEIGHT).max().alias("__rf_largest")
    )
    total = nw.col(_GAIN)
    out: dict[str, nw.Expr] = {_DEFINED: nw.when(total > 0).then(1).otherwise(0).cast(nw.Int64)}
    for k in ks:
        for who in ("new", "on"):
            hit = nw.col(f"__rf_hit_{who}_{k}")
            out[_column("click_dcg", k, who)] = nw.col(f"__rf_dcg_{who}_{k}")
            out[_column("click_precision", k, who)] = hit / k
            # recall is defined where the context has a click; elsewhere 0, left out by the count
            out[_column("click_recall", k, who)] = nw.when(total > 0).then(hit / total).otherwise(0.0)
    return per.with_columns(**out)


def _column(metric: str, k: int, who: str = "new") -> str:
    return f"__rf_{metric}_{who}_{k}"


def _count(metric: str) -> str:
    """The part that counts a metric's contexts: every one, or (recall) those with a click."""
    return "defined" if metric == "click_recall" else "contexts"


def _parts(chosen: Sequence[tuple[str, tuple[str, int]]], ks: Sequence[int]) -> list[op.Part]:
    """The parts of the metrics asked for and of the diagnostics, each once."""

    def column(name: str) -> Callable[[op.Logged], nw.Expr]:
        return lambda x: nw.col(name)

    def square(name: str) -> Callable[[op.Logged], nw.Expr]:
        return lambda x: nw.col(name) * nw.col(name)

    parts = [
        op.Part("contexts", lambda x: nw.lit(1, dtype=nw.Int64)),
        op.Part("defined", column(_DEFINED)),
        op.Part("clicks", column(_CLICKED)),
        op.Part("w", column(_WEIGHT)),
        op.Part("w2", column("__rf_w2")),
        op.Part("largest", column("__rf_largest"), "max"),
        *(op.Part(f"in_{k}", column(f"__rf_in_{k}")) for k in ks),
    ]
    for _, (metric, k) in chosen:
        new, on = _column(metric, k), _column(metric, k, "on")
        parts += [op.Part(f"{new}_v", column(new)), op.Part(f"{new}_v2", square(new)), op.Part(f"{on}_v", column(on))]
    return parts


def _finish(metric: str, k: int, s: Callable[[str], nw.Expr], z: float) -> dict[str, nw.Expr]:
    """A metric's mean over its contexts with the se of a mean (sample sd over sqrt(n)), the
    logged ranking's own mean (``on_policy``), and the diagnostics of the group's clicks."""
    n, t, t2 = s(_count(metric)), s(f"{_column(metric, k)}_v"), s(f"{_column(metric, k)}_v2")
    value = nw.when(n > 0).then(t / n)
    se = nw.when(n > 1).then((nw.when(t2 - t * t / n > 0).then(t2 - t * t / n).otherwise(0.0) / (n - 1) / n).sqrt())
    on = nw.when(n > 0).then(s(f"{_column(metric, k, 'on')}_v") / n)
    clicks, w, w2 = s("clicks"), s("w"), s("w2")
    return {
        "value": value,
        "se": se,
        "lo": value - z * se,
        "hi": value + z * se,
        "n": n,
        "on_policy": on,
        "lift": nw.when(on != 0).then(value / on - 1),
        "ess": nw.when(w2 > 0).then(w * w / w2).otherwise(0.0),
        "largest_weight": nw.when(clicks > 0).then(s("largest")),
        "supported": nw.when(clicks > 0).then(s(f"in_{k}") / clicks),
    }


def _finished(sums: nw.LazyFrame, keys: list[str], chosen: Sequence[tuple[str, tuple[str, int]]], z: float) -> nw.LazyFrame:
    """One row per group and estimator (in the order asked), the columns of every off-policy
    result (:data:`._off_policy.COLUMNS`), sorted by the keys."""

    def s(name: str) -> nw.Expr:
        return nw.col(name).cast(nw.Float64)

    out = []
    for order, (name, (metric, k)) in enumerate(chosen):
        finish = _finish(metric, k, s, z)
        out.append(
            sums.select(
                *keys,
                nw.lit(order, dtype=nw.Int64).alias("__rf_order"),
                nw.lit(name, dtype=nw.String).alias("estimator"),
                *(finish[c].cast(nw.Int64 if c == "n" else nw.Float64).alias(c) for c in op.COLUMNS[1:]),
            )
        )
    result = nw.concat(out, how="vertical") if len(out) > 1 else out[0]
    return result.sort([*keys, "__rf_order"]).drop("__rf_order")
