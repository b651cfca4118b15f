"""The ``.recmetrics`` namespace on pandas and Polars frames: a stateless forwarder.

Nothing is checked in ``__init__``: Polars swallows errors raised there and pandas builds a new
accessor on every attribute access, so every check lives in the functions themselves.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import polars as pl

from recframe import api
from recframe.curve import curve
from recframe.off_policy import off_policy
from recframe.reporting import _inspect, page
from recframe.statistics.agreement import agreement
from recframe.statistics.compare import compare_recommendations
from recframe.statistics.disparity import disparity


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
    :func:`recframe.report_page` (the evaluation as one HTML page); on logged feedback,
    :func:`recframe.off_policy` (what a target policy would have earned on that traffic).
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
    #: on logged feedback (``logs.recmetrics.off_policy(target="p_new")``)
    off_policy = _forward(off_policy)


def register() -> None:
    """Register ``.recmetrics`` on pl.DataFrame and pl.LazyFrame, and on pd.DataFrame: now when
    pandas is imported, else the moment it is (idempotent). recframe does not import pandas
    itself: a process that never uses it does not pay its import (a fifth of a second and
    some 65 MB with pyarrow)."""
    if getattr(pl.DataFrame, "recmetrics", None) is not RecMetrics:
        pl.api.register_dataframe_namespace("recmetrics")(RecMetrics)
    if getattr(pl.LazyFrame, "recmetrics", None) is not RecMetrics:
        pl.api.register_lazyframe_namespace("recmetrics")(RecMetrics)
    if "pandas" in sys.modules:
        _register_pandas(sys.modules["pandas"])
    elif not any(isinstance(finder, _WhenPandasLoads) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WhenPandasLoads())


def _register_pandas(pd: ModuleType) -> None:
    if getattr(pd.DataFrame, "recmetrics", None) is not RecMetrics:
        pd.api.extensions.register_dataframe_accessor("recmetrics")(RecMetrics)


class _WhenPandasLoads(importlib.abc.MetaPathFinder):
    """Registers the pandas accessor as soon as pandas is imported: it finds pandas' spec
    through the other finders and runs the registration after pandas' own module code."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pandas":
            return None
        sys.meta_path.remove(self)  # (once: the finders after it find pandas)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _register_pandas(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
