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
number descending.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from recframe.errors import RecframeError

#: column name -> dtype of a parsed run file (the ``Q0`` field is dropped)
RUN_SCHEMA = {"user_id": pl.String, "item_id": pl.String, "rank": pl.Int64, "score": pl.Float64, "run": pl.String}
#: column name -> dtype of a parsed qrels file (the ``iter`` field is dropped)
QRELS_SCHEMA = {"user_id": pl.String, "item_id": pl.String, "relevance": pl.Int64}

_LINE, _NUMBER, _FIELDS = "__rf_line", "__rf_line_number", "__rf_fields"
# a byte that never appears in a text line: each line is read as one field
_NO_SEPARATOR = "\x1f"


def _lines(path: str | os.PathLike[str], label: str) -> pl.LazyFrame:
    """The file's lines with their 1-based numbers, comments and blank lines removed."""
    p = Path(path)
    if not p.is_file():
        what = "a folder" if p.is_dir() else "not found"
        raise RecframeError(f"{label} file {str(path)!r}: {what}. Hint: pass the path of a TREC {label} file.")
    lines = pl.scan_csv(
        p,
        has_header=False,
        separator=_NO_SEPARATOR,
        quote_char=None,
        new_columns=[_LINE],
        schema={_LINE: pl.String},
    ).with_row_index(_NUMBER, offset=1)
    text = pl.col(_LINE).str.strip_chars()
    return lines.filter(text.is_not_null() & (text != "") & ~text.str.starts_with("#")).with_columns(
        text.str.replace_all(r"\s+", " ").str.split(" ").alias(_FIELDS)
    )


def _parse(path: str | os.PathLike[str], label: str, fields: dict[str, int], layout: str) -> pl.LazyFrame:
    """Split each line into `fields` (name -> position), check every line, return the frame.

    The check reads the file once now, so a malformed line is reported when the function is
    called, with its line number; the returned frame reads it again when collected.
    """
    lines = _lines(path, label)
    n_fields = len(layout.split())
    schema = RUN_SCHEMA if label == "run" else QRELS_SCHEMA
    parsed = {
        name: pl.col(_FIELDS).list.get(position, null_on_oob=True).cast(schema[name], strict=False).alias(name)
        for name, position in fields.items()
    }
    raw = {name: pl.col(_FIELDS).list.get(position, null_on_oob=True) for name, position in fields.items()}
    bad = pl.col(_FIELDS).list.len() != n_fields
    for name in fields:
        bad = bad | (parsed[name].is_null() & raw[name].is_not_null())
        if schema[name] == pl.Float64:
            bad = bad | ~parsed[name].is_finite().fill_null(True)
    problems = (
        lines.filter(bad).select(pl.len().alias("n"), pl.col(_NUMBER).first(), pl.col(_LINE).first()).collect(engine="streaming")
    )
    if problems["n"][0]:
        number, text, count = problems[_NUMBER][0], problems[_LINE][0], problems["n"][0]
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise RecframeError(
            f"{label} file {str(path)!r}, line {number}: {shown!r} is not '{layout}' "
            f"({count} malformed line(s) in all). Hint: each line needs {n_fields} fields separated "
            "by spaces or tabs, whole numbers where a rank or relevance goes and a finite number "
            "for the score; comment lines start with '#'."
        )
    return lines.select(*parsed.values())


def read_trec_run(path: str | os.PathLike[str]) -> pl.LazyFrame:
    """Read a TREC run file (``qid Q0 docno rank score tag``) as a lazy Polars frame.

    Parameters
    ----------
    path : str or path-like
        The run file. Fields are separated by spaces or tabs; lines starting with ``#`` and
        blank lines are skipped.

    Returns
    -------
    polars.LazyFrame
        Columns ``user_id`` (the query id, String), ``item_id`` (the document number,
        String), ``rank`` (Int64, as written), ``score`` (Float64) and ``run`` (the tag).
        Evaluate it with ``score="score"``: trec_eval ranks by score, not by the rank field.

    Raises
    ------
    RecframeError
        When the file is missing, or a line does not have six fields, a whole-number rank and
        a finite score: the message gives the first such line's number and text and how many
        there are. The file is read once to check it when the function is called, and again
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
    return _parse(path, "run", fields, "qid Q0 docno rank score tag")


def read_trec_qrels(path: str | os.PathLike[str]) -> pl.LazyFrame:
    """Read a TREC qrels file (``qid iter docno relevance``) as a lazy Polars frame.

    Parameters
    ----------
    path : str or path-like
        The qrels file. Fields are separated by spaces or tabs; lines starting with ``#``
        and blank lines are skipped.

    Returns
    -------
    polars.LazyFrame
        Columns ``user_id`` (the query id, String), ``item_id`` (the document number,
        String) and ``relevance`` (Int64: 0 or less is judged not relevant, as in
        trec_eval; pass ``threshold=`` for trec_eval's ``-l``). Pass it as ``truth=``.

    Raises
    ------
    RecframeError
        When the file is missing, or a line does not have four fields with a whole-number
        relevance: the message gives the first such line's number and text and how many
        there are. The file is read once to check it when the function is called, and again
        when the frame is collected.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("q1 0 d1 1\\nq1 0 d3 2\\nq2\\t0\\td1\\t0\\n")
    >>> read_trec_qrels(path).collect().rows()
    [('q1', 'd1', 1), ('q1', 'd3', 2), ('q2', 'd1', 0)]
    """
    return _parse(path, "qrels", {"user_id": 0, "item_id": 2, "relevance": 3}, "qid iter docno relevance")
