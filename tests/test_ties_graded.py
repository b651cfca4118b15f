"""Tie bounds under graded gains (issue 58, item 1): ties="optimistic" and "pessimistic" order a
tie by relevance, then by grade (descending / ascending), so that they are the largest and the
smallest value any tie order gives, for every gain. Before, they ordered a tie by the relevant
flag and then by item: a grade 2 item before a grade 3 one, nDCG@1 2/3 under both "bounds"."""

from __future__ import annotations

import itertools
import math
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import recframe
from conftest import to_polars

# a (grade 2) and b (grade 3) tied at the top, c (grade 0) below
TOP_TIE = pl.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "score": [0.5, 0.5, 0.1], "relevance": [2, 3, 0]})
# the ideal list at 1 is b: linear gain 3, exp2 gain 2**3 - 1 = 7, binary 1
HAND = {
    # gain: (optimistic nDCG@1, pessimistic nDCG@1)
    "linear": (3 / 3, 2 / 3),
    "exp2": (7 / 7, 3 / 7),
    "binary": (1 / 1, 1 / 1),
}


@pytest.mark.parametrize("gain", ["linear", "exp2", "binary"])
def test_the_hand_example_of_the_issue(constructor_or_ibis: Any, gain: str) -> None:
    for ties, want in zip(("optimistic", "pessimistic"), HAND[gain], strict=True):
        out = to_polars(
            recframe.per_user(constructor_or_ibis(TOP_TIE), k=1, score="score", ties=ties, gain=gain, metrics=["ndcg"])
        )
        assert out["ndcg@1"].to_list() == [pytest.approx(want, rel=1e-12)], (ties, gain)


def _gain(grade: float, gain: str, threshold: float | None, positive: bool) -> float:
    relevant = grade >= threshold if threshold is not None else grade > 0
    if not (relevant or (positive and grade > 0)):
        return 0.0
    return {"linear": grade, "exp2": 2.0**grade - 1.0, "binary": 1.0}[gain]


def _dcg(gains: list[float], k: int) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def _tie_orders(scores: list[float]) -> list[list[int]]:
    """Every order of the items (their indices) by score descending, ties in any order."""
    groups = [[i for i in range(len(scores)) if scores[i] == s] for s in sorted(set(scores), reverse=True)]
    return [list(itertools.chain.from_iterable(p)) for p in itertools.product(*(itertools.permutations(g) for g in groups))]


@st.composite
def tied_lists(draw: st.DrawFn) -> tuple[list[float], list[float], dict[str, Any]]:
    size = draw(st.integers(1, 6))
    scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=size, max_size=size))
    grades = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 1.5]), min_size=size, max_size=size))
    threshold = draw(st.sampled_from([None, 2.0]))
    options = {
        "gain": draw(st.sampled_from(["linear", "exp2", "binary"])),
        "threshold": threshold,
        "gain_threshold": draw(st.sampled_from(["threshold", "positive"])) if threshold is not None else "threshold",
        "k": draw(st.integers(1, size)),
    }
    return scores, grades, options


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_lists())
def test_the_bounds_are_the_largest_and_smallest_of_every_tie_order(
    case: tuple[list[float], list[float], dict[str, Any]],
) -> None:
    scores, grades, options = case
    gain, k, positive = options["gain"], options["k"], options["gain_threshold"] == "positive"
    row_gains = [_gain(g, gain, options["threshold"], positive) for g in grades]
    # a list is evaluated where it has a relevant item (per_user's empty_users="skip")
    assume(any(g >= (options["threshold"] or 1e-300) for g in grades))
    ideal = _dcg(sorted(row_gains, reverse=True), k)
    by_order = [_dcg([row_gains[i] for i in order], k) for order in _tie_orders(scores)]
    df = pl.DataFrame({"user_id": 1, "item_id": list(range(len(scores))), "score": scores, "relevance": grades})
    call = {key: value for key, value in options.items() if key != "threshold" or value is not None}
    got = {
        ties: recframe.per_user(df, score="score", ties=ties, metrics=["dcg", "ndcg"], **call).row(0, named=True)
        for ties in ("optimistic", "pessimistic", "item_asc", "item_desc")
    }
    high, low = got["optimistic"], got["pessimistic"]
    assert high[f"dcg@{k}"] == pytest.approx(max(by_order), rel=1e-12, abs=1e-12)
    assert low[f"dcg@{k}"] == pytest.approx(min(by_order), rel=1e-12, abs=1e-12)
    assert high[f"ndcg@{k}"] == pytest.approx(max(by_order) / ideal, rel=1e-12, abs=1e-12)
    assert low[f"ndcg@{k}"] == pytest.approx(min(by_order) / ideal, rel=1e-12, abs=1e-12)
    for ties in ("item_asc", "item_desc"):  # every order lies between them, these two included
        for metric in (f"dcg@{k}", f"ndcg@{k}"):
            assert low[metric] - 1e-12 <= got[ties][metric] <= high[metric] + 1e-12, (ties, metric)
    assert all(low[f"dcg@{k}"] - 1e-12 <= value <= high[f"dcg@{k}"] + 1e-12 for value in by_order)


@pytest.mark.parametrize("gain", ["linear", "exp2", "binary"])
def test_every_tie_order_lies_between_the_bounds_for_err_and_ap_too(constructor_or_ibis: Any, gain: str) -> None:
    """Each tie order of one list given as a ranked list of its own user (rank=): ERR (of the
    grades), AP and RR of every order lie between the bounds, which equal the best and worst."""
    _check_every_order(constructor_or_ibis, gain)


def _check_every_order(constructor: Any, gain: str) -> None:
    scores, grades = [0.5, 0.5, 0.5, 0.5, 0.2], [1.0, 3.0, 0.0, 2.0, 3.0]
    orders = _tie_orders(scores)
    ranked = pl.DataFrame(
        {
            "user_id": [u for u, _ in enumerate(orders) for _ in scores],
            "item_id": [i for order in orders for i in order],
            "rank": [r for _ in orders for r in range(1, len(scores) + 1)],
            "relevance": [grades[i] for order in orders for i in order],
        }
    )
    metrics = ["err", "ap", "rr", "ndcg"]
    every = recframe.per_user(ranked, k=[1, 2, 3], rank="rank", gain=gain, metrics=metrics)
    one = constructor(pl.DataFrame({"user_id": 0, "item_id": range(5), "score": scores, "relevance": grades}))
    for ties, best in (("optimistic", max), ("pessimistic", min)):
        out = to_polars(recframe.per_user(one, k=[1, 2, 3], score="score", ties=ties, gain=gain, metrics=metrics))
        for c in (c for c in every.columns if "@" in c):
            assert out[c].item() == pytest.approx(best(every[c].to_list()), rel=1e-12, abs=1e-12), (ties, c)
