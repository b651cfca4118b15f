"""ties="average" (issue 42, item 1): each metric's expected value over every ordering of the
items with equal scores (McSherry and Najork 2008), checked against a brute-force average over
the orderings (the slow reference of tests/reference.py, once per ordering) and against
scikit-learn's dcg_score / ndcg_score, which average over ties the same way."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recframe
from conftest import BACKENDS, run_cli, tied_frame, to_polars
from recframe.errors import RecframeError
from reference import metrics_of_list

AVERAGED = ("precision", "recall", "f1", "hit_rate", "r_precision", "dcg", "ndcg")
# without R-precision, which reads positions past the largest k
TO_K = tuple(m for m in AVERAGED if m != "r_precision")
KS = (1, 2, 3, 5)

# one list: a (0.9, not relevant), then b, c, d tied at 0.5 with c relevant, then e (0.1, relevant)
TIED = pl.DataFrame(
    {
        "user_id": [1] * 5,
        "item_id": ["a", "b", "c", "d", "e"],
        "score": [0.9, 0.5, 0.5, 0.5, 0.1],
        "relevance": [0, 0, 1, 0, 1],
    }
)


@pytest.mark.parametrize("metrics", [AVERAGED, TO_K], ids=["r_precision", "to_k"])
def test_hand_worked_list(constructor, metrics: tuple[str, ...]) -> None:
    # b, c, d take positions 2-4 in any order: each holds c (relevant) with chance 1/3 (without
    # R-precision, which reads past the largest k, the shares are computed near the top alone:
    # the group of b, c, d reaches position 2 and counts whole)
    out = to_polars(recframe.per_user(constructor(TIED), k=[2, 3, 4], score="score", ties="average", metrics=list(metrics)))
    row = dict.fromkeys(["r_precision"], (1 / 3) / 2) | out.row(0, named=True)
    assert row["precision@2"] == pytest.approx((1 / 3) / 2)
    assert row["precision@3"] == pytest.approx((2 / 3) / 3)
    assert row["recall@3"] == pytest.approx((2 / 3) / 2)
    assert row["hit_rate@2"] == pytest.approx(1 / 3)  # c at position 2 in one ordering of three
    assert row["hit_rate@3"] == pytest.approx(2 / 3)
    assert row["hit_rate@4"] == 1.0  # the whole group is in the top 4: exactly 1, not 1 - 1e-300
    assert row["r_precision"] == pytest.approx((1 / 3) / 2)  # R = 2: position 2 holds c a third of the time
    assert row["dcg@3"] == pytest.approx((1 / 3) / math.log2(3) + (1 / 3) / math.log2(4))
    assert row["ndcg@2"] == pytest.approx(((1 / 3) / math.log2(3)) / (1 + 1 / math.log2(3)))


def _orderings(scores: list[float | None]) -> list[list[int | None]]:
    """Every rank assignment by score descending, in every order of the tied items (null score: no rank)."""
    scored = [i for i, s in enumerate(scores) if s is not None]
    out = []
    for order in itertools.permutations(scored):
        if all(scores[a] >= scores[b] for a, b in itertools.pairwise(order)):  # type: ignore[operator]
            ranks: list[int | None] = [None] * len(scores)
            for position, i in enumerate(order, start=1):
                ranks[i] = position
            out.append(ranks)
    return out


def _brute_force(items: list[tuple[float | None, float | None]], threshold: float, gain: str) -> dict[str, float | None]:
    """The mean of the reference's metrics over every ordering of the tied items."""
    values: dict[str, list[Any]] = {}
    for ranks in _orderings([s for s, _ in items]):
        entries = [(i, r, rel) for i, (r, (_, rel)) in enumerate(zip(ranks, items))]
        for column, value in metrics_of_list(entries, KS, AVERAGED, threshold=threshold, gain=gain).items():
            values.setdefault(column, []).append(value)
    return {c: None if vs[0] is None else float(np.mean(vs)) for c, vs in values.items() if not c.startswith("_")}


LISTS = st.lists(
    st.tuples(
        st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0])),  # few scores: heavy ties; none: a relevant item not recommended
        st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0, 3.0])),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=30, deadline=None)
@given(lists=st.lists(LISTS, min_size=1, max_size=3), gain=st.sampled_from(["linear", "exp2", "binary"]))
def test_equals_the_mean_over_every_ordering(lists: list[list[tuple[float | None, float | None]]], gain: str) -> None:
    rows = [(u, f"i{i}", s, rel) for u, items in enumerate(lists) for i, (s, rel) in enumerate(items)]
    df = pl.DataFrame(rows, schema=["user_id", "item_id", "score", "relevance"], orient="row")
    want = {u: _brute_force(items, 1.0, gain) for u, items in enumerate(lists)}
    # with R-precision, which reads past the largest k, and without it at a largest k shorter
    # than the lists (the shares are then computed near the top alone: the groups reaching it,
    # whole; DuckDB finds them, and groups the equal scores, its own way: _frames.over_groups)
    cases = [(df, KS, AVERAGED), (df, (1, 2), TO_K)] + [(BACKENDS["duckdb"](df), (1, 2), TO_K)] * ("duckdb" in BACKENDS)
    for frame, ks, metrics in cases:
        options = {"score": "score", "threshold": 1.0, "gain": gain, "ties": "average", "metrics": list(metrics)}
        out = to_polars(recframe.per_user(frame, k=list(ks), **options))
        for got in out.to_dicts():
            expected = want[got.pop("user_id")]
            for column in ("n_relevant", "n_ranked", "n_judged"):
                got.pop(column, None)
            assert set(got) <= set(expected), set(got) - set(expected)
            for column, value in got.items():
                assert value == (None if expected[column] is None else pytest.approx(expected[column], abs=1e-12)), column


def test_dcg_and_ndcg_equal_scikit_learn() -> None:
    sklearn_metrics = pytest.importorskip(
        "sklearn.metrics", reason="scikit-learn (with fairlearn, a test extra) averages over ties"
    )
    rng = np.random.default_rng(42)
    n_users, n_items = 60, 8
    scores = rng.integers(0, 3, (n_users, n_items)).astype(float)  # heavy ties
    grades = rng.integers(0, 4, (n_users, n_items)).astype(float)
    df = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(n_users), n_items),
            "item_id": np.tile(np.arange(n_items), n_users),
            "score": scores.ravel(),
            "relevance": grades.ravel(),
        }
    )
    # every grade above 0 gains its grade: scikit-learn's gain. nDCG is not defined without a
    # relevant item (recframe leaves the user out, scikit-learn says 0): those users are left out
    # (also with a threshold above the lowest grade and gain_threshold="positive", the graded
    # rows' own pass; at k <= 3 of 8 items the shares are computed near the top alone; users
    # without a relevant item are skipped: they are left out of both)
    for ks, options in (([1, 3, 5, 8], {"threshold": 1.0}), ([1, 3], {"threshold": 2.0, "gain_threshold": "positive"})):
        graded = (grades >= options["threshold"]).any(axis=1)
        out = recframe.summary(
            df.filter(pl.col("user_id").is_in(np.flatnonzero(graded).tolist())),
            k=ks,
            score="score",
            ties="average",
            metrics=["dcg", "ndcg"],
            **options,
        ).row(0, named=True)
        for k in ks:
            want_dcg = sklearn_metrics.dcg_score(grades[graded], scores[graded], k=k)
            assert out[f"dcg@{k}"] == pytest.approx(want_dcg, abs=1e-12), (options, k)
            want_ndcg = sklearn_metrics.ndcg_score(grades[graded], scores[graded], k=k)
            assert out[f"ndcg@{k}"] == pytest.approx(want_ndcg, abs=1e-12), (options, k)
    # and user by user, on a few
    graded = grades.sum(axis=1) > 0
    per_user = {
        r["user_id"]: r
        for r in recframe.per_user(df, k=3, score="score", threshold=1.0, ties="average", metrics=["ndcg"]).to_dicts()
    }
    for u in np.flatnonzero(graded)[:5]:
        assert per_user[u]["ndcg@3"] == pytest.approx(sklearn_metrics.ndcg_score([grades[u]], [scores[u]], k=3), abs=1e-12)


def test_between_the_bounds_and_today_without_ties() -> None:
    df = tied_frame(3, 800, users=50, items=30, scores=4, grades=3)
    options: dict[str, Any] = {"k": [1, 3, 10], "score": "score", "by": "model", "metrics": list(AVERAGED)}
    high, middle, low = (recframe.summary(df, ties=t, **options) for t in ("optimistic", "average", "pessimistic"))
    metrics = [c for c in high.columns if c.split("@")[0] in AVERAGED]
    for c in metrics:
        assert (high[c] >= middle[c] - 1e-12).all() and (middle[c] >= low[c] - 1e-12).all(), c
    assert any((high[c] > middle[c]).any() and (middle[c] > low[c]).any() for c in metrics)
    distinct = df.with_columns(pl.col("score") + pl.int_range(pl.len()) * 1e-6)  # no tie left
    averaged = recframe.summary(distinct, ties="average", **options)
    today = recframe.summary(distinct, **options)
    for c in metrics:
        assert averaged[c].to_list() == pytest.approx(today[c].to_list(), abs=1e-12), c


def test_with_truth_and_negative_zero() -> None:
    # -0.0 and 0.0 tie; the truth's relevant item the list lacks counts in R only
    recs = pl.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "score": [1.0, 0.0, -0.0]})
    truth = pl.DataFrame({"user_id": [1, 1], "item_id": ["c", "z"], "relevance": [1, 1]})
    out = recframe.per_user(recs, truth=truth, k=2, score="score", ties="average", metrics=["precision", "recall", "hit_rate"])
    row = out.row(0, named=True)
    assert row["precision@2"] == pytest.approx(0.5 / 2)  # b and c share position 2 and 3: c at 2 half the time
    assert row["recall@2"] == pytest.approx(0.5 / 2)
    assert row["hit_rate@2"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: recframe.per_user(TIED, k=2, score="score", ties="average"), ["ties='average'", "'ap', 'rr'", "metrics="]),
        (
            lambda: recframe.summary(TIED.drop("score").with_columns(rank=pl.int_range(1, 6)), k=2, rank="rank", ties="average"),
            ["ties='average'", "score=None", "score="],
        ),
        (lambda: recframe.per_item(TIED, k=2, score="score", ties="average"), ["ties='average'", "per_item"]),
        (
            lambda: recframe.agreement(TIED.with_columns(model=pl.lit("A")), k=2, score="score", by="model", ties="average"),
            ["ties='average'", "agreement"],
        ),
        # (not told to pass metrics=, which inspect does not take)
        (lambda: recframe.inspect(TIED, k=2, score="score", ties="average"), ["ties='average'", "inspect", 'ties="item_asc"']),
    ],
)
def test_refused_where_no_closed_form(call, words: list[str]) -> None:
    with pytest.raises(RecframeError) as raised:
        call()
    for word in words:
        assert word in str(raised.value)


# ---- the tie diagnostic (issue 42, item 2): recframe.tied_cutoffs and the CLI's line


def _tied_reference(df: pl.DataFrame, ks: list[int]) -> dict[Any, tuple[int, list[int]]]:
    """model -> (lists with a ranked item, per k the lists whose scores at k and k + 1 are equal), by sorting in Python."""
    out: dict[Any, tuple[int, list[int]]] = {}
    for (model,), group in df.group_by(["model"]):
        n_lists, tied = 0, [0] * len(ks)
        for _, rows in group.group_by("user_id"):
            scores = sorted((s for s in rows["score"].to_list() if s is not None), reverse=True)
            n_lists += bool(scores)
            for i, k in enumerate(ks):
                tied[i] += len(scores) > k and scores[k - 1] == scores[k]
        out[model] = (n_lists, tied)
    return out


def test_tied_cutoffs_count_the_lists_split_inside_a_tie(constructor) -> None:
    df = tied_frame(5, 600, users=60, items=25, scores=5, grades=2, null_scores=0.1)
    ks = [1, 3, 5]
    got = to_polars(recframe.tied_cutoffs(constructor(df), k=ks, score="score", by="model")).sort("model")
    want = _tied_reference(df, ks)
    assert got.columns == ["model", "n_lists", "n_tied@1", "n_tied@3", "n_tied@5"]
    for row in got.iter_rows(named=True):
        n_lists, tied = want[row["model"]]
        assert row["n_lists"] == n_lists
        assert [row[f"n_tied@{k}"] for k in ks] == tied
    assert sum(got["n_tied@3"]) > 0  # the frame has ties at the cut-offs
    # distinct scores: no cut-off falls inside a tie
    distinct = df.with_columns(pl.col("score") + pl.int_range(pl.len()) * 1e-6)
    assert to_polars(recframe.tied_cutoffs(constructor(distinct), k=ks, score="score", by="model"))["n_tied@3"].sum() == 0


def test_tied_cutoffs_needs_a_score() -> None:
    with pytest.raises(RecframeError, match=r"score=None.*score="):
        recframe.tied_cutoffs(TIED.with_columns(rank=pl.int_range(1, 6)), k=2, rank="rank")


@pytest.mark.parametrize("per_user_rows", [False, True], ids=["summary", "per_user"])
def test_one_plan_gives_the_frame_and_the_tie_table(per_user_rows: bool) -> None:
    """recframe.api.with_tied_cutoffs (the CLI's evaluate --score): its two frames, collected
    together, are per_user's or summary's and tied_cutoffs'; a defect is still refused."""
    from polars.testing import assert_frame_equal

    from recframe import api

    df = tied_frame(5, 600, users=40, items=25, scores=3, grades=3, null_scores=0.1)
    options: dict[str, Any] = {"k": [1, 3], "metrics": None, "score": "score", "by": "model"}
    main, ties = pl.collect_all(api.with_tied_cutoffs(df.lazy(), per_user_rows=per_user_rows, **options))
    assert_frame_equal(main, (recframe.per_user if per_user_rows else recframe.summary)(df, **options))
    assert_frame_equal(ties, recframe.tied_cutoffs(df, k=[1, 3], score="score", by="model"))
    assert ties["n_tied@1"].sum() > 0  # (the frame has ties to count)
    with pytest.raises(RecframeError, match="duplicate"):
        pl.collect_all(api.with_tied_cutoffs(pl.concat([df, df.head(1)]).lazy(), per_user_rows=per_user_rows, **options))


def test_the_command_line_prints_one_line_on_ties(tmp_path) -> None:
    path = tmp_path / "recs.csv"
    TIED.write_csv(path)
    for scores, noted in ((TIED, True), (TIED.with_columns(score=pl.Series([0.9, 0.6, 0.5, 0.4, 0.1])), False)):
        scores.write_csv(path)
        code, out, err = run_cli("evaluate", str(path), "--score", "score", "--k", "1,2", "--metrics", "precision", "--quiet")
        assert code == 0, err
        lines = [line for line in err.splitlines() if "ties:" in line]
        if noted:
            assert lines == [lines[0]] and "of 1 lists" in lines[0] and "0 at k=1, 1 at k=2" in lines[0]
        else:
            assert lines == []
