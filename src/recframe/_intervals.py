"""``summary(..., ci=...)``: the summary plus a standard deviation and an interval per metric.

The means and the counts (``n_users``, ``n_skipped``, ...) come from the engine's own summary plan, run on the
per-user frame, so they are exactly those of ``summary`` without ``ci``. The intervals need the
per-user values of each ``by`` group as numpy arrays: they are computed inside a
``map_batches`` step over the per-user plan, so a LazyFrame stays lazy until it is collected.
"""

from __future__ import annotations

import zlib
from typing import Any

import narwhals as nw
import numpy as np
import polars as pl

from recframe import _engine, _frames, stats
from recframe import _names as n
from recframe import _validate as v
from recframe.errors import RecframeError, fix, ref


def check_options(ci: Any, ci_method: Any, n_resamples: Any, seed: Any) -> tuple[float | None, str, int, Any]:
    """Check the interval options of :func:`recframe.summary`, ``ci=None`` (no interval)
    included: every one is checked whether or not the call reads it. Raise naming the bad one."""
    level = None if ci is None else stats.check_level("ci", ci)
    method = stats.check_choice("ci_method", ci_method, stats.CI_METHODS)
    n, _ = stats.check_resampling(n_resamples, seed)
    return level, method, n, seed


def interval_columns(metric_cols: list[str], aggregate: str | tuple[str, ...] = "mean") -> list[str]:
    """Output metric columns in order: each aggregate (the mean, or the one asked, under the
    metric's name) followed by its lo and hi, the metric's std after the first.

    >>> interval_columns(["ndcg@10"], ("mean", "p90"))
    ['ndcg@10', 'ndcg@10_std', 'ndcg@10_lo', 'ndcg@10_hi', 'ndcg@10_p90', 'ndcg@10_p90_lo', 'ndcg@10_p90_hi']
    """
    suffixed = not isinstance(aggregate, str)
    aggregates = [aggregate] if isinstance(aggregate, str) else list(aggregate)
    out = []
    for c in metric_cols:
        for i, a in enumerate(aggregates):
            name = _engine.aggregate_column(c, a, suffixed)
            out += [name, *([c + "_std"] if i == 0 else []), name + "_lo", name + "_hi"]
    return out


def check_aggregates(aggregate: str | tuple[str, ...], ci_method: str) -> None:
    """The aggregates an interval can be had for: the mean (bootstrap, t or poisson) and
    quantiles (bootstrap)."""
    aggregates = [aggregate] if isinstance(aggregate, str) else list(aggregate)
    if "gmean" in aggregates:
        raise RecframeError(
            f"{ref('ci')} gives intervals of the mean and of quantiles, and {ref('aggregate', aggregate)} asks for the "
            f"geometric mean. Hint: leave out {ref('ci')}, or pass {fix('aggregate', 'mean')}."
        )
    if ci_method in ("t", "poisson") and any(a != "mean" for a in aggregates):
        where = " (on a Polars frame)" if ci_method == "poisson" else ""  # (poisson may be asked of a SQL engine)
        raise RecframeError(
            f"{fix('ci_method', ci_method)} gives an interval of the mean, and {ref('aggregate', aggregate)} asks for a "
            f"quantile. Hint: pass {fix('ci_method', 'bootstrap')}{where}, which resamples quantiles too."
        )


#: the interval methods :func:`summary_with_ci` computes from the per-user rows (``"poisson"``
#: runs inside the engine: recframe._poisson)
FROM_PER_USER_ROWS = ("bootstrap", "t")


def summary_with_ci(
    plan: _engine.Plan,
    spec: v.Spec,
    ci: float,
    ci_method: str,
    n_resamples: int,
    seed: Any,
    aggregate: str | tuple[str, ...] = "mean",
) -> nw.LazyFrame:
    """The summary of `plan`'s per-user frame (internal key names) with ``<col>_std/_lo/_hi``
    columns (user-level metrics only: a group-level one has no per-user values to resample),
    and ``<col>_<quantile>_lo/_hi`` for each quantile `aggregate` asks for."""
    # (another method here would fall to the multinomial bootstrap below, under its name)
    assert ci_method in FROM_PER_USER_ROWS, ci_method
    per_user = plan.per_user
    metric_cols = [c for c, _, _ in _engine.metric_columns(spec, "user")]
    base_schema = _engine.summary_plan(plan, spec).to_native().collect_schema()
    counts = [c for c in base_schema.names() if v.is_count_column(c)]
    keys = [c for c in base_schema.names() if c not in metric_cols and c not in counts]
    columns = interval_columns(metric_cols, aggregate)
    out_schema = pl.Schema([(name, base_schema[name]) for name in [*keys, *counts]] + [(name, pl.Float64) for name in columns])
    suffixed = not isinstance(aggregate, str)
    aggregates = [aggregate] if isinstance(aggregate, str) else list(aggregate)

    def finish(users: pl.DataFrame) -> pl.DataFrame:
        means = _engine.summary_plan(_engine.Plan(nw.from_native(users.lazy())), spec, aggregate).to_native().collect()
        # group-bys return rows in any order: fix it, or the same seed would resample differently
        users = users.sort([*spec.columns.by, n.USER])
        # one generator per aggregate, groups in key order: reproducible, and an aggregate's
        # intervals do not move when others are asked beside it (the mean's draws as always)
        rngs = {
            a: np.random.default_rng(seed if a == "mean" or seed is None else [seed, zlib.crc32(a.encode())]) for a in aggregates
        }
        # each metric's values where the user counts for it in the means, else null
        counted = (
            nw.from_native(users.lazy())
            .with_columns(**_engine.counted_flags(spec))
            .select(*keys, *(_engine.counted_value(spec, c, name) for c, name, _ in _engine.metric_columns(spec, "user")))
        )
        values = counted.to_native().collect()
        extra: dict[str, list[float]] = {c: [] for c in columns if c not in means.columns}
        groups = values.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): values}
        rows = means.select(keys).iter_rows() if keys else [()] * means.height
        for row in rows:  # a loop over groups, never over users
            group = groups.get(row)
            matrix = group.select(metric_cols).to_numpy().astype(float) if group is not None else np.empty((0, len(metric_cols)))
            for j, c in enumerate(metric_cols):
                extra[c + "_std"].append(float(stats.std(matrix[:, j])))
            for a in aggregates:
                if a != "mean":
                    lo, hi = stats.bootstrap_quantile_ci(matrix, _engine.quantile_of(a), ci, n_resamples, rngs[a])
                elif ci_method == "t":
                    lo, hi = stats.t_ci(matrix, ci)
                else:
                    lo, hi = stats.bootstrap_ci(matrix, ci, n_resamples, rngs[a])
                for j, c in enumerate(metric_cols):
                    name = _engine.aggregate_column(c, a, suffixed)
                    extra[name + "_lo"].append(float(lo[j]))
                    extra[name + "_hi"].append(float(hi[j]))
        out = means.with_columns(pl.Series(name, data, dtype=pl.Float64) for name, data in extra.items())
        # NaN (undefined: no or one user) is a missing value, like a mean over no users
        return out.with_columns(pl.col(extra).fill_nan(None)).select(out_schema.names())

    native = per_user.to_native().map_batches(finish, schema=out_schema, streamable=False)
    return nw.from_native(native)


#: past this magnitude a per-user value's square may overflow an engine's float64 variance:
#: such an interval (t, the Poisson bootstrap) is refused in the engine (Polars scales the
#: values of the others first)
ENGINE_VALUE_LIMIT = 1e150


def counted_users(per_user: nw.LazyFrame, spec: v.Spec) -> tuple[nw.LazyFrame, list[str], list[str]]:
    """What an interval computed in the engine reads: per list, the by keys (a constant GROUP
    without), the user and each metric's value where the list counts for it, else null; the
    group keys; the metric columns."""
    columns = _engine.metric_columns(spec, "user")
    keys = list(spec.columns.by)
    users = per_user.with_columns(**_engine.counted_flags(spec)).select(
        *keys, n.USER, *(_engine.counted_value(spec, c, name) for c, name, _ in columns)
    )
    if not keys:
        users = users.with_columns(nw.lit(0).alias(n.GROUP))
    return users, keys or [n.GROUP], [c for c, _, _ in columns]


def spread(users: nw.LazyFrame, grouped: list[str], metric_cols: list[str]) -> nw.LazyFrame:
    """Per group, each metric's sample standard deviation (``<col>_std``, ddof=1) and count of
    values (``__rf_n:<col>``)."""
    return _frames.group_agg(
        users,
        grouped,
        *(nw.col(c).std(ddof=1).alias(f"{c}_std") for c in metric_cols),
        *(nw.col(c).count().cast(nw.Int64).alias(f"__rf_n:{c}") for c in metric_cols),
    )


def summary_with_t_in_engine(plan: _engine.Plan, spec: v.Spec, ci: float) -> nw.LazyFrame:
    """``ci_method="t"`` on a SQL engine: the t interval of each mean from the counts and sample
    standard deviations the engine computes per group (one small query reads the counts, whose
    t quantiles enter the plan as constants): no per-user row leaves the engine. The same
    columns as :func:`summary_with_ci`."""
    users, grouped, metric_cols = counted_users(plan.per_user, spec)
    refuse_past_limit(largest_values(users, metric_cols).collect("polars").to_native())
    return with_t_interval(_engine.summary_plan(plan, spec), spread(users, grouped, metric_cols), spec, ci)


def largest_values(users: nw.LazyFrame, metric_cols: list[str]) -> nw.LazyFrame:
    """One row: each metric's largest per-user magnitude (what :func:`refuse_past_limit` reads)."""
    return _frames.group_agg(
        users.with_columns(nw.lit(0).alias("__rf_all")), ["__rf_all"], *(nw.col(c).abs().max().alias(c) for c in metric_cols)
    ).drop("__rf_all")


def refuse_past_limit(largest: pl.DataFrame, instead: str = "evaluate the same data with Polars") -> None:
    """Refuse a t interval computed by an engine's variance where a metric's per-user values
    (their largest magnitudes, rows of :func:`largest_values`) pass ENGINE_VALUE_LIMIT;
    `instead`: what gives the interval, for the hint."""
    for c in largest.columns:
        value: float | None = largest[c].max() if largest.height else None  # type: ignore[assignment]
        if value is not None and not value <= ENGINE_VALUE_LIMIT:
            raise RecframeError(
                f"column {c!r} has per-user values up to {value:.3g}, past what an engine's variance holds exactly "
                f"(1e150). Hint: {instead}, which scales such values, for {ref('ci')}."
            )


def with_t_interval(means: nw.LazyFrame, spreads: nw.LazyFrame, spec: v.Spec, ci: float) -> nw.LazyFrame:
    """`means` (a summary, internal group keys) with each metric's ``_std``, ``_lo`` and ``_hi``
    (the t interval of the mean), from `spreads`: per group (GROUP without ``by``), each metric's
    sample standard deviation ``<col>_std`` and count of values ``__rf_n:<col>``. One small
    query reads the counts, whose t quantiles enter the plan as constants."""
    keys = list(spec.columns.by)
    grouped = keys or [n.GROUP]
    metric_cols = [c for c, _, _ in _engine.metric_columns(spec, "user")]
    counts = spreads.select(*(f"__rf_n:{c}" for c in metric_cols)).collect("polars").to_native()
    sizes = sorted({int(x) for c in metric_cols for x in counts.get_column(f"__rf_n:{c}").to_list() if x is not None and x >= 2})
    quantiles = stats.t_quantiles(sizes, ci)

    def t_of(n_col: str) -> nw.Expr:
        # the t quantile of each group's n - 1 degrees of freedom, a constant per distinct n
        expr: nw.Expr = nw.lit(None, dtype=nw.Float64)
        for size, q in zip(sizes, quantiles):
            expr = nw.when(nw.col(n_col) == size).then(nw.lit(q)).otherwise(expr)
        return expr

    if not keys:
        means = means.with_columns(nw.lit(0).alias(n.GROUP))
    table = means.join(spreads, on=grouped, how="left")
    half = {c: t_of(f"__rf_n:{c}") * nw.col(f"{c}_std") / nw.col(f"__rf_n:{c}").cast(nw.Float64).sqrt() for c in metric_cols}
    names = [c for c in means.columns if c not in metric_cols and c != n.GROUP]
    out = table.select(
        *names,
        *(
            expr
            for c in metric_cols
            for expr in (
                nw.col(c),
                nw.col(f"{c}_std"),
                (nw.col(c) - half[c]).alias(f"{c}_lo"),
                (nw.col(c) + half[c]).alias(f"{c}_hi"),
            )
        ),
    )
    return out.sort(keys) if keys else out
