"""recframe.off_policy against the group-by an expert would write by hand, on each engine, on the
same logs, in one run (issue 61's speed target).

    python bench/off_policy.py                        # 10M logged slots on Polars and DuckDB
    python bench/off_policy.py --rows 1000000         # another size (a comma list is fine)
    python bench/off_policy.py --cases column         # the target as a column only (no join)
    python bench/off_policy.py --engines polars --repeat 5
    python bench/off_policy.py --spark-rows 1000000   # also Spark local[2] at that size
    python bench/off_policy.py --unchecked            # also recframe with its data checks off

The logs: one logged slot per context (a single-slot bandit), an item of 20 drawn by a logging
policy that depends on the context's segment (5 segments), its propensity, a Bernoulli reward
and a reward model's prediction ``q`` for the logged item. Three target policies as rankings
(one item per context at rank 1; ``recommendations=`` with ``by="model"``): the reward model's
best item for the segment, its second best, and an item drawn uniformly; each with the
model's prediction for its item (``qe``, DR's direct term).

Two cases (--cases). "rankings": ``off_policy(logs, ["ips", "snips", "dr"],
recommendations=recs, by="model", position=None, predicted="q", target_predicted="qe")``, the
join inside the call. "column": the same three targets as a column (``target="target"``, their
probability of the logged item, 0 or 1) on the logs repeated per model (3 x rows rows, written
once, sorted by model and context), ``by="model"``: the estimators alone, no join. Every data
check on, the standard errors, intervals and diagnostics too. The anchor is the hand-written
query on the same engine and input (a Polars plan, DuckDB SQL, Spark SQL): the join of the
logs with the rankings on the context (rankings case), ``w = [item == ranked item] /
propensity`` (or ``target / propensity``), and per model ``mean(w r)``, ``sum(w r) / sum(w)``
and ``mean(qe + w (r - q))``; it checks nothing and computes no error bar. Both
results are compared to 1e-9 (relative) before any time is printed; a disagreement is printed
instead of the ratio. Target: recframe <= 1.3x the hand-written query on each engine.
``--unchecked`` also times recframe with its data checks switched off (a patch in this process
only, never an option of recframe): what the checks cost beside the estimates.

Data is written once per size into --dir as parquet and kept. Times are the best of --repeat
runs, in this process; Polars reads the parquet outside the timing (eager frames, as a user
holding the logs in memory), DuckDB and Spark inside it (they scan the files), for both sides
alike. Run on demand, never in the test suite: the machine's other load moves every figure, so
the load average is printed with them.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

ITEMS, SEGMENTS, TARGET = 20, 5, 1.3
MODELS = ("best", "second", "uniform")
ESTIMATORS = ("ips", "snips", "dr")
CALL = dict(by="model", position=None, predicted="q", target_predicted="qe")
#: case -> off_policy's target argument (and the input files)
CASES = {"rankings": "recommendations=recs", "column": 'target="target"'}

# ---------------------------------------------------------------------------- data


def write_data(folder: Path, rows: int, seed: int = 0) -> Path:
    """The logs and the three rankings of one size under folder/rows-N (reused when complete)."""
    import polars as pl

    root = folder / f"rows-{rows}"
    if (root / "done").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    mu = rng.uniform(0.02, 0.3, (SEGMENTS, ITEMS))  # the true click rate per (segment, item)
    q_hat = np.clip(mu + rng.normal(0, 0.03, mu.shape), 0.0, 1.0)  # a reward model's guess
    logits = rng.normal(0, 1, (SEGMENTS, ITEMS))
    p0 = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)  # the logging policy
    context = np.arange(rows, dtype=np.int64)
    segment = context % SEGMENTS
    # the logged item: the inverse of the segment's cumulative probabilities at a uniform draw
    cumulative = np.cumsum(p0, axis=1)
    cumulative[:, -1] = 1.0
    u = rng.random(rows)
    item = np.empty(rows, dtype=np.int64)
    for s in range(SEGMENTS):
        rows_s = segment == s
        item[rows_s] = np.searchsorted(cumulative[s], u[rows_s], side="right")
    reward = (rng.random(rows) < mu[segment, item]).astype(np.float64)
    pl.DataFrame(
        {"context_id": context, "item_id": item, "propensity": p0[segment, item], "reward": reward, "q": q_hat[segment, item]}
    ).write_parquet(root / "logs.parquet")
    order = np.argsort(-q_hat, axis=1)
    ranked = {"best": order[segment, 0], "second": order[segment, 1], "uniform": rng.integers(0, ITEMS, rows)}
    parts = [
        pl.DataFrame(
            {"context_id": context, "item_id": chosen, "rank": np.ones(rows, dtype=np.int64), "qe": q_hat[segment, chosen]}
        ).with_columns(pl.lit(model).alias("model"))
        for model, chosen in ranked.items()
    ]
    recs = pl.concat(parts).select("model", "context_id", "item_id", "rank", "qe")
    recs.write_parquet(root / "recs.parquet")
    # the "column" case: the same three targets as a column of their probability of the logged
    # item, the logs repeated per model (3 x rows rows)
    logs = pl.read_parquet(root / "logs.parquet")
    stacked = recs.join(logs, on="context_id", suffix="_logged").select(
        "model",
        "context_id",
        "propensity",
        "reward",
        "q",
        (pl.col("item_id") == pl.col("item_id_logged")).cast(pl.Float64).alias("target"),
        "qe",
    )
    stacked.sort("model", "context_id").write_parquet(root / "column.parquet")
    (root / "done").touch()
    return root


# ---------------------------------------------------------------------------- the queries

HAND_SQL = """
WITH j AS (
  SELECT r.model, l.reward, l.q, r.qe, CASE WHEN l.item_id = r.item_id THEN 1.0 ELSE 0.0 END / l.propensity AS w
  FROM {logs} l JOIN {recs} r ON l.context_id = r.context_id AND r.rank = 1
)
SELECT model, avg(w * reward) AS ips, sum(w * reward) / sum(w) AS snips, avg(qe + w * (reward - q)) AS dr
FROM j GROUP BY model ORDER BY model
"""
COLUMN_SQL = """
WITH j AS (SELECT model, reward, q, qe, target / propensity AS w FROM {column})
SELECT model, avg(w * reward) AS ips, sum(w * reward) / sum(w) AS snips, avg(qe + w * (reward - q)) AS dr
FROM j GROUP BY model ORDER BY model
"""


def hand_polars(logs: Any, recs: Any) -> dict[tuple[str, str], float]:
    """The hand-written Polars plan: join (rankings; `recs` None: the column case), weight, one group-by."""
    import polars as pl

    if recs is None:
        rows, w = logs.lazy(), pl.col("target") / pl.col("propensity")
    else:
        rows = logs.lazy().join(recs.lazy().filter(pl.col("rank") == 1), on="context_id")
        w = pl.when(pl.col("item_id") == pl.col("item_id_right")).then(1.0).otherwise(0.0) / pl.col("propensity")
    out = (
        rows.with_columns(w.alias("w"))
        .group_by("model")
        .agg(
            (pl.col("w") * pl.col("reward")).mean().alias("ips"),
            ((pl.col("w") * pl.col("reward")).sum() / pl.col("w").sum()).alias("snips"),
            (pl.col("qe") + pl.col("w") * (pl.col("reward") - pl.col("q"))).mean().alias("dr"),
        )
        .collect()
    )
    return {(row["model"], e): row[e] for row in out.iter_rows(named=True) for e in ESTIMATORS}


def _rows_of(out: Any) -> dict[tuple[str, str], float]:
    return {(row[0], row[1]): row[2] for row in out}


def _call(logs: Any, recs: Any) -> Any:
    """recframe's call: the target as rankings, or (`recs` None) as the column ``target``."""
    import recframe

    target = dict(target="target") if recs is None else dict(recommendations=recs)
    return recframe.off_policy(logs, list(ESTIMATORS), **target, **CALL)


def _polars(root: Path, case: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import polars as pl

    if case == "column":
        logs, recs = pl.read_parquet(root / "column.parquet"), None
    else:
        logs, recs = pl.read_parquet(root / "logs.parquet"), pl.read_parquet(root / "recs.parquet")

    def ours() -> dict[tuple[str, str], float]:
        return _rows_of(_call(logs, recs).select("model", "estimator", "value").rows())

    return ours, lambda: hand_polars(logs, recs)


def _duckdb(root: Path, case: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import duckdb

    con = duckdb.connect()
    path = {name: f"read_parquet('{root / name}.parquet')" for name in ("logs", "recs", "column")}

    def ours() -> dict[tuple[str, str], float]:
        if case == "column":
            out = _call(con.read_parquet(str(root / "column.parquet")), None)
        else:
            out = _call(con.read_parquet(str(root / "logs.parquet")), con.read_parquet(str(root / "recs.parquet")))
        return _rows_of(out.select("model", "estimator", "value").fetchall())

    def hand() -> dict[tuple[str, str], float]:
        sql = (
            COLUMN_SQL.format(column=path["column"])
            if case == "column"
            else HAND_SQL.format(logs=path["logs"], recs=path["recs"])
        )
        rows = con.sql(sql).fetchall()
        return {(model, e): value for model, *values in rows for e, value in zip(ESTIMATORS, values)}

    return ours, hand


def _spark(root: Path, case: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import _spark

    spark = _spark.session()

    def ours() -> dict[tuple[str, str], float]:
        if case == "column":
            out = _call(spark.read.parquet(str(root / "column.parquet")), None)
        else:
            out = _call(spark.read.parquet(str(root / "logs.parquet")), spark.read.parquet(str(root / "recs.parquet")))
        return _rows_of(tuple(row) for row in out.select("model", "estimator", "value").collect())

    def hand() -> dict[tuple[str, str], float]:
        for name in ("logs", "recs", "column"):
            spark.read.parquet(str(root / f"{name}.parquet")).createOrReplaceTempView(name)
        sql = COLUMN_SQL.format(column="column") if case == "column" else HAND_SQL.format(logs="logs", recs="recs")
        rows = spark.sql(sql).collect()
        return {(row["model"], e): row[e] for row in rows for e in ESTIMATORS}

    return ours, hand


ENGINES: dict[str, Callable[[Path, str], tuple[Callable[[], Any], Callable[[], Any]]]] = {
    "polars": _polars,
    "duckdb": _duckdb,
    "spark": _spark,
}


def unchecked() -> Callable[[], None]:
    """recframe.off_policy's data checks switched off in this process (its parts alone, to
    measure what the checks cost); returns the undo."""
    import importlib

    from recframe.statistics import _off_policy as op

    module = importlib.import_module("recframe.off_policy")
    checked = module._checked

    def parts_only(rows: Any, slots: Any, engine: Any, keys: list[str], names: Any, chosen: Any, settings: Any) -> Any:
        if chosen[0].per_row is not None:
            rows = op.slates(rows, keys, module._CONTEXT, module._POSITION, chosen)
        # held as the checked parts are (a SQL engine computes them once for the finish's reads)
        return engine.hold(op.parts_frame(rows, keys, op.parts_of(chosen), settings))

    module._checked = parts_only
    return lambda: setattr(module, "_checked", checked)


# ---------------------------------------------------------------------------- timing


def best_of(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of `repeat` runs, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def disagreement(ours: dict[tuple[str, str], float], hand: dict[tuple[str, str], float]) -> str | None:
    """Where the two results differ by more than 1e-9 (relative), or None."""
    if set(ours) != set(hand):
        return f"different rows: {sorted(set(ours) ^ set(hand))}"
    for key, value in sorted(hand.items()):
        if not math.isclose(ours[key], value, rel_tol=1e-9, abs_tol=1e-12):
            return f"{key}: recframe {ours[key]!r}, hand-written {value!r}"
    return None


def run_case(engine: str, case: str, root: Path, rows: int, repeat: int, checks_off: bool = False) -> tuple[str, ...]:
    """One engine and case at one size: checked equal, then timed; a table row (with
    `checks_off`, also recframe's time without its data checks and that ratio)."""
    ours, hand = ENGINES[engine](root, case)
    ours(), hand()  # warm-up: imports, plan caches, the file cache
    hand_s, hand_result = best_of(hand, repeat)
    ours_s, ours_result = best_of(ours, repeat)
    extra: tuple[str, ...] = ()
    if checks_off:
        undo = unchecked()
        try:
            bare_s, bare_result = best_of(ours, repeat)
        finally:
            undo()
        bare = disagreement(bare_result, hand_result)
        extra = (f"{bare_s:.3f}", f"DISAGREE {bare}" if bare else f"{bare_s / hand_s:.2f}x")
    problem = disagreement(ours_result, hand_result)
    if problem is not None:
        return (engine, case, f"{rows:,}", f"{ours_s:.3f}", f"{hand_s:.3f}", f"DISAGREE {problem}", "", *extra)
    ratio = ours_s / hand_s
    verdict = "PASS" if ratio <= TARGET else "MISS"
    return (engine, case, f"{rows:,}", f"{ours_s:.3f}", f"{hand_s:.3f}", f"{ratio:.2f}x", verdict, *extra)


def main() -> None:
    """Parse the options, write the data, run every engine and size, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000000", help="logged slots, a comma list (default 10M)")
    parser.add_argument(
        "--engines", default="polars,duckdb", help="some of polars, duckdb (default both; --spark-rows adds spark)"
    )
    parser.add_argument("--cases", default="rankings,column", help="rankings (recommendations=), column (target=)")
    parser.add_argument("--spark-rows", type=int, help="also run Spark local[2] at this size")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case, the best is kept (default 3)")
    parser.add_argument("--unchecked", action="store_true", help="also time recframe with its data checks off")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/recframe-bench-off-policy"), help="where the data is kept")
    args = parser.parse_args()
    sizes = [int(x) for x in args.rows.split(",")]
    chosen = args.cases.split(",")
    cases = [(engine, case, rows) for engine in args.engines.split(",") for rows in sizes for case in chosen]
    cases += [("spark", case, args.spark_rows) for case in chosen] if args.spark_rows else []
    print(f"cpu_count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    print(f"off_policy(logs, {list(ESTIMATORS)}, {' or '.join(CASES.values())} (3 models), {CALL}) vs a hand-written group-by")
    table = [("engine", "case", "rows", "recframe s", "hand s", "ratio", f"<= {TARGET}x")]
    table[0] += ("no checks s", "ratio") if args.unchecked else ()
    for engine, case, rows in cases:
        root = write_data(args.dir, rows)
        table.append(run_case(engine, case, root, rows, args.repeat, args.unchecked))
        print("  ".join(table[-1]), flush=True)
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    print()
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
