"""recframe.stats: hand-worked values, agreement with scipy, bootstrap coverage."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import recframe
from recframe import RecframeError, stats

scipy_stats = pytest.importorskip("scipy.stats")


def test_std_is_sample_std_ddof_1():
    # mean 2: ((1-2)^2 + 0 + (3-2)^2) / (3 - 1) = 1
    assert stats.std([1.0, 2.0, 3.0]) == 1.0
    assert math.isnan(stats.std([4.0]))
    assert stats.std(np.array([[1.0, 0.0], [3.0, np.nan], [np.nan, 2.0]])).tolist() == [
        math.sqrt(((1 - 2) ** 2 + (3 - 2) ** 2) / 1),
        math.sqrt(((0 - 1) ** 2 + (2 - 1) ** 2) / 1),
    ]


def test_t_quantiles_equal_the_closed_forms_on_every_scipy():
    """df = 1 is Cauchy's tan(pi (p - 1/2)), df = 2 is (2p - 1) / sqrt(2 p (1 - p)): scipy before
    1.17 inverted the t distribution to about 1e-11 only (4.302652729696142 at df = 2)."""
    pytest.importorskip("scipy", reason="the t distribution needs scipy: pip install 'recframe[stats]'")
    for ci in (0.8, 0.9, 0.95, 0.99):
        p = (1 + ci) / 2
        one, two = stats.t_quantiles([2, 3], ci)
        assert one == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-13), ci
        assert two == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-13), ci


def test_t_interval_by_hand():
    # mean 2, s = 1, n = 3, t_{0.975, 2} = 4.302652729749462
    lo, hi = stats.t_ci([1.0, 2.0, 3.0], 0.95)
    half = 4.302652729749462 * 1 / math.sqrt(3)
    assert lo == pytest.approx(2 - half, rel=1e-12)
    assert hi == pytest.approx(2 + half, rel=1e-12)
    assert all(math.isnan(x) for x in stats.t_ci([1.0], 0.95))


def test_corrections_by_hand():
    p = [0.01, 0.04, 0.03, 0.5]
    assert stats.adjust_pvalues(p, "bonferroni").tolist() == pytest.approx([4 * 0.01, 4 * 0.04, 4 * 0.03, 1.0])
    # sorted 0.01, 0.03, 0.04, 0.5 -> 4*0.01, 3*0.03, max(3*0.03, 2*0.04), max(., 1*0.5)
    assert stats.adjust_pvalues(p, "holm").tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert stats.adjust_pvalues(p, None).tolist() == p
    # NaN is not a test: the family is the three others
    out = stats.adjust_pvalues([0.01, math.nan, 0.02], "bonferroni")
    assert out[0] == pytest.approx(2 * 0.01) and math.isnan(out[1]) and out[2] == pytest.approx(2 * 0.02)


def test_wilcoxon_by_hand():
    # d = 1, -2, 3, 4: ranks 1, 2, 3, 4; W+ = 1 + 3 + 4 = 8 of max 10; subsets of {1,2,3,4}
    # with sum >= 8: {4,3,1}, {4,3,2}, {4,3,2,1} (sums 8, 9, 10) -> 3 of 16; p = 2 * 3/16
    r = stats.wilcoxon_test([1.0, -2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0])
    assert r.statistic == 8.0
    assert r.p_value == 2 * 3 / 16
    # zeros dropped; nothing left: no evidence of a difference
    assert stats.wilcoxon_test([1.0, 2.0], [1.0, 2.0]).p_value == 1.0


def test_paired_t_by_hand():
    # d = 1, 2, 3: mean 2, s = 1, t = 2 / (1 / sqrt(3))
    r = stats.paired_t_test([2.0, 3.0, 5.0], [1.0, 1.0, 2.0])
    assert r.statistic == pytest.approx(2 * math.sqrt(3))
    assert r.p_value == pytest.approx(2 * scipy_stats.t.sf(2 * math.sqrt(3), 2))
    assert stats.paired_t_test([1.0, 2.0], [1.0, 2.0]) == (0.0, 1.0)
    assert stats.paired_t_test([2.0, 3.0], [1.0, 2.0]) == (math.inf, 0.0)
    assert all(math.isnan(x) for x in stats.paired_t_test([1.0], [0.0]))


def test_randomization_by_hand():
    # d = 1, 1, -1: observed mean 1/3; sign patterns giving mean >= 1/3: those with at most one
    # negative sign... means of (s1 + s2 - s3) / 3 >= 1/3 <=> s1 + s2 - s3 >= 1: 4 of 8
    r = stats.randomization_test([1.0, 1.0, -1.0], [0.0, 0.0, 0.0])
    assert r.statistic == pytest.approx(1 / 3)
    assert r.p_value == 1.0  # 2 * min(4/8, 7/8) = 1


def _paired_samples(seed: int, n: int, ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    baseline = rng.random(n)
    model = baseline + rng.normal(0.05, 0.2, n)
    if ties:  # per-user metrics take few distinct values (e.g. hits / 10)
        baseline, model = np.round(baseline * 10) / 10, np.clip(np.round(model * 10) / 10, 0, 1)
    return model, baseline


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [5, 30, 400])
def test_paired_t_agrees_with_scipy(seed, n):
    model, baseline = _paired_samples(seed, n)
    ours = stats.paired_t_test(model, baseline)
    theirs = scipy_stats.ttest_rel(model, baseline)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-10)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n, ties", [(8, False), (40, False), (400, False), (30, True), (400, True)])
def test_wilcoxon_agrees_with_scipy(seed, n, ties):
    # scipy's default: exact without ties/zeros up to 50 pairs, else the normal approximation
    # (with ties and more than 13 pairs); same W+ and p to 1e-9
    model, baseline = _paired_samples(seed, n, ties)
    ours = stats.wilcoxon_test(model, baseline)
    theirs = scipy_stats.wilcoxon(model, baseline)
    r_minus = theirs.statistic  # scipy reports min(W+, W-) for two-sided tests
    d = model - baseline
    nonzero = int((d != 0).sum())
    assert min(ours.statistic, nonzero * (nonzero + 1) / 2 - ours.statistic) == pytest.approx(r_minus)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-15)


def _mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


@pytest.mark.parametrize("seed", range(6))
def test_randomization_exact_agrees_with_scipy(seed):
    # 10 pairs, 1024 sign patterns <= n_resamples: both enumerate them all, so p is identical
    model, baseline = _paired_samples(seed, 10)
    ours = stats.randomization_test(model, baseline, n_resamples=10_000)
    theirs = scipy_stats.permutation_test(
        (model, baseline), _mean_difference, permutation_type="samples", vectorized=True, n_resamples=10_000
    )
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_randomization_sampled_agrees_with_scipy(seed):
    # drawn patterns: both p-values are Monte Carlo estimates with standard error
    # sqrt(p (1 - p) / 20000) each; allow 5 standard errors of their difference
    model, baseline = _paired_samples(seed, 200, ties=True)
    ours = stats.randomization_test(model, baseline, n_resamples=20_000, seed=seed)
    theirs = scipy_stats.permutation_test(
        (model, baseline), _mean_difference, permutation_type="samples", vectorized=True,
        n_resamples=20_000, rng=seed + 100,
    )  # fmt: skip
    p = theirs.pvalue
    tolerance = 5 * math.sqrt(2 * p * (1 - p) / 20_000) + 1e-3
    assert abs(ours.p_value - p) <= tolerance


def test_randomization_is_reproducible():
    model, baseline = _paired_samples(0, 100)
    assert stats.randomization_test(model, baseline, 500, seed=3) == stats.randomization_test(model, baseline, 500, seed=3)


def test_bootstrap_coverage():
    # 100 seeded repetitions of n = 200 draws from N(1, 2^2): a 95% percentile interval should
    # cover the true mean 1 about 95 times; accept 80..100 (binomial sd ~2.2), never flaky
    # because every repetition is seeded
    covered = 0
    for rep in range(100):
        draws = np.random.default_rng(rep).normal(1.0, 2.0, 200)
        lo, hi = stats.bootstrap_ci(draws, 0.95, n_resamples=1000, seed=10_000 + rep)
        covered += lo <= 1.0 <= hi
    assert 80 <= covered <= 100


def test_bootstrap_columns_with_missing_values_match_one_column_at_a_time():
    rng = np.random.default_rng(0)
    matrix = rng.random((50, 3))
    matrix[:10, 1] = np.nan
    means = stats.bootstrap_means(matrix, n_resamples=200, seed=7)
    # same resamples: the 2-D call is the weighted mean of each column over its present rows
    drawn = np.random.default_rng(7).integers(0, 50, size=(200, 50))
    counts = np.stack([np.bincount(row, minlength=50) for row in drawn]).astype(float)
    for j in range(3):
        present = ~np.isnan(matrix[:, j])
        expected = (counts[:, present] @ matrix[present, j]) / counts[:, present].sum(axis=1)
        np.testing.assert_allclose(means[:, j], expected, rtol=1e-12)


def test_bootstrap_chunking_does_not_change_the_result(monkeypatch):
    values = np.random.default_rng(1).random((30, 2))
    whole = stats.bootstrap_means(values, n_resamples=100, seed=5)
    monkeypatch.setattr(stats, "CHUNK_ELEMENTS", 30 * 7)  # chunks of 7 resamples
    # the same draws; only the matrix products may round differently
    np.testing.assert_allclose(stats.bootstrap_means(values, n_resamples=100, seed=5), whole, rtol=1e-12)


def test_bootstrap_degenerate_cases():
    # one value has no spread to resample: no interval, as for the t interval (never [2, 2])
    assert all(math.isnan(x) for x in stats.bootstrap_ci([2.0], seed=0))
    assert all(math.isnan(x) for x in stats.t_ci([2.0]))
    assert all(math.isnan(x) for x in stats.bootstrap_ci(np.array([]), seed=0))
    lo, hi = stats.bootstrap_ci(np.array([[1.0, 5.0], [2.0, np.nan]]), n_resamples=50, seed=0)
    assert 1.0 <= lo[0] <= hi[0] <= 2.0 and math.isnan(lo[1]) and math.isnan(hi[1])


def test_an_interval_exists_exactly_when_its_estimate_does():
    """compare: one pair gives a delta and no interval, by every test; an infinite per-user value
    is refused (its mean is undefined), never a null delta beside a finite interval."""
    one = pl.DataFrame({"model": ["A", "B"], "user_id": [1, 1], "ndcg@10": [0.5, 1.0]})
    for test in ("paired_t", "wilcoxon", "randomization"):
        row = recframe.compare(one, baseline="A", test=test, seed=0).row(0, named=True)
        assert row["delta"] == 0.5 and row["delta_lo"] is None and row["delta_hi"] is None, test
    infinite = pl.DataFrame({"model": ["A", "B", "A", "B"], "user_id": [1, 1, 2, 2], "ndcg@10": [0.5, math.inf, 0.1, 0.2]})
    with pytest.raises(
        recframe.RecframeError, match=r"column 'ndcg@10' of per_user_frame has 1 infinite value\(s\), first user_id=1"
    ):
        recframe.compare(infinite, baseline="A")


@pytest.mark.parametrize("n_resamples", [stats.MAX_RESAMPLES + 1, 10**12])
def test_resample_counts_that_cannot_finish_are_refused(n_resamples):
    """Every size argument is bounded: a count whose resample means would not fit in memory is
    refused at once, by the functions and by summary and compare."""
    frame = pl.DataFrame({"model": ["A", "B"] * 2, "user_id": [1, 1, 2, 2], "ndcg@10": [0.1, 0.2, 0.3, 0.5]})
    match = rf"n_resamples={n_resamples} is more than the 1,000,000 resamples"
    for call in (
        lambda: stats.bootstrap_ci([1.0, 2.0], n_resamples=n_resamples),
        lambda: stats.randomization_test([1.0, 2.0], [0.0, 0.0], n_resamples=n_resamples),
        lambda: recframe.compare(frame, baseline="A", test="randomization", n_resamples=n_resamples),
        lambda: recframe.summary(
            frame.rename({"ndcg@10": "relevance"}).with_columns(rank=1), by="model", ci=0.9, n_resamples=n_resamples
        ),
    ):
        with pytest.raises(recframe.RecframeError, match=match):
            call()


@pytest.mark.parametrize("seed", [-1, 2.5, "1"])
def test_a_seed_numpy_refuses_is_a_named_error(seed):
    with pytest.raises(recframe.RecframeError, match=r"seed=.* is not an integer >= 0, a numpy Generator or None"):
        stats.bootstrap_ci([1.0, 2.0], seed=seed)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: stats.bootstrap_ci([1.0], ci=1.5), r"ci=1\.5 .*Hint"),
        (lambda: stats.bootstrap_ci([1.0], n_resamples=0), r"n_resamples=0 .*Hint"),
        (lambda: stats.bootstrap_ci([1.0], seed="x"), r"seed='x' .*Hint"),
        (lambda: stats.adjust_pvalues([0.1], "fdr"), r"correction='fdr' .*Hint"),
        (lambda: stats.paired_t_test([1.0, 2.0], [1.0]), r"same length.*Hint"),
        (lambda: stats.wilcoxon_test([1.0, math.nan], [1.0, 2.0]), r"NaN.*Hint"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(RecframeError, match=match):
        call()


def test_missing_scipy_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "scipy.special", None)  # import now fails
    with pytest.raises(RecframeError, match=r'pip install "recframe\[stats\]"'):
        stats.paired_t_test([1.0, 2.0, 4.0], [0.0, 0.0, 0.0])
    # the bootstrap and the randomization test need only numpy
    assert stats.randomization_test([1.0, 2.0], [0.0, 0.0]).p_value == 2 * 1 / 4


def test_std_and_the_t_interval_scale_values_whose_squares_overflow() -> None:
    # squares of values past 1e154 overflow float64: the values are scaled by a power of two
    # first, so the deviation is that of the scaled values, scaled back (exact up to rounding)
    values = np.array([1.0, 2.5, 4.0, 7.5])
    for scale in (1.0, 1e160, 1e300):
        assert stats.std(values * scale) == pytest.approx(np.std(values, ddof=1) * scale, rel=1e-15)
        lo, hi = stats.t_ci(values * scale, 0.9)
        want_lo, want_hi = stats.t_ci(values, 0.9)
        assert (lo, hi) == (pytest.approx(want_lo * scale, rel=1e-14), pytest.approx(want_hi * scale, rel=1e-14))
