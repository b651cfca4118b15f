"""recframe.disparity: hand-worked gaps, fairlearn's MetricFrame, scipy's unpaired tests,
refusals, the namespace and the command line."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

import recframe
from recframe import cli, stats
from recframe.data import load_sample

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy checks the tests (recframe[stats])")

# three segments, model A; recall per user:
#   a: 0.0 0.5 1.0        mean 0.5, n 3
#   b: 0.25 0.25           mean 0.25, n 2
#   c: 1.0 0.5 0.75 null   mean 0.75, n 3 (the null is left out)
# high c (0.75), low b (0.25): difference 0.5, ratio 1/3;
# MAD = (|0.5 - 0.25| + |0.5 - 0.75| + |0.25 - 0.75|) / 3 = (0.25 + 0.25 + 0.5) / 3 = 1/3
HAND = pl.DataFrame(
    {
        "model": ["A"] * 9,
        "user_id": list(range(9)),
        "segment": ["a", "a", "a", "b", "b", "c", "c", "c", "c"],
        "recall@10": [0.0, 0.5, 1.0, 0.25, 0.25, 1.0, 0.5, 0.75, None],
    }
)


def test_hand_worked_gaps() -> None:
    row = recframe.disparity(HAND, group="segment", metrics=["recall@10"], seed=0).row(0, named=True)
    assert (row["high_group"], row["low_group"], row["n_groups"]) == ("c", "b", 3)
    assert (row["high_mean"], row["low_mean"], row["n_high"], row["n_low"]) == (0.75, 0.25, 3, 2)
    assert row["difference"] == 0.5 and row["ratio"] == pytest.approx(1 / 3) and row["mad"] == pytest.approx(1 / 3)
    assert (row["mean_a"], row["n_a"], row["mean_b"], row["n_b"], row["mean_c"], row["n_c"]) == (0.5, 3, 0.25, 2, 0.75, 3)
    # Welch between c and b, as scipy; one test: p_adjusted is the p-value
    expected = scipy_stats.ttest_ind([1.0, 0.5, 0.75], [0.25, 0.25], equal_var=False).pvalue
    assert row["p_value"] == pytest.approx(expected, rel=1e-12) and row["p_adjusted"] == row["p_value"]
    assert row["gap_lo"] <= 0.5 <= row["gap_hi"]


def test_every_pair_with_holm() -> None:
    out = recframe.disparity(HAND, group="segment", pairs="all", test="mann_whitney", seed=0)
    assert out.select("group_a", "group_b").rows() == [("a", "b"), ("a", "c"), ("b", "c")]
    values = {"a": [0.0, 0.5, 1.0], "b": [0.25, 0.25], "c": [1.0, 0.5, 0.75]}
    for row in out.iter_rows(named=True):
        a, b = values[row["group_a"]], values[row["group_b"]]
        assert row["gap"] == pytest.approx(np.mean(a) - np.mean(b))
        assert row["p_value"] == pytest.approx(scipy_stats.mannwhitneyu(a, b, method="asymptotic").pvalue, rel=1e-12)
    assert out["p_adjusted"].to_list() == pytest.approx(list(stats.adjust_pvalues(out["p_value"].to_numpy(), "holm")))


@pytest.mark.parametrize("seed", range(8))
def test_unpaired_tests_are_scipys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, size=rng.integers(2, 8)) / 4
    b = rng.integers(0, 5, size=rng.integers(2, 8)) / 4
    assert stats.welch_t_test(a, b).p_value == pytest.approx(
        scipy_stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-9, nan_ok=True
    )
    mw = scipy_stats.mannwhitneyu(a, b, method="asymptotic")
    assert stats.mann_whitney_test(a, b) == pytest.approx((mw.statistic, mw.pvalue), rel=1e-12)
    exact = scipy_stats.permutation_test(
        (a, b), lambda x, y: np.mean(x) - np.mean(y), permutation_type="independent", n_resamples=np.inf
    )
    assert stats.permutation_test(a, b).p_value == pytest.approx(exact.pvalue, rel=1e-12)


def test_drawn_permutations_count_the_observed_split() -> None:
    a, b = np.arange(12.0), np.arange(12.0) + 3  # C(24, 12) splits: drawn, not enumerated
    result = stats.permutation_test(a, b, n_resamples=999, seed=1)
    assert result.statistic == -3.0 and 2 / 1000 <= result.p_value <= 1  # (count + 1) / (B + 1), two-sided


def test_matches_fairlearns_metric_frame() -> None:
    fairlearn = pytest.importorskip("fairlearn.metrics", reason="fairlearn checks the group means, difference and ratio")
    recs, truth = load_sample()
    users = truth.select("user_id").unique().with_columns(segment=(pl.col("user_id").hash() % 3).cast(pl.String))
    per_user = recframe.per_user(
        recs, truth=truth, users=users, k=10, score="score", relevance="rating", threshold=4, by=["model", "segment"]
    )
    out = recframe.disparity(per_user, group="segment", metrics=["ndcg@10", "precision@10"], seed=0)
    kept = per_user.filter(pl.col("n_relevant") > 0)  # the users summary counts
    for row in out.iter_rows(named=True):
        model = kept.filter(pl.col("model") == row["model"]).drop_nulls(row["metric"])
        values = model[row["metric"]].to_numpy()
        frame = fairlearn.MetricFrame(
            metrics=lambda y_true, y_pred: float(np.mean(y_pred)),
            y_true=values,
            y_pred=values,
            sensitive_features=model["segment"].to_numpy(),
        )
        assert row["difference"] == pytest.approx(frame.difference(), rel=1e-12)
        assert row["ratio"] == pytest.approx(frame.ratio(), rel=1e-12)
        for group, mean in frame.by_group.items():
            assert row[f"mean_{group}"] == pytest.approx(mean, rel=1e-12)


def test_frame_types_and_the_namespace() -> None:
    polars_out = recframe.disparity(HAND, group="segment", seed=3)
    assert polars_out.equals(HAND.recmetrics.disparity(group="segment", seed=3))
    lazy = recframe.disparity(HAND.lazy(), group="segment", seed=3)
    assert isinstance(lazy, pl.LazyFrame) and lazy.collect().equals(polars_out)
    pandas_out = recframe.disparity(HAND.to_pandas(), group="segment", seed=3)
    assert isinstance(pandas_out, pd.DataFrame) and list(pandas_out.columns) == polars_out.columns


@pytest.mark.parametrize(
    ("change", "kwargs", "fragment"),
    [
        (pl.col("segment").replace("b", None), {}, "2 user row\\(s\\) have a null group"),
        (pl.lit("a").alias("segment"), {}, "has 1 value\\(s\\)"),
        (pl.col("segment"), {"group": "market"}, "group='market' is not a column"),
        (pl.col("segment"), {"by": ["model", "segment"]}, "is also in by"),
        (pl.col("segment"), {"test": "paired_t"}, "test"),
        (pl.col("segment"), {"pairs": "some"}, "pairs"),
        (pl.when(pl.col("user_id") == 0).then(float("inf")).otherwise(pl.col("recall@10")).alias("recall@10"), {}, "infinite"),
    ],
)
def test_refusals_name_the_argument(change: pl.Expr, kwargs: dict, fragment: str) -> None:
    frame = HAND.with_columns(change)
    with pytest.raises(recframe.RecframeError, match=fragment):
        recframe.disparity(frame, **{"group": "segment", **kwargs})


def test_disparity_group_that_is_a_metric_column_says_so() -> None:
    with pytest.raises(recframe.RecframeError, match="is a metric column: group must be a column that groups users") as caught:
        recframe.disparity(HAND, group="recall@10")
    assert caught.value.argument == "group" and "segment" in str(caught.value)


def test_a_group_without_values_is_left_out_of_the_gap() -> None:
    frame = HAND.with_columns(pl.when(pl.col("segment") == "b").then(None).otherwise(pl.col("recall@10")).alias("recall@10"))
    row = recframe.disparity(frame, group="segment", seed=0).row(0, named=True)
    assert row["n_groups"] == 2 and row["mean_b"] is None and row["n_b"] == 0
    assert (row["high_group"], row["low_group"]) == ("c", "a") and row["difference"] == 0.25


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs, truth = load_sample()
    users = (
        truth.select("user_id")
        .unique()
        .with_columns(segment=pl.when(pl.col("user_id") % 2 == 0).then(pl.lit("even")).otherwise(pl.lit("odd")))
    )
    joined = recs.join(truth, on=["user_id", "item_id"], how="left")
    paths = {name: tmp_path / f"{name}.csv" for name in ("recs", "users")}
    joined.write_csv(paths["recs"])
    users.write_csv(paths["users"])
    args = ["disparity", str(paths["recs"]), "--users", str(paths["users"]), "--group", "segment", "--by", "model"]
    args += ["--score", "score", "--relevance", "rating", "--threshold", "4", "--k", "10", "--metrics", "ndcg", "--seed", "1"]
    assert cli.main([*args, "--format", "csv", "--out", str(tmp_path / "out.csv")]) == 0
    got = pl.read_csv(tmp_path / "out.csv")
    per_user = recframe.per_user(
        joined, users=users, score="score", relevance="rating", threshold=4, k=10, metrics=["ndcg"], by=["model", "segment"]
    )
    want = recframe.disparity(per_user, group="segment", seed=1)
    assert got["metric"].to_list() == want["metric"].to_list()
    for column in ("difference", "ratio", "p_value", "mean_even", "mean_odd"):
        assert got[column].to_list() == pytest.approx(want[column].to_list(), rel=1e-9), column
    assert cli.main([*args, "--by", "segment"]) == 2
    assert "--group segment is also in --by" in capsys.readouterr().err


def test_no_user_is_paired() -> None:
    """Groups of different sizes, users in any order: the gap is a difference of group means."""
    shuffled = HAND.sample(fraction=1.0, shuffle=True, seed=5)
    row = recframe.disparity(shuffled, group="segment", test="permutation", seed=0).row(0, named=True)
    combos = math.comb(5, 3)  # c's 3 values and b's 2: every split enumerated
    assert combos <= 10_000 and row["difference"] == 0.5
    splits = [np.mean(list(s)) - np.mean([v for i, v in enumerate([1.0, 0.5, 0.75, 0.25, 0.25]) if i not in idx])
              for idx in itertools.combinations(range(5), 3) for s in [[[1.0, 0.5, 0.75, 0.25, 0.25][i] for i in idx]]]  # fmt: skip
    greater = sum(d >= 0.5 - 1e-12 for d in splits) / combos
    less = sum(d <= 0.5 + 1e-12 for d in splits) / combos
    assert row["p_value"] == pytest.approx(min(1.0, 2 * min(greater, less)))


def test_report_lays_out_the_gaps() -> None:
    gaps = recframe.disparity(HAND, group="segment", seed=0)
    text = recframe.report(gaps, precision=2)
    lines = text.splitlines()
    assert lines[0] == "| model | metric | a (n) | b (n) | c (n) | difference | ratio | mad | p_value | p_adjusted |"
    row = gaps.row(0, named=True)
    interval = f"[{row['gap_lo']:.2f}, {row['gap_hi']:.2f}]"
    assert lines[2].startswith(f"| A | recall@10 | 0.50 (3) | 0.25 (2) | **0.75** (3) | 0.50 {interval} | 0.33 | 0.33 |")
    html = recframe.report(gaps, format="html")
    assert "<strong>0.750</strong> (3)" in html
    with pytest.raises(recframe.RecframeError, match='pairs="all"'):
        recframe.report(recframe.disparity(HAND, group="segment", pairs="all", seed=0))


def test_plot_groups_draws_each_groups_mean_with_its_interval() -> None:
    matplotlib = pytest.importorskip("matplotlib", reason="plots need matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    two = pl.concat([HAND, HAND.with_columns(model=pl.lit("B"), **{"recall@10": pl.col("recall@10") / 2})])
    fig = recframe.plot.groups(two, "segment", "recall@10", seed=0)
    axis = fig.axes[0]
    heights = [round(float(bar.get_height()), 6) for bar in axis.patches]
    assert heights == [0.5, 0.25, 0.75, 0.25, 0.125, 0.375]  # model A's three groups, then B's
    assert [t.get_text() for t in axis.get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in axis.get_legend().get_texts()] == ["A", "B"]
    errors = next(c for c in axis.containers if type(c).__name__ == "ErrorbarContainer")  # model A's
    low, high = stats.bootstrap_ci(np.array([0.0, 0.5, 1.0]), 0.95, 1000, np.random.default_rng(0))
    segments = errors.lines[2][0].get_segments()  # the interval of group a: the first drawn
    assert segments[0][:, 1].tolist() == pytest.approx([low, high])
    with pytest.raises(recframe.RecframeError, match="metric='ndcg@10' is not a column"):
        recframe.plot.groups(HAND, "segment", "ndcg@10")
    plt.close("all")
