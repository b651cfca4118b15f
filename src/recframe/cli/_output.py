"""The command line's outputs: progress on stderr, tables fitted to the terminal, text and
parquet formats, and files written atomically."""

from __future__ import annotations

import argparse
import contextlib
import glob
import itertools
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import polars as pl

from recframe.cli._files import SIDE_INPUTS
from recframe.cli._messages import EXIT_OK, UsageError
from recframe.reporting import _atomic
from recframe.reporting.report import MAX_PRECISION  # decimals shown: float64 holds about 17 digits

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


#: the width of a table printed where the output is not a terminal (a pipe, a notebook's !recframe, a CI log)
PIPE_WIDTH = 100
#: columns holding p-values: below 10**-precision they read "< 0.0001", never 0.0000
P_VALUE_COLUMNS = ("p_value", "p_adjusted")


def _cell(value: object, column: str, precision: int) -> str:
    """One value as a person reads it: counts as integers, booleans yes/no, tiny p-values as
    a bound, a null as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if column in P_VALUE_COLUMNS and value < 10**-precision:
            return f"< {10**-precision:.{precision}f}"
        return f"{value:.{precision}f}"
    return str(value)


def _shown(table: pl.DataFrame, precision: int) -> pl.DataFrame:
    """Every column as text (see _cell), so that Polars prints each value as it is."""
    return pl.DataFrame(
        {c: [_cell(v, c, precision) for v in table.get_column(c).to_list()] for c in table.columns},
        schema=dict.fromkeys(table.columns, pl.String),
    )


def _keys(table: pl.DataFrame) -> list[str]:
    """The columns that name a row: the text key columns before the first number."""
    keys = []
    for c in table.columns:
        if table.schema[c] not in (pl.String, pl.Categorical) and c != "k":
            break
        keys.append(c)
    return keys


def _row_names(table: pl.DataFrame, keys: list[str]) -> list[str]:
    """What each row is, as a column header of the transposed table: ``personal vs popular``
    for a comparison (with its metric when there are several), the key values otherwise."""
    rows = table.select(keys).iter_rows(named=True) if keys else iter([{}] * table.height)
    if {"baseline", "model", "metric"} <= set(keys):
        several = table.get_column("metric").n_unique() > 1
        strata = [k for k in keys if k not in ("baseline", "model", "metric")]
        return [
            " ".join([*(str(r[k]) for k in strata), f"{r['model']} vs {r['baseline']}", *([r["metric"]] if several else [])])
            for r in rows
        ]
    return [" ".join(str(r[k]) for k in keys) or f"row {i + 1}" for i, r in enumerate(rows)]


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _table_text(table: pl.DataFrame, precision: int, width: int) -> str:
    """The table as text no wider than `width` when it can be: as it is, or transposed (a row
    per column, a column per row, named by what the row is)."""
    with _table_config(precision), pl.Config(tbl_cell_alignment="RIGHT"):  # (the values are text now)
        text = str(_shown(table, precision))
        if _widest(text) <= width or table.height == 0:
            return text
        keys = _keys(table)
        names = _row_names(table, keys)
        body = _shown(table.drop(keys), precision)
        # the first header says what the columns are (model), unless the names say it (a comparison)
        corner = "" if " vs " in names[0] else " / ".join(keys)
        names = [f"{name} " if name == corner else name for name in names]  # (headers must differ)
        if len(set(names)) < len(names):  # rows that no header tells apart: never merge them
            return text
        transposed = pl.DataFrame(
            {corner: body.columns, **{name: body.row(i) for i, name in enumerate(names)}},
            schema={corner: pl.String, **dict.fromkeys(names, pl.String)},
        )
        flipped = str(transposed)
        return flipped if _widest(flipped) < _widest(text) else text


def terminal_width() -> int:
    """The terminal's width, or PIPE_WIDTH where the output is not a terminal."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else PIPE_WIDTH


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
    elif fmt == "table":
        text = _table_text(table, precision, width if width is not None else PIPE_WIDTH)
    elif fmt == "markdown":
        with _table_config(precision, markdown=True):
            text = str(table)
    else:
        raise ValueError(f"render() cannot write {fmt!r}")
    return text if text.endswith("\n") else text + "\n"


#: the command-line flags that name a file a command writes
OUTPUT_FLAGS = {"out": "--out", "plot": "--plot"}
#: those that name a file a command reads
INPUT_FLAGS = {"recs": "RECS", "trec_run": "--run", "trec_qrels": "--qrels", **{name: f"--{name}" for name in SIDE_INPUTS}}
INPUT_FLAGS |= {"logs": "LOGS", "recommendations": "--recommendations"}  # off-policy's


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before anything is read, an output path (--out, --plot) that is one of the
    command's input files: the same file by identity (a symlink to it, a hard link, another
    spelling of its path), not by spelling."""
    for name, out_flag in OUTPUT_FLAGS.items():
        out = getattr(args, name, None)
        if out:
            check_output_path(out, out_flag)
        if not out or not os.path.exists(out):
            continue  # a new file is none of the inputs
        for source, in_flag in INPUT_FLAGS.items():
            pattern = getattr(args, source, None)
            if not pattern:
                continue
            files = glob.glob(pattern, recursive=True) if glob.has_magic(pattern) else [pattern]
            if any(os.path.exists(f) and os.path.samefile(f, out) for f in files):
                raise UsageError(
                    f"{out_flag} {out!r} is the input file of {in_flag} ({pattern}): writing it would destroy the input. "
                    f"Hint: pass another {out_flag}."
                )


def check_output_path(out: str, out_flag: str) -> None:
    """Refuse an output path no file can be written at (see :func:`recframe.reporting._atomic.path_problem`)."""
    found = _atomic.path_problem(out, "results.png" if out_flag == "--plot" else "results.csv")
    if found is not None:
        hint = (
            f"create it first (mkdir -p {found.missing_folder})"
            if found.missing_folder
            else f"pass a file's path, e.g. {out_flag} {found.example}"
        )
        raise UsageError(f"{out_flag} {out!r} {found.problem}. Hint: {hint}.")


def write_atomic(path: Path, write: Callable[[Path], object], flag: str = "--out") -> None:
    """Write `path` atomically (see :func:`recframe.reporting._atomic.write_atomic`); a file that cannot
    be written is a usage error naming `flag`."""
    try:
        _atomic.write_atomic(path, write)
    except OSError as error:
        # the output could not be written (a full disk, a read-only folder): say so, not "check the input"
        raise UsageError(
            f"{flag} {str(path)!r}: could not write it ({error.strerror or error}); the previous file, if any, is "
            "untouched. Hint: check the free space and permissions of its folder."
        ) from None


def output_format(args: argparse.Namespace) -> str:
    if args.out:
        check_output_path(args.out, "--out")  # where the output goes is checked before anything is read
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
    check_precision(args)
    return fmt


def check_precision(args: argparse.Namespace) -> None:
    """--precision, before anything is read (report formats only at the end)."""
    if not 0 <= args.precision <= MAX_PRECISION:
        raise UsageError(f"--precision {args.precision} must be from 0 to {MAX_PRECISION}. Hint: e.g. --precision 4.")


# ---------------------------------------------------------------------------- commands


def emit(args: argparse.Namespace, fmt: str, table: pl.DataFrame, progress: Progress) -> int:
    """Print `table` (a table fitted to the terminal) or write it to --out atomically."""
    if not args.out:
        sys.stdout.write(render(table, fmt, args.precision, width=terminal_width()))
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


def emit_text(args: argparse.Namespace, text: str, fmt: str, progress: Progress) -> int:
    """Print `text` or write it to --out atomically."""
    if not args.out:
        sys.stdout.write(text)
        sys.stdout.flush()
        return EXIT_OK
    write_atomic(Path(args.out), lambda path: path.write_text(text, encoding="utf-8"))
    progress.stage(f"wrote {args.out} ({fmt})")
    return EXIT_OK
