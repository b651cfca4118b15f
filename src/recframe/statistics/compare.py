"""Paired comparison of models against a baseline, on a per-user frame, with significance."""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Sequence
from typing import Any, TypeVar

import narwhals as nw
import numpy as np
import polars as pl

from recframe.engine import _call, _frames, _tables, _validate
from recframe.errors import RecframeError, fix, ref
from recframe.options import DEFAULT_K, ListOptions, Unpack
from recframe.statistics import _paired_engine, stats
from recframe.statistics._paired_engine import (
    SAME_WITHIN,
    Pair,
    baseline_error,
    duplicates_error,
    effect_size_from_moments,
    infinite_error,
    no_rows_error,
    null_key_error,
)
from recframe.statistics.stats import Correction, Test

FrameT = TypeVar("FrameT")

#: The columns of a comparison with a baseline, in order (``baseline`` and ``model`` have the
#: ``by`` dtype): the pairs (model, baseline) of :data:`PAIR_COLUMNS`, renamed by :data:`_AS_BASELINE`.
COLUMNS = (
    "baseline", "model", "metric", "n_pairs", "n_dropped_baseline", "n_dropped_model",
    "baseline_mean", "model_mean", "delta", "delta_lo", "delta_hi", "rel_delta", "d_z",
    "wins", "ties", "losses", "p_value", "p_adjusted", "significant",
)  # fmt: skip

#: The columns of an all-pairs comparison (no ``baseline=``), in order: every pair of models
#: ``model_a`` < ``model_b`` (sorted), delta = a - b.
PAIR_COLUMNS = (
    "model_a", "model_b", "metric", "n_pairs", "n_dropped_a", "n_dropped_b",
    "mean_a", "mean_b", "delta", "delta_lo", "delta_hi", "rel_delta", "d_z",
    "wins", "ties", "losses", "p_value", "p_adjusted", "significant",
)  # fmt: skip
_PAIR_COUNTS = ("n_pairs", "n_dropped_a", "n_dropped_b", "wins", "ties", "losses")
#: A baseline comparison's names of the all-pairs columns: model a is the model, b the baseline.
_AS_BASELINE = {
    "model_a": "model", "model_b": "baseline", "n_dropped_a": "n_dropped_model",
    "n_dropped_b": "n_dropped_baseline", "mean_a": "model_mean", "mean_b": "baseline_mean",
}  # fmt: skip

#: The columns of :func:`compare_letters`, after the other keys.
LETTER_COLUMNS = ("metric", "model", "mean", "rank", "letters", "top_group")


def polars_per_user(per_user_frame: Any) -> tuple[pl.LazyFrame, _frames.Engine]:
    """The per-user frame as a Polars LazyFrame, and its engine (to give the result back as):
    the tests run in Python on the values, which recframe does not pull out of an engine."""
    lf, engine = _frames.lazy(per_user_frame, "per_user_frame")
    if not engine.in_process:
        name = engine.name
        raise RecframeError(
            f"per_user_frame is a {name} frame; the paired t test against a baseline runs inside {name}, and the "
            f"other tests run in Python on the per-user values, which recframe does not pull out of {name} for "
            'you. Hint: pass test="paired_t" with baseline=, or fetch the per-user frame '
            "(one row per user) first, e.g. relation.pl() for DuckDB or "
            "pl.from_arrow(df.toArrow()) for Spark, and pass that."
        )
    return lf.to_native(), engine


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
            raise infinite_error(metric, count, first, user, by)


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
    numeric = [c for c in available if schema[c].is_numeric()]
    if metrics is None:
        if not available:
            raise RecframeError(
                f"per_user_frame has no metric column such as 'ndcg@10' (columns: {names}). "
                "Hint: pass the output of recframe.per_user."
            )
        # every metric column is compared: one of text is refused, not cast (numeric text was,
        # and other text failed in the cast)
        for name in available:
            if name not in numeric:
                raise not_numeric_error(name, schema[name], numeric, None)
        return available
    if isinstance(metrics, str):
        metrics = [metrics]
    chosen = list(metrics)
    for name in chosen:
        if name not in names:
            raise RecframeError(
                f"{ref('metrics')} names {name!r}, which is not a column of per_user_frame. Hint: pass some of {numeric}."
            )
        if not schema[name].is_numeric():
            raise not_numeric_error(name, schema[name], numeric, chosen)
    if not chosen:
        raise RecframeError(f"{ref('metrics', [])} selects nothing to compare. Hint: pass some of {available}, or None for all.")
    return chosen


def not_numeric_error(name: str, dtype: Any, numeric: list[str], chosen: list[str] | None) -> RecframeError:
    """Metric column `name` holds `dtype`, not numbers (text, even of numbers, is not cast):
    named whether metrics= chose it (`chosen`) or every metric column is compared (None)."""
    how = f"{ref('metrics')} names it" if chosen is not None else f"{ref('metrics', None)} compares every metric column"
    others = [c for c in numeric if c != name]
    return RecframeError(
        f"column {name!r} of per_user_frame holds {dtype} values, not numbers, and {how}. Hint: cast it to a number "
        f"first, or pass {ref('metrics')} {'some of ' + repr(others) if others else 'other columns'}."
    )


def refuse_duplicates(df: pl.DataFrame, keys: list[str], user: str) -> None:
    """Refuse two rows of one (keys, user): a paired comparison needs one per model and user."""
    duplicated = df.select(pl.struct(*keys, user).is_duplicated().sum()).item()
    if duplicated:
        raise duplicates_error(duplicated, df.filter(pl.struct(*keys, user).is_duplicated()).row(0, named=True), keys, user)


def paired_statistics(
    x: np.ndarray, y: np.ndarray, test: str, alpha: float, n_resamples: int, rng: np.random.Generator
) -> tuple[float, float, float]:
    """The p-value of the paired `test` of `x` against `y`, and the interval of mean(x - y):
    the t interval for paired_t, else the percentile bootstrap (NaN for fewer than 2 pairs)."""
    n = x.size
    # values near the float64 maximum: tests and intervals on exactly scaled values
    scale = stats.overflow_scale(x, y)
    xs, ys = x / scale, y / scale
    if test == "paired_t":
        result = stats.paired_t_test(xs, ys)
        lo, hi = stats.t_ci(xs - ys, 1 - alpha) if n >= 2 else (math.nan, math.nan)
    else:
        if test == "wilcoxon":
            result = stats.wilcoxon_test(xs, ys)
        else:
            result = stats.randomization_test(xs, ys, n_resamples, rng)
        # (no interval of one pair: nothing to resample, as for the t interval)
        lo, hi = stats.bootstrap_ci(xs - ys, 1 - alpha, n_resamples, rng) if n >= 2 else (math.nan, math.nan)
    return result.p_value, lo * scale, hi * scale


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
    """One row per (stratum, pair of models, metric), named as :data:`PAIR_COLUMNS`: with a
    baseline, the pairs (model, baseline) of every other model of the frame; without, every pair
    of a stratum's models. The model key is ``keys[0]``; the other keys (segments, folds) are
    strata, compared separately. The p-values of the paired tests adjusted over every row, those
    of tukey_hsd left as they are (the test controls its family)."""
    by, strata = keys[0], keys[1:]
    refuse_null_keys(df, by, user)
    refuse_duplicates(df, keys, user)
    refuse_infinite(df, metrics, user, by)
    models = df.get_column(by).unique().sort().to_list()
    if baseline is not None and baseline not in models:
        raise baseline_error(baseline, models, by)
    if not models:
        raise no_rows_error(by, "no pair of models")
    if len(models) < 2 and baseline is None:
        raise RecframeError(
            f"{ref('by', by)}: column {by!r} of per_user_frame holds {len(models)} model(s) {models}, and a comparison of every "
            f"pair needs two or more. Hint: pass the per-user rows of every model, per_user(..., by={by!r}) over all their "
            "recommendations."
        )
    rng = np.random.default_rng(seed)  # one generator, drawn in a fixed order (see _pairs_of_group): reproducible
    out: dict[str, list[Any]] = {name: [] for name in [*strata, *PAIR_COLUMNS]}
    for stratum, group in _strata(df, strata):
        for pair in _pairs_of_group(group, stratum, by, baseline, models, user, metrics, test, alpha, n_resamples, rng):
            for name, value in pair_row(pair).items():
                out[name].append(value)
    # tukey_hsd controls its family itself: its p-values are left as they are
    return _with_adjusted(out, None if test == "tukey_hsd" else correction, alpha)


def pair_row(pair: Pair) -> dict[str, Any]:
    """One row of a comparison (:data:`PAIR_COLUMNS` before the correction; against a baseline,
    a is the model and b the baseline, renamed by :data:`_AS_BASELINE`): from the values in
    Python or from an engine's aggregates (recframe.statistics._paired_engine). "Better" is higher unless
    the metric's registry entry says lower is better."""
    delta = pair.mean_a - pair.mean_b
    wins, losses = (pair.above, pair.below) if _tables.higher_is_better(pair.metric) else (pair.below, pair.above)
    return {
        **pair.stratum,
        "model_a": pair.a,
        "model_b": pair.b,
        "metric": pair.metric,
        "n_pairs": pair.n,
        "n_dropped_a": pair.n_a - pair.n,
        "n_dropped_b": pair.n_b - pair.n,
        "mean_a": pair.mean_a,
        "mean_b": pair.mean_b,
        "delta": delta,
        "delta_lo": pair.lo,
        "delta_hi": pair.hi,
        "rel_delta": delta / pair.mean_b if pair.mean_b else math.nan,
        "d_z": pair.d_z,
        "wins": wins,
        "ties": pair.n - pair.above - pair.below,
        "losses": losses,
        "p_value": pair.p_value,
    }


def _strata(df: pl.DataFrame, strata: list[str]) -> list[tuple[dict[str, Any], pl.DataFrame]]:
    """The rows of each combination of the other by keys, in key order (models are compared
    within each, never across them)."""
    groups = df.partition_by(strata, as_dict=True, maintain_order=False) if strata else {(): df}
    return [(dict(zip(strata, key)), groups[key]) for key in sorted(groups, key=lambda g: tuple((v is None, v) for v in g))]


def _with_adjusted(out: dict[str, list[Any]], correction: Correction | None, alpha: float) -> dict[str, list[Any]]:
    """`out` with ``p_adjusted`` (over every row, by `correction`) and ``significant``."""
    adjusted = stats.adjust_pvalues(np.array(out["p_value"], dtype=float), correction)
    out["p_adjusted"] = adjusted.tolist()
    out["significant"] = [bool(p < alpha) for p in adjusted]  # NaN < alpha is False
    return out


def _pairs_of_group(
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
) -> list[Pair]:
    """The pairs of one stratum, each with every metric: with a baseline, every other model of
    `models` against it (a model absent here has no pair); without, every pair of the stratum's
    own models, which must share a user. The generator draws pair by pair against a baseline,
    metric by metric over every pair (tukey_hsd tests a metric's pairs at once)."""
    where = "".join(f" ({k}={v!r})" for k, v in stratum.items())
    if baseline is None:
        models = df.get_column(by).unique().sort().to_list()
        if len(models) < 2:
            raise RecframeError(
                f"{ref('by', [by, *stratum])}: the rows{where} hold one model, {models[0]!r}, so no pair of models can be "
                f"compared there. Hint: pass per-user rows of every model for every value of {list(stratum)}, or drop "
                "those rows."
            )
    else:  # the baseline's users first: a pair's users in the baseline's order
        df = df.sort(pl.col(by) != baseline, maintain_order=True)
    # a (metrics x users x models) array: users in first-seen order, models sorted
    index = df.select(user).unique(maintain_order=True).with_row_index("__recframe_row")
    coded = df.join(index, on=user, how="left", nulls_equal=True).with_columns(
        pl.col(by).replace_strict(models, list(range(len(models))), return_dtype=pl.Int64).alias("__recframe_model")
    )
    rows = coded.get_column("__recframe_row").to_numpy()
    columns = coded.get_column("__recframe_model").to_numpy()
    values = np.full((len(metrics), index.height, len(models)), np.nan)
    metric_values = (pl.col(m).cast(pl.Float64).fill_null(math.nan).alias(f"__rf{i}") for i, m in enumerate(metrics))
    values[:, rows, columns] = coded.select(*metric_values).to_numpy().T
    if baseline is None:
        pairs = list(itertools.combinations(range(len(models)), 2))
        listed = np.zeros(values.shape[1:], dtype=bool)
        listed[rows, columns] = True
        for a, b in pairs:
            if not (listed[:, a] & listed[:, b]).any():
                raise RecframeError(
                    f"models {models[a]!r} and {models[b]!r} of column {by!r}{where} have no user in common (no value of "
                    f"{ref('user', user)} has a row under both), so they cannot be compared user by user. Hint: evaluate "
                    f"every model on the same users (per_user with the same truth=), or pass {fix('baseline', models[a])} "
                    "to compare the others with one model."
                )
        order = [(i, pair) for i in range(len(metrics)) for pair in pairs]
    else:
        pairs = [(a, models.index(baseline)) for a in range(len(models)) if models[a] != baseline]
        order = [(i, pair) for pair in pairs for i in range(len(metrics))]
    tukey: dict[int, tuple[Any, np.ndarray]] = {}  # per metric: the test, the users with every model
    found: dict[tuple[int, int, int], Pair] = {}
    for i, (a, b) in order:
        if test == "tukey_hsd" and i not in tukey:
            tukey[i] = (stats.tukey_hsd_test(values[i], n_resamples, rng, 1 - alpha), ~np.isnan(values[i]).any(axis=1))
        used = tukey[i][1] if test == "tukey_hsd" else ~np.isnan(values[i, :, a]) & ~np.isnan(values[i, :, b])
        x, y = values[i, used, a], values[i, used, b]
        mean_a, mean_b = stats.mean(x), stats.mean(y)
        if test == "tukey_hsd":
            delta, (result, _) = mean_a - mean_b, tukey[i]
            p_value, lo, hi = float(result.p_values[a, b]), delta - result.hsd, delta + result.hsd
        else:
            p_value, lo, hi = paired_statistics(x, y, test, alpha, n_resamples, rng)
        # equal within the last bits: the engine's sums may differ there from run to run
        # (a parallel sum's order), which must not move a user between ties and wins
        with np.errstate(over="ignore"):  # a difference past the float64 maximum is refused by name (_result)
            d, tie = x - y, SAME_WITHIN * np.maximum(1.0, np.maximum(np.abs(x), np.abs(y)))
        n_a, n_b = (int((~np.isnan(values[i, :, c])).sum()) for c in (a, b))
        found[i, a, b] = Pair(
            stratum, models[a], models[b], metrics[i], x.size, n_a, n_b, mean_a, mean_b, effect_size(x, y),
            int((d > tie).sum()), int((d < -tie).sum()), p_value, lo, hi,
        )  # fmt: skip
    return [found[i, a, b] for a, b in pairs for i in range(len(metrics))]


def effect_size(x: np.ndarray, y: np.ndarray) -> float:
    """Cohen's d_z of paired values, mean(x - y) / sd(x - y) (see
    :func:`recframe.statistics._paired_engine.effect_size_from_moments`, which an engine's moments reach too).

    >>> effect_size(np.array([3.0, 2.0, 4.0]), np.array([1.0, 1.0, 1.0]))   # d = 2, 1, 3
    2.0
    >>> effect_size(np.array([0.7, 0.4]), np.array([0.6, 0.3]))   # d = 0.1, 0.1
    nan
    """
    if x.size < 2:
        return math.nan
    with np.errstate(over="ignore", invalid="ignore"):  # (a difference past the float64 maximum: see _result)
        d = x - y
        spread = float(d.max() - d.min())
    scale = stats.overflow_scale(x, y)  # exact: the ratio does not change
    scaled = x / scale - y / scale
    largest = max(float(np.abs(x).max()), float(np.abs(y).max()))
    return effect_size_from_moments(d.size, scaled.mean(), stats.std(scaled), spread, largest)


@_frames.engine_call
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
    """Compare models user by user, with a paired test per metric: every model with a
    baseline, or every pair of models.

    Parameters
    ----------
    per_user_frame : pandas.DataFrame, polars.DataFrame, polars.LazyFrame, pyarrow.Table or a SQL engine's frame
        One row per (model, user) with metric columns: the output of
        ``recframe.per_user(..., by="model")``. On a SQL engine (DuckDB, Spark, Ibis) the paired
        t test against a ``baseline`` runs inside the engine, which returns counts and means per
        (model, metric) and no per-user row; the result is then a Polars DataFrame. The other
        tests, and every pair without a baseline, need the values: they are refused there.
    by : str or list of str, default "model"
        The column naming the model of each row, then any other key columns of the frame
        (``["model", "segment"]``, ``["model", "fold"]``): models are compared within each
        combination of the other keys, never across them.
    baseline : value of ``by``, optional
        The model the others are compared with: the pairs (model, baseline). Without it,
        every pair of models is compared.
    metrics : list of str, optional
        Metric columns to compare (``["ndcg@10"]``). Default: every metric column.
    user : str, optional
        Column identifying the user; values are paired on it. Default: the column
        :func:`recframe.per_user` puts right before ``n_relevant`` (its ``user=`` column), or
        the one column that is neither a key nor a metric.
    test : {"paired_t", "wilcoxon", "randomization", "tukey_hsd"}, default {PAIRED_TEST}
        The two-sided paired test: Student's t on the differences (needs scipy:
        ``pip install "recframe[stats]"``), the Wilcoxon signed-rank test, the sign-flip
        randomization test of the mean difference (``n_resamples``, ``seed``), or, for all
        pairs only (no ``baseline``), the randomized paired Tukey HSD test of every pair at
        once (:func:`recframe.stats.tukey_hsd_test`).
    correction : {"holm", "bonferroni"} or None, default {CORRECTION}
        Multiple-testing correction of the p-values. The family is every row of the result:
        all (model, metric) pairs compared in this call. Not applied under
        ``test="tukey_hsd"``, which controls the family of a metric's pairs itself:
        ``p_adjusted`` is ``p_value`` there.
    alpha : float, default {ALPHA}
        Significance level: ``significant`` is ``p_adjusted < alpha``; the interval of the
        delta has coverage ``1 - alpha``.
    seed : int, optional
        Seed (``numpy.random.default_rng``) of the randomization and Tukey HSD tests and
        the bootstrap.
    n_resamples : int, default {TEST_RESAMPLES}
        Sign patterns (randomization test; exact when ``2**n_pairs`` is not more) or
        permutations (Tukey HSD; exact when ``(m!)**n_pairs`` is not more) drawn, and
        bootstrap resamples of the delta interval.

    Returns
    -------
    frame of the same type as ``per_user_frame``
        With ``baseline``: one row per (other keys, model, metric), in key order, models sorted, metrics in the
        given order: the other ``by`` keys, ``baseline``, ``model``, ``metric``, ``n_pairs`` (users with a value under both),
        ``n_dropped_baseline`` / ``n_dropped_model`` (users with a value under only that one,
        left out), ``baseline_mean``, ``model_mean`` (means over the pairs), ``delta``
        (model - baseline), ``delta_lo`` / ``delta_hi``, ``rel_delta`` (delta / baseline
        mean), ``d_z``, ``wins``, ``ties``, ``losses`` (the model against the baseline, as
        model a against b below), ``p_value``, ``p_adjusted`` and ``significant``: the pair
        (model, baseline) of the comparison without a baseline, its columns renamed.
        Without: one row per (other keys, pair of models, metric), pairs in sorted order:
        the other keys, ``model_a``, ``model_b`` (``model_a`` sorts first), ``metric``,
        ``n_pairs``, ``n_dropped_a``, ``n_dropped_b``, ``mean_a``, ``mean_b``, ``delta``
        (a - b), ``delta_lo``, ``delta_hi``, ``rel_delta`` (delta / mean_b), ``d_z``,
        ``wins``, ``ties``, ``losses``, ``p_value``, ``p_adjusted``, ``significant``.
        A LazyFrame stays lazy: the comparison runs when it is collected.

    See Also
    --------
    recframe.stats.paired_t_test, recframe.stats.wilcoxon_test,
    recframe.stats.randomization_test, recframe.stats.tukey_hsd_test,
    recframe.stats.adjust_pvalues : the formulas.
    recframe.compare_letters : the models of an all-pairs comparison ranked, with letters.
    recframe.combine_folds : the deltas of several folds combined.

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

    Every pair, against a baseline (a the model, b the baseline) or not: with d_i = a_i -
    b_i, ``d_z = mean(d) / s_d`` (Cohen's d_z, s_d with ddof=1; null with fewer than two
    pairs or when every d_i is the same, to 12 significant digits of the values, the
    tolerance of a tie below). ``wins``, ``ties`` and ``losses`` count the users for whom
    model a is better than, equal to (the same value, to 12 significant digits) or worse
    than model b, "better" meaning higher unless the metric's registry entry says lower is
    better (the name before ``@``; a column of no registered metric counts as
    higher-is-better). Without a baseline, a stratum with one model, or two models without a
    user in common, is an error. Under ``test="tukey_hsd"`` the test permutes the models
    within each user, so it uses the users with a value under every model of the stratum
    (per metric): ``n_pairs`` counts them, every statistic of the row is computed on them
    and ``n_dropped_a`` / ``n_dropped_b`` count the others with a value under a / b. Its
    interval is ``delta -/+ hsd``, the ``1 - alpha`` quantile of the resampled range of
    the means: simultaneous over the pairs of the metric, it leaves out 0 about when the
    pair is significant (to the test's +1 in the p-value and the quantile's interpolation).

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

    Every pair, without ``baseline`` (here two models: one pair, a - b = A - B):

    >>> out = recframe.compare(per_user, test="tukey_hsd")
    >>> out.select("model_a", "model_b", "delta", "d_z", "wins", "ties", "losses", "p_value").rows()
    [('A', 'B', -0.375, -1.5, 0, 1, 3, 0.25)]

    d = 0, -0.5, -0.5, -0.5: mean -0.375, s_d = 0.25, d_z = -1.5; the 16 permutations
    (A and B swapped or not, per user) give the p-value of the randomization test.
    """
    alpha = stats.check_level("alpha", alpha)
    stats.check_choice("test", test, stats.TESTS)
    stats.check_choice("correction", correction, stats.CORRECTIONS)
    n_resamples, _ = stats.check_resampling(n_resamples, seed)
    keys = by_keys(by)
    if baseline is not None and test == "tukey_hsd":
        raise RecframeError(
            f"{ref('test', test)} compares every pair of models at once, and {ref('baseline', baseline)} asks for the "
            f"pairs with one model. Hint: drop {ref('baseline')} (the rows with {baseline!r} are those where it is "
            f"model_a or model_b), or pass {fix('test', 'randomization')}."
        )
    lf, engine = _frames.lazy(per_user_frame, "per_user_frame")
    if not engine.in_process and baseline is not None and test == "paired_t":
        return _compare_in_engine(lf, keys, baseline, user, metrics, correction, alpha)  # type: ignore[return-value]
    native, engine = polars_per_user(per_user_frame)
    schema = native.collect_schema()
    user = user_column_of(schema, user, keys)
    chosen = metric_columns_of(schema, keys, user, metrics)
    pair_schema = _pair_schema([(k, schema[k]) for k in keys[1:]], schema[keys[0]])
    out_schema = pair_schema if baseline is None else _as_baseline(pl.DataFrame(schema=pair_schema), keys).schema

    def run(df: pl.DataFrame) -> pl.DataFrame:
        rows = _rows(df, keys, baseline, user, chosen, test, correction, alpha, n_resamples, seed)
        return _result(pl.DataFrame(rows, schema=pair_schema), keys, baseline)

    result = without_skipped(native, schema).select(*keys, user, *chosen).map_batches(run, schema=out_schema, streamable=False)
    return engine.from_lazy(nw.from_native(result))


def refuse_null_keys(df: pl.DataFrame, by: str, user: str) -> None:
    """Refuse a null model or user: the two paths of compare would read them apart."""
    nulls = df.select(pl.col(by).null_count().alias("by"), pl.col(user).null_count().alias("user")).row(0, named=True)
    for arg, column in (("by", by), ("user", user)):
        if nulls[arg]:
            raise null_key_error(column, int(nulls[arg]), arg)


def _compare_in_engine(
    lf: nw.LazyFrame, keys: list[str], baseline: Any, user: str | None, metrics: Sequence[str] | None,
    correction: Correction | None, alpha: float,
) -> pl.DataFrame:  # fmt: skip
    """compare on a SQL engine's per-user frame (baseline, paired t test): the engine computes
    each pair's counts and moments (recframe.statistics._paired_engine); the result, a few rows, is a
    Polars DataFrame."""
    schema = nw.Schema(_frames.schema_of(lf, "per_user_frame"))  # names() and dtypes' is_numeric(), as Polars'
    user = user_column_of(schema, user, keys)  # type: ignore[arg-type]
    chosen = metric_columns_of(schema, keys, user, metrics)  # type: ignore[arg-type]
    every_metric = _tables.metric_columns(list(schema))
    if "n_relevant" in schema and every_metric:  # the users summary counts (see without_skipped)
        lf = lf.filter(
            ~((nw.col("n_relevant") == 0) & nw.any_horizontal(*(nw.col(c).is_null() for c in every_metric), ignore_nulls=False))
        )
    found: dict[str, list[Any]] = {name: [] for name in [*keys[1:], *PAIR_COLUMNS[:-2]]}
    for pair in _paired_engine.paired_t(lf, keys, baseline, user, chosen, alpha):
        for name, value in pair_row(pair).items():
            found[name].append(value)
    empty = lf.select(*keys).head(0).collect("polars").to_native().schema
    pair_schema = _pair_schema([(k, empty[k]) for k in keys[1:]], empty[keys[0]])
    return _result(pl.DataFrame(_with_adjusted(found, correction, alpha), schema=pair_schema), keys, baseline)


def _pair_schema(strata: list[tuple[str, Any]], key_dtype: Any) -> pl.Schema:
    """The schema of :data:`PAIR_COLUMNS` after the `strata` keys, the models of `key_dtype`."""
    return pl.Schema(
        strata
        + [("model_a", key_dtype), ("model_b", key_dtype), ("metric", pl.String)]
        + [(c, pl.Int64 if c in _PAIR_COUNTS else pl.Float64) for c in PAIR_COLUMNS[3:-1]]
        + [("significant", pl.Boolean)]
    )


def _as_baseline(out: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Pairs (model, baseline) named and ordered as a comparison with a baseline (:data:`COLUMNS`)."""
    return out.rename(_AS_BASELINE).select(*keys[1:], *COLUMNS)


def _result(out: pl.DataFrame, keys: list[str], baseline: Any) -> pl.DataFrame:
    """The rows of every pair as the result: against a baseline named as :data:`COLUMNS`; a
    difference past the float64 maximum refused; NaN, which marks an undefined value here, made
    null like a mean over no users."""
    if baseline is None:
        stats.refuse_overflow(out, [*keys[1:], "model_a", "model_b"], "means of the models")
    else:
        out = _as_baseline(out, keys)
        stats.refuse_overflow(out, [*keys[1:], "model"], "model and baseline means")
    return out.with_columns(pl.col(pl.Float64).fill_nan(None))


def _comparison(frame: Any, arg: str) -> tuple[pl.LazyFrame, _frames.Engine, pl.Schema]:
    lf, engine = _frames.lazy(frame, arg)
    if not engine.in_process:
        raise RecframeError(f"{arg} is a {engine.name} frame. Hint: pass the output of recframe.compare.")
    native = lf.to_native()
    return native, engine, native.collect_schema()


def _letter(k: int) -> str:
    letters = string.ascii_lowercase + string.ascii_uppercase
    return letters[k] if k < len(letters) else f"<{k}>"


def letter_columns(order: list[Any], different: set[frozenset[Any]]) -> list[list[Any]]:
    """The letter groups of a compact letter display by insert-and-absorb (Piepho 2004): two
    models share a group exactly when they are not `different`; groups ordered by their best
    member (`order`: best first).

    >>> letter_columns(["A", "B", "C"], {frozenset({"A", "C"})})
    [['A', 'B'], ['B', 'C']]
    """
    groups: list[set[Any]] = [set(order)]
    for pair in sorted(different, key=lambda p: sorted(order.index(m) for m in p)):
        i, j = sorted(pair, key=order.index)
        split: list[set[Any]] = []
        for group in groups:
            split += [group - {j}, group - {i}] if i in group and j in group else [group]
        # absorb: a group inside another (or equal to an earlier one) says nothing more
        groups = [g for k, g in enumerate(split) if not any(g < h or (g == h and m < k) for m, h in enumerate(split) if m != k)]
    ranked = [sorted(g, key=order.index) for g in groups]
    return sorted(ranked, key=lambda g: [order.index(m) for m in g])


@_frames.engine_call
def compare_letters(comparison: FrameT) -> FrameT:
    """The models of an all-pairs comparison ranked per metric, with the letters of a compact
    letter display: models that share a letter are not significantly different.

    Parameters
    ----------
    comparison : frame
        The output of :func:`compare` without ``baseline`` (every pair of models), any test.

    Returns
    -------
    frame of the same type as ``comparison``
        One row per (other keys, metric, model), best first: the other keys of the
        comparison (segments, folds), ``metric``, ``model``, ``mean``, ``rank`` (1 = best),
        ``letters`` (``"a"``, ``"ab"``, ...) and ``top_group`` (True for the best model and
        every model not significantly different from it).

    Notes
    -----
    Per (other keys, metric), models are ranked by their mean, highest first unless the
    metric's registry entry says lower is better; ties keep the models' sorted order. A
    model's mean is the ``mean_a`` / ``mean_b`` of its pair row with the most pairs: the same
    in every row when no user misses a model, and always under ``test="tukey_hsd"``, whose
    rows all use the users with every model. The letters come from the rows'
    ``significant`` column by insert-and-absorb (Piepho 2004): start from one group holding
    every model; for each significant pair, split every group holding both into one without
    each, then drop any group contained in another. Two models then share a letter exactly
    when their pair is not significant. Groups are lettered a, b, c, ... in the order of
    their best member, so the best model's letters start with ``a``; ``top_group`` marks the
    models whose pair with the best is not significant.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> pairs = pl.DataFrame({
    ...     "model_a": ["A", "A", "B"], "model_b": ["B", "C", "C"], "metric": ["ndcg@10"] * 3,
    ...     "n_pairs": [50, 50, 50], "mean_a": [0.30, 0.30, 0.28], "mean_b": [0.28, 0.20, 0.20],
    ...     "significant": [False, True, False],
    ... })
    >>> recframe.compare_letters(pairs).select("model", "rank", "letters", "top_group").rows()
    [('A', 1, 'a', True), ('B', 2, 'ab', True), ('C', 3, 'b', False)]
    """
    native, engine, schema = _comparison(comparison, "comparison")
    needed = ["model_a", "model_b", "metric", "n_pairs", "mean_a", "mean_b", "significant"]
    missing = [c for c in needed if c not in schema.names()]
    if missing:
        raise RecframeError(
            f"comparison lacks the columns {missing} of an all-pairs comparison (columns: {schema.names()}). "
            f"Hint: pass the output of recframe.compare without {ref('baseline')}: every pair of models."
        )
    strata = schema.names()[: schema.names().index("model_a")]
    columns: list[tuple[str, Any]] = [(k, schema[k]) for k in strata]
    out_schema = pl.Schema(
        columns
        + [("metric", pl.String), ("model", schema["model_a"]), ("mean", pl.Float64), ("rank", pl.Int64)]
        + [("letters", pl.String), ("top_group", pl.Boolean)]
    )

    def run(df: pl.DataFrame) -> pl.DataFrame:
        out: dict[str, list[Any]] = {name: [] for name in out_schema.names()}
        for (*stratum, metric), rows in df.group_by([*strata, "metric"], maintain_order=True):
            means: dict[Any, tuple[int, float]] = {}  # model -> (pairs, mean) of its row with the most pairs
            for row in rows.iter_rows(named=True):
                for model, mean in ((row["model_a"], row["mean_a"]), (row["model_b"], row["mean_b"])):
                    pairs = row["n_pairs"] or 0
                    if model not in means or pairs > means[model][0]:
                        means[model] = (pairs, math.nan if mean is None else mean)
            sign = -1.0 if _tables.higher_is_better(str(metric)) else 1.0
            models = sorted(means, key=lambda m: (m is None, m))
            order = sorted(
                models, key=lambda m: (math.isnan(means[m][1]), sign * means[m][1] if not math.isnan(means[m][1]) else 0.0)
            )
            different = {frozenset((r["model_a"], r["model_b"])) for r in rows.iter_rows(named=True) if r["significant"]}
            groups = letter_columns(order, different)
            best = order[0]
            for rank, model in enumerate(order, start=1):
                values = {
                    **dict(zip(strata, stratum)),
                    "metric": metric,
                    "model": model,
                    "mean": means[model][1],
                    "rank": rank,
                    "letters": "".join(_letter(k) for k, group in enumerate(groups) if model in group),
                    "top_group": model == best or frozenset((model, best)) not in different,
                }
                for name, value in values.items():
                    out[name].append(value)
        return pl.DataFrame(out, schema=out_schema).with_columns(pl.col("mean").fill_nan(None))

    result = native.map_batches(run, schema=out_schema, streamable=False)
    return engine.from_lazy(nw.from_native(result))


@_frames.engine_call
@stats.with_defaults
def combine_folds(
    comparison: FrameT, fold: str = "fold", *, alpha: float = stats.ALPHA, correction: Correction | None = stats.CORRECTION
) -> FrameT:
    """The deltas of a comparison made within each fold, combined over the folds: their mean
    with a t interval and a t test over the folds.

    Parameters
    ----------
    comparison : frame
        The output of :func:`compare` with ``by=["model", fold, ...]``: against a baseline or
        every pair of models.
    fold : str, default "fold"
        The key column of the folds (one of the comparison's other keys).
    alpha : float, default {ALPHA}
        Significance level; the interval of each row has coverage ``1 - alpha`` (not
        adjusted: see Returns).
    correction : {"holm", "bonferroni"} or None, default {CORRECTION}
        Multiple-testing correction over every row of the result: of ``p_adjusted`` and
        ``significant`` only.

    Returns
    -------
    frame of the same type as ``comparison``
        One row per (other keys but ``fold``, ``baseline``/``model`` or
        ``model_a``/``model_b``, metric): those keys, ``n_folds`` (folds with a delta), the
        two means averaged over the folds (``baseline_mean``/``model_mean`` or
        ``mean_a``/``mean_b``), ``delta`` (the mean of the fold deltas), ``delta_lo``,
        ``delta_hi``, ``p_value``, ``p_adjusted`` and ``significant``.

        Each column's adjustment: ``delta_lo`` / ``delta_hi`` and ``p_value`` are of the row
        alone, not adjusted for the other rows: the interval leaves out 0 exactly when
        ``p_value < alpha`` (one t distribution for both). ``p_adjusted`` is ``p_value``
        corrected over every row (``correction``), and ``significant`` is ``p_adjusted <
        alpha``. So with two rows or more a row can have an interval without 0 beside
        ``significant`` False (the example below); with ``correction=None``, ``significant``
        is true exactly when the interval leaves out 0. (As :func:`compare`, whose intervals
        are not corrected either.)

    Notes
    -----
    With the per-fold deltas d_1..d_F: ``delta = mean(d)``, the interval ``delta -/+
    t_{1 - alpha/2, F - 1} s_d / sqrt(F)`` and the p-value of the one-sample t test of
    mean(d) = 0 (:func:`recframe.stats.paired_t_test` of d against 0; needs scipy). Each fold
    counts once, whatever its number of users. The folds of a k-fold cross-validation share
    most of their training data, so their deltas are correlated and this interval is too
    narrow (Nadeau and Bengio 2003 widen it by the test/train size ratio); with few folds it
    is also wide (F - 1 degrees of freedom). Folds without a delta are left out; fewer than
    two folds give a null interval and p-value.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> per_fold = pl.DataFrame({
    ...     "fold": [1, 2, 3], "model_a": ["A"] * 3, "model_b": ["B"] * 3, "metric": ["ndcg@10"] * 3,
    ...     "mean_a": [0.5, 0.75, 1.0], "mean_b": [0.25, 0.25, 0.25], "delta": [0.25, 0.5, 0.75],
    ... })
    >>> out = recframe.combine_folds(per_fold)
    >>> out.select("model_a", "model_b", "n_folds", "delta").rows()
    [('A', 'B', 3, 0.5)]
    >>> [round(out.item(0, c), 4) for c in ("delta_lo", "delta_hi")]  # 0.5 -/+ 4.3027 x 0.25 / sqrt(3)
    [-0.121, 1.121]

    Two metrics, each with fold deltas 0.2, 0.3, 0.4: t = 0.3 / (0.1 / sqrt(3)) = 5.196 on 2
    degrees of freedom, p = 1 - t / sqrt(t^2 + 2) = 0.0351 < 0.05, and the interval 0.3 -/+
    4.3027 x 0.1 / sqrt(3) leaves out 0; Holm over the two rows doubles the smaller p-value,
    0.0702, and neither row is significant:

    >>> two = pl.concat([per_fold, per_fold.with_columns(metric=pl.lit("recall@10"))]).with_columns(
    ...     delta=pl.Series([0.2, 0.3, 0.4] * 2)
    ... )
    >>> out = recframe.combine_folds(two)
    >>> out.select(pl.col("delta_lo", "delta_hi", "p_value", "p_adjusted").round(4), "significant").row(0)
    (0.0516, 0.5484, 0.0351, 0.0702, False)
    >>> recframe.combine_folds(two, correction=None)["significant"].to_list()
    [True, True]
    """
    alpha = stats.check_level("alpha", alpha)
    stats.check_choice("correction", correction, stats.CORRECTIONS)
    native, engine, schema = _comparison(comparison, "comparison")
    names = schema.names()
    if "model_a" in names:
        pair, means = ["model_a", "model_b"], ["mean_a", "mean_b"]
    elif "baseline" in names:
        pair, means = ["baseline", "model"], ["baseline_mean", "model_mean"]
    else:
        raise RecframeError(
            f"comparison has neither model_a/model_b nor baseline/model columns (columns: {names}). "
            "Hint: pass the output of recframe.compare."
        )
    missing = [c for c in ["metric", *means, "delta"] if c not in names]
    strata = names[: names.index(pair[0])]
    if missing or fold not in strata:
        raise RecframeError(
            f"{ref('fold', fold)} is not one of the comparison's key columns {strata}"
            + (f" (and it lacks {missing})" if missing else "")
            + f". Hint: compare within folds, recframe.compare(per_user, by=['model', {fold!r}]), and pass "
            f"{fix('fold', fold)} the fold column."
        )
    keys = [k for k in strata if k != fold]
    out_schema = pl.Schema(
        [(k, schema[k]) for k in [*keys, *pair]]
        + [("metric", pl.String), ("n_folds", pl.Int64)]
        + [(c, pl.Float64) for c in [*means, "delta", "delta_lo", "delta_hi", "p_value", "p_adjusted"]]
        + [("significant", pl.Boolean)]
    )

    def run(df: pl.DataFrame) -> pl.DataFrame:
        out: dict[str, list[Any]] = {name: [] for name in out_schema.names()}
        for group_keys, rows in df.group_by([*keys, *pair, "metric"], maintain_order=True):
            rows = rows.filter(pl.col("delta").is_not_null() & pl.col("delta").is_not_nan())
            deltas = rows.get_column("delta").cast(pl.Float64).to_numpy()
            n = deltas.size
            lo, hi = stats.t_ci(deltas, 1 - alpha) if n >= 2 else (math.nan, math.nan)
            p_value = stats.paired_t_test(deltas, np.zeros(n)).p_value if n >= 2 else math.nan
            values = {
                **dict(zip([*keys, *pair, "metric"], group_keys)),
                "n_folds": n,
                **{c: stats.mean(rows.get_column(c).cast(pl.Float64).to_numpy()) for c in means},
                "delta": stats.mean(deltas),
                "delta_lo": lo,
                "delta_hi": hi,
                "p_value": p_value,
            }
            for name, value in values.items():
                out[name].append(value)
        adjusted = stats.adjust_pvalues(np.array(out["p_value"], dtype=float), correction)
        out["p_adjusted"] = adjusted.tolist()
        out["significant"] = [bool(p < alpha) for p in adjusted]
        return pl.DataFrame(out, schema=out_schema).with_columns(pl.col(pl.Float64).fill_nan(None))

    result = native.map_batches(run, schema=out_schema, streamable=False)
    return engine.from_lazy(nw.from_native(result))


@_frames.engine_call
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
    **options: Unpack[ListOptions],
) -> Any:
    """Per-user metrics of recommendations by model, then :func:`compare` against a baseline
    (or of every pair of models, without one).

    The same as ``compare(per_user(frame, k, metrics, by=by, **options), by=by, ...)``; also
    ``df.recmetrics.compare(...)``.

    Parameters
    ----------
    frame : DataFrame
        Recommendations in long format, as :func:`recframe.per_user` takes them.
    baseline : object, optional
        The value of the model column (``by``'s first key) the other models are compared with;
        without it, every pair of models is compared.
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
        One row per (model, metric), or per (pair of models, metric), as :func:`compare`
        returns it.

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

    user = options.get("user", "user_id")
    if user is None:
        raise RecframeError(
            f"compare pairs users, but {ref('user', None)} treats the frame as one list. "
            f"Hint: pass {ref('user')} the user column."
        )
    stats.check_choice("test", test, stats.TESTS)
    on = _frames.engine_of(frame)
    if not on.in_process and (baseline is None or test != "paired_t"):
        engine = on.name
        asked = f"{ref('test', test)}" + ("" if baseline is not None else f" over every pair ({ref('baseline', None)})")
        raise RecframeError(
            f"compare_recommendations on a {engine} frame runs the paired t test against a baseline inside {engine} "
            f"(from counts and means per model), and {asked} needs each user's values, which recframe does not pull "
            f"out of {engine} for you. Hint: pass {fix('test', 'paired_t')} with baseline=, or fetch "
            "recframe.per_user(...) of the same call into Polars (e.g. relation.pl() for DuckDB) and pass it to "
            "recframe.compare."
        )
    # intersection and unexpectedness compare lists with the same baseline model
    reads_baseline = _validate.reads(_validate.metric_names(metrics), "baseline")
    per_user = _call.per_user(frame, k, metrics, {"by": by, **({"baseline": baseline} if reads_baseline else {}), **options})
    return compare(
        per_user, by=by, baseline=baseline, user=user, test=test, correction=correction,
        alpha=alpha, seed=seed, n_resamples=n_resamples,
    )  # fmt: skip
