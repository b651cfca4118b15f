"""recframe.off_policy(per_context=True) and recframe.compare over it (issue 61 item 4): two
target rankings compared on the same logged contexts with a paired test. Each context's value
of an estimator averages to its estimate (by hand, against a slow reference, for slates too);
the paired t test's mean difference is the difference of the two estimates."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import BACKENDS, assert_values_close, run_cli, to_polars
from recframe.errors import RecframeError
from recframe.statistics import _off_policy as op

ALL = ["ips", "snips", "clipped_ips", "dm", "dr", "sndr", "switch_dr"]
SETTINGS = dict(max_weight=3.0, switch_threshold=2.0)

# four logged rows: w = target / propensity = 2, 0, 2, 2 (test_off_policy's)
LOGS = pl.DataFrame(
    {
        "context_id": [1, 2, 3, 4],
        "propensity": [0.5, 0.25, 0.5, 0.25],
        "reward": [1.0, 0.0, 0.0, 1.0],
        "target": [1.0, 0.0, 1.0, 0.5],
    }
)


def test_per_context_values_by_hand() -> None:
    got = recframe.off_policy(LOGS, ["ips", "snips"], target="target", position=None, per_context=True)
    assert got.columns == ["context_id", "ips", "snips"]
    assert got.get_column("ips").to_list() == [2.0, 0.0, 0.0, 2.0]
    # SNIPS = 2/3, wbar = 6/4: its value plus psi = w (r - 2/3) / 1.5 per context
    d = 2 / 3
    assert got.get_column("snips").to_list() == pytest.approx(
        [d + 2 * (1 - d) / 1.5, d, d + 2 * (0 - d) / 1.5, d + 2 * (1 - d) / 1.5]
    )
    estimates = recframe.off_policy(LOGS, ["ips", "snips"], target="target", position=None)
    assert got.select(pl.col("ips", "snips").mean()).row(0) == pytest.approx(tuple(estimates.get_column("value")))


# -- two or more target rankings on the same logs --

MODELS = ("A", "B", "C")


def _logs_and_recs(seed: int, n: int, models: tuple[str, ...] = MODELS) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`n` single-slot logged contexts (4 items) and each model's item at rank 1 of every context
    (the logged one half of the time), with its predicted reward qe there."""
    rng = np.random.default_rng(seed)
    shown = rng.integers(0, 4, n)
    logs = pl.DataFrame(
        {
            "context_id": np.arange(n),
            "item_id": shown,
            "position": np.ones(n, dtype=np.int64),
            "propensity": rng.uniform(0.1, 1.0, n),
            "reward": rng.integers(0, 2, n).astype(float),
            "q": rng.random(n),
        }
    )
    recs = pl.concat(
        pl.DataFrame(
            {
                "model": [m] * n,
                "context_id": np.arange(n),
                "item_id": np.where(rng.random(n) < 0.5, shown, rng.integers(0, 4, n)),
                "rank": np.ones(n, dtype=np.int64),
                "qe": rng.random(n),
            }
        )
        for m in models
    )
    return logs, recs


def _reference_per_context(logs: pl.DataFrame, recs: pl.DataFrame, model: str) -> dict[str, list[float]]:
    """Each context's value of each estimator under `model`, in plain Python loops."""
    mine = {row["context_id"]: row for row in recs.filter(pl.col("model") == model).iter_rows(named=True)}
    rows = list(logs.sort("context_id").iter_rows(named=True))
    w = [float(mine[r["context_id"]]["item_id"] == r["item_id"]) / r["propensity"] for r in rows]
    r_, q = [r["reward"] for r in rows], [r["q"] for r in rows]
    qe = [mine[r["context_id"]]["qe"] for r in rows]
    n = len(rows)
    out: dict[str, list[float]] = {
        "ips": [wi * ri for wi, ri in zip(w, r_)],
        "clipped_ips": [min(wi, SETTINGS["max_weight"]) * ri for wi, ri in zip(w, r_)],
        "dm": qe,
        "dr": [e + wi * (ri - qi) for e, wi, ri, qi in zip(qe, w, r_, q)],
        "switch_dr": [e + (wi if wi <= SETTINGS["switch_threshold"] else 0.0) * (ri - qi) for e, wi, ri, qi in zip(qe, w, r_, q)],
    }
    wbar = sum(w) / n
    for name, direct in (("snips", False), ("sndr", True)):
        d = [ri - qi if direct else ri for ri, qi in zip(r_, q)]
        big_d = sum(wi * di for wi, di in zip(w, d)) / sum(w)
        out[name] = [(e if direct else 0.0) + big_d + wi * (di - big_d) / wbar for e, wi, di in zip(qe, w, d)]
    return out


def _per_context(logs: Any, recs: Any) -> Any:
    return recframe.off_policy(
        logs, ALL, recommendations=recs, predicted="q", target_predicted="qe", by="model", per_context=True, **SETTINGS
    )


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_per_context_values_agree_with_the_reference(backend: str) -> None:
    logs, recs = _logs_and_recs(3, 40)
    got = to_polars(_per_context(BACKENDS[backend](logs), BACKENDS[backend](recs)))
    assert got.columns == ["model", "context_id", "position", *ALL]
    for model in MODELS:
        mine = got.filter(pl.col("model") == model)
        assert mine.get_column("context_id").to_list() == list(range(40))
        for name, want in _reference_per_context(logs, recs, model).items():
            assert_values_close(mine.get_column(name).to_list(), want, rel=1e-12, abs=1e-12, label=f"{model} {name}")


def test_the_means_per_context_are_the_estimates_and_snips_se_is_the_delta_methods() -> None:
    logs, recs = _logs_and_recs(4, 50)
    per = _per_context(logs, recs)
    est = recframe.off_policy(logs, ALL, recommendations=recs, predicted="q", target_predicted="qe", by="model", **SETTINGS)
    for row in est.iter_rows(named=True):
        values = per.filter(pl.col("model") == row["model"]).get_column(row["estimator"]).to_numpy()
        assert values.mean() == pytest.approx(row["value"], rel=1e-12, abs=1e-12)
        # the se of a mean of (influence) values is the estimator's own se
        assert values.std(ddof=1) / math.sqrt(values.size) == pytest.approx(row["se"], rel=1e-9)


def test_slate_values_per_context_average_to_the_estimates() -> None:
    rng = np.random.default_rng(5)
    slates, positions = 20, 3
    logs = pl.DataFrame(
        {
            "context_id": np.repeat(np.arange(slates), positions),
            "position": np.tile(np.arange(1, positions + 1), slates),
            "propensity": rng.uniform(0.1, 1, slates * positions),
            "reward": rng.integers(0, 2, slates * positions).astype(float),
            "target": np.where(rng.random(slates * positions) < 0.2, 0.0, rng.random(slates * positions)),
        }
    )
    per = recframe.off_policy(logs, ["sips", "iips", "rips"], target="target", per_context=True)
    assert per.columns == ["context_id", "sips", "iips", "rips"] and per.height == slates
    est = recframe.off_policy(logs, ["sips", "iips", "rips"], target="target")
    assert per.select(pl.col("sips", "iips", "rips").mean()).row(0) == pytest.approx(tuple(est.get_column("value")), rel=1e-12)
    # slate 0 by hand: IIPS sums w_k r_k over its positions
    first = logs.filter(pl.col("context_id") == 0)
    iips = sum(t / p * r for t, p, r in first.select("target", "propensity", "reward").iter_rows())
    assert per.item(0, "iips") == pytest.approx(iips, rel=1e-12)


def test_compare_against_a_baseline_gives_the_difference_of_the_estimates() -> None:
    """The paired t test over contexts: delta = model's estimate - baseline's; its p-value that of
    scipy's paired t test on the reference values."""
    scipy_stats = pytest.importorskip("scipy.stats")
    logs, recs = _logs_and_recs(6, 60)
    per = _per_context(logs, recs)
    est = recframe.off_policy(logs, ALL, recommendations=recs, predicted="q", target_predicted="qe", by="model", **SETTINGS)
    value = {(r["model"], r["estimator"]): r["value"] for r in est.iter_rows(named=True)}
    out = recframe.compare(per, by="model", baseline="A", user="context_id", metrics=ALL, test="paired_t")
    assert out.height == 2 * len(ALL)
    base = _reference_per_context(logs, recs, "A")
    for row in out.iter_rows(named=True):
        m, name = row["model"], row["metric"]
        assert row["n_pairs"] == 60
        assert row["delta"] == pytest.approx(value[(m, name)] - value[("A", name)], rel=1e-12, abs=1e-12)
        want = scipy_stats.ttest_rel(_reference_per_context(logs, recs, m)[name], base[name]).pvalue
        assert row["p_value"] == pytest.approx(want, rel=1e-9), (m, name)


@pytest.mark.parametrize("test", ["paired_t", "wilcoxon", "randomization", "tukey_hsd"])
def test_every_pair_with_every_test(test: str) -> None:
    logs, recs = _logs_and_recs(7, 30)
    per = _per_context(logs, recs)
    est = recframe.off_policy(logs, ["ips", "dr"], recommendations=recs, predicted="q", target_predicted="qe", by="model")
    value = {(r["model"], r["estimator"]): r["value"] for r in est.iter_rows(named=True)}
    out = recframe.compare(per, by="model", user="context_id", metrics=["ips", "dr"], test=test, seed=1, n_resamples=200)
    assert out.select("model_a", "model_b").unique(maintain_order=True).rows() == [("A", "B"), ("A", "C"), ("B", "C")]
    for row in out.iter_rows(named=True):
        assert row["n_pairs"] == 30
        assert row["delta"] == pytest.approx(value[(row["model_a"], row["metric"])] - value[(row["model_b"], row["metric"])])
        assert 0 <= row["p_value"] <= 1


def test_compare_inside_duckdb_equals_polars() -> None:
    duckdb = pytest.importorskip("duckdb")
    logs, recs = _logs_and_recs(8, 30)
    local = recframe.compare(_per_context(logs, recs), by="model", baseline="A", user="context_id", metrics=ALL)
    per = _per_context(duckdb.from_arrow(logs.to_arrow()), duckdb.from_arrow(recs.to_arrow()))
    inside = recframe.compare(per, by="model", baseline="A", user="context_id", metrics=ALL)
    for column in ("delta", "p_value", "delta_lo", "delta_hi"):
        assert_values_close(to_polars(inside)[column].to_list(), local[column].to_list(), rel=1e-9, abs=1e-12, label=column)


def test_a_log_with_positions_keeps_them_per_row() -> None:
    logs = pl.DataFrame(
        {"context_id": [1, 1, 2], "position": [1, 2, 1], "propensity": [0.5, 0.5, 0.25], "reward": [1.0, 0.0, 1.0],
         "target": [1.0, 0.5, 0.5]}
    )  # fmt: skip
    got = recframe.off_policy(logs, ["ips"], target="target", per_context=True)
    assert got.rows() == [(1, 1, 2.0), (1, 2, 0.0), (2, 1, 2.0)]


def test_a_by_key_named_as_the_context_is_refused() -> None:
    with pytest.raises(RecframeError, match=r"by=.*'context_id'"):
        recframe.off_policy(LOGS, ["ips"], target="target", position=None, by="context_id", per_context=True)


def test_an_estimator_without_a_value_per_context_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    ips = op.ESTIMATORS["ips"]
    renamed = dataclasses.replace(ips, parts=tuple(dataclasses.replace(p, name=p.name + "_x") for p in ips.parts[1:]))
    monkeypatch.setitem(op.ESTIMATORS, "ips", dataclasses.replace(renamed, parts=(op.N, *renamed.parts)))
    with pytest.raises(RecframeError, match=r"'ips' is no mean of a value per context"):
        recframe.off_policy(LOGS, ["ips"], target="target", position=None, per_context=True)


def test_the_command_line_writes_the_values_per_context(tmp_path: Path) -> None:
    path = tmp_path / "logs.csv"
    LOGS.write_csv(path)
    args = ("--target", "target", "--no-position", "--estimators", "ips,snips", "--per-context", "--format", "csv")
    code, out, err = run_cli("off-policy", path, *args)
    assert code == 0 and err == "", err
    table = pl.read_csv(out.encode())
    assert table.columns == ["context_id", "ips", "snips"]
    assert table["ips"].to_list() == [2.0, 0.0, 0.0, 2.0]


@pytest.mark.slow_engine
@pytest.mark.parametrize("engine", ["spark", "sqlframe", "ibis"])
def test_slow_engines_give_the_same_values_per_context(engine: str, request: pytest.FixtureRequest) -> None:
    from conftest import ibis_table

    make = ibis_table if engine == "ibis" else request.getfixturevalue(f"{engine}_constructor")
    logs, recs = _logs_and_recs(9, 20)
    got = to_polars(_per_context(make(logs), make(recs))).sort("model", "context_id")
    want = _per_context(logs, recs)
    for name in ALL:
        assert_values_close(got[name].to_list(), want[name].to_list(), rel=1e-12, abs=1e-12, label=name)
