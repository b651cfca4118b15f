"""recframe.off_policy's click estimators (issue 61): the examination-propensity-weighted DCG,
precision and recall at k of a new ranking from clicks logged on an old one, by hand, against a
slow reference (reference_off_policy.click_metrics), by simulation of a position-based click
model with a known truth, on every backend, and their refusals."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recframe
import reference_off_policy as reference
from conftest import BACKENDS, assert_values_close, to_polars
from recframe.errors import RecframeError

CLICKS = ["click_dcg", "click_precision", "click_recall"]

# three contexts of three shown items; context 3 has no click
LOGS = pl.DataFrame(
    {
        "context_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
        "item_id": ["a", "b", "c", "a", "d", "e", "b", "c", "a"],
        "position": [1, 2, 3] * 3,
        "click": [1, 0, 1, 0, 1, 0, 0, 0, 0],
    }
)
# the new ranking: c first in context 1, d first in context 2
RECS = pl.DataFrame(
    {
        "context_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
        "item_id": ["c", "a", "b", "d", "a", "e", "a", "b", "c"],
        "rank": [1, 2, 3] * 3,
    }
)
EXAMINATION = pl.DataFrame({"position": [1, 2, 3], "propensity": [1.0, 0.5, 0.25]})
ARGS: dict[str, Any] = dict(recommendations=RECS, examination=EXAMINATION, reward="click")


def _values(out: Any) -> dict[str, dict[str, Any]]:
    return {row["estimator"]: row for row in to_polars(out).iter_rows(named=True)}


def test_click_metrics_by_hand() -> None:
    """Context 1: clicks on a (position 1, weight 1, new rank 2) and c (position 3, weight 4, new
    rank 1); context 2: d (position 2, weight 2, new rank 1); context 3: no click."""
    got = _values(recframe.off_policy(LOGS, CLICKS, k=[2, 3], **ARGS))
    assert list(got) == [f"{m}@{k}" for m in CLICKS for k in (2, 3)]
    dcg = [4 / math.log2(2) + 1 / math.log2(3), 2 / math.log2(2), 0.0]
    assert got["click_dcg@2"]["value"] == pytest.approx(sum(dcg) / 3)
    assert got["click_dcg@2"]["se"] == pytest.approx(np.std(dcg, ddof=1) / math.sqrt(3))
    assert got["click_precision@2"]["value"] == pytest.approx(((4 + 1) / 2 + 2 / 2 + 0) / 3)
    assert got["click_precision@3"]["value"] == pytest.approx(((4 + 1) / 3 + 2 / 3 + 0) / 3)
    # recall: both clicked contexts find every click in the top 2; context 3 is left out (n = 2)
    assert (got["click_recall@2"]["value"], got["click_recall@2"]["se"], got["click_recall@2"]["n"]) == (1.0, 0.0, 2)
    assert got["click_dcg@2"]["n"] == 3
    # on_policy: the logged ranking's own value (rank = logged position): at 2 it misses c
    assert got["click_dcg@2"]["on_policy"] == pytest.approx((1 + 2 / math.log2(3) + 0) / 3)
    assert got["click_recall@2"]["on_policy"] == pytest.approx((1 / 5 + 1) / 2)
    assert got["click_dcg@2"]["lift"] == pytest.approx(got["click_dcg@2"]["value"] / got["click_dcg@2"]["on_policy"] - 1)
    # the clicks' weights are 1, 4, 2: ess 49 / 21, the largest 4, every click within the new top 2
    for row in got.values():
        assert (row["ess"], row["largest_weight"], row["supported"]) == (pytest.approx(49 / 21), 4.0, 1.0)


def test_by_model_evaluates_every_ranking_on_the_same_logs() -> None:
    """Model B ranks only b and a in context 1, reverses context 2 and ranks nothing in 3."""
    other = pl.DataFrame({"context_id": [1, 1, 2, 2, 2], "item_id": ["b", "a", "e", "a", "d"], "rank": [1, 2, 1, 2, 3]})
    recs = pl.concat([RECS.with_columns(model=pl.lit("A")), other.with_columns(model=pl.lit("B"))])
    out = recframe.off_policy(LOGS, ["click_dcg", "click_recall"], **{**ARGS, "recommendations": recs}, k=2, by="model")
    assert out.select("model", "estimator").rows() == [
        ("A", "click_dcg@2"), ("A", "click_recall@2"), ("B", "click_dcg@2"), ("B", "click_recall@2"),
    ]  # fmt: skip
    b = _values(out.filter(pl.col("model") == "B"))
    assert b["click_dcg@2"]["value"] == pytest.approx((1 / math.log2(3) + 0 + 0) / 3)
    assert b["click_recall@2"]["value"] == pytest.approx((1 / 5 + 0) / 2)
    assert b["click_dcg@2"]["supported"] == pytest.approx(1 / 3)


# -- against the slow reference, on Polars, pandas and DuckDB --


def _random_click_logs(seed: int, contexts: int) -> tuple[pl.DataFrame, pl.DataFrame, dict[int, float]]:
    rng = np.random.default_rng(seed)
    logs, recs = [], []
    for c in range(contexts):
        shown = rng.permutation(8)[: rng.integers(1, 5)]
        clicks = rng.choice([0.0, 0.0, 1.0, 2.5], len(shown))
        logs += [(c, int(i), p + 1, float(x)) for p, (i, x) in enumerate(zip(shown, clicks))]
        for model in ("A", "B"):
            ranked = rng.permutation(8)[: rng.integers(1, 6)]  # (a model without a row is unknown)
            recs += [(model, c, int(i), r + 1) for r, i in enumerate(ranked)]
    p = {k: float(x) for k, x in enumerate(np.sort(rng.uniform(0.05, 1, 4))[::-1], start=1)}
    return (
        pl.DataFrame(logs, schema=["context_id", "item_id", "position", "click"], orient="row"),
        pl.DataFrame(recs, schema=["model", "context_id", "item_id", "rank"], orient="row"),
        p,
    )


def _reference_rows(logs: pl.DataFrame, recs: pl.DataFrame, p: dict[int, float], ks: list[int]) -> list[dict[str, Any]]:
    out = []
    for model in ("A", "B"):
        rank = {(c, i): r for m, c, i, r in recs.iter_rows() if m == model}
        contexts: dict[object, list[tuple[int, float, int | None]]] = {}
        for c, i, position, click in logs.iter_rows():
            contexts.setdefault(c, []).append((position, click, rank.get((c, i))))
        for metric in CLICKS:
            for k in ks:
                out.append({"model": model, "estimator": f"{metric}@{k}", **reference.click_metrics(contexts, p, metric, k)})
    return out


def _agrees(got: pl.DataFrame, want: list[dict[str, Any]]) -> None:
    assert got.select("model", "estimator").rows() == [(w["model"], w["estimator"]) for w in want]
    for g, w in zip(got.iter_rows(named=True), want):
        assert g["n"] == w["n"], (g, w)
        label = f"{w['model']} {w['estimator']}"
        assert_values_close([g["value"], g["on_policy"]], [w["value"], w["on_policy"]], rel=1e-9, abs=1e-12, label=label)
        # a variance from sums loses digits to cancellation: compared as squares, scaled
        if w["se"] is None or g["se"] is None:
            assert g["se"] is None and w["se"] is None, (g, w)
        else:
            assert abs(g["se"] ** 2 - w["se"] ** 2) <= 1e-9 * (1 + w["value"] ** 2), (label, g["se"], w["se"])


def _estimated(backend: str, logs: pl.DataFrame, recs: pl.DataFrame, p: dict[int, float], ks: list[int]) -> pl.DataFrame:
    make, exam = BACKENDS[backend], pl.DataFrame({"position": list(p), "propensity": list(p.values())})
    out = recframe.off_policy(make(logs), CLICKS, recommendations=make(recs), examination=exam, reward="click", k=ks, by="model")
    return to_polars(out)


@settings(max_examples=12, deadline=None)
@given(contexts=st.integers(1, 12), seed=st.integers(0, 2**31), ks=st.sampled_from([[1], [3], [2, 5]]))
def test_property_against_the_reference(contexts: int, seed: int, ks: list[int]) -> None:
    logs, recs, p = _random_click_logs(seed, contexts)
    want = _reference_rows(logs, recs, p, ks)
    for backend in ("polars", "pandas"):
        _agrees(_estimated(backend, logs, recs, p, ks), want)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b not in ("polars", "pandas")])
def test_other_backends_agree_with_the_reference(backend: str) -> None:
    logs, recs, p = _random_click_logs(11, 30)
    _agrees(_estimated(backend, logs, recs, p, [2, 5]), _reference_rows(logs, recs, p, [2, 5]))


# -- a position-based click model with a known truth --

TRUE_P = np.array([1.0, 0.6, 0.4, 0.3, 0.2])


def _position_based_logs(contexts: int, seed: int = 3) -> tuple[pl.DataFrame, pl.DataFrame, float]:
    """Five items per context, each relevant with probability 0.4; the old ranking is shuffled
    (uniformly where ``randomized``, half the traffic; elsewhere the least relevant first, so
    the relevant items sit low); a click is examination (TRUE_P at the position) times
    relevance. The new ranking sorts by a noisy relevance. Returns the logs, the new ranking
    and its true DCG@3 (from the relevance, over these contexts)."""
    rng = np.random.default_rng(seed)
    slots = len(TRUE_P)
    relevant = rng.random((contexts, slots)) < 0.4
    randomized = rng.random(contexts) < 0.5
    shuffled = np.argsort(rng.random((contexts, slots)), axis=1)
    worst_first = np.argsort(relevant + 0.5 * rng.random((contexts, slots)), axis=1)
    order = np.where(randomized[:, None], shuffled, worst_first)  # order[c, position - 1] = item shown
    shown_relevant = np.take_along_axis(relevant, order, axis=1)
    clicks = shown_relevant & (rng.random((contexts, slots)) < TRUE_P)
    new_order = np.argsort(-(relevant + 0.8 * rng.random((contexts, slots))), axis=1)
    new_rank = np.argsort(new_order, axis=1) + 1  # new_rank[c, item]
    discount = np.where(new_rank <= 3, 1 / np.log2(1 + new_rank), 0.0)
    truth = float((relevant * discount).sum(axis=1).mean())
    logs = pl.DataFrame(
        {
            "context_id": np.repeat(np.arange(contexts), slots),
            "item_id": order.ravel(),
            "position": np.tile(np.arange(1, slots + 1), contexts),
            "click": clicks.ravel().astype(np.int64),
            "randomized": np.repeat(randomized, slots),
        }
    )
    recs = pl.DataFrame(
        {"context_id": np.repeat(np.arange(contexts), slots), "item_id": np.tile(np.arange(slots), contexts),
         "rank": new_rank.ravel()}
    )  # fmt: skip
    return logs, recs, truth


def test_simulation_the_weighted_dcg_is_unbiased_and_the_naive_one_is_not() -> None:
    logs, recs, truth = _position_based_logs(20_000)
    true_p = pl.DataFrame({"position": range(1, 6), "propensity": TRUE_P})
    naive = pl.DataFrame({"position": range(1, 6), "propensity": [1.0] * 5})
    weighted = recframe.off_policy(logs, ["click_dcg"], recommendations=recs, examination=true_p, reward="click", k=3)
    unweighted = recframe.off_policy(logs, ["click_dcg"], recommendations=recs, examination=naive, reward="click", k=3)
    value, se = weighted.item(0, "value"), weighted.item(0, "se")
    assert abs(value - truth) < 3 * se, (value, truth, se)
    assert truth - unweighted.item(0, "value") > 10 * unweighted.item(0, "se"), "unweighted clicks miss the low positions"


def test_simulation_propensities_from_randomized_traffic() -> None:
    """p_k = CTR_k / CTR_1 on the randomized half recovers TRUE_P within 0.05, and the estimate
    with them is within 3 se of the truth."""
    logs, recs, truth = _position_based_logs(20_000)
    ctr = logs.filter("randomized").group_by("position").agg(pl.col("click").mean()).sort("position").get_column("click")
    estimated = (ctr / ctr[0]).to_numpy()
    assert np.abs(estimated - TRUE_P).max() < 0.05, estimated
    by_column = recframe.off_policy(logs, ["click_dcg"], recommendations=recs, examination="randomized", reward="click", k=3)
    exam = pl.DataFrame({"position": range(1, 6), "propensity": estimated})
    by_frame = recframe.off_policy(logs, ["click_dcg"], recommendations=recs, examination=exam, reward="click", k=3)
    assert by_column.item(0, "value") == pytest.approx(by_frame.item(0, "value"), rel=1e-12)
    assert abs(by_column.item(0, "value") - truth) < 3 * by_column.item(0, "se")


# -- refusals, by name --


def _refused(match: str, logs: pl.DataFrame = LOGS, **kwargs: Any) -> RecframeError:
    with pytest.raises(RecframeError, match=match) as error:
        recframe.off_policy(logs, kwargs.pop("estimators", ["click_dcg"]), **{**ARGS, **kwargs})
    assert error.value.hint
    return error.value


def test_a_logged_position_without_a_propensity_is_refused() -> None:
    _refused(r"examination= gives no examination propensity for the logged position=3", examination=EXAMINATION.head(2))


@pytest.mark.parametrize("value", [0.0, 1.5])
def test_a_propensity_outside_0_1_is_refused(value: float) -> None:
    exam = EXAMINATION.with_columns(propensity=pl.when(pl.col("position") == 2).then(value).otherwise(pl.col("propensity")))
    _refused(rf"examination= holds the examination propensity {value!r} for position=2, outside \(0, 1\]", examination=exam)


def test_no_randomized_traffic_at_a_logged_position_is_refused() -> None:
    logs = LOGS.with_columns(randomized=pl.col("position") < 3)
    _refused(r"column 'randomized' \(the examination= argument\) marks no randomized row at the logged position 3",
             logs, examination="randomized")  # fmt: skip


def test_no_randomized_click_at_position_1_is_refused() -> None:
    logs = LOGS.with_columns(randomized=pl.col("context_id") == 2)
    _refused(r"column 'randomized' .* no click at position 1", logs, examination="randomized")


def test_an_estimated_propensity_above_1_is_refused() -> None:
    # randomized contexts 1 and 2: CTR 1/2, 3/2, 1/2 at positions 1, 2, 3 (a click of 3 on d)
    logs = LOGS.with_columns(
        randomized=pl.col("context_id") < 3, click=pl.when(pl.col("item_id") == "d").then(3).otherwise("click")
    )
    _refused(r"column 'randomized' \(the examination= argument\) estimates the examination propensity 3.0 for position=2",
             logs, examination="randomized")  # fmt: skip


@pytest.mark.parametrize("value", [-1.0, float("nan"), None])
def test_a_click_that_is_no_number_at_least_0_is_refused(value: float | None) -> None:
    logs = LOGS.with_columns(click=pl.when(pl.col("item_id") == "d").then(value).otherwise(pl.col("click").cast(pl.Float64)))
    _refused(r"column 'click' \(the reward= argument\) holds values that are no number >= 0 .* in 1 row", logs)


def test_a_repeated_slot_and_an_item_ranked_twice_are_refused() -> None:
    _refused(r"2 rows of one shown slot \(context_id=1, position=1\)", pl.concat([LOGS, LOGS.head(1)]))
    recs = pl.concat([RECS, RECS.head(1).with_columns(rank=pl.lit(4, dtype=pl.Int64))])
    _refused(r"rank the item item_id='c' 2 times in context_id=1", recommendations=recs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"estimators": ["click_dcg", "ips"]}, r"mixes click estimators"),
        ({"estimators": ["click_ndcg"]}, r"'click_ndcg' is no estimator"),
        ({"k": 0}, r"k=0 must be an int >= 1"),
        ({"k": [5, 2.5]}, r"k=\[5, 2.5\] must be an int >= 1"),
        ({"recommendations": None}, r"judge a new ranking, given as recommendations="),
        ({"examination": None}, r"examination= is not given"),
        ({"target": "click"}, r"the click estimators read no target="),
        ({"position": None}, r"position=None gives none"),
        ({"reward": "clicks"}, r"column 'clicks' \(the reward= argument\) is not in the logs"),
        ({"examination": "shuffled"}, r"column 'shuffled' \(the examination= argument\) is not in the logs"),
        ({"recommendations": RECS.rename({"rank": "r"})}, r"column 'rank' \(the rank= argument\)"),
        ({"by": "estimator"}, r"names a column 'estimator'"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs: dict[str, Any], match: str) -> None:
    _refused(match, LOGS.with_columns(estimator=pl.lit("x")), **kwargs)


# -- the command line: --k and --examination (a file, or a column of LOGS) --


def test_the_command_line_gives_the_hand_worked_numbers(tmp_path: Path) -> None:
    from conftest import run_cli

    logs, recs, exam = tmp_path / "logs.csv", tmp_path / "new.csv", tmp_path / "exam.parquet"
    LOGS.with_columns(randomized=pl.lit(True)).write_csv(logs)
    RECS.write_csv(recs)
    EXAMINATION.write_parquet(exam)
    common = ["off-policy", logs, "--recommendations", recs, "--reward", "click", "--format", "csv"]
    code, out, err = run_cli(*common, "--estimators", "click_dcg,click_recall", "--k", "2,3", "--examination", exam)
    assert code == 0 and err == "", err
    table = pl.read_csv(out.encode())
    want = recframe.off_policy(LOGS, ["click_dcg", "click_recall"], k=[2, 3], **ARGS)
    assert table["estimator"].to_list() == want["estimator"].to_list()
    assert_values_close(table["value"].to_list(), want["value"].to_list(), rel=1e-9)
    # the randomized column: every row shuffled, CTR 1/3, 1/3, 1/3 at positions 1, 2, 3: all p = 1
    code, out, err = run_cli(*common, "--estimators", "click_precision", "--k", "3", "--examination", "randomized")
    assert code == 0 and err == "", err
    assert pl.read_csv(out.encode())["value"].to_list() == pytest.approx([(2 / 3 + 1 / 3 + 0) / 3])


# -- the slow engines: the hand-worked example inside them --


@pytest.mark.slow_engine
# (SQLFrame runs narwhals' Spark backend, checked here on Spark: it took 70 to 110 s more, as it
# copies the whole plan at each step; test_off_policy runs SQLFrame's own SQL once)
@pytest.mark.parametrize("engine", ["spark", "ibis"])
def test_slow_engines_give_the_hand_worked_numbers(engine: str, request: pytest.FixtureRequest) -> None:
    from conftest import ibis_table

    make = ibis_table if engine == "ibis" else request.getfixturevalue(f"{engine}_constructor")
    got = to_polars(recframe.off_policy(make(LOGS), CLICKS, recommendations=make(RECS), examination=EXAMINATION,
                                        reward="click", k=[2, 3]))  # fmt: skip
    local = recframe.off_policy(LOGS, CLICKS, k=[2, 3], **ARGS)
    assert got["estimator"].to_list() == local["estimator"].to_list()
    for column in ("value", "se", "on_policy", "ess", "supported"):
        assert_values_close(got[column].to_list(), local[column].to_list(), rel=1e-12, label=column)


@pytest.mark.parametrize(("arg", "value"), [("ci_method", "poisson"), ("per_context", True), ("partitions", 2)])
def test_the_weighted_estimators_options_are_refused_not_ignored(arg: str, value: Any) -> None:
    with pytest.raises(RecframeError, match=f"{arg}=.* is not available with the click metrics"):
        recframe.off_policy(LOGS, CLICKS, **ARGS, **{arg: value})
