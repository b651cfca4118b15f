"""Additive parts (recframe.statistics._parts): one rule by which two disjoint sets' parts add,
shared by the summary's statistics (partitions=) and the off-policy estimators."""

from __future__ import annotations

import narwhals as nw
import polars as pl
import pytest

import recframe
from conftest import assert_values_close
from recframe.statistics import _off_policy as op
from recframe.statistics import _parts
from test_off_policy import ALL, DIRECT, SETTINGS, Z95, _random_logs


def _off_policy_parts(logs: pl.DataFrame, keys: list[str]) -> tuple[list[op.Estimator], list[pl.DataFrame]]:
    """The estimators of ALL, and the parts per group of `keys`, as recframe.off_policy sums
    them, of the first 30 contexts of `logs`, of the rest (two disjoint sets) and of all."""
    rows = logs.with_columns((pl.col("target") / pl.col("propensity")).alias(op.WEIGHT))
    rows = rows.rename({"reward": op.REWARD, "q": op.PREDICTED, "qe": op.TARGET_PREDICTED})
    chosen = [op.ESTIMATORS[name] for name in ALL]

    def parts_of(frame: pl.DataFrame) -> pl.DataFrame:
        lf = nw.from_native(frame.lazy())
        return op.parts_frame(lf, keys, op.parts_of(chosen), op.Logged(**SETTINGS)).collect().to_native()

    return chosen, [parts_of(rows[:30]), parts_of(rows[30:]), parts_of(rows)]


def _rule(chosen: list[op.Estimator]) -> dict[str, str]:
    return _parts.rules([op.DIAGNOSTICS, *chosen])


@pytest.mark.parametrize("by", [None, "g"])
def test_the_off_policy_parts_of_two_sets_of_contexts_added_are_the_parts_of_their_union(by: str | None) -> None:
    """Sums add, maxima take the larger (the shared add); finishing the added parts gives the
    estimate of the whole log."""
    keys = [by] if by else []
    logs = _random_logs(3, 80, groups=2)
    chosen, (first, second, whole) = _off_policy_parts(logs, keys)
    added = _parts.add([first, second], keys, _rule(chosen).__getitem__).collect().sort(keys or "n")
    whole = whole.sort(keys or "n")
    assert set(added.columns) == set(whole.columns) and added.height == (2 if by else 1)
    for column in whole.columns:
        assert added[column].to_list() == pytest.approx(whole[column].to_list(), rel=1e-12), column
    assert _rule(chosen)["largest"] == "max" and added["largest"].to_list() != added["n"].to_list()
    finished = op.finished(nw.from_native(added.lazy()), keys, chosen, Z95).collect().to_native()
    expected = recframe.off_policy(logs, ALL, **DIRECT, position=None, by=by, **SETTINGS)
    assert_values_close(finished["value"].to_list(), expected["value"].to_list(), rel=1e-12)
    assert_values_close(finished["se"].to_list(), expected["se"].to_list(), rel=1e-9)


def _summary_frame(users: int) -> pl.DataFrame:
    rows = [(u, i, i + 1, (u * 7 + i * 3) % 4, "AB"[u % 2]) for u in range(users) for i in range(4)]
    return pl.DataFrame(rows, schema=["user_id", "item_id", "rank", "relevance", "model"], orient="row")


def test_a_changed_sum_rule_reaches_summary_partitions_and_the_off_policy_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one add rule, doubled: the counts a summary adds across partitions= and the
    off-policy parts added across sets of contexts both double; one pass adds nothing."""
    df, options = _summary_frame(30), {"k": 3, "metrics": ["precision", "ndcg"], "by": "model", "threshold": 1}
    want = recframe.summary(df, **options)
    chosen, (first, second, _) = _off_policy_parts(_random_logs(3, 80, groups=1), [])
    honest = _parts.add([first, second], [], _rule(chosen).__getitem__).collect()
    summed = _parts.RULES["sum"]
    monkeypatch.setitem(_parts.RULES, "sum", lambda c: summed(c) * 2)
    in_sets = recframe.summary(df, partitions=3, **options)
    assert in_sets["n_users"].to_list() == [2 * x for x in want["n_users"].to_list()]
    one_pass = recframe.summary(df, **options)  # (adds nothing: as before)
    assert one_pass["n_users"].to_list() == want["n_users"].to_list()
    assert one_pass["ndcg@3"].to_list() == pytest.approx(want["ndcg@3"].to_list(), rel=1e-12)
    doubled = _parts.add([first, second], [], _rule(chosen).__getitem__).collect()
    assert doubled["n"].item() == 2 * honest["n"].item() == 160
    assert doubled["ips_v"].item() == pytest.approx(2 * honest["ips_v"].item(), rel=1e-15)
    assert doubled["largest"].item() == honest["largest"].item()  # (a maximum: its own rule)
