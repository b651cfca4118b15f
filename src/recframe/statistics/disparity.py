"""Gaps between groups of users: each group's mean, the largest gap, the ratio, the mean
absolute difference, and an unpaired test, per model and metric, on a per-user frame."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

import narwhals as nw
import numpy as np
import polars as pl

from recframe.engine import _frames, _tables
from recframe.errors import RecframeError, fix, ref
from recframe.statistics import stats
from recframe.statistics.compare import (
    by_keys,
    metric_columns_of,
    polars_per_user,
    refuse_infinite,
    user_column_of,
    without_skipped,
)
from recframe.statistics.stats import Correction, UnpairedTest

FrameT = TypeVar("FrameT")
Pairs = Literal["extremes", "all"]
PAIRS: tuple[str, ...] = ("extremes", "all")

#: the columns of ``pairs="extremes"`` after the ``by`` keys (then ``mean_<g>``, ``n_<g>``)
EXTREMES = (
    "metric", "n_groups", "high_group", "low_group", "high_mean", "low_mean", "n_high", "n_low",
    "difference", "ratio", "mad", "gap_lo", "gap_hi", "p_value", "p_adjusted", "significant",
)  # fmt: skip
#: the columns of ``pairs="all"`` after the ``by`` keys
ALL_PAIRS = (
    "metric", "group_a", "group_b", "mean_a", "mean_b", "n_a", "n_b", "gap", "gap_lo", "gap_hi",
    "p_value", "p_adjusted", "significant",
)  # fmt: skip

_TESTS = {
    "welch": lambda a, b, n, rng: stats.welch_t_test(a, b),
    "mann_whitney": lambda a, b, n, rng: stats.mann_whitney_test(a, b),
    "permutation": lambda a, b, n, rng: stats.permutation_test(a, b, n, rng),
}


def _gap_interval(a: np.ndarray, b: np.ndarray, alpha: float, n_resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(a) - mean(b), each group resampled on its own."""
    if a.size == 0 or b.size == 0:
        return math.nan, math.nan
    gaps = stats.bootstrap_means(a, n_resamples, rng) - stats.bootstrap_means(b, n_resamples, rng)
    low, high = np.quantile(gaps, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _check_groups(df: pl.DataFrame, group: str, keys: list[str]) -> list[Any]:
    nulls = df.get_column(group).null_count()
    if nulls:
        raise RecframeError(
            f"{ref('group', group)}: {nulls} user row(s) have a null group, which no group mean can hold. "
            f"Hint: fill it first, e.g. pl.col({group!r}).fill_null('unknown'), or drop those users."
        )
    values = df.get_column(group).unique().sort().to_list()
    if len(values) < 2:
        raise RecframeError(
            f"{ref('group', group)} has {len(values)} value(s) ({values}): a gap between groups needs at least two. "
            f"Hint: pass a user attribute with two or more values, e.g. {fix('group', 'segment')}."
        )
    names = [str(v) for v in values]
    if len(set(names)) < len(names):
        raise RecframeError(f"{ref('group', group)} has values that print alike ({values}). Hint: cast the column to text first.")
    clash = {f"mean_{n}" for n in names} | {f"n_{n}" for n in names}
    if clash & {*keys, *EXTREMES}:
        raise RecframeError(
            f"{ref('group', group)}: a value names a result column ({sorted(clash & set(EXTREMES))}). Hint: rename it."
        )
    return values


def _rows(
    df: pl.DataFrame,
    keys: list[str],
    group: str,
    metrics: list[str],
    test: str,
    pairs: str,
    correction: Correction | None,
    alpha: float,
    n_resamples: int,
    seed: Any,
) -> pl.DataFrame:
    groups = _check_groups(df, group, keys)
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    strata = df.partition_by(keys, as_dict=True, maintain_order=False)
    for stratum in sorted(strata, key=lambda g: tuple((v is None, v) for v in g)):
        part = strata[stratum]
        # one array per group and metric: NaN (a null value) is left out of each
        values = {g: part.filter(pl.col(group) == g).select(pl.col(metrics).cast(pl.Float64).fill_null(np.nan)) for g in groups}
        for metric in metrics:
            arrays = {g: (a := values[g].get_column(metric).to_numpy())[~np.isnan(a)] for g in groups}
            present = [g for g in groups if arrays[g].size]
            means = {g: stats.mean(arrays[g]) for g in present}
            # values near the float64 maximum: tests and intervals on exactly scaled values
            scale = stats.overflow_scale(*arrays.values())
            scaled = {g: arrays[g] / scale for g in groups}
            base = {**dict(zip(keys, stratum)), "metric": metric}
            if pairs == "all":
                for a, b in itertools.combinations(groups, 2):
                    result = _TESTS[test](scaled[a], scaled[b], n_resamples, rng)
                    low, high = _gap_interval(scaled[a], scaled[b], alpha, n_resamples, rng)
                    rows.append({
                        **base, "group_a": str(a), "group_b": str(b), "mean_a": means.get(a), "mean_b": means.get(b),
                        "n_a": arrays[a].size, "n_b": arrays[b].size,
                        "gap": means[a] - means[b] if a in means and b in means else None,
                        "gap_lo": low * scale, "gap_hi": high * scale, "p_value": result.p_value,
                    })  # fmt: skip
                continue
            row: dict[str, Any] = {**dict.fromkeys(EXTREMES[1:]), **base, "n_groups": len(present)}
            if len(present) >= 2:
                high_group = max(present, key=lambda g: (means[g], str(g)))
                low_group = min(present, key=lambda g: (means[g], str(g)))
                result = _TESTS[test](scaled[high_group], scaled[low_group], n_resamples, rng)
                low, high = _gap_interval(scaled[high_group], scaled[low_group], alpha, n_resamples, rng)
                top, bottom = means[high_group], means[low_group]
                differences = np.array([abs(means[a] - means[b]) for a, b in itertools.combinations(present, 2)])
                row |= {
                    "high_group": str(high_group), "low_group": str(low_group), "high_mean": top, "low_mean": bottom,
                    "n_high": arrays[high_group].size, "n_low": arrays[low_group].size, "difference": top - bottom,
                    "ratio": bottom / top if top != 0 else None, "mad": stats.mean(differences),
                    "gap_lo": low * scale, "gap_hi": high * scale, "p_value": result.p_value,
                }  # fmt: skip
            for g in groups:
                row[f"mean_{g}"], row[f"n_{g}"] = means.get(g), arrays[g].size
            rows.append(row)
    out = pl.DataFrame(rows, infer_schema_length=None)
    stats.refuse_overflow(out, keys, "group means")
    p_values = out.get_column("p_value").cast(pl.Float64).fill_null(np.nan).to_numpy()
    adjusted = stats.adjust_pvalues(p_values, correction)
    return out.with_columns(
        pl.Series("p_adjusted", adjusted), pl.Series("significant", [bool(p < alpha) for p in adjusted])
    ).with_columns(pl.col(pl.Float64).fill_nan(None))


@_frames.engine_call
@stats.with_defaults
def disparity(
    per_user_frame: FrameT,
    group: str = "segment",
    by: str | Sequence[str] = "model",
    metrics: Sequence[str] | None = None,
    *,
    user: str | None = None,
    test: UnpairedTest = stats.UNPAIRED_TEST,
    pairs: Pairs = "extremes",
    correction: Correction | None = stats.CORRECTION,
    alpha: float = stats.ALPHA,
    seed: int | None = None,
    n_resamples: int = stats.TEST_RESAMPLES,
) -> FrameT:
    """How a metric differs between groups of users (segments, markets, cohorts), per model.

    Parameters
    ----------
    per_user_frame : pandas.DataFrame, polars.DataFrame, polars.LazyFrame or pyarrow.Table
        One row per (model, user) with the group column and metric columns: the output of
        ``recframe.per_user(..., users=users, by=["model", "segment"])``.
    group : str, default "segment"
        The column holding each user's group. Every row needs one (a null is refused), and
        there must be two groups or more.
    by : str or list of str, default "model"
        The model column, then any other keys (folds): groups are compared within each.
    metrics : list of str, optional
        Metric columns (``["ndcg@10"]``). Default: every metric column.
    user : str, optional
        The user column (default: as :func:`recframe.compare` finds it); users are never
        paired, it only tells the metric columns apart.
    test : {"welch", "permutation", "mann_whitney"}, default {UNPAIRED_TEST}
        The unpaired two-sided test of two groups: Welch's t (needs scipy), a permutation test
        of the difference of means (``n_resamples``, ``seed``), or Mann-Whitney's U (normal
        approximation with tie and continuity corrections).
    pairs : {"extremes", "all"}, default "extremes"
        Test the group with the highest mean against the one with the lowest (one row per
        model and metric, with every group's mean and count), or every pair of groups (one
        row per pair).
    correction : {"holm", "bonferroni"} or None, default {CORRECTION}
        Multiple-testing correction over every row of the result.
    alpha : float, default {ALPHA}
        Significance level; the bootstrap interval of the gap has coverage ``1 - alpha``.
    seed : int, optional
        Seed of the permutation test and the bootstrap.
    n_resamples : int, default {TEST_RESAMPLES}
        Permutations (exact when the splits are not more) and bootstrap resamples.

    Returns
    -------
    frame of the same type as ``per_user_frame``
        ``pairs="extremes"``: the ``by`` keys, ``metric``, ``n_groups`` (groups with a value),
        ``high_group`` / ``low_group`` (highest and lowest mean), ``high_mean``, ``low_mean``,
        ``n_high``, ``n_low``, ``difference`` (high - low: fairlearn's ``difference()``),
        ``ratio`` (low / high: its ``ratio()``, null when high is 0), ``mad`` (the mean of
        |mean_g - mean_h| over pairs of groups: Elliot's UserMAD), ``gap_lo`` / ``gap_hi``
        (bootstrap interval of the difference), ``p_value``, ``p_adjusted``,
        ``significant``, then ``mean_<g>`` and ``n_<g>`` for every group g in sorted order.
        ``pairs="all"``: the keys, ``metric``, ``group_a``, ``group_b``, ``mean_a``,
        ``mean_b``, ``n_a``, ``n_b``, ``gap`` (a - b), ``gap_lo``, ``gap_hi``, ``p_value``,
        ``p_adjusted``, ``significant``. Groups are given as text.

    Notes
    -----
    The users of two groups are different people, so the test is unpaired: a paired test
    (:func:`recframe.compare`) would pair unrelated users. A null metric value is left out of
    its group (``n_<g>`` counts the values), and a user skipped for every metric (no relevant
    item under ``empty_users="skip"``) is left out as :func:`recframe.summary` leaves it out.
    The bootstrap resamples each group on its own. With fewer than two values in a group,
    Welch's p-value is null; a group without any value is left out of the gap.

    Examples
    --------
    >>> import polars as pl
    >>> import recframe
    >>> per_user = pl.DataFrame({
    ...     "model": ["A"] * 6,
    ...     "user_id": [1, 2, 3, 4, 5, 6],
    ...     "segment": ["new", "new", "new", "old", "old", "old"],
    ...     "recall@10": [0.0, 0.5, 0.25, 1.0, 0.75, 0.5],
    ... })
    >>> out = recframe.disparity(per_user, group="segment", test="permutation")
    >>> out.select("high_group", "low_group", "difference", "ratio", "p_value").rows()
    [('old', 'new', 0.5, 0.3333333333333333, 0.2)]

    The means are 0.75 and 0.25 (ratio 1/3); of the 20 ways to split the six values into two groups of
    three, 2 reach a gap of 0.5 (0.5 is in both groups: either can go with 1 and 0.75), so
    p = 2 x 2 / 20 = 0.2 (exact).
    """
    alpha = stats.check_level("alpha", alpha)
    stats.check_choice("test", test, stats.UNPAIRED_TESTS)
    stats.check_choice("pairs", pairs, PAIRS)
    stats.check_choice("correction", correction, stats.CORRECTIONS)
    n_resamples, _ = stats.check_resampling(n_resamples, seed)
    keys = by_keys(by)
    if not isinstance(group, str):
        raise RecframeError(f"{ref('group', group)} must name one column. Hint: pass {fix('group', 'segment')}.")
    if group in keys:
        raise RecframeError(
            f"{ref('group', group)} is also in {ref('by', keys)}: the groups are compared within each by key. "
            f"Hint: leave {group!r} out of by."
        )
    native, engine = polars_per_user(per_user_frame)
    schema = native.collect_schema()
    if group not in schema.names():
        raise RecframeError(
            f"{ref('group', group)} is not a column of per_user_frame (columns: {schema.names()}). Hint: evaluate with "
            f"recframe.per_user(..., users=users, by=[..., {group!r}]) so that each row carries its group."
        )
    if _tables.is_metric_column(group) or group == "n_relevant" or (metrics is not None and group in metrics):
        segments = [c for c in schema.names() if c not in keys and not _tables.is_metric_column(c) and c != "n_relevant"]
        raise RecframeError(
            f"{ref('group', group)} is a metric column: group must be a column that groups users (a segment, a market, "
            f"a cohort), whose values are compared. Hint: pass one of the other columns ({segments}), or add one with "
            "recframe.per_user(..., users=users, by=[..., 'segment'])."
        )
    user = user_column_of(schema, user, [*keys, group])
    chosen = metric_columns_of(schema, keys, user, metrics)
    df = without_skipped(native, schema).select(*keys, group, user, *chosen).collect()
    refuse_infinite(df, chosen, user, keys[0])
    out = _rows(df, keys, group, chosen, test, pairs, correction, alpha, n_resamples, seed)
    order = [*keys, *(ALL_PAIRS if pairs == "all" else EXTREMES)]
    out = out.select(*order, *(c for c in out.columns if c not in order))
    return engine.from_lazy(nw.from_native(out.lazy()))
