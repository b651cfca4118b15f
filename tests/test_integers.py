"""One integer check for every integer argument (issue 58, item 15): a numpy integer is read as
the int it holds wherever an int is taken (k of summary and agreement, partitions, bins, edges,
k_max, n_resamples, precision), and a bool is refused by name everywhere (True is no count)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import recframe
from recframe import RecframeError

RECS = pl.DataFrame(
    {
        "model": ["A", "A", "A", "A", "B", "B", "B", "B"],
        "user_id": [1, 1, 2, 2, 1, 1, 2, 2],
        "item_id": ["a", "b", "a", "c", "b", "a", "c", "d"],
        "rank": [1, 2, 1, 2, 1, 2, 1, 2],
        "relevance": [1, 0, 0, 1, 0, 1, 1, 0],
    }
)
TRAIN = pl.DataFrame({"user_id": [1, 2, 2, 3], "item_id": ["x", "x", "y", "y"]})

CALLS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "summary k": ("k", lambda v: recframe.summary(RECS, k=v, by="model")),
    "agreement k": ("k", lambda v: recframe.agreement(RECS, k=v, by="model")),
    "partitions": ("partitions", lambda v: recframe.summary(RECS, k=2, by="model", partitions=v)),
    "cohort bins": ("bins", lambda v: recframe.user_cohorts(RECS, TRAIN, bins=v)),
    "cohort edges": ("edges", lambda v: recframe.user_cohorts(RECS, TRAIN, edges=[v])),
    "strata bins": ("bins", lambda v: recframe.item_strata(TRAIN, bins=v)),
    "curve k_max": ("k_max", lambda v: recframe.curve(RECS, k_max=v, by="model")),
    "report precision": (
        "precision",
        lambda v: pl.DataFrame({"text": [recframe.report(recframe.summary(RECS, k=2, by="model"), precision=v)]}),
    ),
    "compare n_resamples": ("n_resamples", lambda v: recframe.compare(recframe.per_user(RECS, k=2, by="model"), n_resamples=v)),
}


def _rows(result: Any) -> list[tuple[Any, ...]]:
    return result.sort(result.columns).rows()


@pytest.mark.parametrize("call", list(CALLS))
def test_a_numpy_integer_is_the_int_it_holds(call: str) -> None:
    _, run = CALLS[call]
    want = _rows(run(2))
    for numpy_int in (np.int64(2), np.int32(2), np.uint8(2)):
        assert _rows(run(numpy_int)) == want


@pytest.mark.parametrize("call", list(CALLS))
def test_a_bool_is_refused_by_name(call: str) -> None:
    argument, run = CALLS[call]
    for value in (True, np.bool_(True)):
        with pytest.raises(RecframeError, match=r"Hint: ") as caught:
            run(value)
        assert caught.value.argument == argument
