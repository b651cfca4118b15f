"""The cost of quantiles against the mean (issue 40): summary(aggregate="median") and a list of
aggregates against summary(aggregate="mean") on the same call, on bench/run.py's frame.

Each case is checked first (the median equals numpy's over the per-user frame), then timed,
best of --repeat, cases interleaved so that a drift of the machine hits them alike. Goal: a
median costs at most 1.5x a mean.

    python bench/distributions.py                 # 100k users, ~11M rows
    python bench/distributions.py --users 20000   # quick check
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from run import KS, METRICS, build

import recframe

CASES = {"mean": "mean", "median": "median", "mean+median+p10+p90": ["mean", "median", "p10", "p90"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frame = build(args.users)
    options = {"k": KS, "metrics": METRICS}
    # both sides give the same numbers first
    per_user = recframe.per_user(frame, **options)
    median = recframe.summary(frame, aggregate="median", **options)
    for column in ("ndcg@10", "ap@20"):
        want = float(np.quantile(per_user[column].drop_nulls().to_numpy(), 0.5))
        assert abs(median[column].item() - want) <= 1e-12, (column, median[column].item(), want)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.repeat):
        for name, aggregate in CASES.items():
            start = time.perf_counter()
            recframe.summary(frame, aggregate=aggregate, **options)
            times[name].append(time.perf_counter() - start)
    best = {name: min(values) for name, values in times.items()}
    print(f"{frame.height:,} rows, {args.users:,} users, {len(METRICS)} metrics x k={KS}; best of {args.repeat}")
    for name, seconds in best.items():
        print(f"  {name:<22} {seconds:7.3f} s   {seconds / best['mean']:5.2f}x the mean")
    ratio = best["median"] / best["mean"]
    print(f"median / mean = {ratio:.2f} (goal <= 1.5: {'PASS' if ratio <= 1.5 else 'MISS'})")


if __name__ == "__main__":
    main()
