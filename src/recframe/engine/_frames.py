"""The backends: conversion between the user's frame type and the lazy frame the engine runs
on, and each engine's traits, one class per engine behind one protocol (:class:`Engine`).

pandas and Arrow inputs cross into Polars through Arrow (cheap for numeric columns) and the
result crosses back, so every in-memory input runs the same Polars plan (:class:`PolarsFrame`).
A Polars LazyFrame stays lazy: nothing is collected for the user (:class:`PolarsLazy`).
DuckDB relations (:class:`DuckDB`), PySpark, Spark Connect and SQLFrame DataFrames
(:class:`Spark`) and Ibis tables (:class:`Ibis`) stay in their engine: the plan runs there and
the result is that engine's frame.

An engine says where the data checks run, how a computed frame is held, how it groups and
windows, how it ranks by score, which column names it refuses and how its refusals are worded;
:func:`engine_of` picks the class of a native frame, :func:`runs_on` that of a narwhals one.
A new engine is one class here. :func:`engine_call` says what a public call switches off while
it builds a PySpark plan.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

import narwhals as nw
import polars as pl

from recframe import _names as n
from recframe.errors import RecframeError, ref

if TYPE_CHECKING:
    import pandas as pd

Kind = Literal["pandas", "polars", "polars-lazy", "pyarrow", "engine"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class _SparkCallSites:
    """How many recframe calls are building a plan now, and PySpark's own setting to restore
    when the last one ends (see :func:`engine_call`)."""

    lock = threading.Lock()
    depth = 0
    saved: Any = None


@contextlib.contextmanager
def _spark_call_sites_off() -> Iterator[None]:
    """PySpark (4.x) records the Python call site of every column function it is handed, for the
    "DataFrame query context" of its error messages: five round trips to the JVM per function.
    A recframe plan is hundreds of such functions whose call sites are narwhals' own lines, of
    no use in an error, and the round trips were 0.5 s of a 2.1 s summary on Spark local[2] at
    1M rows. So while a call builds its plan, the setting PySpark caches
    (``spark.python.sql.dataFrameDebugging.enabled``) reads False, and is restored after, to
    the value it had, when the outermost call ends. Only PySpark's (private) cache of that setting
    can switch it once the session exists; without it (PySpark not imported, or another version)
    nothing changes. A thread building its own Spark columns meanwhile loses its call sites too."""
    utils: Any = sys.modules.get("pyspark.errors.utils")
    if utils is None or not hasattr(utils, "_enable_debugging_cache"):
        yield
        return
    with _SparkCallSites.lock:
        if _SparkCallSites.depth == 0:
            _SparkCallSites.saved = utils._enable_debugging_cache
        _SparkCallSites.depth += 1
        utils._enable_debugging_cache = False
    try:
        yield
    finally:
        with _SparkCallSites.lock:
            _SparkCallSites.depth -= 1
            if _SparkCallSites.depth == 0:
                utils._enable_debugging_cache = _SparkCallSites.saved


def engine_call(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """A public function that may build a plan on an engine's frame: while it runs, PySpark
    records no call sites (see :func:`_spark_call_sites_off`; nothing changes without PySpark)."""

    @functools.wraps(function)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with _spark_call_sites_off():
            return function(*args, **kwargs)

    call.__recframe_engine_call__ = True  # type: ignore[attr-defined]
    return call


def numbers_below(one_row: nw.LazyFrame, count: int, name: str) -> nw.LazyFrame:
    """Rows ``0 .. count - 1`` in an int64 column `name`, made inside the engine of `one_row`
    (one row, an integer column ``__rf_one``) from a table of the ten digits crossed with itself:
    about log10(count) joins, never one expression per number."""
    # a digit is the count times 0 plus the digit, an int64 on every engine: Ibis writes an
    # int64 literal as a bare number, which DuckDB reads as an int32 (too narrow for some uses)
    zero = nw.col("__rf_one").cast(nw.Int64) * 0
    digits = nw.concat([one_row.select((zero + d).alias(name)) for d in range(10)])
    table, scale = digits, 10
    while scale < count:
        table = table.join(digits.rename({name: "__rf_digit"}), how="cross").select(
            (nw.col(name) * 10 + nw.col("__rf_digit")).alias(name)
        )
        scale *= 10
    return table.filter(nw.col(name) < count)


def _flag_sorted(df: pl.DataFrame, key: str | None) -> pl.DataFrame:
    """Tell Polars when the grouping key is already sorted (exports usually are): its
    group-bys then skip hashing. Checking costs one cheap pass; a wrong flag is never set."""
    if key is not None and key in df.columns and df.height and df[key].null_count() == 0:
        column = df[key]
        if not column.flags["SORTED_ASC"] and column.dtype.is_numeric() and column.is_sorted():
            return df.set_sorted(key)
    return df


def list_runs(lf: nw.LazyFrame, keys: list[str], name: str) -> nw.LazyFrame | None:
    """`lf` (an in-memory Polars frame) with column `name` numbering its runs of rows of equal
    `keys` (0, 1, 2, ... in row order, flagged sorted) when each distinct key combination is one
    run, else None. A group-by on (model, user) hashes both columns of every row (10M rows:
    0.11 s against 0.04 s for one sorted integer); exports usually hold each model's lists in
    order, and numbering the runs costs one pass plus a distinct count over the runs' first rows.
    """
    native = lf.to_native()
    # a run starts at the first row and where any key differs from the row before (nulls equal);
    # the numbering and the count of distinct starts in one parallel query (10M rows, three
    # models: 0.23 s as an eager struct rle_id and a second pass, 0.09 s so)
    start = (pl.int_range(pl.len()) == 0) | pl.any_horizontal([pl.col(k).ne_missing(pl.col(k).shift(1)) for k in keys])
    flagged = native.with_columns(start.alias("__rf_start"))
    numbered = flagged.with_columns((pl.col("__rf_start").cum_sum() - 1).cast(pl.Int64).alias(name)).drop("__rf_start")
    starts = flagged.filter(pl.col("__rf_start")).select(pl.len().alias("runs"), pl.struct(keys).n_unique().alias("lists"))
    df, counts = pl.collect_all([numbered, starts])
    if counts["lists"][0] < counts["runs"][0]:  # a list whose rows are split into several runs
        return None
    return nw.from_native(df.set_sorted(name).lazy())


def _unsupported(frame: Any, arg: str) -> RecframeError:
    name = f"{type(frame).__module__}.{type(frame).__qualname__}"
    if type(frame).__module__.split(".")[0] == "dask":
        # narwhals runs on Dask, but Dask has no ordered windows or rank and counts distinct
        # values per partition: the plan would be wrong, not merely slow
        return RecframeError(
            f"{arg} is a Dask DataFrame ({name}); recframe does not run on Dask, which lacks the "
            "ordered window functions the metrics need. Hint: read the same parquet files with "
            "DuckDB (duckdb.read_parquet('export/*.parquet')) or Spark (spark.read.parquet(...)), "
            "or with pl.scan_parquet on one machine, and pass that frame instead."
        )
    return RecframeError(
        f"{arg} is a {name}; recframe takes a pandas DataFrame, a Polars DataFrame or LazyFrame, "
        "a pyarrow Table, a DuckDB relation, a PySpark or SQLFrame DataFrame, or an Ibis table. "
        "Hint: convert it first, e.g. pl.from_pandas(...) or pl.from_arrow(...)."
    )


def _in_memory(frame: Any) -> str | None:
    """Which in-memory frame `frame` is (a key of _IN_MEMORY), or None. A frame of pandas or
    pyarrow exists only once its library is imported: recframe never imports one to check (a
    Polars user's process, or the trec_eval drop-in, never loads them)."""
    for kind, name in (("polars", "DataFrame"), ("pandas", "DataFrame"), ("pyarrow", "Table")):  # (kind: the library)
        found = sys.modules.get(kind)
        if found is not None and isinstance(frame, getattr(found, name)):
            return kind
    return None


def _from_pandas(frame: pd.DataFrame, arg: str) -> pl.DataFrame:
    """A pandas frame as Polars, or a RecframeError naming the column that cannot cross."""
    import pyarrow as pa  # (pandas 2 imports it already)

    duplicated = [str(c) for c in frame.columns[frame.columns.duplicated()]]
    if duplicated:
        raise RecframeError(
            f"{arg} has more than one column named {duplicated[0]!r}; recframe reads columns by name. "
            "Hint: rename or drop the duplicates, e.g. df.loc[:, ~df.columns.duplicated()]."
        )
    try:
        df = pl.from_pandas(frame)
    except (pa.ArrowException, pl.exceptions.PolarsError, TypeError, ValueError) as error:
        for column in frame.columns:  # only on failure: find the column that does not convert
            try:
                pl.from_pandas(frame[[column]])
            except (pa.ArrowException, pl.exceptions.PolarsError, TypeError, ValueError):
                raise RecframeError(
                    f"column {str(column)!r} of {arg} holds {frame[column].dtype} values that Arrow, and so "
                    f"recframe, cannot read as one column ({str(error).splitlines()[0][:120]}). Hint: cast it "
                    f"to one plain type first, e.g. df[{str(column)!r}].astype(str) or pd.to_numeric(df[{str(column)!r}])."
                ) from None
        raise RecframeError(f"{arg} could not be converted from pandas: {error}. Hint: check its dtypes.") from None
    # an object column of nothing but None has no type in pandas (Arrow would call it String):
    # it holds no values, which every column may, so it becomes Polars' Null type
    empty = [c for c in frame.columns if frame[c].dtype == object and len(frame) and frame[c].isna().all()]
    return df.with_columns(pl.lit(None, dtype=pl.Null).alias(str(c)) for c in empty) if empty else df


def schema_of(lf: nw.LazyFrame, arg: str) -> dict[str, Any]:
    """The frame's schema; a frame that cannot be read (a parquet glob that matches nothing, a
    corrupt file) raises a RecframeError naming it."""
    try:
        return dict(lf.collect_schema())
    except (pl.exceptions.PolarsError, nw.exceptions.NarwhalsError, OSError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RecframeError(
            f"{arg} could not be read: {first}. Hint: check the path or glob it was scanned from "
            "(pl.scan_parquet matches no file?) and that the files are well-formed."
        ) from None


#: DuckDB holds what recframe computes once in the client (fast) while it is estimated at most
#: this share of the connection's memory_limit; past it, in a temporary table the limit covers
LARGE_SHARE = 0.25


_UNITS = {
    "": 1,
    "B": 1,
    "BYTES": 1,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}


def _bytes(setting: str) -> float:
    """DuckDB's memory_limit as it reads it out ("3.7 GiB", "512.0 MiB"; no limit: infinite)."""
    found = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", setting)
    if found is None or found.group(2).upper() not in _UNITS:
        return float("inf")
    return float(found.group(1)) * _UNITS[found.group(2).upper()]


def _duckdb_temp_table(relation: Any) -> Any:
    """A DuckDB relation computed once into a temporary table of its own connection, which
    DuckDB keeps under its ``memory_limit`` and spills to its temp directory: a relation held
    in the client (``relation.materialize()``) is outside that limit (130M rows of recommendations
    and truth under ``memory_limit='4GB'``: a 7.0 GiB process, 4.3 GiB with the table). The
    table lives as long as the connection (the result, lazy, reads it after the call), as
    Ibis' temporary tables do; its name starts with ``__recframe_``. A connection that refuses
    it (no rights, a catalog that will not hold it) gets the client-held copy."""
    import duckdb  # (installed: the relation is one of its)

    name = f"__recframe_{uuid.uuid4().hex}"
    try:
        relation.query("__recframe_rows", f'CREATE TEMP TABLE "{name}" AS FROM __recframe_rows')
    except (duckdb.PermissionException, duckdb.CatalogException):  # (a data error raises as it is)
        return relation.materialize()
    return relation.query("__recframe_rows", f'FROM "{name}"')


def _ibis_temp_table(lf: nw.LazyFrame) -> nw.LazyFrame:
    """An Ibis table computed once into a temporary table of its backend. Ibis' ``cache()`` and
    ``create_table`` send DuckDB 2.0 SQL it no longer parses, so on DuckDB the statement goes
    through the backend's own connection; a backend that cannot make one keeps the plan
    as it is (it then runs once per query, which is right, only slower)."""
    import ibis

    native = lf.to_native()
    name = f"__recframe_{uuid.uuid4().hex}"
    try:
        backend = native._find_backend()
        if backend.name == "duckdb":
            backend.con.execute(f'CREATE TEMP TABLE "{name}" AS {ibis.to_sql(native, dialect="duckdb")}')
            return nw.from_native(backend.table(name))
        return nw.from_native(backend.create_table(name, native, temp=True))
    except Exception:  # a backend without temporary tables, or without the rights to make one
        return lf


def when_collected(lf: nw.LazyFrame, inspect: Callable[[nw.DataFrame], None], share_subplans: bool = True) -> nw.LazyFrame:
    """A Polars LazyFrame that calls ``inspect`` on its rows once they are computed, before
    anything downstream reads them (so an eager input raises before a result exists, and a
    lazy one raises at collect).

    With ``share_subplans=False`` the rows are computed without Polars' common-subplan
    elimination: the passes that read the same input then each read it themselves instead
    of sharing one cached copy, which the streaming engine would hold whole (100M rows: a
    5 GiB peak instead of 2.5 GiB). Right when the shared part is cheap to compute again (a
    rename and casts); a join or a ranking is better shared. Those rows are then computed by
    Polars' default engine, whichever engine collects the result.
    """
    native = lf.to_native()
    schema = native.collect_schema()

    def checked(table: pl.DataFrame) -> pl.DataFrame:
        inspect(nw.from_native(table))
        return table

    if share_subplans:
        return nw.from_native(native.map_batches(checked, schema=schema, streamable=False))
    separate = pl.QueryOptFlags(comm_subplan_elim=False)
    return nw.from_native(pl.defer(lambda: checked(native.collect(optimizations=separate)), schema=schema))


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


#: the aggregates :func:`over_groups` takes
GroupAgg = Literal["mean", "sum", "count", "min"]


def sql_name(column: str) -> str:
    """A column name as a DuckDB SQL identifier."""
    return '"' + column.replace('"', '""') + '"'


# ---------------------------------------------------------------------------- the engines


class Engine:
    """One engine's traits, behind which the plan is written once (narwhals' per-backend
    classes are the model). A new engine is one subclass, picked by :func:`engine_of`; the
    defaults here are a SQL engine's that runs narwhals' portable plan as it is."""

    #: its name in messages
    name: str
    #: the data checks run when the function is called (one small query on the computed
    #: per-list table), else when the result is collected (Polars: they ride along the plan)
    checks_now: bool = True
    #: its rows are computed in this process: Python code may read every row (a SQL engine
    #: keeps them; recframe pulls no rows out of it)
    in_process: bool = False
    #: a count of its rows is cheap enough to run while a call is prepared
    counts_cheaply: bool = False
    #: the type of frame the input was, which the result is given back as (a label: no code
    #: branches on it)
    kind: Kind = "engine"

    def lazy(self, frame: Any, arg: str, sorted_key: str | None = None) -> nw.LazyFrame:
        """`frame` (of this engine) as a narwhals LazyFrame; `sorted_key` is for Polars."""
        return nw.from_native(frame)

    def from_lazy(self, lf: nw.LazyFrame) -> Any:
        """The result as the type of frame the input was: an engine's lazy frame."""
        return lf.to_native()

    def materialize(self, lf: nw.LazyFrame, large: bool = False) -> nw.LazyFrame:
        """`lf` computed now, once, so that the queries reading it next (the data checks, then
        the metrics) do not each run its plan again (`large`: it may strain the engine's
        memory, see :meth:`large`). Here: as it is (its plan then runs once per query)."""
        return lf

    def cache(self, lf: nw.LazyFrame) -> nw.LazyFrame:
        """`lf` shared by every reader of one plan (Polars: a cache node); here as it is."""
        return lf

    def hold(self, lf: nw.LazyFrame, large: bool = False) -> nw.LazyFrame:
        """`lf` computed once for the many passes that read it: materialized by a SQL engine,
        a cache node on Polars."""
        return self.materialize(lf, large)

    def check(
        self, table: nw.LazyFrame, inspect: Callable[[Any], None], large: bool = False, share_subplans: bool = True
    ) -> nw.LazyFrame:
        """`table` with `inspect` run on its rows (the data checks): a SQL engine computes the
        table once and inspects it now (one small query); Polars when the rows are computed."""
        table = self.materialize(table, large)
        inspect(table)
        return table

    def after_checks(self, table: nw.LazyFrame, per_list: nw.LazyFrame) -> nw.LazyFrame:
        """`table`, computed after the call's data checks, which read the per-list table
        `per_list`: a SQL engine ran them at the call (see :meth:`check`)."""
        return table

    def run_checks(self, per_list: nw.LazyFrame) -> None:
        """Run the call's data checks now, before Python reads a result (see :meth:`after_checks`)."""

    def large(self, inputs: list[nw.LazyFrame | None], columns: int) -> bool:
        """Whether rows computed from `inputs` (`columns` wide) may strain the engine's memory,
        so that :meth:`materialize` takes the way it can spill: only DuckDB has two ways."""
        return False

    def group_agg(self, lf: nw.LazyFrame, keys: list[str], *aggs: nw.Expr) -> nw.LazyFrame:
        """``lf.group_by(keys).agg(*aggs)``, for any key name the frame allows."""
        return lf.group_by(keys).agg(*aggs)

    def over_groups(self, lf: nw.LazyFrame, keys: list[str], aggregates: dict[str, tuple[GroupAgg, str]]) -> nw.LazyFrame:
        """`lf` with, per name, an aggregate of a column over the rows of its group (equal
        `keys`) on every row: windows. A null key is a group of its own."""
        return lf.with_columns(getattr(nw.col(c), agg)().over(*keys).alias(name) for name, (agg, c) in aggregates.items())

    def rank_by_score(
        self, lf: nw.LazyFrame, lists: list[str], bound: list[str], descending: bool, cut: int | None
    ) -> nw.LazyFrame:
        """`lf` with RANK = each eligible row's position in its list by (score descending, the
        `bound` columns ascending, ``__rf_item_order``, descending or not), null on the other
        rows (see :func:`recframe.engine._engine.score_positions`). The portable running count:
        counting only eligible rows makes where null scores sort irrelevant. `cut`: DuckDB's."""
        if descending:
            # (score, item) descending = a cumulative sum from the end of the ascending order
            position = nw.col(n.ELIGIBLE).cum_sum(reverse=True).over(*lists, order_by=[n.SCORE, "__rf_item_order"])
        else:
            lf = lf.with_columns((-nw.col(n.SCORE)).alias("__rf_neg_score"))
            position = nw.col(n.ELIGIBLE).cum_sum().over(*lists, order_by=["__rf_neg_score", *bound, "__rf_item_order"])
        # (cast: DuckDB sums integers to INT128, which SQLFrame cannot type)
        lf = lf.with_columns(nw.when(nw.col(n.ELIGIBLE) == 1).then(position).otherwise(None).cast(nw.Int64).alias(n.RANK))
        return lf if descending else lf.drop("__rf_neg_score")

    def list_runs(self, lf: nw.LazyFrame, keys: list[str], name: str) -> nw.LazyFrame | None:
        """`lf` numbered by its runs of rows of equal `keys` (see :func:`list_runs`), or None:
        only a frame in memory has its rows in an order."""
        return None

    def check_names(self, names: list[str]) -> None:
        """Refuse the column names the engine cannot take (here: none)."""

    def engine_error(self, error: Exception) -> RecframeError | None:
        """The engine's refusal of the plan, in words that say what to change (None: unknown)."""
        return None

    def load_hint(self, arg: str) -> str:
        """How to bring a side frame `arg` onto this engine, for :func:`same_engine`."""
        return " (pl.from_pandas / pl.from_arrow, or collect it from its engine)."


class _Polars(Engine):
    """The Polars plan, in this process: the checks ride along it (:func:`when_collected`)."""

    name = "Polars"
    checks_now = False
    in_process = True

    def cache(self, lf: nw.LazyFrame) -> nw.LazyFrame:
        """`lf` as an explicit cache node, which every reader of the plan shares (Polars' own
        common-subplan elimination does not nest)."""
        return nw.from_native(lf.to_native().cache())

    def hold(self, lf: nw.LazyFrame, large: bool = False) -> nw.LazyFrame:
        return self.cache(lf)

    def check(
        self, table: nw.LazyFrame, inspect: Callable[[Any], None], large: bool = False, share_subplans: bool = True
    ) -> nw.LazyFrame:
        return when_collected(table, inspect, share_subplans=share_subplans)

    def after_checks(self, table: nw.LazyFrame, per_list: nw.LazyFrame) -> nw.LazyFrame:
        """The checks ride along the per-list table: one count of it makes them run first."""
        return table.join(per_list.select(nw.len().alias("__rf_checked")), how="cross").drop("__rf_checked")

    def run_checks(self, per_list: nw.LazyFrame) -> None:
        per_list.select(nw.len()).collect()

    def rank_by_score(
        self, lf: nw.LazyFrame, lists: list[str], bound: list[str], descending: bool, cut: int | None
    ) -> nw.LazyFrame:
        """Polars' ordered window sorts every list by two keys (some 1.2 s per 10M rows);
        ranking one struct of (score, item) costs a third of it."""
        score = pl.when(pl.col(n.SCORE) == 0).then(0.0).otherwise(pl.col(n.SCORE))  # -0.0: not left to the row encoding
        # (the relevance order only where ties= reads it: a constant field costs 10% of the ranking)
        key = pl.struct(
            (score if descending else -score).alias("s"), *(pl.col(c) for c in bound), pl.col("__rf_item_order").alias("i")
        )
        # a null key (a row not eligible) stays null and takes no position
        ranked = pl.when(pl.col(n.ELIGIBLE) == 1).then(key).rank("ordinal", descending=descending).over(lists)
        return nw.from_native(lf.to_native().with_columns(ranked.cast(pl.Int64).alias(n.RANK)))


class PolarsFrame(_Polars):
    """A frame in memory: a Polars DataFrame, or a pandas DataFrame or Arrow table, which cross
    into Polars through Arrow and back (`kind` says which; `read` and `write` cross)."""

    counts_cheaply = True

    def __init__(self, kind: Kind, read: Callable[[Any, str], pl.DataFrame], write: Callable[[pl.DataFrame], Any]) -> None:
        self.kind, self.read, self.write = kind, read, write

    def lazy(self, frame: Any, arg: str, sorted_key: str | None = None) -> nw.LazyFrame:
        return nw.from_native(_flag_sorted(self.read(frame, arg), sorted_key).lazy())

    def from_lazy(self, lf: nw.LazyFrame) -> Any:
        return self.write(lf.to_native().collect())

    def list_runs(self, lf: nw.LazyFrame, keys: list[str], name: str) -> nw.LazyFrame | None:
        return list_runs(lf, keys, name)


def _from_arrow(frame: Any, arg: str) -> pl.DataFrame:
    table = pl.from_arrow(frame)
    assert isinstance(table, pl.DataFrame)  # a Table (not an Array) gives a DataFrame
    return table


class PolarsLazy(_Polars):
    """A Polars LazyFrame: it stays lazy, nothing is collected for the user."""

    kind: Kind = "polars-lazy"


class DuckDB(Engine):
    """A DuckDB relation: the plan runs inside DuckDB, the result is a relation."""

    name = "DuckDB"
    counts_cheaply = True

    def materialize(self, lf: nw.LazyFrame, large: bool = False) -> nw.LazyFrame:
        """Held in the client (``relation.materialize()``, same connection), or, `large`,
        written to a temporary table of its connection (:func:`_duckdb_temp_table`)."""
        native = lf.to_native()
        return nw.from_native(_duckdb_temp_table(native) if large else native.materialize())

    def large(self, inputs: list[nw.LazyFrame | None], columns: int) -> bool:
        """Whether rows computed from DuckDB `inputs` (at most their rows, `columns` values of 8
        bytes each) may take more than LARGE_SHARE of the connection's ``memory_limit``: one
        count per input (parquet answers it from its metadata) and the setting. At 10M rows a
        temporary table costs 0.2 s more than the client's copy (2.3 s, ranked by score= and
        joined with truth=), so it is kept for the rows that would strain the limit."""
        frames = [f for f in inputs if f is not None and f.implementation is nw.Implementation.DUCKDB]
        if not frames:
            return False
        rows = sum(int(f.select(nw.len()).collect().item()) for f in frames)
        setting = frames[0].to_native().query("__recframe_any", "SELECT current_setting('memory_limit')").fetchall()[0][0]
        return rows * columns * 8 > LARGE_SHARE * _bytes(str(setting))

    def group_agg(self, lf: nw.LazyFrame, keys: list[str], *aggs: nw.Expr) -> nw.LazyFrame:
        """narwhals (2.29) hands DuckDB its group keys as SQL text, unquoted: a key named
        ``m.odel`` reads as column ``odel`` of a table ``m``, and `` model `` loses its spaces.
        Such keys are grouped under plain names and renamed back (Ibis quotes them itself;
        Spark and SQLFrame refuse dotted names up front)."""
        odd = {key: f"__rf_key{i}" for i, key in enumerate(keys) if not _PLAIN_NAME.fullmatch(key)}
        if not odd:
            return lf.group_by(keys).agg(*aggs)
        out = lf.rename(odd).group_by([odd.get(key, key) for key in keys]).agg(*aggs)
        return out.rename({plain: key for key, plain in odd.items()})

    def over_groups(self, lf: nw.LazyFrame, keys: list[str], aggregates: dict[str, tuple[GroupAgg, str]]) -> nw.LazyFrame:
        """DuckDB pays for each partition of a window, and ties="average"'s groups of equal
        scores are mostly single rows, so the partition is the list (every key but the last)
        and the frame the rows of equal last key (bench/ties.py's 2M rows near the top: 2.7 s
        of CPU partitioned by score, 0.8 s so)."""
        # (not a group-by joined back to the rows: DuckDB 2.0.1 then spent 88 s inlining the plan's CTEs)
        *lists, last = keys
        partition = f"PARTITION BY {', '.join(sql_name(k) for k in lists)} " if lists else ""
        frame = f"OVER ({partition}ORDER BY {sql_name(last)} RANGE BETWEEN CURRENT ROW AND CURRENT ROW)"
        sql = {"mean": "avg", "sum": "sum", "count": "count", "min": "min"}
        windows = ", ".join(f"{sql[agg]}({sql_name(c)}) {frame} AS {sql_name(name)}" for name, (agg, c) in aggregates.items())
        return nw.from_native(lf.to_native().project(f"*, {windows}"))

    def rank_by_score(
        self, lf: nw.LazyFrame, lists: list[str], bound: list[str], descending: bool, cut: int | None
    ) -> nw.LazyFrame:
        """DuckDB runs narwhals' ordered cum_sum as a running sum; a row number costs half of
        it. With `cut`, TIE_FLOOR: ties="average"'s score at the largest k from the ranking's
        own sort."""
        # the rows not eligible are a partition of their own
        partition = ", ".join(sql_name(c) for c in [*lists, n.ELIGIBLE])
        within = "".join(f"{sql_name(c)} ASC, " for c in bound)
        order = f"{sql_name(n.SCORE)} DESC, {within}{sql_name('__rf_item_order')} {'DESC' if descending else 'ASC'}"
        number = f"CAST(row_number() OVER (PARTITION BY {partition} ORDER BY {order}) AS BIGINT)"
        floor = ""
        if cut is not None:
            # a window of its own sorts every row again (bench/ties.py's frame in DuckDB: 1.9 s
            # of a 6.4 s summary). On the rows past the k-th, the k-th score (null before)
            frame = f"OVER (PARTITION BY {partition} ORDER BY {order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
            floor = f", nth_value({sql_name(n.SCORE)}, {cut}) {frame} AS {sql_name(n.TIE_FLOOR)}"
        relation = lf.to_native().project(
            f"*, CASE WHEN {sql_name(n.ELIGIBLE)} = 1 THEN {number} END AS {sql_name(n.RANK)}{floor}"
        )
        return nw.from_native(relation)

    def engine_error(self, error: Exception) -> RecframeError | None:
        if "different connections" in str(error):
            return RecframeError(
                f"the recommendations and a side frame ({ref('truth')}, {ref('users')} or {ref('exclude')}) are DuckDB relations of two "
                "different connections, which DuckDB cannot join. Hint: create every frame from one connection, "
                "e.g. con.from_arrow(...) or con.sql(...) with the same con."
            )
        return None

    def load_hint(self, arg: str) -> str:
        return f" (e.g. duckdb.from_arrow({arg}_table))."


class Spark(Engine):
    """A PySpark, Spark Connect or SQLFrame DataFrame (`name`); SQLFrame has no checkpoint
    (`checkpoints`)."""

    def __init__(self, name: str, checkpoints: bool = True) -> None:
        self.name, self.checkpoints = name, checkpoints

    def materialize(self, lf: nw.LazyFrame, large: bool = False) -> nw.LazyFrame:
        """Checkpointed on the executors; SQLFrame's plan then runs once per query."""
        return nw.from_native(lf.to_native().localCheckpoint(eager=True)) if self.checkpoints else lf

    def check_names(self, names: list[str]) -> None:
        """Spark and SQLFrame read a dot in a column name as a struct field and a backtick as
        quoting: such names cannot be passed through safely, so they are refused up front."""
        for name in names:
            if "." in name or "`" in name:
                raise RecframeError(
                    f"column {name!r} has a {'dot' if '.' in name else 'backtick'} in its name, which "
                    f"{self.name} reads as {'a struct field' if '.' in name else 'quoting'}. "
                    f"Hint: rename it first, e.g. df.withColumnRenamed({name!r}, {name.replace('.', '_').replace('`', '')!r})."
                )

    def load_hint(self, arg: str) -> str:
        return f" (e.g. spark.createDataFrame({arg}_table))."


class Ibis(Engine):
    """An Ibis table: the plan compiles to the backend's SQL (BigQuery, Snowflake, Postgres, ...)."""

    name = "Ibis"

    def materialize(self, lf: nw.LazyFrame, large: bool = False) -> nw.LazyFrame:
        """Written to a temporary table of its backend (:func:`_ibis_temp_table`)."""
        return _ibis_temp_table(lf)


#: every engine class, for the tests that hold each to the whole protocol
ENGINE_CLASSES: tuple[type[Engine], ...] = (PolarsFrame, PolarsLazy, DuckDB, Spark, Ibis)

_IN_MEMORY = {
    "polars": PolarsFrame("polars", lambda frame, arg: frame, lambda df: df),
    # pandas' missing-value marker in float columns is NaN: it becomes null here
    "pandas": PolarsFrame("pandas", lambda frame, arg: _from_pandas(frame, arg), lambda df: df.to_pandas()),
    "pyarrow": PolarsFrame("pyarrow", _from_arrow, lambda df: df.to_arrow()),
}

#: the engine a narwhals LazyFrame runs on, by its implementation
_RUNS_ON: dict[nw.Implementation, Engine] = {
    nw.Implementation.POLARS: PolarsLazy(),
    nw.Implementation.DUCKDB: DuckDB(),
    nw.Implementation.PYSPARK: Spark("PySpark"),
    nw.Implementation.PYSPARK_CONNECT: Spark("PySpark Connect"),
    nw.Implementation.SQLFRAME: Spark("SQLFrame", checkpoints=False),
    nw.Implementation.IBIS: Ibis(),
}


def engine_of(frame: Any, arg: str = "frame") -> Engine:
    """The engine of a native `frame` (converts nothing); a frame of no engine recframe runs
    on raises a RecframeError naming `arg`."""
    if isinstance(frame, pl.LazyFrame):
        return _RUNS_ON[nw.Implementation.POLARS]
    kind = _in_memory(frame)
    if kind is not None:
        return _IN_MEMORY[kind]
    if type(frame).__module__.split(".")[0] == "dask":
        raise _unsupported(frame, arg)
    try:
        lf = nw.from_native(frame)
    except TypeError:
        raise _unsupported(frame, arg) from None
    if not isinstance(lf, nw.LazyFrame) or lf.implementation is nw.Implementation.POLARS or lf.implementation not in _RUNS_ON:
        raise _unsupported(frame, arg)
    return _RUNS_ON[lf.implementation]


def lazy(frame: Any, arg: str, sorted_key: str | None = None) -> tuple[nw.LazyFrame, Engine]:
    """`frame` as a narwhals LazyFrame (over Polars, or over its own engine), and its engine."""
    engine = engine_of(frame, arg)
    return engine.lazy(frame, arg, sorted_key), engine


def runs_on(lf: nw.LazyFrame) -> Engine:
    """The engine a narwhals LazyFrame runs on (a Polars one: as a LazyFrame; the traits of
    the plan are the same for every Polars input)."""
    return _RUNS_ON[lf.implementation]


def same_engine(frame: nw.LazyFrame, side: nw.LazyFrame, arg: str = "truth") -> None:
    """A side input (`truth=`, `users=`, `exclude=`) must live where the recommendations live:
    a join cannot cross engines."""
    engine = runs_on(frame)
    a, b = engine.name, runs_on(side).name
    if a != b:
        raise RecframeError(
            f"{ref(arg)} is a {b} frame but the recommendations are a {a} frame; the two are joined, "
            f"so they must be on the same engine. Hint: load the {arg} frame into {a} too" + engine.load_hint(arg)
        )


def group_agg(lf: nw.LazyFrame, keys: list[str], *aggs: nw.Expr) -> nw.LazyFrame:
    """``lf.group_by(keys).agg(*aggs)`` on the engine of `lf` (:meth:`Engine.group_agg`)."""
    return runs_on(lf).group_agg(lf, keys, *aggs)


def over_groups(lf: nw.LazyFrame, keys: list[str], aggregates: dict[str, tuple[GroupAgg, str]]) -> nw.LazyFrame:
    """Windows on the engine of `lf` (:meth:`Engine.over_groups`)."""
    return runs_on(lf).over_groups(lf, keys, aggregates)


def cache(lf: nw.LazyFrame) -> nw.LazyFrame:
    """`lf` shared by the readers of one plan on the engine of `lf` (:meth:`Engine.cache`)."""
    return runs_on(lf).cache(lf)
