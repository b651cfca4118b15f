"""The paired t test of :func:`recframe.compare` inside a SQL engine (DuckDB, Spark, Ibis...):
per (stratum, model, metric) the engine joins each model's users with the baseline's and
returns counts, means, the moments of the differences and the users above and below a tie (the
wins, ties and losses); no per-user row leaves the engine, and the p-values, intervals, d_z and
the correction are computed from those few rows exactly as :func:`recframe.compare` computes them
from the values (``stats.paired_t_test``'s undefined cases included). The other tests need the
values themselves.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import narwhals as nw
import polars as pl

from recframe.engine import _frames
from recframe.errors import RecframeError, fix, ref
from recframe.statistics import stats
from recframe.statistics._intervals import ENGINE_VALUE_LIMIT

_ALL = "__rf_all"


#: two values are the same to 12 significant digits when they differ by at most this share of
#: the larger (or of 1 below 1): a user's tie of wins/ties/losses, and d_z's equal differences
SAME_WITHIN = 1e-12


class Pair(NamedTuple):
    """Model `a` against model `b` on one metric (in one stratum); against a baseline, `a` is the
    model and `b` the baseline. The users with a value under each and under both, the two means
    over the pairs, Cohen's d_z, the users with a - b above and below the tolerance of a tie, the
    p-value and the interval of the mean difference. :func:`recframe.compare.pair_row` turns it
    into a row, from the values in Python or from an engine's aggregates alike."""

    stratum: dict[str, Any]
    a: Any
    b: Any
    metric: str
    n: int
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    d_z: float
    above: int
    below: int
    p_value: float
    lo: float
    hi: float


def effect_size_from_moments(n: int, mean: float, sd: float, spread: float, largest: float) -> float:
    """Cohen's d_z of `n` paired differences from their `mean`, sample standard deviation `sd`
    (ddof=1), `spread` (max - min) and the `largest` magnitude of the paired values: mean / sd;
    NaN with fewer than two pairs or when every difference is the same to the tolerance of a tie
    (:data:`SAME_WITHIN` of the values): 0.7 - 0.6 and 0.4 - 0.3 differ in their last bits, and
    their sd of 4e-17 made d_z 2.5e15.

    >>> effect_size_from_moments(3, 2.0, 1.0, 2.0, 4.0)   # d = 2, 1, 3
    2.0
    >>> effect_size_from_moments(2, 0.1, 4e-17, 5.6e-17, 0.7)   # d = 0.7 - 0.6, 0.4 - 0.3
    nan
    """
    if n < 2 or spread <= SAME_WITHIN * max(1.0, largest):
        return math.nan
    return float(mean / sd)


# compare's refusals, worded once for Python (recframe.compare) and the engine (_check below)


def infinite_error(metric: str, count: int, first: dict[str, Any], user: str, by: str) -> RecframeError:
    """`count` infinite values in column `metric`, the row `first` the first of them (in Python
    and inside an engine alike)."""
    return RecframeError(
        f"column {metric!r} of per_user_frame has {count} infinite value(s), first {user}={first[user]!r} "
        f"({by}={first[by]!r}): a mean and its interval are undefined. Hint: pass the output of "
        "recframe.per_user, whose values are finite, or drop those rows."
    )


def no_rows_error(by: str, missing: str) -> RecframeError:
    """A per-user frame with no row, so no `missing` (a baseline, two models): what per_user
    leaves out, and where to look."""
    return RecframeError(
        f"per_user_frame has no row to compare, so {missing}: recframe.per_user leaves out the lists every metric "
        f"skips, such as users without any truth or, with {fix('empty_users', 'skip')}, without a relevant item. "
        "Hint: check that the truth reaches the recommendations (the threshold, the join keys): the counts "
        f"n_no_truth and n_no_relevant of recframe.summary(..., by={by!r}) say how many."
    )


def baseline_error(baseline: Any, models: list[Any], by: str) -> RecframeError:
    """The baseline is not among the models (in Python and inside an engine alike); with no
    model at all, the frame has no row, which is what to say."""
    if not models:
        return no_rows_error(by, f"no model {ref('baseline', baseline)}")
    return RecframeError(
        f"{ref('baseline', baseline)} is not a value of column {by!r} (values: {models}). Hint: pass {ref('baseline')} one of them."
    )


def duplicates_error(count: int, first: dict[str, Any], keys: list[str], user: str) -> RecframeError:
    """`count` rows sharing their (keys, user) values, `first` the first of them (in Python and
    inside an engine alike)."""
    where = ", ".join(f"{k}={first[k]!r}" for k in [*keys, user])
    return RecframeError(
        f"per_user_frame has {count} rows that share their ({', '.join(map(repr, [*keys, user]))}) values, "
        f"first {where}: a paired comparison needs one row per model and user in each group. "
        f"Hint: the frame has other key columns: pass them too, by=[{keys[0]!r}, ...], to compare within each."
    )


def null_key_error(column: str, count: int, arg: str) -> RecframeError:
    """`count` null values in the model column (``arg`` "by") or the user column (``arg``
    "user"): refused on every backend, by the comparison with a baseline and of every pair alike
    (a join pairs no null key, an index of the users would pair them: two answers for one pair)."""
    what, why = ("model", "compared with another model") if arg == "by" else ("user", "paired with its user under another model")
    return RecframeError(
        f"column {column!r} of per_user_frame ({ref(arg)}) has {count} null value(s): a row without a {what} cannot be "
        f"{why}. Hint: drop those rows or fill them first (recframe.per_user gives every row a {what})."
    )


def _counted(lf: nw.LazyFrame, keys: list[str], *exprs: nw.Expr) -> pl.DataFrame:
    """`exprs` per group of `keys` (one group without, keyed `_ALL`), collected (a few rows).
    Without keys it is one aggregate, which has its row on an empty frame too (a group-by on a
    constant key has none)."""
    if not keys:
        return lf.select(*exprs).collect("polars").to_native().with_columns(pl.lit(0).alias(_ALL))
    return _frames.group_agg(lf, keys, *exprs).collect("polars").to_native()


def _check(lf: nw.LazyFrame, keys: list[str], user: str, metrics: list[str], by: str) -> None:
    """compare's refusals, asked of the engine: a null model or user (worded as in Python), two
    rows of one (keys, user), a null stratum key, an infinite value, and values too large for an
    engine's variance to hold exactly."""
    values = {m: nw.col(m).cast(nw.Float64) for m in metrics}
    infinite = {m: (~values[m].is_finite() & ~values[m].is_nan()).fill_null(False) for m in metrics}
    found = _counted(
        lf,
        [],
        *(infinite[m].cast(nw.Int64).sum().alias(f"__rf_inf:{m}") for m in metrics),
        *(values[m].abs().max().alias(f"__rf_max:{m}") for m in metrics),
        *(nw.col(k).is_null().cast(nw.Int64).sum().alias(f"__rf_null:{k}") for k in dict.fromkeys([*keys, user])),
    )
    for arg, column in (("by", by), ("user", user)):
        if found.item(0, f"__rf_null:{column}"):
            raise null_key_error(column, int(found.item(0, f"__rf_null:{column}")), arg)
    rows = _counted(lf, [*keys, user], nw.len().alias("__rf_rows")).filter(pl.col("__rf_rows") > 1)
    if rows.height:
        raise duplicates_error(int(rows["__rf_rows"].sum()), rows.row(0, named=True), keys, user)
    for k in keys[1:]:
        if found.item(0, f"__rf_null:{k}"):
            # an engine's join never pairs null keys, nor matches a null model: the users of a null
            # group would not be compared
            raise RecframeError(
                f"column {k!r} of per_user_frame ({ref('by')}) has {found.item(0, f'__rf_null:{k}')} null value(s), "
                "which a paired comparison inside the engine cannot group. Hint: fill them first, e.g. "
                f"coalesce({k}, 'unknown'), or fetch the per-user frame into Polars and compare it there."
            )
    for m in metrics:
        if found.item(0, f"__rf_inf:{m}"):
            first = lf.filter(infinite[m]).select(user, by).head(1).collect("polars").to_native().row(0, named=True)
            raise infinite_error(m, found.item(0, f"__rf_inf:{m}"), first, user, by)
        largest = found.item(0, f"__rf_max:{m}")
        if largest is not None and not largest <= ENGINE_VALUE_LIMIT:
            raise RecframeError(
                f"column {m!r} has per-user values up to {largest:.3g}, past what an engine's variance holds exactly "
                "(1e150). Hint: fetch the per-user frame into Polars (which scales such values) and compare it there."
            )


def _moments(lf: nw.LazyFrame, by: str, strata: list[str], user: str, baseline: Any, metric: str) -> nw.LazyFrame:
    """For one metric, per (model, stratum) with a value: the model's users with a value
    (``n_model``), and of their pairs with the baseline's the count (``n``), the two means
    (``b``, ``m``), the mean, standard deviation and spread of the differences model - baseline
    (``d``, ``s``, ``spread``), the largest magnitude of a paired value (``largest``) and the
    differences above and below the tolerance of a tie (``above``, ``below``: compare's rule)."""
    value = nw.col(metric).cast(nw.Float64)
    present = ~value.is_null() & ~value.is_nan()
    base = lf.filter((nw.col(by) == baseline) & present).select(*strata, user, value.alias("__rf_b"))
    other = lf.filter((nw.col(by) != baseline) & present).select(by, *strata, user, value.alias("__rf_m"))
    pairs = other.join(base, on=[*strata, user], how="inner").with_columns(
        (nw.col("__rf_m") - nw.col("__rf_b")).alias("__rf_d"), nw.max_horizontal(nw.col("__rf_m").abs(), nw.col("__rf_b").abs()).alias("__rf_abs")
    )  # fmt: skip
    d, tie = nw.col("__rf_d"), SAME_WITHIN * nw.max_horizontal(nw.lit(1.0), nw.col("__rf_abs"))
    keys = [by, *strata]
    moments = _frames.group_agg(
        pairs, keys, nw.len().cast(nw.Int64).alias("n"), nw.col("__rf_b").mean().alias("b"), nw.col("__rf_m").mean().alias("m"),
        d.mean().alias("d"), d.std(ddof=1).alias("s"), (d.max() - d.min()).alias("spread"), nw.col("__rf_abs").max().alias("largest"),
        (d > tie).cast(nw.Int64).sum().alias("above"), (d < -tie).cast(nw.Int64).sum().alias("below"),
    )  # fmt: skip
    out = _frames.group_agg(other, keys, nw.len().cast(nw.Int64).alias("n_model")).join(moments, on=keys, how="left")
    return out.select(
        nw.lit(metric).alias("__rf_metric"), *keys, "n_model", "n", "b", "m", "d", "s", "spread", "largest", "above", "below"
    )


def _t_test(n: int, d: float, s: float, level: float) -> tuple[float, float, float]:
    """The two-sided p-value and the t interval of the mean difference from its moments, with
    :func:`recframe.stats.paired_t_test`'s undefined cases (NaN below two pairs)."""
    if n < 2 or not math.isfinite(s):
        return math.nan, math.nan, math.nan
    half = stats.t_quantiles([n], level)[0] * s / math.sqrt(n)
    return stats.paired_t_from_moments(n, d, s).p_value, d - half, d + half


def paired_t(lf: nw.LazyFrame, keys: list[str], baseline: Any, user: str, metrics: list[str], alpha: float) -> list[Pair]:
    """The comparisons of :func:`recframe.compare` (baseline given, ``test="paired_t"``) before
    the correction: per stratum (in key order), model (sorted) and metric, as ``compare._rows``;
    each model is `a` of its pair, the baseline `b`."""
    by, strata = keys[0], keys[1:]
    _check(lf, keys, user, metrics, by)
    models = sorted(lf.select(by).unique().collect("polars").to_native().get_column(by).to_list())
    if baseline not in models:
        raise baseline_error(baseline, models, by)

    # the strata (every combination of the other keys), with the baseline's users with a value of each metric
    def in_baseline(metric: str) -> nw.Expr:
        value = nw.col(metric).cast(nw.Float64)
        return ((nw.col(by) == baseline) & ~value.is_null() & ~value.is_nan()).fill_null(False).cast(nw.Int64).sum()

    found = _counted(lf, strata, *(in_baseline(m).alias(f"__rf_base:{m}") for m in metrics))
    n_baseline = {tuple(row[k] for k in strata or [_ALL]): row for row in found.iter_rows(named=True)}
    combos = sorted(n_baseline, key=lambda g: tuple((v is None, v) for v in g))
    # one query for every metric: a row per (metric, model, stratum) where the model has a value
    parts = [_moments(lf, by, strata, user, baseline, m) for m in metrics]
    moments = nw.concat(parts, how="vertical") if len(parts) > 1 else parts[0]
    rows = {
        (r["__rf_metric"], r[by], *(r[k] for k in strata)): r for r in moments.collect("polars").to_native().iter_rows(named=True)
    }
    out = []
    for combo in combos:
        stratum = dict(zip(strata, combo)) if strata else {}
        for model in (m for m in models if m != baseline):
            for metric in metrics:
                got = rows.get((metric, model, *(combo if strata else ())), {})
                n = int(got.get("n") or 0)
                b_mean, m_mean, d, s, spread, largest = (
                    math.nan if got.get(c) is None else float(got[c]) for c in ("b", "m", "d", "s", "spread", "largest")
                )
                p_value, lo, hi = _t_test(n, d, s, 1 - alpha)
                n_base, n_model = int(n_baseline[combo][f"__rf_base:{metric}"]), int(got.get("n_model") or 0)
                above, below = (int(got.get(c) or 0) for c in ("above", "below"))
                d_z = effect_size_from_moments(n, d, s, spread, largest)
                values = (n, n_model, n_base, m_mean, b_mean, d_z, above, below, p_value, lo, hi)
                out.append(Pair(stratum, model, baseline, metric, *values))
    return out
