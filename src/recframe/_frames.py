"""Conversion between the user's frame type and the Polars lazy frame the engine runs on.

pandas and Arrow inputs cross into Polars through Arrow (cheap for numeric columns) and the
result crosses back, so every input runs the same Polars plan. A Polars LazyFrame stays lazy:
nothing is collected for the user.
"""

from __future__ import annotations

from typing import Any, Literal

import narwhals as nw
import pandas as pd
import polars as pl
import pyarrow as pa

from recframe.errors import RecframeError

Kind = Literal["pandas", "polars", "polars-lazy", "pyarrow"]


def _flag_sorted(df: pl.DataFrame, key: str | None) -> pl.DataFrame:
    """Tell Polars when the grouping key is already sorted (exports usually are): its
    group-bys then skip hashing. Checking costs one cheap pass; a wrong flag is never set."""
    if key is not None and key in df.columns and df.height and df[key].null_count() == 0:
        column = df[key]
        if not column.flags["SORTED_ASC"] and column.dtype.is_numeric() and column.is_sorted():
            return df.set_sorted(key)
    return df


def to_lazy(frame: Any, arg: str, sorted_key: str | None = None) -> tuple[nw.LazyFrame, Kind]:
    """Wrap `frame` as a narwhals LazyFrame over Polars and say what kind it was."""
    if isinstance(frame, pl.LazyFrame):
        return nw.from_native(frame), "polars-lazy"
    if isinstance(frame, pl.DataFrame):
        return nw.from_native(_flag_sorted(frame, sorted_key).lazy()), "polars"
    if isinstance(frame, pd.DataFrame):
        # pandas' missing-value marker in float columns is NaN: it becomes null here
        return nw.from_native(_flag_sorted(pl.from_pandas(frame), sorted_key).lazy()), "pandas"
    if isinstance(frame, pa.Table):
        return nw.from_native(_flag_sorted(pl.from_arrow(frame), sorted_key).lazy()), "pyarrow"
    raise RecframeError(
        f"{arg} is a {type(frame).__module__}.{type(frame).__qualname__}; recframe takes a pandas "
        "DataFrame, a Polars DataFrame or LazyFrame, or a pyarrow Table. "
        "Hint: convert it first, e.g. pl.from_pandas(...) or pl.from_arrow(...)."
    )


def from_lazy(lf: nw.LazyFrame, kind: Kind) -> Any:
    """Return the result as the same kind of frame as the input."""
    native: pl.LazyFrame = lf.to_native()
    if kind == "polars-lazy":
        return native
    df = native.collect()
    if kind == "pandas":
        return df.to_pandas()
    if kind == "pyarrow":
        return df.to_arrow()
    return df
