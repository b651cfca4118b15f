"""The ``recframe`` argument parser: every option, with its help text beside it."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Sequence
from typing import Any

import recframe
from recframe.cli._commands import (
    agreement_command,
    cohorts_command,
    compare_command,
    curve_command,
    demo,
    disparity_command,
    evaluate,
    inspect_command,
    item_groups_command,
    off_policy_command,
    per_item_command,
    report_command,
    schema,
)
from recframe.cli._files import SIDE_INPUTS
from recframe.cli._messages import CHECK_DUPLICATES, DEFAULT_K, UsageError, cli_words, flag
from recframe.cli._output import FORMATS
from recframe.conventions import CHOICES, TABLE
from recframe.engine import _validate
from recframe.errors import RecframeError
from recframe.options import DEFAULTS as OPTION_DEFAULTS
from recframe.profiles import PROFILES
from recframe.statistics import stats

# ---------------------------------------------------------------------------- parsing


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors that raise instead of printing usage and exiting."""

    def error(self, message: str) -> Any:
        if message.startswith("unrecognized arguments") and "-q" in message.split(":", 1)[1].split():
            message += ". Hint: -q means per query (evaluate only, as trec_eval's -q); pass --quiet for no progress."
        elif message.startswith("unrecognized arguments"):
            message += ". Hint: quote globs ('exports/*.parquet') so that recframe expands them, not the shell."
        if "Hint:" not in message:
            message += f". Hint: see '{self.prog} --help'."
        raise UsageError(message)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _columns(text: str) -> list[str]:
    """Column names separated by commas; an empty one (--by "", --by model,) is refused, never dropped."""
    if any(not part.strip() for part in text.split(",")):
        raise argparse.ArgumentTypeError(
            f"{text!r} has an empty column name. Hint: name the columns separated by single commas, e.g. --by model,fold."
        )
    return _split(text)


#: the words of a yes/no option value: on and off (shown), true and false (read too)
SWITCH = {"on": True, "off": False, "true": True, "false": False}


def _boolean(text: str) -> bool:
    """An on/off option value (argparse hands over strings); true and false are read too."""
    value = SWITCH.get(text.strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not on or off")
    return value


def _edges(text: str) -> list[int]:
    """--edges 5,20: whole numbers; recframe.user_cohorts checks the rest (above 1, increasing)."""
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} holds a value that is not a whole number. Hint: e.g. --edges 5,20.") from None


def _ks(text: str) -> list[int]:
    if any(not part.strip() for part in text.split(",")):
        raise argparse.ArgumentTypeError(
            f"{text!r} has an empty cut-off. Hint: separate cut-offs by single commas, e.g. --k 5,10,20."
        )
    values = []
    for part in _split(text) or [text]:
        try:
            values.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not a whole number. Hint: pass cut-offs separated by commas, e.g. --k 5,10,20."
            ) from None
    try:
        return list(_validate.cutoffs(values))  # the API's own checks: >= 1, not empty
    except RecframeError as error:
        raise argparse.ArgumentTypeError(cli_words(error)) from None


def _metrics(text: str) -> list[str]:
    try:
        return list(_validate.metric_names(_split(text)))
    except RecframeError as error:
        raise argparse.ArgumentTypeError(cli_words(error)) from None


def _default(name: str, function: Any = None) -> Any:
    """An option's default, from its one declaration: recframe.options, or the signature of
    `function` for the arguments it declares itself (k, k_max, compare's test options)."""
    if function is None:
        return OPTION_DEFAULTS[name]
    return inspect.signature(function).parameters[name].default


def _add_columns(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("columns (defaults as in recframe.per_user)")
    group.add_argument(
        "--user", default=_default("user"), metavar="COLUMN", help=f"the user column (default: {_default('user')})"
    )
    group.add_argument("--no-user", action="store_true", help="no user column: each file (per --by group) is one list")
    group.add_argument(
        "--item", default=_default("item"), metavar="COLUMN", help=f"the item column (default: {_default('item')})"
    )
    group.add_argument(
        "--rank", default=_default("rank"), metavar="COLUMN",
        help=f"1-based rank, empty = not recommended (default: {_default('rank')})",
    )  # fmt: skip
    group.add_argument("--score", metavar="COLUMN", help="rank by this column instead, highest first")
    group.add_argument(
        "--relevance",
        default=_default("relevance"),
        metavar="COLUMN",
        help=f"rating, grade or 0/1 label (default: {_default('relevance')})",
    )
    group.add_argument("--by", type=_columns, metavar="COL[,COL]", help="group keys, e.g. --by model: one result row per group")


def _add_inputs(p: argparse.ArgumentParser, cutoffs: bool = True, baseline: bool = True, trec: bool = False) -> None:
    """The options every evaluating command shares, in groups: the files, what is computed and
    counts as relevant, the columns, the beyond-accuracy inputs, the conventions and the data
    checks (and --baseline, unless the command has its own, which then serves both; and
    --run/--qrels in place of RECS and --truth, with `trec`)."""
    inputs = p.add_argument_group("inputs (parquet or CSV files, or quoted globs of them)")
    inputs.add_argument(
        "recs", metavar="RECS", nargs="?" if trec else None,
        help="the recommendations: a .parquet or .csv file, or a quoted glob of them" + (" (or --run)" if trec else ""),
    )  # fmt: skip
    for name, text in SIDE_INPUTS.items():
        inputs.add_argument(flag(name), metavar=name.upper(), help=text)
    inputs.add_argument(
        "--unlisted-users", choices=("error", "drop"), default=_default("unlisted_users"),
        help="with --users: a user with recommendations but not listed is an error (default) or left out",
    )  # fmt: skip
    if trec:
        files = p.add_argument_group("TREC files (instead of RECS and --truth; recframe.read_trec_run/read_trec_qrels)")
        files.add_argument(
            "--run", dest="trec_run", metavar="FILE", help="a TREC run file (qid Q0 docno rank score tag), ranked by score"
        )
        files.add_argument(
            "--qrels", dest="trec_qrels", metavar="FILE", help="its TREC qrels file (qid iter docno relevance), with --run"
        )
    computed = p.add_argument_group("what is computed, and what counts as relevant")
    if cutoffs:
        computed.add_argument(
            "--k", type=_ks, default=DEFAULT_K, metavar="K[,K]",
            help="cut-offs, e.g. 5,10,20 (default: 10; with --format trec, trec_eval's 5,10,15,20,30,100,200,500,1000)",
        )  # fmt: skip
    computed.add_argument(
        "--metrics",
        type=_metrics,
        metavar="M[,M]",
        help=f"some of {', '.join(recframe.METRICS)} (default: the accuracy metrics; the IR toolbox, such as bpref, "
        "and the beyond-accuracy metrics by name)",
    )
    computed.add_argument(
        "--threshold", "-l", type=float, metavar="T",
        help="relevant = relevance >= T (default: relevance > 0, which stderr says when the relevance column holds "
        "more than two values; -l as trec_eval's -l: -l2)",
    )  # fmt: skip
    computed.add_argument(
        "--score-threshold", type=float, metavar="S", help="with --score: items scored below S count as not recommended"
    )
    _add_columns(p)
    beyond = p.add_argument_group("beyond accuracy (see recframe.metrics.beyond)")
    beyond.add_argument("--item-features", type=_columns, metavar="COL[,COL]", help="the --items columns ild compares items by")
    if baseline:
        beyond.add_argument(
            "--baseline", metavar="MODEL", help="the --by model whose lists intersection and unexpectedness compare with"
        )
    beyond.add_argument(
        "--head-share", type=float, default=_default("head_share"), metavar="SHARE",
        help=f"long_tail's head: the most popular items holding this share of training pairs (default: {_default('head_share')})",
    )  # fmt: skip
    beyond.add_argument(
        "--item-group", metavar="COL",
        help="the --items column grouping the items (a category, a provider), or 'popularity' (head and tail of --train): "
        "for miscalibration, calibration_js, pop_rsp, pop_reo, exposure_disparity and the item-groups command",
    )  # fmt: skip
    _add_conventions(p)
    _add_checks(p)


def _add_conventions(p: argparse.ArgumentParser) -> None:
    """--profile and one option per convention (recframe.conventions.CHOICES), each defaulting
    to None so that only the options given reach the API."""
    conventions = p.add_argument_group("conventions (see recframe.conventions)")
    conventions.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=None,
        help="reproduce another library's conventions (explicit options below still win); "
        "docs/conventions.md has the table (default: recframe)",
    )
    for name, values in CHOICES.items():
        # default None: only options given on the command line reach the API, so its defaults
        # (and any option that sets others, such as a profile) keep their meaning
        # (a name in CHOICES without a TABLE entry gets a plain flag: new ones flow in)
        option, default = TABLE.get(name), values[0]
        kind: dict[str, Any] = {"choices": values}
        if option is not None and option.kind is float:  # a number, checked by the API
            kind, default = {"type": float, "metavar": "X"}, f"{default:g}"
        elif all(isinstance(value, bool) for value in values):  # on/off, not Python's True/False
            kind |= {"type": _boolean, "metavar": "{on,off}"}
            default = "on" if default else "off"
        text = option.help if option is not None else "see help(recframe.per_user)"
        conventions.add_argument(flag(name), dest=name, default=None, help=f"{text} (default: {default})", **kind)


def _add_checks(p: argparse.ArgumentParser) -> None:
    """--check-duplicates and --no-checks (recframe.options: check_duplicates, checks)."""
    checks = p.add_argument_group("data checks")
    checks.add_argument(
        "--check-duplicates",
        choices=tuple(CHECK_DUPLICATES),
        # (None: not typed, so the API's default; --no-checks then implies none)
        help="look for repeated items and ranks in the rows that can change a number (used: relevant rows and "
        "ranks within the largest k), in every row (all), or not at all, for data known to be clean (none) "
        f"(default: {next(word for word, value in CHECK_DUPLICATES.items() if value == _default('check_duplicates'))})",
    )
    checks.add_argument(
        "--no-check-duplicates",
        dest="check_duplicates",
        action="store_const",
        const="none",
        help="the same as --check-duplicates none",
    )
    assert _default("checks") is True  # the flag switches the default off
    checks.add_argument(
        "--no-checks",
        dest="checks",
        action="store_const",
        const=False,
        help="run no data check at all (recframe.per_user's checks=False), for speed on data you vouch for: a defect "
        "(duplicate rows, NaN relevance, rank gaps, ...) then gives wrong numbers silently; said on stderr",
    )


def _add_output(p: argparse.ArgumentParser, formats: Sequence[str] = FORMATS) -> argparse._ArgumentGroup:
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=formats, help="default: from the --out extension, else " + formats[0])
    out.add_argument("--out", metavar="FILE", help="write here instead of stdout, atomically (temporary file, then rename)")
    out.add_argument("--precision", type=int, default=4, metavar="N", help="decimals shown in table and markdown (default: 4)")
    return out


def _add_aggregate(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    means = p.add_argument_group("the means (recframe.summary)")
    means.add_argument(
        "--aggregate", type=_split, metavar="A[,A]",
        help="how each metric is summarised: mean (default), gmean, median, pNN (p10, p90); several: the mean keeps "
        "the metric's name, the others are suffixed (ndcg@10_median)",
    )  # fmt: skip
    return means


def _add_intervals(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("intervals (recframe.summary's ci=)")
    group.add_argument("--ci", type=float, metavar="LEVEL", help="add an interval of each mean at this coverage, e.g. 0.95")
    group.add_argument(
        "--ci-method",
        choices=stats.CI_METHODS,
        default=_default("ci_method"),
        help=f"bootstrap, t (needs scipy) or poisson (the bootstrap inside the engine); default: {_default('ci_method')}",
    )
    group.add_argument(
        "--n-resamples", type=int, default=_default("n_resamples"), metavar="N",
        help=f"bootstrap resamples (default: {_default('n_resamples')})",
    )  # fmt: skip
    group.add_argument("--seed", type=int, metavar="N", help="seed of the bootstrap: the same seed gives the same intervals")


def _add_evaluate(commands: Any, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser(
        "evaluate",
        parents=[common],
        help="evaluate recommendation files (parquet or CSV) and print or write the metrics",
        description="Evaluate recommendations in parquet or CSV files (paths or quoted globs), read lazily and run "
        "on the Polars streaming engine. Prints the means by --by group (or per user) as a table, or writes "
        "csv/json/parquet/markdown. With --run and --qrels (TREC files), --format trec prints what "
        "trec_eval 10.0 prints, line for line, with its -q, -m, -c, -J, -M, -N, -n and -l flags (--profile "
        "trec_eval9: trec_eval 9.0.8; see docs/ir.md). "
        "Exit codes: 0 ok, 2 bad usage or input, 1 unexpected failure.",
    )
    _add_inputs(p, trec=True)
    _add_intervals(p)
    _add_aggregate(p).add_argument(
        "--partitions", type=int, metavar="N",
        help="evaluate the users in N sets (by a hash of the id), one after another, and add up their sums: the same "
        "means in about 1/N of the memory, for reading the files N times (recframe.summary's partitions=; means, "
        "gmean and --ci-method t only; with --score, ties at the cut-offs are not looked for, which stderr says)",
    )  # fmt: skip
    out = _add_output(p, (*FORMATS, "trec"))
    out.add_argument(
        "--per-user", "-q", action="store_true",
        help="one row per user (and --by group) instead of the means; with --format trec, each query's lines "
        "before the 'all' lines (trec_eval's -q)",
    )  # fmt: skip
    trec = p.add_argument_group("trec_eval's flags (with --run, --qrels and --format trec; docs/ir.md)")
    trec.add_argument(
        "-m", "--measure", action="append", default=None, metavar="MEASURE[.PARAMS]",
        help="a trec_eval measure or set, repeatable: official (default), all_trec, set, P.5,10, ndcg_cut.10, "
        "relstring.20, ndcg.1=1,2=3 ...",
    )  # fmt: skip
    trec.add_argument(
        "-c", "--complete", action="store_true", help="average over every query of the qrels: a query the run lacks scores 0"
    )
    trec.add_argument(
        "-J", "--judged-only", action="store_true", help="drop retrieved documents without a judgement and close up the ranks"
    )
    trec.add_argument("-M", "--max-retrieved", type=int, metavar="N", help="evaluate each query's first N documents only")
    trec.add_argument(
        "-N",
        "--docs-in-collection",
        type=int,
        default=0,
        metavar="N",
        help="documents in the collection (utility's 4th term; default: 0)",
    )
    trec.add_argument("-n", "--no-summary", action="store_true", help="no 'all' lines")
    p.set_defaults(run=evaluate)


def _add_tests(group: argparse._ArgumentGroup, function: Any, tests: Sequence[str]) -> None:
    """--test, --correction, --alpha, --seed and --n-resamples, with `function`'s defaults."""
    test, alpha, resamples = (_default(name, function) for name in ("test", "alpha", "n_resamples"))
    group.add_argument("--test", choices=tests, default=test, help=f"default: {test} (a t test needs scipy)")
    own = "; tukey_hsd controls its family itself and takes none" if "tukey_hsd" in tests else ""
    group.add_argument(
        "--correction", choices=("holm", "bonferroni", "none"), default=_default("correction", function),
        help=f"multiple-testing correction over every row (default: {_default('correction', function)}{own})",
    )  # fmt: skip
    group.add_argument("--alpha", type=float, default=alpha, help=f"significance level (default: {alpha})")
    group.add_argument("--seed", type=int, metavar="N", help="seed of the resampling tests and the bootstrap")
    group.add_argument("--n-resamples", type=int, default=resamples, metavar="N", help=f"resamples (default: {resamples})")


def _add_views(commands: Any, common: argparse.ArgumentParser) -> None:
    """The long tables of the same evaluation (item groups, items, agreement) and the cohorts file."""
    g = commands.add_parser(
        "item-groups",
        parents=[common],
        help="what each group of items (--item-group) gets: its shares of the catalog, the relevant items, the slots "
        "and the exposure, and its recall",
        description="recframe.item_groups: one row per (--by group, item group), long format. Exit codes as evaluate.",
    )
    _add_inputs(g)
    _add_output(g)
    g.set_defaults(run=item_groups_command)

    i = commands.add_parser(
        "per-item",
        parents=[common],
        help="who each item reaches: the lists that rank it, the users it is relevant to, and per k its "
        "recommendations, hits, recall and exposure",
        description="recframe.per_item: one row per (--by group, item). Exit codes as evaluate.",
    )
    _add_inputs(i)
    _add_output(i)
    i.set_defaults(run=per_item_command)

    a = commands.add_parser(
        "agreement",
        parents=[common],
        help="how far the models' top-k lists agree, per user and pair of models: overlap, Jaccard, RBO, Kendall's tau",
        description="recframe.agreement: one row per (pair of models, user), --by naming the model column first. "
        "Exit codes as evaluate.",
    )
    _add_inputs(a)
    a.add_argument("--p", type=float, default=_default("p", recframe.agreement), help="RBO's persistence (default: 0.9)")
    _add_output(a)
    a.set_defaults(run=agreement_command)

    c = commands.add_parser(
        "cohorts",
        parents=[common],
        help="every user of RECS (and --truth) with a cohort by training activity: a --users file for --by cohort",
        description="recframe.user_cohorts: one row per user with n_train (distinct training items) and the cohort, "
        "'cold' for a user without a training row, then equal-size bins (--bins) or bins cut at --edges. Write it "
        "with --out users.parquet and pass it as --users with --by model,cohort. Exit codes as evaluate.",
    )
    c.add_argument("recs", metavar="RECS", help="the recommendations (parquet or CSV, or a quoted glob)")
    c.add_argument("--train", required=True, metavar="TRAIN", help="the training interactions (user, item)")
    c.add_argument("--truth", metavar="TRUTH", help="the ground truth, when apart: its users are listed too")
    c.add_argument("--bins", type=int, metavar="N", help="equal-size bins of the active users (default: 4)")
    c.add_argument("--edges", type=_edges, metavar="E[,E]", help="the smallest count of each bin after the first, e.g. 5,20")
    for name in ("user", "item"):
        default = OPTION_DEFAULTS[name]
        c.add_argument(f"--{name}", default=default, metavar="COLUMN", help=f"the {name} column (default: {default})")
    c.add_argument("--name", default="cohort", metavar="COLUMN", help="the cohort column (default: cohort)")
    _add_output(c)
    c.set_defaults(run=cohorts_command)


def _add_reporting(commands: Any, common: argparse.ArgumentParser) -> None:
    c = commands.add_parser(
        "compare",
        parents=[common],
        help="compare every model with a baseline, or every pair of models, user by user, with a paired test per metric",
        description="Per-user metrics by --by (the model column first, then any segment or fold keys to compare "
        "within), then recframe.compare: against --baseline, or without it every pair of models (with d_z and "
        "wins, ties and losses; --test tukey_hsd tests every pair at once). Exit codes as evaluate.",
    )
    _add_inputs(c, baseline=False)
    tests = c.add_argument_group("the comparison (recframe.compare)")
    tests.add_argument(
        "--baseline", metavar="MODEL",
        help="the value of the first --by key the others are compared with (default: every pair of models)",
    )  # fmt: skip
    _add_tests(tests, recframe.compare, stats.TESTS)
    _add_output(c)
    c.set_defaults(run=compare_command)

    d = commands.add_parser(
        "disparity",
        parents=[common],
        help="the gap of each metric between groups of users (segments, markets), per model, with an unpaired test",
        description="Per-user metrics by --by and --group (a column of --users), then recframe.disparity: each "
        "group's mean and count, the largest gap, the ratio and an unpaired test. Exit codes as evaluate.",
    )
    _add_inputs(d, baseline=False)
    gaps = d.add_argument_group("the groups (recframe.disparity)")
    gaps.add_argument(
        "--group", required=True, metavar="COLUMN", help="the user attribute (a column of --users) holding each user's group"
    )
    gaps.add_argument(
        "--pairs", choices=("extremes", "all"), default=_default("pairs", recframe.disparity),
        help="test the highest group against the lowest (default), or every pair of groups",
    )  # fmt: skip
    _add_tests(gaps, recframe.disparity, stats.UNPAIRED_TESTS)
    _add_output(d)
    d.set_defaults(run=disparity_command)

    k = commands.add_parser(
        "curve",
        parents=[common],
        help="mean metrics at every cut-off k = 1..K-MAX, in long format (and a plot)",
        description="recframe.curve: one row per (group, k) with the mean of each metric; precision and recall are "
        "always included, so every row is also a precision-recall point.",
    )
    _add_inputs(k, cutoffs=False)
    k_max = _default("k_max", recframe.curve)
    k.add_argument("--k-max", type=int, default=k_max, metavar="K", help=f"the largest cut-off (default: {k_max})")
    _add_intervals(k)
    out = _add_output(k)
    out.add_argument(
        "--plot", metavar="PNG", help="also draw the curves of --metrics (default: ndcg) to this image (needs matplotlib)"
    )
    k.set_defaults(run=curve_command)
    _add_report(commands, common)


def _add_report(commands: Any, common: argparse.ArgumentParser) -> None:
    r = commands.add_parser(
        "report",
        parents=[common],
        help="a report table of the means (with intervals) and, with --baseline, the paired comparison; or the "
        "evaluation page (--out FILE.html)",
        description="recframe.report of summary (with --ci intervals) and, given --baseline, of compare: markdown, "
        "table-html (the table alone, an HTML fragment) or latex, to stdout or --out. With --format page, or --out FILE.html and no --format: "
        "recframe.report_page, one self-contained HTML page (intervals at 0.95 unless --ci).",
    )
    _add_inputs(r, baseline=False)
    _add_intervals(r)
    _add_aggregate(r)
    r.add_argument("--baseline", metavar="MODEL", help="also compare every model with this one (paired t test, Holm)")
    out = r.add_argument_group("output")
    out.add_argument(
        "--format", choices=REPORT_FORMATS, metavar="{markdown,table-html,latex,page}",
        help="page: the evaluation page, one self-contained HTML file; table-html: the report table alone, an HTML "
        "fragment to paste into a page of yours (html, its old name, is read too); default: page when --out ends in "
        ".html or .htm, else markdown",
    )  # fmt: skip
    out.add_argument("--out", metavar="FILE", help="write here instead of stdout, atomically")
    precision = _default("precision", recframe.report)
    out.add_argument("--precision", type=int, default=precision, metavar="N", help=f"decimals shown (default: {precision})")
    out.add_argument(
        "--title", metavar="TEXT", help="the page's title and heading (default: recframe evaluation); with the page only"
    )
    out.add_argument(
        "--headline", metavar="METRIC", help="the verdict's headline metric, e.g. ndcg@10 (default: the first of nDCG, AP, "
        "RR asked, else the first metric, at the smallest k); with the page only",
    )  # fmt: skip
    out.add_argument(
        "--sections", metavar="NAMES", help="the page's sections, separated by commas (default: all): summary, comparison, "
        "segments (the main part), comparison_table, evaluated, pairs, curves, distributions, segment_tables, folds, "
        "agreement, beyond, item_groups, examples, glossary (the appendix); brief, all",
    )  # fmt: skip
    out.add_argument("--brief", action="store_true", help="the main part of the page alone: --sections brief")
    r.set_defaults(run=report_command)


def _add_off_policy(commands: Any, common: argparse.ArgumentParser) -> None:
    """``recframe off-policy``: recframe.off_policy's arguments, the files as LOGS and --recommendations."""
    o = commands.add_parser(
        "off-policy",
        parents=[common],
        help="what a target policy would have earned on logged traffic: IPS, SNIPS, DR and more, from logs with propensities",
        description="recframe.off_policy: one row per (--by group, estimator) with the value, its se and normal "
        "interval, the logs' on-policy value and the lift, the effective sample size, the largest weight and the "
        "supported share. The target policy is a column of LOGS (--target, its probability of the logged item) or "
        "its rankings (--recommendations: context, item, rank). See docs/off-policy.md. Exit codes as evaluate.",
    )
    default = inspect.signature(recframe.off_policy).parameters
    inputs = o.add_argument_group("inputs (parquet or CSV files, or quoted globs of them)")
    inputs.add_argument(
        "logs", metavar="LOGS", help="the logs: one row per logged slot (context, item, position, propensity, reward)"
    )
    inputs.add_argument(
        "--recommendations", metavar="RECS", help="the target policy as rankings (context, item, rank; --by a model column)"
    )
    inputs.add_argument(
        "--target", metavar="COLUMN", help="or the target policy as a column of LOGS: its probability of the logged item"
    )
    est = o.add_argument_group("the estimators (recframe.off_policy)")
    est.add_argument(
        "--estimators", type=_columns, metavar="E[,E]",
        help="single slot: ips, snips, clipped_ips (--max-weight), dm (--target-predicted), dr, sndr (and --predicted), "
        "switch_dr (and --switch-threshold); slates: sips, iips, rips. Default: ips, snips and each other one whose "
        "inputs are given",
    )  # fmt: skip
    est.add_argument("--max-weight", type=float, metavar="W", help="clipped IPS's largest weight (> 0)")
    est.add_argument("--switch-threshold", type=float, metavar="TAU", help="switch-DR's threshold on the weight (>= 0)")
    ci = default["ci"].default
    est.add_argument("--ci", type=float, default=ci, metavar="LEVEL", help=f"the normal interval's coverage (default: {ci})")
    est.add_argument(
        "--k", type=_ks, default=[default["k"].default], metavar="K[,K]",
        help=f"the click metrics' cut-offs (click_dcg, click_precision, click_recall; default: {default['k'].default})",
    )  # fmt: skip
    est.add_argument(
        "--examination", metavar="FILE|COLUMN",
        help="the click metrics' examination propensities: a parquet or CSV file (position, propensity), or the "
        "boolean column of LOGS that marks randomized traffic (p_k = CTR_k / CTR_1 there)",
    )  # fmt: skip
    est.add_argument(
        "--per-context", action="store_true",
        help="each context's value of each estimator instead (a column each; SNIPS and SNDR: influence values), whose "
        "mean is the estimate: for recframe.compare(..., user=CONTEXT, metrics=ESTIMATORS), paired by context",
    )  # fmt: skip
    columns = o.add_argument_group("columns (defaults as in recframe.off_policy)")
    for name, text in _OFF_POLICY_COLUMNS.items():
        columns.add_argument(flag(name), default=default[name].default, metavar="COLUMN", help=text.format(default[name].default))
    columns.add_argument("--no-position", action="store_true", help="no position column: every row is position 1 (a single slot)")
    columns.add_argument("--predicted", metavar="COLUMN", help="a reward model's prediction q(x, a) for the logged item (LOGS)")
    columns.add_argument(
        "--target-predicted", metavar="COLUMN",
        help="q(x, pi_e): a column of LOGS with --target, of --recommendations (for the item at the logged position) with it",
    )  # fmt: skip
    columns.add_argument(
        "--by", type=_columns, metavar="COL[,COL]", help="group keys: the model (LOGS or --recommendations), segments, days"
    )
    _add_output(o)
    o.set_defaults(run=off_policy_command)


#: off-policy's column options with a default (recframe.off_policy's), and their help
_OFF_POLICY_COLUMNS = {
    "context": "the context (impression, request) column (default: {})",
    "item": "the item shown (default: {})",
    "position": "the logged position, 1 at the top (default: {})",
    "propensity": "the logging policy's probability of the logged item there, in (0, 1] (default: {})",
    "reward": "the reward: click, purchase, a number (default: {})",
    "rank": "the rank column of --recommendations (default: {})",
}


def _add_inspect(commands: Any, common: argparse.ArgumentParser) -> None:
    i = commands.add_parser(
        "inspect",
        parents=[common],
        help="the lists of a few users side by side: history, each model's top k, the held-out items, hits marked",
        description="recframe.inspect: chooses users (--users, or --select random/worst/best/disagree/overlap, --n per "
        "segment) and prints one row per (user, list, position), or writes csv/json/parquet, or with --out "
        "FILE.html a self-contained page of recframe.side_by_side. Given or random users: only their rows are "
        "read. Exit codes as evaluate.",
    )
    _add_inputs(i)
    chosen = i.add_argument_group("which users (recframe.inspect)")
    chosen.add_argument(
        "--select", choices=("random", "given", "worst", "best", "disagree", "overlap"), default=_default("select", recframe.inspect),
        help="random users (default; with --users: those users), the worst or best by --metric, where the --by models "
        "disagree most (largest gap of --metric), or whose models' top k overlap least",
    )  # fmt: skip
    n_default, seed_default = _default("n", recframe.inspect), _default("seed", recframe.inspect)
    chosen.add_argument(
        "--n",
        type=int,
        default=n_default,
        metavar="N",
        help=f"users chosen, per segment (default: {n_default}; more than there are: all of them)",
    )
    chosen.add_argument(
        "--seed", type=int, default=seed_default, metavar="N", help=f"seed of the random order (default: {seed_default})"
    )
    chosen.add_argument(
        "--metric", metavar="COLUMN", help="the per-user column users are chosen by, e.g. ndcg@10 (default: ndcg at --k)"
    )
    view = i.add_argument_group("the page (--out FILE.html)")
    view.add_argument("--image", metavar="COLUMN", help="the --items column of image URLs to show (they need the network)")
    view.add_argument("--max-users", type=int, metavar="N", help="show the first N users only (default: all)")
    _add_output(i, (*FORMATS, "html"))
    i.set_defaults(run=inspect_command)


#: report's --format values: html is table-html's old name, still read (with a note on stderr)
REPORT_FORMATS = ("markdown", "table-html", "latex", "page", "html")
#: each subcommand's usage line (argparse's would list every option: 43 lines for evaluate)
USAGE = {
    "evaluate": "%(prog)s RECS [--truth TRUTH] [options]\n       %(prog)s --run RUN --qrels QRELS --format trec "
    "[trec_eval's flags]",
    "cohorts": "%(prog)s RECS --train TRAIN [options]",
    "schema": "%(prog)s RECS [--truth TRUTH] [column options]",
    "demo": "%(prog)s [--quiet] [--debug]",
    "off-policy": "%(prog)s LOGS (--target COLUMN | --recommendations RECS) [--estimators E[,E]] [options]",
}


def _common(per_user: bool = False) -> _Parser:
    """--quiet and --debug, which every subcommand has; the note that -q is not --quiet where
    -q is --per-user (`per_user`, evaluate's)."""
    common = _Parser(add_help=False)
    run = common.add_argument_group("run")
    note = " (-q is --per-user, as trec_eval's -q)" if per_user else ""
    run.add_argument("--quiet", action="store_true", help=f"no progress on stderr{note}")
    run.add_argument("--debug", action="store_true", help="print the traceback of errors")
    return common


def build_parser() -> argparse.ArgumentParser:
    """The ``recframe`` argument parser with its subcommands."""
    common = _common()
    parser = _Parser(prog="recframe", description=f"recframe {recframe.__version__}: ranking metrics on DataFrames.")
    parser.add_argument("--version", action="version", version=f"recframe {recframe.__version__}")
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="{evaluate,compare,disparity,item-groups,per-item,agreement,cohorts,curve,report,inspect,off-policy,demo,schema}",
    )
    _add_evaluate(commands, _common(per_user=True))
    _add_reporting(commands, common)
    _add_views(commands, common)
    _add_inspect(commands, common)
    _add_off_policy(commands, common)
    demo_parser = commands.add_parser(
        "demo",
        parents=[common],
        help="evaluate the bundled two-model sample and print a summary by model",
        description="Evaluate the bundled sample (recframe.data.load_sample: two models' top-10 lists for 300 users, "
        "and held-out 1-5 ratings; relevant = rating >= 4) at k = 5 and 10, and print precision, recall, ndcg, ap "
        "and rr by model, with what each count column means and the Python call that gives the same table.",
    )
    demo_parser.set_defaults(run=lambda args, progress: demo())
    s = commands.add_parser(
        "schema",
        parents=[common],
        help="show the columns of an export and which ones recframe would use",
        description="Print the columns and dtypes of RECS (and TRUTH) and the columns evaluate would use with the "
        "given column options; exit 2 when evaluate would reject them.",
    )
    s.add_argument("recs", metavar="RECS", help="a .parquet or .csv file, or a quoted glob of them")
    s.add_argument("--truth", metavar="TRUTH", help="ground truth file or glob")
    _add_columns(s)
    s.set_defaults(run=schema)
    for name, sub in commands.choices.items():
        sub.usage = USAGE.get(name, "%(prog)s RECS [--truth TRUTH] [options]")
    return parser
