"""Scale benchmark: parquet exports evaluated out of core (Polars streaming), in DuckDB and on Spark.

    python bench/scale.py                    # Polars: 10M rows in memory vs 100M rows streamed
    python bench/scale.py --engine duckdb    # DuckDB over the same parquet glob (10M, 100M)
    python bench/scale.py --engine spark     # local Spark (local[2]): 1M and 10M rows
    python bench/scale.py --rows 1000000000  # a billion rows streamed, against a tenth of them

The export is 1M users x 100 recommendations (ranks 1..100, ratings 0-5, 60% unknown), written
once as parquet parts of 10k users (1M rows) into --dir (default: a folder in the system temp dir, kept
for the next run). Every measurement runs in a fresh Python process, started by another
(bench/footprint.py), so that its peak RSS is its own. The call measured is the same everywhere:
``summary(frame, k=[5, 10, 20, 50], metrics=["precision", "recall", "ndcg", "ap", "rr"], threshold=1)``.

Targets (issue 3): streaming 100M rows peaks under 6 GiB of RSS, and takes at most 1.5x ten
times the 10M-row in-memory run (linear scaling).

With ``--rows N`` (issue 24: a billion rows on one machine) the export of N rows is written in
parts of 1M rows (data generation is not timed), then the default summary,
``summary(frame, k=10, threshold=1)`` with every default check, is streamed from the whole
export and from a tenth of it, each in a fresh process. Targets: peak RSS under 4 GiB, and the
whole at most 11x the tenth.

**--shape split / scored** (issue 43: the warehouse layout, a recommendations export and a truth
export): the export is written as two folders, the recommendations (user, item, rank, score:
100 per user) and the truth (user, item, relevance: the known ratings of 20 recommended items
and 10 items never recommended, per user), then ``summary(recs, truth=truth, k=10,
threshold=1)`` is streamed, ranked by the given ``rank`` (split) or by ``score=`` (scored),
from a tenth of the parts and from all of them, each in a fresh process (with ``--engine
duckdb``: the same call on ``duckdb.read_parquet``, under ``SET memory_limit='4GB'`` and a
temp directory). It prints time and peak RSS for both sizes, so that the growth shows.

    python bench/scale.py --shape split --users 1000000    # 13M and 130M rows (recs + truth)

**--partitions N** (Polars, with ``--rows`` or ``--shape``): the same call with
``summary(..., partitions=N)``, the users in N sets one after another, which bounds memory
(docs/engines.md: a billion rows in 1.1-2.7 GiB at 32 sets).

    python bench/scale.py --shape split --users 7700000 --partitions 32   # 1B rows (recs + truth)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
from pathlib import Path

from footprint import own_process

USERS_PER_PART = 10_000  # 1M rows per part: the Spark runs read 1 and 10 parts
PER_USER = 100
CALL = 'k=[5, 10, 20, 50], metrics=["precision", "recall", "ndcg", "ap", "rr"], threshold=1'


def write_export(folder: Path, n_users: int) -> list[Path]:
    """Parquet parts of USERS_PER_PART users each; reused when already there."""
    import numpy as np
    import polars as pl

    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for i, first in enumerate(range(0, n_users, USERS_PER_PART)):
        path = folder / f"part-{i:04d}.parquet"
        parts.append(path)
        if path.exists():
            continue
        n = min(USERS_PER_PART, n_users - first)
        rng = np.random.default_rng(i)
        user = np.repeat(np.arange(first, first + n, dtype=np.int64), PER_USER)
        rank = np.tile(np.arange(1, PER_USER + 1, dtype=np.int32), n)
        rating = rng.integers(0, 6, n * PER_USER).astype(np.float64)
        rating[rng.random(n * PER_USER) < 0.6] = np.nan  # unknown
        pl.DataFrame(
            {
                "user_id": user,
                "item_id": user * 1000 + np.tile(rng.permutation(PER_USER), n),  # distinct within a list
                "rank": rank,
                "relevance": rating,
            }
        ).with_columns(pl.col("relevance").fill_nan(None)).write_parquet(path)
    return parts


#: per user in the split exports: the truth rows among the recommendations, and never recommended
SPLIT_KNOWN, SPLIT_UNSEEN = 20, 10


def write_split_export(folder: Path, n_users: int) -> tuple[list[Path], list[Path]]:
    """The split layout in parts of USERS_PER_PART users: recs/ (user_id, item_id, rank, score)
    and truth/ (user_id, item_id, relevance); reused when already there."""
    import numpy as np
    import polars as pl

    recs_dir, truth_dir = folder / "recs", folder / "truth"
    recs_dir.mkdir(parents=True, exist_ok=True)
    truth_dir.mkdir(parents=True, exist_ok=True)
    recs_parts, truth_parts = [], []
    for i, first in enumerate(range(0, n_users, USERS_PER_PART)):
        recs_path, truth_path = recs_dir / f"part-{i:04d}.parquet", truth_dir / f"part-{i:04d}.parquet"
        recs_parts.append(recs_path)
        truth_parts.append(truth_path)
        if recs_path.exists() and truth_path.exists():
            continue
        n = min(USERS_PER_PART, n_users - first)
        rng = np.random.default_rng(10_000 + i)
        users = np.arange(first, first + n, dtype=np.int64)
        user = np.repeat(users, PER_USER)
        item = user * 1000 + np.tile(rng.permutation(PER_USER), n)  # distinct within a list
        rank = np.tile(np.arange(1, PER_USER + 1, dtype=np.int32), n)
        score = (PER_USER - rank) + rng.random(n * PER_USER).round(3)  # decreasing with the rank
        pl.DataFrame({"user_id": user, "item_id": item, "rank": rank, "score": score}).write_parquet(recs_path)
        # the known ratings: SPLIT_KNOWN recommended items and SPLIT_UNSEEN others, per user
        known = rng.random((n, PER_USER)).argsort(axis=1)[:, :SPLIT_KNOWN]
        known_items = item.reshape(n, PER_USER)[np.arange(n)[:, None], known].ravel()
        unseen_items = np.repeat(users, SPLIT_UNSEEN) * 1000 + np.tile(np.arange(PER_USER, PER_USER + SPLIT_UNSEEN), n)
        truth_user = np.concatenate([np.repeat(users, SPLIT_KNOWN), np.repeat(users, SPLIT_UNSEEN)])
        truth_item = np.concatenate([known_items, unseen_items])
        relevance = rng.integers(0, 6, truth_user.size).astype(np.float64)
        pl.DataFrame({"user_id": truth_user, "item_id": truth_item, "relevance": relevance}).write_parquet(truth_path)
    return recs_parts, truth_parts


def split_runs(recs_parts: list[Path], truth_parts: list[Path], engine: str, scored: bool, partitions: int | None) -> None:
    """The split call streamed (Polars) or run under a memory limit (DuckDB) over a tenth of the
    parts and over all of them, each in a fresh process (``partitions=``: in that many sets of users)."""
    ranking = ', score="score"' if scored else ""
    call = f'k=10, threshold=1, relevance="relevance"{ranking}{_partitioned(partitions)}'
    per_user = PER_USER + SPLIT_KNOWN + SPLIT_UNSEEN
    for share in (0.1, 1.0):
        count = max(1, int(len(recs_parts) * share))
        recs, truth = [str(p) for p in recs_parts[:count]], [str(p) for p in truth_parts[:count]]
        if engine == "duckdb":
            spill = Path(tempfile.mkdtemp(prefix="recframe-spill-"))
            code = f"""
                import time, duckdb, recframe
                con = duckdb.connect()
                con.execute("SET memory_limit='4GB'"); con.execute("SET temp_directory='{spill}'")
                start = time.perf_counter()
                recs = con.read_parquet({recs!r})
                if {scored!r}:
                    recs = recs.project("user_id, item_id, score")
                out = recframe.summary(recs, truth=con.read_parquet({truth!r}), {call}).pl()
                seconds = time.perf_counter() - start
            """
        else:
            code = f"""
                import time, polars as pl, recframe
                start = time.perf_counter()
                recs = pl.scan_parquet({recs!r})
                if {scored!r}:
                    recs = recs.select("user_id", "item_id", "score")
                out = recframe.summary(recs, truth=pl.scan_parquet({truth!r}), {call}).collect(engine="streaming")
                seconds = time.perf_counter() - start
            """
        r = measure(code)
        rows = count * USERS_PER_PART * per_user
        shape = ("scored" if scored else "split") + _partitioned(partitions)
        print(f"{engine} {shape} {rows:>15,} rows (recs + truth): {r['seconds']:8.1f} s, peak RSS {r['peak_mib'] / 1024:.2f} GiB")


def _partitioned(partitions: int | None) -> str:
    """The summary's partitions= argument, as the call's text."""
    return f", partitions={partitions}" if partitions else ""


def measure(code: str) -> dict[str, float]:
    """Run `code` (which sets `seconds`) as its own process (bench/footprint.py: not forked from
    this one, whose peak it would inherit); return seconds and peak RSS."""
    script = textwrap.dedent(code) + textwrap.dedent("""
        import json
        print(json.dumps({"seconds": seconds}))
    """)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.txt"
        _, peak = own_process([sys.executable, "-c", script], out)
        result = json.loads(out.read_text().strip().splitlines()[-1])
    return {**result, "peak_mib": peak}


def polars_runs(parts: list[Path]) -> None:
    # a tenth of the parts (at least one: an export of fewer than 10 parts reads one)
    tenth = [str(p) for p in parts[: max(1, len(parts) // 10)]]
    share = len(tenth) / len(parts)
    glob = str(parts[0].parent / "*.parquet")
    in_memory = measure(f"""
        import time, polars as pl, recframe
        start = time.perf_counter()
        out = recframe.summary(pl.read_parquet({tenth!r}), {CALL})
        seconds = time.perf_counter() - start  # reading included, as in the streaming runs
    """)
    rows = {"in_memory": share, "streaming": 1.0, "streaming_no_dup_check": 1.0}
    results = {"in_memory": in_memory}
    for name, extra in (("streaming", ""), ("streaming_no_dup_check", ", check_duplicates=False")):
        results[name] = measure(f"""
            import time, polars as pl, recframe
            start = time.perf_counter()
            out = recframe.summary(pl.scan_parquet({glob!r}), {CALL}{extra}).collect(engine="streaming")
            seconds = time.perf_counter() - start
        """)
    n_total = len(parts) * USERS_PER_PART * PER_USER
    print(f"{'run':<34}{'rows':>14}{'seconds':>10}{'peak RSS':>12}")
    for name, r in results.items():
        print(f"{name:<34}{int(n_total * rows[name]):>14,}{r['seconds']:>10.2f}{r['peak_mib']:>9.0f} MiB")
    budget = in_memory["seconds"] / share * 1.5
    for name in ("streaming", "streaming_no_dup_check"):
        r = results[name]
        print(
            f"{name}: time {r['seconds']:.1f} s vs 1.5 x {1 / share:.0f} x in-memory = {budget:.1f} s "
            f"({'PASS' if r['seconds'] <= budget else 'MISS'}); "
            f"peak {r['peak_mib'] / 1024:.2f} GiB vs 6 GiB ({'PASS' if r['peak_mib'] <= 6 * 1024 else 'MISS'})"
        )
    print(
        "Streaming runs end to end (no fallback of the scan to the in-memory engine). Three nodes keep\n"
        "state: the per-list distinct counts of the duplicate check (a set of items and of ranks per list,\n"
        "so memory grows with rows: check_duplicates=False drops them), the two windows over the relevant\n"
        "rows (AP's running hit count, the ideal-DCG order), and the data check, which reads the per-user\n"
        "table (one row per user) in memory."
    )


def duckdb_runs(parts: list[Path]) -> None:
    for share in (0.1, 1.0):
        files = [str(p) for p in parts[: max(1, int(len(parts) * share))]]
        r = measure(f"""
            import time, duckdb, recframe
            start = time.perf_counter()
            relation = duckdb.read_parquet({files!r})
            out = recframe.summary(relation, {CALL}).pl()
            seconds = time.perf_counter() - start
        """)
        rows = len(files) * USERS_PER_PART * PER_USER
        print(
            f"duckdb {rows:>13,} rows: {r['seconds']:.2f} s, {r['seconds'] / rows * 1e6:.3f} s per million rows, peak {r['peak_mib']:.0f} MiB"
        )


def spark_runs(parts: list[Path]) -> None:
    for rows_wanted in (1_000_000, 10_000_000):
        files = [str(p) for p in parts[: max(1, rows_wanted // (USERS_PER_PART * PER_USER))]]
        rows = len(files) * USERS_PER_PART * PER_USER
        r = measure(f"""
            import time, warnings
            warnings.simplefilter("ignore")
            from pyspark.sql import SparkSession
            import recframe
            spark = (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "4")
                     .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g").getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            spark.range(1).collect()  # session start-up is not part of the timing
            frame = spark.read.parquet(*{files!r})
            start = time.perf_counter()
            out = recframe.summary(frame, {CALL}).collect()
            seconds = time.perf_counter() - start
        """)
        print(
            f"spark local[2] {rows:>11,} rows: {r['seconds']:.2f} s, {r['seconds'] / rows * 1e6:.2f} s per million rows (session start not included)"
        )


DEFAULT_CALL = "k=10, threshold=1"  # the default summary, every default check


def rows_runs(parts: list[Path], partitions: int | None) -> None:
    """The default summary streamed from all parts and from a tenth of them (issue 24's targets;
    ``partitions=``: in that many sets of users)."""
    results = {}
    for share in (0.1, 1.0):
        files = [str(p) for p in parts[: max(1, int(len(parts) * share))]]
        results[share] = measure(f"""
            import time, polars as pl, recframe
            start = time.perf_counter()
            out = recframe.summary(pl.scan_parquet({files!r}), {DEFAULT_CALL}{_partitioned(partitions)}).collect(engine="streaming")
            seconds = time.perf_counter() - start
        """)
        rows = len(files) * USERS_PER_PART * PER_USER
        r = results[share]
        print(f"streamed {rows:>15,} rows: {r['seconds']:8.1f} s, peak RSS {r['peak_mib'] / 1024:.2f} GiB")
    whole, tenth = results[1.0], results[0.1]
    ratio = whole["seconds"] / tenth["seconds"]
    print(f"time: {ratio:.1f}x the tenth (<= 11: {'PASS' if ratio <= 11 else 'MISS'})")
    print(f"peak RSS: {whole['peak_mib'] / 1024:.2f} GiB (< 4: {'PASS' if whole['peak_mib'] < 4096 else 'MISS'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", choices=["polars", "duckdb", "spark"], default="polars")
    parser.add_argument("--users", type=int, default=1_000_000, help="users in the export (x100 rows)")
    parser.add_argument("--rows", type=int, help="stream the default summary over this many rows and a tenth of them")
    parser.add_argument(
        "--shape", choices=["long", "split", "scored"], default="long", help="split: recs + truth=; scored: ranked by score="
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "recframe-scale",
        help="where the parquet export is written and kept",
    )
    parser.add_argument("--partitions", type=int, help="summary(partitions=N): the users in N sets, one after another (Polars)")
    args = parser.parse_args()
    if args.partitions and args.engine != "polars":
        raise SystemExit("--partitions runs on Polars (summary(partitions=) refuses the SQL engines)")
    if args.partitions and not (args.rows or args.shape != "long"):
        raise SystemExit("--partitions goes with --rows N or --shape split / scored")
    if args.rows:
        args.users = args.rows // PER_USER
    if args.shape != "long":
        if args.engine == "spark":
            raise SystemExit("--shape split / scored runs on Polars and DuckDB")
        recs_parts, truth_parts = write_split_export(args.dir / f"split-{args.users}", args.users)
        print(f"split export: {len(recs_parts)} parts of recommendations and of truth, in {recs_parts[0].parent.parent}")
        split_runs(recs_parts, truth_parts, args.engine, args.shape == "scored", args.partitions)
        return
    parts = write_export(args.dir / f"users-{args.users}", args.users)
    print(f"export: {len(parts)} parquet parts, {args.users * PER_USER:,} rows, in {parts[0].parent}")
    if args.rows:
        rows_runs(parts, args.partitions)
        return
    {"polars": polars_runs, "duckdb": duckdb_runs, "spark": spark_runs}[args.engine](parts)


if __name__ == "__main__":
    main()
