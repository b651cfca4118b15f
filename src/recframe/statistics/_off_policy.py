"""Off-policy estimators of a target policy's value from logged feedback, declared as additive
parts and a finish (issue 61), the way a metric is declared as terms and a finish.

Each logged row (one slot of one context) carries the importance weight ``w = pi_e / p`` (the
target's probability of the logged action over the logging policy's), the reward ``r`` and,
for the model-based estimators, ``q`` (the predicted reward of the logged action) and ``qe``
(the target's expected predicted reward, ``sum_a pi_e(a|x) q(x, a)``). An estimator names its
:class:`Part` s: a value per row whose sum (or max) per group is one number of the group; the
parts of two disjoint sets of contexts add as the summary's do (``_parts.add``), so one pass,
partitions and every engine give the same parts; ``finish`` turns a group's parts into its
value and standard error (whence the normal interval), as narwhals expressions on the row of
parts. A slate estimator (:data:`SLATE_ESTIMATORS`) first sums each slate's rows
(:func:`slates`): its units are then the slates, and its parts and finish a mean's.

>>> [e.name for e in ESTIMATORS.values()]
['ips', 'snips', 'clipped_ips', 'dm', 'dr', 'sndr', 'switch_dr']
>>> ESTIMATORS["ips"].needs, ESTIMATORS["switch_dr"].needs
((), ('predicted', 'target_predicted', 'switch_threshold'))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import narwhals as nw

from recframe import _names
from recframe.engine import _frames
from recframe.engine import _validate as v
from recframe.errors import RecframeError, ref
from recframe.statistics import _parts, _poisson

#: the internal columns of a logged row, set by recframe.off_policy before the parts are summed
WEIGHT, REWARD, PREDICTED, TARGET_PREDICTED = "__rf_w", "__rf_r", "__rf_q", "__rf_qe"
#: the columns of the result, per group and estimator (after the ``by`` keys)
COLUMNS = ("estimator", "value", "se", "lo", "hi", "n", "on_policy", "lift", "ess", "largest_weight", "supported")


def refuse_non_numbers(schema: Any, columns: dict[str, Any], args: Sequence[str]) -> None:
    """Each named argument's column holds numbers (a reward may be boolean): refused by name."""
    for arg in args:
        dtype = schema[columns[arg]]
        if not v.is_number(dtype, allow_bool=arg == "reward"):
            raise RecframeError(
                f"column {columns[arg]!r} (the {ref(arg)} argument) holds {dtype}, not numbers.",
                f"pass {ref(arg)} a column of numbers.",
            )


def refuse_key_names(keys: list[str]) -> None:
    """A ``by`` key named as a column of the result would be overwritten: refused."""
    for key in keys:
        if key in COLUMNS or key.startswith("__rf_"):
            raise RecframeError(
                f"{ref('by', keys)} names a column {key!r}, which the result of off_policy also has.",
                f"rename that column first, e.g. to {key + '_key'!r}.",
            )


@dataclass(frozen=True)
class Logged:
    """What a part reads on one logged row (internal columns), and the call's settings."""

    max_weight: float | None = None
    switch_threshold: float | None = None
    w: nw.Expr = field(default_factory=lambda: nw.col(WEIGHT))
    r: nw.Expr = field(default_factory=lambda: nw.col(REWARD))
    q: nw.Expr = field(default_factory=lambda: nw.col(PREDICTED))
    qe: nw.Expr = field(default_factory=lambda: nw.col(TARGET_PREDICTED))


@dataclass(frozen=True)
class Part:
    """One additive number of a group: ``value(rows)`` per logged row, summed (or its max taken)
    over the group's rows; two sets' parts add by the same rule (``agg``, a key of
    :data:`recframe.statistics._parts.RULES`). Parts of the same name are the same part."""

    name: str
    value: Callable[[Logged], nw.Expr]
    agg: Literal["sum", "max"] = "sum"


#: a finish reads a group's parts by name (and the normal quantile z of the interval) and gives
#: the estimate's value and standard error; its interval is value -/+ z se (:func:`_normal`)
Finish = Callable[[Callable[[str], nw.Expr], float], dict[str, nw.Expr]]


@dataclass(frozen=True)
class Estimator:
    """An estimator as an aggregate (:class:`recframe.statistics._parts.Declared`): its parts,
    its finish (value and se, whence the normal interval) and what it can do (``adds_up``: parts of partitions add;
    ``in_engine``: every part and the finish are narwhals expressions). ``needs``: the call's
    inputs it reads beyond weights and rewards."""

    name: str
    parts: tuple[Part, ...]
    finish: Finish
    adds_up: bool = True
    in_engine: bool = True
    needs: tuple[str, ...] = ()
    #: a slate estimator: its value per logged row (read from :class:`SlateRow`), summed per
    #: slate (context) first; the slates are then its units, as rows are a single slot's
    per_row: Callable[[SlateRow], nw.Expr] | None = None

    @property
    def add(self) -> dict[str, str]:
        """How two sets' parts combine: each part by its own rule (``agg``: sum or max)."""
        return {p.name: p.agg for p in self.parts}


N = Part("n", lambda x: nw.lit(1, dtype=nw.Int64))
LARGEST = Part("largest", lambda x: x.w, "max")


def _normal(value: nw.Expr, se: nw.Expr, z: float) -> dict[str, nw.Expr]:
    return {"value": value, "se": se, "lo": value - z * se, "hi": value + z * se}


def _positive(x: nw.Expr) -> nw.Expr:
    # a variance from sums can come out a rounding error below zero
    return nw.when(x > 0).then(x).otherwise(0.0)


def _mean(name: str, value: Callable[[Logged], nw.Expr], needs: tuple[str, ...] = ()) -> Estimator:
    """An estimator that is the mean of a per-row value v: parts n, sum v, sum v^2; the standard
    error is the sample standard deviation (n - 1) over sqrt(n)."""
    total, squares = Part(f"{name}_v", value), Part(f"{name}_v2", lambda x: value(x) * value(x))

    def finish(s: Callable[[str], nw.Expr], z: float) -> dict[str, nw.Expr]:
        n, t, t2 = s("n"), s(total.name), s(squares.name)
        variance = _positive(t2 - t * t / n) / (n - 1)
        return {"value": t / n, "se": nw.when(n > 1).then((variance / n).sqrt())}

    return Estimator(name, (N, total, squares), finish, needs=needs)


def _self_normalized(name: str, direct: bool, needs: tuple[str, ...] = ()) -> Estimator:
    """mean(qe) + sum w d / sum w with d = r - q (``direct``; SNDR), or sum w r / sum w (SNIPS:
    qe = q = 0). The standard error is the delta method's: with m = mean(qe), D = sum w d /
    sum w and wbar = sum w / n, each row's influence is psi = qe - m + w (d - D) / wbar, and
    se^2 = sum psi^2 / (n (n - 1)), which expands into the sums below."""

    def d(x: Logged) -> nw.Expr:
        return x.r - x.q if direct else x.r

    terms: dict[str, Callable[[Logged], nw.Expr]] = {
        "w": lambda x: x.w,
        "w2": lambda x: x.w * x.w,
        "wd": lambda x: x.w * d(x),
        "w2d": lambda x: x.w * x.w * d(x),
        "w2d2": lambda x: x.w * x.w * d(x) * d(x),
    }
    if direct:
        terms |= {
            "qe": lambda x: x.qe,
            "qe2": lambda x: x.qe * x.qe,
            "qew": lambda x: x.qe * x.w,
            "qewd": lambda x: x.qe * x.w * d(x),
        }
    parts = {key: Part(key if key in ("w", "w2") else f"{name}_{key}", value) for key, value in terms.items()}

    def finish(s: Callable[[str], nw.Expr], z: float) -> dict[str, nw.Expr]:
        n, sw = s("n"), s("w")
        big_d, wbar = s(parts["wd"].name) / sw, sw / n
        spread = (s(parts["w2d2"].name) - 2 * big_d * s(parts["w2d"].name) + big_d * big_d * s("w2")) / (wbar * wbar)
        value = big_d
        if direct:
            m = s(parts["qe"].name) / n
            value = m + big_d
            spread = spread + (s(parts["qe2"].name) - n * m * m)
            spread = spread + 2 * (s(parts["qewd"].name) - big_d * s(parts["qew"].name)) / wbar
        se = nw.when((n > 1) & (sw > 0)).then((_positive(spread) / (n * (n - 1))).sqrt())
        return {"value": nw.when(sw > 0).then(value), "se": se}

    return Estimator(name, (N, *parts.values()), finish, needs=needs)


def _clipped(x: Logged) -> nw.Expr:
    assert x.max_weight is not None
    return nw.when(x.w > x.max_weight).then(nw.lit(x.max_weight)).otherwise(x.w)


def _switched(x: Logged) -> nw.Expr:
    assert x.switch_threshold is not None
    return nw.when(x.w <= x.switch_threshold).then(x.w).otherwise(0.0)


DIRECT = ("predicted", "target_predicted")

PREFIX_WEIGHT, SLATE_WEIGHT = "__rf_w_prefix", "__rf_w_slate"


@dataclass(frozen=True)
class SlateRow:
    """What a slate estimator reads on one logged row of a slate (one context): the reward and
    three weights, from the positions' weights w_k: the row's own (independent IPS), the
    product over the slate's positions up to the row's (reward-interaction IPS, the cascade)
    and over all its positions (standard slate IPS)."""

    r: nw.Expr = field(default_factory=lambda: nw.col(REWARD))
    own: nw.Expr = field(default_factory=lambda: nw.col(WEIGHT))
    prefix: nw.Expr = field(default_factory=lambda: nw.col(PREFIX_WEIGHT))
    slate: nw.Expr = field(default_factory=lambda: nw.col(SLATE_WEIGHT))


def _slate(name: str, per_row: Callable[[SlateRow], nw.Expr]) -> Estimator:
    """The mean over slates of sum_k weight_k r_k: a mean estimator of the slate's sum."""
    mean = _mean(name, lambda x: nw.col(slate_column(name)))
    return Estimator(name, mean.parts, mean.finish, per_row=per_row)


def slate_column(name: str) -> str:
    return f"__rf_slate_{name}"


#: the slate estimators (Li et al. 2018; McInerney et al. 2020)
SLATE_ESTIMATORS: dict[str, Estimator] = {
    e.name: e
    for e in (
        _slate("sips", lambda x: x.slate * x.r),
        _slate("iips", lambda x: x.own * x.r),
        _slate("rips", lambda x: x.prefix * x.r),
    )
}


def slates(rows: nw.LazyFrame, keys: list[str], context: str, position: str, estimators: Sequence[Estimator]) -> nw.LazyFrame:
    """One row per slate (``keys`` and ``context``) from its positions' rows: each slate
    estimator's sum, the slate's reward (the sum of its rewards) and its weight (the product of
    its positions' weights: what the diagnostics read). Products are sums of logs, zero where a
    factor is zero (a count of zero weights rides along)."""
    slate, w = [*keys, context], nw.col(WEIGHT)
    zero = nw.when(w > 0).then(0).otherwise(1).cast(nw.Int64)
    log_w = nw.when(w > 0).then(w).otherwise(1.0).log()
    logs = rows.with_columns(zero.alias("__rf_zero"), log_w.alias("__rf_log_w"))
    z, lw = nw.col("__rf_zero"), nw.col("__rf_log_w")
    logs = logs.with_columns(
        z.cum_sum().over(*slate, order_by=position).alias("__rf_zero_prefix"),
        lw.cum_sum().over(*slate, order_by=position).alias("__rf_log_prefix"),
        z.sum().over(*slate).alias("__rf_zero_slate"),
        lw.sum().over(*slate).alias("__rf_log_slate"),
    )
    logs = logs.with_columns(
        nw.when(nw.col("__rf_zero_prefix") > 0).then(0.0).otherwise(nw.col("__rf_log_prefix").exp()).alias(PREFIX_WEIGHT),
        nw.when(nw.col("__rf_zero_slate") > 0).then(0.0).otherwise(nw.col("__rf_log_slate").exp()).alias(SLATE_WEIGHT),
    )
    x = SlateRow()
    per_row = {slate_column(e.name): e.per_row(x) for e in estimators if e.per_row is not None}
    logs = logs.with_columns(**per_row)
    return logs.group_by(slate).agg(
        *(nw.col(c).sum() for c in per_row), nw.col(REWARD).sum(), nw.col(SLATE_WEIGHT).max().alias(WEIGHT)
    )


#: every estimator, by the name ``estimators=`` takes, in the result's order
ESTIMATORS: dict[str, Estimator] = {
    e.name: e
    for e in (
        _mean("ips", lambda x: x.w * x.r),
        _self_normalized("snips", direct=False),
        _mean("clipped_ips", lambda x: _clipped(x) * x.r, ("max_weight",)),
        _mean("dm", lambda x: x.qe, ("target_predicted",)),
        _mean("dr", lambda x: x.qe + x.w * (x.r - x.q), DIRECT),
        _self_normalized("sndr", direct=True, needs=DIRECT),
        _mean("switch_dr", lambda x: x.qe + _switched(x) * (x.r - x.q), (*DIRECT, "switch_threshold")),
    )
}


def _diagnostics_finish(s: Callable[[str], nw.Expr], z: float) -> dict[str, nw.Expr]:
    n, sw, sw2 = s("n"), s("w"), s("w2")
    return {
        "on_policy": s("on_policy_r") / n,
        "ess": nw.when(sw2 > 0).then(sw * sw / sw2).otherwise(0.0),
        "largest_weight": s("largest"),
        "supported": s("supported") / n,
    }


#: what every estimate reports beside its value: the mean reward of the logs, the effective
#: sample size (sum w)^2 / sum w^2, the largest weight, the share of rows with w > 0
DIAGNOSTICS = Estimator(
    "diagnostics",
    (
        N,
        Part("on_policy_r", lambda x: x.r),
        Part("w", lambda x: x.w),
        Part("w2", lambda x: x.w * x.w),
        LARGEST,
        Part("supported", lambda x: nw.when(x.w > 0).then(1).otherwise(0).cast(nw.Int64)),
    ),
    _diagnostics_finish,
)


def parts_of(estimators: Sequence[Estimator]) -> list[Part]:
    """The parts the estimators and the diagnostics read, each once."""
    seen: dict[str, Part] = {}
    for estimator in (DIAGNOSTICS, *estimators):
        for part in estimator.parts:
            seen.setdefault(part.name, part)
    return list(seen.values())


def _part_column(name: str) -> str:
    return f"__rf_part_{name}"


def parts_frame(rows: nw.LazyFrame, keys: list[str], parts: Sequence[Part], settings: Logged) -> nw.LazyFrame:
    """One row per group (equal ``keys``; one row for none) with each part: each part's row
    value is a column first (portable: no conditional inside an aggregation), then plain sums
    and maxima per group."""
    valued = rows.with_columns(p.value(settings).alias(_part_column(p.name)) for p in parts)
    return _parts.per_group(valued, keys, *(getattr(nw.col(_part_column(p.name)), p.agg)().alias(p.name) for p in parts))


def finished(sums: nw.LazyFrame, keys: list[str], estimators: Sequence[Estimator], z: float) -> nw.LazyFrame:
    """The result from the parts: one row per group and estimator (in the order given), with
    the estimate, its normal interval and the diagnostics; sorted by the keys. Each finish is
    computed once as a column of the parts' row (so an expression tree is built once), then
    each estimator's row reads those columns."""

    def s(name: str) -> nw.Expr:
        return nw.col(name).cast(nw.Float64)

    wide = {f"__rf_{e.name}_{c}": x for e in estimators for c, x in e.finish(s, z).items()}
    wide |= {f"__rf_{c}": x for c, x in _diagnostics_finish(s, z).items()}
    # held (a SQL engine computes the finish once): each estimator's row reads these columns,
    # which Spark's optimizer would otherwise inline into every row (seconds of planning)
    table = _frames.runs_on(sums).hold(sums.with_columns(**{name: x.cast(nw.Float64) for name, x in wide.items()}))
    on_policy = nw.col("__rf_on_policy")
    out = []
    for order, estimator in enumerate(estimators):
        value, se = nw.col(f"__rf_{estimator.name}_value"), nw.col(f"__rf_{estimator.name}_se")
        out.append(
            table.select(
                *keys,
                nw.lit(order, dtype=nw.Int64).alias("__rf_order"),
                nw.lit(estimator.name, dtype=nw.String).alias("estimator"),
                *(x.alias(c) for c, x in _normal(value, se, z).items()),
                nw.col("n").cast(nw.Int64).alias("n"),
                on_policy.alias("on_policy"),
                nw.when(on_policy != 0).then(value / on_policy - 1).alias("lift"),
                *(nw.col(f"__rf_{c}").alias(c) for c in ("ess", "largest_weight", "supported")),
            )
        )
    result = nw.concat(out, how="vertical") if len(out) > 1 else out[0]
    return result.sort([*keys, "__rf_order"]).drop("__rf_order")


# -- per unit (comparisons paired by context) and the Poisson bootstrap over contexts --

#: the self-normalized estimators, and whether each has the direct term (SNDR): their value per
#: unit is an influence value (:func:`per_unit`)
SELF_NORMALIZED = {"snips": False, "sndr": True}


def _unit_value(estimator: Estimator, x: Logged) -> nw.Expr | None:
    """A mean estimator's value of one unit: its part ``<name>_v`` (:func:`_mean`), whose mean
    is the estimate; None for an estimator without one."""
    part = next((p for p in estimator.parts if p.name == f"{estimator.name}_v"), None)
    return None if part is None else part.value(x)


def per_unit(units: nw.LazyFrame, keys: list[str], unit: list[str], estimators: Sequence[Estimator], x: Logged) -> nw.LazyFrame:
    """One row per unit (a logged row; a slate), its ``unit`` columns and each estimator's value
    there, whose mean over a group's units is the group's estimate: a mean estimator's own
    value; a self-normalized one's value plus its influence, ``qe + D + w (d - D) / wbar``
    (:func:`_self_normalized`'s psi; qe = q = 0 for SNIPS), so the t test of two estimators'
    paired differences is the delta method's, and its mean difference the difference of the
    estimates. Null where the group has no w > 0. Sorted by the keys and the unit."""
    window = keys or ["__rf_all"]
    rows = units if keys else units.with_columns(nw.lit(0).alias("__rf_all"))
    values: dict[str, nw.Expr] = {}
    for e in estimators:
        if e.name in SELF_NORMALIZED:
            direct = SELF_NORMALIZED[e.name]
            d = x.r - x.q if direct else x.r
            rows = rows.with_columns((x.w * d).alias(f"__rf_wd_{e.name}"))
            sw, count = x.w.sum().over(*window), nw.len().over(*window)
            big_d = nw.col(f"__rf_wd_{e.name}").sum().over(*window) / sw
            value = (x.qe if direct else nw.lit(0.0)) + big_d + x.w * (d - big_d) / (sw / count)
            values[e.name] = nw.when(sw > 0).then(value)
            continue
        found = _unit_value(e, x)
        if found is None:
            raise RecframeError(
                f"the estimator {e.name!r} is no mean of a value per context: per_context=True has no value of it.",
                f"leave {e.name!r} out of {ref('estimators')} with per_context=True.",
            )
        values[e.name] = found
    out = rows.select(*keys, *unit, *(v.cast(nw.Float64).alias(name) for name, v in values.items()))
    return out.sort([*keys, *unit])


def poisson_bounds(
    units: nw.LazyFrame,
    keys: list[str],
    context: str,
    estimators: Sequence[Estimator],
    x: Logged,
    n_resamples: int,
    seed_keys: tuple[int, int],
    level: float,
) -> nw.LazyFrame:
    """Per group, each estimator's percentile interval over Poisson resamples of the contexts,
    in the engine (:mod:`recframe.statistics._poisson`: the summary's generator, its contexts
    numbered as its users are, so the same seed gives the same intervals on every engine, and
    the groups' resamples are paired). A resample weighs each context's units by its draw: its
    parts are each part's weighted mean (the weighted sum over the resample's total weight), and
    an estimate, a ratio of sums, is the same from them as from the weighted sums. Columns: the
    keys, ``__rf_boot_<estimator>_lo`` and ``_hi``."""
    parts = {p.name: p for e in estimators for p in e.parts if p.agg == "sum"}
    grouped = keys or [_names.GROUP]
    rows = units if keys else units.with_columns(nw.lit(0).alias(_names.GROUP))
    users = rows.select(
        *grouped,
        nw.col(context).alias(_names.USER),
        *(p.value(x).cast(nw.Float64).alias(_part_column(name)) for name, p in parts.items()),
    )
    one_row = units.head(1).select(nw.len().alias("__rf_one"))
    means = _poisson.resample_means(users, one_row, [_part_column(name) for name in parts], n_resamples, seed_keys)

    def s(name: str) -> nw.Expr:
        return nw.col(_part_column(name))

    boot = {f"__rf_boot_{e.name}": e.finish(s, 0.0)["value"].cast(nw.Float64) for e in estimators}
    bounds = _poisson.percentiles(means.with_columns(**boot), grouped, list(boot), level)
    return bounds if keys else bounds.drop(_names.GROUP)


def with_bounds(result: nw.LazyFrame, bounds: nw.LazyFrame, keys: list[str], estimators: Sequence[Estimator]) -> nw.LazyFrame:
    """The result (:func:`finished`) with ``lo`` and ``hi`` from `bounds` (:func:`poisson_bounds`),
    null for a group of fewer than two units (no spread, as the summary's); same order."""
    columns = result.collect_schema().names()
    long = [
        bounds.select(
            *keys,
            nw.lit(e.name, dtype=nw.String).alias("estimator"),
            nw.lit(order, dtype=nw.Int64).alias("__rf_order"),
            nw.col(f"__rf_boot_{e.name}_lo").alias("__rf_lo"),
            nw.col(f"__rf_boot_{e.name}_hi").alias("__rf_hi"),
        )
        for order, e in enumerate(estimators)
    ]
    table = nw.concat(long, how="vertical") if len(long) > 1 else long[0]
    joined = result.join(table, on=[*keys, "estimator"], how="left")
    enough = nw.col("n") >= 2
    joined = joined.with_columns(
        nw.when(enough).then(nw.col("__rf_lo")).alias("lo"), nw.when(enough).then(nw.col("__rf_hi")).alias("hi")
    )
    return joined.sort([*keys, "__rf_order"]).select(columns)
