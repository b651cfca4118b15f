"""Paired comparison of models against a baseline, on a per-user frame, with significance."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeVar

import narwhals as nw
import numpy as np
import polars as pl

from recframe import _frames, _tables, _validate, stats
from recframe.errors import RecframeError, fix, ref
from recframe.options import DEFAULT_K
from recframe.stats import Correction, Test

FrameT = TypeVar("FrameT")

#: The columns of a comparison, in order (``baseline`` and ``model`` have the ``by`` dtype).
COLUMNS = (
    "baseline", "model", "metric", "n_pairs", "n_dropped_baseline", "n_dropped_model",
    "baseline_mean", "model_mean", "delta", "delta_lo", "delta_hi", "rel_delta",
    "p_value", "p_adjusted", "significant",
)  # fmt: skip


def polars_per_user(per_user_frame: Any) -> tuple[pl.LazyFrame, _frames.Kind]:
    """The per-user frame as a Polars LazyFrame, and its kind (to give the result back as):
    the tests run in Python on the values, which recframe does not pull out of an engine."""
    lf, kind = _frames.to_lazy(per_user_frame, "per_user_frame")
    if kind == "engine":
        engine = _frames.engine_name(lf)
        raise RecframeError(
            f"per_user_frame is a {engine} frame; the tests run in Python on the per-user values, "
            f"which recframe does not pull out of {engine} for you. Hint: fetch the per-user frame "
            "(one row per user) first, e.g. relation.pl() for DuckDB or "
            "pl.from_arrow(df.toArrow()) for Spark, and pass that."
        )
    return lf.to_native(), kind


def without_skipped(native: pl.LazyFrame, schema: pl.Schema) -> pl.LazyFrame:
    """The per-user rows :func:`recframe.summary` counts: under ``empty_users="skip"`` a user
    without a relevant item (``n_relevant`` 0, a null metric, precision 0.0 all the same) is
    left out of every mean, so it is left out here for every metric."""
    every_metric = _tables.metric_columns(schema.names())
    if "n_relevant" not in schema.names() or not every_metric:
        return native
    return native.filter(~((pl.col("n_relevant") == 0) & pl.any_horizontal(pl.col(every_metric).is_null())))


def refuse_infinite(df: pl.DataFrame, metrics: list[str], user: str, by: str) -> None:
    """Refuse a metric column holding an infinite value: its mean is undefined."""
    infinite = df.select(pl.col(metrics).cast(pl.Float64).is_infinite().sum()).row(0, named=True)
    for metric, count in infinite.items():
        if count:
            first = df.filter(pl.col(metric).cast(pl.Float64).is_infinite()).row(0, named=True)
            raise RecframeError(
                f"column {metric!r} of per_user_frame has {count} infinite value(s), first {user}={first[user]!r} "
                f"({by}={first[by]!r}): a mean and its interval are undefined. Hint: pass the output of "
                "recframe.per_user, whose values are finite, or drop those rows."
            )


def by_keys(by: Any) -> list[str]:
    keys = [by] if isinstance(by, str) else list(by) if by is not None else []
    if not keys or not all(isinstance(k, str) for k in keys):
        raise RecframeError(
            f"{ref('by', by)} must name the model column, then any other key columns. "
            f"Hint: pass {fix('by', 'model')} or {fix('by', ['model', 'segment'])}."
        )
    return keys


def user_column_of(schema: pl.Schema, user: str | None, keys: list[str]) -> str:
    """The user column: as given, else the one per_user puts right before ``n_relevant``."""
    names = schema.names()
    if user is not None:
        return user
    if "n_relevant" in names and names.index("n_relevant") > 0:
        candidate = names[names.index("n_relevant") - 1]
        if candidate not in keys:
            return candidate
    others = [c for c in names if c not in keys and c != "n_relevant" and not _tables.is_metric_column(c)]
    if len(others) == 1:  # a hand-made frame: keys, the user, metrics
        return others[0]
    raise RecframeError(
        f"compare pairs users, and per_user_frame does not show which column holds them (columns: {names}). "
        f"Hint: pass {ref('user')} the user column (per_user puts it right before n_relevant)."
    )


def metric_columns_of(schema: pl.Schema, keys: list[str], user: str, metrics: Sequence[str] | None) -> list[str]:
    names = schema.names()
    for arg, name in [*(("by", k) for k in keys), ("user", user)]:
        if name not in names:
            raise RecframeError(
                f"{ref(arg, name)} is not a column of per_user_frame (columns: {names}). Hint: pass {ref(arg)} one of "
                f"them, or compute the frame with recframe.per_user(..., by={keys!r}) over the same keys."
            )
    available = _tables.metric_columns(names)
    if metrics is None:
        if not available:
            raise RecframeError(
                f"per_user_frame has no metric column such as 'ndcg@10' (columns: {names}). "
                "Hint: pass the output of recframe.per_user."
            )
        return available
    if isinstance(metrics, str):
        metrics = [metrics]
    chosen = list(metrics)
    for name in chosen:
        if name not in names or not schema[name].is_numeric():
            raise RecframeError(
                f"{ref('metrics')} names {name!r}, which is not a numeric column of per_user_frame. Hint: pass some of {available}."
            )
    if not chosen:
        raise RecframeError(f"{ref('metrics', [])} selects nothing to compare. Hint: pass some of {available}, or None for all.")
    return chosen


def _rows(
    df: pl.DataFrame,
    keys: list[str],
    baseline: Any,
    user: str,
    metrics: list[str],
    test: str,
    correction: Correction | None,
    alpha: float,
    n_resamples: int,
    seed: Any,
) -> dict[str, list[Any]]:
    """One row per (stratum, model, metric): the model key is ``keys[0]``; the other keys
    (segments, folds) are strata, compared separately; p-values adjusted over every row."""
    by, strata = keys[0], keys[1:]
    duplicated = df.select(pl.struct(*keys, user).is_duplicated().sum()).item()
    if duplicated:
        first = df.filter(pl.struct(*keys, user).is_duplicated()).row(0, named=True)
        where = ", ".join(f"{k}={first[k]!r}" for k in [*keys, user])
        raise RecframeError(
            f"per_user_frame has {duplicated} rows that share their ({', '.join(map(repr, [*keys, user]))}) values, "
            f"first {where}: a paired comparison needs one row per model and user in each group. "
            f"Hint: the frame has other key columns: pass them too, by=[{by!r}, ...], to compare within each."
        )
    refuse_infinite(df, metrics, user, by)
    models = df.get_column(by).unique().sort().to_list()
    if baseline not in models:
        raise RecframeError(
            f"{ref('baseline', baseline)} is not a value of column {by!r} (values: {models}). "
            f"Hint: pass {ref('baseline')} one of them."
        )
    rng = np.random.default_rng(seed)  # one generator, rows in output order: reproducible
    out: dict[str, list[Any]] = {name: [] for name in [*strata, *COLUMNS]}
    groups = df.partition_by(strata, as_dict=True, maintain_order=False) if strata else {(): df}
    for stratum in sorted(groups, key=lambda g: tuple((v is None, v) for v in g)):  # groups in key order
        _compare_group(groups[stratum], dict(zip(strata, stratum)), by, baseline, models, user, metrics, test,
                       alpha, n_resamples, rng, out)  # fmt: skip
    adjusted = stats.adjust_pvalues(np.array(out["p_value"], dtype=float), correction)
    out["p_adjusted"] = adjusted.tolist()
    out["significant"] = [bool(p < alpha) for p in adjusted]  # NaN < alpha is False
    return out


def _compare_group(
    df: pl.DataFrame,
    stratum: dict[str, Any],
    by: str,
    baseline: Any,
    models: list[Any],
    user: str,
    metrics: list[str],
    test: str,
    alpha: float,
    n_resamples: int,
    rng: np.random.Generator,
    out: dict[str, list[Any]],
) -> None:
    """Append the rows of one stratum (every model but the baseline, every metric) to `out`."""
    base = df.filter(pl.col(by) == baseline)
    for model in (m for m in models if m != baseline):  # loops over models and metrics only
        other = df.filter(pl.col(by) == model)
        for metric in metrics:
            left = base.select(user, pl.col(metric).cast(pl.Float64).alias("b")).drop_nulls().drop_nans()
            right = other.select(user, pl.col(metric).cast(pl.Float64).alias("m")).drop_nulls().drop_nans()
            pairs = left.join(right, on=user, how="inner")
            b, m = pairs.get_column("b").to_numpy(), pairs.get_column("m").to_numpy()
            n = len(pairs)
            # values near the float64 maximum: tests and intervals on exactly scaled values
            scale = stats.overflow_scale(m, b)
            ms, bs = m / scale, b / scale
            if test == "paired_t":
                result = stats.paired_t_test(ms, bs)
                lo, hi = stats.t_ci(ms - bs, 1 - alpha) if n >= 2 else (math.nan, math.nan)
            else:
                if test == "wilcoxon":
                    result = stats.wilcoxon_test(ms, bs)
                else:
                    result = stats.randomization_test(ms, bs, n_resamples, rng)
                # (no interval of one pair: nothing to resample, as for the t interval)
                lo, hi = stats.bootstrap_ci(ms - bs, 1 - alpha, n_resamples, rng) if n >= 2 else (math.nan, math.nan)
            lo, hi = lo * scale, hi * scale
            b_mean, m_mean = stats.mean(b), stats.mean(m)
            delta = m_mean - b_mean
            values = {
                **stratum,
                "baseline": baseline,
                "model": model,
                "metric": metric,
                "n_pairs": n,
                "n_dropped_baseline": len(left) - n,
                "n_dropped_model": len(right) - n,
                "baseline_mean": b_mean,
                "model_mean": m_mean,
                "delta": delta,
                "delta_lo": lo,
                "delta_hi": hi,
                "rel_delta": delta / b_mean if b_mean else math.nan,
                "p_value": result.p_value,
            }
            for name, value in values.items():
                out[name].append(value)


@stats.with_defaults
def compare(
    per_user_frame: FrameT,
    by: str | Sequence[str] = "model",
    baseline: Any = None,
    metrics: Sequence[str] | None = None,
    *,
    user: str | None = None,
    test: Test = stats.PAIRED_TEST,
    correction: Correction | None = stats.CORRECTION,
    alpha: float = stats.ALPHA,
    seed: int | None = None,
    n_resamples: int = stats.TEST_RESAMPLES,
) -> FrameT:
    """Compare every model with a baseline, user by user, with a paired test per metric.

    Parameters
    ----------
    per_user_frame : pandas.DataFrame, polars.DataFrame, polars.LazyFrame or pyarrow.Table
        One row per (model, user) with metric columns: the output of
        ``recframe.per_user(..., by="model")``.
    by : str or list of str, default "model"
        The column naming the model of each row, then any other key columns of the frame
        (``["model", "segment"]``, ``["model", "fold"]``): models are compared within each
        combination of the other keys, never across them.
    baseline : value of ``by``
        The model the others are compared with. Required.
    metrics : list of str, optional
        Metric columns to compare (``["ndcg@10"]``). Default: every metric column.
    user : str, optional
        Column identifying the user; values are paired on it. Default: the column
        :func:`recframe.per_user` puts right before ``n_relevant`` (its ``user=`` column), or
        the one column that is neither a key nor a metric.
    test : {"paired_t", "wilcoxon", "randomization"}, default {PAIRED_TEST}
        The two-sided paired test: Student's t on the differences (needs scipy:
        ``pip install "recframe[stats]"``), the Wilcoxon signed-rank test, or the sign-flip
        randomization test of the mean difference (``n_resamples``, ``seed``).
    correction : {"holm", "bonferroni"} or None, default {CORRECTION}
        Multiple-testing correction of the p-values. The family is every row of the result:
        all (model, metric) pairs compared in this call.
    alpha : float, default {ALPHA}
        Significance level: ``significant`` is ``p_adjusted < alpha``; the interval of the
        delta has coverage ``1 - alpha``.
    seed : int, optional
        Seed (``numpy.random.default_rng``) of the randomization test and the bootstrap.
    n_resamples : int, default {TEST_RESAMPLES}
        Sign patterns drawn by the randomization test (exact when ``2**n_pairs`` is not more)
        and bootstrap resamples for the delta interval.

    Returns
    -------
    frame of the same type as ``per_user_frame``
        One row per (other keys, model, metric), in key order, models sorted, metrics in the
        given order: the other ``by`` keys, ``baseline``, ``model``, ``metric``, ``n_pairs`` (users with a value under both),
        ``n_dropped_baseline`` / ``n_dropped_model`` (users with a value under only that one,
        left out), ``baseline_mean``, ``model_mean`` (means over the pairs), ``delta``
        (model - baseline), ``delta_lo`` / ``delta_hi``, ``rel_delta`` (delta / baseline
        mean), ``p_value``, ``p_adjusted`` and ``significant``. A LazyFrame stays lazy: the
        comparison runs when it is collected.

    See Also
    --------
    recframe.stats.paired_t_test, recframe.stats.wilcoxon_test,
    recframe.stats.randomization_test, recframe.stats.adjust_pvalues : the formulas.

    Notes
    -----
    Users are paired on ``user``: a user counts for a metric when both models have a
    non-null value for it. A row with ``n_relevant`` 0 and a null in any metric column (a
    user skipped under ``empty_users="skip"``) is left out for every metric, precision and
    hit rate included, as :func:`recframe.summary` leaves it out of every mean; so the
    baseline and model means equal the summary's when no user is dropped. With d_i = model_i - baseline_i over the n pairs, ``delta`` =
    mean(d). The interval of delta is the t interval ``mean(d) -/+ t s_d / sqrt(n)`` for
    ``test="paired_t"`` and the percentile bootstrap of mean(d) otherwise; it is not
    corrected for multiple testing. Undefined cases: ``rel_delta`` is null when the baseline
    mean is 0; with no pair means, delta and p-values are null; with one pair the t test
    and its interval are null. Null p-values stay out of the correction's family and are
    not significant.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> per_user = pl.DataFrame({
    ...     "model": ["A"] * 4 + ["B"] * 4,
    ...     "user_id": [1, 2, 3, 4] * 2,
    ...     "rr@10": [1.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0, 0.5],
    ... })
    >>> out = recframe.compare(per_user, baseline="A", test="randomization")
    >>> out.select("model", "n_pairs", "baseline_mean", "model_mean", "delta", "p_value").rows()
    [('B', 4, 0.5, 0.875, 0.375, 0.25)]

    d = 0, 0.5, 0.5, 0.5: of the 16 sign patterns, the 2 that make every non-zero
    difference positive reach a mean of 0.375, so p = 2 x 2 / 16 = 0.25 (exact).
    """
    alpha = stats.check_level("alpha", alpha)
    stats.check_choice("test", test, stats.TESTS)
    stats.check_choice("correction", correction, stats.CORRECTIONS)
    n_resamples, _ = stats.check_resampling(n_resamples, seed)
    keys = by_keys(by)
    if baseline is None:
        raise RecframeError(
            f"{ref('baseline')} is required: the value of {keys[0]!r} the other models are compared with. "
            f"Hint: pass {fix('baseline', 'popular')} (one of your models)."
        )
    native, kind = polars_per_user(per_user_frame)
    schema = native.collect_schema()
    user = user_column_of(schema, user, keys)
    chosen = metric_columns_of(schema, keys, user, metrics)
    key_dtype = schema[keys[0]]
    columns: list[tuple[str, Any]] = [(k, schema[k]) for k in keys[1:]]
    out_schema = pl.Schema(
        columns
        + [("baseline", key_dtype), ("model", key_dtype), ("metric", pl.String)]
        + [(c, pl.Int64) for c in ("n_pairs", "n_dropped_baseline", "n_dropped_model")]
        + [(c, pl.Float64) for c in COLUMNS[6:-1]]
        + [("significant", pl.Boolean)]
    )

    def run(df: pl.DataFrame) -> pl.DataFrame:
        rows = _rows(df, keys, baseline, user, chosen, test, correction, alpha, n_resamples, seed)
        out = pl.DataFrame(rows, schema=out_schema)
        stats.refuse_overflow(out, [*keys[1:], "model"], "model and baseline means")
        # NaN marks an undefined value here: make it null, like a mean over no users
        return out.with_columns(pl.col(pl.Float64).fill_nan(None))

    result = without_skipped(native, schema).select(*keys, user, *chosen).map_batches(run, schema=out_schema, streamable=False)
    return _frames.from_lazy(nw.from_native(result), kind)


def compare_recommendations(
    frame: Any,
    baseline: Any = None,
    k: int | Sequence[int] = DEFAULT_K,
    metrics: Sequence[str] | None = None,
    *,
    by: str | Sequence[str] = "model",
    test: Test = stats.PAIRED_TEST,
    correction: Correction | None = stats.CORRECTION,
    alpha: float = stats.ALPHA,
    seed: int | None = None,
    n_resamples: int = stats.TEST_RESAMPLES,
    **options: Any,
) -> Any:
    """Per-user metrics of recommendations by model, then :func:`compare` against a baseline.

    The same as ``compare(per_user(frame, k, metrics, by=by, **options), by=by, ...)``; also
    ``df.recmetrics.compare(...)``.

    Parameters
    ----------
    frame : DataFrame
        Recommendations in long format, as :func:`recframe.per_user` takes them.
    baseline : object
        The value of the model column (``by``'s first key) the other models are compared with.
    k, metrics : optional
        Cut-offs and metrics, as in :func:`recframe.per_user`.
    by : str or list of str, default "model"
        The model column, then any fold or segment keys to compare within.
    test, correction, alpha, seed, n_resamples : optional
        The paired test, as in :func:`compare`.
    **options
        Any other argument of :func:`recframe.per_user` (``truth=``, ``users=``, ``exclude=``,
        ``score=``, ``relevance=``, ``threshold=``, ``user=``, conventions).

    Returns
    -------
    DataFrame
        One row per (model, metric) as :func:`compare` returns it.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> df = pl.DataFrame({
    ...     "model": ["A", "A", "B", "B"] * 2,
    ...     "user_id": [1, 1, 1, 1, 2, 2, 2, 2],
    ...     "item_id": ["a", "b", "a", "b"] * 2,
    ...     "rank": [1, 2, 2, 1, 2, 1, 1, 2],
    ...     "relevance": [0, 1, 0, 1, 1, 0, 1, 0],
    ... })
    >>> out = df.recmetrics.compare(baseline="A", k=1, metrics=["rr"], test="randomization")
    >>> out.select("model", "metric", "baseline_mean", "model_mean", "p_value").rows()
    [('B', 'rr@1', 0.0, 1.0, 0.5)]
    """
    from recframe import api  # api is built on the modules compare uses: imported when called

    user = options.get("user", "user_id")
    if user is None:
        raise RecframeError(
            f"compare pairs users, but {ref('user', None)} treats the frame as one list. "
            f"Hint: pass {ref('user')} the user column."
        )
    # intersection and unexpectedness compare lists with the same baseline model
    reads_baseline = _validate.reads(_validate.metric_names(metrics), "baseline")
    per_user = api.per_user(frame, k, metrics, by=by, **({"baseline": baseline} if reads_baseline else {}), **options)
    return compare(
        per_user, by=by, baseline=baseline, user=user, test=test, correction=correction,
        alpha=alpha, seed=seed, n_resamples=n_resamples,
    )  # fmt: skip
