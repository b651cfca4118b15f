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

from recframe import _inspect, api, page
from recframe.agreement import agreement
from recframe.compare import compare_recommendations
from recframe.curve import curve
from recframe.disparity import disparity


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

    The methods are :func:`recframe.per_user`, :func:`recframe.summary`, :func:`recframe.curve`
    and :func:`recframe.compare_recommendations` (per-user metrics by model, then
    :func:`recframe.compare`) with this frame as their first argument; on a per-user frame,
    :func:`recframe.disparity` (gaps between groups of users); :func:`recframe.item_groups` (what
    each group of items gets); :func:`recframe.per_item` (who each item reaches); :func:`recframe.tied_cutoffs` (where ties could move a number);
    :func:`recframe.agreement` (how far the models' lists agree); :func:`recframe.inspect` (a few users' lists) and
    :func:`recframe.report_page` (the evaluation as one HTML page).
    """

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    per_user = _forward(api.per_user)
    summary = _forward(api.summary)
    curve = _forward(curve)
    item_groups = _forward(api.item_groups)
    per_item = _forward(api.per_item)
    tied_cutoffs = _forward(api.tied_cutoffs)
    agreement = _forward(agreement)
    inspect = _forward(_inspect.inspect)
    report_page = _forward(page.report_page)

    compare = _forward(compare_recommendations)
    #: on a per-user frame (``per_user_frame.recmetrics.disparity(group="segment")``)
    disparity = _forward(disparity)


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
