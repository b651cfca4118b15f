"""The summary's statistics, declared as the metrics are: parts, added, then finished (one path).

Each :class:`Aggregate` names its **parts** per group, as narwhals aggregates over the counted
per-list values (the mean: n and sum; the geometric mean: n and the sum of logs; the t
interval: n, sum and the sample standard deviation, an exact form of M2; a quantile: the lists
of each distinct value, a table of its own; the Poisson bootstrap: per resample, the weighted
sums; the multinomial bootstrap: the per-user values themselves), how two sets' parts **add**
(:func:`add`), and its **finish** (:func:`finish`). One pass is one set of users;
``partitions=`` evaluates many and adds their parts; every engine computes the parts with the
same group-bys. What an aggregate can do (``adds_up``, ``in_engine``, the values an interval
``covers``) is declared on it, and :func:`refuse` derives the refusals from that.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any, NamedTuple

import narwhals as nw
import numpy as np
import polars as pl

from recframe import _names as n
from recframe.engine import _engine, _frames
from recframe.engine import _validate as v
from recframe.errors import RecframeError, fix, ref
from recframe.metrics import REGISTRY
from recframe.statistics import _intervals, _parts, _poisson, stats

#: The floor trec_eval puts under a value before its log in a geometric mean (gm_map, gm_bpref):
#: a user scoring 0 pulls the mean down without making it 0.
GMEAN_FLOOR = _engine.GMEAN_FLOOR

Parts = Callable[[str], dict[str, nw.Expr]]
#: (metric column, output column) -> the value; an interval's: (column, output, value) -> std, lo, hi
Finish = Callable[..., Any]


class Aggregate(NamedTuple):
    """One statistic of the summary, a :class:`recframe.statistics._parts.Declared`: `parts`
    (metric column -> {part column: aggregate over the group's counted values}), `add` (part
    suffix -> a rule of ``_parts.RULES``), `finish`, `adds_up`, `in_engine` and, for an
    interval, the values it gives an interval of (`covers`: "mean", "quantile")."""

    name: str
    parts: Parts
    finish: Finish
    add: dict[str, str] = {"n": "sum", "sum": "sum"}
    adds_up: bool = True
    in_engine: bool = True
    covers: tuple[str, ...] = ()


def _n_sum(c: str) -> dict[str, nw.Expr]:
    return {f"{c}:n": nw.col(c).count(), f"{c}:sum": nw.col(c).sum()}


def _spread(c: str) -> dict[str, nw.Expr]:
    return {**_n_sum(c), f"{c}:std": nw.col(c).std(ddof=1)}


def _scaled_std(c: str) -> nw.Expr:
    """The sample standard deviation, the values divided first by a power of two near the
    largest where their squares could overflow (exact, as stats.std scales them): Polars' own."""
    largest = nw.col(c).abs().max()
    scale = nw.when(largest > _intervals.ENGINE_VALUE_LIMIT).then(nw.lit(2.0) ** largest.log(2).floor()).otherwise(nw.lit(1.0))
    return (nw.col(c) / scale).std(ddof=1) * scale


def _log(c: str) -> str:
    """The column the geometric mean reads: the log of each value, floored (GMEAN_FLOOR)."""
    return f"__rf_log:{c}"


def _mean(c: str) -> nw.Expr:
    """sum / n, null where no value is counted (as a mean of none)."""
    return nw.when(nw.col(f"{c}:n") > 0).then(nw.col(f"{c}:sum") / nw.col(f"{c}:n"))


def _t(c: str, out: str, value: nw.Expr) -> tuple[nw.Expr, ...]:
    """The t interval of the mean: ``mean -/+ t s / sqrt(n)`` (``__rf_t:<col>``: see _with_t)."""
    half = nw.col(f"__rf_t:{c}") * nw.col(f"{c}:std") / nw.col(f"{c}:n").cast(nw.Float64).sqrt()
    return nw.col(f"{c}:std"), value - half, value + half


def _poisson_finish(c: str, out: str, value: nw.Expr) -> tuple[nw.Expr, ...]:
    """The percentiles of the resamples' means (joined: see _poisson_bounds); fewer than two
    values: no spread, no interval."""
    enough = nw.col(f"{c}:n") >= 2
    return tuple(nw.when(enough).then(e) for e in (nw.col(f"{c}:std"), nw.col(f"{c}_lo"), nw.col(f"{c}_hi")))


SPREAD_ADDS = {"n": "sum", "sum": "sum", "std": "chan", "max": "max"}
AGGREGATES: dict[str, Aggregate] = {
    "mean": Aggregate("mean", _n_sum, lambda c, out: _mean(c)),
    "gmean": Aggregate("gmean", lambda c: _n_sum(_log(c)), lambda c, out: _mean(_log(c)).exp()),
    # the lists of each value are a table of their own (parts' values, added by add and read by
    # _quantiles); n per column here
    "quantile": Aggregate("quantile", lambda c: {f"{c}:n": nw.col(c).count()}, lambda c, out: nw.col(out), {"n": "sum"}),
    # (the largest magnitude: past ENGINE_VALUE_LIMIT an engine's variance overflows)
    "t": Aggregate("t", lambda c: {**_spread(c), f"{c}:max": nw.col(c).abs().max()}, _t, SPREAD_ADDS, covers=("mean",)),
    # a user's number is its dense rank among the call's counted users: a set's would differ
    "poisson": Aggregate("poisson", _spread, _poisson_finish, SPREAD_ADDS, adds_up=False, covers=("mean",)),
    # the per-user values, resampled in Python (stats.bootstrap_ci): see _bootstrap
    "bootstrap": Aggregate(
        "bootstrap",
        lambda c: {},
        lambda c, out, value: (nw.col(f"{c}_std"), nw.col(f"{out}_lo"), nw.col(f"{out}_hi")),
        {},
        adds_up=False,
        in_engine=False,
        covers=("mean", "quantile"),
    ),
}


def options(call: dict[str, Any]) -> tuple[dict[str, Any], tuple[float | None, str, int, Any], str | tuple[str, ...]]:
    """A resolved summary call split into per_user's options, the interval's (ci, ci_method,
    n_resamples, seed), checked (read or not, every one is), and the aggregates, checked.
    ``partitions`` is summary's alone (see :func:`recframe.api.summary_of`): any other caller
    passing it is refused here."""
    kwargs = dict(call)
    aggregate = v.aggregates(kwargs.pop("aggregate"))
    interval = _intervals.check_options(*(kwargs.pop(name) for name in ("ci", "ci_method", "n_resamples", "seed")))
    if kwargs.pop("partitions", None) is not None:
        raise RecframeError(
            f"{ref('partitions')} is an option of summary alone: the other calls (the page, curves, "
            "the command line's per-user output) hold every user's values at once.",
            f"call recframe.summary(..., {ref('partitions')}) for the means, or leave it out.",
        )
    return kwargs, interval, aggregate


class Asked(NamedTuple):
    """What a summary call asks: the value aggregates in order (``mean``, ``gmean``,
    ``median``, ``pNN``), whether their columns are suffixed, and the interval (None: none)."""

    values: tuple[str, ...]
    suffixed: bool
    interval: str | None = None
    level: float | None = None
    n_resamples: int = 1000
    seed: Any = None


def asked(aggregate: str | tuple[str, ...], level: float | None, method: str, n_resamples: int, seed: Any) -> Asked:
    values = (aggregate,) if isinstance(aggregate, str) else tuple(aggregate)
    interval = None if level is None else method
    return Asked(values, not isinstance(aggregate, str), interval, level, n_resamples, seed)


def kind_of(value: str) -> str:
    """The aggregate a value reads: ``median`` and ``pNN`` are quantiles."""
    return value if value in ("mean", "gmean") else "quantile"


def declared(a: Asked) -> list[Aggregate]:
    """The aggregates `a` computes: its values', then its interval's."""
    names = dict.fromkeys([kind_of(x) for x in a.values] + ([a.interval] if a.interval else []))
    return [AGGREGATES[name] for name in names]


def quantile_of(aggregate: str) -> float:
    """``"median"`` -> 0.5, ``"p90"`` -> 0.9."""
    return 0.5 if aggregate == "median" else float(aggregate[1:]) / 100


def column_of(column: str, value: str, suffixed: bool) -> str:
    """The output column of `value` of metric `column`: its name alone for the mean (and
    for a single aggregate), else suffixed (``ndcg@10_median``)."""
    return f"{column}_{value}" if suffixed and value != "mean" else column


def refuse(frame: Any, call: dict[str, Any], a: Asked, partitions: int | None) -> None:
    """The refusals, derived from the declarations: an interval of a value it does not cover,
    of a group-level metric (it resamples per-user values), past a set (``partitions=``) what
    does not add up, and in a SQL engine what does not run there (before anything is asked of it)."""
    given = ref("aggregate", a.values[0] if not a.suffixed else a.values)
    if a.interval is not None:
        interval = AGGREGATES[a.interval]
        for value in a.values:
            if kind_of(value) in interval.covers:
                continue
            if value == "gmean":
                raise RecframeError(
                    f"{ref('ci')} gives intervals of the mean and of quantiles, and {given} asks for the geometric mean. "
                    f"Hint: leave out {ref('ci')}, or pass {fix('aggregate', 'mean')}."
                )
            other = next(x for x in AGGREGATES.values() if kind_of(value) in x.covers)
            where = " (on a Polars frame)" if interval.in_engine and not other.in_engine else ""
            raise RecframeError(
                f"{fix('ci_method', a.interval)} gives an interval of the mean, and {given} asks for a quantile. "
                f"Hint: pass {fix('ci_method', other.name)}{where}, which resamples quantiles too."
            )
        group = v.group_level(call["metrics"])
        if group:
            raise RecframeError(
                f"{ref('ci')} resamples per-user values, and metric {group[0]!r} has one value per group. Hint: ask "
                f"for it in a summary without {ref('ci')}."
            )
    on = _frames.engine_of(frame)
    engine = None if on.in_process else on.name  # (a SQL engine's name)
    if partitions is not None:
        _refuse_partitions(engine, call, a)
    elif engine is not None and not all(x.in_engine for x in declared(a)):
        _refuse_engine(engine, a)


def _refuse_partitions(engine: str | None, call: dict[str, Any], a: Asked) -> None:
    if engine is not None:  # (sets of users evaluated one after another are Polars' streaming passes)
        raise RecframeError(
            f"{ref('partitions')} evaluates sets of users one after another in Polars, and the frame is a "
            f"{engine} one, which holds its own memory.",
            f"leave {ref('partitions')} out (set {engine}'s memory limit instead), or pass the export "
            'to Polars: pl.scan_parquet("export/*.parquet").',
        )
    if not all(x.adds_up for x in declared(a)):
        adding = [name for name, x in AGGREGATES.items() if x.covers and x.adds_up]
        raise RecframeError(
            f"{ref('ci', a.level)} with {fix('ci_method', a.interval)} resamples the per-user values of all users, and "
            f"{ref('partitions')} keeps only each set's sums.",
            f"pass {' or '.join(fix('ci_method', x) for x in adding)} for t intervals from each set's sums, counts and "
            f"spreads, or leave {ref('partitions')} out for bootstrap intervals.",
        )
    if call["user"] is None:
        raise RecframeError(
            f"{ref('partitions')} splits the users by their id, and {fix('user', None)}: every group is one list.",
            f"pass the column of user ids as {ref('user')}, or leave {ref('partitions')} out.",
        )


def _refuse_engine(engine: str, a: Asked) -> None:
    """An interval computed in Python, asked of a SQL engine: the hint names those that run in
    it and cover the values asked."""
    covered = {kind_of(x) for x in a.values}
    inside = [x.name for x in AGGREGATES.values() if x.covers and x.in_engine and covered <= set(x.covers)]
    words = {"poisson": f"for a bootstrap computed in {engine} (docs/reporting.md)", "t": "for t intervals of the means"}
    named = [f"{fix('ci_method', x)} {words[x]}" for x in sorted(inside, key=list(words).index)]
    in_it = f"pass {', or '.join(named)}; or " if named else ""
    raise RecframeError(
        f"{ref('ci')} with {fix('ci_method', a.interval)} resamples the per-user values in Python, which recframe does "
        f"not pull out of {engine}. Hint: {in_it}evaluate the same data with Polars for bootstrap intervals"
        f"{'' if in_it else ' of a quantile'}: "
        'pl.scan_parquet("export/*.parquet") streams exports larger than memory.'
    )


class SetParts(NamedTuple):
    """The parts of one set of users (or of several, added): `rows`, per group, the list
    counts and each aggregate's parts; `values`, per (group, metric column ``__rf_metric``,
    value ``__rf_value``), the lists of that value (``__rf_n``: a quantile's parts); `users`,
    per list, the group keys, the user and each counted value (the bootstraps' parts)."""

    rows: nw.LazyFrame
    values: nw.LazyFrame | None = None
    users: nw.LazyFrame | None = None


def parts(per_user: nw.LazyFrame, spec: v.Spec, a: Asked) -> SetParts:
    """The parts of the lists of `per_user` (a plan's per-list frame): one group-by for the
    rows, one for the value counts, lazily, in the engine the frame is in."""
    lf, keys = counted_lists(per_user, spec, a)
    cols = user_columns(spec)
    exprs = {name: e for x in declared(a) for c in cols for name, e in x.parts(c).items()}
    if _frames.runs_on(per_user).in_process:  # Polars scales the values past the limit first
        exprs |= {name: _scaled_std(name.removesuffix(":std")) for name in exprs if name.endswith(":std")}
    rows = _parts.per_group(lf, keys, *list_counts(spec), *(e.alias(name) for name, e in exprs.items()))
    quantiled = [c for c in cols if any(kind_of(x) == "quantile" for x in a.values)]
    values = None
    if quantiled:
        long = lf.select(*keys, *quantiled).unpivot(
            on=quantiled, index=keys, variable_name="__rf_metric", value_name="__rf_value"
        )
        long = long.filter(~nw.col("__rf_value").is_null())
        values = _parts.per_group(long, [*keys, "__rf_metric", "__rf_value"], nw.len().alias("__rf_n"))
    users = lf.select(*keys, n.USER, *cols) if a.interval in ("poisson", "bootstrap") else None
    return SetParts(rows, values, users)


def add(sets: list[SetParts], spec: v.Spec) -> SetParts:
    """The parts of disjoint sets of users (collected: Polars frames) added per group, each by
    its aggregate's rule (:func:`recframe.statistics._parts.add`; the list counts and the lists
    of each value: sums)."""
    keys = list(spec.columns.by) or [n.GROUP]
    hows = _parts.rules(AGGREGATES.values())
    rows = _parts.add([s.rows.to_native() for s in sets], keys, lambda c: hows[c.rsplit(":", 1)[1]] if ":" in c else "sum")
    values = None
    if sets[0].values is not None:
        stacked = [s.values.to_native() for s in sets if s.values is not None]
        values = nw.from_native(_parts.add(stacked, [*keys, "__rf_metric", "__rf_value"], lambda c: "sum"))
    return SetParts(nw.from_native(rows), values)


def user_columns(spec: v.Spec) -> list[str]:
    return [c for c, _, _ in _engine.metric_columns(spec, "user")]


def counted_lists(per_user: nw.LazyFrame, spec: v.Spec, a: Asked) -> tuple[nw.LazyFrame, list[str]]:
    """The per-list frame the parts aggregate: the counted flags and facts as integer columns,
    each metric null where its list is not counted (and its log for ``gmean``), with the group
    keys (a constant group without ``by``, so that an empty input gives an empty summary)."""
    columns = _engine.metric_columns(spec, "user")
    has_rel = nw.col("n_relevant") > 0
    ranked = nw.col(n.N_RANKED) > 0
    base = nw.col(n.COUNTS)  # (the columns of counted_flags)
    counted_all = nw.col(n.COUNTS_RANKED) if spec.selection.unranked_skip else base
    keys = list(spec.columns.by) or [n.GROUP]
    lf = per_user.with_columns(**_engine.counted_flags(spec)).with_columns(
        counted_all.cast(nw.Int64).alias(n.COUNTED),
        *((base.cast(nw.Int64)).alias(f"__rf_counted:{m}") for m in own_counts(spec)),
        (has_rel & ~ranked).cast(nw.Int64).alias("__rf_unranked"),
        ((nw.col(n.N_JUDGED) > 0) & ~has_rel).cast(nw.Int64).alias("__rf_no_relevant"),
        (nw.col(n.N_JUDGED) == 0).cast(nw.Int64).alias("__rf_no_truth"),
        *(_engine.counted_value(spec, c, name) for c, name, _ in columns),
        *([] if spec.columns.by else [nw.lit(0).alias(n.GROUP)]),
    )
    if "gmean" in a.values:  # exp(mean(log(max(value, floor)))): the mean of the logs, exponentiated in finish
        lf = lf.with_columns(nw.col(c).clip(lower_bound=GMEAN_FLOOR).log().alias(_log(c)) for c, _, _ in columns)
    return lf, keys


def own_counts(spec: v.Spec) -> list[str]:
    """The user-level metrics that count more lists than n_users (a per-metric rule for
    unranked lists): each has its own n_users_<metric>."""
    user_level = [m for m in spec.selection.metrics if REGISTRY[m].level == "user"]
    return [m for m in user_level if spec.selection.unranked_skip and m not in spec.selection.unranked_skip]


def list_counts(spec: v.Spec) -> list[nw.Expr]:
    """The counts of lists per group, as sums (so they add up across users too)."""
    return [
        nw.col(n.COUNTED).sum().alias("n_users"),
        *(nw.col(f"__rf_counted:{m}").sum().alias(f"n_users_{m}") for m in own_counts(spec)),
        nw.len().alias(n.N_LISTS),
        nw.col("__rf_unranked").sum().alias("n_unranked"),
        nw.col("__rf_no_relevant").sum().alias("n_no_relevant"),
        nw.col("__rf_no_truth").sum().alias("n_no_truth"),
    ]


def summary(plan: _engine.Plan, spec: v.Spec, a: Asked, source: Any = None) -> nw.LazyFrame:
    """The summary of one set of users, `plan`'s lists: its parts, finished. With a bootstrap
    the per-list frame is computed once (cached on Polars, held by a SQL engine), as both
    the rows and the resampled values read it; `source` (a SQL engine's native input) makes
    the Poisson bootstrap's resample numbers (see :func:`recframe.statistics._poisson.resample_numbers`)."""
    per_user = plan.per_user
    if a.interval in ("poisson", "bootstrap"):
        per_user = _frames.runs_on(per_user).hold(per_user)
    # (on Polars the t interval's spreads are scaled: nothing to refuse)
    hint = None if _frames.runs_on(per_user).in_process else "evaluate the same data with Polars"
    return finish(parts(per_user, spec, a), plan.groups, spec, a, source, hint)


def finish(
    s: SetParts, groups: nw.LazyFrame | None, spec: v.Spec, a: Asked, source: Any = None, past_limit: str | None = None
) -> nw.LazyFrame:
    """The summary from the parts of its users (one set, or many added): per group the list
    counts typed, each value and interval from its aggregate's parts, the group-level metrics
    finished from their group terms (`groups`), in the order asked, sorted by the keys.
    `past_limit`: the hint of the t interval's refusal of values past ENGINE_VALUE_LIMIT (None:
    none refused, the spreads were scaled)."""
    keys = list(spec.columns.by) or [n.GROUP]
    cols = user_columns(spec)
    table = s.rows
    if any(kind_of(x) == "quantile" for x in a.values):
        assert s.values is not None  # (parts counted them)
        table = table.join(_quantiles(s.values, s.rows, keys, cols, a), on=keys, how="left")
    if a.interval == "t":
        table = _with_t(table, cols, a, past_limit)
    elif a.interval is not None:
        assert s.users is not None  # (parts kept them)
        bounds = (
            _poisson_bounds(s.users, keys, cols, a, source) if a.interval == "poisson" else _bootstrap(s.users, keys, cols, a)
        )
        table = table.join(bounds, on=keys, how="left")
    values: dict[str, nw.Expr] = {}
    for column, name, _ in _engine.metric_columns(spec):
        if REGISTRY[name].level != "user":
            values[column] = nw.lit(None)  # finished below, from its group terms
            continue
        for i, x in enumerate(a.values):
            values.update(_value(column, x, a, first=i == 0))
    if groups is not None:
        table = table.join(groups, on=keys, how="left")
        for column, name, k in _engine.metric_columns(spec, "group"):
            values[column] = REGISTRY[name].finish(k, spec.conventions)
    out = table.select(
        *keys,
        nw.col("n_users").cast(nw.Int64),
        *(nw.col(f"n_users_{m}").cast(nw.Int64) for m in own_counts(spec)),
        (nw.col(n.N_LISTS) - nw.col("n_users")).cast(nw.Int64).alias("n_skipped"),
        *(nw.col(c).cast(nw.Int64) for c in ("n_unranked", "n_no_relevant", "n_no_truth")),
        *(value.cast(nw.Float64).alias(name) for name, value in values.items()),
    ).sort(keys)
    return out if spec.columns.by else out.drop(n.GROUP)


def _value(c: str, x: str, a: Asked, first: bool) -> dict[str, nw.Expr]:
    """The output columns of value `x` of metric column `c`, each its aggregate's finish: the
    value, then, with an interval, the metric's standard deviation (after its first value),
    low and high."""
    out = column_of(c, x, a.suffixed)
    value = AGGREGATES[kind_of(x)].finish(c, out)
    if a.interval is None:
        return {out: value}
    std, lo, hi = AGGREGATES[a.interval].finish(c, out, value)
    return {out: value, **({f"{c}_std": std} if first else {}), f"{out}_lo": lo, f"{out}_hi": hi}


def _quantiles(values: nw.LazyFrame, rows: nw.LazyFrame, keys: list[str], cols: list[str], a: Asked) -> nw.LazyFrame:
    """Per group, each quantile asked, under its column name, from the lists of each counted
    value of its metric, as Polars' linear quantile of the metric's column over the group's
    lists (a list not counted is null) gives it: Polars indexes the values as sorted with the
    nulls first, at ``h = nulls + (n - 1) q``, and interpolates ``low + (high - low) (h -
    floor(h))`` between the values at floor(h) and the next; the same steps here give its
    number, to the bit, from the same values (the value at a place is the smallest whose last
    place reaches it: a min, as a join keeps no row order)."""
    last = nw.col("__rf_n").cum_sum().over(*keys, "__rf_metric", order_by="__rf_value") - 1
    ordered = values.with_columns(last.alias("__rf_last"))
    found = rows.select(keys)
    for c in cols:
        for x in (x for x in a.values if kind_of(x) == "quantile"):
            count, nulls = nw.col(f"{c}:n"), nw.col(n.N_LISTS) - nw.col(f"{c}:n")
            h = nulls.cast(nw.Float64) + (count - 1).cast(nw.Float64) * quantile_of(x)
            at = rows.filter(count > 0).select(
                *keys,
                (h.floor() - nulls).cast(nw.Int64).alias("__rf_low"),
                (h - h.floor()).alias("__rf_frac"),
                count.alias("__rf_count"),
            )
            mine = ordered.filter(nw.col("__rf_metric") == c).select(*keys, "__rf_value", "__rf_last").join(at, on=keys)
            upper = nw.min_horizontal(nw.col("__rf_low") + 1, nw.col("__rf_count") - 1)
            mine = mine.with_columns(
                nw.when(nw.col("__rf_last") >= nw.col("__rf_low")).then(nw.col("__rf_value")).alias("__rf_lo"),
                nw.when(nw.col("__rf_last") >= upper).then(nw.col("__rf_value")).alias("__rf_hi"),
            )
            picked = _frames.group_agg(mine, keys, *(nw.col(p).min() for p in ("__rf_lo", "__rf_hi", "__rf_frac")))
            lo, hi = nw.col("__rf_lo"), nw.col("__rf_hi")
            value = (lo + (hi - lo) * nw.col("__rf_frac")).alias(column_of(c, x, a.suffixed))
            found = found.join(picked.select(*keys, value), on=keys, how="left")
    return found


def _with_t(table: nw.LazyFrame, cols: list[str], a: Asked, past_limit: str | None) -> nw.LazyFrame:
    """`table` (the rows) with each metric's t quantile of its n - 1 degrees of freedom
    (``__rf_t:<col>``), values past ENGINE_VALUE_LIMIT refused: on Polars when the rows are
    computed (a LazyFrame stays lazy), elsewhere by one small query now."""
    assert a.level is not None
    level = a.level

    def quantiles(small: pl.DataFrame) -> pl.DataFrame:
        if past_limit is not None:
            _intervals.refuse_past_limit(small.select(pl.col(f"{c}:max").alias(c) for c in cols), past_limit)
        sizes = sorted({int(x) for c in cols for x in small[f"{c}:n"].to_list() if x is not None and x >= 2})
        found = dict(zip(sizes, stats.t_quantiles(sizes, level)))
        # the t quantile of each group's n - 1 degrees of freedom, a constant per distinct n
        return small.with_columns(
            pl.col(f"{c}:n").replace_strict(found, default=None, return_dtype=pl.Float64).alias(f"__rf_t:{c}") for c in cols
        )

    if _frames.runs_on(table).in_process:  # (Polars: the t quantiles when the plan runs)
        native = table.to_native()
        schema = pl.Schema({**native.collect_schema(), **{f"__rf_t:{c}": pl.Float64 for c in cols}})
        return nw.from_native(native.map_batches(quantiles, schema=schema, streamable=False))
    small = quantiles(table.select(*(f"{c}:{p}" for c in cols for p in ("n", "max"))).collect("polars").to_native())
    t: dict[str, nw.Expr] = {}
    for c in cols:
        expr: nw.Expr = nw.lit(None, dtype=nw.Float64)
        for size, q in small.select(f"{c}:n", f"__rf_t:{c}").unique().drop_nulls().iter_rows():
            expr = nw.when(nw.col(f"{c}:n") == size).then(nw.lit(q)).otherwise(expr)
        t[f"__rf_t:{c}"] = expr
    return table.with_columns(**t)


def _poisson_bounds(users: nw.LazyFrame, keys: list[str], cols: list[str], a: Asked, source: Any) -> nw.LazyFrame:
    """The Poisson bootstrap's finish, in the engine: each resample's weighted sums per group
    (its parts, :func:`recframe.statistics._poisson.resample_means`), their ratios' percentiles."""
    assert a.level is not None
    users = _poisson.refuse_huge(users, cols, _frames.runs_on(users).in_process)
    first = users if source is None else nw.from_native(source)
    one_row = first.head(1).select(nw.len().alias("__rf_one"))  # one row, always
    means = _poisson.resample_means(users, one_row, cols, a.n_resamples, _poisson.seed_keys(_poisson.seed_of(a.seed)))
    return _poisson.percentiles(means, keys, cols, a.level)


def _bootstrap(users: nw.LazyFrame, keys: list[str], cols: list[str], a: Asked) -> nw.LazyFrame:
    """The multinomial bootstrap's finish, in Python (a ``map_batches`` step: a LazyFrame
    stays lazy): per group in key order, each metric's standard deviation and each value's
    interval from the per-user values (:func:`recframe.stats.bootstrap_ci`,
    :func:`recframe.stats.bootstrap_quantile_ci`)."""
    assert a.level is not None
    native = users.to_native()
    given = native.collect_schema()
    names = [f"{c}_std" for c in cols] + [
        f"{column_of(c, x, a.suffixed)}_{s}" for c in cols for x in a.values for s in ("lo", "hi")
    ]
    schema = pl.Schema([(k, given[k]) for k in keys] + [(name, pl.Float64) for name in names])
    level, seed = a.level, a.seed

    def resample(values: pl.DataFrame) -> pl.DataFrame:
        # group-bys return rows in any order: fix it, or the same seed would resample differently
        values = values.sort([*(k for k in keys if k != n.GROUP), n.USER])
        # one generator per aggregate, groups in key order: reproducible, and an aggregate's
        # intervals do not move when others are asked beside it (the mean's draws as always)
        rngs = {
            x: np.random.default_rng(seed if x == "mean" or seed is None else [seed, zlib.crc32(x.encode())]) for x in a.values
        }
        found: dict[str, list[Any]] = {name: [] for name in [*keys, *names]}
        for key, group in values.partition_by(keys, as_dict=True, maintain_order=True).items():  # a loop over groups
            for k, value in zip(keys, key):
                found[k].append(value)
            matrix = group.select(cols).to_numpy().astype(float)
            for j, c in enumerate(cols):
                found[f"{c}_std"].append(float(stats.std(matrix[:, j])))
            for x in a.values:
                if x == "mean":
                    lo, hi = stats.bootstrap_ci(matrix, level, a.n_resamples, rngs[x])
                else:
                    lo, hi = stats.bootstrap_quantile_ci(matrix, quantile_of(x), level, a.n_resamples, rngs[x])
                for j, c in enumerate(cols):
                    found[f"{column_of(c, x, a.suffixed)}_lo"].append(float(lo[j]))
                    found[f"{column_of(c, x, a.suffixed)}_hi"].append(float(hi[j]))
        # NaN (undefined: no or one user) is a missing value, like a mean over no users
        return pl.DataFrame(found, schema=schema).with_columns(pl.col(names).fill_nan(None))

    return nw.from_native(native.map_batches(resample, schema=schema, streamable=False))
