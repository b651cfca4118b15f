"""trec_eval's command line, measure for measure: what ``recframe evaluate --format trec`` prints.

trec_eval (10.0, and 9.0.8 under ``profile="trec_eval9"``) is run as
``trec_eval [-q] [-c] [-J] [-M n] [-N n] [-l level] [-n] {-m measure[.params]} QRELS RUN``;
:func:`evaluate` takes the same choices as :class:`Request` and returns the text trec_eval
prints, line for line. The work is split as follows:

- the measures recframe has (``map``, ``P_k``, ``ndcg``, ``bpref``, ``infAP``, ...) are computed
  by :func:`recframe.per_user` with the profile's conventions, or (trec_eval's own conventions)
  finished by the same registry formulas from term columns computed in one pass, so the API and
  the command line give the same numbers;
- the measures that only make sense as trec_eval defines them (``relstring``, ``utility``, ...:
  :attr:`Family.native` in :data:`FAMILIES`) and those given parameters of their own
  (``-m ndcg.1=3,2=9``, ``-m iprec_at_recall..25``) are computed here, with Polars expressions
  over each query's ranked relevance codes (no loop over queries).

Each query's documents are ordered as trec_eval orders them: by score, highest first (a C
double, in 10.0 and in the 9.0.8 release alike; ``inf`` and ``-inf`` are numbers), ties by
document number in decreasing byte order. A
retrieved document has the code of its qrels grade; one not in the qrels is "not in the pool"
(``-1``, printed ``-`` by relstring); a negative grade is "in the pool, not judged" (``-2``,
``.``), which infAP's sampling reads and every other measure counts as not relevant.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import narwhals as nw
import numpy as np
import polars as pl

from recframe import _names as n
from recframe.engine import _call, _engine, _relevance
from recframe.engine import _validate as v
from recframe.errors import RecframeError
from recframe.metrics import REGISTRY, TERMS, term
from recframe.metrics._registry import added, cutoff, discount, divided, position_cut
from recframe.metrics.ir import INFAP_EPSILON, R_MULTIPLES
from recframe.options import PER_USER_NAMES
from recframe.trec_eval.trec import TREC_CUTOFFS, TREC_MEASURES, WHOLE

NONPOOL, UNJUDGED = -1, -2  # trec_eval's RELVALUE_NONPOOL and RELVALUE_UNJUDGED
_BOGUS = "ceci_nest_pas_un_docno"  # trec_eval 10.0's one document of a query missing from the run
_LEVELS = tuple(x / 10 for x in range(11))  # 0.0, 0.1, ..., 1.0 as C doubles (0.1 * 3 != 0.3)
_MULTIPLES = tuple(x / 10 for x in range(2, 21, 2))

Params = Literal["none", "cutoffs", "levels", "doubles", "pairs"]
Summary = Literal["mean", "sum", "gmean", "count", "runid", "none"]


@dataclass(frozen=True)
class Family:
    """One trec_eval measure (``-m NAME``), possibly printed once per parameter."""

    name: str
    #: how ``-m NAME.PARAMS`` is read: whole-number cut-offs (sorted, ``P_5``), fractional
    #: levels (sorted, ``iprec_at_recall_0.25``), numbers (``utility_2,-1,0,0``) or
    #: ``name=value`` pairs (``ndcg_1=3,2=9``)
    params: Params = "none"
    default: tuple[float, ...] = ()
    #: the ``all`` line: mean over the queries, sum (a count), geometric mean, number of
    #: queries, the run's tag, or none (relstring)
    summary: Summary = "mean"
    #: printed per query (``-q``)
    per_query: bool = True
    #: whole numbers (``%ld``)
    whole: bool = False
    #: added in trec_eval 10.0
    since_10: bool = False
    #: computed here (:func:`measures_here`) instead of finished by recframe's registry (which
    #: :data:`recframe.trec.TREC_MEASURES` maps the other names to), by :func:`_gain_measure`,
    #: :func:`_precision_measures` or :func:`_count_measures`: always where the registry has no
    #: column of its name, else under parameters of its own (``-m ndcg.1=3``)
    native: Literal["gains", "precision", "counts"] | None = None


#: every measure of trec_eval 10.0's standard qrels and run formats, in the order it prints them
FAMILIES: tuple[Family, ...] = (
    Family("runid", summary="runid", per_query=False),
    Family("num_q", summary="count", per_query=False, whole=True),
    Family("num_ret", summary="sum", whole=True),
    Family("num_rel", summary="sum", whole=True),
    Family("num_rel_ret", summary="sum", whole=True),
    Family("map"),
    Family("gm_map", summary="gmean", per_query=False),
    Family("Rprec"),
    Family("bpref"),
    Family("recip_rank"),
    Family("iprec_at_recall", "levels", _LEVELS, native="precision"),
    Family("P", "cutoffs", TREC_CUTOFFS),
    Family("relstring", "doubles", (10,), summary="none", native="counts"),
    Family("recall", "cutoffs", TREC_CUTOFFS),
    Family("infAP"),
    Family("gm_bpref", summary="gmean", per_query=False),
    Family("Rprec_mult", "levels", _MULTIPLES, native="precision"),
    Family("utility", "doubles", (1.0, -1.0, 0.0, 0.0), native="counts"),
    Family("11pt_avg", "doubles", _LEVELS, native="precision"),
    Family("binG"),
    Family("G", "pairs", native="gains"),
    Family("dcg", "pairs", since_10=True, native="gains"),
    Family("ideal_dcg", "pairs", since_10=True, native="gains"),
    Family("ndcg", "pairs", native="gains"),
    Family("ndcg_rel", "pairs", native="gains"),
    Family("Rndcg", "pairs", native="gains"),
    Family("ndcg_cut", "cutoffs", TREC_CUTOFFS),
    Family("map_cut", "cutoffs", TREC_CUTOFFS),
    Family("relative_P", "cutoffs", TREC_CUTOFFS, native="counts"),
    Family("success", "cutoffs", (1, 5, 10)),
    Family("set_P"),
    Family("set_relative_P"),
    Family("set_recall"),
    Family("set_map"),
    Family("set_F", "doubles", (1.0,), native="counts"),
    Family("num_nonrel_judged_ret", summary="sum", whole=True),
    Family("rbp", "pairs", since_10=True, native="gains"),
    Family("rbp_resid", "pairs", since_10=True, native="counts"),
    Family("unj", "cutoffs", (5, 10, 20), since_10=True, native="counts"),
)
#: name -> family
FAMILY = {f.name: f for f in FAMILIES}
_COUNTS = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret")
_OFFICIAL = (*_COUNTS, "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P")
_SET = (*_COUNTS, "utility", "set_P", "set_recall", "set_relative_P", "set_map", "set_F")
#: trec_eval's names for sets of measures (``-m official`` is the default)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "set": _SET,
    "all_trec": tuple(f.name for f in FAMILIES if f.name not in ("dcg", "ideal_dcg")),
}
#: measures of trec_eval's other formats (-R prefs, qrels_jg), not read by recframe
_OTHER_FORMATS = ("prefs", "all_prefs", "qrels_jg", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap")

# -------------------------------------------------------------------------------- the request


@dataclass(frozen=True)
class Measure:
    """A requested family with its parameters: ``params`` None means trec_eval's defaults."""

    family: Family
    params: str | None = None

    @property
    def values(self) -> tuple[float, ...]:
        """The parameters as numbers (cut-offs and levels sorted, as trec_eval sorts them)."""
        if self.params is None:
            return self.family.default
        kind, text = self.family.params, self.params
        if kind == "pairs":
            return ()
        items = text.split(",")
        try:
            if kind == "cutoffs":
                numbers: list[float] = [_atol(item) for item in items]
            else:
                numbers = [float(item) for item in items]
        except ValueError:
            raise RecframeError(
                f"-m {self.family.name}.{text}: {text!r} is not a list of numbers. Hint: separate numbers with "
                f"commas, e.g. -m {self.family.name}.{','.join(str(v) for v in self.family.default[:2]) or '1'}."
            ) from None
        if kind in ("cutoffs", "levels"):
            numbers.sort()
            if len(set(numbers)) < len(numbers):
                raise RecframeError(
                    f"-m {self.family.name}.{text}: a cut-off is given twice (trec_eval refuses it too). Hint: give each once."
                )
        if kind == "cutoffs" and numbers[0] <= 0:
            raise RecframeError(
                f"-m {self.family.name}.{text}: cut-offs must be positive whole numbers. Hint: e.g. -m {self.family.name}.5,10."
            )
        if self.family.name == "utility" and len(numbers) != 4:
            raise RecframeError(
                f"-m utility.{text}: utility takes 4 coefficients (relevant retrieved, non-relevant retrieved, relevant "
                "missed, non-relevant missed). Hint: e.g. -m utility.2,-1,0,0."
            )
        return tuple(numbers)

    @property
    def pairs(self) -> dict[str, float]:
        """``name=value`` parameters (gains by relevance level, ``p`` of rbp)."""
        if self.params is None or self.family.params != "pairs":
            return {}
        pairs: dict[str, float] = {}
        for item in self.params.split(","):
            name, equals, value = item.partition("=")
            try:
                if not equals or not name:
                    raise ValueError
                pairs[name] = float(value)
            except ValueError:
                raise RecframeError(
                    f"-m {self.family.name}.{self.params}: {item!r} is not name=value (trec_eval: malformed pair "
                    f"parameters). Hint: e.g. -m {self.family.name}.1=1,2=3 (gain by relevance level)."
                ) from None
        return pairs

    def names(self) -> list[str]:
        """The names trec_eval prints: ``P_5``, ``iprec_at_recall_0.25``, ``ndcg_1=3,2=9``."""
        kind, base = self.family.params, self.family.name
        if kind == "cutoffs":
            return [f"{base}_{int(v)}" for v in self.values]
        if kind == "levels":
            return [f"{base}_{v:3.2f}" for v in self.values]
        return [base if self.params is None else f"{base}_{self.params}"]


def _atol(text: str) -> int:
    """C's atol: the leading whole number (``23.4`` -> 23)."""
    head = text.strip()
    digits = len(head) - len(head.lstrip("+-"))
    while digits < len(head) and head[digits].isdigit():
        digits += 1
    if digits == 0 or not head[:digits].lstrip("+-"):
        raise ValueError(text)
    return int(head[:digits])


@dataclass(frozen=True)
class Request:
    """The choices of a trec_eval command line.

    Parameters
    ----------
    measures : sequence of str
        The ``-m`` arguments in order (``"official"``, ``"all_trec"``, ``"P.5,10"``); empty
        means ``official``. A measure's parameters are those of the first ``-m`` that gives
        it some, as trec_eval reads them; a measure that takes none ignores them, as
        trec_eval does (``set_P.5`` is ``set_P``).
    per_query, complete, judged_only, summary
        ``-q``, ``-c``, ``-J``, and not ``-n``.
    max_retrieved : int, optional
        ``-M``: only each query's first n documents (after ordering) are evaluated.
    docs_in_collection : int
        ``-N``: the number of documents in the collection (read by utility's fourth
        coefficient; trec_eval's default is 0).
    level : int
        ``-l``: a grade at least this is relevant (default 1).
    version : "10" or "9"
        trec_eval 10.0 or 9.0.8 (``--profile trec_eval9``).
    decimals : int
        Decimals printed (4, as trec_eval; more to compare numbers closely).
    """

    measures: Sequence[str] = ()
    per_query: bool = False
    complete: bool = False
    judged_only: bool = False
    max_retrieved: int | None = None
    docs_in_collection: int = 0
    level: int = 1
    summary: bool = True
    version: Literal["10", "9"] = "10"
    #: decimals of the values (trec_eval prints 4)
    decimals: int = 4
    chosen: tuple[Measure, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        marked: set[str] = set()
        params: dict[str, str] = {}
        for spec in self.measures or ["official"]:
            name, dot, given = spec.partition(".")
            if dot and not given:
                raise RecframeError(
                    f"-m {spec}: no parameters after the '.' (trec_eval: improper measure). Hint: -m {name} for its defaults."
                )
            if dot:
                params.setdefault(name, given)
            if name in NICKNAMES:
                marked.update(NICKNAMES[name])
            elif name in FAMILY:
                marked.add(name)
            elif name in _OTHER_FORMATS or name.startswith("prefs_"):
                raise RecframeError(
                    f"-m {spec}: a measure of trec_eval's preference and judgement-group formats (-R prefs, "
                    "-R qrels_jg), which recframe does not read. Hint: use trec_eval itself for those."
                )
            else:
                raise RecframeError(
                    f"-m {spec}: {name!r} is not a trec_eval measure (trec_eval: illegal measure). Hint: one of "
                    f"{', '.join(NICKNAMES)} or {', '.join(FAMILY)}."
                )
        if self.version == "9":
            new = {name for name in marked if FAMILY[name].since_10}  # all_trec of 9.0.8 has none of them
            named = [spec for spec in self.measures if spec.partition(".")[0] in new]
            if named:
                raise RecframeError(
                    f"-m {named[0]}: added in trec_eval 10.0; --profile trec_eval9 follows 9.0.8. Hint: use --profile trec_eval."
                )
            marked -= new
        for flag, value, example in (
            ("-N", self.docs_in_collection, 100000),
            ("-l", self.level, 2),
            ("-M", self.max_retrieved, 100),
        ):
            if value is None and flag == "-M":  # (not given)
                continue
            try:
                whole = value is not None and not isinstance(value, bool) and -(2**63) <= operator.index(value) < 2**63
            except TypeError:
                whole = False
            if not whole:
                raise RecframeError(
                    f"{flag} {value!r}: trec_eval reads a whole number there (a C long, below 2**63 in size). "
                    f"Hint: e.g. {flag} {example}."
                )
        if self.max_retrieved is not None and self.max_retrieved < 0:
            raise RecframeError(
                f"-M {self.max_retrieved}: the number of documents kept per query cannot be negative. Hint: e.g. -M 100."
            )
        # a measure without parameters ignores any given to it, as trec_eval's te_init_meas_s_float
        # and its kin do (-m set_P.5 prints set_P)
        chosen = tuple(Measure(f, params.get(f.name) if f.params != "none" else None) for f in FAMILIES if f.name in marked)
        for measure in chosen:  # parameters are checked before any file is read
            measure.values  # noqa: B018
            measure.pairs  # noqa: B018
        object.__setattr__(self, "chosen", chosen)


# ---------------------------------------------------------------------------- the ranked codes


_HASH = "__rf_pair_hash"


def _with_hash(frame: pl.DataFrame) -> tuple[pl.DataFrame, bool]:
    """`frame` with a 64-bit hash of each (user_id, item_id) pair, and whether the hashes are
    distinct (then no pair repeats, and the hash can stand for the pair in joins)."""
    hashed = frame.with_columns(pl.struct("user_id", "item_id").hash().alias(_HASH))
    return hashed, hashed[_HASH].n_unique() == hashed.height


def _unique_pairs(frame: pl.DataFrame, label: str) -> tuple[pl.DataFrame, bool]:
    """:func:`_with_hash`, refusing a (query, document) pair on two rows, as trec_eval does."""
    hashed, distinct = _with_hash(frame)
    twice = hashed.clear() if distinct else hashed.filter(pl.struct("user_id", "item_id").is_duplicated())
    if twice.height:
        qid, doc = twice.select("user_id", "item_id").row(0)
        what = "judges" if label == "qrels" else "retrieves"
        raise RecframeError(
            f"{label}: query {qid!r} {what} document {doc!r} twice ({twice.height} lines of repeated documents; "
            "trec_eval stops: duplicate docs). Hint: keep each document once per query (in a run, e.g. its highest score)."
        )
    return hashed, distinct


def _join_judged(ranked: pl.DataFrame, judged: pl.DataFrame, distinct: bool) -> pl.DataFrame:
    """The retrieved rows with their qrels grade (in their order), then the judged rows not
    retrieved. The join runs on the pair hashes when both sides' are distinct and every match
    is checked to be the same pair; else (a collision) on the pairs themselves."""
    pair = ["user_id", "item_id"]
    if distinct:
        right = judged.select(_HASH, "relevance", pl.col("user_id").alias("__u"), pl.col("item_id").alias("__i"))
        matched = ranked.join(right, on=_HASH, how="left", maintain_order="left")
        found = matched.filter(pl.col("__u").is_not_null())
        if found.select(((pl.col("__u") == pl.col("user_id")) & (pl.col("__i") == pl.col("item_id"))).all()).item():
            missed = judged.join(ranked.select(_HASH), on=_HASH, how="anti")
            return pl.concat([matched.drop("__u", "__i"), missed], how="diagonal_relaxed")
    matched = ranked.join(judged.drop(_HASH), on=pair, how="left", maintain_order="left")
    missed = judged.join(ranked.select(pair), on=pair, how="anti")
    return pl.concat([matched, missed], how="diagonal_relaxed")


def _in_trec_order(run: pl.DataFrame, query: str) -> pl.DataFrame:
    """`run` (`query`, score, item_id) in trec_eval's order: each query's rows in one block, by
    score, ties by document number, both decreasing. Runs are mostly written so: a linear check
    finds it (comparing document numbers only where scores tie), and then nothing is sorted."""
    user, value, item = pl.col(query), pl.col("score"), pl.col("item_id")
    same = (user == user.shift(1)).fill_null(False)
    tie = same & (value == value.shift(1))
    order, ties, blocks, users = run.select(
        (~same | (value < value.shift(1)) | tie).all().alias("order"),
        tie.any().alias("ties"),
        (~same).sum().alias("blocks"),
        user.n_unique().alias("users"),
    ).row(0)
    if order and blocks == users and (not ties or run.select((~tie | (item < item.shift(1))).all()).item()):
        return run
    return run.sort(query, "score", "item_id", descending=[False, True, True], nulls_last=True)


def _relevance_code(grade: pl.Expr) -> pl.Expr:
    """A document's code: its qrels grade; :data:`NONPOOL` outside the pool; :data:`UNJUDGED`
    for a negative grade (in the pool, not judged)."""
    return pl.when(grade.is_null()).then(NONPOOL).when(grade < 0).then(UNJUDGED).otherwise(grade).cast(pl.Int64)


def ranked_codes(run: pl.DataFrame, judged: pl.DataFrame, request: Request) -> pl.DataFrame:
    """Each query's documents in trec_eval's order with their relevance codes, and the judged
    documents it did not retrieve.

    ``run`` and ``judged`` are collected frames of :func:`recframe.read_trec_run` (user_id,
    item_id, score) and :func:`recframe.read_trec_qrels`. Returns ``user_id``, ``item_id``,
    ``position`` (1, 2, ... in order; null for a judged document not retrieved), ``relevance``
    (the qrels grade, null outside the pool) and ``code`` (the grade; :data:`NONPOOL`;
    :data:`UNJUDGED`), after ``-M`` and ``-J``, for the queries of the qrels only, the
    retrieved rows first in (query, position) order.

    Raises
    ------
    RecframeError
        A document twice in one query of the run (among the first ``-M``) or of the qrels, as
        trec_eval refuses them.
    """
    judged, judged_distinct = _unique_pairs(judged.select("user_id", "item_id", "relevance"), "qrels")
    score = pl.col("score").cast(pl.Float64)  # (a C double in 10.0 and 9.0.8 alike)
    ranked = run.filter(pl.col("user_id").is_in(judged["user_id"].unique().implode())).with_columns(score)
    ranked = _in_trec_order(ranked, "user_id")
    ranked = ranked.with_columns(position=pl.int_range(1, pl.len() + 1).over("user_id"))
    if request.max_retrieved is not None:
        ranked = ranked.filter(pl.col("position") <= request.max_retrieved)
    ranked, ranked_distinct = _unique_pairs(ranked.drop("score"), "run")
    coded = _join_judged(ranked, judged, judged_distinct and ranked_distinct).with_columns(
        code=_relevance_code(pl.col("relevance"))
    )
    if request.judged_only:  # unjudged documents removed, the ranks closed up (ties keep their order)
        kept = coded.filter(pl.col("position").is_null() | (pl.col("code") >= 0))
        retrieved = kept.filter(pl.col("position").is_not_null())
        retrieved = retrieved.with_columns(position=pl.int_range(1, pl.len() + 1).over("user_id"))
        coded = pl.concat([retrieved, kept.filter(pl.col("position").is_null())])
    return coded.select("user_id", "item_id", "position", "relevance", "code")


def level_counts(qrels: pl.DataFrame) -> pl.DataFrame:
    """Per query and grade >= 0: the number of judged documents (trec_eval's rel_levels)."""
    # counts as Int64 (pl.len() is UInt32): they are subtracted from one another (utility)
    return qrels.filter(pl.col("relevance") >= 0).group_by("user_id", "relevance").agg(count=pl.len().cast(pl.Int64))


# ------------------------------------------------------------------- measures computed here


def _gain_table(measure: Measure, counts: pl.DataFrame) -> pl.DataFrame:
    """user_id, level, gain, count: trec_eval's setup_gains, each level present (0 up to the
    largest grade of the query) with gain = level unless a ``level=gain`` pair sets it."""
    given = {int(name): gain for name, gain in measure.pairs.items() if _is_int(name)}
    top = counts.group_by("user_id").agg(top=pl.col("relevance").max())
    levels = top.with_columns(level=pl.int_ranges(0, pl.col("top") + 1)).explode("level").drop("top")
    extra = pl.DataFrame({"level": list(given)}, schema={"level": pl.Int64})
    levels = pl.concat([levels, top.select("user_id").join(extra, how="cross")]).unique()
    table = levels.join(counts.rename({"relevance": "level"}), on=["user_id", "level"], how="left").with_columns(
        pl.col("count").fill_null(0)
    )
    gain = pl.col("level").cast(pl.Float64)
    for level, value in given.items():
        gain = pl.when(pl.col("level") == level).then(value).otherwise(gain)
    return table.with_columns(gain=gain)


def _powers(p: float, positions: np.ndarray) -> np.ndarray:
    """p^0, p^1, ..., p^n, n the largest of `positions` (0 when none), each the previous one
    times p, as trec_eval's rbp and rbp_resid step their weight down the ranking (a power
    function rounds differently): position i weighs ``[i - 1]``, n documents leave ``[n]``."""
    return np.cumprod(np.r_[1.0, np.full(int(positions.max()) if len(positions) else 0, p)])


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def _ideal(gains: pl.DataFrame) -> pl.DataFrame:
    """user_id, position, ideal: the ideal ranking's gains (levels by gain, highest first, each
    repeated by its count, up to the first level whose gain is not positive)."""
    levels = gains.filter(pl.col("count") > 0).sort("user_id", "gain", descending=[False, True])
    levels = levels.filter((pl.col("gain") <= 0).cum_sum().over("user_id") == 0)
    return (
        levels.with_columns(ideal=pl.col("gain").repeat_by("count"))
        .explode("ideal")
        .select("user_id", "ideal", position=pl.int_range(1, pl.len() + 1).over("user_id"))
    )


def _gain_frame(measure: Measure, codes: pl.DataFrame, counts: pl.DataFrame, every_position: bool = False) -> pl.DataFrame:
    """Per query, rows of positions in order: ``position``, ``gain`` of the document there (0
    past the run), ``ideal`` (the ideal ranking's gain there, 0 past it), ``ret``, ``discount``,
    ``n_ret`` (the query's retrieved documents) and ``skipped`` (positions before the row that
    have no row).

    With `every_position`, every position up to the longer of the run and the ideal ranking,
    and one more. Otherwise only the positions a measure reads: those of the ideal ranking and
    one more, and those where the run has a gain. A running sum of gains or ideal gains over
    these rows is the running sum over every position, to the bit: the positions left out add
    exactly 0 to it (a tenth of the rows of a run of 1,000 documents with 100 judged).

    The query ids are sorted (text ids as an Enum of them) and the frame is sorted by them,
    flagged so, which lets the sums and running sums per query read slices; the rows are placed
    by their (query, position) offsets with numpy instead of two joins on (query, position)
    and a sort (10M rows: 5 s to under 1 s)."""
    given = {int(name): gain for name, gain in measure.pairs.items() if _is_int(name)}
    # a document's gain is its code's (trec_eval's get_gain): the grade, unless a level=gain pair
    # sets it; 0 for the codes below 0 (not in the pool, unjudged) unless a pair sets theirs. A
    # grade of the run is always a level of its query's table (its qrels have it), so no lookup
    code = pl.col("code")
    gain = pl.when(code < 0).then(0.0).otherwise(code.cast(pl.Float64))
    for level, value in given.items():
        gain = pl.when(code == level).then(value).otherwise(gain)
    run = codes.select("user_id", "position", gain=gain.fill_null(0.0))
    ideal = _ideal(_gain_table(measure, counts))
    # the run's queries come in blocks (its order, recframe.trec_eval.ranked_codes): each
    # block's id is looked up once, not each row's (10M rows: 0.6 s); else row by row
    blocks = run["user_id"].rle()
    block_ids, block_rows = blocks.struct.field("value"), blocks.struct.field("len").cast(pl.Int64).to_numpy()
    in_blocks = block_ids.n_unique() == len(block_ids)
    ids = pl.concat([block_ids if in_blocks else run["user_id"], ideal["user_id"]]).unique().sort()
    as_text = ids.dtype == pl.String
    kind = pl.Enum(ids) if as_text else ids.dtype

    def codes_of(values: pl.Series) -> np.ndarray:
        if as_text:
            return values.cast(kind).to_physical().cast(pl.Int64).to_numpy()
        return np.searchsorted(ids.to_numpy(), values.to_numpy())

    ideal_q, ideal_at = codes_of(ideal["user_id"]), ideal["position"].to_numpy()
    run_at, run_gain = run["position"].to_numpy(), run["gain"].to_numpy()
    run_q = np.repeat(codes_of(block_ids), block_rows) if in_blocks else codes_of(run["user_id"])
    # positions run 1, 2, ... in each query of the run and of the ideal ranking: the counts are
    # the last positions. Every position up to `head` has its row: the ideal ranking's and one
    # more (with every_position, the run's too); past it, the run's positions with a gain
    n_ret, n_ideal = np.bincount(run_q, minlength=len(ids)), np.bincount(ideal_q, minlength=len(ids))
    head = (np.maximum(n_ret, n_ideal) if every_position else n_ideal) + 1
    inside = run_at <= head[run_q]
    extra = np.flatnonzero(~inside & (run_gain != 0))
    extra = extra[np.lexsort((run_at[extra], run_q[extra]))]  # by query, then position
    extra_q = run_q[extra]
    rows = head + np.bincount(extra_q, minlength=len(ids))
    offset = np.cumsum(rows) - rows
    n = int(rows.sum())
    query = np.repeat(np.arange(len(ids)), rows)
    rank = np.arange(n, dtype=np.int64) - offset[query] + 1  # the row's place in its query
    position = rank.copy()
    # a query's extra rows follow its head rows, in order
    extra_slot = offset[extra_q] + head[extra_q] + np.arange(len(extra)) - np.searchsorted(extra_q, extra_q)
    position[extra_slot] = run_at[extra]
    gains, ideals = np.zeros(n), np.zeros(n)
    gains[offset[run_q[inside]] + run_at[inside] - 1] = run_gain[inside]
    gains[extra_slot] = run_gain[extra]
    ideals[offset[ideal_q] + ideal_at - 1] = ideal["ideal"].to_numpy()
    # log2(position + 1) of each position once, then placed (the same values, row by row)
    discounts = (pl.Series(np.arange(1, int(position.max(initial=0)) + 1, dtype=np.int64)) + 1).cast(pl.Float64).log(2)
    return pl.DataFrame(
        {
            "user_id": ids.cast(kind).gather(query).set_sorted(),  # (an Enum of text ids: sorted by code)
            "position": position,
            "gain": gains,
            "ideal": ideals,
            "ret": position <= n_ret[query],
            "discount": discounts.to_numpy()[position - 1],
            "n_ret": n_ret[query],
            "skipped": position - rank,
        }
    )


def _added(values: pl.Expr) -> pl.Expr:
    """The sum of `values` in a group, added in row (rank) order as trec_eval adds them (a
    group's ``sum()`` may add in another order, which can change the last bit); 0 for none."""
    return values.cum_sum().last().fill_null(0.0)


def _gain_measure(
    measure: Measure, codes: pl.DataFrame, counts: pl.DataFrame, n_rel: pl.DataFrame, built: dict[Any, pl.DataFrame]
) -> pl.DataFrame:
    """dcg, ideal_dcg, ndcg, G, ndcg_rel, Rndcg or rbp with the measure's gains, per query
    (`built`: the gain frames made so far, by parameters: G, ndcg_rel, Rndcg and rbp share one).

    Each reads only the rows of :func:`_gain_frame` where the run has a gain, or up to the
    ideal ranking's end and one more; G reads every position when an ideal gain is not a
    whole number, as its cost adds 1 for each position past the ideal ranking's end, exactly
    so only for whole numbers."""
    name = measure.family.name
    if measure.params not in built:
        built[measure.params] = _gain_frame(measure, codes, counts)
    frame = built[measure.params]
    q = "user_id"
    if name == "rbp":
        p = measure.pairs.get("p", 0.9)
        gains = _gain_table(measure, counts)
        # gains outside [0, 1] are mapped onto it (trec_eval: per Moffat); min and max start at 0
        bounds = (
            gains.with_columns(pl.col(q).cast(frame.schema[q], strict=False))
            .group_by(q)
            .agg(low=pl.min_horizontal(pl.col("gain").min(), 0.0), high=pl.max_horizontal(pl.col("gain").max(), 0.0))
        )
        frame = frame.join(bounds, on=q, how="left")
        scaled = (
            pl.when((pl.col("low") < 0) | (pl.col("high") > 1))
            .then((pl.col("gain") - pl.col("low")) / (pl.col("high") - pl.col("low")))
            .otherwise(pl.col("gain"))
        )
        # a document whose code has no gain keeps 0 (trec_eval's get_gain), scaled or not
        scaled = pl.when(pl.col("gain") != 0).then(scaled).otherwise(0.0)
        positions = frame["position"].to_numpy()
        frame = frame.with_columns(weight=_powers(p, positions)[positions - 1])
        # the weighted gains added in rank order, as trec_eval adds them
        added = _added((scaled * pl.col("weight")).filter(pl.col("ret")))
        return frame.group_by(q).agg(((1 - p) * added).alias(_col(measure)))
    if name == "G":
        ideal, positions = frame["ideal"].to_numpy(), frame["position"].to_numpy()
        # (whole numbers whose sums stay exact: the cost counts at most sum(ideal) + positions)
        if not ((np.floor(ideal) == ideal).all() and ideal.sum() + positions.max(initial=0) < 2**53):
            key = (measure.params, "every position")
            if key not in built:
                built[key] = _gain_frame(measure, codes, counts, every_position=True)
            frame = built[key]
        # the cost adds each position's ideal gain, at least 1: 1 for each position left out
        cost = pl.max_horizontal(pl.col("ideal"), pl.lit(1.0)).cum_sum().over(q) + pl.col("skipped")
        frame = frame.with_columns(term=pl.col("gain") / (2 + cost - pl.col("gain").cum_sum().over(q)).log(2))
        total = _added(pl.col("ideal"))
        got = _added(pl.col("term").filter(pl.col("ret") & (pl.col("gain") != 0)))
        return frame.group_by(q).agg(pl.when(total > 0).then(got / total).otherwise(0.0).alias(_col(measure)))
    if "dcg" not in frame.columns:  # (kept with the frame: ndcg_rel and Rndcg both read them)
        frame = built[measure.params] = frame.with_columns(
            dcg=(pl.col("gain") / pl.col("discount")).cum_sum().over(q),
            idcg=(pl.col("ideal") / pl.col("discount")).cum_sum().over(q),
        )
    total_ideal = pl.col("idcg").last()
    final_dcg = pl.col("dcg").filter(pl.col("ret")).last().fill_null(0.0)
    if name in ("dcg", "ideal_dcg", "ndcg"):
        value = {
            "dcg": final_dcg,
            "ideal_dcg": total_ideal,
            "ndcg": pl.when(total_ideal > 0).then(final_dcg / total_ideal).otherwise(0.0),
        }[name]
        return frame.group_by(q).agg(value.alias(_col(measure)))
    n_pos = (pl.col("ideal") > 0).sum().cast(pl.Int64)  # (signed: n_pos - found below)
    if name == "ndcg_rel":
        at_relevant = pl.col("ret") & (pl.col("gain") > 0)
        ratio = pl.col("dcg") / pl.col("idcg")
        found = at_relevant.sum().cast(pl.Int64)
        total = _added(ratio.filter(at_relevant)) + (n_pos - found).cast(pl.Float64) * final_dcg / total_ideal
        value = pl.when((n_pos > 0) & (total > 0)).then(total / n_pos).otherwise(0.0)
        return frame.group_by(q).agg(value.alias(_col(measure)))
    # Rndcg: nDCG where the ideal gain changes (and at the run's end past the ideal), averaged.
    # Where it changes is flagged row by row before the group-by: an expression that compares
    # a row with its group's n_pos inside the aggregation runs group by group (three times
    # slower). A change is at a position from 2 to n_pos + 1, and every position up to n_pos
    # + 1 has its row: the previous position is the previous row
    frame = frame.with_columns(
        change=(pl.col("position") >= 2)
        & (pl.col("position") <= n_pos.over(q) + 1)
        & (pl.col("ideal") != pl.col("ideal").shift(1)),
        before=pl.col("dcg").shift(1) / pl.col("idcg").shift(1),
    )
    tail = (pl.col("n_ret").first() > n_pos + 1).cast(pl.Float64)
    total = _added(pl.col("before").filter(pl.col("change"))) + tail * final_dcg / total_ideal
    count = pl.col("change").sum().cast(pl.Int64) + tail
    value = pl.when(count > 0).then(total / count).otherwise(0.0)
    out = frame.group_by(q).agg(value.alias(_col(measure))).with_columns(pl.col(q).cast(n_rel.schema[q]))
    # a query with nothing relevant at -l: 0
    return out.join(n_rel, on=q, how="left").select(
        q, pl.when(pl.col("num_rel") > 0).then(pl.col(_col(measure))).otherwise(0.0).alias(_col(measure))
    )


def _col(measure: Measure) -> str:
    return measure.names()[0]


def _precision_measures(measure: Measure, codes: pl.DataFrame, n_rel: pl.DataFrame, request: Request) -> pl.DataFrame:
    """iprec_at_recall, 11pt_avg and Rprec_mult at any levels, per query."""
    q, level = "user_id", request.level
    relevant = codes.filter(pl.col("code") >= level).with_columns(found=pl.int_range(1, pl.len() + 1).over(q))
    # interpolated precision from the j-th relevant document on: the largest j' / p' with j' >= j
    relevant = relevant.with_columns(best=(pl.col("found") / pl.col("position")).reverse().cum_max().reverse().over(q)).select(
        q, "found", "best"
    )
    per_query = n_rel
    rounding = "add" if request.version == "9" or measure.family.name == "Rprec_mult" else "round"
    out = per_query.select(q)
    columns = []
    for index, x in enumerate(measure.values):
        cut = pl.col("num_rel").cast(pl.Float64) * x + (0.9 if rounding == "add" else 0.5)
        cut = cut.floor().cast(pl.Int64)  # (long)(x R + 0.9) or lround(x R) (x R >= 0)
        name = f"__cut{index}"
        per_query = per_query.with_columns(cut.alias(name))
        if measure.family.name == "Rprec_mult":
            hits = codes.join(per_query.select(q, name), on=q).filter(
                (pl.col("position") <= pl.col(name)) & (pl.col("code") >= level)
            )
            counted = per_query.join(hits.group_by(q).agg(h=pl.len().cast(pl.Int64)), on=q, how="left")
            value = pl.when(pl.col(name) > 0).then(pl.col("h").fill_null(0) / pl.col(name)).otherwise(0.0)
            out = out.join(counted.select(q, value.alias(f"v{index}")), on=q)
        else:
            looked = per_query.select(q, name, "num_rel_ret").with_columns(found=pl.max_horizontal(pl.col(name), 1))
            looked = looked.join(relevant, on=[q, "found"], how="left")
            value = pl.when(pl.col(name) <= pl.col("num_rel_ret")).then(pl.col("best").fill_null(0.0)).otherwise(0.0)
            out = out.join(looked.select(q, value.alias(f"v{index}")), on=q)
        columns.append(f"v{index}")
    if measure.family.name == "11pt_avg":
        return out.select(q, divided(added(pl.col(c) for c in reversed(columns)), len(columns)).alias(_col(measure)))
    return out.select(q, *(pl.col(c).alias(n) for c, n in zip(columns, measure.names())))


def _count_measures(
    measure: Measure, codes: pl.DataFrame, n_rel: pl.DataFrame, request: Request, counted: dict[tuple[int, ...], pl.DataFrame]
) -> pl.DataFrame:
    """relstring, utility, relative_P, rbp_resid, unj and set_F (any beta), per query
    (`counted`: the counts within cut-offs made so far, by cut-offs: relative_P and unj share)."""
    q, name = "user_id", measure.family.name
    code, position = pl.col("code"), pl.col("position")
    stats = n_rel
    cuts = tuple(_cuts(measure))
    if cuts:  # relevant and unjudged documents within each cut-off
        if cuts not in counted:
            # counted over the judged (and relevant) rows only, a tenth of a run typically: the
            # unjudged within k are the rest of the first min(k, num_ret) (positions 1, 2, ...)
            rows = codes.filter((code >= 0) | (code >= request.level))
            counted[cuts] = rows.group_by(q).agg(
                **{f"h{k}": ((code >= request.level) & (position <= k)).sum().cast(pl.Int64) for k in cuts},
                **{f"j{k}": ((code >= 0) & (position <= k)).sum().cast(pl.Int64) for k in cuts},
            )
        stats = stats.join(counted[cuts], on=q, how="left").fill_null(0)
        stats = stats.with_columns(
            (pl.min_horizontal(pl.col("num_ret"), pl.lit(k)) - pl.col(f"j{k}")).alias(f"u{k}") for k in cuts
        )
    if name == "relstring":
        length = max(int(measure.values[0]), 0)
        char = (
            pl.when(code > 9).then(pl.lit(">")).when(code >= 0).then(code.cast(pl.String))
            .when(code == NONPOOL).then(pl.lit("-")).when(code == UNJUDGED).then(pl.lit(".")).otherwise(pl.lit("<"))
        )  # fmt: skip
        text = codes.filter(position <= length).group_by(q).agg(char.sort_by(position).str.join("").alias(_col(measure)))
        return stats.select(q).join(text, on=q, how="left").with_columns(pl.col(_col(measure)).fill_null(""))
    if name == "utility":
        a, b, c, d = measure.values
        # signed counts: the documents neither relevant nor retrieved are N + rel_ret - ret - rel,
        # below 0 when -N is left at 0 (trec_eval's longs)
        rel_ret, ret, rel = (pl.col(name).cast(pl.Int64) for name in ("num_rel_ret", "num_ret", "num_rel"))
        value = a * rel_ret + b * (ret - rel_ret) + c * (rel - rel_ret) + d * (request.docs_in_collection + rel_ret - ret - rel)
        return stats.select(q, value.cast(pl.Float64).alias(_col(measure)))
    if name == "relative_P":
        rel = pl.col("num_rel")
        return stats.select(
            q,
            *(
                pl.when(rel > 0).then(pl.col(f"h{k}") / pl.min_horizontal(rel, pl.lit(k))).otherwise(0.0).alias(n)
                for k, n in zip(_cuts(measure), measure.names())
            ),
        )
    if name == "unj":
        return stats.select(q, *(divided(pl.col(f"u{k}"), k).alias(n) for k, n in zip(_cuts(measure), measure.names())))
    if name == "rbp_resid":
        p = measure.pairs.get("p", 0.9)
        positions = codes["position"].to_numpy()
        powers = _powers(p, positions)
        # (codes holds each query's retrieved documents in rank order: the weights of the
        # unjudged ones added in that order, and p to the number retrieved, as trec_eval)
        weighted = codes.with_columns(weight=powers[positions - 1])
        resid = weighted.group_by(q).agg(
            unjudged=(code < 0).sum().cast(pl.Int64),
            sum=_added(pl.col("weight").filter(code < 0)),
            n=pl.len().cast(pl.Int64),
        )
        resid = resid.with_columns(depth=powers[resid["n"].to_numpy()])
        value = pl.when(pl.col("unjudged") > 0).then(pl.col("depth") + (1 - p) * pl.col("sum")).otherwise(0.0)
        out = stats.select(q).join(resid.select(q, value.alias(_col(measure))), on=q, how="left")
        return out.with_columns(pl.col(_col(measure)).fill_null(0.0))  # (not the ids: integers stay so)
    # set_F with its beta: (beta + 1) P R / (beta P + R), 0 when nothing relevant is retrieved
    beta = measure.values[0]
    precision = pl.col("num_rel_ret") / pl.col("num_ret")
    recall = pl.col("num_rel_ret") / pl.col("num_rel")
    f = (beta + 1) * precision * recall / (beta * precision + recall)
    value = pl.when(pl.col("num_rel_ret") > 0).then(f).otherwise(0.0)
    return stats.select(q, value.alias(_col(measure)))


def _cuts(measure: Measure) -> list[int]:
    return [int(v) for v in measure.values] if measure.family.params == "cutoffs" else []


def computed_here(measure: Measure) -> bool:
    """Whether this module computes the measure (else recframe.per_user does): see :attr:`Family.native`."""
    if measure.family.native is None:
        return False
    return measure.params is not None or all(_engine_column(name) is None for name in measure.names())


def relevant_counts(counts: pl.DataFrame, request: Request) -> pl.DataFrame:
    """Per query of the qrels with a relevant document: ``num_rel``, those judged at least ``-l``."""
    relevant = counts.filter(pl.col("relevance") >= request.level)
    return relevant.group_by("user_id").agg(num_rel=pl.col("count").sum().cast(pl.Int64))


def per_query_counts(codes: pl.DataFrame, relevant: pl.DataFrame, request: Request) -> pl.DataFrame:
    """One row per query of `codes`: ``num_rel`` (:func:`relevant_counts`), ``num_ret`` and
    ``num_rel_ret``, as trec_eval's res_rels counts them."""
    retrieved = codes.group_by("user_id").agg(
        num_ret=pl.len().cast(pl.Int64), num_rel_ret=(pl.col("code") >= request.level).sum().cast(pl.Int64)
    )  # (signed: pl.len() and a sum of flags are UInt32, and utility subtracts them)
    return retrieved.join(relevant, on="user_id", how="left").with_columns(pl.col("num_rel").fill_null(0).cast(pl.Int64))


def measures_here(
    measures: Sequence[Measure], codes: pl.DataFrame, counts: pl.DataFrame, n_rel: pl.DataFrame, request: Request
) -> pl.DataFrame:
    """The per-query columns of `measures` computed here, one row per query of `n_rel`
    (:func:`per_query_counts`; `counts` is :func:`level_counts`). The queries are told apart
    by ``user_id``: their ids, or any integer numbering of them (the one-pass path's places,
    faster to group by than text)."""
    q = "user_id"
    out = n_rel.select(q)
    built: dict[Any, pl.DataFrame] = {}
    counted: dict[tuple[int, ...], pl.DataFrame] = {}
    compute: dict[str, Callable[[Measure], pl.DataFrame]] = {
        "gains": lambda m: _gain_measure(m, codes, counts, n_rel, built).with_columns(pl.col(q).cast(n_rel.schema[q])),
        "precision": lambda m: _precision_measures(m, codes, n_rel, request),
        "counts": lambda m: _count_measures(m, codes, n_rel, request, counted),
    }
    for measure in measures:
        if measure.family.native is not None:
            out = out.join(compute[measure.family.native](measure), on="user_id", how="left")
    return out


# ------------------------------------------------------------------------------------ printing


def _number(value: float | None, whole: bool, decimals: int = 4) -> str:
    # trec_eval's printf formats: "%ld" for counts, "%6.4f" for the rest; where it divides 0 by
    # 0 (a query left with no document under -J) it prints -nan, recframe 0 (docs/ir.md)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        value = 0.0
    return f"{int(value)}" if whole else f"{value:6.{decimals}f}"


def _in_turn(values: pl.Series) -> float:
    """The sum of `values` (null adding nothing) added one after the other in their order, as
    trec_eval accumulates a measure over the queries in id order. Polars' sum adds in pairs and
    ends a bit apart from it on most columns of a few thousand queries; a mean on half a unit of
    the fourth decimal would then print the other way."""
    numbers = values.cast(pl.Float64).fill_null(0.0).to_numpy()
    return float(np.cumsum(numbers)[-1]) if len(numbers) else 0.0


def text(
    per_query: pl.DataFrame, request: Request, runid: str, *, n_queries: int | None = None, num_rel: int | None = None
) -> str:
    """The lines trec_eval prints, from a frame of one row per evaluated query (``user_id``)
    whose columns are the printed measure names (``P_5``, ``relstring``, ``map``, ...).

    Under ``-c`` the means divide by `n_queries`, the queries of the qrels (a missing query
    adds 0, and 1e-5 to a geometric mean), and ``num_rel`` of ``all`` is `num_rel`, the
    number of qrels lines graded above 0 whatever ``-l`` says (trec_eval's count)."""
    frame = per_query.sort("user_id")
    n = frame.height if n_queries is None else n_queries
    lines: list[str] = []
    printed = [(m, name) for m in request.chosen for name in m.names()]
    columns = [(m, name) for m, name in printed if m.family.per_query]
    block = ""
    if request.per_query and columns and frame.height:
        # each measure's column formatted at once, then each query's lines as one string
        parts: list[pl.Expr] = []
        for measure, name in columns:
            column = frame[name]
            if measure.family.name == "relstring":
                text_values = "'" + column.fill_null("") + "'"
            elif measure.family.whole:
                text_values = column.fill_null(0).cast(pl.Int64).cast(pl.String)
            else:  # each distinct value formatted once, as C's printf rounds it
                numbers = column.cast(pl.Float64).fill_nan(0.0).fill_null(0.0)
                distinct = numbers.unique()
                shown_values = list(map(f"%6.{request.decimals}f".__mod__, distinct.to_list()))
                text_values = numbers.replace_strict(distinct, pl.Series(shown_values, dtype=pl.String))
            parts += [pl.lit(f"{name:<22}\t"), pl.col("user_id"), pl.lit("\t"), pl.lit(text_values), pl.lit("\n")]
        block = frame.select(pl.concat_str(parts).str.join("")).item()
    if request.summary:
        for measure, name in printed:
            kind = measure.family.summary
            if kind == "none":
                continue
            if kind == "runid":
                shown = runid
            elif kind == "count":
                shown = str(n)
            elif kind == "gmean":
                logs = _in_turn(frame.select(pl.col(name).clip(lower_bound=_engine.GMEAN_FLOOR).log()).to_series())
                shown = _number(
                    math.exp((logs + (n - frame.height) * math.log(_engine.GMEAN_FLOOR)) / n), False, request.decimals
                )
            elif kind == "sum":
                total = num_rel if name == "num_rel" and num_rel is not None else frame.select(pl.col(name).sum()).item()
                shown = _number(total, True)
            else:
                shown = _number(_in_turn(frame[name]) / n, measure.family.whole, request.decimals)
            lines.append(f"{name:<22}\tall\t{shown}")
    return block + "".join(line + "\n" for line in lines)


# ------------------------------------------------------------------------------ the whole run


def _engine_column(name: str) -> tuple[str | None, str] | None:
    """(recframe metric, per-user column) of a measure name printed from recframe.per_user."""
    for measure in TREC_MEASURES:
        if "{k}" not in measure.name:
            if measure.name == name:
                return measure.metric, measure.column
            continue
        prefix = measure.name.removesuffix("{k}")
        rest = name.removeprefix(prefix)
        if name.startswith(prefix) and rest.isdigit():
            return measure.metric, measure.column.format(k=int(rest))
    return None


def evaluate(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    request: Request,
    *,
    options: dict[str, Any] | None = None,
    runid: str | None = None,
) -> str:
    """What ``trec_eval`` prints for `qrels` and `run` under `request`.

    Parameters
    ----------
    run, qrels : polars.LazyFrame
        Frames of :func:`recframe.read_trec_run` and :func:`recframe.read_trec_qrels`.
    request : Request
        The command line's choices (measures, ``-q``, ``-c``, ``-J``, ``-M``, ``-N``, ``-l``).
    options : dict, optional
        More :func:`recframe.per_user` arguments (conventions, which override those of the
        profile ``"trec_eval"`` or, under ``request.version="9"``, ``"trec_eval9"``).
    runid : str, optional
        The tag the ``runid`` line prints. By default the last ``run`` value of `run`, as
        trec_eval keeps its last line's tag; given, `run` needs no ``run`` column (the drop-in
        reads the tag and frees the column).

    Returns
    -------
    str
        The lines, each ending with a newline.

    Raises
    ------
    RecframeError
        No judgement in the qrels (with or without ``-c``); no query in both files; a query of
        the qrels missing from the run under trec_eval 10.0 without ``-c`` (trec_eval stops
        with exit 4 there); repeated documents.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from recframe import read_trec_qrels, read_trec_run
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "run").write_text("q1 Q0 a 1 2.0 bm25\\nq1 Q0 b 2 1.0 bm25\\nq1 Q0 c 3 0.5 bm25\\n")
    >>> _ = (folder / "qrels").write_text("q1 0 b 2\\nq1 0 c -1\\nq1 0 d 1\\n")
    >>> request = Request(["P.2", "relstring", "utility"], per_query=True)
    >>> print(evaluate(read_trec_run(folder / "run"), read_trec_qrels(folder / "qrels"), request), end="")
    P_2                   	q1	0.5000
    relstring             	q1	'-2.'
    utility               	q1	-1.0000
    P_2                   	all	0.5000
    utility               	all	-1.0000
    """
    judged = qrels.collect()
    ranked = run.select("user_id", "item_id", "score", *(["run"] if runid is None else [])).collect()
    if judged.height == 0:  # (-c would average over no query: trec_eval stops there too)
        raise RecframeError(
            "the qrels hold no judgement: the file is empty or has only blank and comment lines, so there is no "
            "query to evaluate (trec_eval stops here too). Hint: pass the qrels file of the run's queries, one "
            "'qid iter docno relevance' line per judged document."
        )
    if runid is None:
        runid, ranked = last_tag(ranked), ranked.drop("run")
    if not options:  # trec_eval's own conventions: the one-pass path (None where it defers)
        fast = _evaluate_fast(ranked, judged, request, runid)
        if fast is not None:
            return fast
    ranked = ranked.with_columns(pl.col("user_id").cast(pl.String))  # (read as Categorical, the drop-in's)
    return _evaluate_generic(ranked, judged, request, runid, options)


def last_tag(run: pl.DataFrame) -> str:
    """The run's tag as trec_eval prints it on the ``runid`` line: its last line's."""
    return str(run["run"][-1]) if run.height else ""


def _refuse_missing(missing: list[str], n_present: int, request: Request) -> None:
    """trec_eval's refusals of the query sets: a qrels query without a run line under 10.0
    without -c; no query in both files, except under 10.0 with -c (which scores every query of
    the qrels 0; 9.0.8 stops there with or without -c)."""
    if missing and not request.complete and request.version == "10":
        raise RecframeError(
            f"qrels query {missing[0]!r} has no line in the run ({len(missing)} such queries): trec_eval 10.0 stops "
            "here (exit 4). Hint: pass -c to score them 0 (as TREC reports do), or --profile trec_eval9 to evaluate "
            "only the queries in both files, as trec_eval 9.0.8 does."
        )
    if n_present == 0 and not (request.complete and request.version == "10"):
        raise RecframeError(
            "no query has both results and relevance judgements (trec_eval evaluates only those). "
            "Hint: check that the run and the qrels use the same query ids."
        )


def _split(request: Request) -> tuple[list[Measure], dict[str, tuple[str | None, str]]]:
    """The measures computed here, and the printed name -> (recframe metric, per-user column)
    of the others (those recframe.per_user has)."""
    here = [m for m in request.chosen if computed_here(m)]
    engine = {}
    for measure in request.chosen:
        if measure in here or measure.family.summary in ("runid", "count"):
            continue
        for name in measure.names():
            found = _engine_column(name)
            if found is None:  # a parameter recframe.per_user has no column for: computed here
                here.append(measure)
                break
            engine[name] = found
    return here, engine


def _evaluate_generic(
    ranked: pl.DataFrame, judged: pl.DataFrame, request: Request, runid: str, options: dict[str, Any] | None
) -> str:
    """:func:`evaluate` through recframe.per_user (any conventions `options` sets)."""
    run = ranked.lazy()  # (lazy: -c may add rows)
    queries = judged.select("user_id").unique()
    present = ranked.select("user_id").unique().join(queries, on="user_id", how="semi")
    missing = queries.join(present, on="user_id", how="anti").sort("user_id")["user_id"].to_list()
    _refuse_missing(missing, present.height, request)
    if missing and request.complete and request.version == "10":
        # 10.0 evaluates a missing query as a ranking of one document outside the pool, then
        # zeroes num_ret, utility, relstring, unj_* and rbp_resid (by those exact names)
        bogus = pl.DataFrame({"user_id": missing}).with_columns(item_id=pl.lit(_BOGUS), score=pl.lit(1.0))
        run = pl.concat([run, bogus.lazy()])
        present = pl.concat([present, bogus.select("user_id")])
    rows = ranked_codes(run.collect(), judged, request)
    codes = rows.filter(pl.col("position").is_not_null())  # the retrieved documents, in order
    here, engine = _split(request)
    frame = present.select("user_id")
    if engine:  # (the rows: retrieved and judged rows joined already, repeats refused already)
        call = {**_per_user_call(engine, request), **(options or {})}
        values = _call.per_user(rows.lazy(), call.pop("k"), call.pop("metrics"), call).collect()
        frame = frame.join(
            values.select("user_id", *(pl.col(c).alias(n) for n, (_, c) in engine.items())), on="user_id", how="left"
        )
    counts = level_counts(judged)
    relevant = relevant_counts(counts, request)
    if here:
        n_rel = per_query_counts(codes, relevant, request)
        frame = frame.join(measures_here(here, codes, counts, n_rel, request), on="user_id", how="left")
    return _finish(frame, relevant, missing, judged, queries.height, request, runid)


def _finish(
    frame: pl.DataFrame,
    relevant: pl.DataFrame,
    missing: list[str],
    judged: pl.DataFrame,
    n_queries: int,
    request: Request,
    runid: str,
) -> str:
    """The text of `frame` (one row per evaluated query, the printed measures): relevant counts
    kept where nothing was ranked, 0 for every other missing value, -c's queries."""
    if "num_rel" in frame.columns:  # a query left with nothing ranked (-J) keeps its relevant count
        frame = (
            frame.join(relevant.rename({"num_rel": "n"}), on="user_id", how="left")
            .with_columns(pl.col("num_rel").fill_null(pl.col("n")).fill_null(0).cast(pl.Int64))
            .drop("n")
        )
    numeric = [c for c, t in frame.schema.items() if c != "user_id" and t.is_numeric()]
    frame = frame.with_columns(pl.col(numeric).fill_null(0))  # and 0 for every other measure
    relstrings = [c for c, t in frame.schema.items() if t == pl.String and c != "user_id"]
    frame = frame.with_columns(pl.col(relstrings).fill_null(""))
    if missing and request.complete and request.version == "10":
        bogus_rows = pl.col("user_id").is_in(missing)
        reset = [c for c in frame.columns if c in ("num_ret", "utility", "rbp_resid") or c.startswith("unj")]
        frame = frame.with_columns(
            *(pl.when(bogus_rows).then(0).otherwise(pl.col(c)).cast(frame.schema[c]).alias(c) for c in reset),
            *(pl.when(bogus_rows).then(pl.lit("")).otherwise(pl.col(c)).alias(c) for c in relstrings if c == "relstring"),
        )
    totals: dict[str, int] = {}
    if request.complete:  # means over every query of the qrels; num_rel counts grades above 0
        totals = {"n_queries": n_queries, "num_rel": judged.filter(pl.col("relevance") > 0).height}
    return text(frame, request, runid, **totals)


# ------------------------------------------------------------------------- the one-pass path
#
# The same numbers as recframe.per_user under the trec_eval profiles, for the measures it has,
# from each query's ranked grades:
# - query ids become integers, their place in the run (the queries of the qrels that the run
#   lacks come after them; the text is sorted by id when it is printed);
# - the run is sorted only when it is not in order already, so its places increase;
# - the qrels grades are joined on a 64-bit hash of (query, document), a block of queries at a
#   time, and every match is checked to be the same pair;
# - the registry's term columns are aggregates over the relevant retrieved rows (a tenth of the
#   run, typically) with their counts of relevant, judged and pooled rows above, from running
#   sums, flagged by the engine's rules; the registry finishes the values from them, as per_user.


def _id_runs(ids: pl.Series) -> pl.Series:
    """``ids.rle()``, its values as text (a Categorical column's too: the drop-in reads query
    ids so, at a fraction of the memory)."""
    runs = ids.rle()
    if ids.dtype == pl.String:
        return runs
    return runs.struct.unnest().with_columns(pl.col("value").cast(pl.String)).to_struct(runs.name)


def _codes(runs: pl.Series, queries: pl.Series) -> np.ndarray:
    """Each id's place in `queries` (distinct), -1 where it is not there, from the ids' runs
    (``Series.rle()``: an id is cast once per run, and a file lists each query's lines
    together); 32-bit where the places fit (half the memory of a run's places)."""
    kind = pl.Int32 if len(queries) < 2**31 else pl.Int64
    places = runs.struct.field("value").cast(pl.Enum(queries), strict=False).to_physical().cast(kind)
    return np.repeat(places.fill_null(-1).to_numpy(), runs.struct.field("len").to_numpy())


def _pair_keys() -> pl.Expr:
    """A 64-bit key of each (query place ``q``, document number ``item_id``): the document's
    hash mixed with the place (equal pairs, equal keys; every match found through them is
    checked)."""
    mixed = pl.col("q").cast(pl.UInt64) * pl.lit(0x9E3779B97F4A7C15, dtype=pl.UInt64)
    return (pl.col("item_id").hash() ^ mixed).alias(_HASH)


#: queries per block of :func:`_join_blocks` (some 50,000 rows: a block's hash table stays in cache)
_BLOCK = 500


def _join_blocks(run: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame | None:
    """Per row of `run`, the ``relevance`` and the ``__row`` (row in `pairs`) of the qrels
    line of its key (null where none), joined a block of queries at a time: both frames are
    sorted by ``q``, and a key is found only in its own query's block, so the tables stay
    small (about twice as fast as one join of ten million rows). None when a key repeats
    within a block of either frame: a document twice in a query, or two pairs of one key."""
    mine, theirs = run["q"].to_numpy(), pairs["q"].to_numpy()
    ends = [int(side[i]) for side in (mine, theirs) for i in (0, -1) if len(side)]
    first, last = (min(ends), max(ends)) if ends else (0, 0)
    bounds = np.arange(first, last + _BLOCK + 1, _BLOCK)
    at_run, at_pairs = np.searchsorted(mine, bounds), np.searchsorted(theirs, bounds)
    keys = run.select(_HASH)
    right = pairs.select(_HASH, "relevance", pl.int_range(pl.len(), dtype=pl.UInt32).alias("__row"))
    parts = []
    for a, b, c, d in zip(at_run[:-1], at_run[1:], at_pairs[:-1], at_pairs[1:], strict=True):
        left, table = keys[int(a) : int(b)], right[int(c) : int(d)]
        try:  # (validate: the join checks that no key repeats on either side)
            parts.append(left.join(table, on=_HASH, how="left", maintain_order="left", validate="1:1").drop(_HASH))
        except pl.exceptions.ComputeError:
            return None
    return pl.concat(parts) if parts else right.clear().drop(_HASH)


def _positions(query: np.ndarray) -> np.ndarray:
    """1, 2, ... along each block of equal `query` values."""
    n = len(query)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    # steps of 1, and back to 1 where a block starts; summed in place (one array of n)
    step = np.ones(n, dtype=np.int64)
    step[start[1:]] = 1 - np.diff(start)
    return np.cumsum(step, out=step)


# per-query rows the term columns are aggregated over (see _hit_rows)
_P, _J, _R = pl.col("p"), pl.col("j"), pl.col("R")


def _bpref_sum(k: int | None) -> pl.Expr:
    share = pl.min_horizontal(pl.col("judged") - _J, _R) / pl.max_horizontal(pl.min_horizontal(_R, pl.col("J") - _R), 1)
    return (1.0 - share).sum()


def _infap_sum(k: int | None) -> pl.Expr:
    f = pl.Float64
    at = _P.cast(f)
    value = 1.0 / at + (pl.col("pooled") - 1).cast(f) / at * ((_J - 1).cast(f) + INFAP_EPSILON) / (
        (pl.col("judged") - 1).cast(f) + 2 * INFAP_EPSILON
    )
    return value.sum()


def _rprec_hits(multiple: int) -> Callable[[int | None], pl.Expr]:
    # c = floor(x R + 0.9), as recframe.metrics.ir._trec_cut
    return lambda k: (_P <= (pl.lit(multiple / 100) * _R.cast(pl.Float64) + 0.9).floor()).sum().cast(pl.Int64)


#: term -> its column at k, aggregated over a query's relevant retrieved rows (:func:`_hit_rows`):
#: the terms of recframe.metrics.terms and .ir that the one-pass path computes from running sums
_ON_HITS: dict[str, Callable[[int | None], pl.Expr]] = {
    "n_rel_ret": lambda k: pl.len().cast(pl.Int64),  # (counts as Int64: pl.len() and sums of flags are UInt32)
    "hits@": lambda k: (_P <= position_cut(cutoff(k))).sum().cast(pl.Int64),
    "ap_sum@": lambda k: pl.when(_P <= position_cut(cutoff(k))).then(_J / _P).otherwise(0.0).sum(),
    "min_rank": lambda k: _P.min(),
    "hits_r": lambda k: (_P <= _R).sum().cast(pl.Int64),
    "bpref_sum": _bpref_sum,
    "infap_sum": _infap_sum,
    "bin_g_sum": lambda k: (1.0 / (2 + _P - _J).cast(pl.Float64).log(2)).sum(),
    **{f"rprec_hits_{x}": _rprec_hits(x) for x in R_MULTIPLES},
}


def _per_user_call(engine: dict[str, tuple[str | None, str]], request: Request) -> dict[str, Any]:
    """recframe.per_user's arguments for the per-user columns `engine` (:func:`_split`), under the
    profile of trec_eval's version: the general path calls per_user with them, the one-pass path
    finishes its term columns under their spec (:func:`_spec`)."""
    return {
        "k": sorted({WHOLE} | {int(c.rsplit("@", 1)[1]) for _, c in engine.values() if "@" in c}),
        "metrics": sorted({m for m, _ in engine.values() if m is not None}) or ["num_ret"],
        **{"user": "user_id", "item": "item_id", "rank": "position", "relevance": "relevance"},
        "profile": "trec_eval9" if request.version == "9" else "trec_eval",
        "threshold": request.level,
        "check_duplicates": False,
    }


def _spec(call: dict[str, Any]) -> v.Spec:
    """The checked spec of a per_user `call` (:func:`_per_user_call`), as per_user makes it. The
    threshold (``-l``) is set after the checks, which refuse one <= 0 under linear gains (nDCG
    undefined): under the trec_eval profiles only grades above 0 gain (gain_threshold="positive")."""
    given = {name: value for name, value in call.items() if name not in ("k", "metrics")}
    spec = v.check_arguments(_call.resolve(call["k"], call["metrics"], {**given, "threshold": 1}, PER_USER_NAMES, "per_user"))
    return dataclasses.replace(spec, selection=dataclasses.replace(spec.selection, threshold=call["threshold"]))


def _flags(grades: pl.Series, spec: v.Spec, *names: str) -> pl.DataFrame:
    """Per grade (null: not in the qrels), the engine's rules (recframe.engine._engine.flag_rows, _relevance.gains
    and gain, read as the registry's rows read them), the `names` of: relevant, judged, pooled,
    graded (above 0, the term n_graded) and gain."""
    rows = _engine.rows_of(spec)
    flags = {
        "relevant": rows.relevant == 1,
        "judged": rows.judged == 1,
        "pooled": rows.pooled == 1,
        "graded": TERMS["n_graded"].value(rows, None) == 1,
        "gain": nw.when(_relevance.gains(spec)).then(_relevance.gain(spec)).otherwise(0.0).cast(nw.Float64),
    }
    flagged = _engine.flag_rows(nw.from_native(pl.LazyFrame({n.REL: grades})), spec)
    return flagged.select(flags[name].alias(name) for name in names).collect().to_native()


def _needed(spec: v.Spec, wanted: dict[str, tuple[str | None, int | None]]) -> dict[tuple[str, int | None], None]:
    """(term, k) of the terms the metrics of `wanted` declare (k None for a term without cut-off)."""
    needed: dict[tuple[str, int | None], None] = {}
    for metric, k in wanted.values():
        for name in REGISTRY[metric].terms(spec.conventions) if metric else ():
            if not TERMS[name].at_k or k is not None:
                needed[name, k if TERMS[name].at_k else None] = None
    return needed


def _hit_rows(ret: pl.DataFrame, flags: pl.DataFrame, stats: pl.DataFrame) -> pl.DataFrame:
    """The relevant retrieved rows of `ret` (query blocks, by position; `flags` of
    :func:`_flags`): q, p its position, j its place among them, judged and pooled the rows of its
    query up to it, R and J its query's relevant and judged documents (from `stats`)."""
    relevant, judged, pooled = (flags[c].to_numpy() for c in ("relevant", "judged", "pooled"))
    query, position = ret["q"].to_numpy(), ret["position"].to_numpy()
    rows = np.flatnonzero(relevant)
    starting = rows - position[rows] + 1  # the row where each relevant row's query starts

    def above(flag: np.ndarray) -> np.ndarray:  # rows of `flag` up to each relevant row, in its query
        total = np.cumsum(flag, dtype=np.int32 if len(flag) < 2**31 else np.int64)  # (half the memory)
        return (total[rows] - total[starting] + flag[starting]).astype(np.int64)

    hit_q = query[rows]  # (stats has a row per place, in order: its R and J gathered by place)
    return pl.DataFrame(
        {
            "q": pl.Series(hit_q).set_sorted() if (np.diff(hit_q) >= 0).all() else hit_q,
            "p": position[rows],
            "j": _positions(hit_q),  # (the relevant rows in order: the count of them so far)
            "judged": above(judged),
            "pooled": above(pooled),
            "R": stats["R"].to_numpy()[hit_q],
            "J": stats["J"].to_numpy()[hit_q],
        }
    )


def _interpolated(hits: pl.DataFrame, levels: list[int], rounding: str) -> pl.DataFrame:
    """q and the term ``iprec_<x>`` per query with a relevant row retrieved, from those rows
    (:func:`_hit_rows`): the interpolated precision at recall x / 100, the largest precision at
    the relevant rows from the c-th of its query on, c = max(cut(x, R), 1) (0 when fewer were
    retrieved). Each maximum is over a contiguous run of rows, the c-th relevant row to its
    query's last, so one ``maximum.reduceat`` per level."""
    query, found, position, big_r = (hits[c].to_numpy() for c in ("q", "j", "p", "R"))
    starts = np.flatnonzero(found == 1)
    ends = np.r_[starts[1:], len(query)].astype(np.int64)
    precision = np.r_[found / position, 0.0]  # (the j-th relevant row at position p; a last slot for the bounds)
    r = big_r[starts].astype(np.float64)
    out = {"q": query[starts]}
    bounds = np.empty(2 * len(starts), dtype=np.intp)
    for x in levels:  # c as recframe.metrics.ir._trec_cut
        least = np.maximum(np.floor(x / 100 * r + (0.5 if rounding == "round" else 0.9)), 1.0)
        first = starts + np.minimum(least, ends - starts + 1).astype(np.int64) - 1
        reached = first < ends
        bounds[0::2], bounds[1::2] = np.where(reached, first, starts), ends
        best = np.maximum.reduceat(precision, bounds)[0::2] if len(starts) else np.zeros(0)
        out[term(f"iprec_{x}")] = np.where(reached, best, 0.0)
    return pl.DataFrame(out)


def _dcg(gained: pl.DataFrame, ideal: pl.DataFrame, ks: list[int], kind: str) -> pl.DataFrame:
    """q and the terms ``dcg@k`` and ``idcg@k``: the sums of gain / discount(position) over the
    retrieved rows that gain (`gained`: q, position, gain) and over the query's gains sorted
    decreasing (`ideal`: q, gain)."""
    ideal = ideal.sort("q", "gain", descending=[False, True]).with_columns(position=pl.int_range(1, pl.len() + 1).over("q"))

    def sums(rows: pl.DataFrame, name: str) -> pl.DataFrame:
        rows = nw.from_native(rows).with_columns(discount(nw.col("position"), kind).alias("d")).to_native()
        at, value = pl.col("position"), pl.col("gain") / pl.col("d")
        return rows.group_by("q").agg(
            pl.when(at <= position_cut(k)).then(value).otherwise(0.0).sum().alias(term(name, k)) for k in ks
        )

    return sums(ideal, "idcg@").join(sums(gained, "dcg@"), on="q", how="left")


def _one_pass_terms(
    ret: pl.DataFrame, stats: pl.DataFrame, grades: pl.DataFrame, spec: v.Spec, wanted: dict[str, tuple[str | None, int | None]]
) -> pl.DataFrame:
    """Per query with a retrieved row (``q``): the term columns the per-user `wanted` columns
    read (column -> (metric, k); no metric: the term n_relevant), computed here, that
    :func:`_finished` finishes.

    `ret` holds the retrieved rows (q, position, relevance) in query blocks, by position;
    `stats` R (relevant), J (judged) and G (graded) per query; `grades` the qrels (q, relevance)."""
    needed = _needed(spec, wanted)
    ks = sorted({k for t, k in needed if t in ("dcg@", "idcg@") and k is not None})
    flags = _flags(ret["relevance"], spec, "relevant", "judged", "pooled", *(["gain"] if ks else []))
    query, position = ret["q"].to_numpy(), ret["position"].to_numpy()
    starts = np.flatnonzero(position == 1)
    unwanted = flags["judged"].to_numpy() & ~flags["relevant"].to_numpy()
    per_query = pl.DataFrame(
        {
            "q": query[starts],
            term("n_ret"): np.diff(np.r_[starts, len(position)]),
            term("n_nonrel_judged_ret"): np.bincount(query[unwanted], minlength=len(stats))[query[starts]],
        }
    ).with_columns(pl.col(term("n_ret")).alias(n.N_RANKED))
    terms = stats.select("q", pl.col("R").alias(term("n_relevant")), pl.col("G").alias(term("n_graded")))
    parts = [terms]
    hits = _hit_rows(ret, flags, stats)
    aggs = {term(t, k): _ON_HITS[t](k) for t, k in needed if t in _ON_HITS}
    parts += [hits.group_by("q").agg(**aggs)] if aggs else []
    levels = [int(t.removeprefix("iprec_")) for t, _ in needed if t.startswith("iprec_")]
    parts += [_interpolated(hits, levels, spec.conventions.recall_rounding)] if levels else []
    if ks:
        gained = pl.DataFrame({"q": query, "position": position, "gain": flags["gain"]}).filter(pl.col("gain") > 0)
        ideal = grades.select("q").hstack(_flags(grades["relevance"], spec, "gain")).filter(pl.col("gain") > 0)
        parts.append(_dcg(gained, ideal, ks, spec.conventions.discount))
    for part in parts:
        per_query = per_query.join(part, on="q", how="left")
    empty = {c: TERMS[t].empty for t, k in needed if (c := term(t, k)) in per_query.columns}
    return per_query.with_columns(pl.col(c).fill_null(value) for c, value in empty.items())


def _finished(per_query: pl.DataFrame, spec: v.Spec, wanted: dict[str, tuple[str | None, int | None]]) -> pl.DataFrame | None:
    """q and the `wanted` columns finished by the registry from the term columns of
    :func:`_one_pass_terms`, as recframe.per_user finishes them (recframe.engine._engine.user_value);
    None where a finish reads a term column not computed here."""
    value = {
        c: _engine.user_value(spec, m, k).cast(nw.Float64) if m else nw.col(term("n_relevant")) for c, (m, k) in wanted.items()
    }
    try:
        flagged = nw.from_native(per_query).with_columns(**_engine.user_flags(spec))
        return flagged.select("q", *(expr.alias(c) for c, expr in value.items())).to_native()
    except (pl.exceptions.ColumnNotFoundError, nw.exceptions.ColumnNotFoundError):
        return None


#: run rows evaluated together by the one-pass path, whole queries at a time: only one chunk's
#: working tables are held at once; fewer when measures computed here (:func:`measures_here`)
#: are asked for, whose tables are larger (10M lines with -m all_trec: a peak of 658 MB at
#: 500k rows a chunk, 714-724 MB at 1M, 847-868 MB at 2M; trec_eval 10.0: 819 MB). Smaller
#: chunks cost more time: each has its fixed costs
_CHUNK_ROWS, _CHUNK_ROWS_HERE = 2_000_000, 500_000


@dataclass(frozen=True)
class _Run:
    """What every chunk of :func:`_evaluate_fast` reads: the call, and per query place (``q``)
    the qrels lines (sorted by place) and their counts."""

    request: Request
    spec: v.Spec
    here: list[Measure]
    wanted: dict[str, tuple[str | None, int | None]]
    pairs: pl.DataFrame  # q (the place), relevance, item_id, the pair key of each qrels line
    stats: pl.DataFrame  # q, R, J, G per place
    relevant: pl.DataFrame  # user_id (the place), num_rel of the places with a relevant document


def _chunks(rows_per_place: np.ndarray, chunk_rows: int) -> list[tuple[int, int]]:
    """Ranges of places [a, b) of at most `chunk_rows` run rows each (one place of more rows is
    a range of its own)."""
    total = np.cumsum(rows_per_place)
    cuts = np.searchsorted(total, np.arange(chunk_rows, int(total[-1]) if len(total) else 0, chunk_rows), side="right")
    bounds = np.unique(np.r_[0, cuts, len(rows_per_place)])
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def _evaluate_fast(
    ranked: pl.DataFrame, judged: pl.DataFrame, request: Request, runid: str, *, chunk_rows: int | None = None
) -> str | None:
    """:func:`evaluate` in one pass under trec_eval's conventions, `chunk_rows` run rows (whole
    queries; default :data:`_CHUNK_ROWS` or :data:`_CHUNK_ROWS_HERE`) at a time; None where
    the general path decides instead (a document twice in a query, which it refuses, a hash
    collision, or a registry formula that reads a term column the one-pass path does not
    compute)."""
    here, engine = _split(request)
    spec = _spec(_per_user_call(engine, request))
    columns: dict[str, tuple[str | None, int | None]] = {c: (m, k) for c, m, k in _engine.metric_columns(spec)}
    columns["n_relevant"] = (None, None)  # (not a metric: the term)
    if judged.height == 0 or ranked.height == 0 or any(c not in columns for _, c in engine.values()):
        return None
    wanted = {name: columns[column] for name, (_, column) in engine.items()}
    # a query is its place: the run's queries in the order they come, then those it lacks
    # (so the run's places increase, and the qrels' where the two files share an order)
    judged_runs, ranked_runs = _id_runs(judged["user_id"]), _id_runs(ranked["user_id"])
    judged_ids = judged_runs.struct.field("value").unique()
    seen = ranked_runs.struct.field("value").unique(maintain_order=True)
    in_both = seen.filter(seen.is_in(judged_ids.implode()))
    missing_ids = judged_ids.filter(~judged_ids.is_in(seen.implode())).sort()
    queries = pl.concat([in_both, missing_ids])
    missing = missing_ids.to_list()
    _refuse_missing(missing, len(in_both), request)
    places = _codes(judged_runs, queries)
    if (np.diff(places) < 0).any():  # the qrels in another order: sorted by place
        order = np.argsort(places, kind="stable")
        judged, places = judged[order], places[order]
    code = _codes(ranked_runs, queries)
    flags = _flags(judged["relevance"], spec, "relevant", "judged", "graded")  # (the engine's rules)
    first = np.flatnonzero(np.r_[True, places[1:] != places[:-1]])  # (every place has lines, in order)
    count = {c: np.add.reduceat(flags[c].to_numpy().astype(np.int64), first) for c in ("relevant", "judged", "graded")}
    stats = pl.DataFrame({"q": np.arange(len(queries)), "R": count["relevant"], "J": count["judged"], "G": count["graded"]})
    names = pl.DataFrame({"q": np.arange(len(queries)), "user_id": queries})
    shared = _Run(
        request, spec, here, wanted,
        pl.DataFrame({"q": places.astype(np.int64), "relevance": judged["relevance"], "item_id": judged["item_id"]}).with_columns(
            _pair_keys()
        ),
        stats,
        stats.filter(pl.col("R") > 0).select(pl.col("q").alias("user_id"), num_rel=pl.col("R")),
    )  # fmt: skip
    # the places evaluated: those of the run; under 10.0's -c also the missing queries, each a
    # ranking of one document outside the pool (as _evaluate_generic)
    bogus = bool(missing) and request.complete and request.version == "10"
    n_present = len(queries) if bogus else len(in_both)
    rows_per_place = np.bincount(code[code >= 0], minlength=len(queries))[:n_present]
    rows_per_place[len(in_both) :] = 1
    in_order = bool((np.diff(code) >= 0).all())  # (a file lists each query's lines together: slices)
    terms, computed = [], []
    for a, b in _chunks(rows_per_place, chunk_rows or (_CHUNK_ROWS_HERE if here else _CHUNK_ROWS)):
        if in_order:
            # (bounds of the places' own type: int64 bounds would copy the run's places each time)
            lo, hi = np.searchsorted(code, np.array([a, b], dtype=code.dtype))
            rows, part = ranked[int(lo) : int(hi)], code[lo:hi]
        else:
            at = np.flatnonzero((code >= a) & (code < b))
            rows, part = ranked[at], code[at]
        score = rows["score"].cast(pl.Float64)  # (a C double in 10.0 and 9.0.8 alike)
        run = pl.DataFrame({"q": part.astype(np.int64), "item_id": rows["item_id"], "score": score})
        if bogus and b > len(in_both):
            extra = np.arange(max(a, len(in_both)), b)
            run = pl.concat([run, pl.DataFrame({"q": extra, "item_id": _BOGUS, "score": 1.0})])
        parts = _evaluate_chunk(run, a, b, shared)
        if parts is None:
            return None
        terms += [parts[0]] if parts[0] is not None else []
        computed += [parts[1]] if parts[1] is not None else []
    frame = pl.DataFrame({"q": np.arange(n_present)})
    if wanted:  # (the registry's finish once, on every query's terms)
        values = _finished(pl.concat(terms, how="vertical_relaxed"), spec, wanted)
        if values is None:
            return None
        frame = frame.join(values, on="q", how="left")
    if computed:
        frame = frame.join(pl.concat(computed, how="vertical_relaxed"), on="q", how="left")
    frame = frame.join(names, on="q", how="left").drop("q")
    relevant = shared.relevant.rename({"user_id": "q"}).join(names, on="q").drop("q")  # (by text id)
    return _finish(frame, relevant, missing, judged, len(queries), request, runid)


def _evaluate_chunk(run: pl.DataFrame, a: int, b: int, shared: _Run) -> tuple[pl.DataFrame | None, pl.DataFrame | None] | None:
    """The places [a, b) evaluated from their run rows `run` (q, item_id, score): the term
    columns per query with a retrieved row (:func:`_one_pass_terms`; None when no measure reads
    them), and the measures computed here per query (user_id: :func:`measures_here`; None when
    there is none); None where :func:`_evaluate_fast` defers."""
    request = shared.request
    run = _in_trec_order(run, "q")
    run = run.with_columns(position=_positions(run["q"].to_numpy()))
    if request.max_retrieved is not None:
        run = run.filter(pl.col("position") <= request.max_retrieved)
    lo, hi = (int(i) for i in np.searchsorted(shared.pairs["q"].to_numpy(), [a, b]))
    pairs = shared.pairs[lo:hi]
    run = run.with_columns(_pair_keys())
    matched = _join_blocks(run, pairs)
    if matched is None:
        return None  # a document twice (refused there) or two pairs of one hash
    run = run.hstack(matched)
    matches = run.select("q", "item_id", "__row").filter(pl.col("__row").is_not_null())
    same = pairs.select(pl.col("q", "item_id").gather(matches["__row"]))
    if not ((same["q"] == matches["q"]).all() and (same["item_id"] == matches["item_id"]).all()):
        return None  # a hash collision
    if request.judged_only:  # unjudged documents removed, the ranks closed up
        run = run.filter(pl.col("relevance") >= 0)
        run = run.with_columns(position=_positions(run["q"].to_numpy()))
    terms = None
    if shared.wanted:
        terms = _one_pass_terms(run, shared.stats, pairs.select("q", "relevance"), shared.spec, shared.wanted)
    here = None
    if shared.here:  # the other measures, from the ranked codes as ranked_codes gives them, the
        # queries told apart by their places (text ids cost a join, and each group-by hashes them)
        codes = run.select(
            pl.col("q").alias("user_id"), "item_id", "position", "relevance", _relevance_code(pl.col("relevance")).alias("code")
        )
        n_rel = per_query_counts(codes, shared.relevant, request)
        counts = level_counts(pairs.select(pl.col("q").alias("user_id"), "relevance"))
        here = measures_here(shared.here, codes, counts, n_rel, request).rename({"user_id": "q"})
    return terms, here
