"""summary(ci=...), compare and curve on every backend, with hand-worked values."""

from __future__ import annotations

import importlib.util
import math
import sys
import warnings

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import to_polars
from recframe import RecframeError
from recframe.data import load_sample

# compare's default test (paired t) and ci_method="t" need scipy: only those tests skip without it
needs_scipy = pytest.mark.skipif(
    importlib.util.find_spec("scipy") is None, reason="the t distribution needs scipy: pip install 'recframe[stats]'"
)


@pytest.fixture
def scipy_stats():
    """scipy.stats, for the two tests that check against it (skipped without the stats extra)."""
    return pytest.importorskip("scipy.stats", reason="the t distribution needs scipy: pip install 'recframe[stats]'")


# Two models, three users; user 3 has no relevant item (skipped under empty_users="skip").
#   model A: user 1 hit at rank 1 (rr@2 = 1), user 2 hit at rank 2 (rr@2 = 1/2)
#   model B: user 1 hit at rank 2 (1/2), user 2 hit at rank 1 (1)... plus user 4 only in B
FRAME = pl.DataFrame({
    "model":     ["A", "A", "A", "A", "A", "A", "B", "B", "B", "B", "B", "B"],
    "user_id":   [1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3],
    "item_id":   ["a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b"],
    "rank":      [1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 1, 2],
    "relevance": [1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0],
})  # fmt: skip


COUNTS = ["n_users", "n_skipped", "n_unranked", "n_no_relevant", "n_no_truth"]


def test_summary_without_ci_is_unchanged(constructor):
    plain = to_polars(recframe.summary(constructor(FRAME), k=2, metrics=["rr"], by="model"))
    assert plain.columns == ["model", *COUNTS, "rr@2"]


def in_sql_engine(frame) -> bool:
    """DuckDB (in conftest.BACKENDS): statistics need the per-user values, which stay in the engine."""
    return type(frame).__module__.split(".")[0] == "duckdb"


def test_summary_ci_columns_and_hand_values(constructor, scipy_stats):
    frame = constructor(FRAME)
    if in_sql_engine(frame):
        # the bootstrap resamples per-user values in Python: refused in the engine (t is computed there, below)
        in_engine = 'ci=.*resamples the per-user values in Python.*DuckDB.*ci_method="poisson".*ci_method="t"'
        with pytest.raises(recframe.RecframeError, match=in_engine):
            recframe.summary(frame, k=2, by="model", ci=0.95, ci_method="bootstrap")
        # a quantile's interval: neither runs in the engine (both give the mean's), so Polars alone is offered
        with pytest.raises(recframe.RecframeError, match="Hint: evaluate the same data with Polars.*of a quantile") as refused:
            recframe.summary(frame, k=2, by="model", ci=0.95, aggregate="p90")
        assert "poisson" not in str(refused.value) and 'ci_method="t"' not in str(refused.value)
        # refused before the engine runs its data-check query: bad data gives the same refusal
        with pytest.raises(recframe.RecframeError, match="resamples the per-user values in Python"):
            recframe.summary(constructor(pl.concat([FRAME, FRAME])), k=2, by="model", ci=0.95)
    out = to_polars(recframe.summary(frame, k=2, metrics=["precision", "rr"], by="model",
                                     ci=0.95, ci_method="t"))  # fmt: skip
    assert out.columns == [
        "model", *COUNTS,
        "precision@2", "precision@2_std", "precision@2_lo", "precision@2_hi",
        "rr@2", "rr@2_std", "rr@2_lo", "rr@2_hi",
    ]  # fmt: skip
    a = out.row(0, named=True)
    # A counts users 1 and 2 (user 3 skipped, for precision too): rr 1 and 1/2
    assert (a["n_users"], a["n_skipped"]) == (2, 1)
    assert a["rr@2"] == (1 + 1 / 2) / 2
    std = math.sqrt(((1 - 0.75) ** 2 + (0.5 - 0.75) ** 2) / (2 - 1))
    assert a["rr@2_std"] == pytest.approx(std)
    half = scipy_stats.t.ppf(0.975, 1) * std / math.sqrt(2)
    assert (a["rr@2_lo"], a["rr@2_hi"]) == (pytest.approx(0.75 - half), pytest.approx(0.75 + half))
    # precision@2 = 1/2 for both counted users: std 0, interval [1/2, 1/2]
    assert (a["precision@2_std"], a["precision@2_lo"], a["precision@2_hi"]) == (0.0, 0.5, 0.5)


def test_summary_bootstrap_is_seeded_and_brackets_the_mean(constructor):
    recs, truth = load_sample()
    kw = dict(truth=truth, k=[5, 10], metrics=["ndcg", "recall"], score="score", relevance="rating", threshold=4,
              by="model", ci=0.9, n_resamples=300)  # fmt: skip
    if in_sql_engine(constructor(recs)):
        pytest.skip("the bootstrap is refused on SQL engines (tested above)")
    first = to_polars(recframe.summary(constructor(recs), seed=1, **kw))
    again = to_polars(recframe.summary(constructor(recs), seed=1, **kw))
    # the same resamples; the engine's own sums may round differently from run to run (ulps)
    assert first["model"].equals(again["model"])
    np.testing.assert_allclose(first.drop("model").to_numpy(), again.drop("model").to_numpy(), rtol=1e-12)
    for column in ("ndcg@5", "ndcg@10", "recall@10"):
        assert (first[f"{column}_lo"] < first[column]).all() and (first[column] < first[f"{column}_hi"]).all()
    plain = to_polars(recframe.summary(constructor(recs), **{k: v for k, v in kw.items() if k not in ("ci", "n_resamples")}))
    # the means are summary's (to the engine's run-to-run rounding)
    np.testing.assert_allclose(first.select(plain.columns).drop("model").to_numpy(), plain.drop("model").to_numpy(), rtol=1e-12)


def test_summary_bootstrap_resamples_only_counted_users():
    # every counted user of A has precision@2 = 1/2; the skipped user 3 has 0.0 and must not
    # enter any resample, so the interval is exactly [1/2, 1/2]
    out = recframe.summary(FRAME, k=2, metrics=["precision"], by="model", ci=0.95, seed=0)
    assert out.select("precision@2_lo", "precision@2_hi").rows() == [(0.5, 0.5), (0.5, 0.5)]


def test_summary_ci_lazy_stays_lazy():
    out = recframe.summary(FRAME.lazy(), k=2, metrics=["rr"], by="model", ci=0.95, seed=0)
    assert isinstance(out, pl.LazyFrame)
    assert out.collect_schema().names() == out.collect().columns


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"ci": 95}, r"ci=95 is not a probability.*Hint: pass ci=0.95"),
        ({"ci": 0.95, "ci_method": "normal"}, r"ci_method='normal' .*Hint"),
        ({"ci": 0.95, "n_resamples": -1}, r"n_resamples=-1 .*Hint"),
    ],
)
def test_summary_ci_bad_arguments(kwargs, match):
    with pytest.raises(RecframeError, match=match):
        recframe.summary(FRAME, k=2, **kwargs)


# --- compare ------------------------------------------------------------------------------

PER_USER = pl.DataFrame({
    "model":   ["A", "A", "A", "A", "B", "B", "B", "B", "B", "C", "C", "C", "C"],
    "user_id": [1, 2, 3, 4, 1, 2, 3, 4, 5, 1, 2, 3, 4],
    "n_relevant": [1] * 13,
    "rr@10":   [1.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 0.5, 0.5, None],
})  # fmt: skip


def test_compare_hand_worked(constructor):
    frame = constructor(PER_USER)
    if in_sql_engine(frame):
        # the paired t test runs in the engine (tests/test_compare_engine.py); the others need the values
        with pytest.raises(recframe.RecframeError, match="per_user_frame is a DuckDB frame.*relation.pl()"):
            recframe.compare(frame, baseline="A", test="randomization")
        return
    out = to_polars(recframe.compare(frame, baseline="A", test="randomization", correction="bonferroni"))
    b, c = out.rows(named=True)
    # B vs A: users 1-4 paired (user 5 only in B); d = 0, .5, .5, .5
    assert (b["model"], b["metric"], b["n_pairs"], b["n_dropped_baseline"], b["n_dropped_model"]) == ("B", "rr@10", 4, 0, 1)
    assert b["baseline_mean"] == (1 + 0.5 + 0.5 + 0) / 4 and b["model_mean"] == (1 + 1 + 1 + 0.5) / 4
    assert b["delta"] == 0.375 and b["rel_delta"] == 0.375 / 0.5
    assert b["p_value"] == 2 * 2 / 16  # exact: 2 of 16 sign patterns reach 0.375
    # C vs A: user 4 has no value under C: 3 pairs, d = 0, 0, 0 -> p = 1
    assert (c["n_pairs"], c["n_dropped_baseline"], c["n_dropped_model"], c["delta"]) == (3, 1, 0, 0.0)
    assert c["p_value"] == 1.0
    # Bonferroni over the family of 2 rows
    assert (b["p_adjusted"], c["p_adjusted"]) == (min(1, 2 * 0.25), 1.0)
    assert (b["significant"], c["significant"]) == (False, False)


def test_compare_reads_a_nan_value_as_a_missing_one():
    """A NaN metric value (pandas' missing value) leaves its user's pair out, as a null does:
    the same rows, the same counts of dropped users."""
    with_nan = PER_USER.with_columns(pl.col("rr@10").fill_null(float("nan")))
    kwargs = {"baseline": "A", "test": "randomization", "seed": 0}
    assert with_nan["rr@10"].is_nan().sum() == 1
    assert recframe.compare(with_nan, **kwargs).equals(recframe.compare(PER_USER, **kwargs))
    c = recframe.compare(with_nan, **kwargs).row(1, named=True)
    assert (c["model"], c["n_pairs"], c["n_dropped_baseline"], c["n_dropped_model"]) == ("C", 3, 1, 0)


@needs_scipy
def test_compare_columns_and_types():
    out = recframe.compare(PER_USER, baseline="A")
    assert out.columns == [
        "baseline", "model", "metric", "n_pairs", "n_dropped_baseline", "n_dropped_model",
        "baseline_mean", "model_mean", "delta", "delta_lo", "delta_hi", "rel_delta", "d_z",
        "wins", "ties", "losses", "p_value", "p_adjusted", "significant",
    ]  # fmt: skip
    assert isinstance(recframe.compare(PER_USER.lazy(), baseline="A"), pl.LazyFrame)
    assert type(recframe.compare(PER_USER.to_pandas(), baseline="A")).__name__ == "DataFrame"


@pytest.mark.parametrize("test", ["paired_t", "wilcoxon", "randomization"])
def test_compare_p_values_are_the_stats_tests_with_holm(test, scipy_stats):
    recs, truth = load_sample()
    per_user = recframe.per_user(recs, truth=truth, k=[5, 10], metrics=["ndcg", "ap"], score="score",
                                 relevance="rating", threshold=4, by="model")  # fmt: skip
    out = recframe.compare(per_user, baseline="popular", test=test, seed=0, n_resamples=2000)
    assert out["n_pairs"].to_list() == [287] * 4  # the 13 users with no relevant item are out
    pairs = per_user.filter(pl.col("n_relevant") > 0)
    raw = []
    for metric in out["metric"]:
        base = pairs.filter(pl.col("model") == "popular")[metric].to_numpy()
        model = pairs.filter(pl.col("model") == "personal")[metric].to_numpy()
        if test == "paired_t":
            raw.append(scipy_stats.ttest_rel(model, base).pvalue)
        elif test == "wilcoxon":
            raw.append(scipy_stats.wilcoxon(model, base).pvalue)
        else:  # p is ~0: every drawn pattern is below the observed mean
            raw.append(1 / 2001 * 2)
    assert out["p_value"].to_list() == pytest.approx(raw, rel=1e-9)
    # Holm over the 4 rows
    order = np.argsort(raw)
    expected = np.minimum(1, np.maximum.accumulate([(4 - j) * raw[i] for j, i in enumerate(order)]))
    holm = np.empty(4)
    holm[order] = expected
    assert out["p_adjusted"].to_list() == pytest.approx(holm.tolist(), rel=1e-9)
    assert out["significant"].all()


@needs_scipy
def test_compare_means_equal_summary_means():
    recs, truth = load_sample()
    kw = dict(truth=truth, k=10, metrics=["precision", "ndcg"], score="score", relevance="rating", threshold=4,
              by="model")  # fmt: skip
    out = recframe.compare(recframe.per_user(recs, **kw), baseline="popular")
    summary = recframe.summary(recs, **kw)
    for row in out.iter_rows(named=True):
        means = dict(summary.select("model", row["metric"]).rows())
        assert row["baseline_mean"] == pytest.approx(means["popular"])
        assert row["model_mean"] == pytest.approx(means["personal"])


@needs_scipy
def test_compare_namespace_computes_per_user_first():
    recs, truth = load_sample()
    kw = dict(truth=truth, k=10, metrics=["ndcg"], score="score", relevance="rating", threshold=4)
    direct = recframe.compare(recframe.per_user(recs, by="model", **kw), baseline="popular", seed=0)
    # the same numbers; parallel sums may differ in the last ulp between input types
    assert_frame_equal(recs.recmetrics.compare(baseline="popular", seed=0, **kw), direct, rel_tol=1e-12, abs_tol=1e-300)
    pandas = recs.to_pandas().recmetrics.compare(baseline="popular", seed=0, **{**kw, "truth": truth.to_pandas()})
    assert_frame_equal(pl.from_pandas(pandas), direct, rel_tol=1e-12, abs_tol=1e-300)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"baseline": "Z"}, r"baseline='Z' is not a value of column 'model' \(values: \['A', 'B', 'C'\]\).*Hint"),
        ({"baseline": "A", "test": "t"}, r"test='t' .*Hint"),
        ({"baseline": "A", "correction": "fdr"}, r"correction='fdr' .*Hint"),
        ({"baseline": "A", "alpha": 5}, r"alpha=5 .*Hint: pass alpha=0.05"),
        ({"baseline": "A", "metrics": ["ndcg@10"]}, r"metrics= names 'ndcg@10'.*Hint: pass some of \['rr@10'\]"),
        ({"baseline": "A", "by": "variant"}, r"by='variant' is not a column.*Hint"),
    ],
)
def test_compare_bad_arguments(kwargs, match):
    with pytest.raises(RecframeError, match=match):
        recframe.compare(PER_USER, **kwargs)


def test_compare_duplicate_users_are_an_error():
    doubled = pl.concat([PER_USER, PER_USER.head(1)])
    with pytest.raises(
        RecframeError, match=r"2 rows that share their \('model', 'user_id'\) values.*Hint: the frame has other key columns"
    ):
        recframe.compare(doubled, baseline="A")


def test_compare_within_other_keys_and_the_user_column_inferred():
    """by=["model", "segment"]: models compared within each segment, p-values adjusted over all
    rows. The user column is found before n_relevant (here "uid", from per_user(user="uid"))."""
    per_user = pl.DataFrame({
        "model":      ["A", "A", "B", "B", "A", "A", "B", "B"],
        "segment":    ["cold", "cold", "cold", "cold", "warm", "warm", "warm", "warm"],
        "uid":        [1, 2, 1, 2, 3, 4, 3, 4],
        "n_relevant": [1] * 8,
        "rr@10":      [0.5, 0.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5],
    })  # fmt: skip
    out = recframe.compare(per_user, by=["model", "segment"], baseline="A", test="randomization", correction=None)
    assert out.columns[:4] == ["segment", "baseline", "model", "metric"]
    # cold: d = 0.5, 0.5 -> delta 0.5; of the 4 sign patterns 2 reach |mean| 0.5: p = 2 / 4
    # warm: d = 0, -0.5 -> delta -0.25; every pattern reaches |mean| 0.25: p = 4 / 4
    assert out.select("segment", "n_pairs", "delta", "p_value").rows() == [("cold", 2, 0.5, 0.5), ("warm", 2, -0.25, 1.0)]
    # without n_relevant, the one column that is neither a key nor a metric is the user
    same = recframe.compare(
        per_user.drop("n_relevant"), by=["model", "segment"], baseline="A", test="randomization", correction=None
    )
    assert same.equals(out)
    with pytest.raises(RecframeError, match=r"pass user= the user column"):
        recframe.compare(per_user.drop("n_relevant").with_columns(day=1), by=["model", "segment"], baseline="A")


# --- curve --------------------------------------------------------------------------------


def test_curve_equals_summary_at_every_k(constructor):
    recs, truth = load_sample()
    kw = dict(truth=truth, score="score", relevance="rating", threshold=4, by="model")
    out = to_polars(recframe.curve(constructor(recs), metrics=["ndcg", "ap"], k_max=12,
                                   **{**kw, "truth": constructor(truth)}))  # fmt: skip
    assert out.columns == ["model", "k", *COUNTS, "ndcg", "ap", "precision", "recall"]
    assert out.height == 2 * 12
    assert out["k"].to_list() == list(range(1, 13)) * 2
    for k in (1, 7, 12):
        wide = recframe.summary(recs, k=k, metrics=["ndcg", "ap", "precision", "recall"], **kw)
        long = out.filter(pl.col("k") == k).drop("k").rename(lambda c, k=k: c if "n_" in c or c == "model" else f"{c}@{k}")
        # the same formulas; the engine's sums may round differently (ulps)
        assert long["model"].equals(wide["model"])
        np.testing.assert_allclose(long.drop("model").to_numpy(), wide.select(long.columns).drop("model").to_numpy(), rtol=1e-12)


def test_curve_hand_worked_pr_points():
    df = pl.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "rank": [1, 2, 3], "relevance": [1, 0, 1]})
    out = recframe.curve(df, metrics=["precision"], k_max=4)
    # hits 1, 1, 2, 2 of R = 2
    assert out.select("k", "precision", "recall").rows() == [
        (1, 1 / 1, 1 / 2),
        (2, 1 / 2, 1 / 2),
        (3, 2 / 3, 2 / 2),
        (4, 2 / 4, 2 / 2),
    ]


def test_curve_with_intervals_and_lazy():
    out = recframe.curve(FRAME.lazy(), metrics=["rr"], k_max=2, by="model", ci=0.95, seed=0)
    assert isinstance(out, pl.LazyFrame)
    assert out.collect().columns == [
        "model", "k", *COUNTS, "rr", "rr_std", "rr_lo", "rr_hi",
        "precision", "precision_std", "precision_lo", "precision_hi",
        "recall", "recall_std", "recall_lo", "recall_hi",
    ]  # fmt: skip


def test_a_lazy_curve_runs_its_summary_once(monkeypatch):
    """Lazy in, lazy out, the eager numbers; the summary's plan runs once, not once per k."""
    eager = recframe.curve(FRAME, metrics=["rr"], k_max=4, by="model")
    runs = []
    api = sys.modules["recframe.api"]
    real = api.summary_of  # the summary of the curve's resolved call

    def counted(*args, **kwargs):
        out = real(*args, **kwargs)
        return out.map_batches(lambda t: runs.append(1) or t, schema=out.collect_schema(), streamable=False)

    monkeypatch.setattr(api, "summary_of", counted)
    lazy = recframe.curve(FRAME.lazy(), metrics=["rr"], k_max=4, by="model")
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(eager) and len(runs) == 1


def test_curve_bad_k_max():
    with pytest.raises(RecframeError, match=r"k_max=0 is not a positive integer.*Hint"):
        recframe.curve(FRAME, k_max=0)


@pytest.mark.parametrize("order", ["rank", "score"])
def test_curve_work_is_bounded_by_the_data_not_by_k_max(constructor, order):
    """k_max=10**9 on lists of at most 3 items stops at the default 50 (the longest list is
    shorter), says so, and gives the values summary gives there; a k_max within the default or
    the longest list is never cut."""
    df = pl.DataFrame({"user_id": [1, 1, 1, 2], "item_id": ["a", "b", "c", "a"], "rank": [1, 2, 3, 1], "relevance": [0, 1, 1, 1]})
    if order == "score":
        df = df.with_columns(score=-pl.col("rank").cast(pl.Float64)).drop("rank")
    call = {"score": "score"} if order == "score" else {}
    with pytest.warns(recframe.CappedWarning, match=r"k_max=1000000000.*at most 3 ranked item\(s\).*stops at k=50"):
        out = to_polars(recframe.curve(constructor(df), metrics=["precision"], k_max=10**9, **call))
    assert out["k"].to_list() == list(range(1, 51))
    # hits 0, 1, 2 at k = 1..3 for user 1 (a not relevant), 1 for user 2: at k = 50, (2/50 + 1/50) / 2
    assert out.filter(pl.col("k") == 50)["precision"].item() == pytest.approx((2 / 50 + 1 / 50) / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_polars(recframe.curve(constructor(df), metrics=["precision"], k_max=5, **call)).height == 5


def test_curve_takes_the_same_conventions_and_profile_as_summary():
    """Every convention option and profile= reach summary: curve at k equals summary's @k column."""
    recs, truth = load_sample()
    options = dict(truth=truth, score="score", relevance="rating", threshold=4, by="model")
    for extra in ({"profile": "trec_eval"}, {"idcg": "k", "discount": "log2_max_rank_2", "rr_cutoff": False}):
        long = recframe.curve(recs.drop("rank"), metrics=["ndcg", "rr"], k_max=3, **options, **extra)
        wide = recframe.summary(recs.drop("rank"), k=3, metrics=["ndcg", "rr"], **options, **extra)
        at_3 = long.filter(pl.col("k") == 3).sort("model")
        np.testing.assert_allclose(at_3["ndcg"].to_numpy(), wide["ndcg@3"].to_numpy(), rtol=1e-12)
        np.testing.assert_allclose(at_3["rr"].to_numpy(), wide["rr@3"].to_numpy(), rtol=1e-12)
