"""recframe.off_policy(ci_method="poisson") (issue 61 item 3): intervals from the Poisson
bootstrap over contexts, in the engine, with the summary's generator, seed and n_resamples.
Against a slow reference built from the generator in Python, coverage on a simulated log with a
known true value, the same on Polars and DuckDB for a seed, and bad options refused by name."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import BACKENDS, assert_values_close, to_polars
from recframe.errors import RecframeError
from recframe.statistics import _poisson
from test_off_policy import _bandit, _simulated_logs

DIRECT = dict(target="target", predicted="q", target_predicted="qe")


def _logs(seed: int, n: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    target = rng.random(n)
    target[rng.random(n) < 0.3] = 0.0
    return pl.DataFrame(
        {
            "g": rng.integers(0, 2, n),
            "context_id": rng.permutation(n) * 3,
            "propensity": rng.uniform(0.05, 1.0, n),
            "reward": rng.random(n).round(1),
            "target": target,
            "q": rng.random(n),
            "qe": rng.random(n),
        }
    )


def _reference_bounds(
    logs: pl.DataFrame, seed: int, n_resamples: int, level: float
) -> dict[tuple[int, str], tuple[float, float]]:
    """Each group's IPS and SNIPS over the resamples: context number u (its dense rank among all
    contexts of the call) weighs _poisson.weight(keys, b, u) in resample b; numpy's percentiles."""
    keys = _poisson.seed_keys(seed)
    number = {c: i + 1 for i, c in enumerate(sorted(set(logs["context_id"].to_list())))}
    out = {}
    for g in sorted(set(logs["g"].to_list())):
        rows = logs.filter(pl.col("g") == g)
        w = (rows["target"] / rows["propensity"]).to_numpy()
        r = rows["reward"].to_numpy()
        weights = np.array([[_poisson.weight(keys, b, number[c]) for c in rows["context_id"]] for b in range(n_resamples)], float)
        with np.errstate(invalid="ignore", divide="ignore"):
            ips = (weights * w * r).sum(axis=1) / weights.sum(axis=1)
            snips = (weights * w * r).sum(axis=1) / (weights * w).sum(axis=1)
        for name, values in (("ips", ips), ("snips", snips)):
            values = values[np.isfinite(values)]
            bounds = np.quantile(values, [(1 - level) / 2, (1 + level) / 2]) if rows.height >= 2 else [None, None]
            out[(g, name)] = tuple(None if b is None else float(b) for b in bounds)
    return out


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_against_a_reference_from_the_generator(backend: str) -> None:
    logs = _logs(2, 25)
    got = to_polars(
        recframe.off_policy(BACKENDS[backend](logs), ["ips", "snips"], target="target", position=None, by="g",
                            ci=0.9, ci_method="poisson", n_resamples=60, seed=11)
    )  # fmt: skip
    normal = recframe.off_policy(logs, ["ips", "snips"], target="target", position=None, by="g", ci=0.9)
    want = _reference_bounds(logs, 11, 60, 0.9)
    assert got.select("g", "estimator").rows() == normal.select("g", "estimator").rows()
    for row, plain in zip(got.iter_rows(named=True), normal.iter_rows(named=True)):
        lo, hi = want[(row["g"], row["estimator"])]
        assert_values_close([row["lo"], row["hi"]], [lo, hi], rel=1e-12, abs=1e-12, label=str(row))
        # the value, se and diagnostics are the normal call's
        assert_values_close([row["value"], row["se"], row["ess"]], [plain["value"], plain["se"], plain["ess"]], rel=1e-12)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another() -> None:
    logs = _logs(3, 30)

    def bounds(seed: Any) -> list[tuple[Any, ...]]:
        out = recframe.off_policy(logs, ["ips", "dr", "sndr"], **DIRECT, position=None, by="g", ci_method="poisson",
                                  n_resamples=100, seed=seed)  # fmt: skip
        return out.select("lo", "hi").rows()

    assert bounds(5) == bounds(5)
    assert bounds(5) != bounds(6)


def test_slates_are_resampled_whole() -> None:
    rng = np.random.default_rng(4)
    slates, positions = 12, 3
    logs = pl.DataFrame(
        {
            "context_id": np.repeat(np.arange(slates), positions),
            "position": np.tile(np.arange(1, positions + 1), slates),
            "propensity": rng.uniform(0.1, 1, slates * positions),
            "reward": rng.integers(0, 2, slates * positions).astype(float),
            "target": rng.random(slates * positions),
        }
    )
    got = recframe.off_policy(logs, ["iips"], target="target", ci_method="poisson", n_resamples=50, seed=1)
    keys = _poisson.seed_keys(1)
    per_slate = (
        logs.group_by("context_id").agg((pl.col("target") / pl.col("propensity") * pl.col("reward")).sum()).sort("context_id")
    )
    v = per_slate.get_column("target").to_numpy()
    weights = np.array([[_poisson.weight(keys, b, u + 1) for u in range(slates)] for b in range(50)], float)
    means = (weights * v).sum(axis=1) / weights.sum(axis=1)
    assert (got.item(0, "lo"), got.item(0, "hi")) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=1e-12)


def test_one_context_has_no_interval() -> None:
    logs = _logs(1, 1)
    got = recframe.off_policy(logs, ["ips"], target="target", position=None, ci_method="poisson", seed=1)
    assert (got.item(0, "lo"), got.item(0, "hi")) == (None, None)


def test_intervals_cover_the_true_value_on_a_simulated_log() -> None:
    """100 logs of 150 rounds with a known true value: the bootstrap intervals of IPS, SNIPS and
    DR cover it at about their nominal 90% (within three binomial standard errors)."""
    seeds, truth = 100, _bandit()[3]
    out = recframe.off_policy(_simulated_logs(seeds, 150), ["ips", "snips", "dr"], **DIRECT, position=None, by="seed",
                              ci=0.9, ci_method="poisson", n_resamples=200, seed=0)  # fmt: skip
    for name in ("ips", "snips", "dr"):
        rows = out.filter(pl.col("estimator") == name)
        covered = ((rows["lo"] <= truth) & (truth <= rows["hi"])).mean()
        assert abs(covered - 0.9) <= 3 * math.sqrt(0.9 * 0.1 / seeds), (name, covered)
        # about as wide as the normal interval
        width = (rows["hi"] - rows["lo"]).mean() / (2 * 1.6449 * rows["se"].mean())
        assert 0.8 < width < 1.2, (name, width)


def test_polars_and_duckdb_give_the_same_interval() -> None:
    duckdb = pytest.importorskip("duckdb")
    logs = _logs(5, 40)
    kwargs: dict[str, Any] = dict(**DIRECT, position=None, by="g", ci_method="poisson", n_resamples=80, seed=2024)
    local = recframe.off_policy(logs, ["ips", "snips", "dr", "sndr"], **kwargs)
    inside = to_polars(recframe.off_policy(duckdb.from_arrow(logs.to_arrow()), ["ips", "snips", "dr", "sndr"], **kwargs))
    assert inside.select("g", "estimator").rows() == local.select("g", "estimator").rows()
    for column in ("lo", "hi", "value"):
        assert_values_close(inside[column].to_list(), local[column].to_list(), rel=1e-12, abs=1e-12, label=column)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(ci_method="bootstrap"), r"ci_method"),
        (dict(ci_method="poisson", n_resamples=0), r"n_resamples"),
        (dict(ci_method="poisson", seed=-1), r"seed"),
        (dict(ci_method="poisson", ci=1.5), r"ci=1.5"),
    ],
)
def test_bad_options_are_refused_by_name(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(RecframeError, match=match):
        recframe.off_policy(_logs(1, 5), ["ips"], target="target", position=None, **kwargs)


@pytest.mark.slow_engine
# (SQLFrame runs narwhals' Spark backend, checked here on Spark: it took 70 to 110 s more, as it
# copies the whole plan at each step; test_off_policy runs SQLFrame's own SQL once)
@pytest.mark.parametrize("engine", ["spark", "ibis"])
def test_slow_engines_give_the_same_interval(engine: str, request: pytest.FixtureRequest) -> None:
    from conftest import ibis_table

    make = ibis_table if engine == "ibis" else request.getfixturevalue(f"{engine}_constructor")
    logs = _logs(6, 20)
    kwargs: dict[str, Any] = dict(**DIRECT, position=None, by="g", ci_method="poisson", n_resamples=30, seed=7)
    local = recframe.off_policy(logs, ["ips", "sndr"], **kwargs)
    inside = to_polars(recframe.off_policy(make(logs), ["ips", "sndr"], **kwargs))
    assert inside.select("g", "estimator").rows() == local.select("g", "estimator").rows()
    for column in ("lo", "hi"):
        assert_values_close(inside[column].to_list(), local[column].to_list(), rel=1e-12, abs=1e-12, label=column)


@pytest.mark.parametrize("backend", ["polars", "lazy", "duckdb"])
def test_a_null_group_key_is_refused_not_left_without_an_interval(backend: str) -> None:
    logs = _logs(3, 20).with_columns(pl.when(pl.col("context_id") == 0).then(None).otherwise(pl.col("g")).alias("g"))
    frame = {"polars": logs, "lazy": logs.lazy(), "duckdb": BACKENDS["duckdb"](logs)}[backend]
    with pytest.raises(RecframeError, match="column 'g' .* has 1 null value"):
        to_polars(recframe.off_policy(frame, ["ips"], **DIRECT, position=None, by="g", ci_method="poisson", n_resamples=20))


def test_per_context_with_an_interval_is_refused() -> None:
    with pytest.raises(RecframeError, match="per_context=True gives each context's values"):
        recframe.off_policy(_logs(3, 20), ["ips"], **DIRECT, position=None, per_context=True, ci_method="poisson")
