"""The backends: conversion between the user's frame type and the lazy frame the engine runs
on, and each engine's traits, in one place.

pandas and Arrow inputs cross into Polars through Arrow (cheap for numeric columns) and the
result crosses back, so every in-memory input runs the same Polars plan. A Polars LazyFrame
stays lazy: nothing is collected for the user. DuckDB relations, PySpark and SQLFrame
DataFrames stay in their engine: the plan runs there and the result is that engine's frame.

The traits: which engines run SQL (:data:`ENGINES`, :func:`sql_engine`), what is materialized
on each (:func:`materialize`, :func:`cache`), where lists come as runs of rows
(:data:`IN_MEMORY`, :func:`list_runs`), how a group's aggregate reaches its rows
(:func:`over_groups`), which column names an engine cannot take
(:func:`check_names`), how an engine's refusal is worded (:func:`engine_error`) and what a
public call switches off while it builds a PySpark plan (:func:`engine_call`). The one
engine-specific step of the plan, ranking by score, is :func:`recframe._engine.score_positions`.
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

from recframe.errors import RecframeError, ref

if TYPE_CHECKING:
    import pandas as pd

Kind = Literal["pandas", "polars", "polars-lazy", "pyarrow", "engine"]

# SQL engines that run the narwhals plan inside themselves (window functions, joins, group-bys)
ENGINES = {
    nw.Implementation.DUCKDB: "DuckDB",
    nw.Implementation.PYSPARK: "PySpark",
    nw.Implementation.PYSPARK_CONNECT: "PySpark Connect",
    # Ibis tables: the plan compiles to the backend's SQL (BigQuery, Snowflake, Postgres, ...)
    nw.Implementation.IBIS: "Ibis",
    nw.Implementation.SQLFRAME: "SQLFrame",
}


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


#: the kinds whose frames are in memory (in Polars by the time the plan runs)
IN_MEMORY: tuple[Kind, ...] = ("polars", "pandas", "pyarrow")


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


def cache(lf: nw.LazyFrame) -> nw.LazyFrame:
    """`lf` as an explicit cache node on Polars, which every reader of the plan shares (Polars'
    own common-subplan elimination does not nest); as it is elsewhere."""
    return nw.from_native(lf.to_native().cache()) if lf.implementation is nw.Implementation.POLARS else lf


def counts_cheaply(lf: nw.LazyFrame, kind: Kind) -> bool:
    """Whether a count of `lf`'s rows is cheap enough to run while a call is prepared: in memory
    or in DuckDB; a LazyFrame or a Spark job would pay a pass over the data first."""
    return kind in IN_MEMORY or (kind == "engine" and lf.implementation is nw.Implementation.DUCKDB)


def check_names(lf: nw.LazyFrame, names: list[str]) -> None:
    """Spark and SQLFrame read a dot in a column name as a struct field and a backtick as
    quoting: such names cannot be passed through safely, so they are refused up front."""
    if lf.implementation not in (nw.Implementation.PYSPARK, nw.Implementation.PYSPARK_CONNECT, nw.Implementation.SQLFRAME):
        return
    for name in names:
        if "." in name or "`" in name:
            raise RecframeError(
                f"column {name!r} has a {'dot' if '.' in name else 'backtick'} in its name, which "
                f"{engine_name(lf)} reads as {'a struct field' if '.' in name else 'quoting'}. "
                f"Hint: rename it first, e.g. df.withColumnRenamed({name!r}, {name.replace('.', '_').replace('`', '')!r})."
            )


def engine_error(error: Exception) -> RecframeError | None:
    """A SQL engine's refusal of the plan, in words that say what to change (None: unknown)."""
    if "different connections" in str(error):
        return RecframeError(
            f"the recommendations and a side frame ({ref('truth')}, {ref('users')} or {ref('exclude')}) are DuckDB relations of two "
            "different connections, which DuckDB cannot join. Hint: create every frame from one connection, "
            "e.g. con.from_arrow(...) or con.sql(...) with the same con."
        )
    return None


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


def _is_pandas(frame: Any) -> bool:
    """Whether `frame` is a pandas DataFrame. A frame of pandas (or pyarrow, :func:`_is_arrow`)
    exists only once its library is imported: recframe never imports one to check (a Polars
    user's process, or the trec_eval drop-in, never loads them)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(frame, pd.DataFrame)


def _is_arrow(frame: Any) -> bool:
    """Whether `frame` is a pyarrow Table (:func:`_is_pandas`)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(frame, pa.Table)


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


def to_lazy(frame: Any, arg: str, sorted_key: str | None = None) -> tuple[nw.LazyFrame, Kind]:
    """Wrap `frame` as a narwhals LazyFrame (over Polars, or over its own engine) and say what kind it was."""
    if isinstance(frame, pl.LazyFrame):
        return nw.from_native(frame), "polars-lazy"
    if isinstance(frame, pl.DataFrame):
        return nw.from_native(_flag_sorted(frame, sorted_key).lazy()), "polars"
    if _is_pandas(frame):
        # pandas' missing-value marker in float columns is NaN: it becomes null here
        return nw.from_native(_flag_sorted(_from_pandas(frame, arg), sorted_key).lazy()), "pandas"
    if _is_arrow(frame):
        table = pl.from_arrow(frame)
        assert isinstance(table, pl.DataFrame)  # a Table (not an Array) gives a DataFrame
        return nw.from_native(_flag_sorted(table, sorted_key).lazy()), "pyarrow"
    if type(frame).__module__.split(".")[0] == "dask":
        raise _unsupported(frame, arg)
    try:
        lf = nw.from_native(frame)
    except TypeError:
        raise _unsupported(frame, arg) from None
    if not isinstance(lf, nw.LazyFrame) or lf.implementation not in ENGINES:
        raise _unsupported(frame, arg)
    return lf, "engine"


def sql_engine(frame: Any) -> str | None:
    """The SQL engine a native `frame` lives in ("DuckDB", "PySpark", ...), or None; converts nothing."""
    if isinstance(frame, (pl.LazyFrame, pl.DataFrame)) or _is_pandas(frame) or _is_arrow(frame):
        return None
    try:
        lf = nw.from_native(frame)
    except TypeError:
        return None
    return ENGINES.get(lf.implementation) if isinstance(lf, nw.LazyFrame) else None


def engine_name(lf: nw.LazyFrame) -> str:
    """The engine a frame runs on, for messages."""
    return ENGINES.get(lf.implementation, "Polars")


def same_engine(frame: nw.LazyFrame, side: nw.LazyFrame, arg: str = "truth") -> None:
    """A side input (`truth=`, `users=`, `exclude=`) must live where the recommendations live:
    a join cannot cross engines."""
    a, b = engine_name(frame), engine_name(side)
    if a != b:
        raise RecframeError(
            f"{ref(arg)} is a {b} frame but the recommendations are a {a} frame; the two are joined, "
            f"so they must be on the same engine. Hint: load the {arg} frame into {a} too"
            + (
                f" (e.g. duckdb.from_arrow({arg}_table))."
                if a == "DuckDB"
                else f" (e.g. spark.createDataFrame({arg}_table))."
                if a.startswith(("PySpark", "SQLFrame"))
                else " (pl.from_pandas / pl.from_arrow, or collect it from its engine)."
            )
        )


def from_lazy(lf: nw.LazyFrame, kind: Kind) -> Any:
    """Return the result as the same kind of frame as the input."""
    native = lf.to_native()
    if kind in ("polars-lazy", "engine"):
        return native
    df = native.collect()
    if kind == "pandas":
        return df.to_pandas()
    if kind == "pyarrow":
        return df.to_arrow()
    return df


def materialize(lf: nw.LazyFrame, large: bool = False) -> nw.LazyFrame:
    """Compute a SQL engine's frame once, so that the queries reading it next (the data
    checks, then the metrics) do not each run the plan again: a DuckDB relation is held in
    the client (``relation.materialize()``, same connection), or, `large` (see
    :func:`large_for_duckdb`), written to a temporary table of its connection (see
    :func:`_duckdb_temp_table`); a Spark DataFrame is checkpointed on its executors, an Ibis
    table is written to a temporary table of its backend (dropped with the connection).
    SQLFrame is returned as it is (its plan then runs once per query): it has no such step."""
    native = lf.to_native()
    impl = lf.implementation
    if impl is nw.Implementation.DUCKDB:
        return nw.from_native(_duckdb_temp_table(native) if large else native.materialize())
    if impl in (nw.Implementation.PYSPARK, nw.Implementation.PYSPARK_CONNECT):
        return nw.from_native(native.localCheckpoint(eager=True))
    if impl is nw.Implementation.IBIS:
        return _ibis_temp_table(lf)
    return lf


#: DuckDB holds what recframe computes once in the client (fast) while it is estimated at most
#: this share of the connection's memory_limit; past it, in a temporary table the limit covers
LARGE_SHARE = 0.25


def large_for_duckdb(inputs: list[nw.LazyFrame | None], columns: int) -> bool:
    """Whether rows computed from DuckDB `inputs` (at most their rows, `columns` values of 8
    bytes each) may take more than LARGE_SHARE of the connection's ``memory_limit``: one count
    per input (parquet answers it from its metadata) and the setting. At 10M rows a temporary
    table costs 0.2 s more than the client's copy (2.3 s, ranked by score= and joined with
    truth=), so it is kept for the rows that would strain the limit."""
    frames = [f for f in inputs if f is not None and f.implementation is nw.Implementation.DUCKDB]
    if not frames:
        return False
    rows = sum(int(f.select(nw.len()).collect().item()) for f in frames)
    setting = frames[0].to_native().query("__recframe_any", "SELECT current_setting('memory_limit')").fetchall()[0][0]
    return rows * columns * 8 > LARGE_SHARE * _bytes(str(setting))


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


def group_agg(lf: nw.LazyFrame, keys: list[str], *aggs: nw.Expr) -> nw.LazyFrame:
    """``lf.group_by(keys).agg(*aggs)``, for any key name the frame allows.

    narwhals (2.29) hands DuckDB its group keys as SQL text, unquoted: a key named ``m.odel``
    reads as column ``odel`` of a table ``m``, and `` model `` loses its spaces. There such
    keys are grouped under plain names and renamed back (Ibis quotes them itself; Spark and
    SQLFrame refuse dotted names up front).
    """
    if lf.implementation is not nw.Implementation.DUCKDB:
        return lf.group_by(keys).agg(*aggs)
    odd = {key: f"__rf_key{i}" for i, key in enumerate(keys) if not _PLAIN_NAME.fullmatch(key)}
    if not odd:
        return lf.group_by(keys).agg(*aggs)
    out = lf.rename(odd).group_by([odd.get(key, key) for key in keys]).agg(*aggs)
    return out.rename({plain: key for key, plain in odd.items()})


#: the aggregates :func:`over_groups` takes
GroupAgg = Literal["mean", "sum", "count", "min"]


def sql_name(column: str) -> str:
    """A column name as a DuckDB SQL identifier."""
    return '"' + column.replace('"', '""') + '"'


def over_groups(lf: nw.LazyFrame, keys: list[str], aggregates: dict[str, tuple[GroupAgg, str]]) -> nw.LazyFrame:
    """`lf` with, per name, an aggregate of a column over the rows of its group (equal `keys`)
    on every row: windows. DuckDB pays for each partition of a window, and ties="average"'s
    groups of equal scores are mostly single rows, so there the partition is the list (every
    key but the last) and the frame the rows of equal last key (bench/ties.py's 2M rows near
    the top: 2.7 s of CPU partitioned by score, 0.8 s so). A null key is a group of its own."""
    if lf.implementation is not nw.Implementation.DUCKDB:
        return lf.with_columns(getattr(nw.col(c), agg)().over(*keys).alias(name) for name, (agg, c) in aggregates.items())
    # (not a group-by joined back to the rows: DuckDB 2.0.1 then spent 88 s inlining the plan's CTEs)
    *lists, last = keys
    partition = f"PARTITION BY {', '.join(sql_name(k) for k in lists)} " if lists else ""
    frame = f"OVER ({partition}ORDER BY {sql_name(last)} RANGE BETWEEN CURRENT ROW AND CURRENT ROW)"
    sql = {"mean": "avg", "sum": "sum", "count": "count", "min": "min"}
    windows = ", ".join(f"{sql[agg]}({sql_name(c)}) {frame} AS {sql_name(name)}" for name, (agg, c) in aggregates.items())
    return nw.from_native(lf.to_native().project(f"*, {windows}"))
