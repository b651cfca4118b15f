"""Distributions, not only means (issue 40, item 2): summary(aggregate=...) with the median and
any quantile pNN, by numpy's default linear interpolation on every engine, with bootstrap
intervals under ci=."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import run_cli, to_polars
from recframe import RecframeError

# recall@2 per user, one relevant item each: users 1-4 hit it (rank <= 2) or not
# u1: rank 1 -> 1; u2: rank 3 -> 0; u3: rank 2 -> 1; u4: not recommended -> 0; u5: rank 1 -> 1
FRAME = pl.DataFrame(
    {
        "model": ["A"] * 5 + ["B"] * 3,
        "user_id": [1, 2, 3, 4, 5, 1, 2, 3],
        "item_id": ["a"] * 8,
        "rank": [1, 3, 2, None, 1, 2, 2, 5],
        "relevance": [1] * 8,
    }
)


def test_hand_worked_median_and_quantiles(constructor) -> None:
    out = to_polars(
        recframe.summary(
            constructor(FRAME), k=2, metrics=["recall"], by="model", rank_gaps="keep", aggregate=["mean", "median", "p10", "p90"]
        )
    )
    out = out.sort("model")
    # A: 1, 0, 1, 0, 1; B: 1, 1, 0
    assert out["recall@2"].to_list() == pytest.approx([3 / 5, 2 / 3])
    assert out["recall@2_median"].to_list() == pytest.approx([1.0, 1.0])
    # numpy's linear interpolation: A sorted 0, 0, 1, 1, 1 at position 0.1 * 4 = 0.4 -> 0; at 3.6 -> 1
    assert out["recall@2_p10"].to_list() == pytest.approx([0.0, 0.0 + 0.2 * 1.0])  # B: 0, 1, 1 at 0.2 -> 0.2
    assert out["recall@2_p90"].to_list() == pytest.approx([1.0, 1.0])
    assert out["n_users"].to_list() == [5, 3]


def test_one_aggregate_keeps_the_metric_names() -> None:
    out = recframe.summary(FRAME, k=2, metrics=["recall"], by="model", rank_gaps="keep", aggregate="p10").sort("model")
    assert out.columns[-1] == "recall@2" and out["recall@2"].to_list() == pytest.approx([0.0, 0.2])


def test_quantiles_equal_numpy_over_per_user_on_every_backend(constructor) -> None:
    rng = np.random.default_rng(3)
    n = 400
    frame = (
        pl.DataFrame(
            {
                "model": rng.choice(["A", "B", "C"], n),
                "user_id": rng.integers(0, 60, n),
                "item_id": rng.integers(0, 25, n),
                "rank": rng.integers(1, 12, n),
                "relevance": rng.integers(0, 4, n),
            }
        )
        .unique(["model", "user_id", "item_id"])
        .unique(["model", "user_id", "rank"])
    )
    options = {"k": [3, 10], "metrics": ["ndcg", "ap", "precision"], "threshold": 2, "by": "model", "rank_gaps": "keep"}
    aggregates = ["median", "p0", "p25", "p63", "p100"]
    got = to_polars(recframe.summary(constructor(frame), aggregate=aggregates, **options)).sort("model")
    per_user = recframe.per_user(frame, **options).sort("model")
    for model, rows in per_user.group_by("model", maintain_order=True):
        row = got.filter(pl.col("model") == model[0]).row(0, named=True)
        for column in ("ndcg@3", "ap@10", "precision@10"):
            values = rows[column].drop_nulls().to_numpy()
            for a, q in zip(aggregates, [0.5, 0.0, 0.25, 0.63, 1.0]):
                assert row[f"{column}_{a}"] == pytest.approx(float(np.quantile(values, q)), rel=1e-12, abs=1e-12), (
                    model,
                    column,
                    a,
                )


def test_intervals_of_quantiles_by_the_bootstrap() -> None:
    rng = np.random.default_rng(0)
    frame = pl.DataFrame(
        {"user_id": np.arange(300), "item_id": 0, "rank": rng.integers(1, 20, 300), "relevance": 1}
    )  # rr@20 per user: 1 / rank
    out = recframe.summary(
        frame, k=20, metrics=["rr"], rank_gaps="keep", aggregate=["mean", "median"], ci=0.9, seed=1, n_resamples=300
    )
    row = out.row(0, named=True)
    assert row["rr@20_median_lo"] <= row["rr@20_median"] <= row["rr@20_median_hi"]
    assert row["rr@20_lo"] <= row["rr@20"] <= row["rr@20_hi"]
    again = recframe.summary(
        frame, k=20, metrics=["rr"], rank_gaps="keep", aggregate=["mean", "median"], ci=0.9, seed=1, n_resamples=300
    )
    assert_frame_equal(again, out, rel_tol=1e-12, abs_tol=1e-15)  # (Polars' parallel mean: the last ulp may differ)
    assert out.columns[-7:] == [
        "rr@20",
        "rr@20_std",
        "rr@20_lo",
        "rr@20_hi",
        "rr@20_median",
        "rr@20_median_lo",
        "rr@20_median_hi",
    ]
    # a mean-only call draws as it always did
    plain = recframe.summary(frame, k=20, metrics=["rr"], rank_gaps="keep", ci=0.9, seed=1, n_resamples=300)
    assert_frame_equal(plain.select("rr@20", "rr@20_lo", "rr@20_hi"), out.select("rr@20", "rr@20_lo", "rr@20_hi"), rel_tol=1e-12)


@pytest.mark.parametrize(
    ("aggregate", "message"),
    [
        ("p101", r"'p101' is a quantile outside 0-100"),
        ("p-5", r"'p-5' is not a known aggregate"),
        ("p99.5", r"quantiles are whole percents"),
        ("mode", r"'mode' is not a known aggregate"),
        ([], r"names no aggregate"),
        (["mean", "mean"], r"names an aggregate twice"),
        (3, r"names no aggregate"),
    ],
)
def test_bad_aggregates_are_refused(aggregate: object, message: str) -> None:
    with pytest.raises(RecframeError, match=message) as caught:
        recframe.summary(FRAME, k=2, aggregate=aggregate)  # type: ignore[arg-type]
    assert caught.value.argument == "aggregate"


def test_a_t_interval_of_a_quantile_is_refused() -> None:
    with pytest.raises(RecframeError, match=r'ci_method="t" gives an interval of the mean') as caught:
        recframe.summary(FRAME, k=2, aggregate=["mean", "p90"], ci=0.95, ci_method="t")
    assert "bootstrap" in str(caught.value)


def test_the_command_line_takes_aggregate(tmp_path) -> None:
    import io

    path = tmp_path / "recs.csv"
    FRAME.write_csv(path)

    common = ["--k", "2", "--metrics", "recall", "--by", "model", "--rank-gaps", "keep", "--quiet"]
    code, out, err = run_cli("evaluate", str(path), *common, "--aggregate", "mean,p10", "--format", "csv")
    assert code == 0, err
    assert pl.read_csv(io.StringIO(out)).sort("model")["recall@2_p10"].to_list() == pytest.approx([0.0, 0.2])
    for extra, words in ((["--aggregate", "p101"], "--aggregate p101"), (["--aggregate", "median", "--per-user"], "--per-user")):
        code, _, err = run_cli("evaluate", str(path), *common, *extra)
        assert code == 2 and words in err and "Hint:" in err
    code, _, err = run_cli("report", str(path), *common, "--aggregate", "median", "--out", str(tmp_path / "page.html"))
    assert code == 2 and "--aggregate goes with the report table" in err


def test_the_text_report_folds_each_aggregate_with_its_interval() -> None:
    options = {"k": 2, "metrics": ["recall"], "by": "model", "rank_gaps": "keep"}
    out = recframe.summary(FRAME, aggregate=["mean", "median"], ci=0.9, seed=0, n_resamples=200, **options)
    text = recframe.report(out, precision=2)
    header = text.splitlines()[0]
    assert "recall@2_median" in header and "_median_lo" not in header and "_median_hi" not in header
    a = out.filter(pl.col("model") == "A").row(0, named=True)
    folded = f"{a['recall@2_median']:.2f} [{a['recall@2_median_lo']:.2f}, {a['recall@2_median_hi']:.2f}]"
    assert folded in text.splitlines()[2].replace("*", "")  # (the best value is bold)


def test_an_aggregate_s_interval_does_not_move_when_others_are_asked() -> None:
    """Each aggregate draws from its own generator (the mean's as a mean-only call does): asking
    for a quantile beside it changes no other interval of the same seed."""
    options = {"k": 2, "metrics": ["recall"], "by": "model", "rank_gaps": "keep", "ci": 0.9, "seed": 3, "n_resamples": 200}
    alone = recframe.summary(FRAME, **options)
    both = recframe.summary(FRAME, aggregate=["mean", "median"], **options)
    more = recframe.summary(FRAME, aggregate=["mean", "p90", "median"], **options)
    assert both.select("recall@2_lo", "recall@2_hi").rows() == alone.select("recall@2_lo", "recall@2_hi").rows()
    assert (
        more.select("recall@2_median_lo", "recall@2_median_hi").rows()
        == both.select("recall@2_median_lo", "recall@2_median_hi").rows()
    )
