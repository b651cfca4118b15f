"""Metric-vs-k curves: every metric at every cut-off 1..k_max, from one pass over the data."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, TypeVar, cast

import narwhals as nw
import polars as pl

from recframe import _docs, api, profiles
from recframe.engine import _call, _frames, _validate
from recframe.errors import RecframeError, fix, ref
from recframe.metrics import REGISTRY, default_metrics
from recframe.options import CURVE_NAMES, IntervalOptions, Unpack

FrameT = TypeVar("FrameT")


class CappedWarning(UserWarning):
    """``curve(k_max=...)`` past the longest list (and past the default) was cut there."""


#: the default k_max, below which a curve is never capped
DEFAULT_K_MAX = 50


def _longest_list(frame: Any, options: dict[str, Any]) -> int | None:
    """An upper bound of the positions any list holds, from one aggregate query: the largest
    rank (``rank=``: a re-rank only closes gaps), or the most scored rows of one user
    (``score=``: positions are counted per list, and a user's lists are among their rows)."""
    lf = nw.from_native(frame, pass_through=False)
    lf = lf.lazy() if isinstance(lf, nw.DataFrame) else lf
    try:
        if options["score"] is not None:
            scored = lf.filter(~nw.col(options["score"]).is_null())
            counts = scored.group_by(options["user"]).agg(nw.len()) if options["user"] is not None else scored.select(nw.len())
            value = counts.select(nw.col(counts.columns[-1]).max()).collect().item()
        else:
            value = lf.select(nw.col(options["rank"]).cast(nw.Float64).max()).collect().item()
    except Exception:  # a missing or misnamed column: the summary call refuses it, in its words
        return None
    return int(min(value, 2**31)) if value is not None and value == value else 0


#: Always computed, so that every row of a curve is a point of the precision-recall curve.
PR_METRICS = ("precision", "recall")


# the options' names, from their one declaration (numpydoc: names sharing one entry, one line)
@_frames.engine_call
@_docs.filled(options="    " + ", ".join(CURVE_NAMES) + " : keyword options")
def curve(
    frame: FrameT,
    metrics: Sequence[str] | None = None,
    k_max: int = DEFAULT_K_MAX,
    **options: Unpack[IntervalOptions],
) -> FrameT:
    """Mean metrics at every cut-off k = 1..k_max, by group, in long format.

        Parameters
        ----------
        frame : pandas.DataFrame, polars.DataFrame, polars.LazyFrame or pyarrow.Table
            As for :func:`recframe.summary`.
        metrics : list of str, optional
            Metric names (``["ndcg", "ap"]``); ``"precision"`` and ``"recall"`` are always added,
            so that every row is also a precision-recall point. Default: every metric (with a
            profile, every metric its peer has at a cut-off: not trec_eval's or ranx's R-precision).
        k_max : int, default 50
            The largest cut-off: the curve has one row per k in 1..k_max (per group).
    {options}
            As for :func:`recframe.summary`.

        Returns
        -------
        frame of the same type as ``frame``
            The ``by`` columns, ``k``, the counts of :func:`recframe.summary` (``n_users``,
            ``n_skipped``, ``n_unranked``, ``n_no_relevant``, ``n_no_truth``), then one column per metric
            named by the metric (``"ndcg"``: the mean of ``ndcg@k``), each followed by ``_std``,
            ``_lo`` and ``_hi`` when ``ci`` is given; sorted by the keys and k. Lazy in, lazy out.

        See Also
        --------
        summary : the same means at chosen cut-offs, in wide format.
        recframe.plot.curve : draws this frame.

        Notes
        -----
        The value at k is exactly ``summary(frame, k=k)``'s column ``<metric>@<k>``: the same
        formulas, conventions and undefined-case policy (see :func:`recframe.per_user`). All
        cut-offs come from one ``summary`` call with ``k=[1, ..., k_max]``, so the data are read,
        checked and grouped once, not once per k. ``r_precision`` gives its capped form
        ``r_precision@k`` (the bare column does not depend on k and is left out).

        Examples
        --------
        >>> import polars as pl
        >>> import recframe
        >>> df = pl.DataFrame({
        ...     "user_id": [1, 1, 1],
        ...     "item_id": ["a", "b", "c"],
        ...     "rank": [1, 2, 3],
        ...     "relevance": [0, 1, 1],
        ... })
        >>> out = recframe.curve(df, metrics=["rr"], k_max=3)
        >>> out.columns
        ['k', 'n_users', 'n_skipped', 'n_unranked', 'n_no_relevant', 'n_no_truth', 'rr', 'precision', 'recall']
        >>> out.select("k", "precision", "recall").rows()  # hits 0, 1, 2 of R = 2
        [(1, 0.0, 0.0), (2, 0.5, 0.5), (3, 0.6666666666666666, 1.0)]
    """
    k_max = _validate.whole_at_least("k_max", k_max, 1, "is not a positive integer.", f"pass {fix('k_max', 50)}.")
    call = _call.resolve(1, metrics, dict(options), CURVE_NAMES, "curve")
    profile, ci, no_cutoff = call["profile"], call["ci"], set(call["no_cutoff"])
    if call["metrics"] is None or metrics is None:  # every metric the profile's peer has at a cut-off
        names = [m for m in call["metrics"] or default_metrics() if m not in no_cutoff]
    else:
        names = [call["metrics"]] if isinstance(call["metrics"], str) else list(call["metrics"])
    flat = [m for m in names if m in no_cutoff]
    if flat:
        raise RecframeError(
            f"{ref('profile', profile)}: {profiles.PROFILES[profile].peer} has {flat[0]!r} without a cut-off only, so it "
            f"has no curve over k. Hint: leave {flat[0]!r} out of metrics, or use {fix('profile', 'recframe')}."
        )
    # a metric of the whole list only (infap) or of fixed levels (iprec_at_recall) has no @k
    whole = [m for m in names if m in REGISTRY and (REGISTRY[m].variants or not REGISTRY[m].with_k)]
    if whole:
        raise RecframeError(
            f"metric {whole[0]!r} has no cut-off k (it reads the whole list), so it has no curve over k. "
            f"Hint: leave it out of metrics, and get it from summary(..., metrics=[{whole[0]!r}])."
        )
    names += [m for m in PR_METRICS if m not in names]
    if k_max > DEFAULT_K_MAX:
        # each cut-off is a column of the plan: past the longest list, the work would be set by
        # the argument, not by the data (k_max=10**4 on 4 rows: 50 s)
        longest = _longest_list(frame, call)
        if longest is not None and k_max > max(longest, DEFAULT_K_MAX):
            capped = max(longest, DEFAULT_K_MAX)
            warnings.warn(
                f"curve(k_max={k_max}): the longest list holds at most {longest} ranked item(s), so the curve "
                f"stops at k={capped}; past its end no item is added, and each metric follows from its value there.",
                CappedWarning,
                stacklevel=2,
            )
            k_max = capped
    wide = api.summary_of(frame, {**call, "k": list(range(1, k_max + 1)), "metrics": names, "aggregate": "mean"})
    suffixes = ("", "_std", "_lo", "_hi") if ci is not None else ("",)
    if isinstance(wide, pl.LazyFrame):
        # the summary is a few rows: reshaped once it is computed, so that the plan runs once
        # (each k's selection of the lazy plan would run it again: 1M rows, k = 1..10: 2 s -> 0.3 s)
        empty = _long(nw.from_native(pl.DataFrame(schema=wide.collect_schema())), names, k_max, suffixes)
        reshaped = wide.map_batches(
            lambda table: _long(nw.from_native(table), names, k_max, suffixes).to_native(),
            schema=empty.to_native().schema,
            streamable=False,
        )
        return cast(FrameT, reshaped)  # lazy in, lazy out
    long = _long(nw.from_native(wide, pass_through=False), names, k_max, suffixes)
    if isinstance(long, nw.DataFrame):
        long = nw.maybe_reset_index(long)  # pandas: a fresh 0..n-1 index, like summary's
    return long.to_native()


def _long(wide: Any, names: list[str], k_max: int, suffixes: tuple[str, ...]) -> Any:
    """The wide summary (one column per metric and k) as one row per (group, k)."""
    columns = wide.columns
    keys = columns[: columns.index("n_users")]
    counts = [c for c in columns if _validate.is_count_column(c)]
    # renamed, not aliased: narwhals turns each expression into the engine's in Python (see
    # recframe.engine._engine._aggregates), and a curve has k_max times a column per metric
    parts = [
        wide.select(*keys, *counts, *(f"{m}@{k}{s}" for m in names for s in suffixes))
        .rename({f"{m}@{k}{s}": f"{m}{s}" for m in names for s in suffixes})
        .with_columns(nw.lit(k, dtype=nw.Int64).alias("k"))
        for k in range(1, k_max + 1)
    ]
    order = [*keys, "k", *counts, *(f"{m}{s}" for m in names for s in suffixes)]
    return nw.concat(parts, how="vertical").select(order).sort([*keys, "k"])
