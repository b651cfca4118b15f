"""The ``recframe`` command: evaluate parquet or CSV exports, show the sample, map an export's columns.

A thin layer over :func:`recframe.summary` and :func:`recframe.per_user`: this module parses the
command line (argparse, from the standard library, so the command adds no dependency), reads the
files lazily, runs the API on the Polars streaming engine, writes the result and maps every
failure to an exit code and a one-line message. Nothing here computes a metric.

Exit codes: 0 success; 2 bad usage or bad input (a missing file or column, a bad option value,
a malformed CSV), with one line on stderr naming the file or column and the fix; 1 an
unexpected failure (rerun with ``--debug`` for the traceback); 130 interrupted.

Examples
--------
>>> from recframe.cli import main
>>> from recframe.data import HERE
>>> recs, truth = str(HERE / "recs.csv"), str(HERE / "truth.csv")
>>> main(["evaluate", recs, "--truth", truth, "--relevance", "rating", "--threshold", "4",
...       "--by", "model", "--k", "5", "--metrics", "precision,ndcg", "--format", "markdown", "--quiet"])
| model    | n_users | n_skipped | n_unranked | n_no_relevant | n_no_truth | precision@5 | ndcg@5 |
|----------|---------|-----------|------------|---------------|------------|-------------|--------|
| personal | 287     | 13        | 0          | 13            | 0          | 0.4662      | 0.7372 |
| popular  | 287     | 13        | 5          | 13            | 0          | 0.3031      | 0.4488 |
0
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import difflib
import glob
import itertools
import os
import re
import shlex
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import narwhals as nw
import polars as pl

import recframe
from recframe import _validate
from recframe.conventions import CHOICES, DEFAULTS, TABLE, describe
from recframe.data import load_sample
from recframe.errors import RecframeError
from recframe.profiles import PROFILES

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: file extension -> how to read it
READERS: dict[str, str] = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}
#: --out extension -> the output format it implies when --format is not given
OUT_FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "table",
}
FORMATS = ("table", "csv", "json", "parquet", "markdown")
#: file-valued API arguments of `evaluate`: the flag --NAME FILE passes the file as NAME=
SIDE_INPUTS: dict[str, str] = {
    "truth": "ground truth (user, item, relevance, any fold/date keys): joined on user, item and those keys",
    "users": "the users to evaluate, one row each, with attribute columns --by may name (segment, cohort)",
    "exclude": "(user, item) pairs to leave out, e.g. the training interactions; lists are re-ranked",
}
# decimals shown: float64 holds about 17 significant digits, so more would show noise
MAX_PRECISION = 17
# CSV exports can switch from ints to floats deep into a file: look further than Polars' 100 rows
CSV_INFER_ROWS = 10_000


class UsageError(Exception):
    """Bad usage or input found by the command line itself: exit code 2, message as given."""


# ---------------------------------------------------------------------------- messages


_API_ARGS = (
    "k",
    "metrics",
    "user",
    "item",
    "rank",
    "score",
    "relevance",
    "threshold",
    "by",
    *SIDE_INPUTS,
    "unlisted_users",
    "score_threshold",
)
_FLAG_NAMES = (*_API_ARGS, "profile", *CHOICES, "check_duplicates")
_FLAG = "|".join(sorted(_FLAG_NAMES, key=len, reverse=True))
_BARE_ARG = re.compile(rf"\b({_FLAG})=(?=[\s)])")
_ARG_VALUE = re.compile(rf"\b({_FLAG})=(\"[^\"]*\"|'[^']*'|\[[^\]]*\]|-?\w+(?:\.\w+)*)")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _flag_value(match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    if value == "None":
        return {"user": "--no-user", **{side: f"no --{side}" for side in SIDE_INPUTS}}.get(name, f"no {_flag(name)}")
    if name == "check_duplicates":
        return "--no-check-duplicates" if value == "False" else "(no --no-check-duplicates)"
    if value.startswith("["):
        value = ",".join(part.strip(" '\"") for part in value[1:-1].split(","))
    elif value[0] in "'\"":
        value = shlex.quote(value[1:-1])
    return f"{_flag(name)} {value}"


def cli_words(message: str) -> str:
    """Say an API message in command-line words: ``(rank=)`` -> ``(--rank)``, and in the hint
    ``pass relevance="rating"`` -> ``pass --relevance rating``.

    Only the hint gets values translated: before it, ``user=1`` may be a user's column and value.

    Examples
    --------
    >>> cli_words('column \\'r\\' (the rank= argument) is missing. Hint: pass rank="pos" or score="p".')
    "column 'r' (the --rank argument) is missing. Hint: pass --rank pos or --score p."
    >>> cli_words("k=0 must be >= 1. Hint: pass e.g. k=[5, 10], or user=None.")
    'k=0 must be >= 1. Hint: pass e.g. --k 5,10, or --no-user.'
    """
    head, sep, hint = message.partition("Hint: ")
    head = _BARE_ARG.sub(lambda m: _flag(m.group(1)), head)
    hint = _ARG_VALUE.sub(_flag_value, hint.replace("pass truth=None", "leave out --truth"))
    return head + sep + _BARE_ARG.sub(lambda m: _flag(m.group(1)), hint)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _polars_message(error: Exception) -> str:
    # Polars appends plan dumps and Python-API advice after a blank line: keep the first paragraph
    return _one_line(str(error).split("\n\n")[0]) or type(error).__name__


# ---------------------------------------------------------------------------- progress


class Progress:
    """Stage lines and a spinner on stderr, or nothing.

    ``Progress.for_stream(sys.stderr, quiet)`` is silent unless the stream is a terminal and
    ``quiet`` is False, so piped and scheduled runs print nothing but errors.

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> progress = Progress(stream)
    >>> progress.stage("found 2 files")
    >>> with progress.running("evaluating"):
    ...     pass
    >>> print(stream.getvalue().splitlines()[0])
    recframe: found 2 files
    >>> Progress.for_stream(io.StringIO(), quiet=False).enabled  # not a terminal
    False
    """

    FRAMES = "|/-\\"

    def __init__(self, stream: TextIO | None, interval: float = 0.2) -> None:
        self.stream = stream
        self.interval = interval

    @classmethod
    def for_stream(cls, stream: TextIO, quiet: bool) -> Progress:
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError):  # a closed or odd stream is no terminal
            terminal = False
        return cls(stream if terminal and not quiet else None)

    @property
    def enabled(self) -> bool:
        return self.stream is not None

    def stage(self, text: str) -> None:
        if self.stream is not None:
            print(f"recframe: {text}", file=self.stream, flush=True)

    @contextlib.contextmanager
    def running(self, text: str) -> Iterator[None]:
        """Spin with the elapsed seconds while the block runs (Polars releases the GIL while it
        collects, so the thread keeps ticking), then print how long it took."""
        stream = self.stream
        if stream is None:
            yield
            return
        start = time.perf_counter()
        done = threading.Event()

        def spin() -> None:
            for frame in itertools.cycle(self.FRAMES):
                if done.wait(self.interval):
                    return
                stream.write(f"\rrecframe: {text} {frame} {time.perf_counter() - start:.1f} s")
                stream.flush()

        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            stream.write(f"\r\033[Krecframe: {text}: {time.perf_counter() - start:.1f} s\n")
            stream.flush()


# ---------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Source:
    """The files one RECS or TRUTH argument names, and how to read them."""

    pattern: str
    files: tuple[str, ...]
    reader: str  # "parquet" or "csv"

    def scan(self) -> pl.LazyFrame:
        if self.reader == "parquet":
            return pl.scan_parquet(list(self.files))
        return pl.scan_csv(list(self.files), infer_schema_length=CSV_INFER_ROWS)

    def check_rows(self) -> None:
        """CSV only: every row must have the header's number of fields. Polars reads a short
        row (a half-written export) as nulls, which would silently drop a relevant item."""
        if self.reader == "csv":
            for path in self.files:
                _check_csv_fields(path)

    def describe(self) -> str:
        size = sum(os.path.getsize(f) for f in self.files)
        n = len(self.files)
        return f"{self.pattern} ({n} {self.reader} file{'s' if n > 1 else ''}, {_size(size)})"


def _check_csv_fields(path: str) -> None:
    """Raise UsageError at the first line of `path` whose field count is not the header's.

    Lines are counted by their commas in one Polars pass; the few lines with quotes (where a
    comma may sit inside a field) are parsed with the csv module. Blank lines are skipped, as
    the reader skips them.
    """
    lines = pl.scan_csv(
        path, has_header=False, separator="\x1f", quote_char=None, new_columns=["line"], schema={"line": pl.String}
    ).with_row_index("number", offset=1)
    lines = lines.filter(pl.col("line").is_not_null() & (pl.col("line").str.strip_chars() != ""))
    rows = lines.with_columns(
        quoted=pl.col("line").str.contains('"', literal=True),
        fields=pl.col("line").str.count_matches(",", literal=True) + 1,
    ).collect(engine="streaming")
    if rows.height == 0:
        return

    def count(line: str) -> int:
        return len(next(csv.reader([line])))

    header = rows.row(0, named=True)
    expected = count(header["line"]) if header["quoted"] else header["fields"]
    body = rows.slice(1)
    plain = body.filter(~pl.col("quoted") & (pl.col("fields") != expected)).head(1)
    candidates = [(r["number"], r["line"], r["fields"]) for r in plain.iter_rows(named=True)]
    for r in body.filter(pl.col("quoted")).iter_rows(named=True):
        n = count(r["line"])
        if n != expected:
            candidates.append((r["number"], r["line"], n))
            break
    if candidates:
        number, line, n = min(candidates)
        shown = line if len(line) <= 60 else line[:57] + "..."
        raise UsageError(
            f"{path}, line {number}: {n} field(s) where the header has {expected} ({shown!r}). Hint: the file "
            "looks truncated or ragged (a half-written export?): regenerate it, or fix that line."
        )


def _size(n_bytes: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n_bytes < 1024 or unit == "GB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1024
    return ""  # pragma: no cover


def find_source(pattern: str, label: str) -> Source:
    """Expand `pattern` (a path or a glob) to its files; raise :class:`UsageError` when there are
    none or when their extensions do not say one format recframe reads."""
    if glob.has_magic(pattern):
        files = sorted(f for f in glob.glob(pattern, recursive=True) if os.path.isfile(f))
        if not files:
            raise UsageError(
                f"{label} {pattern!r}: no file matches. Hint: check the folder and the pattern "
                "(quote globs, e.g. 'exports/*.parquet', so that recframe expands them)."
            )
    elif os.path.isdir(pattern):
        raise UsageError(f"{label} {pattern!r} is a folder. Hint: pass a glob such as '{os.path.join(pattern, '*.parquet')}'.")
    elif not os.path.exists(pattern):
        raise UsageError(f"{label} {pattern!r}: no such file. Hint: check the path, or pass a glob such as 'exports/*.parquet'.")
    else:
        files = [pattern]
    readers = {READERS.get(Path(f).suffix.lower()) for f in files}
    if None in readers:
        odd = next(f for f in files if Path(f).suffix.lower() not in READERS)
        raise UsageError(
            f"{label} {odd!r}: recframe reads .parquet and .csv files, not {Path(odd).suffix or 'files without an extension'!r}. "
            "Hint: export to parquet or CSV, or narrow the glob (e.g. '*.parquet')."
        )
    if len(readers) > 1:
        raise UsageError(f"{label} {pattern!r} matches both parquet and CSV files. Hint: narrow the glob to one of them.")
    return Source(pattern, tuple(files), str(readers.pop()))  # (None was ruled out above)


# ---------------------------------------------------------------------------- parsing


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors that raise instead of printing usage and exiting."""

    def error(self, message: str) -> Any:
        if message.startswith("unrecognized arguments"):
            message += ". Hint: quote globs ('exports/*.parquet') so that recframe expands them, not the shell."
        if "Hint:" not in message:
            message += f". Hint: see '{self.prog} --help'."
        raise UsageError(message)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _boolean(text: str) -> bool:
    """A true/false option value (argparse hands over strings)."""
    value = {"true": True, "false": False}.get(text.strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not true or false")
    return value


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
        return list(_validate._ks(values))  # the API's own checks: >= 1, not empty
    except RecframeError as error:
        raise argparse.ArgumentTypeError(cli_words(str(error))) from None


def _metrics(text: str) -> list[str]:
    try:
        return list(_validate._metrics(_split(text)))
    except RecframeError as error:
        raise argparse.ArgumentTypeError(cli_words(str(error))) from None


def _parameter_help(name: str) -> str:
    """The first sentence of a convention option's documentation (recframe.conventions), for --help."""
    if name not in TABLE:
        return "see help(recframe.per_user)."
    text = re.sub(r":\w+:`([^`]*)`", r"\1", describe(name)).replace("``", "")  # no reST markup
    return text.split(". ")[0].rstrip(".") + "."


def _add_columns(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("columns (defaults as in recframe.per_user)")
    group.add_argument("--user", default="user_id", metavar="COLUMN", help="the user column (default: user_id)")
    group.add_argument("--no-user", action="store_true", help="no user column: each file (per --by group) is one list")
    group.add_argument("--item", default="item_id", metavar="COLUMN", help="the item column (default: item_id)")
    group.add_argument("--rank", default="rank", metavar="COLUMN", help="1-based rank, empty = not recommended (default: rank)")
    group.add_argument("--score", metavar="COLUMN", help="rank by this column instead, highest first")
    group.add_argument(
        "--relevance", default="relevance", metavar="COLUMN", help="rating, grade or 0/1 label (default: relevance)"
    )
    group.add_argument("--by", type=_split, metavar="COL[,COL]", help="group keys, e.g. --by model: one result row per group")


def _column_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "user": None if args.no_user else args.user,
        "item": args.item,
        "rank": args.rank,
        "score": args.score,
        "relevance": args.relevance,
        "by": args.by,
    }


def _add_inputs(p: argparse.ArgumentParser, cutoffs: bool = True) -> None:
    """The options every evaluating command shares: the files, columns, what counts and the conventions."""
    p.add_argument("recs", metavar="RECS", help="recommendations: a .parquet or .csv file, or a quoted glob of them")
    for name, text in SIDE_INPUTS.items():
        p.add_argument(_flag(name), metavar=name.upper(), help=f"{text}: a .parquet or .csv file, or a quoted glob")
    p.add_argument(
        "--unlisted-users", choices=("error", "drop"), default="error",
        help="with --users: a user with recommendations but not listed is an error (default) or left out",
    )  # fmt: skip
    metrics = ",".join(recframe.METRICS)
    if cutoffs:
        p.add_argument("--k", type=_ks, default=[10], metavar="K[,K]", help="cut-offs, e.g. 5,10,20 (default: 10)")
    p.add_argument("--metrics", type=_metrics, metavar="M[,M]", help=f"some of {metrics} (default: all)")
    p.add_argument("--threshold", type=float, help="relevant = relevance >= THRESHOLD (default: relevance > 0)")
    p.add_argument("--score-threshold", type=float, help="with --score: items scored below it count as not recommended")
    _add_columns(p)
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
        conventions.add_argument(
            _flag(name),
            dest=name,
            choices=values,
            type=_boolean if all(isinstance(value, bool) for value in values) else str,
            default=None,
            help=f"{_parameter_help(name)} (default: {DEFAULTS.get(name, values[0])})",
        )
    conventions.add_argument(
        "--no-check-duplicates",
        dest="check_duplicates",
        action="store_false",
        help="skip the duplicate (user, item) and rank checks: faster, for data known to be clean",
    )


def _add_output(p: argparse.ArgumentParser, formats: Sequence[str] = FORMATS) -> argparse._ArgumentGroup:
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=formats, help="default: from the --out extension, else " + formats[0])
    out.add_argument("--out", metavar="FILE", help="write here instead of stdout, atomically (temporary file, then rename)")
    out.add_argument("--precision", type=int, default=4, metavar="N", help="decimals shown in table and markdown (default: 4)")
    return out


def _add_intervals(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("intervals (recframe.summary's ci=)")
    group.add_argument("--ci", type=float, metavar="LEVEL", help="add an interval of each mean at this coverage, e.g. 0.95")
    group.add_argument(
        "--ci-method", choices=("bootstrap", "t"), default="bootstrap", help="bootstrap (default) or t (needs scipy)"
    )
    group.add_argument("--n-resamples", type=int, default=1000, metavar="N", help="bootstrap resamples (default: 1000)")
    group.add_argument("--seed", type=int, metavar="N", help="seed of the bootstrap: the same seed gives the same intervals")


def _add_evaluate(commands: Any, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser(
        "evaluate",
        parents=[common],
        help="evaluate recommendation files (parquet or CSV) and print or write the metrics",
        description="Evaluate recommendations in parquet or CSV files (paths or quoted globs), read lazily and run "
        "on the Polars streaming engine. Prints the means by --by group (or per user) as a table, or writes "
        "csv/json/parquet/markdown. Exit codes: 0 ok, 2 bad usage or input, 1 unexpected failure.",
    )
    _add_inputs(p)
    _add_intervals(p)
    out = _add_output(p)
    out.add_argument("--per-user", action="store_true", help="one row per user (and --by group) instead of the means")
    p.set_defaults(run=evaluate)


def _add_reporting(commands: Any, common: argparse.ArgumentParser) -> None:
    c = commands.add_parser(
        "compare",
        parents=[common],
        help="compare every model with a baseline, user by user, with a paired test per metric",
        description="Per-user metrics by --by (the model column first, then any segment or fold keys to compare "
        "within), then recframe.compare against --baseline. Exit codes as evaluate.",
    )
    _add_inputs(c)
    tests = c.add_argument_group("the comparison (recframe.compare)")
    tests.add_argument(
        "--baseline", required=True, metavar="MODEL", help="the value of the first --by key the others are compared with"
    )
    tests.add_argument(
        "--test", choices=("paired_t", "wilcoxon", "randomization"), default="paired_t", help="default: paired_t (needs scipy)"
    )
    tests.add_argument(
        "--correction",
        choices=("holm", "bonferroni", "none"),
        default="holm",
        help="multiple-testing correction over every row (default: holm)",
    )
    tests.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    tests.add_argument("--seed", type=int, metavar="N", help="seed of the randomization test and the bootstrap")
    tests.add_argument("--n-resamples", type=int, default=10_000, metavar="N", help="resamples (default: 10000)")
    _add_output(c)
    c.set_defaults(run=compare_command)

    k = commands.add_parser(
        "curve",
        parents=[common],
        help="mean metrics at every cut-off k = 1..K-MAX, in long format (and a plot)",
        description="recframe.curve: one row per (group, k) with the mean of each metric; precision and recall are "
        "always included, so every row is also a precision-recall point.",
    )
    _add_inputs(k, cutoffs=False)
    k.add_argument("--k-max", type=int, default=50, metavar="K", help="the largest cut-off (default: 50)")
    _add_intervals(k)
    out = _add_output(k)
    out.add_argument(
        "--plot", metavar="PNG", help="also draw the curves of --metrics (default: ndcg) to this image (needs matplotlib)"
    )
    k.set_defaults(run=curve_command)

    r = commands.add_parser(
        "report",
        parents=[common],
        help="a report table of the means (with intervals) and, with --baseline, the paired comparison",
        description="recframe.report of summary (with --ci intervals) and, given --baseline, of compare: markdown, "
        "html or latex, to stdout or --out.",
    )
    _add_inputs(r)
    _add_intervals(r)
    r.add_argument("--baseline", metavar="MODEL", help="also compare every model with this one (paired t test, Holm)")
    out = r.add_argument_group("output")
    out.add_argument("--format", choices=("markdown", "html", "latex"), default="markdown", help="default: markdown")
    out.add_argument("--out", metavar="FILE", help="write here instead of stdout, atomically")
    out.add_argument("--precision", type=int, default=3, metavar="N", help="decimals shown (default: 3)")
    r.set_defaults(run=report_command)


def build_parser() -> argparse.ArgumentParser:
    """The ``recframe`` argument parser with its subcommands."""
    common = _Parser(add_help=False)
    common.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    common.add_argument("--debug", action="store_true", help="print the traceback of errors")
    parser = _Parser(prog="recframe", description=f"recframe {recframe.__version__}: ranking metrics on DataFrames.")
    parser.add_argument("--version", action="version", version=f"recframe {recframe.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{evaluate,compare,curve,report,demo,schema}")
    _add_evaluate(commands, common)
    _add_reporting(commands, common)
    demo_parser = commands.add_parser(
        "demo", parents=[common], help="evaluate the bundled two-model sample and print a summary by model"
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
    return parser


# ---------------------------------------------------------------------------- output


def _table_config(precision: int, markdown: bool = False) -> pl.Config:
    return pl.Config(
        tbl_formatting="MARKDOWN" if markdown else "UTF8_FULL_CONDENSED",
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=30_000,  # no wrapping (Polars takes at most a u16)
        fmt_str_lengths=1_000,
        float_precision=precision,
        tbl_cell_numeric_alignment=None if markdown else "RIGHT",
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    )


def _fitted(table: pl.DataFrame, precision: int, width: int) -> pl.DataFrame:
    """A table wider than the terminal, transposed when that fits better: one row per column,
    one column per row of `table` (named by its key values)."""
    with _table_config(precision):
        if max(len(line) for line in str(table).splitlines()) <= width or table.height > 12 or table.width < 3:
            return table
    keys = [c for c in table.columns if table.schema[c] in (pl.String, pl.Categorical) or c in ("model", "segment", "fold", "k")]
    names = (
        [" ".join(str(v) for v in row) for row in table.select(keys).iter_rows()]
        if keys
        else [f"row {i + 1}" for i in range(table.height)]
    )
    values = table.drop(keys).with_columns(pl.all().cast(pl.Float64))
    body = values.transpose(include_header=True, header_name="column", column_names=names)
    return body


def render(table: pl.DataFrame, fmt: str, precision: int = 4, width: int | None = None) -> str:
    """`table` as text in `fmt` (every format but parquet), ending with a newline.

    Examples
    --------
    >>> import polars as pl
    >>> print(render(pl.DataFrame({"model": ["A"], "ndcg@5": [2 / 3]}), "csv"), end="")
    model,ndcg@5
    A,0.6666666666666666
    """
    if fmt == "csv":
        text = table.write_csv()
    elif fmt == "json":
        text = table.write_json()  # a list of records, full float precision
    elif fmt in ("table", "markdown"):
        if fmt == "table" and width is not None:
            table = _fitted(table, precision, width)  # on a terminal: fit its width
        with _table_config(precision, markdown=fmt == "markdown"):
            text = str(table)
    else:
        raise ValueError(f"render() cannot write {fmt!r}")
    return text if text.endswith("\n") else text + "\n"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(temporary_path)`` on a temporary file beside `path`, then rename it to `path`.

    A reader (or the next scheduled job) sees the old file or the complete new one, never a part;
    on any failure the temporary file is removed and `path` is untouched.
    """
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False) as handle:
        temporary = Path(handle.name)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_umask())  # the permissions a plain open() would give, not 0600
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        # the output could not be written (a full disk, a read-only folder): say so, not "check the input"
        raise UsageError(
            f"--out {str(path)!r}: could not write it ({error.strerror or error}); the previous file, if any, is "
            "untouched. Hint: check the free space and permissions of its folder."
        ) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _output_format(args: argparse.Namespace) -> str:
    if args.out:
        # where the output goes is checked first: its folder, then what it would overwrite
        if Path(args.out).is_dir():
            raise UsageError(
                f"--out {args.out!r} is a folder. Hint: pass a file name, e.g. --out {os.path.join(args.out, 'metrics.csv')}."
            )
        folder = Path(args.out).resolve().parent
        if not folder.is_dir():
            raise UsageError(f"--out {args.out!r}: the folder {str(folder)!r} does not exist. Hint: create it first (mkdir -p).")
        inputs = [args.recs, *(getattr(args, name) for name in SIDE_INPUTS)]
        for pattern in (p for p in inputs if p):
            files = glob.glob(pattern) if glob.has_magic(pattern) else [pattern]
            if os.path.exists(args.out) and any(os.path.exists(f) and os.path.samefile(f, args.out) for f in files):
                raise UsageError(
                    f"--out {args.out!r} is one of the input files ({pattern}): writing it would destroy the input. Hint: pass another --out."
                )
    if args.format:
        fmt = args.format
    elif args.out:
        suffix = Path(args.out).suffix.lower()
        if suffix not in OUT_FORMATS:
            raise UsageError(
                f"--out {args.out!r}: cannot tell the format from {suffix or 'no extension'!r}. Hint: pass --format csv (or json, parquet, markdown, table)."
            )
        fmt = OUT_FORMATS[suffix]
    else:
        fmt = "table"
    if fmt == "parquet" and not args.out:
        raise UsageError("--format parquet writes a binary file, not text for the terminal. Hint: add --out FILE.parquet.")
    if not 0 <= args.precision <= MAX_PRECISION:
        raise UsageError(f"--precision {args.precision} must be from 0 to {MAX_PRECISION}. Hint: e.g. --precision 4.")
    return fmt


# ---------------------------------------------------------------------------- commands


def _read(args: argparse.Namespace, progress: Progress) -> tuple[pl.LazyFrame, dict[str, Any]]:
    """The RECS scan and the side inputs' scans, each file checked."""
    recs = find_source(args.recs, "RECS")
    progress.stage(f"recs: {recs.describe()}")
    sides = {name: find_source(getattr(args, name), _flag(name)) for name in SIDE_INPUTS if getattr(args, name)}
    for name, source in sides.items():
        progress.stage(f"{name}: {source.describe()}")
    for source in (recs, *sides.values()):
        source.check_rows()
    return recs.scan(), {name: source.scan() for name, source in sides.items()}


def _api_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The API arguments the shared options give (only conventions given on the command line)."""
    return {
        **({"k": args.k} if hasattr(args, "k") else {}),
        "metrics": args.metrics,
        **_column_kwargs(args),
        "threshold": args.threshold,
        "score_threshold": args.score_threshold,
        "check_duplicates": args.check_duplicates,
        "unlisted_users": args.unlisted_users,
        **{name: getattr(args, name) for name in ("profile", *CHOICES) if getattr(args, name) is not None},
    }


def _intervals(args: argparse.Namespace) -> dict[str, Any]:
    if args.ci is None:
        return {}
    return {"ci": args.ci, "ci_method": args.ci_method, "n_resamples": args.n_resamples, "seed": args.seed}


def _emit(args: argparse.Namespace, fmt: str, table: pl.DataFrame, progress: Progress) -> int:
    """Print `table` (a table fitted to the terminal) or write it to --out atomically."""
    if not args.out:
        sys.stdout.write(
            render(table, fmt, args.precision, width=shutil.get_terminal_size().columns if sys.stdout.isatty() else None)
        )
        sys.stdout.flush()
        return EXIT_OK
    out = Path(args.out)
    if fmt == "parquet":
        write_atomic(out, table.write_parquet)
    else:
        text = render(table, fmt, args.precision)
        write_atomic(out, lambda path: path.write_text(text, encoding="utf-8"))
    progress.stage(f"wrote {out} ({table.height} row{'s' if table.height != 1 else ''}, {fmt})")
    return EXIT_OK


def evaluate(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe evaluate``: read, evaluate on the streaming engine, print or write."""
    fmt = _output_format(args)  # fail on a bad --out before reading anything
    if args.per_user and args.ci is not None:
        raise UsageError("--ci gives intervals of the means; --per-user has no means. Hint: leave out one of them.")
    recs, sides = _read(args, progress)
    with progress.running("reading and evaluating"):
        if args.per_user:
            plan = recframe.per_user(recs, **sides, **_api_kwargs(args))
        else:
            plan = recframe.summary(recs, **sides, **_api_kwargs(args), **_intervals(args))
        table = plan.collect(engine="streaming")
    return _emit(args, fmt, table, progress)


def compare_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe compare``: per-user metrics by --by, then a paired comparison with --baseline."""
    fmt = _output_format(args)
    if not args.by:
        raise UsageError("compare needs the model column. Hint: pass --by model (then any segment or fold keys).")
    recs, sides = _read(args, progress)
    with progress.running("reading and evaluating"):
        per_user = recframe.per_user(recs, **sides, **_api_kwargs(args)).collect(engine="streaming")
    models = per_user[args.by[0]].unique().to_list()
    # the baseline is typed as text: match it to the model column's values
    baseline = next((m for m in models if str(m) == args.baseline), args.baseline)
    table = recframe.compare(
        per_user, by=args.by, baseline=baseline, test=args.test, correction=None if args.correction == "none" else args.correction,
        alpha=args.alpha, seed=args.seed, n_resamples=args.n_resamples,
    )  # fmt: skip
    return _emit(args, fmt, table, progress)


def curve_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe curve``: every cut-off 1..--k-max, long format, and an optional plot."""
    fmt = _output_format(args)
    recs, sides = _read(args, progress)
    with progress.running("reading and evaluating"):
        kwargs = {name: value for name, value in _api_kwargs(args).items()}
        table = recframe.curve(recs, k_max=args.k_max, **sides, **kwargs, **_intervals(args)).collect(engine="streaming")
    if args.plot:
        drawn = [m for m in (args.metrics or ["ndcg"]) if m in table.columns]
        figure = recframe.plot.curve(table, drawn or ["precision"])
        write_atomic(Path(args.plot), lambda path: figure.savefig(path, format="png", dpi=120))
        progress.stage(f"drew {args.plot}")
    return _emit(args, fmt, table, progress)


def report_command(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe report``: the summary (with intervals) and, with --baseline, the comparison."""
    if args.out and Path(args.out).is_dir():
        raise UsageError(f"--out {args.out!r} is a folder. Hint: pass a file name, e.g. --out report.{args.format}.")
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
    text = recframe.report(summary, format=args.format, precision=args.precision, compare=comparison)
    text = text if text.endswith("\n") else text + "\n"
    if not args.out:
        sys.stdout.write(text)
        return EXIT_OK
    write_atomic(Path(args.out), lambda path: path.write_text(text, encoding="utf-8"))
    progress.stage(f"wrote {args.out} ({args.format})")
    return EXIT_OK


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
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        float_precision=4,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_width_chars=200,
    ):
        print(table)
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
        maybe = f" (maybe {_flag(role)} {shlex.quote(guess)})" if guess else ""
        if role == "rank":
            score = _guess("score", list(columns), set(used))
            maybe = f" (maybe --score {shlex.quote(score)})" if score and not guess else maybe
            hints.append(f"{label} has no {wanted!r} column: pass --rank COLUMN or --score COLUMN{maybe}.")
        elif role == "user":
            hints.append(f"{label} has no {wanted!r} column: pass --user COLUMN{maybe}, or --no-user if the file is one list.")
        else:
            hints.append(f"{label} has no {wanted!r} column: pass {_flag(role)} COLUMN{maybe}.")
    return columns, hints


def schema(args: argparse.Namespace, progress: Progress) -> int:
    """``recframe schema``: the columns found and the ones evaluate would use."""
    recs = find_source(args.recs, "RECS")
    truth = find_source(args.truth, "--truth") if args.truth else None
    cols = _column_kwargs(args)
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


def _fail(text: str, code: int, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    print(f"recframe: error: {_one_line(text)}", file=sys.stderr, flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``recframe`` command with `argv` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    raw = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in raw
    try:
        args = parser.parse_args(raw)
    except UsageError as error:
        return _fail(str(error), EXIT_USAGE, debug=False)
    except SystemExit as stop:  # --help, --version
        return stop.code if isinstance(stop.code, int) else EXIT_OK
    progress = Progress.for_stream(sys.stderr, args.quiet)
    # messages from the API speak of "the frame": say which files that is
    where = getattr(args, "recs", "the bundled sample")
    for name in SIDE_INPUTS:
        if getattr(args, name, None):
            where += f" with {_flag(name)} {getattr(args, name)}"
    try:
        return args.run(args, progress)
    except UsageError as error:
        return _fail(str(error), EXIT_USAGE, debug)
    except RecframeError as error:
        return _fail(f"{where}: {cli_words(str(error))}", EXIT_USAGE, debug)
    except (pl.exceptions.PolarsError, nw.exceptions.NarwhalsError) as error:
        # a malformed CSV or parquet file, or files that do not fit together, found while reading
        return _fail(
            f"could not read or evaluate {where}: {_polars_message(error)} Hint: check that the files are "
            "well-formed and share one set of columns and types (parquet keeps types; CSV guesses them).",
            EXIT_USAGE,
            debug,
        )
    except OSError as error:
        if isinstance(error, BrokenPipeError):  # `recframe evaluate ... | head`: not an error
            with contextlib.suppress(OSError, ValueError):  # the Python docs' recipe: no error at exit
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
        name = f"{error.filename}: " if error.filename else ""
        return _fail(f"{name}{error.strerror or error}. Hint: check the path and its permissions.", EXIT_USAGE, debug)
    except KeyboardInterrupt:
        print("recframe: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (Exception, pl.exceptions.PanicException) as error:  # a Polars panic is no Exception
        first = str(error).splitlines()[0] if str(error) else ""
        return _fail(
            f"unexpected {type(error).__name__}: {first} Hint: this is a bug in recframe or its dependencies; "
            "rerun with --debug to see the traceback, and report it.",
            EXIT_FAILURE,
            debug,
        )
