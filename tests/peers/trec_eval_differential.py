"""Diff `recframe evaluate --format trec` against real trec_eval binaries on random files.

Usage (from the repository root, with recframe installed)::

    python tests/peers/trec_eval_differential.py --te10 PATH --te9 PATH [--cases 250] [--seed 1] [--large]
        [--special 0.15]

PATH is a trec_eval binary built from source (github.com/usnistgov/trec_eval: ``make`` at the
commit of 10.0 and at the release tag ``trec_eval-9.0.8``; the older tag ``v9.0.8`` holds 9.0.7's
code, which reads scores as C floats; a C compiler is all it needs). Each case writes a random
run and qrels (tied scores, docnos that differ in case or by a numeric prefix, negative, zero and
two-digit grades, queries in one file only, qrels out of order; 1 to 6 queries, or 600 to 1,300
with ``--large`` so that the one-pass path joins several blocks of queries), picks random
``-q``, ``-c``, ``-J``, ``-M``, ``-l`` and a measure set, runs one of the two versions and
recframe under the matching profile, and compares the two outputs line for line.

A share ``--special`` of the cases is then made into one of the cases issue 38 found (drawn
from a second generator, so that a seed gives the same random files as before): a utility
whose fourth coefficient is not 0, without ``-N`` (the documents neither relevant nor retrieved
are then a negative count, which trec_eval keeps signed); scores in near-tied pairs, equal in
float32 but not in double (0.1 and 0.10000000001: trec_eval sorts doubles); or qrels without a
judgement (empty, with ``-c``: both must refuse, recframe with exit 2). A recframe exit 1 (an
unexpected error) is always a difference.

Not a test: it needs the binaries, which the test suite does not build. The differences that
docs/ir.md explains are skipped: trec_eval's ``-nan`` lines (recframe prints 0), its stop when
the first query it evaluates has no grade of 0 or more, and the stale relevance levels such a
query reads elsewhere when a gain is given to a negative level. The exit code is the number of
other differences (0: every output identical).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from recframe import cli

SMALL_IDS = ["1", "2", "10", "301", "302", "q1", "Q1", "a", "b7"]
DOCS = [f"d{k}" for k in range(30)] + ["D1", "d01", "1d", "10d", "2d", "x", "X"]
GRADES = [0, 0, 1, 1, 2, 3, -1, 0, 1, 12]
MEASURES = [
    [],
    ["-m", "all_trec"],
    ["-m", "official"],
    ["-m", "P.1,3,7", "-m", "ndcg_cut.3,5", "-m", "map_cut.2,10"],
    ["-m", "iprec_at_recall", "-m", "11pt_avg", "-m", "Rprec_mult"],
    ["-m", "bpref", "-m", "infAP", "-m", "recip_rank", "-m", "set_F", "-m", "binG"],
    ["-m", "success.1,5", "-m", "recall.3,10", "-m", "num_nonrel_judged_ret"],
    ["-m", "ndcg.1=3,2=9,-1=1", "-m", "ndcg_cut.2,7", "-m", "G.1=2,2=1", "-m", "ndcg_rel.0=1,1=3", "-m", "Rndcg.2=5"],
    ["-m", "utility.2,-1,0,0", "-m", "relstring.5", "-m", "set_F.0.5", "-m", "Rprec_mult.0.5,1.5", "-m", "11pt_avg..3,.6"],
]
#: measures trec_eval 10.0 added (9.0.8 refuses them, and so does recframe under its profile)
MEASURES_10 = [["-m", "rbp.p=0.5", "-m", "rbp_resid.p=0.7", "-m", "unj.1,3", "-m", "relative_P.2,50", "-m", "dcg"]]


def write_case(rng: random.Random, folder: Path, large: bool) -> tuple[Path, Path, set[str]]:
    """A random run and qrels; the qrels' queries that the run lacks."""
    if large:
        qids = [f"t{k}" for k in rng.sample(range(5000), rng.randint(600, 1300))]
    else:
        qids = rng.sample(SMALL_IDS, rng.randint(1, 6))
    run_q = [q for q in qids if rng.random() < 0.9] or qids[:1]
    qrel_q = [q for q in qids if rng.random() < 0.9] or qids[-1:]
    tag = rng.choice(["runA", "b"])
    run = [
        f"{q} Q0 {doc} {rank} {rng.choice([rng.randint(0, 5), round(rng.uniform(-3, 3), 2)])} {tag}"
        for q in run_q
        for rank, doc in enumerate(rng.sample(DOCS, rng.randint(1, 25)), 1)
    ]
    qrels = [f"{q} 0 {doc} {rng.choice(GRADES)}" for q in qrel_q for doc in rng.sample(DOCS, rng.randint(1, 25))]
    if rng.random() < 0.3:
        rng.shuffle(qrels)
    run_path, qrels_path = folder / "run", folder / "qrels"
    run_path.write_text("\n".join(run) + "\n")
    qrels_path.write_text("\n".join(qrels) + "\n")
    return run_path, qrels_path, set(qrel_q) - set(run_q)


def first_query_unjudged(run_path: Path, qrels_path: Path, every_qrels_query: bool) -> bool:
    """trec_eval's stop: the first query it evaluates (byte order) has only negative grades.
    It evaluates the queries in both files, or under 10.0 with -c every query of the qrels."""
    qrels = [line.split() for line in qrels_path.read_text().splitlines()]
    in_run = {line.split()[0] for line in run_path.read_text().splitlines()}
    evaluated = sorted(
        {q for q, *_ in qrels} & (in_run | ({q for q, *_ in qrels} if every_qrels_query else set())), key=str.encode
    )
    return bool(evaluated) and all(int(grade) < 0 for q, _, _, grade in qrels if q == evaluated[0])


def stale_levels(run_path: Path, qrels_path: Path, measures: list[str]) -> bool:
    """trec_eval's other state: a query with only negative grades keeps the relevance levels of
    the query evaluated before it (its buffers are not reset), which a gain given to a negative
    level (``ndcg.-1=1``) then reads. recframe reads the query's own judgements."""
    if not any("=" in m and "-" in m.split(".", 1)[-1] for m in measures):
        return False
    qrels = [line.split() for line in qrels_path.read_text().splitlines()]
    queries = {q for q, *_ in qrels}
    return any(all(int(grade) < 0 for q, _, _, grade in qrels if q == query) for query in queries)


def signed_utility(special: random.Random) -> list[str]:
    """``-m utility.a,b,c,d`` with d not 0: without ``-N`` (N = 0), d multiplies
    N + rel_ret - ret - rel, below 0 whenever a document is retrieved or relevant."""
    a, b, c = (special.choice([-2, -1, 0, 0.5, 1, 2]) for _ in range(3))
    d = special.choice([-1, -0.5, 1, 2])
    return ["-m", f"utility.{a:g},{b:g},{c:g},{d:g}", *special.choice([[], ["-m", "set_P"], ["-m", "official"]])]


def float32_ties(special: random.Random, run_path: Path) -> None:
    """Rewrite the run's scores as near-tied pairs: each score is a base or the base moved by a
    relative 1e-10 or so, far below float32's step (6e-8 of the value), so that a float32
    comparison ties what a double comparison orders (and the document numbers then decide)."""
    lines = []
    for line in run_path.read_text().splitlines():
        qid, q0, doc, rank, _, tag = line.split()
        base = special.choice([0.1, 1.0, 2.5, -0.3, 7.0, 1e-3])
        moved = base * (1 + special.choice([0.0, 1e-10, -1e-10, 3e-11, 2e-12]))
        lines.append(f"{qid} {q0} {doc} {rank} {moved!r} {tag}")
    run_path.write_text("\n".join(lines) + "\n")


def recframe_text(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["evaluate", "--format", "trec", *args])
    return code, out.getvalue()


def without_nan(theirs: str, ours: str) -> tuple[list[str], list[str]]:
    """Both outputs without the lines of the measures trec_eval prints as -nan somewhere."""
    nan = {line.split()[0] for line in theirs.splitlines() if "nan" in line}
    keep = [line for line in theirs.splitlines() if line.split()[0] not in nan]
    return keep, [line for line in ours.splitlines() if line.split()[0] not in nan]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--te10", required=True, help="trec_eval 10.0 binary")
    parser.add_argument("--te9", required=True, help="trec_eval 9.0.8 binary")
    parser.add_argument("--cases", type=int, default=250)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--large", action="store_true", help="half the cases with 600 to 1,300 queries")
    parser.add_argument("--special", type=float, default=0.15, help="share of the cases made into issue 38's cases")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    special = random.Random(f"special {args.seed}")  # (rng draws what it drew before)
    differences = stops = compared = stale = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(args.cases):
            run_path, qrels_path, missing = write_case(rng, Path(tmp), args.large and rng.random() < 0.5)
            version = rng.choice(["9", "10"])
            flags = ["-q"] if rng.random() < 0.6 else []
            if rng.random() < 0.4 or (missing and version == "10"):  # 10.0 stops without -c there
                flags.append("-c")
            if rng.random() < 0.25:
                flags.append("-J")
            if rng.random() < 0.25:
                flags += ["-M", str(rng.randint(1, 12))]
            if rng.random() < 0.3:
                flags += ["-l", str(rng.choice([1, 2, 3]))]
            measures = rng.choice(MEASURES + (MEASURES_10 if version == "10" else []))
            if rng.random() < 0.1:
                flags += ["-N", str(rng.randint(1, 12))]
            kind = special.choice(["utility", "float32", "empty qrels"]) if special.random() < args.special else ""
            if kind == "utility":
                measures = signed_utility(special)
                flags = [flag for i, flag in enumerate(flags) if flag != "-N" and (i == 0 or flags[i - 1] != "-N")]
            elif kind == "float32":
                float32_ties(special, run_path)
            elif kind == "empty qrels":
                qrels_path.write_text("")
                flags = [*flags, "-c"] if "-c" not in flags else flags
            binary = args.te10 if version == "10" else args.te9
            theirs = subprocess.run([binary, *flags, *measures, str(qrels_path), str(run_path)], capture_output=True, text=True)
            profile = ["--profile", "trec_eval" if version == "10" else "trec_eval9"]
            code, ours = recframe_text([*profile, *flags, *measures, "--qrels", str(qrels_path), "--run", str(run_path)])
            if (
                theirs.returncode == 4
                and "Can't calculate" in theirs.stderr
                and first_query_unjudged(run_path, qrels_path, version == "10" and "-c" in flags)
            ):
                stops += 1
                continue
            if stale_levels(run_path, qrels_path, measures):
                stale += 1
                continue
            if code == 1 or (kind == "empty qrels" and (code != 2 or theirs.returncode == 0)):
                differences += 1  # an unexpected error of recframe's, or empty qrels not refused by both
                print(f"case {case} ({kind or 'random'}): trec_eval {version} exit {theirs.returncode}, recframe exit {code}")
                continue
            if theirs.returncode != 0 or code != 0:
                if (theirs.returncode == 0) != (code == 0):
                    differences += 1
                    print(f"case {case}: trec_eval {version} exit {theirs.returncode}, recframe exit {code} {flags} {measures}")
                continue
            a, b = without_nan(theirs.stdout, ours)
            compared += 1
            if a != b:
                differences += 1
                shown = [(x, y) for x, y in zip(a, b, strict=False) if x != y][:3]
                print(f"case {case}: trec_eval {version} {flags} {measures}: {len(a)} and {len(b)} lines; {shown}")
    print(
        f"{differences} difference(s) in {args.cases} cases: {compared} outputs compared, the others refused by "
        f"both; {stops} first-query stops and {stale} cases of stale levels of trec_eval skipped"
    )
    return differences


if __name__ == "__main__":
    sys.exit(main())
