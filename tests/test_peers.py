"""Cross-checks of recframe against other implementations on seeded random data.

The reference is trec_eval (through pytrec_eval), compared only on the conventions both share:

* a doc is relevant when its qrels grade is >= 1 (trec_eval's default relevance level), so
  recframe gets ``threshold=1``;
* scores are distinct, well-separated integers, so trec_eval's own tie-breaking (and its
  score comparisons) never come into play and both sides see the same ranking;
* trec_eval divides AP by R (``ap_denominator="relevant"``), uses the qrels grade as the
  nDCG gain (``gain="linear"``), and its ``recip_rank`` and ``map`` have no cut-off (recframe's
  rr@K and ap@K with K >= the longest run);
* only users with at least one relevant doc are compared: trec_eval scores a query without
  relevant docs 0 on every measure (and drops a query without any qrels), while recframe
  leaves such a user undefined (null under ``empty_users="skip"``), so neither value is the
  other's convention.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recframe

pytrec_eval = pytest.importorskip(
    "pytrec_eval",
    reason="pytrec_eval (PyPI: pytrec-eval-terrier) is the trec_eval reference for these checks",
)

CUTOFFS = (5, 10)
MAX_RUN = 20  # longest run; recframe's cut-off for trec_eval's uncut recip_rank and map
N_DOCS = 40  # doc pool per user: twice the longest run, so many relevant docs go unretrieved

# (trec_eval measure, recframe column). Every pair holds per user with the conventions above.
PAIRS = [
    *((f"P_{k}", f"precision@{k}") for k in CUTOFFS),
    *((f"recall_{k}", f"recall@{k}") for k in CUTOFFS),
    *((f"map_cut_{k}", f"ap@{k}") for k in CUTOFFS),
    *((f"ndcg_cut_{k}", f"ndcg@{k}") for k in CUTOFFS),
    ("Rprec", "r_precision"),
    ("recip_rank", f"rr@{MAX_RUN}"),
    ("map", f"ap@{MAX_RUN}"),
    ("num_rel", "n_relevant"),
]
TREC_MEASURES = {
    f"P.{','.join(map(str, CUTOFFS))}",
    f"recall.{','.join(map(str, CUTOFFS))}",
    f"map_cut.{','.join(map(str, CUTOFFS))}",
    f"ndcg_cut.{','.join(map(str, CUTOFFS))}",
    "Rprec",
    "recip_rank",
    "map",
    "num_rel",
}
# trec_eval computes and reports these in double; with integer scores and grades nothing goes
# through float32, so they agree to rounding error.
ABS_TOL = 1e-9

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


# --- data -----------------------------------------------------------------------------------


def numpy_case(seed: int, n_users: int = 30) -> tuple[Run, Qrels]:
    """A random run (1-20 docs per user, distinct integer scores) and graded qrels (0-3)."""
    rng = np.random.default_rng(seed)
    run: Run = {}
    qrels: Qrels = {}
    for u in range(n_users):
        qid = f"u{u:02d}"
        size = int(rng.integers(1, MAX_RUN + 1))
        docs = rng.choice(N_DOCS, size=size, replace=False)
        # a permutation of 1..size: distinct and 1 apart, so no ties and exact in float32
        scores = rng.permutation(size) + 1
        run[qid] = {f"d{d:02d}": float(s) for d, s in zip(docs, scores)}

        # judge docs from the whole pool: some retrieved, some not (relevant but unretrieved)
        judged = rng.choice(N_DOCS, size=int(rng.integers(0, 16)), replace=False)
        grades = rng.integers(0, 4, size=judged.size)
        if rng.random() < 0.15:
            grades[:] = 0  # a user whose qrels hold no relevant doc
        if judged.size:  # a user with no qrels at all is simply absent from them
            qrels[qid] = {f"d{d:02d}": int(g) for d, g in zip(judged, grades)}
    return run, qrels


@st.composite
def hypothesis_case(draw) -> tuple[Run, Qrels]:
    """Like numpy_case, but drawn by hypothesis so a failure shrinks to a small example."""
    n_users = draw(st.integers(1, 8))
    pool = st.integers(0, N_DOCS - 1)
    run: Run = {}
    qrels: Qrels = {}
    for u in range(n_users):
        qid = f"u{u:02d}"
        docs = draw(st.lists(pool, min_size=1, max_size=MAX_RUN, unique=True))
        scores = draw(st.permutations(range(1, len(docs) + 1)))
        run[qid] = {f"d{d:02d}": float(s) for d, s in zip(docs, scores)}
        judged = draw(st.dictionaries(pool, st.integers(0, 3), max_size=12))
        if judged:
            qrels[qid] = {f"d{d:02d}": g for d, g in judged.items()}
    return run, qrels


def relevant_users(qrels: Qrels) -> set[str]:
    return {q for q, docs in qrels.items() if any(g >= 1 for g in docs.values())}


# --- the two sides --------------------------------------------------------------------------


def trec_eval(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)


def run_frame(run: Run) -> pl.DataFrame:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pl.DataFrame(rows, schema={"user_id": pl.String, "item_id": pl.String, "score": pl.Float64}, orient="row")


def qrels_frame(qrels: Qrels) -> pl.DataFrame:
    rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    return pl.DataFrame(rows, schema={"user_id": pl.String, "item_id": pl.String, "relevance": pl.Int64}, orient="row")


def recframe_rows(run: Run, qrels: Qrels, layout: str) -> dict[str, dict]:
    """recframe's per-user rows, with the data passed as truth= (Polars) or one long frame (pandas)."""
    conventions = dict(k=[*CUTOFFS, MAX_RUN], score="score", threshold=1, ap_denominator="relevant", gain="linear")
    if layout == "truth":
        out = recframe.per_user(run_frame(run), truth=qrels_frame(qrels), **conventions)
        rows = out.rows(named=True)
    else:
        # one row per (user, doc) in the run or the qrels: a null score marks a judged doc that
        # was not retrieved, a null relevance a retrieved doc that was not judged
        long = run_frame(run).join(qrels_frame(qrels), on=["user_id", "item_id"], how="full", coalesce=True)
        out = recframe.per_user(long.to_pandas(), **conventions)
        assert isinstance(out, pd.DataFrame)
        rows = out.to_dict("records")
    return {row["user_id"]: row for row in rows}


def compare(run: Run, qrels: Qrels, layout: str, pairs=PAIRS) -> None:
    assert max(len(docs) for docs in run.values()) <= MAX_RUN  # else rr/ap@MAX_RUN would cut
    expected = trec_eval(run, qrels)
    got = recframe_rows(run, qrels, layout)
    users = relevant_users(qrels)  # every user has a run, so trec_eval evaluates all of these
    assert users <= expected.keys()
    assert {u for u, row in got.items() if row["n_relevant"] > 0} == users
    for measure, column in pairs:
        mismatches = {
            u: (expected[u][measure], got[u][column])
            for u in sorted(users)
            if got[u][column] is None or not math.isclose(got[u][column], expected[u][measure], rel_tol=0, abs_tol=ABS_TOL)
        }
        assert not mismatches, f"{measure} vs {column}: {{user: (trec_eval, recframe)}} = {mismatches}"


# --- tests ----------------------------------------------------------------------------------


def test_random_data_covers_the_cases():
    """The generator makes what the cross-checks are meant to exercise."""
    run, qrels = numpy_case(0)
    assert len(relevant_users(qrels)) >= 20
    assert set(run) - relevant_users(qrels), "some users have no relevant doc"
    unretrieved = [q for q, docs in qrels.items() if any(g >= 1 and d not in run[q] for d, g in docs.items())]
    assert unretrieved, "some relevant docs are not in the run"
    assert len({len(docs) for docs in run.values()}) > 5


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("layout", ["truth", "long"])
@pytest.mark.parametrize("measure, column", PAIRS, ids=[m for m, _ in PAIRS])
def test_agrees_with_trec_eval(measure, column, layout, seed):
    run, qrels = numpy_case(seed)
    compare(run, qrels, layout, pairs=[(measure, column)])


@settings(max_examples=25, deadline=None)
@given(case=hypothesis_case(), layout=st.sampled_from(["truth", "long"]))
def test_agrees_with_trec_eval_hypothesis(case, layout):
    run, qrels = case
    compare(run, qrels, layout)


def test_rectools_metrics_agree():
    # RecTools needs pandas < 3 and numpy < 2 on Python 3.11, while this project tests against
    # pandas 3, so it cannot share this environment; the check runs only where it imports.
    pytest.importorskip(
        "rectools",
        reason="rectools requires pandas<3 and numpy<2 (Python 3.11), which conflicts with this "
        "project's test environment (pandas 3); not installed here",
    )
    from rectools.metrics import MAP, MRR, NDCG, Precision, Recall

    k = 5
    run, qrels = numpy_case(0)
    # RecTools wants ranks and binary relevance: every interaction is relevant, so pass only
    # the docs graded >= 1 (the threshold=1 recframe uses).
    reco = pd.DataFrame(
        [(q, d, rank) for q, docs in run.items() for rank, d in enumerate(sorted(docs, key=docs.get, reverse=True), start=1)],
        columns=["user_id", "item_id", "rank"],
    )
    interactions = pd.DataFrame(
        [(q, d) for q, docs in qrels.items() for d, g in docs.items() if g >= 1],
        columns=["user_id", "item_id"],
    )
    got = recframe_rows(run, qrels, "truth")
    users = sorted(relevant_users(qrels))
    ours = lambda column: np.array([got[u][column] for u in users])  # noqa: E731

    def theirs(metric) -> np.ndarray:
        return metric.calc_per_user(reco, interactions).reindex(users).to_numpy(dtype=float)

    np.testing.assert_allclose(theirs(Precision(k=k)), ours(f"precision@{k}"), rtol=0, atol=ABS_TOL)
    np.testing.assert_allclose(theirs(Recall(k=k)), ours(f"recall@{k}"), rtol=0, atol=ABS_TOL)
    np.testing.assert_allclose(theirs(MRR(k=k)), ours(f"rr@{k}"), rtol=0, atol=ABS_TOL)
    # RecTools' MAP@k divides by the user's number of relevant items: ap_denominator="relevant"
    np.testing.assert_allclose(theirs(MAP(k=k)), ours(f"ap@{k}"), rtol=0, atol=ABS_TOL)
    # RecTools' NDCG is binary and, by default, its ideal DCG assumes k relevant items whatever
    # the user has; that is recframe's binary dcg@k over the DCG of k hits.
    binary = recframe.per_user(run_frame(run), k, ["dcg"], score="score", truth=qrels_frame(qrels), threshold=1, gain="binary")
    dcg = dict(binary.select("user_id", f"dcg@{k}").iter_rows())
    ideal_k = sum(1 / math.log2(i + 1) for i in range(1, k + 1))
    np.testing.assert_allclose(theirs(NDCG(k=k)), np.array([dcg[u] for u in users]) / ideal_k, rtol=0, atol=ABS_TOL)
