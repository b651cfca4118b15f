"""The IR toolbox of issue 14 (judged, num_*, bpref, infap, iprec_at_recall, iprec_11pt_avg,
rprec_mult, the set measures, bin_g, rbp, rbp_residual, err, auc): hand-worked examples, random
frames against the item-by-item reference (tests/reference.py), trec_eval itself (pytrec_eval)
on random runs and qrels, and the errors of the new conventions."""

from __future__ import annotations

import functools
import math
import random
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recframe
import reference
from conftest import BACKENDS, to_polars
from recframe.errors import RecframeError
from recframe.metrics import REGISTRY

E = reference.INFAP_EPSILON
SCHEMA = {"user_id": pl.String, "item_id": pl.String, "rank": pl.Int64, "relevance": pl.Float64}


def require(metric: str) -> None:
    """Every metric of the toolbox is registered (a renamed one fails here, by name)."""
    assert metric in REGISTRY, f"{metric} is not a registered metric"


def frame(rows: list[tuple[str, str, int | None, float | None]]) -> pl.DataFrame:
    """A long frame from (user, item, rank or None, relevance or None) rows."""
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def by_user(result: Any) -> dict[str, dict[str, Any]]:
    return {row["user_id"]: row for row in to_polars(result).iter_rows(named=True)}


def reference_by_user(df: pl.DataFrame, k: list[int], metrics: list[str], options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The reference's values of each user's list in `df`."""
    lists: dict[str, list[tuple[Any, int | None, float | None]]] = {}
    for row in df.iter_rows(named=True):
        lists.setdefault(row["user_id"], []).append((row["item_id"], row["rank"], row["relevance"]))
    return {user: reference.ir_metrics_of_list(entries, tuple(k), tuple(metrics), **options) for user, entries in lists.items()}


def assert_close(got: Any, want: Any, where: str, tol: float = 1e-9) -> None:
    if want is None or got is None:
        assert got is None and want is None, f"{where}: got {got}, want {want}"
    else:
        assert math.isclose(got, want, rel_tol=tol, abs_tol=tol), f"{where}: got {got!r}, want {want!r}"


# ------------------------------------------------------------------------ hand-worked examples

# User u's list, threshold 1 (relevant: grade >= 1), '-' = unjudged:
#   p:      1  2  3  4  5  6  7    not ranked: g (grade 1), h (grade 0)
#   item:   a  b  c  d  e  f  k
#   grade:  2  0  -  1  3  0  -
# relevant R = 4 (a, d, e, g); judged non-relevant N = 3 (b, f, h); num_ret = 7;
# relevant ranked: a (p 1, j 1), d (p 4, j 2), e (p 5, j 3): num_rel_ret = 3, precisions 1, 2/4, 3/5
LIST = frame(
    [
        ("u", "a", 1, 2.0),
        ("u", "b", 2, 0.0),
        ("u", "c", 3, None),
        ("u", "d", 4, 1.0),
        ("u", "e", 5, 3.0),
        ("u", "f", 6, 0.0),
        ("u", "k", 7, None),
        ("u", "g", None, 1.0),
        ("u", "h", None, 0.0),
    ]
)
# ERR's stop probabilities (2^g - 1) / 2^G under G = 4: grade 1 -> 1/16, 2 -> 3/16, 3 -> 7/16
S1, S2, S3 = 1 / 16, 3 / 16, 7 / 16
# v: two relevant items and nothing else (no pair to order); w: a non-relevant item ranked, the
# relevant one not ranked; n: nothing relevant (a judged 0 and an unjudged item)
EXTRA = frame(
    [
        ("v", "x", 1, 1.0),
        ("v", "y", 2, 2.0),
        ("w", "z", 1, 0.0),
        ("w", "t", None, 1.0),
        ("n", "a", 1, 0.0),
        ("n", "b", 2, None),
    ]
)
# t: threshold 2 leaves no relevant item, but a grade-1 item gains under gain_threshold="positive"
GRADE_ONE = frame([("t", "a", 1, 1.0), ("t", "b", 2, 0.0)])
Q = 0.8  # the default persistence

HAND_WORKED = [
    # judged@3: a, b judged, c not: 2/3. judged@10: a, b, d, e, f of the 7 ranked (c and k
    # unjudged): 5/7 (ir_measures' Judged@k divides by the items ranked when fewer than k)
    pytest.param("judged", LIST, [3, 10], {}, {"u": {"judged@3": 2 / 3, "judged@10": 5 / 7}}, id="judged"),
    # 7 ranked; 3 within k = 3
    pytest.param("num_ret", LIST, [3], {}, {"u": {"num_ret": 7, "num_ret@3": 3}}, id="num_ret"),
    # a, d, e ranked and relevant; within 3: a alone. n_relevant R = 4 counts g (not ranked)
    pytest.param("num_rel_ret", LIST, [3], {}, {"u": {"num_rel_ret": 3, "num_rel_ret@3": 1, "n_relevant": 4}}, id="num_rel_ret"),
    # b and f judged 0 (h is not ranked; c, k unjudged); within 3: b
    pytest.param(
        "num_nonrel_judged_ret",
        LIST,
        [3],
        {},
        {"u": {"num_nonrel_judged_ret": 2, "num_nonrel_judged_ret@3": 1}},
        id="num_nonrel_judged_ret",
    ),
    # min(R, N) = 3. a: no judged non-relevant above -> 1; d: b above -> 1 - 1/3; e: b above
    # (c unjudged, passed over) -> 1 - 1/3; g not ranked: 0. bpref = (1 + 2/3 + 2/3) / 4 = 7/12.
    # @3: a alone: 1/4; @4: a and d: (1 + 2/3) / 4
    pytest.param(
        "bpref",
        LIST,
        [3, 4],
        {},
        {"u": {"bpref": (1 + 2 / 3 + 2 / 3) / 4, "bpref@3": 1 / 4, "bpref@4": (1 + 2 / 3) / 4}},
        id="bpref",
    ),
    # a: 1/1 (nothing above). d (p 4): judged above J = 2 (a, b), relevant above r = 1:
    # 1/4 + (2/4) (1 + e) / (2 + 2e) = 1/2. e (p 5): J = 3 (a, b, d), r = 2: 1/5 + (3/5) (2 + e) / (3 + 2e).
    # infap = sum / R = 4; AP would be (1 + 2/4 + 3/5) / 4: e shows at 1e-6
    pytest.param(
        "infap",
        LIST,
        [5],
        {},
        {"u": {"infap": (1 + (1 / 4 + 2 / 4 * (1 + E) / (2 + 2 * E)) + (1 / 5 + 3 / 5 * (2 + E) / (3 + 2 * E))) / 4}},
        id="infap",
    ),
    # R = 4, num_rel_ret = 3; c = floor(X/100 * 4 + 0.9): X = 0 -> 0 (read as 1), 10 -> 1.3 -> 1,
    # 20 -> 1.7 -> 1, 30 -> 2.1 -> 2 (rounding 1.2 would give 1), 40 -> 2, 50 -> 2.9 -> 2, 60 -> 3.3 -> 3,
    # 70 -> 3.7 -> 3, 80 -> 4.1 -> 4 > 3: 0, 90 -> 4, 100 -> 4: 0.
    # max j/p over j >= c: c = 1 -> max(1, 2/4, 3/5) = 1; c = 2 -> max(2/4, 3/5) = 3/5; c = 3 -> 3/5
    pytest.param(
        "iprec_at_recall",
        LIST,
        [5],
        {},
        {"u": {f"iprec_at_recall_{x}": v for x, v in zip(range(0, 101, 10), [1, 1, 1, 0.6, 0.6, 0.6, 0.6, 0.6, 0, 0, 0])}},
        id="iprec_at_recall",
    ),
    # the mean of the 11 values above: (3 * 1 + 5 * 0.6 + 3 * 0) / 11
    pytest.param("iprec_11pt_avg", LIST, [5], {}, {"u": {"iprec_11pt_avg": 6 / 11}}, id="iprec_11pt_avg"),
    # c = floor(X/100 * 4 + 0.9): 20 -> 1, 40 -> 2, 60 -> 3, 80 -> 4, 100 -> 4, 120 -> 5, 140 -> 6,
    # 160 -> 7, 180 -> 8, 200 -> 8 (past the list of 7); relevant ranked <= c, over c:
    # 1/1, 1/2, 1/3, 2/4, 2/4, 3/5, 3/6, 3/7, 3/8, 3/8
    pytest.param(
        "rprec_mult",
        LIST,
        [5],
        {},
        {
            "u": {
                f"rprec_mult_{x}": v
                for x, v in zip(range(20, 201, 20), [1, 1 / 2, 1 / 3, 2 / 4, 2 / 4, 3 / 5, 3 / 6, 3 / 7, 3 / 8, 3 / 8])
            }
        },
        id="rprec_mult",
    ),
    # num_rel_ret / num_ret = 3/7
    pytest.param("set_precision", LIST, [5], {}, {"u": {"set_precision": 3 / 7}}, id="set_precision"),
    # num_rel_ret / R = 3/4
    pytest.param("set_recall", LIST, [5], {}, {"u": {"set_recall": 3 / 4}}, id="set_recall"),
    # 2 (3/7)(3/4) / (3/7 + 3/4) = (18/28) / (33/28) = 6/11
    pytest.param("set_f1", LIST, [5], {}, {"u": {"set_f1": 6 / 11}}, id="set_f1"),
    # (3/7)(3/4) = 9/28
    pytest.param("set_map", LIST, [5], {}, {"u": {"set_map": 9 / 28}}, id="set_map"),
    # 3 / min(7, 4) = 3/4
    pytest.param("set_relative_precision", LIST, [5], {}, {"u": {"set_relative_precision": 3 / 4}}, id="set_relative_precision"),
    # non-relevant items above (judged or not): a 0, d 2 (b, c), e 2: (1/log2(2) + 1/log2(4) + 1/log2(4)) / 4
    pytest.param("bin_g", LIST, [5], {}, {"u": {"bin_g": (1 + 1 / 2 + 1 / 2) / 4}}, id="bin_g"),
    # (1 - q)(q^0 + q^3 + q^4) = 0.2 (1 + 0.512 + 0.4096) = 0.38432; @3: a alone: 0.2; @4: 0.2 (1 + 0.512)
    pytest.param("rbp", LIST, [3, 4], {}, {"u": {"rbp": 0.38432, "rbp@3": 0.2, "rbp@4": 0.2 * 1.512}}, id="rbp"),
    # persistence 0.5: 0.5 (1 + 1/8 + 1/16) = 0.59375
    pytest.param("rbp", LIST, [3], {"persistence": 0.5}, {"u": {"rbp": 0.59375, "rbp@3": 0.5}}, id="rbp-persistence-0.5"),
    # unjudged ranked c (p 3), k (p 7): (1 - q)(q^2 + q^6) = 0.2 (0.64 + 0.262144) = 0.1804288; bare:
    # + q^7 = 0.2097152; @3: c alone 0.2 * 0.64 + q^3 = 0.128 + 0.512; @10: 0.1804288 + q^10
    pytest.param(
        "rbp_residual",
        LIST,
        [3, 10],
        {},
        {"u": {"rbp_residual": 0.1804288 + 0.2097152, "rbp_residual@3": 0.64, "rbp_residual@10": 0.1804288 + 0.1073741824}},
        id="rbp_residual",
    ),
    # gaining a (S2), d (S1), e (S3): @1 = S2; @5 = S2 + (1 - S2) S1 / 4 + (1 - S2)(1 - S1) S3 / 5
    pytest.param(
        "err", LIST, [1, 5], {}, {"u": {"err@1": S2, "err@5": S2 + (1 - S2) * S1 / 4 + (1 - S2) * (1 - S1) * S3 / 5}}, id="err"
    ),
    # threshold 2: a and e gain, d (grade 1) not: S2 + (1 - S2) S3 / 5
    pytest.param("err", LIST, [5], {"threshold": 2.0}, {"u": {"err@5": S2 + (1 - S2) * S3 / 5}}, id="err-threshold-2"),
    # threshold 2 under gain_threshold="positive": d gains again, as under threshold 1
    pytest.param(
        "err",
        LIST,
        [5],
        {"threshold": 2.0, "gain_threshold": "positive"},
        {"u": {"err@5": S2 + (1 - S2) * S1 / 4 + (1 - S2) * (1 - S1) * S3 / 5}},
        id="err-positive",
    ),
    # max_grade 2: S = (2^g - 1) / 4 with g = min(grade, 2): a 3/4, d 1/4, e 3/4:
    # 3/4 + (1/4)(1/4) / 4 + (1/4)(3/4)(3/4) / 5
    pytest.param(
        "err",
        LIST,
        [5],
        {"max_grade": 2.0},
        {"u": {"err@5": 3 / 4 + (1 / 4) * (1 / 4) / 4 + (1 / 4) * (3 / 4) * (3 / 4) / 5}},
        id="err-max-grade-2",
    ),
    # t has no relevant item at threshold 2, but under "positive" its grade-1 item a gains at p 1:
    # err@2 = S1 where such a user is counted (empty_users="zero"; under "skip" it is left out of
    # the means, and so null in per_user)
    pytest.param(
        "err",
        GRADE_ONE,
        [2],
        {"threshold": 2.0, "gain_threshold": "positive", "empty_users": "zero"},
        {"t": {"err@2": S1}},
        id="err-positive-graded-only",
    ),
    # @3: a, b, c: P = 1, Q = 2, a misordered against nothing (p - j = 0): 1.
    # @5: P = 3 (a, d, e), Q = 2 (b, c); misordered p - j: 0 + 2 + 2 = 4: 1 - 4/6.
    # bare: P = R = 4, Q = 7 - 3 = 4 (b, c, f, k); misordered 4 + (4 - 3) * 4 (g after the list) = 8: 1 - 8/16
    pytest.param("auc", LIST, [3, 5], {}, {"u": {"auc@3": 1.0, "auc@5": 1 / 3, "auc": 1 / 2}}, id="auc"),
    # v: no non-relevant item (Q = 0): auc_without_negatives ("one" by default); w: @1 holds z
    # only (P = 0): 0; bare: P = 1, Q = 1, t after z: 1 misordered pair: 1 - 1/1 = 0
    pytest.param(
        "auc",
        EXTRA,
        [1, 2],
        {},
        {"v": {"auc@2": 1.0, "auc": 1.0}, "w": {"auc@1": 0.0, "auc": 0.0}},
        id="auc-without-negatives-one",
    ),
    pytest.param(
        "auc", EXTRA, [2], {"auc_without_negatives": "zero"}, {"v": {"auc@2": 0.0, "auc": 0.0}}, id="auc-without-negatives-zero"
    ),
    # n has no relevant item: bpref is undefined (null under empty_users="skip", 0 under "zero");
    # num_ret, set_precision and rbp are defined for every user (n: 2 ranked, nothing relevant),
    # and counted under empty_users="zero" (under "skip" n is left out of the means: null);
    # rbp_residual@2: b unjudged at p 2: 0.2 * 0.8 + 0.8^2 = 0.8
    pytest.param("bpref", EXTRA, [2], {}, {"n": {"bpref": None, "bpref@2": None, "n_relevant": 0}}, id="bpref-no-relevant-skip"),
    pytest.param(
        "bpref", EXTRA, [2], {"empty_users": "zero"}, {"n": {"bpref": 0.0, "bpref@2": 0.0}}, id="bpref-no-relevant-zero"
    ),
    pytest.param(
        "set_precision", EXTRA, [2], {"empty_users": "zero"}, {"n": {"set_precision": 0.0}}, id="set_precision-no-relevant"
    ),
    pytest.param(
        "rbp_residual",
        EXTRA,
        [2],
        {"empty_users": "zero"},
        {"n": {"rbp_residual@2": 0.2 * Q + Q**2}},
        id="rbp_residual-no-relevant",
    ),
    pytest.param("set_precision", EXTRA, [2], {}, {"n": {"set_precision": None}}, id="set_precision-no-relevant-skip"),
    # n: a judged, b not: 1/2; w: z, the one item ranked, judged: 1/1; s: nothing ranked: 0
    pytest.param(
        "judged",
        pl.concat([EXTRA, frame([("s", "q", None, 1.0)])]),
        [2],
        {"empty_users": "zero"},
        {"n": {"judged@2": 1 / 2}, "w": {"judged@2": 1.0}, "s": {"judged@2": 0.0}},
        id="judged-short-lists",
    ),
]


@pytest.mark.parametrize(("metric", "df", "k", "options", "expected"), HAND_WORKED)
def test_hand_worked(
    metric: str, df: pl.DataFrame, k: list[int], options: dict[str, Any], expected: dict[str, dict[str, Any]]
) -> None:
    """recframe, and the reference, give the value worked by hand."""
    require(metric)
    options = {"threshold": 1.0, **options}
    got = by_user(recframe.per_user(df, k=k, metrics=[metric], **options))
    want = reference_by_user(df, k, [metric], options)
    for user, columns in expected.items():
        for column, value in columns.items():
            assert_close(got[user][column], value, f"recframe {user} {column}", tol=1e-12)
            assert_close(want[user][column], value, f"reference {user} {column}", tol=1e-12)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_every_backend_gives_the_reference_values(backend: str) -> None:
    """Every IR metric at once, on the hand-worked users, in each input type."""
    metrics = list(reference.IR_METRICS)
    df = pl.concat([LIST, EXTRA, GRADE_ONE])
    options: dict[str, Any] = {"threshold": 2.0, "gain_threshold": "positive", "persistence": 0.7, "max_grade": 3.0}
    got = by_user(recframe.per_user(BACKENDS[backend](df), k=[1, 3, 10], metrics=metrics, **options))
    want = reference_by_user(df, [1, 3, 10], metrics, options)
    assert got.keys() == want.keys()
    for user, columns in want.items():
        assert set(got[user]) == {"user_id", *columns}
        for column, value in columns.items():
            assert_close(got[user][column], value, f"{backend} {user} {column}")


# ---------------------------------------------------------------- random frames vs the reference

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GRADES = (-1.0, 0.0, 1.0, 2.0, 3.0, 4.5)  # -1: trec_eval's "pooled, not judged" (negative_relevance)


@st.composite
def ir_frames(draw: st.DrawFn) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A long frame of a few users, each list ranked 1, 2, ... (no ties, no gaps), with items not
    ranked, unjudged items; some users without a relevant item, some with nothing judged, some
    with grade-1 items only (not relevant at thresholds 2 and 3, yet gaining under
    gain_threshold="positive")."""
    rows: list[tuple[str, str, int | None, float | None]] = []
    for user in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["mixed", "mixed", "mixed", "no_relevant", "low_grades", "unjudged"]))
        n_items = draw(st.integers(1, 9))
        n_ranked = draw(st.integers(0, n_items))
        order = draw(st.permutations(range(n_items)))  # the items in rank order; the rest not ranked
        for place, item in enumerate(order):
            if kind == "unjudged":
                rel = None
            elif kind == "no_relevant":
                rel = draw(st.sampled_from([None, 0.0]))
            elif kind == "low_grades":  # relevant under threshold 1 only; graded (gaining under "positive")
                rel = draw(st.sampled_from([None, 0.0, 1.0]))
            else:
                rel = draw(st.one_of(st.none(), st.sampled_from(GRADES)))
            rows.append((f"u{user}", f"i{item}", place + 1 if place < n_ranked else None, rel))
    options = {
        "threshold": draw(st.sampled_from([None, 1.0, 2.0, 3.0])),
        "persistence": draw(st.sampled_from([0.5, 0.8, 0.95])),
        "max_grade": draw(st.sampled_from([1.0, 2.5, 4.0])),
        "gain_threshold": draw(st.sampled_from(["threshold", "positive"])),
        "auc_without_negatives": draw(st.sampled_from(["one", "zero"])),
        "empty_users": draw(st.sampled_from(["skip", "zero"])),
        "recall_rounding": draw(st.sampled_from(["add_0.9", "round"])),
        "negative_relevance": draw(st.sampled_from(["grade", "unjudged"])),
    }
    return frame(rows), options


@pytest.mark.parametrize("metric", reference.IR_METRICS)
def test_matches_reference(metric: str) -> None:
    require(metric)

    @SETTINGS
    @given(ir_frames(), st.lists(st.sampled_from([1, 2, 3, 5, 10]), min_size=1, max_size=3, unique=True))
    def run(case: tuple[pl.DataFrame, dict[str, Any]], k: list[int]) -> None:
        df, options = case
        got = by_user(recframe.per_user(df, k=k, metrics=[metric], **options))
        want = reference_by_user(df, k, [metric], options)
        assert got.keys() == want.keys()
        for user, columns in want.items():
            assert set(got[user]) == {"user_id", *columns}, f"{metric}: columns {sorted(got[user])}"
            for column, value in columns.items():
                assert_close(got[user][column], value, f"{user} {column} {options}")

    run()


# ------------------------------------------------------------------- trec_eval (pytrec_eval)

# recframe metric -> (recframe column, pytrec_eval key) pairs; ndcg@1000 is the uncut ndcg
# (no list reaches 1000)
TREC_PAIRS: dict[str, list[tuple[str, str]]] = {
    "num_ret": [("num_ret", "num_ret")],
    "num_rel_ret": [("num_rel_ret", "num_rel_ret"), ("n_relevant", "num_rel")],
    "num_nonrel_judged_ret": [("num_nonrel_judged_ret", "num_nonrel_judged_ret")],
    "bpref": [("bpref", "bpref")],
    "infap": [("infap", "infAP")],
    "iprec_at_recall": [(f"iprec_at_recall_{x}", f"iprec_at_recall_{x / 100:.2f}") for x in reference.RECALL_PERCENTS],
    "iprec_11pt_avg": [("iprec_11pt_avg", "11pt_avg")],
    "rprec_mult": [(f"rprec_mult_{x}", f"Rprec_mult_{x / 100:.2f}") for x in reference.R_PERCENTS],
    "set_precision": [("set_precision", "set_P")],
    "set_recall": [("set_recall", "set_recall")],
    "set_f1": [("set_f1", "set_F")],
    "set_map": [("set_map", "set_map")],
    "set_relative_precision": [("set_relative_precision", "set_relative_P")],
    "bin_g": [("bin_g", "binG")],
    "ndcg": [("ndcg@1000", "ndcg"), ("ndcg@5", "ndcg_cut_5"), ("ndcg@10", "ndcg_cut_10")],
}
TREC_MEASURES = {
    *("num_ret", "num_rel_ret", "num_nonrel_judged_ret", "num_rel", "bpref", "infAP", "iprec_at_recall", "11pt_avg"),
    *("Rprec_mult", "set_P", "set_recall", "set_F", "set_map", "set_relative_P", "binG", "ndcg", "ndcg_cut.5,10"),
}


@functools.cache
def trec_data(seed: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]], set[str]]:
    """A run (qid -> doc -> score, few distinct scores: ties) and qrels (qid -> doc -> grade
    0..3) over 40 queries: judged and unjudged documents retrieved, judged ones not retrieved,
    queries whose qrels hold no grade above 0 or none above 1, queries only in the run (their
    ids returned too) and only in the qrels."""
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    run_only = set()
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{d}" for d in rng.sample(range(40), 25)]
        place = "run_only" if q < 2 else "qrels_only" if q < 4 else "both"
        if place != "qrels_only":
            run[qid] = {doc: rng.randint(0, 7) / 2 for doc in docs[: rng.randint(1, 20)]}
        if place == "run_only":
            run_only.add(qid)
            continue
        top = 0 if q % 9 == 4 else 1 if q % 9 == 5 else 3  # a few queries with nothing (highly) relevant
        judged = [doc for doc in docs if rng.random() < 0.5] or docs[-1:]
        # -1: in the pool, not judged (trec_eval's infAP sampling; negative_relevance="unjudged")
        qrels[qid] = {doc: min(rng.choice([-1, 0, 0, 1, 2, 3]), top) for doc in judged}
    return run, qrels, run_only


@functools.cache
def trec_eval_values(seed: int, level: int) -> dict[str, dict[str, float]]:
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (pytrec-eval-terrier) is trec_eval's reference")
    run, qrels, _ = trec_data(seed)
    return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES, relevance_level=level).evaluate(run)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("metric", list(TREC_PAIRS))
def test_matches_trec_eval(metric: str, level: int, seed: int) -> None:
    """profile="trec_eval" with threshold = trec_eval's relevance level gives trec_eval's value
    for every query trec_eval evaluates (those in both the run and the qrels), and evaluates
    those alone. Under level 2, nDCG keeps the gain of grade-1 documents
    (the profile's gain_threshold="positive")."""
    require(metric)
    theirs = trec_eval_values(seed, level)
    run, qrels, run_only = trec_data(seed)
    runs = pl.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        schema={"user_id": pl.String, "item_id": pl.String, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        schema={"user_id": pl.String, "item_id": pl.String, "relevance": pl.Int64},
        orient="row",
    )
    ours = by_user(
        recframe.per_user(
            runs, truth=truth, score="score", k=[5, 10, 1000], metrics=[metric], profile="trec_eval9", threshold=level
        )
    )
    # trec_eval evaluates the 36 queries in both files: not those only in the qrels (nothing
    # retrieved) nor those only in the run (nothing judged)
    assert len(theirs) == 36 and not run_only & set(theirs)
    assert set(ours) == set(theirs)
    for qid, values in theirs.items():
        for column, measure in TREC_PAIRS[metric]:
            assert_close(ours[qid][column], values[measure], f"{qid} {column} vs trec_eval {measure}")
    # the data has what the comparison is about
    if metric == "num_ret":
        assert any(v["num_ret"] > v["num_rel_ret"] + v["num_nonrel_judged_ret"] for v in theirs.values())  # unjudged
        assert any(v["num_rel"] == 0 for v in theirs.values())
        assert any(len(set(docs.values())) < len(docs) for docs in run.values())  # ties


# ------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize("entry", ["per_user", "summary"])
@pytest.mark.parametrize(
    ("metric", "option", "value"),
    [
        ("rbp", "persistence", 0.0),
        ("rbp", "persistence", 1.0),
        ("rbp_residual", "persistence", 1.5),
        ("rbp", "persistence", -0.2),
        ("err", "max_grade", 0.0),
        ("err", "max_grade", -1.0),
        ("err", "max_grade", 5000.0),  # 2**5000 is not a float
        ("auc", "auc_without_negatives", "half"),
        ("auc", "auc_without_negatives", 1),
    ],
)
def test_bad_convention_values_name_the_option(entry: str, metric: str, option: str, value: Any) -> None:
    require(metric)
    with pytest.raises(RecframeError, match=option):
        getattr(recframe, entry)(LIST, k=[3], metrics=[metric], threshold=1.0, **{option: value})
    # the default and an accepted value work on the same frame
    fine = {"persistence": 0.5, "max_grade": 2.0, "auc_without_negatives": "zero"}[option]
    assert to_polars(getattr(recframe, entry)(LIST, k=[3], metrics=[metric], threshold=1.0, **{option: fine})).height == 1


def test_unjudged_users_skip_leaves_out_users_without_any_judgement() -> None:
    """u has a judged list; v was recommended to but has no judged item (trec_eval: a query of
    the run without qrels). "empty" treats v as a user without relevant items (0 under
    empty_users="zero"); "skip" leaves v out of per_user and of the means, still counted in
    n_no_truth."""
    df = frame([("u", "a", 1, 1.0), ("u", "b", 2, 0.0), ("v", "a", 1, None), ("v", "c", 2, None)])
    options: dict[str, Any] = {"k": 2, "metrics": ["precision"], "empty_users": "zero"}
    assert recframe.per_user(df, **options)["user_id"].to_list() == ["u", "v"]
    assert recframe.per_user(df, unjudged_users="skip", **options)["user_id"].to_list() == ["u"]
    mean = recframe.summary(df, **options).row(0, named=True)
    assert (mean["n_users"], mean["precision@2"]) == (2, (0.5 + 0.0) / 2)
    skipped = recframe.summary(df, unjudged_users="skip", **options).row(0, named=True)
    assert (skipped["n_users"], skipped["n_skipped"], skipped["n_no_truth"], skipped["precision@2"]) == (1, 1, 1, 0.5)
