"""The command line's inputs: the files a RECS, --truth, --users or --exclude argument names,
checked (one format, every CSV row complete) before anything is evaluated."""

from __future__ import annotations

import csv
import glob
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from recframe.cli._messages import UsageError, flag, one_line, polars_message
from recframe.errors import RecframeError
from recframe.trec_eval.trec import read_trec_qrels, read_trec_run

#: file extension -> how to read it
READERS: dict[str, str] = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}
#: file-valued API arguments of `evaluate`: the flag --NAME FILE passes the file as NAME=
SIDE_INPUTS: dict[str, str] = {
    "truth": "ground truth (user, item, relevance, any fold/date keys): joined on user, item and those keys",
    "users": "the users to evaluate, one row each, with attribute columns --by may name (segment, cohort)",
    "exclude": "(user, item) pairs to leave out, e.g. the training interactions; lists are re-ranked",
    "train": "training interactions (user, item): item popularity for novelty, popularity, long_tail",
    "items": "the catalog, one row per item, with the feature columns --item-features names",
}
# CSV exports can switch from ints to floats deep into a file: look further than Polars' 100 rows
CSV_INFER_ROWS = 10_000


@dataclass(frozen=True)
class Source:
    """The files one RECS or TRUTH argument names, and how to read them."""

    pattern: str
    files: tuple[str, ...]
    reader: str  # "parquet" or "csv"

    def scan(self) -> pl.LazyFrame:
        if self.reader == "parquet":
            scan = pl.scan_parquet(list(self.files))
            # files that hold no row are read as the empty frame they are: Polars 2.0.0 panics
            # planning a join with such a scan (the files' statistics read min > max). The first
            # file with a row ends the look, so an export pays one footer.
            import pyarrow.parquet as pq

            try:
                empty = not any(pq.ParquetFile(path).metadata.num_rows for path in self.files)
            except Exception:  # not a parquet file Arrow reads: the scan says why, as before
                return scan
            return pl.DataFrame(schema=scan.collect_schema()).lazy() if empty else scan
        return pl.scan_csv(list(self.files), infer_schema_length=CSV_INFER_ROWS)

    def check_rows(self) -> None:
        """CSV only: every row must have the header's number of fields. Polars reads a short
        row (a half-written export) as nulls, which would silently drop a relevant item."""
        if self.reader == "csv":
            for path in self.files:
                _check_csv_fields(path)

    def check_not_empty(self, label: str) -> None:
        """Raise UsageError when the files hold no row: an empty export is a failed export, and a
        nightly job must not write empty metrics with exit code 0. Parquet answers from its
        metadata; a CSV reads one row. A file that cannot be read is left to the read, which
        says why."""
        try:
            if self.reader == "parquet":
                empty = pl.scan_parquet(list(self.files)).select(pl.len()).collect().item() == 0
            else:
                empty = pl.scan_csv(list(self.files), infer_schema_length=0).head(1).collect().height == 0
        except (pl.exceptions.PolarsError, OSError):
            return
        if empty:
            n = len(self.files)
            raise UsageError(
                f"{label} {self.pattern!r} has no rows ({n} {self.reader} file{'s' if n > 1 else ''}): there is nothing to "
                "evaluate. Hint: check the step that wrote it (an empty export?); recframe refuses an empty input so "
                "that a scheduled job fails instead of writing empty metrics."
            )

    def describe(self) -> str:
        size = sum(os.path.getsize(f) for f in self.files)
        n = len(self.files)
        return f"{self.pattern} ({n} {self.reader} file{'s' if n > 1 else ''}, {_size(size)})"


def _check_csv_fields(path: str) -> None:
    """Raise UsageError at the first line of `path` whose field count is not the header's.

    Lines are counted by their commas in one Polars pass; the few records with quotes (where a
    comma or a line break may sit inside a field, RFC 4180) are parsed with the csv module: a
    record goes on past the end of a line while an odd number of quotes is open. Blank lines
    are skipped, as the reader skips them.
    """
    lines = pl.scan_csv(
        path, has_header=False, separator="\x1f", quote_char=None, new_columns=["line"], schema={"line": pl.String}
    ).with_row_index("number", offset=1)
    lines = lines.filter(pl.col("line").is_not_null() & (pl.col("line").str.strip_chars() != ""))
    quotes = pl.col("line").str.count_matches('"', literal=True)
    rows = lines.with_columns(
        # a line that starts inside a quoted field continues the record of the line before
        record=((quotes.cum_sum() - quotes) % 2 == 0).cum_sum(),
        quoted=quotes > 0,
        fields=pl.col("line").str.count_matches(",", literal=True) + 1,
    ).collect(engine="streaming")
    if rows.height == 0:
        return
    if rows["line"].str.count_matches('"', literal=True).sum() % 2:
        # the last record's quote is never closed: name the line that opens it
        start = rows.filter(pl.col("record") == rows["record"].max()).row(0, named=True)
        raise UsageError(
            f"{path}, line {start['number']}: a quoted field opens here and is never closed. Hint: the file looks "
            "truncated (a half-written export?): regenerate it, or close the quote."
        )
    # records with a quote: their lines, joined as the reader joins them
    quoted_records = rows.filter(pl.col("quoted").any().over("record"))
    records = quoted_records.group_by("record", maintain_order=True).agg(pl.col("number").first(), pl.col("line").str.join("\n"))
    parsed = {r["record"]: (r["number"], r["line"]) for r in records.iter_rows(named=True)}

    def count(number: int, text: str) -> int:
        """The fields of the record starting at line `number` (RFC 4180: strict quoting)."""
        try:
            records = list(csv.reader(io.StringIO(text), strict=True))
        except csv.Error as error:
            records, problem = [], str(error)
        else:
            problem = f"its quotes make {len(records)} records of {text.count(chr(10)) + 1} lines"
        if len(records) != 1:
            raise UsageError(
                f"{path}, line {number}: a quoted field is malformed ({problem}). Hint: quote a field with a quote in it "
                'whole, and write each quote inside it twice ("a ""b"" c"), as RFC 4180 CSV does.'
            )
        return len(records[0])

    first = rows.row(0, named=True)
    expected = count(*parsed[first["record"]]) if first["record"] in parsed else first["fields"]
    body = rows.filter(pl.col("record") != first["record"])
    plain = body.filter(~pl.col("record").is_in(list(parsed)) & (pl.col("fields") != expected)).head(1)
    candidates = [(r["number"], r["line"], r["fields"]) for r in plain.iter_rows(named=True)]
    for record, (number, text) in parsed.items():
        n = count(number, text)
        if record != first["record"] and n != expected:
            candidates.append((number, text, n))
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


def unreadable(args: Any) -> str | None:
    """Which input of the command cannot be read on its own, and why (None: each reads).

    Asked only after a Polars or narwhals error, to tell bad input (exit 2) from a defect of
    recframe's own (exit 1): each file the command names (RECS, the side inputs, --run and
    --qrels) is read again alone, every column parsed, on the streaming engine.
    """
    named = [("RECS", getattr(args, "recs", None)), *((flag(name), getattr(args, name, None)) for name in SIDE_INPUTS)]
    named += [("LOGS", getattr(args, "logs", None)), ("--recommendations", getattr(args, "recommendations", None))]
    for label, pattern in named:
        if not isinstance(pattern, str):
            continue
        try:
            source = find_source(pattern, label)
            source.scan().select(pl.all().null_count()).collect(engine="streaming")
        except UsageError:  # not a file (inspect's --users 1,2,3), or said before reading
            continue
        except (pl.exceptions.PolarsError, OSError) as error:
            return f"{label} {pattern}: {polars_message(error)}"
    for label, path, read in (("--run", "trec_run", read_trec_run), ("--qrels", "trec_qrels", read_trec_qrels)):
        if not isinstance(getattr(args, path, None), str):
            continue
        try:
            read(getattr(args, path)).select(pl.all().null_count()).collect()
        except RecframeError as error:
            return f"{label} {getattr(args, path)}: {one_line(str(error))}"
        except (pl.exceptions.PolarsError, OSError) as error:
            return f"{label} {getattr(args, path)}: {polars_message(error)}"
    return None


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
