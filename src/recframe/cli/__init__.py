"""The ``recframe`` command: evaluate parquet or CSV exports, show the sample, map an export's columns.

A thin layer over :func:`recframe.summary`, :func:`recframe.per_user`, :func:`recframe.compare`,
:func:`recframe.curve`, :func:`recframe.report` and :func:`recframe.off_policy`
(``recframe off-policy LOGS``): it parses the command line (argparse, from
the standard library, so the command adds no dependency; ``_options``), reads the files lazily
(``_files``), runs the API on the Polars streaming engine (``_commands``), writes the result
(``_output``) and maps every failure to an exit code and a one-line message (``_messages``: API
errors are said in command-line words from the arguments they carry). Nothing here computes a
metric.

Exit codes: 0 success; 2 bad usage or bad input (a missing file or column, a bad option value,
a malformed CSV), with one line on stderr naming the file or column and the fix; 1 an
unexpected failure, a defect (rerun with ``--debug`` for the traceback): a Polars error is one
when every input file reads on its own; 130 interrupted.

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

import contextlib
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

import narwhals as nw
import polars as pl

from recframe.cli._commands import note_relevance_rule
from recframe.cli._files import SIDE_INPUTS, Source, find_source, unreadable
from recframe.cli._messages import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    cli_words,
    flag,
    one_line,
)
from recframe.cli._options import build_parser
from recframe.cli._output import Progress, check_outputs, render, write_atomic
from recframe.curve import CappedWarning
from recframe.engine._checks import unchecked_text
from recframe.errors import RecframeError, UncheckedDataWarning

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Progress",
    "Source",
    "UsageError",
    "build_parser",
    "cli_words",
    "find_source",
    "main",
    "render",
    "write_atomic",
]


def _fail(text: str, code: int, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    print(f"recframe: error: {one_line(text)}", file=sys.stderr, flush=True)
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
    args.argv = raw  # the command line as typed (the page records it)
    progress = Progress.for_stream(sys.stderr, args.quiet)
    # messages from the API speak of "the frame": say which files that is
    given = [("--run", getattr(args, "trec_run", None)), ("--qrels", getattr(args, "trec_qrels", None))]
    given += [(flag(name), getattr(args, name, None)) for name in SIDE_INPUTS]
    given += [("--recommendations", getattr(args, "recommendations", None))]  # off-policy's target rankings
    parts = [getattr(args, "recs", None), getattr(args, "logs", None), *(f"{option} {value}" for option, value in given if value)]
    where = " with ".join(part for part in parts if part) or "the bundled sample"
    try:
        check_outputs(args)  # before anything is read or written
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CappedWarning)
            code = args.run(args, progress)
        if code == EXIT_OK:
            note_relevance_rule(args)
        if getattr(args, "checks", None) is False:  # named beside every result it produced (a warning in the API)
            print(f"recframe: {unchecked_text('--no-checks')}", file=sys.stderr, flush=True)
        for warning in caught:  # what recframe says of the result, one line each
            if not issubclass(warning.category, UncheckedDataWarning):
                print(f"recframe: warning: {one_line(str(warning.message))}", file=sys.stderr, flush=True)
        return code
    except UsageError as error:
        return _fail(str(error), EXIT_USAGE, debug)
    except RecframeError as error:
        return _fail(f"{where}: {cli_words(error)}", EXIT_USAGE, debug)
    except (pl.exceptions.PolarsError, nw.exceptions.NarwhalsError) as error:
        # bad input when a file does not read on its own (a malformed CSV or parquet file, files
        # of a glob that do not fit together); else a defect of recframe's own, not the input's
        fault = unreadable(args)
        if fault is None:
            return _unexpected(error, debug, " (the input files read without error on their own)")
        return _fail(
            f"could not read {fault} Hint: check that the files are well-formed and share one set of columns and "
            "types (parquet keeps types; CSV guesses them).",
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
        return _unexpected(error, debug)


def _unexpected(error: BaseException, debug: bool, why: str = "") -> int:
    """Exit 1 for a failure that is not the input's: a bug of recframe or of a dependency."""
    first = str(error).splitlines()[0] if str(error) else ""
    return _fail(
        f"unexpected {type(error).__name__}: {first}{why} Hint: this is a bug in recframe or its dependencies; "
        "rerun with --debug to see the traceback, and report it.",
        EXIT_FAILURE,
        debug,
    )
