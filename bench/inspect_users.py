"""``recframe.inspect`` of a handful of users on a 10M-row parquet scan: only their rows are read.

    python bench/inspect_users.py                  # 10M rows (91k users x 110), 5 users
    python bench/inspect_users.py --rows 1000000   # quicker

The frame is bench/run.py's, written once as parquet parts (kept in --dir). Times, best of
--repeat, each over ``pl.scan_parquet``:

  read users   the floor: the same users' rows read by hand (scan, filter on the user, collect)
  given        inspect(scan, users=[5 ids], k=10): the chosen users' lists, with the data checks
  random       inspect(scan, select="random", n=5): reads the distinct users first, then theirs
  worst        inspect(scan, select="worst", n=5): one per_user pass of nDCG@10, then the filter
  summary      summary(scan, k=10): the whole pass, for context

The issue's claim (30): given or random users cost what reading those users costs; worst, best
and disagree one per_user pass. Before any time is printed, each given user's recommended rows
are checked to be that user's top 10 of the file, in rank order.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import polars as pl

import recframe

sys.path.insert(0, str(Path(__file__).parent))
from run import N_MISS, N_RECS, best_of, build  # noqa: E402

K = 10
PARTS = 10


def dataset(rows: int, folder: Path) -> Path:
    """bench/run.py's frame as PARTS parquet files (written once per size)."""
    users = max(1, rows // (N_RECS + N_MISS))
    where = folder / f"inspect_{users}"
    if not (where / f"part-{PARTS - 1}.parquet").exists():
        where.mkdir(parents=True, exist_ok=True)
        frame = build(users)
        per_part = -(-users // PARTS)
        for i in range(PARTS):
            frame.filter(pl.col("user_id") // per_part == i).write_parquet(where / f"part-{i}.parquet")
    return where


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "recframe-bench"))
    args = p.parse_args()
    where = dataset(args.rows, Path(args.dir))
    glob = str(where / "*.parquet")
    scan = pl.scan_parquet(glob)
    n_users = scan.select(pl.col("user_id").n_unique()).collect().item()
    ids = [int(u) for u in range(0, n_users, max(1, n_users // 5))][:5]
    print(f"polars {pl.__version__}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{scan.select(pl.len()).collect().item():,} rows, {n_users:,} users in {PARTS} parquet files; users {ids}")

    # the same numbers first: each given user's recommended rows are the file's top k in order
    shown = recframe.inspect(pl.scan_parquet(glob), k=K, users=ids, threshold=1).collect()
    by_hand = scan.filter(pl.col("user_id").is_in(ids) & (pl.col("rank") <= K)).sort("user_id", "rank").collect()
    recommended = shown.filter(pl.col("source") == "recommended").sort("user_id", "rank")
    assert recommended.select("user_id", "rank", "item_id").equals(by_hand.select("user_id", "rank", "item_id")), "inspect"
    hits = by_hand.filter(pl.col("relevance") >= 1).height
    assert recommended["relevant"].fill_null(False).sum() == hits, "hits"

    times = best_of(
        args.repeat,
        {
            "read users": lambda: pl.scan_parquet(glob).filter(pl.col("user_id").is_in(ids)).collect(),
            "given": lambda: recframe.inspect(pl.scan_parquet(glob), k=K, users=ids, threshold=1).collect(),
            "random": lambda: recframe.inspect(pl.scan_parquet(glob), k=K, select="random", n=5, threshold=1).collect(),
            "worst": lambda: recframe.inspect(pl.scan_parquet(glob), k=K, select="worst", n=5, threshold=1).collect(),
            "summary": lambda: recframe.summary(pl.scan_parquet(glob), k=K, threshold=1).collect(),
        },
    )
    floor = times["read users"]
    print(f"{'case':<12} {'seconds':>8} {'x read users':>13} {'x summary':>10}")
    for name, seconds in times.items():
        print(f"{name:<12} {seconds:8.3f} {seconds / floor:13.1f} {seconds / times['summary']:10.2f}")


if __name__ == "__main__":
    main()
