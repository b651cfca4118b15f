"""The commands: each reads its files, calls the API on the Polars streaming engine and writes
the result. Nothing here computes a metric."""

from __future__ import annotations

import argparse
import difflib
import hashlib
import math
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import polars as pl

import recframe
from recframe import api, trec_eval
from recframe.cli._files import SIDE_INPUTS, Source, find_source
from recframe.cli._messages import CHECK_DUPLICATES, DEFAULT_K, EXIT_OK, UsageError, flag
from recframe.cli._output import Progress, check_precision, emit, emit_text, output_format, render, terminal_width, write_atomic
from recframe.conventions import CHOICES
from recframe.data import load_sample
from recframe.engine._validate import reads
from recframe.errors import RecframeError
from recframe.metrics import REGISTRY
from recframe.options import DEFAULTS, PER_USER_NAMES
from recframe.profiles import PROFILES, has_metric
from recframe.reporting._inspect import frame_ties
from recframe.reporting.report import Format
from recframe.trec_eval.trec import TREC_MEASURES, WHOLE, read_trec_qrels, read_trec_run, trec_eval_text

#: the columns of recframe.read_trec_run / read_trec_qrels frames, as API arguments
TREC_COLUMNS = {"user": "user_id", "item": "item_id", "rank": "rank", "score": "score", "relevance": "relevance"}


def column_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "user": None if args.no_user else args.user,
        "item": args.item,
        "rank": args.rank,
        "score": args.score,
        "relevance": args.relevance,
        "by": args.by,
    }


def _check_trec_inputs(args: argparse.Namespace) -> None:
    """evaluate reads RECS (with --truth) or --run with --qrels: one of the two, whole."""
    run, qrels = getattr(args, "trec_run", None), getattr(args, "trec_qrels", None)
    if args.recs is None and run is None:
        raise UsageError("no recommendations to evaluate. Hint: pass RECS (a .parquet or .csv file), or --run FILE --qrels FILE.")
    if args.recs is not None and run is not None:
        raise UsageError(f"RECS {args.recs!r} and --run {run!r}: pass one of them. Hint: leave out RECS or --run.")
    if qrels is not None and run is None:
        raise UsageError("--qrels goes with --run. Hint: pass --run FILE, or --truth (not --qrels) with RECS.")
    if run is None:
        return
    if qrels is None:
        raise UsageError(f"--run {run!r} needs its relevance judgements. Hint: add --qrels FILE.")
    if args.truth is not None:
        raise UsageError("--truth and --run: the judgements of --run come from --qrels. Hint: pass --qrels, not --truth.")
    for name in ("user", "no_user", "item", "rank", "score", "relevance"):
        if getattr(args, name) not in (TREC_COLUMNS.get(name), None, False):  # given on the command line
            raise UsageError(
                f"{flag(name)}: --run and --qrels have fixed columns (user_id, item_id, rank, score, relevance). "
                f"Hint: leave out {flag(name)}."
            )


def _read(args: argparse.Namespace, progress: Progress) -> tuple[pl.LazyFrame, dict[str, Any]]:
    """The RECS scan (or the --run file, with --qrels as the truth) and the side inputs' scans,
    each file checked."""
    if getattr(args, "trec_run", None):
        progress.stage(f"run: {args.trec_run}, qrels: {args.trec_qrels}")
        recs, read = read_trec_run(args.trec_run), {"truth": read_trec_qrels(args.trec_qrels)}
    else:
        recs, read = _read_file(args.recs, "RECS", progress), {}
    # (an empty --exclude or --train is a real case: nothing seen, nothing trained)
    for name in (name for name in SIDE_INPUTS if getattr(args, name)):
        read[name] = _read_file(getattr(args, name), flag(name), progress, empty_ok=name != "truth")
    return recs, read


def _api_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The API arguments the command's flags give: every option of recframe.per_user that has a
    flag here, by its name (recframe.options declares them). The side inputs are read from their
    files apart; a flag left out (None) leaves the option to its default, or a convention to
    the profile."""
    flags = [name for name in PER_USER_NAMES if name not in SIDE_INPUTS and hasattr(args, name)]
    given = {name: getattr(args, name) for name in flags if getattr(args, name) is not None}
    return {
        **({"k": args.k} if hasattr(args, "k") else {}),
        "metrics": args.metrics,
        **given,
        **column_kwargs(args),
        # only when typed: --no-checks implies none, and refuses a typed used or all
        **({"check_duplicates": CHECK_DUPLICATES[args.check_duplicates]} if args.check_duplicates is not None else {}),
        # a baseline model for intersection and unexpectedness (compare's and report's
        # --baseline too): passed only when a metric reads it, which costs a query
        "baseline": args.baseline if reads(args.metrics or (), "baseline") else None,
    }


def _intervals(args: argparse.Namespace) -> dict[str, Any]:
    """summary's own options: the four of the intervals, --ci or not (summary checks every one
    whether or not it reads it), and --aggregate where the command has it."""
    aggregate = getattr(args, "aggregate", None)
    return {
        "ci": args.ci, "ci_method": args.ci_method, "n_resamples": args.n_resamples, "seed": args.seed,
        **({"aggregate": aggregate[0] if len(aggregate) == 1 else aggregate} if aggregate else {}),
    }  # fmt: skip


def evaluate(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe evaluate``: read, evaluate on the streaming engine, print or write."""
    fmt = output_format(args)  # fail on a bad --out before reading anything
    _check_trec_inputs(args)
    if fmt == "trec" and args.partitions is not None:
        raise UsageError("--partitions goes with the means; --format trec prints trec_eval's text. Hint: leave out one of them.")
    if fmt == "trec":
        return _evaluate_trec(args, progress)
    given = [flag for flag, test in _TREC_FLAGS.items() if test(args)]
    if given:
        raise UsageError(f"{' '.join(given)}: trec_eval's flags go with --format trec. Hint: add --format trec.")
    if args.per_user and args.ci is not None:
        raise UsageError("--ci gives intervals of the means; --per-user has no means. Hint: leave out one of them.")
    if args.per_user and args.aggregate:
        raise UsageError("--aggregate summarises the users; --per-user lists them. Hint: leave out one of them.")
    if args.per_user and args.partitions is not None:
        raise UsageError("--partitions adds up the sums of sets of users; --per-user lists them. Hint: leave out one of them.")
    recs, sides = _read(args, progress)
    kwargs = {**_api_kwargs(args), **(TREC_COLUMNS if args.trec_run else {})}
    options = kwargs if args.per_user else {**kwargs, **_intervals(args)}
    if args.partitions is not None:
        options["partitions"] = args.partitions
    with progress.running("reading and evaluating"):
        if kwargs.get("score") is not None and args.ci is None and args.partitions is None:
            # the tie line's table from the same plan, collected with it: the rows are read,
            # ranked and checked once
            plans = api.with_tied_cutoffs(recs, per_user_rows=args.per_user, **sides, **options)
            table, tied = pl.collect_all(plans, engine="streaming")
            _note_ties(tied)
        else:
            plan = (recframe.per_user if args.per_user else recframe.summary)(recs, **sides, **options)
            table = plan.collect(engine="streaming")
            if kwargs.get("score") is not None and args.partitions is None:
                ties = recframe.tied_cutoffs(recs, **sides, **{o: x for o, x in kwargs.items() if o != "metrics"})
                _note_ties(ties.collect(engine="streaming"))
            elif kwargs.get("score") is not None:  # (the tie table would read every list at once)
                print("recframe: note: ties at the cut-offs are not looked for with --partitions", file=sys.stderr, flush=True)
    return emit(args, fmt, table, progress)


def _note_ties(tied: pl.DataFrame) -> None:
    """One line on stderr where a cut-off splits a group of equal scores (recframe.tied_cutoffs)."""
    totals = tied.sum()
    counts = {c.removeprefix("n_tied@"): totals[c].item() for c in totals.columns if c.startswith("n_tied@")}
    if any(counts.values()):
        at = ", ".join(f"{count} at k={k}" for k, count in counts.items())
        print(
            f"recframe: note: ties: of {totals['n_lists'].item()} lists, the cut-off falls inside a group of equal scores "
            f"in {at}; --ties decides their order (optimistic / pessimistic bound it, average takes the expected value)",
            file=sys.stderr,
            flush=True,
        )


def note_relevance_rule(args: argparse.Namespace) -> None:
    """One line on stderr when no --threshold was given and the relevance column holds more
    than two distinct values (1-5 ratings): every item graded above 0 then counted as relevant.

    Read after the command succeeded, from the --truth file if given, else RECS: one column,
    its distinct values up to 3 (``unique().head(3)``), its least and its largest, in one
    query on the streaming engine. Not for --run
    and --qrels, which follow trec_eval's -l.
    """
    if getattr(args, "threshold", 0) is not None or getattr(args, "trec_run", None) or not getattr(args, "recs", None):
        return
    label, pattern = ("--truth", args.truth) if getattr(args, "truth", None) else ("RECS", args.recs)
    column = args.relevance
    try:
        scan = find_source(pattern, label).scan()
        rel = pl.col(column).drop_nulls()
        probe = scan.select(rel.unique().head(3).len().alias("n"), rel.min().alias("low"), rel.max().alias("high"))
        found = probe.collect(engine="streaming").row(0, named=True)
    except (UsageError, pl.exceptions.PolarsError, OSError):  # (the command read it: nothing to say)
        return
    if found["n"] > 2:
        print(
            f"recframe: note: relevance: no --threshold, so every item with {column} > 0 counted as relevant, and "
            f"{column!r} holds more than two values (from {found['low']:g} to {found['high']:g}); pass --threshold T "
            f"to count only {column} >= T",
            file=sys.stderr,
            flush=True,
        )


def _trec_metrics(args: argparse.Namespace) -> list[str]:
    """--metrics, each with a trec_eval measure; by default the trec_eval profile's metrics
    that recframe has (recframe.metrics.REGISTRY), that have one and that --profile has."""
    named = [m for m in REGISTRY if any(t.metric == m for t in TREC_MEASURES)]
    if args.metrics is None:
        profiles = (PROFILES["trec_eval"], PROFILES[args.profile or "trec_eval"])
        return [m for m in named if all(has_metric(profile, m) for profile in profiles)]
    missing = [m for m in args.metrics if m not in named]
    if missing:
        raise UsageError(
            f"--metrics {','.join(missing)}: trec_eval has no such measure, so --format trec cannot print it. "
            f"Hint: pass some of {','.join(named)}, or another --format."
        )
    return list(args.metrics)


#: trec_eval's flags, given (-m, -c, -J, -M, -N, -n): they need --run and --qrels
_TREC_FLAGS = {
    "-m": lambda a: a.measure is not None,
    "-c": lambda a: a.complete,
    "-J": lambda a: a.judged_only,
    "-M": lambda a: a.max_retrieved is not None,
    "-N": lambda a: a.docs_in_collection != 0,
    "-n": lambda a: a.no_summary,
}


def _trec_measures(args: argparse.Namespace) -> list[str]:
    """-m as given; or --metrics and --k as trec_eval measures (``--metrics precision --k 5``
    is ``-m P.5``)."""
    if args.metrics is None and args.k is DEFAULT_K:
        return list(args.measure or [])
    if args.measure:
        raise UsageError("-m and --metrics/--k: choose the measures one way. Hint: trec_eval's -m, e.g. -m P.5,10 -m map.")
    metrics = _trec_metrics(args)
    specs: list[str] = []
    for measure in TREC_MEASURES:
        if measure.metric not in metrics and not (measure.metric is None and args.metrics is None):
            continue
        name = measure.name.removesuffix("_{k}")
        family = name if name in trec_eval.FAMILY else name.rsplit("_", 1)[0]
        cutoffs = args.k if "{k}" in measure.name and args.k is not DEFAULT_K else None
        spec = f"{family}.{','.join(str(k) for k in cutoffs)}" if cutoffs else family
        if spec not in specs:
            specs.append(spec)
    return (["runid", "num_q"] if args.metrics is None else []) + specs


def _trec_eval_command(args: argparse.Namespace, progress: Progress) -> int:
    """``evaluate --run --qrels --format trec``: trec_eval's output, line for line (recframe.trec_eval)."""
    profile = args.profile or "trec_eval"
    if profile not in ("trec_eval", "trec_eval9"):
        raise UsageError(
            f"--profile {profile}: --format trec with --run prints trec_eval's measures under its conventions. "
            "Hint: --profile trec_eval (10.0, the default) or trec_eval9 (9.0.8)."
        )
    if args.threshold is not None and not (
        math.isfinite(args.threshold) and args.threshold == int(args.threshold) and abs(args.threshold) < 2**63
    ):  # (nan and inf too: trec_eval reads -l as a C long)
        raise UsageError(
            f"-l {args.threshold:g}: trec_eval's relevance level is a whole number (a C long, below 2**63 in size). "
            "Hint: e.g. -l 2."
        )
    request = trec_eval.Request(
        _trec_measures(args),
        per_query=args.per_user,
        complete=args.complete,
        judged_only=args.judged_only,
        max_retrieved=args.max_retrieved,
        docs_in_collection=args.docs_in_collection,
        level=1 if args.threshold is None else int(args.threshold),
        summary=not args.no_summary,
        version="9" if profile == "trec_eval9" else "10",
        decimals=args.precision,
    )
    conventions = {name: getattr(args, name) for name in CHOICES if getattr(args, name) is not None}
    ordering = [flag(name) for name in ("ties", "score_dtype", "rank_gaps") if name in conventions]
    if ordering:
        raise UsageError(
            f"{', '.join(ordering)}: the drop-in orders each query as trec_eval does (by score, a double, under "
            "both profiles; ties by document number, decreasing). Hint: leave them out."
        )
    progress.stage(f"run: {args.trec_run}, qrels: {args.trec_qrels}")
    with progress.running("reading and evaluating"):
        # only the fields trec_eval reads are kept, ids and tags as categories, and of the tags
        # only the last (the memory of a large run)
        columns = ["user_id", "item_id", "score", "run"]
        ranked = read_trec_run(args.trec_run, eager=True, columns=columns, categorical=True).collect()
        runid, ranked = trec_eval.last_tag(ranked), ranked.drop("run")
        qrels = read_trec_qrels(args.trec_qrels, eager=True)
        text = trec_eval.evaluate(ranked.lazy(), qrels, request, options=conventions, runid=runid)
    return emit_text(args, text, "trec", progress)


def _evaluate_trec(args: argparse.Namespace, progress: Progress) -> int:
    """``evaluate --format trec``: per-query values as trec_eval prints them, then the 'all'
    lines; from --run and --qrels, trec_eval's drop-in, else (a table of ranks) the measures of
    recframe.trec_eval_text on the queries in both inputs."""
    for option, given in (("--by", args.by), ("--ci", args.ci is not None), ("--no-user", args.no_user)):
        if given:
            raise UsageError(f"{option}: --format trec prints one value per query id and measure. Hint: leave out {option}.")
    if args.trec_run:
        return _trec_eval_command(args, progress)
    given = [flag for flag, test in _TREC_FLAGS.items() if test(args)]
    if given:
        raise UsageError(f"{' '.join(given)}: trec_eval's flags read TREC files. Hint: pass --run RUN --qrels QRELS.")
    recs, sides = _read(args, progress)
    explicit_k = args.k is not DEFAULT_K
    cutoffs = args.k if explicit_k else [c for t in TREC_MEASURES for c in t.cutoffs]
    kwargs = {
        "profile": "trec_eval",  # the measure names promise trec_eval's conventions (--profile still wins)
        **_api_kwargs(args),
        **(TREC_COLUMNS if args.trec_run else {}),
        "metrics": _trec_metrics(args),
        "k": sorted({*cutoffs, WHOLE}),  # WHOLE: map, ndcg and recip_rank read the whole list
    }
    user = kwargs["user"]
    plan = recframe.per_user(recs, **sides, **kwargs)
    # as trec_eval: only the queries that are in both the run and the qrels
    for frame in (recs, sides.get("truth")):
        if frame is not None:
            plan = plan.join(frame.select(user).unique(), on=user, how="semi")
    with progress.running("reading and evaluating"):
        table = plan.collect(engine="streaming")
        runid = recs.select(pl.col("run").last()).collect().item() if args.trec_run else None  # trec_eval: the last line's
    text = trec_eval_text(
        table, user=user, per_query=args.per_user, precision=args.precision, metrics=args.metrics,
        k=args.k if explicit_k else None, runid=runid,
    )  # fmt: skip
    return emit_text(args, text, "trec", progress)


def compare_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe compare``: per-user metrics by --by, then a paired comparison with --baseline,
    or of every pair of models without it."""
    fmt = output_format(args)
    if not args.by:
        raise UsageError("compare needs the model column. Hint: pass --by model (then any segment or fold keys).")
    recs, sides = _read(args, progress)
    with progress.running("reading and evaluating"):
        per_user = recframe.per_user(recs, **sides, **_api_kwargs(args)).collect(engine="streaming")
    models = per_user[args.by[0]].unique().to_list()
    # the baseline is typed as text: match it to the model column's values
    baseline = None if args.baseline is None else next((m for m in models if str(m) == args.baseline), args.baseline)
    table = recframe.compare(
        per_user, by=args.by, baseline=baseline, test=args.test, correction=None if args.correction == "none" else args.correction,
        alpha=args.alpha, seed=args.seed, n_resamples=args.n_resamples,
    )  # fmt: skip
    return emit(args, fmt, table, progress)


def disparity_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe disparity``: per-user metrics by --by and --group, then recframe.disparity."""
    fmt = output_format(args)
    if not args.by:
        raise UsageError("disparity needs the model column. Hint: pass --by model (then any fold keys).")
    if args.group in args.by:
        raise UsageError(f"--group {args.group} is also in --by. Hint: leave it out of --by.")
    recs, sides = _read(args, progress)
    kwargs = _api_kwargs(args)
    with progress.running("reading and evaluating"):
        per_user = recframe.per_user(recs, **sides, **{**kwargs, "by": [*args.by, args.group]}).collect(engine="streaming")
    table = recframe.disparity(
        per_user, group=args.group, by=args.by, test=args.test, pairs=args.pairs,
        correction=None if args.correction == "none" else args.correction, alpha=args.alpha, seed=args.seed,
        n_resamples=args.n_resamples,
    )  # fmt: skip
    return emit(args, fmt, table, progress)


def _long_table_command(function: Any, name: str, hint: str) -> Any:
    """A command writing `function`'s long table (one row per group and item group, or item),
    which computes its own columns: --metrics is refused with `hint`."""

    def command(args: argparse.Namespace, progress: Progress) -> int:
        fmt = output_format(args)
        if args.metrics:
            raise UsageError(f"{name} computes its own columns. Hint: leave out --metrics{hint}.")
        recs, sides = _read(args, progress)
        kwargs = {key: value for key, value in _api_kwargs(args).items() if key != "metrics"}
        with progress.running("reading and evaluating"):
            table = function(recs, **sides, **kwargs).collect(engine="streaming")
        return emit(args, fmt, table, progress)

    command.__doc__ = f"``recframe {name}``: recframe.{function.__name__}."
    return command


#: ``recframe item-groups``: one row per (group, item group)
item_groups_command = _long_table_command(recframe.item_groups, "item-groups", " (summary has pop_rsp, ...)")
#: ``recframe per-item``: one row per (group, item)
per_item_command = _long_table_command(recframe.per_item, "per-item", "")


def agreement_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe agreement``: recframe.agreement, per user and pair of models."""
    fmt = output_format(args)
    if args.metrics:
        raise UsageError("agreement computes its own columns. Hint: leave out --metrics.")
    if len(args.k) != 1:
        raise UsageError(f"--k {','.join(map(str, args.k))}: agreement compares the lists to one depth. Hint: e.g. --k 10.")
    recs, sides = _read(args, progress)
    kwargs = {key: value for key, value in _api_kwargs(args).items() if key not in ("metrics", "k", "baseline")}
    with progress.running("reading and comparing the lists"):
        table = recframe.agreement(recs, k=args.k[0], p=args.p, baseline=args.baseline, **sides, **kwargs).collect(
            engine="streaming"
        )
    return emit(args, fmt, table, progress)


def cohorts_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe cohorts``: recframe.user_cohorts, a users file for --users and --by cohort."""
    fmt = output_format(args)
    if args.bins is not None and args.edges is not None:
        raise UsageError("--bins and --edges both say how to cut the counts. Hint: pass one of them.")
    recs, train = _read_file(args.recs, "RECS", progress), _read_file(args.train, "--train", progress, empty_ok=True)
    truth = _read_file(args.truth, "--truth", progress, empty_ok=True) if args.truth else None
    with progress.running("counting the training interactions"):
        table = recframe.user_cohorts(
            recs, train, args.bins if args.bins is not None else 4, edges=args.edges, truth=truth, user=args.user,
            item=args.item, name=args.name,
        ).collect()  # fmt: skip
    return emit(args, fmt, table, progress)


def curve_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe curve``: every cut-off 1..--k-max, long format, and an optional plot."""
    fmt = output_format(args)
    recs, sides = _read(args, progress)
    with progress.running("reading and evaluating"):
        kwargs = _api_kwargs(args)
        table = recframe.curve(recs, k_max=args.k_max, **sides, **kwargs, **_intervals(args)).collect(engine="streaming")
    if args.plot:
        drawn = [m for m in (args.metrics or ["ndcg"]) if m in table.columns]
        figure = recframe.plot.curve(table, drawn or ["precision"])
        write_atomic(Path(args.plot), lambda path: figure.savefig(path, format="png", dpi=120), flag="--plot")
        progress.stage(f"drew {args.plot}")
    return emit(args, fmt, table, progress)


def _read_file(pattern: str, label: str, progress: Progress, empty_ok: bool = False) -> pl.LazyFrame:
    """One input file (or glob), checked as RECS is: one format, complete CSV rows, not empty."""
    source = find_source(pattern, label)
    progress.stage(f"{label.lstrip('-').lower()}: {source.describe()}")
    source.check_rows()
    if not empty_ok:
        source.check_not_empty(label)
    return source.scan()


def off_policy_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe off-policy``: recframe.off_policy on LOGS, the target as --target (a column)
    or --recommendations (rankings), on the Polars streaming engine."""
    fmt = output_format(args)
    if args.target is None and args.recommendations is None:
        raise UsageError(
            "off-policy needs the target policy. Hint: pass --target COLUMN (its probability of the logged item, a "
            "column of LOGS) or --recommendations RECS (its rankings: context, item, rank)."
        )
    if args.target is not None and args.recommendations is not None:
        raise UsageError("--target and --recommendations both give the target policy. Hint: pass one of them.")
    if args.no_position and args.position != "position":
        raise UsageError(f"--position {args.position} and --no-position. Hint: pass one of them.")
    logs = _read_file(args.logs, "LOGS", progress)
    if not args.no_position and args.position not in logs.collect_schema():
        raise UsageError(
            f"LOGS {args.logs!r} has no column {args.position!r} (--position). Hint: pass --position COLUMN, or "
            "--no-position for a single-slot log (every row position 1)."
        )
    # a ranking file without a row is a target that ranks nothing (every weight 0), not a failed export
    recs = None if args.recommendations is None else _read_file(args.recommendations, "--recommendations", progress, True)
    options = {name: getattr(args, name) for name in ("context", "item", "propensity", "reward", "rank", "by", "ci")}
    options |= {name: getattr(args, name) for name in ("predicted", "target_predicted", "max_weight", "switch_threshold")}
    if args.examination is not None:  # the click metrics': a column of LOGS, else a file
        column = args.examination in logs.collect_schema()
        options |= {
            "k": args.k,
            "examination": args.examination if column else _read_file(args.examination, "--examination", progress),
        }
    with progress.running("reading and estimating"):
        plan = recframe.off_policy(
            logs, args.estimators, target=args.target, recommendations=recs,
            position=None if args.no_position else args.position, per_context=args.per_context, **options,
        )  # fmt: skip
        table = plan.collect(engine="streaming")
    return emit(args, fmt, table, progress)


#: --out suffixes that make ``report`` write the evaluation page, and ``inspect`` the side-by-side
#: page, when --format is not given
PAGE_SUFFIXES = (".html", ".htm")


def _input_files(args: argparse.Namespace) -> list[dict[str, Any]]:
    """What the page says of each input file: its name, rows and sha256 of its bytes."""
    described = []
    named = [("recs", args.recs, "RECS"), *((name, getattr(args, name), flag(name)) for name in SIDE_INPUTS)]
    for name, pattern, label in named:
        if not pattern:
            continue
        source = find_source(pattern, label)
        for path in source.files:
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            scan = pl.scan_parquet(path) if source.reader == "parquet" else pl.scan_csv(path, infer_schema_length=0)
            rows = int(scan.select(pl.len()).collect().item())
            described.append({"input": name, "file": path, "rows": rows, "sha256": digest.hexdigest()})
    return described


def _report_page(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe report --format page`` (or ``--out FILE.html``): recframe.report_page."""
    recs, sides = _read(args, progress)
    kwargs = _api_kwargs(args)
    kwargs.pop("baseline")  # report_page's baseline= is the comparison's, and that of the metrics that read it
    k, metrics = kwargs.pop("k"), kwargs.pop("metrics")
    ci = 0.95 if args.ci is None else args.ci
    intervals = {"ci_method": args.ci_method, "n_resamples": args.n_resamples, "seed": args.seed}
    # a flag left out gives the API's default: passed on, it would read as "given" on the page
    # (conventions are passed only when typed: they default to None here, so a profile keeps them)
    passed = {
        name: value for name, value in {**kwargs, **intervals}.items()
        if name in CHOICES or name not in DEFAULTS or value != DEFAULTS[name]
    }  # fmt: skip
    command = shlex.join(["recframe", *getattr(args, "argv", ["report", "..."])])
    if args.brief and args.sections is not None:
        raise UsageError("--brief is --sections brief: pass one of them. Hint: leave out --brief, or --sections.")
    sections = "brief" if args.brief else None if args.sections is None else [s.strip() for s in args.sections.split(",")]
    page = {"title": args.title, "headline": args.headline, "sections": sections}
    with progress.running("reading, evaluating and drawing"):
        text = recframe.report_page(
            recs, baseline=args.baseline, k=k, ci=ci, metrics=metrics, precision=args.precision, inputs=_input_files(args),
            command=command, **{name: value for name, value in page.items() if value is not None}, **sides, **passed,
        )  # fmt: skip
    return emit_text(args, text, "page", progress)


def report_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe report``: the summary (with intervals) and, with --baseline, the comparison; or
    the evaluation page (--format page, or --out FILE.html without --format)."""
    fmt = args.format or ("page" if args.out and Path(args.out).suffix.lower() in PAGE_SUFFIXES else "markdown")
    if fmt == "html":  # the old name of table-html, which an .html --out made read as the page
        print(
            "recframe: note: --format html writes the report table alone, an HTML fragment, now called --format "
            "table-html; the evaluation page is --format page (or --out FILE.html without --format)",
            file=sys.stderr,
            flush=True,
        )
        fmt = "table-html"
    if args.out and Path(args.out).is_dir():
        example = {"page": "html", "markdown": "md", "latex": "tex", "table-html": "html"}.get(fmt, fmt)
        raise UsageError(f"--out {args.out!r} is a folder. Hint: pass a file name, e.g. --out report.{example}.")
    check_precision(args)
    if fmt == "page":
        if args.aggregate:
            raise UsageError(
                "--aggregate goes with the report table: the page shows the means, and each metric's distribution in "
                "its own section. Hint: leave out --aggregate, or pass --format markdown."
            )
        return _report_page(args, progress)
    for option, value in (("--title", args.title), ("--sections", args.sections), ("--headline", args.headline)):
        if value is not None or (option == "--sections" and args.brief):
            option = "--brief" if option == "--sections" and args.sections is None else option
            raise UsageError(
                f"{option} {'names' if option == '--title' else 'shapes'} the page, and --format {fmt} writes a table. "
                f"Hint: leave out {option}, or write the page (--out FILE.html)."
            )
    recs, sides = _read(args, progress)
    kwargs = _api_kwargs(args)
    with progress.running("reading and evaluating"):
        summary = recframe.summary(recs, **sides, **kwargs, **_intervals(args)).collect(engine="streaming")
        comparison = None
        if args.baseline is not None:
            if not args.by:
                raise UsageError("--baseline compares models. Hint: pass --by model.")
            recs, sides = _read(args, Progress.for_stream(sys.stderr, True))
            per_user = recframe.per_user(recs, **sides, **kwargs).collect(engine="streaming")
            baseline = next((m for m in per_user[args.by[0]].unique().to_list() if str(m) == args.baseline), args.baseline)
            comparison = recframe.compare(per_user, by=args.by, baseline=baseline)
    table_format = "html" if fmt == "table-html" else fmt  # (recframe.report's name)
    text = recframe.report(summary, format=cast(Format, table_format), precision=args.precision, compare=comparison)
    return emit_text(args, text if text.endswith("\n") else text + "\n", fmt, progress)


def _user_ids(text: str, recs: pl.LazyFrame, user: str) -> list[Any]:
    """--users 1,2,3 as ids of the user column's type (numbers for a numeric column)."""
    ids = [part.strip() for part in text.split(",")]
    if not all(ids):
        raise UsageError(f"--users {text!r} has an empty id. Hint: separate the ids by single commas, e.g. --users 1,2,3.")
    dtype = recs.collect_schema().get(user)
    if dtype is not None and dtype.is_integer():
        bad = [i for i in ids if not i.lstrip("-").isdigit()]
        if bad:
            raise UsageError(
                f"--users: {bad[0]!r} is not a whole number, and the user column {user!r} holds {dtype}. Hint: pass ids such as --users 1,2,3."
            )
        return [int(i) for i in ids]
    if dtype is not None and dtype.is_float():
        return [float(i) for i in ids]
    return ids


def inspect_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe inspect``: a few users' lists (recframe.inspect), as the long table or, to an
    .html --out, the side-by-side page (recframe.side_by_side)."""
    page = args.format == "html" or (args.format is None and bool(args.out) and Path(args.out).suffix.lower() in PAGE_SUFFIXES)
    if args.max_users is not None and args.max_users < 1:  # checked whether or not this call writes the page
        raise UsageError(
            f"--max-users {args.max_users} must be a whole number >= 1: the users the page shows. "
            "Hint: pass e.g. --max-users 5, or leave it out to show all."
        )
    if page:
        if args.out and Path(args.out).is_dir():
            raise UsageError(f"--out {args.out!r} is a folder. Hint: pass a file name, e.g. --out inspect.html.")
        check_precision(args)
        fmt = "html"
    else:
        fmt = output_format(args)
    if args.metrics:
        raise UsageError("--metrics: inspect chooses users by one metric. Hint: pass --metric ndcg@10 (with --select worst).")
    if len(args.k) != 1:
        raise UsageError(
            f"--k {','.join(str(k) for k in args.k)}: inspect shows lists of one length. Hint: pass one, e.g. --k 10."
        )
    ids = None
    if args.users and not (Path(args.users).suffix.lower() in (".csv", ".parquet", ".pq") or Path(args.users).exists()):
        ids, args.users = args.users, None  # ids, not a file: read below, with the user column's type
    recs, sides = _read(args, progress)
    kwargs = {name: value for name, value in _api_kwargs(args).items() if name not in ("metrics", "k")}
    if ids is not None:
        sides["users"] = _user_ids(ids, recs, kwargs["user"] or "user_id")
    with progress.running("choosing users and reading their lists"):
        table = recframe.inspect(
            recs, k=args.k[0], select=args.select, n=args.n, seed=args.seed, metric=args.metric,
            show_images=args.image, **sides, **kwargs,
        ).collect(engine="streaming")  # fmt: skip
    # one line per tie the users were chosen from (--select worst, best, disagree): more users
    # share a chosen value than are shown (the frame's tied_users column)
    for sentence in frame_ties(table, kwargs["user"] or "user_id", [b for b in args.by or [] if b in table.columns], args.seed):
        print(f"recframe: note: {sentence}", file=sys.stderr, flush=True)
    if page:
        view = recframe.side_by_side(table, image=args.image, max_users=args.max_users)
        return emit_text(args, view.to_page(f"recframe inspect: {args.recs}"), "html", progress)
    if fmt != "parquet":  # text formats: a list column (genres) as one string
        lists = [c for c, dtype in table.schema.items() if isinstance(dtype, (pl.List, pl.Array))]
        table = table.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(", ") for c in lists)
    return emit(args, fmt, table, progress)


def demo() -> int:
    """``recframe demo``: the bundled sample, summarised by model."""
    recs, truth = load_sample()
    print(
        f"Bundled sample: {recs['model'].n_unique()} models, {recs['user_id'].n_unique()} users with lists, "
        f"{truth.height} held-out ratings (1-5); relevant = rating >= 4.\n"
    )
    table = recframe.summary(
        recs,
        truth=truth,
        k=[5, 10],
        metrics=["precision", "recall", "ndcg", "ap", "rr"],
        relevance="rating",
        threshold=4,
        by="model",
    )
    print(render(table, "table", 4, width=terminal_width()), end="")
    print(
        "\nn_users: users counted in the means; n_skipped: the others. n_unranked: users with a rating >= 4\n"
        "but no recommendation (counted, scored 0); n_no_relevant: users with no rating >= 4 (left out);\n"
        "n_no_truth: users recommended to with no held-out rating (left out).\n"
        "Python: recframe.summary(recs, truth=truth, k=[5, 10], relevance='rating', threshold=4, by='model')"
    )
    return EXIT_OK


# names recframe looks for when the default column is absent, for schema's suggestions
_LIKELY: dict[str, tuple[str, ...]] = {
    "user": ("user", "userid", "user_id", "uid", "customer_id", "visitor_id", "session_id", "query_id", "qid"),
    "item": ("item", "itemid", "item_id", "product_id", "movie_id", "doc_id", "docid", "sku", "iid"),
    "rank": ("rank", "position", "pos", "rnk", "ranking"),
    "score": ("score", "prediction", "pred", "predicted", "prob", "probability"),
    "relevance": ("relevance", "rating", "label", "grade", "target", "clicked", "click", "purchased"),
}


def _guess(role: str, columns: Sequence[str], taken: set[str]) -> str | None:
    free = [c for c in columns if c not in taken]
    for name in free:
        if name.lower() in _LIKELY[role]:
            return name
    close = difflib.get_close_matches(role, free, n=1, cutoff=0.6)
    return close[0] if close else None


def _schema_rows(
    label: str, source: Source, roles: dict[str, str | None], progress: Progress
) -> tuple[dict[str, Any], list[str]]:
    progress.stage(f"{label}: {source.describe()}")
    columns = dict(source.scan().collect_schema())
    used = {name: role for role, name in roles.items() if name is not None}
    n = len(source.files)
    print(f"{label}: {source.pattern} ({n} {source.reader} file{'s' if n > 1 else ''})")
    width = max(len(c) for c in [*columns, "column"])
    dwidth = max(len(str(d)) for d in [*columns.values(), "dtype"])
    print(f"  {'column':<{width}}  {'dtype':<{dwidth}}  used as")
    for name, dtype in columns.items():
        print(f"  {name:<{width}}  {str(dtype):<{dwidth}}  {used.get(name, '-')}")
    hints = []
    for role, wanted in roles.items():
        if wanted is None or wanted in columns:
            continue
        guess = _guess(role, list(columns), set(used))
        maybe = f" (maybe {flag(role)} {shlex.quote(guess)})" if guess else ""
        if role == "rank":
            score = _guess("score", list(columns), set(used))
            maybe = f" (maybe --score {shlex.quote(score)})" if score and not guess else maybe
            hints.append(f"{label} has no {wanted!r} column: pass --rank COLUMN or --score COLUMN{maybe}.")
        elif role == "user":
            hints.append(f"{label} has no {wanted!r} column: pass --user COLUMN{maybe}, or --no-user if the file is one list.")
        else:
            hints.append(f"{label} has no {wanted!r} column: pass {flag(role)} COLUMN{maybe}.")
    return columns, hints


def schema(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe schema``: the columns found and the ones evaluate would use."""
    recs = find_source(args.recs, "RECS")
    truth = find_source(args.truth, "--truth") if args.truth else None
    cols = column_kwargs(args)
    ordering = {"score": cols["score"]} if cols["score"] else {"rank": cols["rank"]}
    keys = {"user": cols["user"], "item": cols["item"]}
    by_roles = {b: "by" for b in cols["by"] or []}
    recs_roles = {**keys, **ordering} if truth else {**keys, **ordering, "relevance": cols["relevance"]}
    recs_columns, hints = _schema_rows("RECS", recs, recs_roles, progress)
    for name in by_roles:
        if name not in recs_columns:
            hints.append(f"RECS has no {name!r} column for --by.")
    if truth is not None:
        print()
        _, truth_hints = _schema_rows("TRUTH", truth, {**keys, "relevance": cols["relevance"]}, progress)
        hints += truth_hints
    taken = {c for c in (*recs_roles.values(), *by_roles) if c}
    groups = [c for c, d in recs_columns.items() if c not in taken and (d == pl.String or d == pl.Categorical or d == pl.Enum)]
    if groups and not cols["by"]:
        hints.append(
            f"to compare groups (models, variants), pass --by {groups[0]}"
            + (f" (text columns: {', '.join(groups)})." if len(groups) > 1 else ".")
        )
    score = _guess("score", [c for c in recs_columns if c not in taken], set())
    if cols["score"] is None and score and cols["rank"] in recs_columns:
        hints.append(
            f"ranks come from the {cols['rank']!r} column; pass --score {shlex.quote(score)} to rank by that score instead."
        )
    print()
    for hint in hints:
        print(f"hint: {hint}")
    try:
        # the API checks columns and dtypes when it builds the plan: nothing is read but the schema
        recframe.summary(recs.scan(), truth=truth.scan() if truth is not None else None, **cols)
    except RecframeError:
        print("check: evaluate would stop with the error below.")
        raise
    print("check: ok, `recframe evaluate` accepts these columns.")
    return EXIT_OK


# ---------------------------------------------------------------------------- main
