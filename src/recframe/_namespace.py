"""The ``.recmetrics`` namespace on pandas and Polars frames: a stateless forwarder.

Nothing is checked in ``__init__``: Polars swallows errors raised there and pandas builds a new
accessor on every attribute access, so every check lives in the functions themselves.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pandas as pd
import polars as pl

from recframe import api
from recframe.compare import compare as compare_per_user
from recframe.curve import curve
from recframe.errors import RecframeError
from recframe.stats import Correction, Test


def _forward(function: Callable[..., Any]) -> Callable[..., Any]:
    """A method with `function`'s signature (less the frame) and docstring, calling it on the frame."""

    @functools.wraps(function)
    def method(self: RecMetrics, *args: Any, **kwargs: Any) -> Any:
        return function(self._frame, *args, **kwargs)

    params = list(inspect.signature(function).parameters.values())
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = inspect.signature(function).replace(parameters=[self_param, *params[1:]])  # type: ignore[attr-defined]
    return method


class RecMetrics:
    """Ranking metrics of this frame: ``df.recmetrics.per_user(...)``, ``df.recmetrics.summary(...)``.

    The methods are :func:`recframe.per_user`, :func:`recframe.summary` and
    :func:`recframe.curve` with this frame as their first argument, and ``compare``, which
    computes :func:`recframe.per_user` by model and passes it to :func:`recframe.compare`.
    """

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    per_user = _forward(api.per_user)
    summary = _forward(api.summary)
    curve = _forward(curve)

    def compare(
        self,
        baseline: Any = None,
        k: Any = 10,
        metrics: Any = None,
        *,
        by: str | list[str] = "model",
        test: Test = "paired_t",
        correction: Correction | None = "holm",
        alpha: float = 0.05,
        seed: int | None = None,
        n_resamples: int = 10_000,
        **options: Any,
    ) -> Any:
        """Per-user metrics of this frame by ``by``, then :func:`recframe.compare` against ``baseline``.

        ``k``, ``metrics`` and ``**options`` (``truth=``, ``users=``, ``exclude=``, ``score=``,
        ``relevance=``, ``threshold=``, ``user=``, ...) go to :func:`recframe.per_user` with
        ``by`` (the model key first, then any fold or segment keys to compare within); ``test``,
        ``correction``, ``alpha``, ``seed`` and ``n_resamples`` to :func:`recframe.compare`.

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
                "compare pairs users, but user=None treats the frame as one list. Hint: pass user= the user column."
            )
        per_user = api.per_user(self._frame, k, metrics, by=by, **options)
        return compare_per_user(
            per_user, by=by, baseline=baseline, user=user, test=test, correction=correction,
            alpha=alpha, seed=seed, n_resamples=n_resamples,
        )  # fmt: skip


def register() -> None:
    """Register ``.recmetrics`` on pl.DataFrame, pl.LazyFrame and pd.DataFrame (idempotent)."""
    for owner in (pl.DataFrame, pl.LazyFrame, pd.DataFrame):
        if getattr(owner, "recmetrics", None) is RecMetrics:
            continue
        if owner is pd.DataFrame:
            pd.api.extensions.register_dataframe_accessor("recmetrics")(RecMetrics)
        elif owner is pl.DataFrame:
            pl.api.register_dataframe_namespace("recmetrics")(RecMetrics)
        else:
            pl.api.register_lazyframe_namespace("recmetrics")(RecMetrics)
