"""Benchmark the randomized Tukey HSD family against the pairwise randomization tests.

A per-user frame of MODELS models x --users users x METRICS metrics (values in [0, 1], a user
effect shared by every model, the models a little apart, some exact ties). It times, in one run:

  tukey        recframe.compare(per_user, test="tukey_hsd", n_resamples=N): every pair of every
               metric, with its interval, d_z and wins/ties/losses
  pairwise     stats.randomization_test on each of the 10 pairs of each metric, N resamples each
               (today's test, the test alone: no interval, no effect size)

Both are checked first: p-values within [1 / (N + 1), 1], the pair with the largest true gap
significant, the pair with no gap not; and each Tukey p-value at least its pair's randomization
p-value less the Monte Carlo error (the range over five models is at least one pair's gap). The
peak memory of one Tukey test (tracemalloc) is measured at N / 10 and N resamples: the chunks
keep it flat. Then it prints the ratio pairwise / tukey; the goal is >= 1 (the whole family
costs no more than those 10 pairwise tests).

Run on demand (never part of the test suite):

    python bench/all_pairs.py                       # 10,000 users, 10,000 resamples: a few minutes
    python bench/all_pairs.py --users 2000 --resamples 2000   # quick check
    python bench/all_pairs.py --json out.json       # also write the figures
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import sys
import time
import tracemalloc

import numpy as np
import polars as pl

import recframe
from recframe import stats

MODELS = ["m1", "m2", "m3", "m4", "m5"]
GAPS = [0.0, 0.0, 0.01, 0.02, 0.05]  # m1 and m2 do not differ; m1 and m5 differ most
METRICS = ["ndcg@10", "recall@10", "precision@10", "ap@10", "rr@10"]


def build(users: int, seed: int = 0) -> pl.DataFrame:
    """One row per (model, user): a user level shared by the models, the model's gap, noise."""
    rng = np.random.default_rng(seed)
    level = rng.random((users, len(METRICS))) * 0.6
    columns = {}
    for j, metric in enumerate(METRICS):
        values = level[None, :, j] + np.array(GAPS)[:, None] + rng.normal(0, 0.15, (len(MODELS), users))
        values = np.clip(values, 0.0, 1.0)
        if metric.startswith("precision"):  # a metric of few values: exact ties between models
            values = np.round(values * 10) / 10
        columns[metric] = values.ravel()
    return pl.DataFrame(
        {
            "model": np.repeat(MODELS, users),
            "user_id": np.tile(np.arange(users), len(MODELS)),
            "n_relevant": 1,
            **columns,
        }
    )


def matrices(per_user: pl.DataFrame) -> dict[str, np.ndarray]:
    """Each metric as a (users x models) matrix, models in MODELS order."""
    out = {}
    for metric in METRICS:
        wide = per_user.pivot(on="model", index="user_id", values=metric).sort("user_id")
        out[metric] = wide.select(MODELS).to_numpy()
    return out


def tukey(per_user: pl.DataFrame, n_resamples: int) -> pl.DataFrame:
    return recframe.compare(per_user, test="tukey_hsd", n_resamples=n_resamples, seed=0)


def pairwise(values: dict[str, np.ndarray], n_resamples: int) -> dict[tuple[str, int, int], float]:
    rng = np.random.default_rng(1)
    return {
        (metric, a, b): stats.randomization_test(matrix[:, a], matrix[:, b], n_resamples, rng).p_value
        for metric, matrix in values.items()
        for a, b in itertools.combinations(range(len(MODELS)), 2)
    }


def check(family: pl.DataFrame, tests: dict[tuple[str, int, int], float], n_resamples: int) -> None:
    floor = 1 / (n_resamples + 1)
    if family.height != len(METRICS) * 10:
        sys.exit(f"ABORT: the Tukey family has {family.height} rows, not {len(METRICS) * 10}")
    for row in family.iter_rows(named=True):
        a, b = MODELS.index(row["model_a"]), MODELS.index(row["model_b"])
        p, q = row["p_value"], tests[row["metric"], a, b]
        if not (floor - 1e-15 <= p <= 1 and floor - 1e-15 <= q <= 1):
            sys.exit(f"ABORT: p-values out of range for {row['metric']} {row['model_a']}-{row['model_b']}: {p}, {q}")
        if p < q - 5 * math.sqrt(q * (1 - q) / n_resamples) - 2 / n_resamples:
            sys.exit(
                f"ABORT: Tukey p {p} below the pairwise randomization p {q} ({row['metric']} {row['model_a']}-{row['model_b']})"
            )
        gap = abs(GAPS[a] - GAPS[b])
        if gap == max(GAPS) and not row["significant"]:
            sys.exit(f"ABORT: the largest gap is not significant: {row}")
        if gap == 0 and row["p_value"] < 0.001:
            sys.exit(f"ABORT: two models without a gap differ at p {row['p_value']}: {row}")


def peak_bytes(matrix: np.ndarray, n_resamples: int) -> int:
    gc.collect()
    tracemalloc.start()
    stats.tukey_hsd_test(matrix, n_resamples, seed=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=10_000, help="users (default 10000)")
    p.add_argument("--resamples", type=int, default=stats.TEST_RESAMPLES, help=f"resamples (default {stats.TEST_RESAMPLES})")
    p.add_argument("--json", metavar="PATH", help="also write the figures to this JSON file")
    args = p.parse_args()

    per_user = build(args.users)
    values = matrices(per_user)
    load = os.getloadavg()[0]  # other processes' load makes the timings noisy: say so

    gc.collect()
    t0 = time.perf_counter()
    family = tukey(per_user, args.resamples)
    t_tukey = time.perf_counter() - t0
    gc.collect()
    t0 = time.perf_counter()
    tests = pairwise(values, args.resamples)
    t_pairwise = time.perf_counter() - t0
    check(family, tests, args.resamples)
    memory = {n: peak_bytes(values[METRICS[0]], n) for n in (max(1, args.resamples // 10), args.resamples)}

    print(
        f"{len(MODELS)} models x {args.users:,} users x {len(METRICS)} metrics, {args.resamples:,} resamples; "
        f"recframe {recframe.__version__}, numpy {np.__version__}, polars {pl.__version__}, cpu_count {os.cpu_count()}, "
        f"load average {load:.2f} at start"
    )
    print("checked: p-values in range, Tukey p >= pairwise p (to Monte Carlo error), largest gap significant, no gap not")
    print(f"\n{'timing (one run)':<58}{'seconds':>10}")
    print(f"{'tukey_hsd: compare, every pair of every metric':<58}{t_tukey:>10.2f}")
    print(f"{'randomization_test on each of the 10 pairs x 5 metrics':<58}{t_pairwise:>10.2f}")
    ratio = t_pairwise / t_tukey
    print(f"\nratio pairwise / tukey {ratio:.2f} (goal >= 1: {'PASS' if ratio >= 1 else 'MISS'})")
    small, large = memory.values()
    print(
        "peak memory of one Tukey test (tracemalloc): "
        + ", ".join(f"{n:,} resamples {b / 2**20:.1f} MiB" for n, b in memory.items())
        + f" (x{large / small:.2f})"
    )
    significant = family.filter(pl.col("significant")).height
    print(f"significant pairs: tukey {significant} of {family.height}; pairwise before correction "
          f"{sum(q < stats.ALPHA for q in tests.values())} of {len(tests)}")  # fmt: skip

    if args.json:
        figures = {
            "users": args.users,
            "models": len(MODELS),
            "metrics": len(METRICS),
            "resamples": args.resamples,
            "seconds": {"tukey": t_tukey, "pairwise": t_pairwise},
            "ratio": ratio,
            "peak_bytes": {str(n): b for n, b in memory.items()},
            "cpu_count": os.cpu_count(),
            "loadavg_1min": load,
        }
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
