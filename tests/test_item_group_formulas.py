"""One formula per metric (issue 39), for the item-group metrics: miscalibration,
calibration_js, pop_rsp, pop_reo and exposure_disparity are finished by the registry
(recframe.metrics.item_groups) from term columns that recframe.engine._item_groups sums per item
group without knowing which metric reads them. So a change to a metric's registry finish
changes summary (and per_user) and no other metric."""

from __future__ import annotations

import dataclasses
import io
import tokenize
from pathlib import Path

import polars as pl
import pytest

import recframe
from recframe.engine import _item_groups
from recframe.metrics import REGISTRY, TERMS, Metric
from recframe.metrics._registry import col, item_group_term
from recframe.metrics.item_groups import ITEM_GROUPS

# two models' lists over three genres, each model with a relevant item in every genre and some
# not recommended: every metric defined, finite and above 0
RECS = pl.DataFrame(
    {
        "model": ["A"] * 7 + ["B"] * 7,
        "user_id": [1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2],
        "item_id": ["a", "c", "e", "d", "b", "f", "a", "c", "a", "f", "d", "e", "d", "b"],
        "rank": [1, 2, 3, 1, 2, 3, None, 1, 2, 3, None, 1, 2, 3],
        "relevance": [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0],
    }
)
ITEMS = pl.DataFrame({"item_id": list("abcdef"), "genre": ["pop", "pop", "jazz", "jazz", "folk", "folk"]})
TRAIN = pl.DataFrame({"user_id": [1, 1, 2, 2, 2], "item_id": ["a", "c", "b", "d", "f"]})
NAMES = [m.name for m in ITEM_GROUPS]
COLUMNS = [f"{m}@3" for m in NAMES]


def _summary() -> dict[str, list[float]]:
    out = recframe.summary(RECS, k=3, metrics=NAMES, by="model", items=ITEMS, train=TRAIN, item_group="genre")
    return out.sort("model").select(COLUMNS).to_dict(as_series=False)


@pytest.mark.parametrize("metric", NAMES)
def test_a_registry_finish_changes_summary_and_no_other_metric(metric: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Doubling one item-group metric's finish in the registry doubles its values in summary
    (and per_user, for the per-list ones) and leaves the others as they were."""
    before = _summary()
    assert all(0 < x < float("inf") for c in COLUMNS for x in before[c])
    users = None
    if REGISTRY[metric].level == "user":
        users = recframe.per_user(RECS, k=3, metrics=[metric], by="model", items=ITEMS, train=TRAIN, item_group="genre")
    real = REGISTRY[metric]
    monkeypatch.setitem(REGISTRY, metric, dataclasses.replace(real, finish=lambda k, o: real.finish(k, o) * 2))
    after = _summary()
    for column in COLUMNS:
        expected = [2 * x for x in before[column]] if column.startswith(f"{metric}@") else before[column]
        assert after[column] == pytest.approx(expected, rel=1e-12), column
    if users is not None:
        doubled = recframe.per_user(RECS, k=3, metrics=[metric], by="model", items=ITEMS, train=TRAIN, item_group="genre")
        assert doubled[f"{metric}@3"].to_list() == pytest.approx([2 * x for x in users[f"{metric}@3"].to_list()])


def test_a_new_item_group_metric_is_one_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """A metric over the item groups declared here, the largest P(rec | g) of each summary
    group, runs with no change to recframe.engine._item_groups: it equals the largest p_rec of
    recframe.item_groups' table."""
    rate = item_group_term(
        "test_max_p_rec@",
        "group",
        lambda g, k: g.count("untrained_slots", k) / (g.count("lists") * g.count("size") - g.count("trained")),
        "max",
    )
    metric = Metric(
        name="test_max_p_rec",
        terms=lambda o: ("test_max_p_rec@",),
        finish=lambda k, o: col("test_max_p_rec@", k),
        level="group",
        requires=("item_group", "train", "catalog"),
    )
    monkeypatch.setitem(TERMS, rate.name, rate)
    monkeypatch.setitem(REGISTRY, metric.name, metric)
    options = {"k": 3, "by": "model", "items": ITEMS, "train": TRAIN, "item_group": "genre"}
    out = recframe.summary(RECS, metrics=["test_max_p_rec", "pop_rsp"], **options).sort("model")
    table = recframe.item_groups(RECS, **options).group_by("model").agg(pl.col("p_rec@3").max()).sort("model")
    assert out["test_max_p_rec@3"].to_list() == pytest.approx(table["p_rec@3"].to_list(), rel=1e-12)
    assert out["pop_rsp@3"].to_list() == pytest.approx(_summary()["pop_rsp@3"], rel=1e-12)


def test_the_item_group_tables_name_no_metric() -> None:
    """recframe.engine._item_groups computes counts per item group and the registry's terms over
    them: no metric's name is in its code (names and strings; comments aside)."""
    source = Path(_item_groups.__file__).read_text()
    words = {
        token.string.strip("\"'")
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type in (tokenize.NAME, tokenize.STRING)
    }
    assert not words & {*NAMES, *(f"{m}@" for m in NAMES)}
