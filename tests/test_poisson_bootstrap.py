"""summary(ci=..., ci_method="poisson"): the Poisson bootstrap inside the engine (issue 43).

The same seed gives the same interval on every engine (Polars, pandas, Arrow, DuckDB, Ibis here;
Spark and SQLFrame in the slow pass); a slow reference written here (loops over users and
resamples, the generator's formula in plain Python integers, numpy's nanquantile) gives the
same numbers; the weights are Poisson(1); on the bundled sample the interval is close to the
multinomial bootstrap's.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import BACKENDS, to_polars
from recframe import stats
from recframe.data import load_sample
from recframe.statistics import _poisson

P = 2**31 - 1
OPTIONS: dict[str, Any] = {"k": 3, "metrics": ["ndcg", "precision"], "by": "model", "ci": 0.9, "ci_method": "poisson"}


def frame(ids: list[Any]) -> pl.DataFrame:
    """Two models' lists of the same users `ids`, 4 items each, random grades; the model "y"
    also has two users of its own, one with no relevant item (skipped)."""
    rng = np.random.default_rng(3)
    rows = []
    for model in ("x", "y"):
        for user in ids:
            rows += [(model, user, i, i + 1, int(rng.integers(0, 3))) for i in range(4)]
    rows += [("y", "zzz" if isinstance(ids[0], str) else 10**6, i, i + 1, 0) for i in range(4)]  # skipped
    return pl.DataFrame(rows, schema=["model", "user_id", "item_id", "rank", "relevance"], orient="row")


STRINGS = ["a", "B", "é", "Z", "aa", "", "b", "ä", "10", "9", "zz", "Ω"]  # byte order is not letter order
INTEGERS = [7, -3, 0, 12, 2**40, 5, 1, 99, -(2**33), 4]


# --- the slow reference --------------------------------------------------------------------------


def reference_weight(keys: tuple[int, int], b: int, u: int) -> int:
    """The generator as _poisson's docstring states it, in plain integers."""
    k = _poisson.KEYS

    def mix(x: int, key: int) -> int:
        t = (x + key) % P
        return t**5 % P

    x = mix(mix(mix(mix(b, keys[0]), keys[1]) + mix(u, k[4]), k[5]), k[6])
    cdf, out = 0.0, 0
    for j in range(12):  # Poisson(1) inverse CDF at (x + 1/2) / P, by its thresholds
        cdf += math.exp(-1) / math.factorial(j)
        out += x + 0.5 > P * cdf
    return out


def reference_summary(df: pl.DataFrame, seed: int, n_resamples: int, level: float, **options: Any) -> pl.DataFrame:
    """Loops over groups, resamples and users: the weighted means, their nanquantiles."""
    per_user = recframe.per_user(df, **options)
    metrics = [c for c in per_user.columns if "@" in c]
    counted = per_user.filter(pl.any_horizontal(pl.col(metrics).is_not_null()))
    number = {u: i + 1 for i, u in enumerate(sorted(set(counted["user_id"].to_list())))}
    keys = _poisson.seed_keys(seed)
    rows = []
    for (model,), group in counted.sort("model").group_by("model", maintain_order=True):
        users = group.rows(named=True)
        row: dict[str, Any] = {"model": model}
        for c in metrics:
            values = np.array([np.nan if r[c] is None else r[c] for r in users])
            means = []
            for b in range(n_resamples):
                total = weights = 0.0
                for r, x in zip(users, values):
                    if not np.isnan(x):
                        w = reference_weight(keys, b, number[r["user_id"]])
                        total, weights = total + w * x, weights + w
                means.append(total / weights if weights else np.nan)
            ok = (~np.isnan(values)).sum() >= 2
            lo, hi = np.nanquantile(means, [(1 - level) / 2, (1 + level) / 2]) if ok else (np.nan, np.nan)
            row.update({c: np.nanmean(values), f"{c}_std": stats.std(values), f"{c}_lo": lo, f"{c}_hi": hi})
        rows.append(row)
    return pl.DataFrame(rows).fill_nan(None)


def test_the_thresholds_are_the_poisson_inverse_cdf() -> None:
    with localcontext() as context:
        context.prec = 40
        cdf = [sum(Decimal(-1).exp() / math.factorial(j) for j in range(k + 1)) for k in range(13)]
    assert _poisson.THRESHOLDS == tuple(math.floor(P * f - Decimal("0.5")) + 1 for f in cdf[:12])
    assert P * (1 - cdf[12]) < 0.5  # no x < P reaches a 13th threshold: 12 is the whole tail
    assert all(_poisson.weight(_poisson.seed_keys(s), b, u) == reference_weight(_poisson.seed_keys(s), b, u)
               for s in (0, 1, 2**70) for b in (0, 1, 999) for u in (1, 2, 10**6))  # fmt: skip


def test_the_engine_is_the_slow_reference() -> None:
    """Every interval, std and mean of a small frame: a group with a skipped user, users shared
    by two groups (the same weight in both), a group of two users whose resamples can be all
    zero (left out of the quantiles), and a group of one (no interval)."""
    df = frame(INTEGERS[:6])
    two = pl.DataFrame({"model": "z", "user_id": [7, -3], "item_id": 0, "rank": 1, "relevance": [1, 2]})
    one = pl.DataFrame({"model": "w", "user_id": [5], "item_id": 0, "rank": 1, "relevance": [1]})
    df = pl.concat([df, two, one], how="vertical_relaxed")
    options = {"k": 3, "metrics": ["ndcg", "precision"], "by": "model"}
    got = recframe.summary(df, **options, ci=0.8, ci_method="poisson", seed=11, n_resamples=60)
    want = reference_summary(df, 11, 60, 0.8, **options)
    assert_frame_equal(got.select(want.columns), want, check_dtypes=False, rel_tol=1e-12, abs_tol=1e-12)
    assert got.filter(pl.col("model") == "w")["ndcg@3_lo"].item() is None
    # the two-user group: 60 resamples, e**-2 = 14% all zero, left out: still an interval
    assert got.filter(pl.col("model") == "z")["ndcg@3_lo"].item() is not None


# --- the same numbers everywhere -------------------------------------------------------------------


@pytest.mark.parametrize("ids", [STRINGS, INTEGERS], ids=["strings", "integers"])
# Ibis (the test-slow extra) runs in .ci/run's slow pass
@pytest.mark.parametrize(
    "backend", [name for name in BACKENDS if name != "polars"] + [pytest.param("ibis", marks=pytest.mark.slow_engine)]
)
def test_every_engine_gives_the_same_interval(backend: str, ids: list[Any]) -> None:
    df = frame(ids)
    want = recframe.summary(df, **OPTIONS, seed=5, n_resamples=100)
    if backend == "ibis":
        ibis = pytest.importorskip("ibis", reason="Ibis is not installed: pip install 'recframe[ibis]'")
        native = ibis.memtable(df.to_arrow())
    else:
        native = BACKENDS[backend](df)
    got = to_polars(recframe.summary(native, **OPTIONS, seed=5, n_resamples=100))
    assert_frame_equal(got, want, check_dtypes=False, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.slow_engine
@pytest.mark.parametrize("name", ["spark", "sqlframe"])
def test_spark_and_sqlframe_give_the_same_interval(name: str, request: pytest.FixtureRequest) -> None:
    df = frame(STRINGS)
    want = recframe.summary(df, **OPTIONS, seed=5, n_resamples=100)
    native = request.getfixturevalue(f"{name}_constructor")(df)
    got = to_polars(recframe.summary(native, **OPTIONS, seed=5, n_resamples=100))
    assert_frame_equal(got, want, check_dtypes=False, rel_tol=1e-12, abs_tol=1e-12)


def test_the_seed_reproduces_and_moves_the_interval() -> None:
    df = frame(INTEGERS)
    relation = BACKENDS["duckdb"](df) if "duckdb" in BACKENDS else df
    a = recframe.summary(df, **OPTIONS, seed=1, n_resamples=200)
    assert_frame_equal(
        to_polars(recframe.summary(relation, **OPTIONS, seed=1, n_resamples=200)), a, check_dtypes=False, rel_tol=1e-12
    )
    assert_frame_equal(recframe.summary(df, **OPTIONS, seed=1, n_resamples=200), a)  # bit for bit
    b = recframe.summary(df, **OPTIONS, seed=2, n_resamples=200)
    assert (a["ndcg@3_lo"] != b["ndcg@3_lo"]).any() and (a["ndcg@3_hi"] != b["ndcg@3_hi"]).any()
    # what the interval does not touch: the means, counts and std are summary's and "t"'s
    plain = recframe.summary(df, k=3, metrics=["ndcg", "precision"], by="model")
    assert_frame_equal(a.select(plain.columns), plain)
    np.testing.assert_allclose(
        a["ndcg@3_std"], recframe.summary(df, **{**OPTIONS, "ci_method": "bootstrap"})["ndcg@3_std"], rtol=1e-12
    )


# --- statistics ------------------------------------------------------------------------------------


def numpy_weights(seed: int, n_resamples: int, n_users: int) -> np.ndarray:
    """reference_weight for every resample (rows) and user 1..n_users (columns), in int64 numpy
    arithmetic (every product below 2**62)."""
    keys, k = _poisson.seed_keys(seed), _poisson.KEYS

    def mix(x: np.ndarray, key: int) -> np.ndarray:
        t = (x + key) % P
        s = t * t % P
        return s * s % P * t % P

    y = mix(mix(np.arange(n_resamples, dtype=np.int64), keys[0]), keys[1])
    z = mix(np.arange(1, n_users + 1, dtype=np.int64), k[4])
    x = mix(mix(y[:, None] + z[None, :], k[5]), k[6])
    return np.searchsorted(np.array(_poisson.THRESHOLDS), x, side="right")


def test_the_weights_are_poisson_one() -> None:
    w = numpy_weights(0, 500, 1000)  # 500,000 draws
    assert [w[b, u - 1] for b, u in [(0, 1), (7, 3), (499, 1000)]] == [
        reference_weight(_poisson.seed_keys(0), b, u) for b, u in [(0, 1), (7, 3), (499, 1000)]
    ]
    assert abs(w.mean() - 1) < 0.005 and abs(w.var() - 1) < 0.01  # standard errors 0.0014 and 0.002
    for k in range(6):
        assert abs((w == k).mean() - math.exp(-1) / math.factorial(k)) < 0.003
    # each resample's total weight is Poisson(n_users): variance n_users
    assert abs(w.sum(axis=1).var() / 1000 - 1) < 0.2  # 500 totals: standard error 0.06
    # no pattern between neighbouring users or resamples, or two seeds
    other = numpy_weights(1, 500, 1000)
    for a, b in [(w[:, 1:], w[:, :-1]), (w[1:], w[:-1]), (w, other)]:
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.006  # standard error 0.0014


def test_the_sample_interval_is_close_to_the_multinomial_bootstrap() -> None:
    """On the bundled sample (287 counted users per model) the Poisson interval's ends are
    within 0.005 of the multinomial bootstrap's at 1000 resamples (within 15% of the half-width;
    two seeds of the multinomial bootstrap differ by up to 0.007), and its width within 8%."""
    recs, truth = load_sample()
    options = {"truth": truth, "k": 10, "score": "score", "relevance": "rating", "threshold": 4, "by": "model",
               "metrics": ["ndcg", "recall", "precision", "ap", "rr"], "ci": 0.95, "seed": 0}  # fmt: skip
    poisson = recframe.summary(recs, **options, ci_method="poisson")
    multinomial = recframe.summary(recs, **options)
    for c in [c for c in poisson.columns if c.endswith("@10")]:
        half = (multinomial[f"{c}_hi"] - multinomial[f"{c}_lo"]) / 2
        for side in ("lo", "hi"):
            gap = (poisson[f"{c}_{side}"] - multinomial[f"{c}_{side}"]).abs()
            assert (gap < 0.005).all() and (gap < 0.15 * half).all(), (c, side, gap.to_list())
        width = (poisson[f"{c}_hi"] - poisson[f"{c}_lo"]) / (2 * half)
        assert ((width - 1).abs() < 0.08).all(), (c, width.to_list())


# --- what is refused, and the edges ----------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        {"n_resamples": 0},
        {"n_resamples": -1},
        {"n_resamples": True},
        {"n_resamples": 10**7},
        {"seed": -1},
        {"seed": "a"},
        {"ci": 1.5},
    ],
)
def test_bad_resampling_options_are_refused_as_for_the_bootstrap(extra: dict[str, Any]) -> None:
    df = frame(INTEGERS)
    with pytest.raises(recframe.RecframeError) as bootstrap:
        recframe.summary(df, **{**OPTIONS, "ci_method": "bootstrap", **extra})
    with pytest.raises(recframe.RecframeError) as poisson:
        recframe.summary(df, **{**OPTIONS, **extra})
    assert str(poisson.value) == str(bootstrap.value)


@pytest.mark.parametrize("backend", ["polars", "duckdb"])
def test_quantile_aggregates_are_refused(backend: str) -> None:
    if backend not in BACKENDS:
        pytest.skip("duckdb is not installed")
    with pytest.raises(
        recframe.RecframeError, match=r'ci_method="poisson" gives an interval of the mean.*Hint: pass ci_method="bootstrap"'
    ):
        recframe.summary(BACKENDS[backend](frame(INTEGERS)), **OPTIONS, aggregate=["mean", "p90"])


def test_no_counted_user_and_one_list() -> None:
    df = frame(INTEGERS).with_columns(pl.lit(0).alias("relevance"))  # nobody has a relevant item
    out = recframe.summary(df, **OPTIONS, seed=0)
    assert out["n_users"].to_list() == [0, 0] and out["ndcg@3_lo"].is_null().all()
    one = recframe.summary(frame(INTEGERS).filter(pl.col("user_id") == 7), **{**OPTIONS, "user": None}, seed=0)
    assert one["n_users"].to_list() == [1, 1] and one["ndcg@3_hi"].is_null().all()


def test_huge_values_are_refused_when_collected() -> None:
    df = frame(INTEGERS).with_columns(pl.col("relevance") * 400)  # exp2 gains of 2**400: squares past float64
    options = {**OPTIONS, "metrics": ["dcg"], "gain": "exp2", "threshold": 1, "seed": 0}
    lazy = recframe.summary(df.lazy(), **options)  # lazy stays lazy: refused at collect
    with pytest.raises(recframe.RecframeError, match='past what ci_method="poisson" sums exactly.*ci_method="bootstrap"'):
        lazy.collect()
    if "duckdb" in BACKENDS:
        with pytest.raises(recframe.RecframeError, match='ci_method="poisson"'):
            recframe.summary(BACKENDS["duckdb"](df), **options)


def test_curve_and_the_command_line_take_it(tmp_path: Any) -> None:
    df = frame(INTEGERS)
    curve = recframe.curve(df, metrics=["ndcg"], k_max=3, by="model", ci=0.9, ci_method="poisson", seed=4)
    at3 = recframe.summary(df, k=3, metrics=["ndcg"], by="model", ci=0.9, ci_method="poisson", seed=4)
    np.testing.assert_allclose(curve.filter(pl.col("k") == 3)["ndcg_lo"], at3["ndcg@3_lo"], rtol=1e-12)
    from recframe import cli

    path = tmp_path / "recs.parquet"
    df.write_parquet(path)
    out = tmp_path / "out.parquet"
    args = ["evaluate", str(path), "--k", "3", "--metrics", "ndcg", "--by", "model", "--ci", "0.9", "--ci-method", "poisson"]
    assert cli.main([*args, "--seed", "4", "--out", str(out), "--quiet"]) == 0
    np.testing.assert_allclose(pl.read_parquet(out)["ndcg@3_lo"], at3["ndcg@3_lo"], rtol=1e-12)
