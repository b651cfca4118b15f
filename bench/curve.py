"""Time ``recframe.curve`` (one plan for every k) against ``summary`` called once per k.

    python bench/curve.py [--k-max 50] [--repeat 3] [--rows 1000000]

Two data sets: the bundled sample (two models, 300 users, top-10 lists joined with their
truth) and a synthetic frame of about ``--rows`` rows (``bench/run.py``'s builder: 100
recommendations and 10 unrecommended relevant items per user). Each case is timed ``--repeat``
times, alternating, and the best run is kept; the ratio printed is per-k summaries / curve.
Both give the same numbers (checked before timing).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import polars as pl

import recframe
from recframe.data import load_sample

sys.path.insert(0, str(Path(__file__).parent))
from run import N_MISS, N_RECS, best_of, build  # noqa: E402


def per_k(frame: pl.DataFrame, k_max: int, metrics: list[str], **kw: object) -> list[pl.DataFrame]:
    return [recframe.summary(frame, k=k, metrics=metrics, **kw) for k in range(1, k_max + 1)]


def check(curve: pl.DataFrame, wide: list[pl.DataFrame], metrics: list[str], keys: list[str]) -> None:
    for k, summary in enumerate(wide, start=1):
        long = curve.filter(pl.col("k") == k).sort(keys) if keys else curve.filter(pl.col("k") == k)
        for m in metrics:
            np.testing.assert_allclose(long[m].to_numpy(), summary[f"{m}@{k}"].to_numpy(), rtol=1e-12)


def run_case(label: str, frame: pl.DataFrame, k_max: int, repeat: int, **kw: object) -> None:
    metrics = ["precision", "recall", "ndcg", "ap", "rr"]
    keys = [kw["by"]] if kw.get("by") else []
    check(recframe.curve(frame, metrics, k_max, **kw), per_k(frame, k_max, metrics, **kw), metrics, keys)
    times = best_of(repeat, {
        "curve": lambda: recframe.curve(frame, metrics, k_max, **kw),
        "summary per k": lambda: per_k(frame, k_max, metrics, **kw),
    })  # fmt: skip
    print(f"{label}: {frame.height:,} rows, k = 1..{k_max}, metrics {metrics}")
    print(f"  curve (one plan)       {times['curve']:8.3f} s")
    print(f"  summary once per k     {times['summary per k']:8.3f} s")
    print(f"  ratio per-k / curve    {times['summary per k'] / times['curve']:8.1f}x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--k-max", type=int, default=50)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rows", type=int, default=1_000_000)
    args = p.parse_args()
    print(f"polars {pl.__version__}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    recs, truth = load_sample()
    run_case("bundled sample", recs, args.k_max, args.repeat, truth=truth, score="score", relevance="rating",
             threshold=4, by="model")  # fmt: skip
    users = max(1, args.rows // (N_RECS + N_MISS))
    run_case("synthetic", build(users), args.k_max, args.repeat, threshold=1)


if __name__ == "__main__":
    main()
