"""The relevance and gain rules: which rows are relevant, which gain in DCG and by how much.

Read by the plan (:mod:`recframe.engine._engine`), the data checks (:mod:`recframe.engine._checks`), the
inspect view and trec_eval's gains, so they sit below all of them.
"""

from __future__ import annotations

import narwhals as nw

from recframe import _names as n
from recframe.engine import _validate as v


def is_relevant(spec: v.Spec) -> nw.Expr:
    """relevance >= threshold (or > 0 without one); null relevance is not relevant."""
    return relevance_rule(spec).fill_null(False)


def relevance_rule(spec: v.Spec) -> nw.Expr:
    """relevance >= threshold (or > 0 without one), null where relevance is: as a filter, a
    comparison with the column that DuckDB and Polars push into a parquet scan."""
    rel = nw.col(n.REL)
    return rel >= spec.selection.threshold if spec.selection.threshold is not None else rel > 0


def gains(spec: v.Spec) -> nw.Expr:
    """Whether a row gains in DCG: relevant, or graded above 0 (``gain_threshold="positive"``)."""
    if spec.conventions.gain_threshold == "positive":
        return (nw.col(n.REL) > 0).fill_null(False)
    return is_relevant(spec)


def gain(spec: v.Spec) -> nw.Expr:
    """The gain of a relevant row under the call's ``gain`` convention."""
    rel = nw.col(n.REL)
    return {"linear": rel, "binary": nw.lit(1.0), "exp2": nw.lit(2.0) ** rel - 1.0}[spec.conventions.gain]
