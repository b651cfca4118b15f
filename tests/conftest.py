"""Shared fixtures: the same data on every supported input type."""

from __future__ import annotations

import atexit
import contextlib
import io
import itertools
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import narwhals as nw
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import settings

try:
    import duckdb
except ImportError:  # pragma: no cover - duckdb is in the test extra
    duckdb = None
else:
    # DuckDB 2.0's extension keeps its type objects and default connection alive until the
    # interpreter ends, and nanobind then lists them as "leaked" on stderr (~40 lines after
    # the test summary). They are DuckDB's module state, not objects the tests hold: silence
    # stderr only once Python is shutting down (atexit runs after pytest has reported).
    atexit.register(lambda: os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno()))

# CI replays the same examples on every run, so a red build always means a code change;
# locally each run explores new random frames.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

sys.path.insert(0, str(Path(__file__).parent))  # so tests can `import reference`

BACKENDS: dict[str, Callable[[pl.DataFrame], Any]] = {
    "polars": lambda df: df,
    "polars-lazy": lambda df: df.lazy(),
    "pandas": lambda df: df.to_pandas(),
    "pandas-arrow": lambda df: df.to_pandas(use_pyarrow_extension_array=True),
    "pyarrow": lambda df: df.to_arrow(),
}
if duckdb is not None:
    # a DuckDB relation: the plan runs inside DuckDB (cheap enough for every test)
    BACKENDS["duckdb"] = lambda df: duckdb.from_arrow(df.to_arrow())


def tied_frame(seed: int, n: int, users: int, items: int, scores: int, grades: int, null_scores: float = 0.0) -> pl.DataFrame:
    """Two models' lists with heavy ties: `n` random (model, user, item) rows (each pair once),
    scores drawn from `scores` whole values (a share `null_scores` of them null, not
    recommended) and relevance from `grades`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    model, user, item = rng.choice(["A", "B"], n), rng.integers(0, users, n), rng.integers(0, items, n)
    score = pl.Series(rng.integers(0, scores, n).astype(float))
    if null_scores:
        score = score.set(pl.Series(rng.random(n) < null_scores), None)
    relevance = rng.integers(0, grades, n)
    frame = pl.DataFrame({"model": model, "user_id": user, "item_id": item, "score": score, "relevance": relevance})
    return frame.unique(["model", "user_id", "item_id"])


def to_polars(result: Any) -> pl.DataFrame:
    """Any result frame as an eager Polars frame, for comparisons."""
    if isinstance(result, pl.LazyFrame):
        return result.collect()
    if isinstance(result, pd.DataFrame):
        return pl.from_pandas(result)
    if isinstance(result, pa.Table):
        return pl.from_arrow(result)
    if isinstance(result, pl.DataFrame):
        return result
    # DuckDB, Spark, SQLFrame: let the engine run the plan and hand the rows over
    return nw.from_native(result).collect("polars").to_native()


# pytest.approx compares numbers; a missing value (None) is compared by assert_values_close
# below. Any None given to approx is refused here on every pytest, not only from 9.2 on (where it
# raises under a relative tolerance), so that a test never passes on one pytest and fails on the next.
_approx = pytest.approx


def _approx_of_numbers(expected: Any, *args: Any, **kwargs: Any) -> Any:
    values = expected.values() if isinstance(expected, dict) else expected if isinstance(expected, (list, tuple)) else [expected]
    if any(value is None for value in values):
        raise TypeError(f"pytest.approx({expected!r}) holds None: compare missing values with conftest.assert_values_close")
    return _approx(expected, *args, **kwargs)


pytest.approx = _approx_of_numbers  # type: ignore[assignment]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def assert_values_close(got: list[Any], want: list[Any], *, rel: float = 1e-12, abs: float = 1e-12, label: str = "") -> None:
    """Element by element: a missing value (None, or NaN) equals only a missing value, and a
    number equals a number within the tolerances. ``pytest.approx`` is not for lists that may
    hold a missing value: from pytest 9.2 it raises on ``None`` under a relative tolerance."""
    assert len(got) == len(want), f"{label}: {len(got)} values, {len(want)} expected"
    for place, (g, w) in enumerate(zip(got, want)):
        if _missing(w) or _missing(g):
            assert _missing(g) and _missing(w), f"{label}[{place}]: got {g!r}, expected {w!r}"
        else:
            assert g == pytest.approx(w, rel=rel, abs=abs), f"{label}[{place}]: got {g!r}, expected {w!r}"


class CliResult(NamedTuple):
    """What one run of the command line gave: its exit code and what it printed."""

    code: int
    out: str
    err: str


def run_cli(*args: str | os.PathLike[str]) -> CliResult:
    """Run ``recframe ARGS`` in this process (``recframe.cli.main``) and capture stdout and
    stderr. Arguments may be paths; each is passed as its ``str``. (test_cli.py runs most of
    its cases as ``python -m recframe`` in a subprocess instead: there the process's own exit
    and streams are what is tested.)"""
    from recframe import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(arg) for arg in args])
    return CliResult(code, out.getvalue(), err.getvalue())


def assert_refused(code: int, err: str, *fragments: str) -> None:
    """A usage error of the command line: exit 2 and one line on stderr, with a hint and every
    fragment in it."""
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Hint:" in lines[0] and "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture(params=list(BACKENDS))
def constructor(request: pytest.FixtureRequest) -> Callable[[pl.DataFrame], Any]:
    """Turn a Polars frame into the backend under test."""
    return BACKENDS[request.param]


# two models' lists of two users (each model ranks a relevant item), for the tests of the
# command line's options and output files; `recs_csv` is it as a CSV file
TWO_MODELS_RECS = pl.DataFrame(
    {
        "model": ["A", "A", "A", "B", "B", "B"],
        "user_id": [1, 1, 2, 1, 1, 2],
        "item_id": [10, 11, 20, 11, 10, 20],
        "rank": [1, 2, 1, 1, 2, 1],
        "relevance": [4, None, 5, None, 4, 5],
    }
)


@pytest.fixture
def recs_csv(tmp_path: Path) -> Path:
    path = tmp_path / "recs.csv"
    TWO_MODELS_RECS.write_csv(path)
    return path


def ibis_table(df: pl.DataFrame) -> Any:
    """The frame as an Ibis table on its default backend (DuckDB): the plan compiles to SQL."""
    ibis = pytest.importorskip(
        "ibis", reason="Ibis is in the test-slow extra: pip install -c constraints/tested.txt '.[test-slow]'"
    )
    pytest.importorskip("duckdb", reason="Ibis's DuckDB backend needs duckdb")
    return ibis.memtable(df.to_arrow())


# every in-process backend, then Ibis: Ibis is in the test-slow extra, so its cases are marked
# slow_engine and run in .ci/run's slow pass
WITH_IBIS = [*BACKENDS, pytest.param("ibis", marks=pytest.mark.slow_engine)]


@pytest.fixture(params=WITH_IBIS)
def constructor_or_ibis(request: pytest.FixtureRequest) -> Callable[[pl.DataFrame], Any]:
    """Turn a Polars frame into the backend under test, Ibis included."""
    return ibis_table if request.param == "ibis" else BACKENDS[request.param]


# The slow engines' frames (Spark, SQLFrame), one session each for the whole run: defined here,
# not in a test module, so that every module that asks for them gets the same one (a fixture
# imported into a second module is a second fixture: a second SparkSession to stop, a second
# DuckDB connection behind SQLFrame's one session)
@pytest.fixture(scope="session")
def spark_constructor() -> Iterator[Callable[[pl.DataFrame], Any]]:
    pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'recframe[spark]'")
    if shutil.which("java") is None:
        pytest.skip("PySpark needs Java (17 or later) on PATH; none was found")
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PySpark 4 warns that pandas 3 is not fully supported
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("recframe-tests")
            .config("spark.sql.shuffle.partitions", "2")  # tiny frames: few tasks per stage
            .config("spark.default.parallelism", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate()
        )
    spark.sparkContext.setLogLevel("ERROR")
    yield lambda df: spark.createDataFrame(df.to_arrow())
    spark.stop()


@pytest.fixture(scope="session")
def sqlframe_constructor() -> Callable[[pl.DataFrame], Any]:
    pytest.importorskip("sqlframe", reason="SQLFrame is not installed: pip install 'recframe[sql]'")
    duckdb = pytest.importorskip("duckdb", reason="SQLFrame's DuckDB engine needs duckdb")
    from sqlframe.duckdb import DuckDBSession

    connection = duckdb.connect()
    session = DuckDBSession(conn=connection)
    names = itertools.count()

    def make(df: pl.DataFrame) -> Any:
        # a real table, as a warehouse would hold it (SQLFrame reads tables, not Python objects)
        name = f"frame_{next(names)}"
        arrow = df.to_arrow()  # noqa: F841 - read by name in the SQL below
        connection.execute(f"CREATE TABLE {name} AS SELECT * FROM arrow")
        return session.table(name)

    return make
