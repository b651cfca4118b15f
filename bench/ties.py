"""The cost of ties="average" (issue 42): summary(ties="average") against the default tie-break
(item ascending) on the same call, on bench/run.py's frame scored instead of ranked.

Two scorings: distinct scores (no tie: both policies must give the same numbers, checked
first) and scores rounded to ten levels (heavy ties: the tie groups are large). Each is timed
best of --repeat, the cases interleaved. Goal: average costs at most 1.5x the default.

    python bench/ties.py                 # 100k users, ~11M rows
    python bench/ties.py --users 20000   # quick check
    python bench/ties.py --engine duckdb # the same frames as DuckDB tables (in memory)
"""

from __future__ import annotations

import argparse
from typing import Any

import polars as pl
from run import KS, best_of, build

import recframe

# the metrics ties="average" has a closed form for (AP and RR are refused under it)
METRICS = ["precision", "recall", "hit_rate", "ndcg"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", choices=["polars", "duckdb"], default="polars")
    args = parser.parse_args()
    ranked = build(args.users)
    # a score falling with the rank: distinct within each list, or rounded to 10 levels (ties)
    distinct = ranked.with_columns(score=1.0 / pl.col("rank").cast(pl.Float64)).drop("rank")
    tied = ranked.with_columns(score=(10.0 - pl.col("rank") // 3).cast(pl.Float64)).drop("rank")
    if args.engine == "duckdb":
        distinct, tied = in_duckdb(distinct), in_duckdb(tied)
    options = {"k": KS, "metrics": METRICS, "score": "score"}
    # without ties, both policies give the same numbers
    plain, averaged = (as_polars(recframe.summary(distinct, ties=t, **options)) for t in ("item_asc", "average"))
    for column in plain.columns:
        assert abs(plain[column].item() - averaged[column].item()) <= 1e-12, column
    cases = {
        "distinct, item_asc": lambda: as_polars(recframe.summary(distinct, **options)),
        "distinct, average": lambda: as_polars(recframe.summary(distinct, ties="average", **options)),
        "tied, item_asc": lambda: as_polars(recframe.summary(tied, **options)),
        "tied, average": lambda: as_polars(recframe.summary(tied, ties="average", **options)),
    }
    best = best_of(args.repeat, cases)
    print(f"{args.engine}: {ranked.height:,} rows, {args.users:,} users, {len(METRICS)} metrics x k={KS}; best of {args.repeat}")
    for name, seconds in best.items():
        print(f"  {name:<20} {seconds:7.3f} s")
    for scores in ("distinct", "tied"):
        ratio = best[f"{scores}, average"] / best[f"{scores}, item_asc"]
        print(f"{scores}: average / item_asc = {ratio:.2f} (goal <= 1.5: {'PASS' if ratio <= 1.5 else 'MISS'})")


def as_polars(result: Any) -> pl.DataFrame:
    """A summary as a Polars frame (a DuckDB relation runs its query here)."""
    return result if isinstance(result, pl.DataFrame) else pl.from_arrow(result.to_arrow_table())


def in_duckdb(frame: pl.DataFrame) -> Any:
    """`frame` as a table of an in-memory DuckDB connection (the summary is collected in each
    timed call: DuckDB's relations are lazy)."""
    import duckdb

    connection = duckdb.connect()
    connection.register("frame_arrow", frame.to_arrow())
    connection.execute("CREATE TABLE frame AS SELECT * FROM frame_arrow")
    return connection.table("frame")


if __name__ == "__main__":
    main()
