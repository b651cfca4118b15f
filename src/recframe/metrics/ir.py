"""The rest of the IR toolbox: judged-aware measures, interpolated precision, set measures,
rank-biased precision, expected reciprocal rank and AUC.

Notation, per list: p_i the position of item i, R the relevant items (ranked or not), N the
judged items that are not relevant (judged: relevance not null; with ``truth=``, the items of
the truth), j_i the place of relevant item i among the relevant ranked items in rank order
(1, 2, ...), ``num_ret`` the ranked items, ``num_rel_ret`` the relevant ones among them. A bare
column (no ``@k``) reads the whole list; ``@k`` the items ranked within k.

- ``judged@k`` = the share of the items ranked within k that are judged, 0 for an empty list
  (ir_measures' Judged@k). trec_eval's ``unj_k`` divides the unjudged ones by k: it is
  ``num_ret@k / k * (1 - judged@k)``, one minus ``judged@k`` when the list holds k items.
- ``num_ret``, ``num_rel_ret``, ``num_nonrel_judged_ret`` (and their ``@k``): the ranked items,
  the relevant ones, the judged non-relevant ones (trec_eval's counts; its summary sums them).
- ``bpref`` = (1/R) * sum over relevant ranked i of 1 - min(n_i, R) / min(R, N), n_i the judged
  non-relevant items ranked above i (the term is 1 when n_i = 0); ``bpref@k`` sums over the
  relevant items ranked within k (trec_eval's bpref; unjudged items are passed over).
- ``infap`` = (1/R) * sum over relevant ranked i of 1/p_i + (P_i/p_i) * (r_i + e) / (J_i + 2e),
  J_i the judged items ranked above i, r_i the relevant ones, P_i the pooled ones (judged, or
  of a negative relevance under ``negative_relevance="unjudged"``: trec_eval's qrels level -1,
  "in the pool but not judged"), e = 1e-5: trec_eval's infAP.
- ``iprec_at_recall_X`` (X = 0, 10, ..., 100: recall in percent) = the largest j_i / p_i over
  the relevant ranked i with j_i >= max(c, 1), c = floor(X/100 * R + 0.9) in double precision
  (trec_eval 9.x) or X/100 * R rounded (trec_eval 10.0: ``recall_rounding``), and 0 when
  c > num_rel_ret:
  interpolated precision at recall X% as trec_eval's iprec_at_recall;
  ``iprec_11pt_avg`` = their mean (trec_eval's 11pt_avg).
- ``rprec_mult_X`` (X = 20, 40, ..., 200: percent of R) = the relevant items ranked <= c, over c,
  c = floor(X/100 * R + 0.9) in double precision (0 when R = 0): precision at multiples of R
  (trec_eval's Rprec_mult).
- ``set_precision`` = num_rel_ret / num_ret; ``set_recall`` = num_rel_ret / R; ``set_f1`` their
  harmonic mean (0 when num_rel_ret = 0); ``set_map`` = set_precision * set_recall, computed as
  num_rel_ret² / (num_ret R); ``set_relative_precision`` = num_rel_ret / min(num_ret, R)
  (trec_eval's set_P, set_recall, set_F, set_map, set_relative_P).
- ``bin_g`` = (1/R) * sum over relevant ranked i of 1 / log2(2 + p_i - j_i), p_i - j_i being the
  items ranked above i that are not relevant (trec_eval's binG).
- ``rbp@k`` = (1 - q) * sum over relevant i ranked within k of q^(p_i - 1), q the
  ``persistence`` (binary relevance: ranx, ir_measures, LensKit); ``rbp_residual@k`` = (1 - q) *
  the same sum over the unjudged items ranked within k, plus q^k: what RBP could still gain if
  every unjudged item and everything past k were relevant (Moffat and Zobel). Bare: the whole
  list, whose depth is its last rank (num_ret, without rank gaps).
- ``err@k`` = sum over items i ranked within k that gain of (1/p_i) * S_i * prod over gaining j
  ranked above i of (1 - S_j), S = (2^g - 1) / 2^G, g the grade (at most G), G the
  ``max_grade`` (Chapelle et al.'s expected reciprocal rank; the items that gain follow
  ``gain_threshold``).
- ``auc@k`` = the share of (relevant, non-relevant) pairs among the items ranked within k that
  are in order: 1 - (sum over relevant i within k of p_i - j_i) / (P * Q), P the relevant
  items within k, Q the others; 0 when P = 0, ``auc_without_negatives`` when Q = 0 (RePlay's
  RocAuc). Bare ``auc``: every relevant item, those not ranked counted after the whole list
  (P = R, Q = num_ret - num_rel_ret); 0 for a list with nothing recommended.
"""

from __future__ import annotations

import math

import narwhals as nw

from recframe._names import POSITION
from recframe.conventions import Conventions
from recframe.metrics._registry import Feature, Metric, Rows, Term, added, at_least_one, col, cutoff, declare, divided, within

#: trec_eval's infAP smoothing (INFAP_EPSILON)
INFAP_EPSILON = 1e-5
#: recall levels of iprec_at_recall, in percent; multiples of R of rprec_mult, in percent
RECALL_LEVELS = tuple(range(0, 101, 10))
R_MULTIPLES = tuple(range(20, 201, 20))


def _weight(rows: Rows) -> nw.Expr:
    """q^(p - 1), q the persistence (p is never null: NOT_RANKED rows weigh 0 or are masked)."""
    return ((rows.rank - 1).cast(nw.Float64) * math.log(rows.conventions.persistence)).exp()


def _stop(rows: Rows) -> nw.Expr:
    """ERR's stop probability (2^g - 1) / 2^G of a row graded g (clipped to 0..G)."""
    grade_max = rows.conventions.max_grade
    grade = rows.relevance.clip(lower_bound=0.0, upper_bound=grade_max)
    # 2^g as exp(g ln 2): SQLFrame cannot write the power of an expression
    return ((grade * math.log(2.0)).exp() - 1.0) / (2.0**grade_max)


def _trec_cut(n_relevant: nw.Expr, percent: int, rounding: str = "add_0.9") -> nw.Expr:
    """c = floor(x * R + 0.9), x = percent / 100, in double precision as trec_eval 9.0 computes
    the cut-offs of iprec_at_recall and Rprec_mult (so 0.3 * 7 + 0.9 gives 2, not 3); under
    ``rounding="round"`` c = floor(x * R + 0.5), trec_eval 10.0's lround (x * R >= 0) for
    iprec_at_recall."""
    return (nw.lit(percent / 100) * n_relevant.cast(nw.Float64) + (0.5 if rounding == "round" else 0.9)).floor()


def _bpref_value(rows: Rows, k: int | None) -> nw.Expr:
    relevant = rows.feature("relevant_in_list")
    nonrelevant = rows.feature("judged_in_list") - relevant
    above = rows.feature("judged_position") - rows.feature("relevant_position")  # judged non-relevant
    share = nw.min_horizontal(above, relevant) / nw.max_horizontal(nw.min_horizontal(relevant, nonrelevant), nw.lit(1))
    value = nw.when((rows.relevant == 1) & (rows.ranked == 1)).then(1.0 - share).otherwise(0.0)
    return value if k is None else within(rows.rank, k, value)


def _infap_value(rows: Rows, k: int | None) -> nw.Expr:
    judged = (rows.feature("judged_position") - 1).cast(nw.Float64)
    pooled = (rows.feature("pooled_position") - 1).cast(nw.Float64)
    relevant = (rows.feature("relevant_position") - 1).cast(nw.Float64)
    position = rows.rank.cast(nw.Float64)
    value = 1.0 / position + pooled / position * (relevant + INFAP_EPSILON) / (judged + 2 * INFAP_EPSILON)
    return nw.when((rows.relevant == 1) & (rows.ranked == 1)).then(value).otherwise(0.0)


def _ranked(rows: Rows, value: nw.Expr | float) -> nw.Expr:
    return nw.when(rows.ranked == 1).then(value).otherwise(0.0)


def _iprec_term(level: int) -> Term:
    """The largest j_i / p_i over the relevant ranked items from the c-th on (see the module)."""

    def value(rows: Rows, k: int | None) -> nw.Expr:
        place = rows.feature("relevant_position")
        cut = _trec_cut(rows.feature("relevant_in_list"), level, rows.conventions.recall_rounding)
        first = nw.max_horizontal(cut, nw.lit(1.0))
        return nw.when((rows.ranked == 1) & (place >= first)).then(place / rows.rank).otherwise(0.0)

    return Term(f"iprec_{level}", "relevant", value, agg="max", features=("relevant_position", "relevant_in_list"))


def _rprec_term(multiple: int) -> Term:
    """The relevant items ranked within c = floor(multiple% of R + 0.9)."""

    def value(rows: Rows, k: int | None) -> nw.Expr:
        return within(rows.rank, _trec_cut(rows.feature("relevant_in_list"), multiple), 1.0)

    return Term(f"rprec_hits_{multiple}", "relevant", value, features=("relevant_in_list",))


_JUDGED = ("judged_position", "judged_in_list", "relevant_position", "relevant_in_list")

declare(
    # judged rows in rank order, and per list: what bpref and infAP read
    Feature("judged_position", lambda rows, keys: rows.judged.cum_sum().over(*keys, order_by=POSITION)),
    Feature("judged_in_list", lambda rows, keys: rows.judged.sum().over(*keys)),
    Feature("pooled_position", lambda rows, keys: rows.pooled.cum_sum().over(*keys, order_by=POSITION)),
    # sum over the gaining rows ranked above of log(1 - S): ERR's chance to reach the row
    Feature(
        "err_reach",
        lambda rows, keys: (1.0 - _stop(rows)).log().cum_sum().over(*keys, order_by=POSITION) - (1.0 - _stop(rows)).log(),
    ),
)
declare(
    Term("n_ret", "all", lambda rows, k: rows.ranked),
    # the position of the list's last item (0 for an empty list)
    Term("last_rank", "all", lambda rows, k: _ranked(rows, rows.rank.cast(nw.Float64)), agg="max"),
    # rows graded above 0 (gain_threshold="positive": where nDCG is defined)
    Term("n_graded", "all", lambda rows, k: (rows.relevance > 0).fill_null(False).cast(nw.Int64)),
    Term("n_rel_ret", "relevant", lambda rows, k: _ranked(rows, 1.0)),
    Term("judged@", "top_k", lambda rows, k: within(rows.rank, cutoff(k), rows.judged), at_k=True),
    Term("nonrel_judged@", "top_k", lambda rows, k: within(rows.rank, cutoff(k), rows.judged * (1 - rows.relevant)), at_k=True),
    Term("n_nonrel_judged_ret", "judged", lambda rows, k: _ranked(rows, (rows.judged * (1 - rows.relevant)).cast(nw.Float64))),
    Term("bpref_sum", "judged", _bpref_value, features=_JUDGED),
    Term("bpref_sum@", "judged", lambda rows, k: _bpref_value(rows, cutoff(k)), at_k=True, features=_JUDGED),
    Term("infap_sum", "judged", _infap_value, features=(*_JUDGED, "pooled_position")),
    *(_iprec_term(level) for level in RECALL_LEVELS),
    *(_rprec_term(multiple) for multiple in R_MULTIPLES),
    Term(
        "bin_g_sum",
        "relevant",
        lambda rows, k: _ranked(rows, 1.0 / (2 + rows.rank - rows.feature("relevant_position")).cast(nw.Float64).log(2)),
        features=("relevant_position",),
    ),
    Term("rbp", "relevant", lambda rows, k: _ranked(rows, _weight(rows))),
    Term("rbp@", "relevant", lambda rows, k: within(rows.rank, cutoff(k), _weight(rows)), at_k=True),
    Term("rbp_unjudged", "all", lambda rows, k: _ranked(rows, (1 - rows.judged) * _weight(rows))),
    Term("rbp_unjudged@", "top_k", lambda rows, k: within(rows.rank, cutoff(k), (1 - rows.judged) * _weight(rows)), at_k=True),
    Term(
        "err@",
        "graded",
        lambda rows, k: within(rows.rank, cutoff(k), _stop(rows) / rows.rank * rows.feature("err_reach").exp()),
        at_k=True,
        features=("err_reach",),
    ),
    # sum over relevant ranked i of the items not relevant ranked above it (p_i - j_i)
    Term(
        "misordered",
        "relevant",
        lambda rows, k: _ranked(rows, (rows.rank - rows.feature("relevant_position")).cast(nw.Float64)),
        features=("relevant_position",),
    ),
    Term(
        "misordered@",
        "relevant",
        lambda rows, k: within(rows.rank, cutoff(k), (rows.rank - rows.feature("relevant_position")).cast(nw.Float64)),
        at_k=True,
        features=("relevant_position",),
    ),
)


def _iprec_terms(o: Conventions) -> tuple[str, ...]:
    """The terms of iprec_at_recall and iprec_11pt_avg: one per recall level."""
    return tuple(f"iprec_{level}" for level in RECALL_LEVELS)


def _count(name: str, whole: str, at_k: str) -> Metric:
    """A count over the whole list (term `whole`, the bare column) or within k (term `at_k`)."""
    return Metric(
        name=name,
        terms=lambda o: (whole, at_k),
        finish=lambda k, o: col(whole) if k is None else col(at_k, k),
        bare=True,
        defined="always",
        default=False,
    )


def _per_relevant(name: str, total: str) -> Metric:
    """A sum over the relevant ranked items of the whole list (term `total`), over R."""
    return Metric(
        name=name,
        terms=lambda o: (total, "n_relevant"),
        finish=lambda k, o: col(total) / at_least_one(col("n_relevant")),
        bare=True,
        with_k=False,
        default=False,
    )


def _set_precision() -> nw.Expr:
    return col("n_rel_ret") / at_least_one(col("n_ret"))


def _set_recall() -> nw.Expr:
    return col("n_rel_ret") / at_least_one(col("n_relevant"))


def _set_f1(k: int | None, o: Conventions) -> nw.Expr:
    p, r = _set_precision(), _set_recall()
    return nw.when(col("n_rel_ret") > 0).then(2 * p * r / (p + r)).otherwise(0.0)


_SET_TERMS = ("n_rel_ret", "n_ret", "n_relevant")


def _set_metric(name: str, finish: object, defined: str = "relevant") -> Metric:
    return Metric(
        name=name,
        terms=lambda o: _SET_TERMS,
        finish=finish,  # type: ignore[arg-type]
        bare=True,
        with_k=False,
        defined=defined,  # type: ignore[arg-type]
        default=False,
    )


def _set_map(k: int | None, o: Conventions) -> nw.Expr:
    # num_rel_ret^2 / (num_ret * R) in one division, as trec_eval computes it (the product of the
    # two ratios rounds differently: 0.0562 where trec_eval prints 0.0563)
    hits = col("n_rel_ret").cast(nw.Float64)
    return hits * hits / (at_least_one(col("n_ret")).cast(nw.Float64) * at_least_one(col("n_relevant")).cast(nw.Float64))


def _rbp_residual(k: int | None, o: Conventions) -> nw.Expr:
    if k is None:  # the whole list, whose depth is its last rank
        tail = (col("last_rank").cast(nw.Float64) * math.log(o.persistence)).exp()
        return (1 - o.persistence) * col("rbp_unjudged") + tail
    return (1 - o.persistence) * col("rbp_unjudged@", k) + o.persistence**k


def _auc(k: int | None, o: Conventions) -> nw.Expr:
    if k is None:  # relevant items not ranked come after the whole list
        positives, negatives = col("n_relevant"), col("n_ret") - col("n_rel_ret")
        misordered = col("misordered") + (col("n_relevant") - col("n_rel_ret")) * negatives
    else:
        positives, negatives = col("hits@", k), col("retrieved@", k) - col("hits@", k)
        misordered = col("misordered@", k)
    no_negatives = 1.0 if o.auc_without_negatives == "one" else 0.0
    value = 1.0 - misordered / at_least_one(positives * negatives)
    # nothing relevant in reach (or nothing recommended at all): 0
    nothing = positives == 0 if k is not None else (positives == 0) | (col("n_ret") == 0)
    return nw.when(nothing).then(0.0).otherwise(nw.when(negatives == 0).then(no_negatives).otherwise(value))


IR_TOOLBOX = (
    Metric(
        name="judged",
        terms=lambda o: ("judged@", "retrieved@"),
        finish=lambda k, o: col("judged@", k) / at_least_one(col("retrieved@", k)),
        defined="always",
        default=False,
    ),
    _count("num_ret", "n_ret", "retrieved@"),
    _count("num_rel_ret", "n_rel_ret", "hits@"),
    _count("num_nonrel_judged_ret", "n_nonrel_judged_ret", "nonrel_judged@"),
    Metric(
        name="bpref",
        terms=lambda o: ("bpref_sum", "bpref_sum@", "n_relevant"),
        finish=lambda k, o: (col("bpref_sum") if k is None else col("bpref_sum@", k)) / at_least_one(col("n_relevant")),
        bare=True,
        default=False,
    ),
    _per_relevant("infap", "infap_sum"),
    Metric(
        name="iprec_at_recall",
        terms=_iprec_terms,
        finish=lambda level, o: col(f"iprec_{level}"),
        variants=RECALL_LEVELS,
        default=False,
    ),
    Metric(
        name="iprec_11pt_avg",
        terms=_iprec_terms,
        # the eleven added from the highest level down, one after the other, as trec_eval adds them
        finish=lambda k, o: divided(added(col(f"iprec_{level}") for level in reversed(RECALL_LEVELS)), len(RECALL_LEVELS)),
        bare=True,
        with_k=False,
        default=False,
    ),
    Metric(
        name="rprec_mult",
        terms=lambda o: ("n_relevant", *(f"rprec_hits_{multiple}" for multiple in R_MULTIPLES)),
        finish=lambda multiple, o: col(f"rprec_hits_{multiple}") / at_least_one(_trec_cut(col("n_relevant"), cutoff(multiple))),
        variants=R_MULTIPLES,
        default=False,
    ),
    _set_metric("set_precision", lambda k, o: _set_precision(), defined="always"),
    _set_metric("set_recall", lambda k, o: _set_recall()),
    _set_metric("set_f1", _set_f1),
    _set_metric("set_map", _set_map),
    _set_metric(
        "set_relative_precision",
        lambda k, o: col("n_rel_ret") / at_least_one(nw.min_horizontal(col("n_ret"), col("n_relevant"))),
    ),
    _per_relevant("bin_g", "bin_g_sum"),
    Metric(
        name="rbp",
        terms=lambda o: ("rbp", "rbp@"),
        finish=lambda k, o: (1 - o.persistence) * (col("rbp") if k is None else col("rbp@", k)),
        bare=True,
        defined="always",
        default=False,
    ),
    Metric(
        name="rbp_residual",
        terms=lambda o: ("rbp_unjudged", "rbp_unjudged@", "last_rank"),
        finish=_rbp_residual,
        bare=True,
        defined="always",
        default=False,
        higher_is_better=False,
    ),
    Metric(
        name="err",
        terms=lambda o: ("err@", "n_relevant"),
        finish=lambda k, o: col("err@", k),
        defined="graded",
        default=False,
    ),
    Metric(
        name="auc",
        terms=lambda o: ("misordered", "misordered@", "n_relevant", "n_ret", "n_rel_ret", "hits@", "retrieved@"),
        finish=_auc,
        bare=True,
        default=False,
    ),
)
