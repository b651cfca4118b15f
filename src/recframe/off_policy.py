"""Counterfactual evaluation from logged feedback (issue 61): what a target policy would have
earned on the traffic a logging policy served, estimated from the logs (single slot)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any, TypeVar

import narwhals as nw

from recframe.engine import _frames
from recframe.engine import _validate as v
from recframe.errors import RecframeError, fix, ref
from recframe.statistics import _clicks, _partitions, _parts, _poisson, _summary, stats
from recframe.statistics import _off_policy as op

FrameT = TypeVar("FrameT")

_TARGET, _TARGET_ITEM, _POSITION = "__rf_pi", "__rf_target_item", "__rf_position"
_PROPENSITY, _CONTEXT, _ITEM = "__rf_p", "__rf_context", "__rf_item"
_CHECK_PARTS = "__rf_defects"  # the rows with any defect, summed beside the parts (:func:`_check_parts`)


@_frames.engine_call
def off_policy(
    logs: FrameT,
    estimators: Sequence[str] | None = None,
    *,
    target: str | None = None,
    recommendations: Any = None,
    context: str = "context_id",
    item: str = "item_id",
    position: str | None = "position",
    propensity: str = "propensity",
    reward: str = "reward",
    predicted: str | None = None,
    target_predicted: str | None = None,
    rank: str = "rank",
    by: str | Sequence[str] | None = None,
    max_weight: float | None = None,
    switch_threshold: float | None = None,
    ci: float = 0.95,
    k: int | Sequence[int] = 10,
    examination: Any = None,
    ci_method: str = "normal",
    n_resamples: int = stats.INTERVAL_RESAMPLES,
    seed: Any = None,
    per_context: bool = False,
    partitions: int | None = None,
) -> FrameT:
    """The value a target policy would have earned on logged traffic, by off-policy estimators.

    Parameters
    ----------
    logs : DataFrame or LazyFrame (Polars, pandas, Arrow, DuckDB, Spark, SQLFrame, Ibis)
        One row per logged slot: context (impression, request), item shown, its position (1 for
        a single slot), the logging policy's probability of that item there, the reward.
    estimators : list of str, optional
        ``"ips"``, ``"snips"``, ``"clipped_ips"`` (needs ``max_weight=``), ``"dm"`` (needs
        ``target_predicted=``), ``"dr"``, ``"sndr"`` (and ``predicted=``), ``"switch_dr"`` (and
        ``switch_threshold=``). Default: IPS, SNIPS and each other one whose inputs are given.
        Or slate estimators (one slate per context): ``"sips"``, ``"iips"``, ``"rips"``. Or click
        metrics of the ranking ``recommendations=`` from the logged clicks (``reward=``) with
        position bias: ``"click_dcg"``, ``"click_precision"``, ``"click_recall"`` (at each ``k=``;
        they need ``examination=``). Each kind in a call of its own.
    target : str, optional
        A column of the logs: the target's probability of the logged item there, in [0, 1].
    recommendations : frame, optional
        The target as rankings (context, item, ``rank``) on the logs' engine: probability 1 where
        it ranks the logged item at the logged position, else 0. A ``by`` key found here and not
        in the logs (the model) evaluates each of its values on every logged row.
    context, item, position, propensity, reward : str
        Column names. ``position=None``: every row is position 1 (a single-slot log).
    predicted, target_predicted : str, optional
        A column of the logs: a reward model's prediction q(x, a) for the logged item; and
        q(x, pi_e) = sum_a pi_e(a|x) q(x, a): a column of the logs with ``target=``, of the
        recommendations (for the item ranked at the logged position) with ``recommendations=``.
    rank : str, default "rank"
        The rank column of ``recommendations``.
    by : str or list of str, optional
        Keys of the groups estimated apart: the model (logs or recommendations), segments, days.
    max_weight, switch_threshold : float, optional
        Clipped IPS's largest weight (> 0); switch-DR's threshold tau on the weight (>= 0).
    ci : float, default 0.95
        The coverage of the interval ``lo``, ``hi``.
    ci_method : {"normal", "poisson"}, default "normal"
        ``"normal"``: ``value -/+ z se``. ``"poisson"``: the percentiles of the estimate over
        ``n_resamples`` Poisson bootstrap resamples of the contexts, computed in the engine as
        :func:`recframe.summary`'s ``ci_method="poisson"`` resamples users (every estimator;
        the same interval on every engine for a ``seed``; ``se`` stays the normal one).
    n_resamples, seed : int, optional
        The Poisson bootstrap's resamples and seed (as :func:`recframe.summary`'s).
    per_context : bool, default False
        Instead of the estimates, each unit's value of each estimator (a column each, after
        the ``by`` keys and the ``context`` column; and ``position`` for single-slot
        estimators of a log with ``position=``: a unit is a logged row, a slate for slate
        estimators), whose mean over a group is its estimate: for
        :func:`recframe.compare` (``user=`` the context column, ``metrics=`` the estimators),
        which pairs two targets on the same logged contexts. SNIPS and SNDR give their
        influence values (value + psi, see Notes): paired t tests of them are the delta
        method's.
    partitions : int, optional
        Estimate from this many sets of contexts (split by a hash of the context id, as
        :func:`recframe.summary`'s ``partitions=`` splits users), one after another by Polars'
        streaming engine, and add their parts: the numbers of one pass (to the last bits of a
        float), the memory of one set. Polars, pandas and Arrow frames; not with
        ``ci_method="poisson"`` (it numbers every context of the call).
    k : int or list of int, default 10
        The click metrics' cutoffs: one estimator row per metric and k (``"click_dcg@10"``).
    examination : frame or str, optional
        The click metrics' examination propensity per logged position: a frame (columns named
        as ``position=`` and ``propensity=``), or a boolean column of the logs marking
        randomized traffic, where p_k = CTR_k / CTR_1 (normalized to p_1 = 1).

    Returns
    -------
    frame of the same type as ``logs``
        Per group and estimator: the ``by`` keys, ``estimator``, ``value``, ``se``, ``lo``,
        ``hi``, ``n`` (rows; slates), ``on_policy`` (their mean reward), ``lift`` (value /
        on_policy - 1), ``ess`` ((sum w)^2 / sum w^2), ``largest_weight``, ``supported`` (share
        with w > 0); sorted by the keys; lazy in, lazy out.

    Notes
    -----
    Per logged row: w = pi_e(a|x) / p(a|x), reward r, q = q(x, a), qe = q(x, pi_e); means over
    a group's n rows. IPS: mean(w r). SNIPS: sum w r / sum w. Clipped IPS: mean(min(w,
    max_weight) r). DM: mean(qe). DR: mean(qe + w (r - q)). SNDR: mean(qe) + sum w (r - q) /
    sum w. Switch-DR: mean(qe + 1[w <= tau] w (r - q)), Open Bandit Pipeline's (0.5.7) form:
    where the logged action's weight exceeds tau its correction is off (DM alone), where Wang et
    al. (2017) also split the DM term per action. As in OBP, SNDR self-normalizes the correction
    only, and clipping is clipped IPS's alone. The se of a mean is the sample standard deviation
    over sqrt(n); of SNIPS and SNDR the delta method's; both from sums per group that add across
    disjoint sets of contexts (where the values do not vary, the se comes out within about 1e-8
    of their scale, not 0). A self-normalized estimate is null where no row has w > 0; an se,
    for one row. Refused: a propensity outside (0, 1], a reward or prediction that is not a
    finite number, a missing position, a target probability outside [0, 1], two rows of one
    (context, position) in a group. Slates: the mean over slates of sum_k w~_k r_k, with SIPS
    w~_k = prod_j w_j, IIPS w_k, RIPS prod_{j<=k} w_j: give SIPS and RIPS each position's
    probability given the items above it, IIPS its marginal one (OBP's three propensities).
    Click metrics (Joachims et al. 2017): a click c at logged position k_d counts c / p_{k_d};
    per context DCG@k sums it over the clicked items the new ranking places at r <= k, over
    log2(1 + r); precision@k the same without the discount, over k; recall@k over all the
    context's weighted clicks. Means over contexts: every context for DCG and precision (0
    without a click), those with a click for recall (``n``). ``on_policy`` is the logged
    ranking's own value (r = k_d); see docs/off-policy.md.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> logs = pl.DataFrame({"context_id": [1, 2, 3, 4], "propensity": [0.5, 0.25, 0.5, 0.25],
    ...                      "reward": [1.0, 0.0, 0.0, 1.0], "target": [1.0, 0.0, 1.0, 0.5]})
    >>> out = recframe.off_policy(logs, ["ips", "snips"], target="target", position=None)
    >>> out.select("estimator", "value", "on_policy", "ess").rows()
    [('ips', 1.0, 0.5, 3.0), ('snips', 0.6666666666666666, 0.5, 3.0)]

    Clicks on rankings: a click at position 2 (propensity 0.5) counts 2; the new ranking puts
    that item first (DCG 2 / log2(2)), and the second context has no click (0):

    >>> shown = pl.DataFrame({"context_id": [1, 1, 2, 2], "item_id": ["a", "b", "a", "b"],
    ...                       "position": [1, 2, 1, 2], "click": [0, 1, 0, 0]})
    >>> new = pl.DataFrame({"context_id": [1, 1, 2], "item_id": ["b", "a", "a"], "rank": [1, 2, 1]})
    >>> seen = pl.DataFrame({"position": [1, 2], "propensity": [1.0, 0.5]})
    >>> out = recframe.off_policy(shown, ["click_dcg", "click_recall"], recommendations=new,
    ...                           examination=seen, reward="click", k=1)
    >>> out.select("estimator", "value", "n", "on_policy").rows()
    [('click_dcg@1', 1.0, 2, 0.0), ('click_recall@1', 1.0, 1, 0.0)]
    """
    if _clicks.asked(estimators):
        _clicks_alone(ci_method, per_context, partitions)
        names = dict(context=context, item=item, position=position, propensity=propensity, reward=reward, rank=rank)
        unused = dict(target=target, predicted=predicted, target_predicted=target_predicted, max_weight=max_weight)
        unused["switch_threshold"] = switch_threshold
        return _clicks.estimate(logs, [estimators] if isinstance(estimators, str) else list(estimators or []), _z(ci),
                                recommendations=recommendations, examination=examination, k=k, columns=names, by=by,
                                unused=unused)  # fmt: skip
    chosen, z = _estimators(estimators, predicted, target_predicted, max_weight, switch_threshold), _z(ci)
    _one_target(target, recommendations)
    stats.check_choice("ci_method", ci_method, CI_METHODS)
    n_resamples, _ = stats.check_resampling(n_resamples, seed)
    keys = [by] if isinstance(by, str) else list(by or [])
    lf, engine = _frames.lazy(logs, "logs")
    sets = _sets(partitions, engine, chosen, ci_method, per_context)
    names = dict(context=context, item=item, position=position, propensity=propensity, reward=reward, target=target)
    names |= dict(predicted=predicted, target_predicted=None if recommendations is not None else target_predicted)
    rows, slots = _logged_rows(lf, names, keys, recommendations, rank, target_predicted)
    rows = rows.with_columns((nw.col(_TARGET) / nw.col(_PROPENSITY)).alias(op.WEIGHT))
    settings = op.Logged(max_weight, switch_threshold)
    if sets is not None:
        sums = _partitioned(rows, slots, engine, keys, names, chosen, settings, sets)
        return engine.from_lazy(op.finished(sums, keys, chosen, z))
    sums = _checked(rows, slots, engine, keys, names, chosen, settings)  # (the checks ride on the sums)
    if per_context:
        if ci_method != "normal":
            raise RecframeError(
                f"{fix('per_context', True)} gives each context's values, with no interval, and "
                f"{ref('ci_method', ci_method)} asks for one.",
                "leave ci_method out with per_context=True: recframe.compare of those values gives the paired test.",
            )
        units = engine.after_checks(_units(rows, keys, chosen), sums)
        return engine.from_lazy(_per_context(units, keys, names, chosen, settings))
    out = op.finished(sums, keys, chosen, z)
    if ci_method == "poisson":
        seed_keys = _poisson.seed_keys(_poisson.seed_of(seed))
        bounds = op.poisson_bounds(
            _units(rows, keys, chosen), keys, _CONTEXT, chosen, settings, n_resamples, seed_keys, float(ci)
        )
        if keys:  # (before with_bounds, which sorts: a cross join keeps no order)
            out = engine.after_checks(out, _no_null_keys(rows, engine, keys))
        out = op.with_bounds(out, bounds, keys, chosen)
    return engine.from_lazy(out)


def _no_null_keys(rows: nw.LazyFrame, engine: _frames.Engine, keys: list[str]) -> nw.LazyFrame:
    """The Poisson bounds are matched to their group by its keys, and a null key matches
    nothing (its interval would be null, silently): refused by column, with the other checks
    (a SQL engine now, Polars when the result is computed)."""

    def inspect(table: Any) -> None:
        found = table if isinstance(table, nw.DataFrame) else table.collect()
        for key in keys:
            if found.item(0, key):
                raise RecframeError(
                    f"column {key!r} (in {ref('by')}) has {found.item(0, key)} null value(s), and "
                    f"{fix('ci_method', 'poisson')} matches each group's interval by its keys.",
                    f"drop or fill them first, e.g. df.filter(pl.col({key!r}).is_not_null()), or pass "
                    f"{fix('ci_method', 'normal')}.",
                )

    return engine.check(rows.select(*(nw.col(k).is_null().cast(nw.Int64).sum().alias(k) for k in keys)), inspect)


#: the intervals off_policy gives (the summary's names: ``"poisson"``, its in-engine bootstrap)
CI_METHODS = ("normal", "poisson")


def _units(rows: nw.LazyFrame, keys: list[str], chosen: list[op.Estimator]) -> nw.LazyFrame:
    """The estimators' units: the logged rows, or one row per slate (their checks ride on the
    sums, :func:`_checked`: a frame read beside them waits for those)."""
    return op.slates(rows, keys, _CONTEXT, _POSITION, chosen) if chosen[0].per_row is not None else rows


def _per_context(
    units: nw.LazyFrame, keys: list[str], names: dict[str, str | None], chosen: list[op.Estimator], settings: op.Logged
) -> nw.LazyFrame:
    """Each unit's value of each estimator (:func:`recframe.statistics._off_policy.per_unit`),
    its context (and position: a single-slot log's row) under the logs' names."""
    unit = {_CONTEXT: str(names["context"])}
    if chosen[0].per_row is None and names["position"] is not None:
        unit[_POSITION] = names["position"]
    taken = [k for k in keys if k in unit.values()]
    if taken:
        raise RecframeError(
            f"{ref('by', keys)} names {taken[0]!r}, the column of each context's values with per_context=True.",
            f"leave {taken[0]!r} out of {ref('by')}.",
        )
    return op.per_unit(units, keys, list(unit), chosen, settings).rename(unit)


def _sets(partitions: Any, engine: _frames.Engine, chosen: list[op.Estimator], ci_method: str, per_context: bool) -> int | None:
    """``partitions=`` checked: None (one pass) or the number of sets of contexts; refused, by
    the declarations, where the parts of sets do not add up (as the summary's refusals)."""
    if partitions is None:
        return None
    sets = v.whole_at_least("partitions", partitions, 1, "is not a whole number of at least 1.",
                            f"pass the number of sets of contexts to estimate one after another, e.g. {fix('partitions', 8)}, "
                            "or leave it out for one pass.")  # fmt: skip
    if not engine.in_process:
        raise RecframeError(
            f"{ref('partitions')} estimates sets of contexts one after another in Polars, and the logs are a "
            f"{engine.name} frame, which holds its own memory.",
            f"leave {ref('partitions')} out (set {engine.name}'s memory limit instead), or pass the logs to Polars: "
            'pl.scan_parquet("logs/*.parquet").',
        )
    if per_context:
        raise RecframeError(
            f"{fix('per_context', True)} gives a row per context, and {ref('partitions')} keeps each set's sums alone.",
            f"leave {ref('partitions')} out with per_context=True.",
        )
    declared: list[Any] = [*chosen, *([_summary.AGGREGATES["poisson"]] if ci_method == "poisson" else [])]
    for x in declared:
        if not x.adds_up:
            what = f"{fix('ci_method', 'poisson')} resamples every context at once" if x.name == "poisson" else (
                f"the estimator {x.name!r} does not add up over sets of contexts")  # fmt: skip
            raise RecframeError(
                f"{what}, and {ref('partitions')} keeps only each set's sums.",
                f"leave {ref('partitions')} out, or pass {fix('ci_method', 'normal')}"
                + ("." if x.name == "poisson" else f" and leave {x.name!r} out of {ref('estimators')}."),
            )
    return sets


def _partitioned(
    rows: nw.LazyFrame,
    slots: _Slots,
    engine: _frames.Engine,
    keys: list[str],
    names: dict[str, str | None],
    chosen: list[op.Estimator],
    settings: op.Logged,
    sets: int,
) -> nw.LazyFrame:
    """The parts of `sets` sets of contexts (a hash of the context, as the summary's sets of
    users), each checked and summed by Polars' streaming engine, then added
    (:func:`recframe.statistics._parts.add`, each part by its rule): those of one pass."""
    native, logs = rows.to_native(), slots.logs.to_native()
    hashed, logged = _partitions.hash_of(native, _CONTEXT), _partitions.hash_of(logs, _CONTEXT)
    distinct = native.select(hashed.n_unique()).collect(engine="streaming").item()
    sets = max(1, min(sets, int(distinct)))  # (more sets than contexts would be empty)
    found = []
    for p in range(sets):  # (each set built when it is summed, never all at once)
        one = nw.from_native(native.filter(hashed % sets == p))
        own = replace(slots, logs=nw.from_native(logs.filter(logged % sets == p)))
        sums = _checked(one, own, engine, keys, names, chosen, settings)
        found.append(sums.drop(_CHECK_PARTS, strict=False).to_native().collect(engine="streaming"))
    rule = _parts.rules([op.DIAGNOSTICS, *chosen])
    return nw.from_native(_parts.add(found, keys, rule.__getitem__))


def _clicks_alone(ci_method: str, per_context: bool, partitions: int | None) -> None:
    """The click metrics have their own finish: the bootstrap, per-context values and
    partitions are the weighted estimators' (refused, not ignored)."""
    given: dict[str, Any] = {"ci_method": ci_method if ci_method != "normal" else None}
    given |= {"per_context": per_context or None, "partitions": partitions}
    for arg, value in given.items():
        if value is not None:
            raise RecframeError(
                f"{ref(arg, value)} is not available with the click metrics (click_dcg, click_precision, click_recall).",
                f"leave {ref(arg)} out for them: their interval is the normal one, from the contexts' values.",
            )


def _one_target(target: str | None, recommendations: Any) -> None:
    if (target is None) == (recommendations is None):
        raise RecframeError(
            f"give the target policy one way: {ref('target')} or {ref('recommendations')}.",
            f"pass {fix('target', 'target_probability')} (a column of the logs) or the target's rankings as recommendations=.",
        )


def _estimators(
    asked: Sequence[str] | None,
    predicted: str | None,
    target_predicted: str | None,
    max_weight: float | None,
    switch_threshold: float | None,
) -> list[op.Estimator]:
    """The estimators asked for (or the default set), each with the inputs it needs."""
    given = dict(predicted=predicted, target_predicted=target_predicted, max_weight=max_weight)
    given["switch_threshold"] = switch_threshold
    if asked is None:
        asked = [name for name, e in op.ESTIMATORS.items() if e.needs and all(given[x] is not None for x in e.needs)]
        asked = ["ips", "snips", *asked]
    if isinstance(asked, str):
        asked = [asked]
    known = {**op.ESTIMATORS, **op.SLATE_ESTIMATORS}
    out = []
    for name in asked:
        if name not in known:
            raise RecframeError(
                f"{ref('estimators', list(asked))}: {name!r} is no estimator.",
                f"pass some of {fix('estimators', list(known))}.",
            )
        missing = [x for x in known[name].needs if given[x] is None]
        if missing:
            raise RecframeError(
                f"the estimator {name!r} needs {ref(missing[0])}, which is not given.",
                f"pass {ref(missing[0])} (see recframe.off_policy's docs), or leave {name!r} out of {ref('estimators')}.",
            )
        out.append(known[name])
    if len({e.per_row is None for e in out}) > 1:
        raise RecframeError(
            f"{ref('estimators', list(asked))} mixes slate estimators (a slate per context) with single-slot "
            "ones (a unit per logged row).",
            "estimate the two kinds in two calls.",
        )
    if max_weight is not None and not (_finite(max_weight) and max_weight > 0):
        raise RecframeError(f"{ref('max_weight', max_weight)} must be a number > 0.", f"pass e.g. {fix('max_weight', 10.0)}.")
    if switch_threshold is not None and not (_finite(switch_threshold) and switch_threshold >= 0):
        raise RecframeError(
            f"{ref('switch_threshold', switch_threshold)} must be a number >= 0.", f"pass e.g. {fix('switch_threshold', 10.0)}."
        )
    return out


def _finite(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _z(ci: Any) -> float:
    if not (_finite(ci) and 0 < ci < 1):
        raise RecframeError(f"{ref('ci', ci)} must be a coverage between 0 and 1.", f"pass e.g. {fix('ci', 0.95)}.")
    return NormalDist().inv_cdf((1 + ci) / 2)


def _logged_rows(
    lf: nw.LazyFrame,
    names: dict[str, str | None],
    keys: list[str],
    recommendations: Any,
    rank: str,
    target_predicted: str | None,
) -> tuple[nw.LazyFrame, _Slots]:
    """The logs as internal columns (weights come next): keys, context, position, propensity,
    reward, target probability and the predictions asked for; with ``recommendations=``, the
    target's probability and prediction from its item at the logged position. And the logs'
    own slots, where the duplicate check reads them (before any join)."""
    schema = _frames.schema_of(lf, "logs")
    given = {arg: name for arg, name in names.items() if name is not None and (arg != "item" or recommendations is not None)}
    recs_schema: dict[str, Any] = {}
    recs = None
    if recommendations is not None:
        recs, recs_engine = _frames.lazy(recommendations, "recommendations")
        _frames.same_engine(lf, recs, "recommendations")
        recs_schema = _frames.schema_of(recs, "recommendations")
    log_keys = [k for k in keys if k in schema or k not in recs_schema]
    v.check_columns(schema, [*given.items(), *(("by", k) for k in log_keys)], "logs")
    op.refuse_key_names(keys)
    numeric = ["propensity", "reward", "target", "predicted", "target_predicted"]
    op.refuse_non_numbers(schema, given, [a for a in numeric if a in given] + (["position"] if "position" in given else []))
    float_of = {"propensity": _PROPENSITY, "reward": op.REWARD, "target": _TARGET}
    float_of |= {"predicted": op.PREDICTED, "target_predicted": op.TARGET_PREDICTED}
    where = nw.col(given["position"]).cast(nw.Int64) if "position" in given else nw.lit(1, dtype=nw.Int64)
    rows = lf.select(
        *log_keys,
        nw.col(given["context"]).alias(_CONTEXT),
        where.alias(_POSITION),
        *(nw.col(given[a]).cast(nw.Float64).alias(c) for a, c in float_of.items() if a in given),
        *([nw.col(given["item"]).alias(_ITEM)] if recs is not None else []),
    )
    slots = _Slots(rows, [k for k in keys if k in log_keys], [k for k in keys if k not in log_keys], recs is not None)
    if recs is None:
        return rows, slots
    # the models' names are read at the call where that is cheap: rankings in memory, or DuckDB
    listed = recs_engine.kind != "polars-lazy" and (recs_engine.in_process or recs_engine.name == "DuckDB")
    return _joined(rows, recs, recs_schema, keys, log_keys, names, rank, target_predicted, listed), slots


def _joined(
    rows: nw.LazyFrame,
    recs: nw.LazyFrame,
    schema: dict[str, Any],
    keys: list[str],
    log_keys: list[str],
    names: dict[str, str | None],
    rank: str,
    target_predicted: str | None,
    listed: bool = False,
) -> nw.LazyFrame:
    """The logged rows of every target ranking (one per value of the model keys, the ``by``
    keys of the recommendations alone), with its item at the logged position: probability 1
    where that is the logged item, else 0; its prediction there (0 where it ranks none).
    ``listed``: the models may be read now (:func:`_few_models`)."""
    context, item = str(names["context"]), str(names["item"])
    wanted = [("context", context), ("item", item), ("rank", rank)]
    wanted += [("by", k) for k in keys if k in schema] + ([("target_predicted", target_predicted)] if target_predicted else [])
    v.check_columns(schema, wanted, "recommendations")
    model_keys = [k for k in keys if k not in log_keys]
    shared = [k for k in keys if k in log_keys and k in schema]
    target = recs.select(
        *model_keys,
        *shared,
        nw.col(context).alias(_CONTEXT),
        nw.col(rank).cast(nw.Int64).alias(_POSITION),
        nw.col(item).alias(_TARGET_ITEM),
        *([nw.col(target_predicted).cast(nw.Float64).alias(op.TARGET_PREDICTED)] if target_predicted else []),
    )
    # a ranking placing two items at one logged slot adds a joined row: the checks count them
    on = [*shared, _CONTEXT, _POSITION]
    if names["position"] is None:
        # every logged row is at position 1: a join on the context alone (one key fewer to hash)
        target, on = target.filter(nw.col(_POSITION) == 1).drop(_POSITION), on[:-1]
    models = _few_models(target, model_keys, schema) if model_keys and listed else None
    if models is not None:
        each = []
        for values in models:
            one = target.filter(*(nw.col(k) == v for k, v in zip(model_keys, values))).drop(model_keys)
            named = (nw.lit(v, dtype=schema[k]).alias(k) for k, v in zip(model_keys, values))
            each.append(rows.join(one, on=on, how="left").with_columns(*named))
        rows = nw.concat(each, how="vertical") if len(each) > 1 else each[0]
    else:
        if model_keys:
            rows = rows.join(target.select(model_keys).unique(), how="cross")
        rows = rows.join(target, on=[*model_keys, *on], how="left")
    placed = ~nw.col(_TARGET_ITEM).is_null()
    shown = nw.when(placed & (nw.col(_TARGET_ITEM) == nw.col(_ITEM))).then(1.0).otherwise(0.0)
    out = rows.with_columns(shown.alias(_TARGET))
    if target_predicted:
        out = out.with_columns(nw.when(placed).then(nw.col(op.TARGET_PREDICTED)).otherwise(0.0).alias(op.TARGET_PREDICTED))
    return out.drop(_TARGET_ITEM, _ITEM)


_FEW_MODELS = 32


def _few_models(target: nw.LazyFrame, model_keys: list[str], schema: dict[str, Any]) -> list[tuple[Any, ...]] | None:
    """The models' key values when they are a few plain ones (strings or integers, no null),
    else None. Each model is then joined with the logs on its own, on the context and
    position: a join on fewer, plainer keys than the model's too after a cross join with the
    models (the join alone, 1M logged slots, 3 models, position=None: 2.3 s -> 0.7 s on Polars)."""
    if not all(schema[k] == nw.String or schema[k].is_integer() for k in model_keys):
        return None
    values = target.select(model_keys).unique().head(_FEW_MODELS + 1).collect().rows()
    if not values or len(values) > _FEW_MODELS or any(v is None for row in values for v in row):
        return None
    return sorted(values)


@dataclass(frozen=True)
class _Slots:
    """The logs' rows before the join with the target's rankings, where the duplicate check
    reads the logged slots (their keys ``log_keys``): a slot repeats in the joined rows of a
    model exactly where it repeats in the logs, and the logs are the smaller (1 / models).
    ``model_keys``: the keys of the rankings alone; ``joined``: whether rankings were joined."""

    logs: nw.LazyFrame
    log_keys: list[str]
    model_keys: list[str]
    joined: bool


def _checked(
    rows: nw.LazyFrame,
    slots: _Slots,
    engine: _frames.Engine,
    keys: list[str],
    names: dict[str, str | None],
    chosen: list[op.Estimator],
    settings: op.Logged,
) -> nw.LazyFrame:
    """The parts per group with the checks' counts and extremes summed in the same
    aggregation (one pass over the rows), refused from that small table: on a SQL engine now,
    in Polars when it is computed (an eager input raises in the call, a lazy one at collect).
    Slates sum their rows per slate first: their checks are an aggregation of their own."""
    checks = _check_parts(rows.collect_schema())

    def inspect(table: Any) -> None:
        _check(table if isinstance(table, nw.DataFrame) else table.collect(), rows, slots, engine, keys, names)

    parts = op.parts_of(chosen)
    if chosen[0].per_row is None:
        have = {p.name for p in parts}
        sums = op.parts_frame(rows, keys, [*parts, *(p for p in checks if p.name not in have)], settings)
        return engine.check(sums, inspect)
    counted = engine.check(op.parts_frame(rows, keys, checks, settings), inspect)
    sums = op.parts_frame(op.slates(rows, keys, _CONTEXT, _POSITION, chosen), keys, parts, settings)
    return engine.after_checks(sums, counted)


_FLOATS = {
    "propensity": _PROPENSITY,
    "reward": op.REWARD,
    "target": _TARGET,
    "predicted": op.PREDICTED,
    "target_predicted": op.TARGET_PREDICTED,
}


def _defects(schema: Any) -> dict[str, nw.Expr]:
    """Each defect the checks refuse, as a condition on a joined row (see off_policy's Notes)."""
    p, pi, w, pos = nw.col(_PROPENSITY), nw.col(_TARGET), nw.col(op.WEIGHT), nw.col(_POSITION)
    floats = {arg: c for arg, c in _FLOATS.items() if c in schema}
    out = {f"__rf_bad_{arg}": nw.col(c).is_null() | ~nw.col(c).is_finite() for arg, c in floats.items()}
    out |= {"__rf_out_propensity": (p <= 0) | (p > 1), "__rf_out_target": (pi < 0) | (pi > 1)}
    out |= {"__rf_bad_position": pos.is_null(), "__rf_out_position": pos < 1}
    out |= {"__rf_bad_context": nw.col(_CONTEXT).is_null()}
    return out | {"__rf_bad_weight": w.is_null() | ~w.is_finite() | (w < 0)}


def _flag(condition: nw.Expr) -> nw.Expr:
    return nw.when(condition).then(1).otherwise(0).cast(nw.Int64)


def _check_parts(schema: Any) -> list[op.Part]:
    """What the checks count per group, as parts summed beside the estimators': the rows
    (``n``) and the rows with any defect (one flag: which defect and how often is counted
    again only when there is one, :func:`_seen`)."""
    defects = list(_defects(schema).values())
    anything = defects[0]
    for condition in defects[1:]:
        anything = anything | condition
    return [op.N, op.Part(_CHECK_PARTS, lambda x: _flag(anything))]


def _seen(rows: nw.LazyFrame) -> dict[str, Any]:
    """Each defect's rows and the extremes its refusal quotes, in one aggregate query."""
    flags = {name: _flag(condition) for name, condition in _defects(rows.collect_schema()).items()}
    extremes = [nw.col(c).min().alias(f"{c}_min") for c in (_PROPENSITY, _TARGET, _POSITION)]
    extremes += [nw.col(c).max().alias(f"{c}_max") for c in (_PROPENSITY, _TARGET)]
    found = rows.with_columns(**flags).select(*(nw.col(f).sum() for f in flags), *extremes).collect()
    return {c: found.item(0, c) for c in found.columns}


def _bad(arg: str, column: str | None, count: int, holds: str, what: str, hint: str) -> RecframeError:
    named = f"column {column!r} (the {ref(arg)} argument)" if column else f"the target probability ({ref(arg)})"
    return RecframeError(f"{named} holds {holds} in {count} row{'s' if count != 1 else ''}: {what}", hint)


def _check(
    table: nw.DataFrame,
    rows: nw.LazyFrame,
    slots: _Slots,
    engine: _frames.Engine,
    keys: list[str],
    names: dict[str, str | None],
) -> None:
    """Refuse, by name, what would make an estimate wrong (see off_policy's Notes), from the
    parts per group (`table`, with :func:`_check_parts`' columns) and one pass over the logs'
    slots; the joined `rows` are read again only to name a defect found. A ranking placing
    two items at one logged slot of a model adds a joined row: the joined rows then outnumber
    the logged rows times the models."""
    defects = int(table.get_column(_CHECK_PARTS).sum() or 0) if len(table) else 0
    seen: dict[str, Any] = _seen(rows) if defects else {f: 0 for f in _defects(rows.collect_schema())}
    logged, repeated = _slot_counts(slots, engine)
    joined = int(table.get_column("n").sum() or 0) if len(table) else 0
    models = len(table.select(slots.model_keys).unique()) if slots.model_keys else 1
    seen["__rf_placed"] = (2 if joined > logged * models else 1) if slots.joined else None
    _refuse(seen, names)
    if repeated > 1 and joined:
        _refuse_duplicates(slots, table, keys, names)


def _refuse(seen: dict[str, Any], names: dict[str, str | None]) -> None:
    """The first defect the check query counted, as a refusal."""
    for arg in ("propensity", "reward", "target", "predicted", "target_predicted"):
        if seen.get(f"__rf_bad_{arg}"):
            raise _bad(arg, names.get(arg), seen[f"__rf_bad_{arg}"], "null, NaN or infinite values", "each needs a number.",
                       f"drop those rows or fill them before the call ({ref(arg)}).")  # fmt: skip
    if seen["__rf_out_propensity"]:
        low = seen[f"{_PROPENSITY}_min"]
        value = low if low <= 0 else seen[f"{_PROPENSITY}_max"]
        raise _bad("propensity", names["propensity"], seen["__rf_out_propensity"], f"{value!r} and other values outside (0, 1]",
                   "a propensity is the logging policy's probability of the logged item, and only an item it could show "
                   "(probability > 0) was logged.", "pass the logging policy's probabilities; a propensity of 0 means the "
                   "log is not from that policy.")  # fmt: skip
    if seen["__rf_out_target"] and names.get("target"):
        low = seen[f"{_TARGET}_min"]
        value = low if low < 0 else seen[f"{_TARGET}_max"]
        raise _bad("target", names["target"], seen["__rf_out_target"], f"{value!r} and other values outside [0, 1]",
                   "the target policy's probability of the logged item.", "pass probabilities, not scores.")  # fmt: skip
    if seen["__rf_bad_context"]:
        raise _bad("context", names["context"], seen["__rf_bad_context"], "missing values", "each logged slot has a context.",
                   "drop those rows, or fill them with an id of their own.")  # fmt: skip
    if seen["__rf_bad_position"] or seen["__rf_out_position"]:
        count = seen["__rf_bad_position"] or seen["__rf_out_position"]
        holds = "missing values" if seen["__rf_bad_position"] else f"{seen[f'{_POSITION}_min']!r} and other positions below 1"
        raise _bad("position", names["position"], count, holds, "each logged slot has a position, 1 at the top.",
                   f"fill them, or pass {fix('position', None)} for a single-slot log.")  # fmt: skip
    if seen["__rf_bad_weight"]:
        raise RecframeError(
            f"{seen['__rf_bad_weight']} rows have a negative or non-finite weight target / {ref('propensity')}.",
            "a propensity too small to divide by (below 1e-300?) is a defect of the log: drop those rows.",
        )
    if seen["__rf_placed"] is not None and seen["__rf_placed"] > 1:
        raise RecframeError(
            f"{ref('recommendations')} place several items at the same rank of one context (and model).",
            "give one row per (context, rank) of each ranking.",
        )


def _in_order(table: nw.DataFrame, slot: list[str]) -> bool:
    """Whether each row's slot comes strictly after the one before (logs sorted by it, as they
    usually are): then no slot repeats, which costs one pass instead of a hash of every slot
    (0.2 s at 1M rows, two thirds of a call). A null or a step back: the full check decides."""
    after: nw.Expr = nw.lit(False)
    for column in reversed(slot):
        now, before = nw.col(column), nw.col(column).shift(1)
        after = (now > before) | ((now == before) & after)
    ordered = table.select(after.fill_null(False).alias("__rf_after")).get_column("__rf_after")
    return bool(ordered.tail(len(ordered) - 1).all()) if len(ordered) > 1 else True


def _slot_counts(slots: _Slots, engine: _frames.Engine) -> tuple[int, int]:
    """The logs' rows and the most rows of one slot (keys, context, position): in Polars one
    pass when the logs are in slot order, else (and on a SQL engine) one group-by."""
    slot = [*slots.log_keys, _CONTEXT, _POSITION]
    logs = slots.logs.select(slot)
    if engine.in_process:
        table = logs.collect()
        if _in_order(table, slot):
            return len(table), min(len(table), 1)
        logs = table.lazy()
    n = nw.col("__rf_n")
    found = logs.group_by(slot).agg(nw.len().alias("__rf_n")).select(n.sum().alias("rows"), n.max().alias("most"))
    rows, most = found.collect().row(0)
    return int(rows or 0), int(most or 0)


def _refuse_duplicates(slots: _Slots, table: nw.DataFrame, keys: list[str], names: dict[str, str | None]) -> None:
    """One row per logged slot: a second row of a (context, position) in a group is refused,
    the first such slot in the order of the keys named. The joined rows of a repeated slot
    repeat it in every model: the first is the logs' first with the first model (``table``,
    the parts per group, has every model)."""
    slot = [*slots.log_keys, _CONTEXT, _POSITION]
    dup = slots.logs.select(slot).group_by(slot).agg(nw.len().alias("__rf_n")).filter(nw.col("__rf_n") > 1)
    first = dup.sort(slot).head(1).collect()
    if len(first) == 0:
        return
    values = {c: first.item(0, c) for c in slots.log_keys}
    if slots.model_keys:
        model = table.select(slots.model_keys).unique().sort(slots.model_keys)
        values |= {c: model.item(0, c) for c in slots.model_keys}
    where = ", ".join(f"{c}={values[c]!r}" for c in keys)
    context, position = first.item(0, _CONTEXT), first.item(0, _POSITION)
    shown = f"{names['context']}={context!r}" + (f", {names['position']}={position!r}" if names["position"] else "")
    raise RecframeError(
        f"the logs hold {first.item(0, '__rf_n')} rows of one logged slot ({shown}{', ' + where if where else ''}) in "
        f"column {names['context']!r} ({ref('context')}).",
        "one row per (context, position) of each group: pass the slot's position column as position=, or the "
        "key that tells the copies apart (the model) as by=.",
    )
