"""recframe against each engine's own floor, on the same parquet data, in one run.

    python bench/engines.py                          # every engine at 1M and 10M rows
    python bench/engines.py --rows 1000000           # one size (a comma list is fine)
    python bench/engines.py --engines duckdb,spark   # some engines only
    python bench/engines.py --streaming-rows 100000000   # also the 100M-row streaming target
    python bench/engines.py --markdown               # the tables as markdown, for the README

Data (written once per size into --dir and kept): bench/run.py's shape, 100 recommendations
and 20 relevant items per user (10 of them recommended, 10 never recommended), so 110 rows per
user in the long frame. Three inputs per size, all parquet:

  long      user_id, item_id, rank, relevance (null rank: relevant, not recommended)
  split     recs (user_id, item_id, score: 100 rows per user) + truth (user_id, item_id,
            rating: 20 rows per user): the ``truth=`` + ``score=`` path
  models    model, user_id, item_id, rank, relevance: 3 models, the same number of rows

For every engine the script measures, each in a fresh process (so the peak RSS is the case's
own): the engine's **floor** (read the columns of the long input, group by user, one sum),
then ``recframe.summary`` on each input, with every default check on:
``k=[5, 10, 20], metrics=["precision", "recall", "ndcg", "ap", "rr"]``, ``by="model"`` for the
models input. Times are the best of --repeat runs inside that process; reading the parquet is
inside the timing for the lazy engines (Polars scan, DuckDB, Spark), outside for the eager ones
(Polars eager, pandas), in the floor and in recframe alike. Spark runs local[2] with 2 shuffle
partitions; its session start is not timed, and its peak RSS is the Python driver's only (the
JVM's memory is not counted). Every case's result is checked against Polars eager to 1e-9.

Targets (issue 12), printed PASS/MISS at the end: Polars eager <= 3x its floor; Polars scan
<= 1.3x the eager run; DuckDB <= 4x its floor; Spark <= 5x its floor; the split (truth= +
score=) path <= 1.5x the long path on each engine; pandas <= 1.3x Polars; 100M rows streamed
< 4 GiB peak RSS and <= 1.2x ten times the 10M streaming run.

Run on demand, never in the test suite: the machine's other load moves every figure, so the
load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from run import N_MISS, build  # the same frame as bench/run.py
from run import N_RECS as PER_USER

ROWS_PER_PART = 1_000_000
MODELS = ("als", "itemknn", "popular")
CALL = 'k=[5, 10, 20], metrics=["precision", "recall", "ndcg", "ap", "rr"]'
CASES = {  # case -> extra summary arguments
    "long": "",
    "split": ', truth=truth, score="score", relevance="rating"',
    "models": ', by="model"',
}
ENGINES = ("polars", "polars-scan", "polars-streaming", "pandas", "duckdb", "spark")
TARGETS = {
    "polars/floor": 3.0,
    "duckdb/floor": 4.0,
    "spark/floor": 5.0,
    "scan/eager": 1.3,
    "split/long": 1.5,
    "pandas/polars": 1.3,
}


# ---------------------------------------------------------------------------- data


def write_data(folder: Path, rows: int) -> Path:
    """The three inputs of one size under folder/rows-N (reused when complete)."""
    import polars as pl

    root = folder / f"rows-{rows}"
    if (root / "done").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    for name in ("long", "recs", "truth", "models"):
        (root / name).mkdir(parents=True)
    width = PER_USER + N_MISS
    users = max(1, rows // width)
    per_part = max(1, ROWS_PER_PART // width)

    def long_part(first: int, n: int, seed: int) -> pl.DataFrame:
        # bench/run.py's frame, its users numbered from `first`
        return build(n, seed=seed).with_columns(pl.col("user_id") + first)

    for i, first in enumerate(range(0, users, per_part)):
        base = long_part(first, min(per_part, users - first), seed=i)
        base.write_parquet(root / "long" / f"part-{i:04d}.parquet")
        # scores: distinct and falling with the position, so score= gives back the same ranks
        base.filter(pl.col("rank").is_not_null()).select(
            "user_id", "item_id", (1000.0 - pl.col("rank")).alias("score")
        ).write_parquet(root / "recs" / f"part-{i:04d}.parquet")
        base.filter(pl.col("relevance").is_not_null()).select(
            "user_id", "item_id", pl.col("relevance").alias("rating")
        ).write_parquet(root / "truth" / f"part-{i:04d}.parquet")
    # the models input: as many rows, split over three models (a third of the users each)
    model_users = max(1, users // len(MODELS))
    for m, model in enumerate(MODELS):
        for i, first in enumerate(range(0, model_users, per_part)):
            part = long_part(first, min(per_part, model_users - first), seed=1000 * (m + 1) + i)
            part.select(pl.lit(model).alias("model"), *part.columns).write_parquet(root / "models" / f"part-{m}-{i:04d}.parquet")
    (root / "done").touch()
    return root


# ---------------------------------------------------------------------------- measuring

# Each engine: how to load an input ("{path}" is a parquet folder) and the floor's query.
# `load` runs outside the timing for eager engines; for lazy ones it only describes the scan.
LOADERS = {
    "polars": ("import polars as pl", "pl.read_parquet('{path}/*.parquet')", "lambda f: f"),
    "polars-scan": ("import polars as pl", "pl.scan_parquet('{path}/*.parquet')", "lambda f: f.collect(engine='in-memory')"),
    "polars-streaming": ("import polars as pl", "pl.scan_parquet('{path}/*.parquet')", "lambda f: f.collect(engine='streaming')"),
    "pandas": ("import pandas as pd", "pd.read_parquet('{path}')", "lambda f: f"),
    "duckdb": ("import duckdb", "duckdb.read_parquet('{path}/*.parquet')", "lambda f: f.fetch_arrow_table()"),
    "spark": (
        "from _spark import session; spark = session()",
        "spark.read.parquet('{path}')",
        "lambda f: f.collect()",
    ),
}
FLOORS = {
    "polars": "lambda f: f.lazy().select('user_id', 'relevance').group_by('user_id').agg(pl.col('relevance').sum()).collect()",
    "polars-scan": "lambda f: f.select('user_id', 'relevance').group_by('user_id').agg(pl.col('relevance').sum()).collect(engine='in-memory')",
    "polars-streaming": "lambda f: f.select('user_id', 'relevance').group_by('user_id').agg(pl.col('relevance').sum()).collect(engine='streaming')",
    "pandas": "lambda f: f[['user_id', 'relevance']].groupby('user_id')['relevance'].sum()",
    "duckdb": "lambda f: f.aggregate('user_id, sum(relevance)', 'user_id').fetch_arrow_table()",
    "spark": "lambda f: f.groupBy('user_id').agg({'relevance': 'sum'}).collect()",
}

CHILD = """
import gc, json, sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {bench!r})
{imports}
import polars as pl
import recframe

def kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))

finish = {finish}
{setup}
times = []
for _ in range({repeat}):
    gc.collect()
    start = time.perf_counter()
    out = run()
    times.append(time.perf_counter() - start)
result = None
if {want_result}:
    if isinstance(out, list):  # Spark rows
        out = pl.DataFrame([r.asDict() for r in out])
    elif hasattr(out, "iloc"):  # pandas
        out = pl.from_pandas(out)
    elif not isinstance(out, pl.DataFrame):  # Arrow
        out = pl.from_arrow(out)
    result = out.sort(out.columns[0]).to_dict(as_series=False)
print(json.dumps({{"seconds": min(times), "peak_mib": kib("VmHWM") / 1024, "result": result}}))
"""


def measure(engine: str, root: Path, case: str | None, repeat: int) -> dict:
    """Time one case (None: the floor) of one engine in a fresh interpreter."""
    imports, load, finish = LOADERS[engine]
    if case is None:
        setup = f"frame = {load.format(path=root / 'long')}\nfloor = {FLOORS[engine]}\nrun = lambda: floor(frame)"
    else:
        data = "models" if case == "models" else "recs" if case == "split" else "long"
        setup = f"frame = {load.format(path=root / data)}\n"
        if case == "split":
            setup += f"truth = {load.format(path=root / 'truth')}\n"
        setup += f"run = lambda: finish(recframe.summary(frame, {CALL}{CASES[case]}))"
    code = CHILD.format(
        bench=str(Path(__file__).parent),
        imports=imports,
        finish=finish,
        setup=setup,
        repeat=repeat,
        want_result=case is not None,
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def spark_missing() -> str | None:
    """Why Spark cannot run here, or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'recframe[spark]')"
    if shutil.which("java") is None:
        return "Spark needs Java 17 or later on PATH; none was found"
    return None


def agree(a: dict, b: dict) -> str | None:
    """None when two summary results agree to 1e-9, else what differs."""
    if list(a) != list(b):
        return f"columns {list(b)} vs {list(a)}"
    for column, values in a.items():
        other = b[column]
        if len(values) != len(other):
            return f"{column}: {len(other)} rows vs {len(values)}"
        for x, y in zip(values, other):
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or abs(x - y) > 1e-9:
                    return f"{column}: {y} vs {x}"
            elif x != y:
                return f"{column}: {y!r} vs {x!r}"
    return None


# ---------------------------------------------------------------------------- report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1000000,10000000", help="comma-separated sizes (default 1M and 10M)")
    parser.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated subset of {','.join(ENGINES)}")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per case; the best is kept")
    parser.add_argument("--streaming-rows", type=int, default=0, help="also stream this many rows (e.g. 100000000)")
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "recframe-engines",
        help="where the parquet data is written and kept",
    )
    parser.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    args = parser.parse_args()
    sizes = [int(s) for s in args.rows.split(",") if s]
    engines = [e for e in args.engines.split(",") if e]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s) {unknown}; choose from {', '.join(ENGINES)}")
    skipped = {}
    if "spark" in engines and (why := spark_missing()):
        skipped["spark"] = why
        engines.remove("spark")

    import narwhals
    import polars as pl

    import recframe

    print(
        f"recframe {recframe.__version__}, polars {pl.__version__}, narwhals {narwhals.__version__}, "
        f"cpu_count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} at start"
    )
    figures: dict = {}
    reference: dict = {}
    rows_out = []
    for rows in sizes:
        root = write_data(args.dir, rows)
        for engine in engines:
            floor = measure(engine, root, None, args.repeat)
            entry = figures.setdefault(engine, {}).setdefault(rows, {"floor": floor})
            for case in CASES:
                r = measure(engine, root, case, args.repeat)
                entry[case] = r
                if "result" in r:
                    ref = reference.setdefault((rows, case), r["result"])
                    if (diff := agree(ref, r["result"])) is not None:
                        r["error"] = f"result differs from {engines[0]}: {diff}"
            for name, r in [("floor", floor), *((c, entry[c]) for c in CASES)]:
                if "error" in r:
                    rows_out.append((engine, rows, name, None, None, None, r["error"]))
                else:
                    ratio = r["seconds"] / floor["seconds"] if "seconds" in floor else None
                    rows_out.append((engine, rows, name, r["seconds"], ratio, r["peak_mib"], ""))
    if args.streaming_rows:
        root = write_data(args.dir, args.streaming_rows)
        big = measure("polars-streaming", root, "long", 1)
        figures.setdefault("polars-streaming", {})[args.streaming_rows] = {"long": big}
        rows_out.append(
            ("polars-streaming", args.streaming_rows, "long", big.get("seconds"), None, big.get("peak_mib"), big.get("error", ""))
        )

    header = ("engine", "rows", "case", "seconds", "x floor", "peak RSS MiB", "note")
    if args.markdown:
        print("\n| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    else:
        print(f"\n{header[0]:<18}{header[1]:>13}  {header[2]:<8}{header[3]:>9}{header[4]:>9}{header[5]:>14}  {header[6]}")
    for engine, rows, case, seconds, ratio, peak, note in rows_out:
        s = f"{seconds:.3f}" if seconds is not None else "-"
        x = f"{ratio:.1f}" if ratio is not None else "-"
        p = f"{peak:,.0f}" if peak is not None else "-"
        if engine == "spark" and peak is not None:
            p += " (driver)"
        if args.markdown:
            print(f"| {engine} | {rows:,} | {case} | {s} | {x} | {p} | {note} |")
        else:
            print(f"{engine:<18}{rows:>13,}  {case:<8}{s:>9}{x:>9}{p:>14}  {note}")
    for engine, why in skipped.items():
        print(f"{engine}: skipped, {why}")

    def seconds(engine: str, rows: int, case: str) -> float | None:
        return figures.get(engine, {}).get(rows, {}).get(case, {}).get("seconds")

    checks = []
    for rows in sizes:
        for engine, target in (("polars", "polars/floor"), ("duckdb", "duckdb/floor"), ("spark", "spark/floor")):
            for case in CASES:
                a, b = seconds(engine, rows, case), seconds(engine, rows, "floor")
                if a and b:
                    checks.append((f"{engine} {case} / floor", rows, a / b, TARGETS[target]))
        for engine in ("polars-scan", "polars-streaming"):
            a, b = seconds(engine, rows, "long"), seconds("polars", rows, "long")
            if a and b:
                checks.append((f"{engine} / polars eager (long)", rows, a / b, TARGETS["scan/eager"]))
        for engine in engines:
            a, b = seconds(engine, rows, "split"), seconds(engine, rows, "long")
            if a and b:
                checks.append((f"{engine} split / long", rows, a / b, TARGETS["split/long"]))
        a, b = seconds("pandas", rows, "long"), seconds("polars", rows, "long")
        if a and b:
            checks.append(("pandas / polars (long)", rows, a / b, TARGETS["pandas/polars"]))
    print("\ntargets")
    for name, rows, value, target in checks:
        print(f"  {name:<38}{rows:>13,}  {value:6.2f}  <= {target:<4}  {'PASS' if value <= target else 'MISS'}")
    if args.streaming_rows:
        big = figures["polars-streaming"][args.streaming_rows]["long"]
        ten = max(sizes)
        small = seconds("polars-streaming", ten, "long")
        if "seconds" in big:
            print(
                f"  streaming {args.streaming_rows:,} rows: peak {big['peak_mib'] / 1024:.2f} GiB (< 4: "
                f"{'PASS' if big['peak_mib'] < 4096 else 'MISS'})",
                end="",
            )
            if small:
                budget = 1.2 * small * args.streaming_rows / ten
                print(
                    f"; {big['seconds']:.1f} s vs 1.2 x {args.streaming_rows // ten} x {ten:,}-row run = "
                    f"{budget:.1f} s ({'PASS' if big['seconds'] <= budget else 'MISS'})"
                )
            else:
                print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "figures": {e: {str(r): v for r, v in d.items()} for e, d in figures.items()},
                    "targets": TARGETS,
                    "skipped": skipped,
                },
                f,
                indent=2,
                default=str,
            )


if __name__ == "__main__":
    main()
