"""Read TREC run and qrels files into lazy Polars frames that recframe evaluates directly.

A run file has one line per retrieved document, ``qid Q0 docno rank score tag``; a qrels file
one line per judgement, ``qid iter docno relevance``. Fields are separated by any run of
spaces or tabs; lines starting with ``#`` and blank lines are skipped. Query ids become the
user column and document numbers the item column, both as strings, so that

>>> import recframe  # doctest: +SKIP
>>> run = recframe.read_trec_run("run.txt")  # doctest: +SKIP
>>> qrels = recframe.read_trec_qrels("qrels.txt")  # doctest: +SKIP
>>> recframe.summary(run, truth=qrels, score="score", profile="trec_eval")  # doctest: +SKIP

is ``trec_eval qrels.txt run.txt`` on the measures recframe has. As trec_eval does, the profile
orders each query's documents by score (the rank field is kept but not used), ties by document
number descending. :mod:`recframe.trec_eval` prints trec_eval's whole output, flags included
(``recframe evaluate --run ... --qrels ... --format trec``).

:data:`TREC_MEASURES` maps recframe's output columns to trec_eval's measure names, and
:func:`trec_eval_text` writes a per-user frame as trec_eval prints it (``recframe evaluate
--run ... --qrels ... --format trec``).
"""

from __future__ import annotations

import codecs
import math
import mmap
import os
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

from recframe.engine._engine import GMEAN_FLOOR
from recframe.errors import RecframeError, ref

#: column name -> dtype of a parsed run file (the ``Q0`` field is dropped)
RUN_SCHEMA = {"user_id": pl.String, "item_id": pl.String, "rank": pl.Int64, "score": pl.Float64, "run": pl.String}
#: column name -> dtype of a parsed qrels file (the ``iter`` field is dropped)
QRELS_SCHEMA = {"user_id": pl.String, "item_id": pl.String, "relevance": pl.Int64}

_LINE, _NUMBER, _FIELDS = "__rf_line", "__rf_line_number", "__rf_fields"
# bytes that a text line seldom holds: each line is read as one field, separated by one of
# them that the file does not hold (0x1F first; not a line end, a tab or a space)
_NO_SEPARATORS = b"\x1f\x1e\x1d\x1c\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f" + bytes(range(0x10, 0x1C)) + b"\x7f"


def _separator(path: Path) -> str | None:
    """A byte of :data:`_NO_SEPARATORS` that the file does not hold (a line read with it as the
    separator is one field, whatever bytes it holds); None when it holds every one of them."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            return _NO_SEPARATORS[:1].decode()
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            for byte in _NO_SEPARATORS:
                if view.find(bytes([byte])) < 0:
                    return chr(byte)
    return None


def _lines_in_memory(path: Path) -> pl.LazyFrame:
    """The file's lines read by Python (a file holding every byte of :data:`_NO_SEPARATORS`:
    random bytes, most likely), bytes that are not UTF-8 as U+FFFD, as the CSV reader reads them."""
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # (the file's last line break)
    return pl.LazyFrame({_LINE: [line.removesuffix("\r") for line in lines]}, schema={_LINE: pl.String})


def _lines(path: str | os.PathLike[str], label: str) -> pl.LazyFrame:
    """The file's lines with their 1-based numbers, comments and blank lines removed."""
    p = Path(path)
    if not p.is_file():
        what = "a folder" if p.is_dir() else "not found"
        raise RecframeError(f"{label} file {str(path)!r}: {what}. Hint: pass the path of a TREC {label} file.")
    separator = _separator(p)
    if separator is None:
        lines = _lines_in_memory(p).with_row_index(_NUMBER, offset=1)
    else:
        lines = pl.scan_csv(
            p,
            has_header=False,
            separator=separator,
            quote_char=None,
            new_columns=[_LINE],
            schema={_LINE: pl.String},
            # bytes that are not UTF-8 read as U+FFFD here, and are refused by _parse's check
            encoding="utf8-lossy",
        ).with_row_index(_NUMBER, offset=1)
    text = pl.col(_LINE).str.strip_chars()
    kept = lines.filter(text.is_not_null() & (text != "") & ~text.str.starts_with("#"))
    # fields split on single spaces unless some line has tabs or runs of blanks (a quick scan
    # first: normalising every line costs five times the split)
    plain = not kept.select(pl.col(_LINE).str.contains(r"\s\s|\t|^\s|\s$").any()).collect(engine="streaming").item()
    fields = pl.col(_LINE).str.split(" ") if plain else text.str.replace_all(r"\s+", " ").str.split(" ")
    return kept.with_columns(fields.alias(_FIELDS))


def _not_utf8(path: Path, label: str) -> RecframeError | None:
    """The refusal of a file that is not UTF-8 text, naming the first bad byte and its line;
    None when the U+FFFD the reader found was written in the file (valid UTF-8)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                byte = chunk[error.start]
                line += chunk[: error.start].count(b"\n")
                return RecframeError(
                    f"{label} file {str(path)!r}, line {line}: byte 0x{byte:02X} (at byte {offset + error.start}) is not "
                    "UTF-8 text; document numbers would not compare as trec_eval compares them. Hint: convert the "
                    f"file first, e.g. iconv -f latin1 -t utf-8 {str(path)!r} > converted.txt."
                )
            line += chunk.count(b"\n")
            offset += len(chunk)
    return None


def _whole_rank(number: pl.Expr) -> pl.Expr:
    """A run's rank field read as a number: "2.0" is 2, any number that is not whole (or
    nothing) null; trec_eval never reads it, so it is never refused."""
    whole = number.is_finite() & (number == number.round(0)) & (number.abs() < 2**53)
    return pl.when(whole).then(number).cast(pl.Int64).alias("rank")


def _parsed(
    field: Callable[[int], pl.Expr], n_present: pl.Expr, label: str, fields: dict[str, int], n_fields: int
) -> tuple[dict[str, pl.Expr], pl.Expr]:
    """The typed columns of `fields` and the flag of a malformed line, from ``field(i)`` (the
    i-th field as text, null when the line has none) and `n_present` (its number of fields).

    A run's rank field is read when it is a whole number and is never checked: trec_eval
    ignores it (it orders by score), so ``2.0`` or ``-`` there is no error. trec_eval ignores
    the fields after a run line's tag; a qrels line has exactly four. A score of ``inf`` or
    ``-inf`` is a number, ranked first or last as trec_eval ranks it; NaN is refused."""
    schema = RUN_SCHEMA if label == "run" else QRELS_SCHEMA
    parsed = {name: field(position).cast(schema[name], strict=False).alias(name) for name, position in fields.items()}
    if label == "run":
        parsed["rank"] = _whole_rank(field(fields["rank"]).cast(pl.Float64, strict=False))
    bad = n_present < n_fields if label == "run" else n_present != n_fields
    for name, position in fields.items():
        if label == "run" and name == "rank":
            continue
        bad = bad | (parsed[name].is_null() & field(position).is_not_null())
        if schema[name] == pl.Float64:
            bad = bad | parsed[name].is_nan().fill_null(False)
    return parsed, bad


def _problems(bad: pl.Expr, number: pl.Expr, line: pl.Expr, fields: pl.Expr, undecoded: pl.Expr) -> tuple[pl.Expr, ...]:
    """How many lines are malformed, the first one's number, text and fields, and whether a
    byte did not decode: what _parse refuses a file for."""
    return (
        bad.sum().alias("n"),
        number.filter(bad).first().alias(_NUMBER),
        line.filter(bad).first().alias(_LINE),
        fields.filter(bad).first().alias(_FIELDS),
        undecoded.any().alias("undecoded"),
    )


def _what_is_wrong(fields: Sequence[str], label: str, layout: str) -> str:
    """What is wrong with a malformed line whose fields are `fields`, in the layout's words."""
    names, n_fields = layout.split(), len(layout.split())
    if len(fields) < n_fields or (label == "qrels" and len(fields) != n_fields):
        return f"{len(fields)} field(s), expected {n_fields}"
    if label == "qrels":
        return f"the relevance {fields[3]!r} is not a whole number"
    score = fields[names.index("score")]
    try:
        nan = math.isnan(float(score))
    except ValueError:
        nan = False
    return f"the score {score!r} is {'NaN' if nan else 'not a number'}"


#: bytes the CSV reader reads at a time (:func:`_read_plain`), so that a large file is never
#: held whole: its pieces' frames are kept, in the types read. 16 MiB is under the C
#: allocator's largest mapping threshold (glibc's: 32 MiB), so each piece reuses the last one's
#: memory: 64 MiB pieces were each mapped afresh (a 343 MB run: 250k page faults against 135k,
#: 0.3 s more CPU time, a peak 90 MB higher)
_PIECE = 1 << 24


def _pieces(path: Path) -> Iterator[bytes]:
    """The file's bytes, about :data:`_PIECE` at a time, each piece ending at a line end (the
    last one at the file's end)."""
    with open(path, "rb") as handle:
        while piece := handle.read(_PIECE):
            yield piece if piece.endswith(b"\n") else piece + handle.readline()


def _plain_bytes(piece: bytes) -> tuple[bool, bool]:
    """Whether `piece` is ASCII without tabs, carriage returns or 0x1F (the line reader's
    separator), the blanks the line reader normalises, and whether it has a '#' anywhere (a
    comment line may start there; the CSV reader looks for comments only then, which costs a
    third of its time)."""
    plain = int(np.frombuffer(piece, dtype=np.uint8).max(initial=0)) < 0x80 and not any(
        byte in piece for byte in (b"\t", b"\r", b"\x1f")
    )
    return plain, plain and b"#" in piece


def _read_piece(piece: bytes, label: str, keep: Sequence[str], types: dict[str, type[pl.DataType]]) -> pl.DataFrame | None:
    """`piece` read by the CSV reader, typed (:func:`_read_plain`); None when it is not plain."""
    plain, hashes = _plain_bytes(piece)
    if not plain:
        return None
    try:
        raw = pl.read_csv(
            piece, separator=" ", has_header=False, comment_prefix="#" if hashes else None, quote_char=None,
            new_columns=list(types), schema=types,
        )  # fmt: skip
    except pl.exceptions.PolarsError:
        return None
    if any(raw.null_count().row(0)):
        raw = raw.filter(~pl.all_horizontal(pl.all().is_null()))  # lines of blanks, skipped
        if any(raw.null_count().row(0)):
            return None
    if label == "run":
        if raw.select(pl.col("score").is_nan().any()).item():
            return None
        raw = raw.with_columns(_whole_rank(pl.col("rank"))) if "rank" in keep else raw
    return raw.select(keep)


def _read_plain(
    path: str | os.PathLike[str],
    label: str,
    fields: dict[str, int],
    n_fields: int,
    keep: Sequence[str],
    categorical: Collection[str] = (),
) -> pl.DataFrame | None:
    """The file read by the CSV reader, typed, when it is plain: ASCII, fields separated by
    single spaces, every line well formed (several times faster than splitting lines); None
    otherwise, and the line-by-line reader then reads it, or finds and names what is wrong.

    What makes a file not plain is left to the reader and found in its result: an empty field
    (a run of spaces, a space at either end of a line) or a missing one reads as null, a line
    with more fields than the layout fails (a run line may have more: the line reader ignores
    them), and so does a number that Polars' cast from text would not read (the CSV reader's
    numbers are that cast's). A line of blanks only reads as a row of nulls and is skipped,
    as the line reader skips it; comment lines start with '#' at the line's start. The file is
    read :data:`_PIECE` bytes at a time, and only the columns `keep` are kept of each piece;
    the `categorical` columns, and the fields not in `fields`, are read as Categorical."""
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return None  # (the line reader reads an empty file)
    schema = RUN_SCHEMA if label == "run" else QRELS_SCHEMA
    names = {position: name for name, position in fields.items()}
    columns = [names.get(i, f"__f{i}") for i in range(n_fields)]
    # the rank is never checked: read as a number, "2.0" is 2 and any other number null
    types = {c: pl.Float64 if c == "rank" else schema.get(c, pl.String) for c in columns}
    types.update({c: pl.Categorical for c in columns if c in categorical or c not in fields})
    frames = []
    for piece in _pieces(p):
        frame = _read_piece(piece, label, keep, types)
        if frame is None:
            return None
        frames.append(frame)
    return pl.concat(frames, rechunk=False)


def _parse(
    path: str | os.PathLike[str],
    label: str,
    fields: dict[str, int],
    layout: str,
    *,
    eager: bool = False,
    keep: Sequence[str] | None = None,
    categorical: Collection[str] = (),
) -> pl.LazyFrame:
    """Split each line into `fields` (name -> position), check every line, return the frame.

    The check reads the file once now, so a malformed line is reported when the function is
    called, with its line number; the returned frame reads it again when collected (with
    `eager`, the lines are read once: the frame returned is a collected one, made lazy). The
    columns `keep` (default: every field) are returned, the `categorical` ones as Categorical.
    """
    n_fields = len(layout.split())
    keep = list(fields) if keep is None else list(keep)
    if eager and (plain := _read_plain(path, label, fields, n_fields, keep, categorical)) is not None:
        return plain.lazy()
    lines = _lines(path, label)
    parsed, bad = _parsed(
        lambda i: pl.col(_FIELDS).list.get(i, null_on_oob=True), pl.col(_FIELDS).list.len(), label, fields, n_fields
    )
    undecoded = pl.col(_LINE).str.contains("\ufffd", literal=True)
    if eager:  # one pass: the values and the flags the checks read
        flags = (
            bad.alias("__bad"),
            pl.col(_NUMBER),
            pl.when(bad).then(pl.col(_LINE)).alias(_LINE),
            pl.when(bad).then(pl.col(_FIELDS)).alias(_FIELDS),
            undecoded.alias("__u"),
        )
        read = lines.select(*parsed.values(), *flags).collect()
        problems = read.select(*_problems(pl.col("__bad"), pl.col(_NUMBER), pl.col(_LINE), pl.col(_FIELDS), pl.col("__u")))
    else:
        checks = lines.select(*_problems(bad, pl.col(_NUMBER), pl.col(_LINE), pl.col(_FIELDS), undecoded))
        problems = checks.collect(engine="streaming")
    if problems["undecoded"][0] and (error := _not_utf8(Path(path), label)) is not None:
        raise error
    if problems["n"][0]:
        number, text, count = problems[_NUMBER][0], problems[_LINE][0], problems["n"][0]
        shown = text if len(text) <= 80 else text[:77] + "..."
        wrong = _what_is_wrong(problems[_FIELDS][0].to_list(), label, layout)
        what = (
            "a number for the score (inf and -inf rank as numbers; NaN is refused)"
            if label == "run"
            else "a whole-number relevance"
        )
        raise RecframeError(
            f"{label} file {str(path)!r}, line {number}: {shown!r} is not '{layout}': {wrong} "
            f"({count} malformed line(s) in all). Hint: each line needs {n_fields} fields separated "
            f"by spaces or tabs, with {what}; comment lines start with '#'."
        )
    as_categories = [pl.col(c).cast(pl.Categorical) for c in categorical if c in keep]
    if eager:
        return read.select(keep).with_columns(as_categories).lazy()
    return lines.select(parsed[c] for c in keep).with_columns(as_categories)


def read_trec_run(
    path: str | os.PathLike[str], *, eager: bool = False, columns: Sequence[str] | None = None, categorical: bool = False
) -> pl.LazyFrame:
    """Read a TREC run file (``qid Q0 docno rank score tag``) as a lazy Polars frame.

    Parameters
    ----------
    path : str or path-like
        The run file. Fields are separated by spaces or tabs; fields after the tag are
        ignored, as trec_eval ignores them; lines starting with ``#`` and blank lines are
        skipped.
    eager : bool, default False
        Read the file once, now, into memory (the frame returned is a collected one, made
        lazy); by default it is checked now and read again when the frame is collected,
        which suits files larger than memory.
    columns : sequence of str, optional
        The columns to return, of ``user_id``, ``item_id``, ``rank``, ``score`` and ``run``
        (default: all five). Every line is checked all the same; read eagerly, the others
        are dropped as the file is read, which lowers the peak memory of a large run.
    categorical : bool, default False
        Read the query ids and the tag as Categorical instead of String: a large run read
        eagerly takes about a quarter less memory (``recframe evaluate --format trec`` reads
        runs so, with ``columns=["user_id", "item_id", "score", "run"]``).

    Returns
    -------
    polars.LazyFrame
        Columns ``user_id`` (the query id, String), ``item_id`` (the document number,
        String), ``rank`` (Int64, as written), ``score`` (Float64) and ``run`` (the tag), or
        the `columns` given; ``user_id`` and ``run`` Categorical under `categorical`.
        Evaluate it with ``score="score"``: trec_eval ranks by score, not by the rank field.

    Raises
    ------
    RecframeError
        When `columns` names a column twice or one the file has not; when the file is
        missing, or a line has fewer than six fields, or a score that is not a number (NaN
        included; ``inf`` and ``-inf`` are numbers, ranked as trec_eval ranks them): the
        message gives the first such line's number and text, what is wrong with it, and how
        many such lines there are. The file is read once to check it when the function is called, and again
        when the frame is collected.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n# a comment\\nq2 Q0 d1 1 0.3 bm25\\n")
    >>> read_trec_run(path).collect().rows()
    [('q1', 'd1', 1, 2.5, 'bm25'), ('q1', 'd2', 2, 1.5, 'bm25'), ('q2', 'd1', 1, 0.3, 'bm25')]
    """
    fields = {"user_id": 0, "item_id": 2, "rank": 3, "score": 4, "run": 5}
    unknown = [c for c in columns or () if c not in fields]
    if unknown or (columns is not None and (not columns or len(set(columns)) < len(columns))):
        raise RecframeError(
            f"columns={list(columns or [])!r}: a run file's columns are {', '.join(fields)}, each once"
            f"{f' ({unknown[0]!r} is not one)' if unknown else ''}. Hint: e.g. columns=['user_id', 'item_id', 'score']."
        )
    kinds = ("user_id", "run") if categorical else ()
    return _parse(path, "run", fields, "qid Q0 docno rank score tag", eager=eager, keep=columns, categorical=kinds)


def read_trec_qrels(path: str | os.PathLike[str], *, eager: bool = False) -> pl.LazyFrame:
    """Read a TREC qrels file (``qid iter docno relevance``) as a lazy Polars frame.

    Parameters
    ----------
    path : str or path-like
        The qrels file. Fields are separated by spaces or tabs; lines starting with ``#``
        and blank lines are skipped.
    eager : bool, default False
        Read the file once, now, into memory (the frame returned is a collected one, made
        lazy); by default it is checked now and read again when the frame is collected,
        which suits files larger than memory.

    Returns
    -------
    polars.LazyFrame
        Columns ``user_id`` (the query id, String), ``item_id`` (the document number,
        String) and ``relevance`` (Int64, as written: 0 is judged not relevant; below 0,
        trec_eval's "in the pool, not judged", which ``negative_relevance="unjudged"``
        reads, as both trec_eval profiles set it; pass ``threshold=`` for trec_eval's
        ``-l``). Pass it as ``truth=``.

    Raises
    ------
    RecframeError
        When the file is missing, or a line does not have four fields with a whole-number
        relevance: the message gives the first such line's number and text, what is wrong with
        it, and how many such lines there are. The file is read once to check it when the function is called, and again
        when the frame is collected.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("q1 0 d1 1\\nq1 0 d3 2\\nq2\\t0\\td1\\t0\\n")
    >>> read_trec_qrels(path).collect().rows()
    [('q1', 'd1', 1), ('q1', 'd3', 2), ('q2', 'd1', 0)]
    """
    return _parse(path, "qrels", {"user_id": 0, "item_id": 2, "relevance": 3}, "qid iter docno relevance", eager=eager)


# ---------------------------------------------------------------------------- trec_eval's measures

#: ``k`` meaning the whole list: ``per_user(..., k=[WHOLE])`` gives ``ap@9223372036854775807``,
#: trec_eval's ``map`` (recframe cuts a list at k, and no list is longer)
WHOLE = sys.maxsize
#: trec_eval's default cut-offs of P, recall, ndcg_cut and map_cut (success has 1, 5, 10)
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure and the recframe column it is read from."""

    #: the recframe metric (a ``metrics=`` name) whose column it is; None for ``n_relevant``,
    #: which every per-user frame has
    metric: str | None
    #: the per-user column; ``{k}`` stands for a cut-off
    column: str
    #: trec_eval's name; ``{k}`` stands for the same cut-off
    name: str
    #: trec_eval's value over all queries: the mean, the sum (counts, printed as whole numbers)
    #: or the geometric mean with floor 1e-5 (printed only for all queries)
    summary: Literal["mean", "sum", "gmean"] = "mean"
    #: trec_eval's default cut-offs (``{k}`` measures)
    cutoffs: tuple[int, ...] = TREC_CUTOFFS


#: recframe column -> trec_eval measure, in the order trec_eval prints its measures (the
#: metrics are those of ``profile="trec_eval"``, under whose conventions the values agree)
TREC_MEASURES: tuple[TrecMeasure, ...] = (
    TrecMeasure("num_ret", "num_ret", "num_ret", "sum"),
    TrecMeasure(None, "n_relevant", "num_rel", "sum"),
    TrecMeasure("num_rel_ret", "num_rel_ret", "num_rel_ret", "sum"),
    TrecMeasure("ap", f"ap@{WHOLE}", "map"),
    TrecMeasure("ap", f"ap@{WHOLE}", "gm_map", "gmean"),
    TrecMeasure("r_precision", "r_precision", "Rprec"),
    TrecMeasure("bpref", "bpref", "bpref"),
    TrecMeasure("rr", f"rr@{WHOLE}", "recip_rank"),
    *(TrecMeasure("iprec_at_recall", f"iprec_at_recall_{x}", f"iprec_at_recall_{x / 100:.2f}") for x in range(0, 101, 10)),
    TrecMeasure("precision", "precision@{k}", "P_{k}"),
    TrecMeasure("recall", "recall@{k}", "recall_{k}"),
    TrecMeasure("infap", "infap", "infAP"),
    TrecMeasure("bpref", "bpref", "gm_bpref", "gmean"),
    *(TrecMeasure("rprec_mult", f"rprec_mult_{x}", f"Rprec_mult_{x / 100:.2f}") for x in range(20, 201, 20)),
    TrecMeasure("iprec_11pt_avg", "iprec_11pt_avg", "11pt_avg"),
    TrecMeasure("bin_g", "bin_g", "binG"),
    TrecMeasure("ndcg", f"ndcg@{WHOLE}", "ndcg"),
    TrecMeasure("ndcg", "ndcg@{k}", "ndcg_cut_{k}"),
    TrecMeasure("ap", "ap@{k}", "map_cut_{k}"),
    TrecMeasure("hit_rate", "hit_rate@{k}", "success_{k}", cutoffs=(1, 5, 10)),
    TrecMeasure("set_precision", "set_precision", "set_P"),
    TrecMeasure("set_relative_precision", "set_relative_precision", "set_relative_P"),
    TrecMeasure("set_recall", "set_recall", "set_recall"),
    TrecMeasure("set_map", "set_map", "set_map"),
    TrecMeasure("set_f1", "set_f1", "set_F"),
    TrecMeasure("num_nonrel_judged_ret", "num_nonrel_judged_ret", "num_nonrel_judged_ret", "sum"),
)


def _found(columns: Sequence[str], k: Collection[int] | None) -> list[tuple[TrecMeasure, str, str]]:
    """(measure, column, trec_eval name) for every measure whose column is in `columns`."""
    found = []
    for measure in TREC_MEASURES:
        if "{k}" not in measure.column:
            found += [(measure, measure.column, measure.name)] if measure.column in columns else []
            continue
        prefix = measure.column.removesuffix("{k}")
        cuts = sorted(int(c[len(prefix) :]) for c in columns if c.startswith(prefix) and c[len(prefix) :].isdigit())
        wanted = measure.cutoffs if k is None else k
        found += [(measure, f"{prefix}{c}", measure.name.format(k=c)) for c in cuts if c in wanted and c != WHOLE]
    return found


def _line(name: str, qid: str, value: float | str, precision: int, whole: bool = False) -> str:
    # trec_eval's printf formats: "%-22s\t%s\t%6.4f", and "%ld" for counts
    shown = value if isinstance(value, str) else f"{round(value)}" if whole else f"{value:6.{precision}f}"
    return f"{name:<22}\t{qid}\t{shown}"


def trec_eval_text(
    per_user: pl.DataFrame,
    *,
    user: str = "user_id",
    per_query: bool = False,
    precision: int = 4,
    metrics: Collection[str] | None = None,
    k: Collection[int] | None = None,
    runid: str | None = None,
) -> str:
    """A per-user frame as trec_eval prints it: one ``measure<TAB>qid<TAB>value`` line each.

    Parameters
    ----------
    per_user : polars.DataFrame
        The output of :func:`recframe.per_user`, one row per query that trec_eval evaluates
        (in both the run and the qrels), with the columns of :data:`TREC_MEASURES`; the
        whole-list measures (``map``, ``ndcg``, ``recip_rank``) read the ``@k`` columns of
        ``k=`` :data:`WHOLE`. Other columns are ignored.
    user : str, default "user_id"
        The query id column; ids are printed and sorted as text, as trec_eval does.
    per_query : bool, default False
        Also print each query's values (trec_eval's ``-q``), queries in id order, before the
        ``all`` lines.
    precision : int, default 4
        Decimals of the values (trec_eval prints 4); counts are whole numbers.
    metrics : collection of str, optional
        Print the measures of these recframe metrics only (trec_eval's ``-m``). By default
        every measure found, after ``runid`` (when given), ``num_q`` and ``num_rel``, as
        trec_eval's default output.
    k : collection of int, optional
        The cut-offs printed (``P_5``, ...). By default trec_eval's: 5, 10, 15, 20, 30, 100, 200,
        500, 1000, and 1, 5, 10 for ``success``, those the frame has.
    runid : str, optional
        The run's tag, printed as ``runid`` (trec_eval takes the last line's).

    Returns
    -------
    str
        The lines, each ending with a newline. The ``all`` value is the mean over the queries,
        the sum for ``num_ret``, ``num_rel``, ``num_rel_ret`` and ``num_nonrel_judged_ret``,
        the geometric mean (each value at least 1e-5) for ``gm_map`` and ``gm_bpref``.

    Raises
    ------
    RecframeError
        When `per_user` has no query, no `user` column, a query on two rows, or no column of a
        trec_eval measure.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"user_id": ["q2", "q10"], "n_relevant": [1, 3], "precision@5": [0.2, 0.4]})
    >>> print(trec_eval_text(frame, per_query=True, runid="bm25"), end="")  # doctest: +NORMALIZE_WHITESPACE
    num_rel                 q10   3
    P_5                     q10   0.4000
    num_rel                 q2    1
    P_5                     q2    0.2000
    runid                   all   bm25
    num_q                   all   2
    num_rel                 all   4
    P_5                     all   0.3000
    """
    if user not in per_user.columns:
        raise RecframeError(f"the per-user frame has no {user!r} column. Hint: pass the query id column as {ref('user')}.")
    if per_user.height == 0:
        raise RecframeError(
            "no query has both results and relevance judgements (trec_eval evaluates only those). "
            "Hint: check that the run and the qrels use the same query ids."
        )
    twice = per_user.filter(pl.col(user).is_duplicated())[user]
    if len(twice):
        raise RecframeError(
            f"the per-user frame has query {twice[0]!r} on {len(twice)} rows. Hint: evaluate without {ref('by')}: one row per query."
        )
    found = [f for f in _found(per_user.columns, k) if metrics is None or f[0].metric in metrics]
    if not found:
        what = "the per-user frame has" if metrics is None else f"{ref('metrics', sorted(metrics))}: the per-user frame has"
        names = ", ".join(dict.fromkeys(m.metric for m in TREC_MEASURES if m.metric))
        raise RecframeError(f"{what} no column of a trec_eval measure. Hint: evaluate some of {names}.")
    frame = per_user.select(pl.col(user).cast(pl.String), *dict.fromkeys(c for _, c, _ in found)).sort(user)
    lines = []
    if per_query:
        singles = [(column, name, m.summary == "sum") for m, column, name in found if m.summary != "gmean"]
        for row in frame.iter_rows(named=True):
            lines += [_line(n, row[user], row[c], precision, whole) for c, n, whole in singles if row[c] is not None]
    summaries = {
        "mean": lambda c: pl.col(c).mean(),
        "sum": lambda c: pl.col(c).sum(),
        "gmean": lambda c: pl.col(c).clip(lower_bound=GMEAN_FLOOR).log().mean().exp(),
    }
    values = frame.select(summaries[m.summary](c).alias(n) for m, c, n in found).row(0)
    if metrics is None:
        lines += [_line("runid", "all", runid, precision)] if runid is not None else []
        lines.append(_line("num_q", "all", frame.height, precision, whole=True))
    lines += [_line(n, "all", v, precision, m.summary == "sum") for (m, _, n), v in zip(found, values) if v is not None]
    return "\n".join(lines) + "\n"
