"""The IR toolbox at scale: its cost against the accuracy summary, the floor and trec_eval.

    python bench/ir.py                 # 91k users x 110 rows = 10M rows
    python bench/ir.py --users 2000    # quick check

The frame is bench/run.py's (100 recommendations and 20 relevant items per user), with half of
the recommended items that are not relevant judged 0 (the others stay unjudged) and a score
column (the rank, reversed). Times, best of --repeat, Polars eager, every default check on:

  floor      plain Polars: one group_by("user_id") sum
  accuracy   summary(k=[5, 10, 20], metrics=precision, recall, ndcg, ap, rr)
  toolbox    summary of every measure of recframe.metrics.ir at k = 5, 10, 20
  trec_eval  per_user(profile="trec_eval", score=...) of the measures trec_eval has (its
             cut-offs 5, 10, 20 and the whole list), as `trec_eval -q` would compute them
  pytrec     pytrec_eval (trec_eval 9.0 in C) on the same run and qrels, the same measures;
             building its input dicts from the frame is timed apart ("pytrec input")

Each trec_eval measure of the two is checked to agree to 1e-9 on a sample of users before the
figures are printed (profile "trec_eval9": pytrec_eval is trec_eval 9.0).

End to end, on the same frame written as TREC run and qrels files (best of --repeat), the
official measures (trec_eval's default) and then every measure of `-m all_trec`:

  drop-in    recframe evaluate --format trec --profile trec_eval9 -q [-m all_trec] --run --qrels
             --out: read, evaluate, write
  pytrec     pytrec_eval.parse_run and parse_qrel, then evaluate (its convert and evaluate)

Every value both have is compared (to 1e-9, printed at 12 decimals) before the ratio is
printed, with the target of issue 25 on the official measures: recframe at least 3x as fast.

**--trec-eval BINARY** (issue 43, the drop-in's footprint) measures only this: the C binary of
trec_eval 10.0 (built from its source: ``make`` in a checkout of usnistgov/trec_eval) against
``recframe evaluate --format trec`` on a run of --queries x --docs lines (10,000 x 1,000 = 10M
lines, and 100 judged documents per query, grades 0-2), the official measures and then
``-m all_trec``. Each side runs --repeat times as its own process; its CPU time (user +
system) and peak RSS come from the kernel's accounting of that process, started by a fresh
interpreter (bench/footprint.py: one forked from this script would report at least the
script's own peak). The two texts are checked byte-identical first. Targets: the drop-in's CPU time at most the binary's on
``-m all_trec``, and its peak memory at most the binary's on both.

    python bench/ir.py --trec-eval ~/trec_eval/trec_eval --repeat 3
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from footprint import own_process
from run import best_of, build

import recframe
from recframe.metrics import REGISTRY
from recframe.trec import trec_eval_text

KS = [5, 10, 20]
ACCURACY = ["precision", "recall", "ndcg", "ap", "rr"]
TOOLBOX = [name for name, metric in REGISTRY.items() if metric.level == "user" and not metric.default]
# recframe metric -> the pytrec_eval measure family computing it
TREC = {
    "precision": "P",
    "recall": "recall",
    "ap": "map_cut",
    "ndcg": "ndcg_cut",
    "bpref": "bpref",
    "infap": "infAP",
    "num_rel_ret": "num_rel_ret",
    "iprec_at_recall": "iprec_at_recall",
    "rprec_mult": "Rprec_mult",
    "set_f1": "set_F",
    "bin_g": "binG",
}


def frame_of(users: int, seed: int = 2) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    frame = build(users)
    judged = pl.Series(rng.random(frame.height) < 0.5)
    relevance = pl.when(pl.col("relevance").is_null() & pl.col("rank").is_not_null() & judged).then(0.0)
    return frame.with_columns(
        relevance.otherwise(pl.col("relevance")).alias("relevance"),
        (1000.0 - pl.col("rank")).alias("score"),
    )


def trec_inputs(frame: pl.DataFrame) -> tuple[dict, dict]:
    """pytrec_eval's run and qrels dicts (string ids)."""
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for user, item, score, relevance in frame.select("user_id", "item_id", "score", "relevance").iter_rows():
        if score is not None:
            run.setdefault(str(user), {})[str(item)] = score
        if relevance is not None:
            qrels.setdefault(str(user), {})[str(item)] = int(relevance)
    return run, qrels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=91_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trec-eval", type=Path, help="the trec_eval binary: measure the drop-in's footprint against it")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    args = parser.parse_args()
    if args.trec_eval is not None:
        footprint(args.trec_eval, args.queries, args.docs, args.repeat)
        return
    frame = frame_of(args.users)
    trec_k = [*KS, sys.maxsize]
    trec_metrics = list(TREC)

    def trec_eval_profile(profile: str = "trec_eval") -> pl.DataFrame:
        recs = frame.drop("rank")
        return recframe.per_user(recs, k=trec_k, score="score", metrics=trec_metrics, profile=profile)

    cases = {
        "floor": lambda: frame.group_by("user_id").agg(pl.col("relevance").sum()),
        "accuracy": lambda: recframe.summary(frame, k=KS, metrics=ACCURACY),
        "toolbox": lambda: recframe.summary(frame, k=KS, metrics=TOOLBOX),
        "trec_eval": trec_eval_profile,
    }
    print(f"{frame.height:,} rows ({args.users:,} users); load average {os.getloadavg()[0]:.2f}")
    times = best_of(args.repeat, cases)

    try:
        import pytrec_eval
    except ImportError:
        pytrec_eval = None
        print("pytrec_eval is not installed (pip install pytrec-eval-terrier): no peer figure")
    if pytrec_eval is not None:
        t0 = time.perf_counter()
        run, qrels = trec_inputs(frame)
        times["pytrec input"] = time.perf_counter() - t0
        measures = {f"{m}.{','.join(map(str, KS))}" if m in ("P", "recall", "map_cut", "ndcg_cut") else m for m in TREC.values()}
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
        theirs = evaluator.evaluate(run)
        times |= best_of(args.repeat, {"pytrec": lambda: evaluator.evaluate(run)})
        # agreement on a sample of users, every measure both have, under trec_eval's names
        ours = trec_eval_profile("trec_eval9").filter(pl.col("user_id") < 200)
        text = trec_eval_text(ours, per_query=True, precision=12, metrics=trec_metrics, k=KS)
        checked = 0
        for name, qid, value in (line.split("\t") for line in text.splitlines()):
            name = name.strip()
            if qid != "all" and name in theirs[qid]:
                assert abs(float(value) - theirs[qid][name]) < 1e-9, (qid, name, value, theirs[qid][name])
                checked += 1
        print(f"recframe (profile='trec_eval') and pytrec_eval agree on {checked:,} values")

    print(f"{'case':<13} {'seconds':>8} {'x floor':>8} {'x accuracy':>11}")
    for name, seconds in times.items():
        print(f"{name:<13} {seconds:8.3f} {seconds / times['floor']:8.1f} {seconds / times['accuracy']:11.2f}")
    if "pytrec" in times:
        print(f"trec_eval measures: recframe {times['trec_eval'] / times['pytrec']:.2f}x pytrec_eval's evaluate, "
              f"{times['trec_eval'] / (times['pytrec'] + times['pytrec input']):.2f}x with its input built")  # fmt: skip
    if pytrec_eval is not None:
        end_to_end(frame, args.repeat, pytrec_eval)


def end_to_end(frame: pl.DataFrame, repeat: int, pytrec_eval) -> None:  # type: ignore[no-untyped-def]
    """The drop-in against pytrec_eval from files (see the module docstring)."""
    from recframe import cli
    from recframe.trec_eval import Request

    folder = Path(tempfile.mkdtemp())
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    ids = [pl.col("user_id").cast(pl.String), pl.col("item_id").cast(pl.String)]
    frame.filter(pl.col("score").is_not_null()).select(
        ids[0], pl.lit("Q0").alias("q0"), ids[1], pl.col("rank").fill_null(0), pl.col("score"), pl.lit("bench").alias("tag")
    ).write_csv(run_path, separator=" ", include_header=False)
    frame.filter(pl.col("relevance").is_not_null()).select(
        ids[0], pl.lit(0).alias("iter"), ids[1], pl.col("relevance").cast(pl.Int64)
    ).write_csv(qrels_path, separator=" ", include_header=False)
    print(f"end to end: run {run_path.stat().st_size / 1e6:.0f} MB, qrels {qrels_path.stat().st_size / 1e6:.0f} MB")
    for flags in ([], ["-m", "all_trec"]):
        chosen = Request(flags[1:], version="9").chosen
        names = [n for m in chosen for n in m.names() if m.family.per_query]
        families = {m.family.name for m in chosen} & set(pytrec_eval.supported_measures)
        families -= {"relstring", "runid", "num_q", "gm_map", "gm_bpref"}

        def ours(out: Path, decimals: int = 4, flags: list[str] = flags) -> None:
            args = ["evaluate", "--format", "trec", "--profile", "trec_eval9", "-q", *flags, "--quiet", "--precision"]
            files = ["--run", str(run_path), "--qrels", str(qrels_path), "--out", str(out)]
            assert cli.main([*args, str(decimals), *files]) == 0

        def theirs(families: set[str] = families) -> dict:  # type: ignore[type-arg]
            with open(run_path) as f_run, open(qrels_path) as f_qrel:
                run, qrels = pytrec_eval.parse_run(f_run), pytrec_eval.parse_qrel(f_qrel)
            return pytrec_eval.RelevanceEvaluator(qrels, families).evaluate(run)

        ours(folder / "ours12.txt", 12)
        values, checked = theirs(), 0
        for line in (folder / "ours12.txt").read_text().splitlines():
            name, qid, value = (part.strip() for part in line.split("\t"))
            if qid != "all" and name in values[qid]:
                assert abs(float(value) - values[qid][name]) < 1e-9, (name, qid, value, values[qid][name])
                checked += 1
        assert checked == sum(name in values[q] for q in values for name in names)
        label = "-q " + " ".join(flags) if flags else "-q (the official measures)"
        times = best_of(repeat, {"drop-in": lambda: ours(folder / "ours.txt"), "pytrec": theirs})
        ratio = times["pytrec"] / times["drop-in"]
        print(
            f"end to end, {label}: {checked:,} values agree; recframe (read, evaluate, write) {times['drop-in']:.2f} s, "
            f"pytrec_eval (parse_run, parse_qrel, evaluate) {times['pytrec']:.2f} s: recframe {ratio:.2f}x as fast"
        )
        if not flags:
            print(f"{'PASS' if ratio >= 3 else 'MISS'} the trec_eval drop-in at least 3x as fast as pytrec_eval end to end")


def footprint(binary: Path, queries: int, docs: int, repeat: int) -> None:
    """The drop-in against the trec_eval binary: CPU time and peak memory of each process (see
    the module docstring)."""
    folder = Path(tempfile.mkdtemp())
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    rng = np.random.default_rng(0)
    query = np.repeat(np.arange(queries), docs)
    rank = np.tile(np.arange(1, docs + 1), queries)
    # distinct documents per query (197 x docs < 500,000), the judged ones half among them
    doc = pl.Series((np.tile(np.arange(docs), queries) * 197 + query * 13) % 500_000).cast(pl.String)
    pl.DataFrame(
        {"q": query, "q0": "Q0", "doc": "d" + doc, "rank": rank, "score": ((docs - rank) + rng.random(query.size) * 0.5).round(4)}
    ).with_columns(tag=pl.lit("bench")).write_csv(run_path, separator=" ", include_header=False)
    judged_q = np.repeat(np.arange(queries), 100)
    judged = np.concatenate([rng.choice(2 * docs, 100, replace=False) for _ in range(queries)])
    pl.DataFrame(
        {
            "q": judged_q,
            "iter": 0,
            "doc": "d" + pl.Series((judged * 197 + judged_q * 13) % 500_000).cast(pl.String),
            "grade": rng.choice([0, 1, 2], size=judged_q.size, p=[0.6, 0.3, 0.1]),
        }
    ).write_csv(qrels_path, separator=" ", include_header=False)
    print(
        f"footprint: {queries:,} queries x {docs:,} documents ({query.size:,} run lines); load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'measures':<12} {'side':<10} {'CPU s':>7} {'peak MB':>8}")
    for flags in ([], ["-m", "all_trec"]):
        ours_out, theirs_out = folder / "ours.txt", folder / "theirs.txt"
        ours = [sys.executable, "-m", "recframe", "evaluate", "--format", "trec", *flags, "--quiet"]
        ours += ["--run", str(run_path), "--qrels", str(qrels_path), "--out", str(ours_out)]
        theirs = [str(binary), *flags, str(qrels_path), str(run_path)]
        best: dict[str, tuple[float, float]] = {}
        for _ in range(repeat):
            for side, command, out in (("trec_eval", theirs, theirs_out), ("recframe", ours, None)):
                cpu, peak = own_process(command, out if out is not None else Path(os.devnull))
                old = best.get(side, (math.inf, math.inf))
                best[side] = (min(old[0], cpu), min(old[1], peak))
        assert ours_out.read_bytes() == theirs_out.read_bytes(), "the drop-in's text differs from trec_eval's"
        label = " ".join(flags) or "official"
        for side, (cpu, peak) in best.items():
            print(f"{label:<12} {side:<10} {cpu:7.2f} {peak:8.0f}")
        (our_cpu, our_peak), (their_cpu, their_peak) = best["recframe"], best["trec_eval"]
        if flags:
            print(
                f"{'PASS' if our_cpu <= their_cpu else 'MISS'} -m all_trec CPU at most the binary's: {our_cpu / their_cpu:.2f}x"
            )
        print(
            f"{'PASS' if our_peak <= their_peak else 'MISS'} {label} peak memory at most the binary's: {our_peak / their_peak:.2f}x"
        )


if __name__ == "__main__":
    main()
