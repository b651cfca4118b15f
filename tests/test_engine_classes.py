"""An engine is a class (issue 59, item 4): one class per engine behind one protocol in
recframe.engine._frames, and one function that picks it for a native frame. A new engine is one class
there and one fixture here."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import narwhals as nw
import polars as pl
import pytest

import recframe
from conftest import BACKENDS, ibis_table, to_polars
from recframe.engine import _frames
from recframe.errors import RecframeError

FRAME = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 11, 10], "rank": [1, 2, 1], "relevance": [1.0, None, 0.0]})

#: the protocol: each engine's traits (values) and what it does (methods)
TRAITS = {"name": str, "checks_now": bool, "in_process": bool, "counts_cheaply": bool, "kind": str}
METHODS = (
    "lazy",
    "from_lazy",
    "materialize",
    "cache",
    "hold",
    "check",
    "after_checks",
    "run_checks",
    "large",
    "group_agg",
    "over_groups",
    "rank_by_score",
    "list_runs",
    "check_names",
    "engine_error",
    "load_hint",
)


def _engines() -> list[_frames.Engine]:
    """Every engine object recframe can pick: the in-memory inputs' and each implementation's."""
    return [*_frames._IN_MEMORY.values(), *_frames._RUNS_ON.values()]


def test_every_engine_object_is_one_of_the_listed_classes_and_each_class_is_used() -> None:
    assert {type(e) for e in _engines()} == set(_frames.ENGINE_CLASSES)
    assert all(issubclass(c, _frames.Engine) for c in _frames.ENGINE_CLASSES)


@pytest.mark.parametrize("engine", _engines(), ids=lambda e: f"{type(e).__name__}-{e.name}-{e.kind}")
def test_each_engine_declares_the_whole_protocol(engine: _frames.Engine) -> None:
    for trait, kind in TRAITS.items():
        assert isinstance(getattr(engine, trait), kind), trait
    for method in METHODS:
        # the same call on every engine: a class overrides a method with the protocol's signature
        assert inspect.signature(getattr(type(engine), method)) == inspect.signature(getattr(_frames.Engine, method)), method
    # the traits that say where rows live agree: in this process the checks ride along the plan
    assert engine.checks_now is not engine.in_process


def _check_pick(frame: Any, cls: type[_frames.Engine], name: str, kind: str) -> None:
    """`engine_of` picks `cls` for `frame`; the frame crosses to a lazy frame and back as its own type."""
    engine = _frames.engine_of(frame)
    assert (type(engine), engine.name, engine.kind) == (cls, name, kind)
    lf, same = _frames.lazy(frame, "frame")
    assert same is engine
    back = engine.from_lazy(lf)
    assert type(back) is type(frame) or not engine.in_process  # (a SQL engine's lazy frame: its own class)
    assert to_polars(back).sort("user_id", "item_id").equals(FRAME)


@pytest.mark.parametrize(
    ("backend", "cls", "name", "kind"),
    [
        ("polars", _frames.PolarsFrame, "Polars", "polars"),
        ("polars-lazy", _frames.PolarsLazy, "Polars", "polars-lazy"),
        ("pandas", _frames.PolarsFrame, "Polars", "pandas"),
        ("pandas-arrow", _frames.PolarsFrame, "Polars", "pandas"),
        ("pyarrow", _frames.PolarsFrame, "Polars", "pyarrow"),
        ("duckdb", _frames.DuckDB, "DuckDB", "engine"),
    ],
)
def test_engine_of_picks_the_class_of_each_in_process_frame(backend: str, cls: type, name: str, kind: str) -> None:
    if backend not in BACKENDS:
        pytest.skip(f"{backend} is not installed")
    _check_pick(BACKENDS[backend](FRAME), cls, name, kind)


@pytest.mark.slow_engine
def test_engine_of_picks_spark(spark_constructor: Callable[[pl.DataFrame], Any]) -> None:
    _check_pick(spark_constructor(FRAME), _frames.Spark, "PySpark", "engine")
    assert _frames.engine_of(spark_constructor(FRAME)).checkpoints  # type: ignore[attr-defined]


@pytest.mark.slow_engine
def test_engine_of_picks_sqlframe(sqlframe_constructor: Callable[[pl.DataFrame], Any]) -> None:
    _check_pick(sqlframe_constructor(FRAME), _frames.Spark, "SQLFrame", "engine")
    assert not _frames.engine_of(sqlframe_constructor(FRAME)).checkpoints  # type: ignore[attr-defined]


@pytest.mark.slow_engine
def test_engine_of_picks_ibis() -> None:
    _check_pick(ibis_table(FRAME), _frames.Ibis, "Ibis", "engine")


def test_a_frame_of_no_engine_is_refused_naming_the_argument() -> None:
    with pytest.raises(RecframeError, match=r"^truth is a builtins.dict; recframe takes a pandas DataFrame"):
        _frames.engine_of({"user_id": [1]}, "truth")


class _Counting(_frames.PolarsLazy):
    """A new engine is one class: here Polars with its group-bys counted."""

    name = "Counting Polars"
    calls = 0

    def group_agg(self, lf: Any, keys: list[str], *aggs: Any) -> Any:
        _Counting.calls += 1
        return super().group_agg(lf, keys, *aggs)


def test_the_plan_reaches_its_engine_through_the_object(monkeypatch: pytest.MonkeyPatch) -> None:
    """Swap the Polars engine for a subclass: the plan's group-bys go through it, and the
    numbers stay the same."""
    want = recframe.summary(FRAME.lazy(), k=2).collect()
    monkeypatch.setitem(_frames._RUNS_ON, nw.Implementation.POLARS, _Counting())
    got = recframe.summary(FRAME.lazy(), k=2).collect()
    assert _Counting.calls > 0
    assert got.equals(want)
